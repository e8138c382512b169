"""The composite operators (relayish/ops/composite.py): their NumPy semantics and type relations.

Each ``compute`` is checked against an oracle written here: NumPy's own function of the same
meaning (np.clip, np.var with ddof, scipy.special.logsumexp, np.argmin, np.tile, np.repeat,
np.arange), or the definition spelled out (explicit sums for the normalizations, a loop over
every element for bias_add), in float64 from the same inputs. Tolerances are those of
helpers.py (float32 rtol 1e-5, float64 rtol 1e-12), with the size of the accumulated terms as
the scale where a sum cancels (variance, normalizations); integers and bools are exact.
The relations are checked against hand-computed types, a symbolic batch dimension included,
and their exact error messages.
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np
import pytest
import scipy.special
import relayish
from hypothesis import assume, given, settings
from hypothesis import strategies as st

from relayish.ops import get_op

from .helpers import F32, F64, FLOATS, I32, NUMBERS, arrays, assert_close, shapes

I8, U8, F16, B = np.dtype(np.int8), np.dtype(np.uint8), np.dtype(np.float16), np.dtype(np.bool_)


def assert_exact(actual: Any, expected: Any, dtype: np.dtype) -> None:
    """The same dtype, shape and values (nan equal to nan): float16 has no tolerance in helpers.py."""
    assert isinstance(actual, np.ndarray) and actual.dtype == dtype, (type(actual), getattr(actual, "dtype", None))
    np.testing.assert_array_equal(actual, np.asarray(expected), strict=True)


def op(name: str, *args: Any, **attrs: Any) -> np.ndarray:
    return get_op(name)(*args, **attrs)


def moved(x: np.ndarray, axes: list[int]) -> np.ndarray:
    """``x`` with ``axes`` moved last and flattened into one (the reduction's rows)."""
    kept = [a for a in range(x.ndim) if a not in axes]
    return np.transpose(x, kept + axes).reshape([x.shape[a] for a in kept] + [math.prod(x.shape[a] for a in axes)])


def reduced_axes(axis: Any, rank: int) -> list[int]:
    named = range(rank) if axis is None else [axis] if isinstance(axis, int) else axis
    return sorted({a % rank for a in named})


def with_kept(result: np.ndarray, shape: tuple[int, ...], axes: list[int], keepdims: bool) -> np.ndarray:
    return result.reshape([1 if a in axes else n for a, n in enumerate(shape)]) if keepdims else result


@st.composite
def axis_attr(draw: Any, rank: int) -> Any:
    """None, one axis or a tuple of distinct axes, each possibly negative."""
    if rank == 0:
        return draw(st.sampled_from([None, ()]))
    chosen = draw(st.lists(st.integers(0, rank - 1), unique=True, max_size=rank))
    signed = [draw(st.sampled_from([a, a - rank])) for a in chosen]
    return draw(st.sampled_from([None, tuple(signed)] + signed[:1]))


# clip and leaky_relu -----------------------------------------------------------------------------


@given(data=st.data(), dtype=st.sampled_from(NUMBERS + (U8, F16)))
def test_clip_is_np_clip_with_the_bounds_in_x_dtype(data: st.DataObject, dtype: np.dtype) -> None:
    x = data.draw(arrays(dtype, shapes(), 0 if dtype == U8 else -10, 10), label="x")
    bounds = st.floats(-12, 12, allow_nan=False)
    a_min, a_max = sorted((data.draw(bounds, label="a_min"), data.draw(bounds, label="a_max")))
    expected = np.clip(x, np.array(a_min).astype(dtype), np.array(a_max).astype(dtype))
    assert_exact(op("clip", x, a_min=a_min, a_max=a_max), expected, dtype)


def test_clip_special_values() -> None:
    x = np.array([np.nan, -np.inf, np.inf, -3.0, 0.25, 7.0], np.float32)
    np.testing.assert_array_equal(op("clip", x, a_min=-1, a_max=2), [np.nan, -1, 2, -1, 0.25, 2])
    np.testing.assert_array_equal(op("clip", x, a_min=-np.inf, a_max=np.inf), x)
    # integer bounds convert as cast converts: truncated toward zero
    k = np.array([-5, -1, 0, 1, 5], np.int32)
    assert op("clip", k, a_min=-1.5, a_max=2.9).tolist() == [-1, -1, 0, 1, 2]
    # a_min > a_max gives a_max everywhere, as np.clip
    assert op("clip", k, a_min=3, a_max=1).tolist() == [1] * 5
    assert op("clip", np.zeros(2, F16), a_min=-1e9, a_max=1e9).dtype == F16


@given(data=st.data(), dtype=st.sampled_from(FLOATS), alpha=st.sampled_from([0.01, 0.2, 0.0, 1.5]))
def test_leaky_relu(data: st.DataObject, dtype: np.dtype, alpha: float) -> None:
    x = data.draw(arrays(dtype, shapes()), label="x")
    wide = x.astype(np.float64)
    expected = np.where(wide > 0, wide, np.float64(dtype.type(alpha)) * wide)
    assert_close(op("leaky_relu", x, alpha=alpha), expected, dtype)


def test_leaky_relu_default_and_special_values() -> None:
    x = np.array([-100.0, -0.0, 0.0, 3.0, np.nan, -np.inf, np.inf])
    np.testing.assert_array_equal(op("leaky_relu", x), [-1.0, -0.0, 0.0, 3.0, np.nan, -np.inf, np.inf])


# bias_add ------------------------------------------------------------------------------------------


@given(data=st.data(), dtype=st.sampled_from(NUMBERS))
def test_bias_add_adds_the_bias_element_of_each_position_along_axis(data: st.DataObject, dtype: np.dtype) -> None:
    x = data.draw(arrays(dtype, shapes(min_dims=1)), label="x")
    axis = data.draw(st.integers(-x.ndim, x.ndim - 1), label="axis")
    bias = data.draw(arrays(dtype, (x.shape[axis],)), label="bias")
    expected = np.empty(x.shape, np.float64)
    for index in np.ndindex(x.shape):
        expected[index] = float(x[index]) + float(bias[index[axis]])
    assert_close(op("bias_add", x, bias, axis=axis), expected.astype(dtype) if dtype.kind != "f" else expected, dtype)


def test_bias_add_default_axis_is_the_channels() -> None:
    x = np.zeros((2, 3, 4, 4), np.float32)
    result = op("bias_add", x, np.array([1, 2, 3], np.float32))
    assert result.dtype == F32 and (result[:, 1] == 2).all() and (result[:, 2] == 3).all()


def test_bias_add_refuses_a_bias_of_another_length() -> None:
    with pytest.raises(ValueError, match=r"the bias must have shape \(3,\)"):
        op("bias_add", np.zeros((2, 3)), np.zeros(2))


# variance and std ----------------------------------------------------------------------------------


def spelled_variance(x: np.ndarray, axes: list[int], ddof: int) -> tuple[np.ndarray, np.ndarray]:
    """The variance over ``axes`` by its definition (float64), and the scale of its terms."""
    rows = moved(x.astype(np.float64), axes)
    n = rows.shape[-1]
    with np.errstate(all="ignore"):
        mean = rows.sum(axis=-1, keepdims=True) / n
        squares = (rows - mean) ** 2
        return squares.sum(axis=-1) / max(n - ddof, 0), (rows ** 2).sum(axis=-1) / max(n - ddof, 1)


@settings(max_examples=60)
@given(data=st.data(), dtype=st.sampled_from(FLOATS), keepdims=st.booleans(), unbiased=st.booleans(),
       exclude=st.booleans(), name=st.sampled_from(["variance", "std"]))
def test_variance_and_std(data: st.DataObject, dtype: np.dtype, keepdims: bool, unbiased: bool, exclude: bool,
                          name: str) -> None:
    x = data.draw(arrays(dtype, shapes(), -100, 100), label="x")
    axis = data.draw(axis_attr(x.ndim), label="axis")
    assume(not (exclude and axis is None))
    axes = reduced_axes(axis, x.ndim)
    if exclude:
        axes = [a for a in range(x.ndim) if a not in axes]
    var, scale = spelled_variance(x, axes, int(unbiased))
    # the same through NumPy's own variance, which the oracle must agree with
    np.testing.assert_allclose(var, np.var(x.astype(np.float64), axis=tuple(axes), ddof=int(unbiased)), rtol=1e-9,
                               atol=1e-9)
    expected, scale = (var, scale) if name == "variance" else (np.sqrt(var), np.sqrt(scale))
    result = op(name, x, axis=axis, keepdims=keepdims, exclude=exclude, unbiased=unbiased)
    rtol = 1e-4 if dtype == F32 else 1e-11  # the squares of float32 deviations lose digits
    assert_close(result, with_kept(expected, x.shape, axes, keepdims), dtype,
                 scale=with_kept(scale, x.shape, axes, keepdims), rtol=rtol)


def test_variance_special_cases() -> None:
    x = np.array([[1.0, 2.0, 3.0, 4.0]], np.float32)
    assert op("variance", x).dtype == F32 and op("variance", x) == np.float32(1.25)
    assert op("variance", x, unbiased=True) == np.float32(5 / 3)
    assert op("std", x, axis=1, keepdims=True).shape == (1, 1)
    # exclude names the axes kept: over axis 1 here
    np.testing.assert_array_equal(op("variance", x, axis=0, exclude=True), [1.25])
    # one element unbiased, or none: nan (0 / 0), silently
    assert np.isnan(op("variance", x, axis=0, unbiased=True)).all()
    assert np.isnan(op("std", np.zeros((0, 2)), axis=0)).all()
    assert np.isnan(op("variance", np.array([1.0, np.nan])))
    assert op("variance", np.array([1.0, np.inf])) != op("variance", np.array([1.0, 2.0]))
    with pytest.raises(ValueError, match="exclude needs axis"):
        op("variance", x, exclude=True)


# all and any ---------------------------------------------------------------------------------------


@given(data=st.data(), keepdims=st.booleans(), name=st.sampled_from(["all", "any"]))
def test_all_and_any(data: st.DataObject, keepdims: bool, name: str) -> None:
    x = data.draw(arrays(B, shapes(min_side=0)), label="x")
    axis = data.draw(axis_attr(x.ndim), label="axis")
    axes = reduced_axes(axis, x.ndim)
    rows = moved(x, axes)
    fold = all if name == "all" else any
    flat = rows.reshape(math.prod(rows.shape[:-1]), rows.shape[-1])
    expected = np.array([fold(row) for row in flat], bool).reshape(rows.shape[:-1])
    assert_close(op(name, x, axis=axis, keepdims=keepdims), with_kept(expected, x.shape, axes, keepdims), B)


def test_all_and_any_of_nothing() -> None:
    assert op("all", np.zeros((0,), bool)) == np.True_ and op("any", np.zeros((0,), bool)) == np.False_
    assert op("all", np.zeros((2, 0), bool), axis=1).tolist() == [True, True]
    assert op("any", np.zeros((2, 0), bool), axis=1, keepdims=True).tolist() == [[False], [False]]


# logsumexp -----------------------------------------------------------------------------------------


@given(data=st.data(), dtype=st.sampled_from(FLOATS), keepdims=st.booleans())
def test_logsumexp_is_scipys(data: st.DataObject, dtype: np.dtype, keepdims: bool) -> None:
    x = data.draw(arrays(dtype, shapes(), -50, 50), label="x")
    axis = data.draw(axis_attr(x.ndim), label="axis")
    assume(axis != ())  # scipy reads an empty tuple as every axis
    expected = scipy.special.logsumexp(x.astype(np.float64), axis=axis, keepdims=keepdims)
    expected = expected.reshape(np.sum(x, axis=axis, keepdims=keepdims).shape)  # scipy keeps a 0-d x as (1,)
    # float32 exp and log: relative to the result plus the size of the largest term
    peak = np.max(np.abs(x.astype(np.float64)), axis=axis, keepdims=keepdims)
    assert_close(op("logsumexp", x, axis=axis, keepdims=keepdims), expected, dtype, scale=np.abs(expected) + peak + 1)


def test_logsumexp_special_values() -> None:
    x = np.array([[1000.0, 1000.0], [-1000.0, -1000.0], [-np.inf, -np.inf], [np.inf, 1.0], [np.nan, 1.0],
                  [np.inf, -np.inf], [-np.inf, 0.0]], np.float32)
    result = op("logsumexp", x, axis=1)
    assert result.dtype == F32
    np.testing.assert_allclose(result, [1000 + math.log(2), -1000 + math.log(2), -np.inf, np.inf, np.nan, np.inf, 0.0],
                               rtol=1e-6)
    with pytest.raises(ValueError, match="zero-size"):
        op("logsumexp", np.zeros((2, 0)), axis=1)
    assert op("logsumexp", np.zeros((0, 2)), axis=1).shape == (0,)  # no row, nothing to raise


# argmin ----------------------------------------------------------------------------------------------


@given(data=st.data(), dtype=st.sampled_from(NUMBERS + (I8, U8)), keepdims=st.booleans())
def test_argmin_is_nps(data: st.DataObject, dtype: np.dtype, keepdims: bool) -> None:
    x = data.draw(arrays(dtype, shapes(), 0 if dtype == U8 else -3, 3), label="x")  # few values: many ties
    axis = data.draw(st.none() | st.integers(-x.ndim, x.ndim - 1) if x.ndim else st.none(), label="axis")
    expected = np.argmin(x, axis=axis, keepdims=keepdims)
    assert_close(op("argmin", x, axis=axis, keepdims=keepdims), expected, I32)


def test_argmin_first_occurrence_nan_and_extremes() -> None:
    assert op("argmin", np.array([3.0, 1.0, 1.0, 2.0])) == 1
    assert op("argmin", np.array([3.0, np.nan, -np.inf, np.nan])) == 1  # nan counts as the smallest
    assert op("argmin", np.array([0.0, -0.0])) == 0  # equal
    assert op("argmin", np.array([5, -128, 127, -128], np.int8)) == 1
    assert op("argmin", np.array([255, 0, 7], np.uint8)) == 1
    assert op("argmin", np.array([[2, 1], [0, 3]], np.int32), axis=0).tolist() == [1, 0]
    with pytest.raises(ValueError):
        op("argmin", np.zeros((0,)))


# full_like, zeros, ones, arange ------------------------------------------------------------------


@pytest.mark.parametrize("dtype", [F32, F64, F16, I32, I8, U8, B])
@pytest.mark.parametrize("fill", [0.0, 1.0, -2.5, 300.0, math.inf, math.nan])
def test_full_like_converts_the_fill_as_cast_does(dtype: np.dtype, fill: float) -> None:
    x = np.ones((2, 3), dtype)
    with np.errstate(all="ignore"):
        expected = np.full((2, 3), np.array(fill).astype(dtype))
    assert_exact(op("full_like", x, fill_value=fill), expected, dtype)


@pytest.mark.parametrize("name", ["zeros", "ones"])
@pytest.mark.parametrize("dtype", [F32, F64, I32, U8, B])
def test_zeros_and_ones(name: str, dtype: np.dtype) -> None:
    expected = getattr(np, name)((2, 0, 3), dtype)
    assert_close(op(name, shape=(2, 0, 3), dtype=dtype), expected, dtype)
    assert op(name, shape=()).dtype == F32 and op(name, shape=()).shape == ()


@given(start=st.integers(-20, 20) | st.floats(-20, 20), stop=st.integers(-20, 20) | st.floats(-20, 20),
       step=st.sampled_from([1, 2, 3, -1, -2, 0.5, -0.25, 0.1, 1.7, -3.3]), dtype=st.sampled_from(NUMBERS + (I8,)))
def test_arange_is_nps(start: float, stop: float, step: float, dtype: np.dtype) -> None:
    expected = np.arange(start, stop, step, dtype=np.float64)
    result = op("arange", start=start, stop=stop, step=step, dtype=dtype)
    assert result.shape == expected.shape
    assert_close(result, expected.astype(dtype) if dtype.kind != "f" else expected, dtype)


def test_arange_defaults_and_refusals() -> None:
    assert_close(op("arange", stop=5), np.arange(5, dtype=np.float32), F32)
    assert op("arange", start=3, stop=1).shape == (0,)
    assert op("arange", stop=4, dtype="int32").tolist() == [0, 1, 2, 3]
    for bad in ({"stop": 3, "step": 0}, {"stop": math.inf}, {"stop": 3, "start": math.nan}):
        with pytest.raises(ValueError, match="arange"):
            op("arange", **bad)


@pytest.mark.parametrize("step", [0.875, -0.875])
def test_arange_whose_length_overflows_is_a_type_error(step: float) -> None:
    """(stop - start) / step past the largest float: NumPy refuses it whatever the sign, and so does the relation."""
    with pytest.raises(ValueError):
        np.arange(-1.0, 1.5729814930045264e308, step)
    src = f"def @f() {{ @arange(start=-1.0, stop=1.5729814930045264e+308, step={step}) }}"
    with pytest.raises(relayish.RelayTypeError, match="overflows"):
        relayish.infer_types(relayish.parse(src))


# tile and repeat ---------------------------------------------------------------------------------


@given(data=st.data(), dtype=st.sampled_from((F32, I32, B)))
def test_tile_is_nps(data: st.DataObject, dtype: np.dtype) -> None:
    x = data.draw(arrays(dtype, shapes(max_dims=3, max_side=3)), label="x")
    reps = tuple(data.draw(st.lists(st.integers(0, 3), max_size=4), label="reps"))
    assert_close(op("tile", x, reps=reps), np.tile(x, reps), dtype)


@given(data=st.data(), dtype=st.sampled_from((F32, I32, B)), repeats=st.integers(0, 3))
def test_repeat_is_nps(data: st.DataObject, dtype: np.dtype, repeats: int) -> None:
    x = data.draw(arrays(dtype, shapes(min_dims=1, max_dims=3, max_side=3)), label="x")
    axis = data.draw(st.integers(-x.ndim, x.ndim - 1), label="axis")
    assert_close(op("repeat", x, repeats=repeats, axis=axis), np.repeat(x, repeats, axis=axis), dtype)


def test_tile_and_repeat_refuse_negative_counts() -> None:
    with pytest.raises(ValueError):
        op("tile", np.ones(2), reps=(-1,))
    with pytest.raises(ValueError):
        op("repeat", np.ones(2), repeats=-1, axis=0)


# global pools ------------------------------------------------------------------------------------


@given(data=st.data(), dtype=st.sampled_from(NUMBERS), name=st.sampled_from(["global_avg_pool2d", "global_max_pool2d"]))
def test_global_pools_reduce_each_image(data: st.DataObject, dtype: np.dtype, name: str) -> None:
    if name == "global_avg_pool2d" and dtype.kind != "f":
        dtype = F64
    x = data.draw(arrays(dtype, shapes(min_dims=4, max_dims=4, max_side=3)), label="x")
    n, c, h, w = x.shape
    expected = np.empty((n, c, 1, 1), np.float64)
    for i, j in np.ndindex(n, c):
        pixels = [float(x[i, j, p, q]) for p in range(h) for q in range(w)]
        expected[i, j] = sum(pixels) / len(pixels) if name == "global_avg_pool2d" else max(pixels)
    scale = np.abs(x.astype(np.float64)).mean(axis=(2, 3), keepdims=True) if name == "global_avg_pool2d" else None
    assert_close(op(name, x), expected.astype(dtype) if dtype.kind != "f" else expected, dtype, scale=scale)


def test_global_pools_need_nchw_and_max_an_image() -> None:
    with pytest.raises(ValueError, match="NCHW"):
        op("global_avg_pool2d", np.ones((2, 3, 4)))
    with pytest.raises(ValueError):
        op("global_max_pool2d", np.ones((2, 3, 0, 4)))
    assert np.isnan(op("global_avg_pool2d", np.ones((1, 1, 0, 4)))).all()


# layer_norm and batch_norm -----------------------------------------------------------------------


def spelled_norm(x: np.ndarray, axes: list[int], axis: int, eps: float, gamma: np.ndarray | None,
                 beta: np.ndarray | None, mean: np.ndarray | None = None, var: np.ndarray | None = None) -> np.ndarray:
    """(x - mean) / sqrt(var + eps) * gamma + beta in float64 by the definition: mean and var
    summed over ``axes`` element by element unless given (per channel along ``axis``)."""
    x = x.astype(np.float64)
    along = [-1 if a == axis else 1 for a in range(x.ndim)]
    if mean is None:
        n = math.prod(x.shape[a] for a in axes)
        mean = x.sum(axis=tuple(axes), keepdims=True) / n
        var = ((x - mean) ** 2).sum(axis=tuple(axes), keepdims=True) / n
    else:
        mean, var = mean.astype(np.float64).reshape(along), var.astype(np.float64).reshape(along)
    out = (x - mean) / np.sqrt(var + eps)
    if gamma is not None:
        out = out * gamma.astype(np.float64).reshape(along)
    if beta is not None:
        out = out + beta.astype(np.float64).reshape(along)
    return out


@settings(max_examples=60)
@given(data=st.data(), dtype=st.sampled_from(FLOATS), center=st.booleans(), scale=st.booleans(),
       eps=st.sampled_from([1e-5, 0.1]))
def test_layer_norm(data: st.DataObject, dtype: np.dtype, center: bool, scale: bool, eps: float) -> None:
    x = data.draw(arrays(dtype, shapes(min_dims=1, max_dims=3), -10, 10), label="x")
    axis = data.draw(st.integers(-x.ndim, x.ndim - 1), label="axis")
    gamma, beta = (data.draw(arrays(dtype, (x.shape[axis],)), label=k) for k in ("gamma", "beta"))
    expected = spelled_norm(x, [axis % x.ndim], axis % x.ndim, eps, gamma if scale else None, beta if center else None)
    result = op("layer_norm", x, gamma, beta, axis=axis, epsilon=eps, center=center, scale=scale)
    assert_close(result, expected, dtype, rtol=1e-3 if dtype == F32 else 1e-9, atol=1e-3 if dtype == F32 else 1e-9)


@settings(max_examples=60)
@given(data=st.data(), dtype=st.sampled_from(FLOATS), center=st.booleans(), scale=st.booleans(),
       training=st.booleans())
def test_batch_norm(data: st.DataObject, dtype: np.dtype, center: bool, scale: bool, training: bool) -> None:
    x = data.draw(arrays(dtype, shapes(min_dims=1, max_dims=4, max_side=3), -10, 10), label="x")
    axis = data.draw(st.integers(-x.ndim, x.ndim - 1), label="axis")
    c = x.shape[axis]
    gamma, beta, moving_mean = (data.draw(arrays(dtype, (c,)), label=k) for k in ("gamma", "beta", "mean"))
    moving_var = data.draw(arrays(dtype, (c,), 0, 10), label="var")
    axis_n = axis % x.ndim
    stats = {} if training else {"mean": moving_mean, "var": moving_var}
    expected = spelled_norm(x, [a for a in range(x.ndim) if a != axis_n], axis_n, 1e-5, gamma if scale else None,
                            beta if center else None, **stats)
    result = op("batch_norm", x, gamma, beta, moving_mean, moving_var, axis=axis, center=center, scale=scale,
                training=training)
    assert_close(result, expected, dtype, rtol=1e-3 if dtype == F32 else 1e-9, atol=1e-3 if dtype == F32 else 1e-9)


def test_normalizations_check_their_vectors() -> None:
    x = np.ones((2, 3), np.float32)
    v3, v2 = np.ones(3, np.float32), np.ones(2, np.float32)
    with pytest.raises(ValueError, match=r"layer_norm: beta must have shape \(3,\)"):
        op("layer_norm", x, v3, v2)
    with pytest.raises(ValueError, match=r"batch_norm: moving_var must have shape \(3,\)"):
        op("batch_norm", x, v3, v3, v3, v2)
    with pytest.raises(TypeError, match="gamma has dtype float64"):
        op("layer_norm", x, np.ones(3), v3)


# kinds refused -----------------------------------------------------------------------------------


F, K, FLAGS = np.ones((1, 1, 2, 2)), np.ones((1, 1, 2, 2), np.int32), np.ones((1, 1, 2, 2), bool)


@pytest.mark.parametrize(
    ("name", "args", "attrs"),
    [
        ("clip", [FLAGS], {"a_min": 0, "a_max": 1}),
        ("leaky_relu", [K], {}),
        ("bias_add", [FLAGS, np.ones(1, bool)], {}),
        ("variance", [K], {}),
        ("std", [K], {}),
        ("all", [F], {}),
        ("any", [K], {}),
        ("logsumexp", [K], {}),
        ("argmin", [FLAGS], {}),
        ("global_avg_pool2d", [K], {}),
        ("global_max_pool2d", [FLAGS], {}),
        ("layer_norm", [K, np.ones(2, np.int32), np.ones(2, np.int32)], {}),
        ("batch_norm", [K] + [np.ones(1, np.int32)] * 4, {}),
    ],
)
def test_kinds_refused(name: str, args: list[np.ndarray], attrs: dict) -> None:
    with pytest.raises(TypeError, match=name):
        op(name, *args, **attrs)


@pytest.mark.parametrize("name", ["clip", "leaky_relu", "variance", "std", "logsumexp", "argmin", "all", "any",
                                  "full_like", "tile"])
def test_rank_0_results_are_arrays(name: str) -> None:
    x = np.asarray(True) if name in ("all", "any") else np.asarray(0.5)
    attrs = {"clip": {"a_min": 0, "a_max": 1}, "full_like": {"fill_value": 2}, "tile": {"reps": ()}}.get(name, {})
    result = op(name, x, **attrs)
    assert isinstance(result, np.ndarray) and result.shape == ()
