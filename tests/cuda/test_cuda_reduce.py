"""CUDA reduction and softmax-family kernels against the NumPy reference, on the simulator.

Hypothesis draws small shapes (every dimension 0..4, rank 0..4 where the operator takes it), the
dtype, the attributes (axes as None, an int or a tuple, negative ones included; keepdims) and the
values (NaN, inf and -0.0 sprinkled in; small integers for ties). Tolerances are those the
module docstring of ``jit/cuda/reduce.py`` states: max, min, argmax and integer sums exact; float
sums and means within ``rtol * sum(|x|)`` (mean: divided by the count), the softmax family
within the bounds of ``softmax_bound``; rtol 1e-5 for float32 and 1e-12 for float64.

Where the reference raises, the kernel raises the same class (with an empty result, where no
thread runs, the launcher asks the reference). The helpers here are shared with
``test_cuda_shape.py``.
"""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from jit.kernels.registry import load_generators
from relayish.errors import RelayTypeError
from relayish.ops import get_op
from relayish.types import BaseType, Shape, TensorType
from tests.cuda.support import reference, run_cuda

FLOATS = ("float32", "float64")
INTS = ("int8", "int16", "int32", "int64", "uint8", "uint16", "uint32", "uint64")
NUMBERS = FLOATS + INTS
ALL = NUMBERS + ("bool",)
RTOL = {"float32": 1e-5, "float64": 1e-12}
# half floats, half integers: the float paths (NaN, tolerances) are where reductions go wrong
NUMBER_DTYPES = st.one_of(st.sampled_from(FLOATS), st.sampled_from(INTS))

REDUCE_OPS = ("sum", "mean", "max", "min", "argmax", "softmax", "log_softmax", "softmax_cross_entropy")
SHAPE_OPS = ("reshape", "transpose", "expand_dims", "squeeze", "broadcast_to", "broadcast_to_like", "sum_to",
             "concatenate", "stack", "take", "strided_slice", "pad", "flatten", "full", "one_hot", "reshape_like")

# The reference's empty means warn; the simulator computes with NumPy scalars, which warn where
# integer sums wrap (the GPU wraps silently) and where 0 * inf gives NaN (as the reference's does).
pytestmark = pytest.mark.filterwarnings(
    "ignore:Mean of empty slice", "ignore:invalid value encountered", "ignore:overflow encountered"
)
SETTINGS = settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])


# --- helpers shared with test_cuda_shape.py -----------------------------------------------------


def type_check(name: str, arrays: list[np.ndarray], attrs: dict) -> None:
    """The operator's type relation on these arguments (raises RelayTypeError where it rejects them)."""
    op = get_op(name)
    types = [TensorType(BaseType.from_numpy(a.dtype), Shape(*a.shape)) for a in arrays]
    op.type_relation(types, op.full_attrs(op.normalize_attrs(attrs)))


def outcome(name: str, arrays: list[np.ndarray], **attrs: Any) -> tuple[np.ndarray | None, np.ndarray | None]:
    """(kernel result, reference result) of equal dtype and shape; (None, None) where the
    reference raises, after checking the kernel raises the same class (or, for attributes the
    type relation rejects, its RelayTypeError)."""
    try:
        expected = np.asarray(reference(name, arrays, **attrs))
    except (ValueError, IndexError) as error:
        try:
            type_check(name, arrays, attrs)
        except RelayTypeError:  # attributes the type checker rejects before any kernel runs
            with pytest.raises((RelayTypeError, type(error))):
                run_cuda(name, arrays, **attrs)
            return None, None
        with pytest.raises(type(error)):
            run_cuda(name, arrays, **attrs)
        return None, None
    got = run_cuda(name, arrays, **attrs)
    assert (got.dtype, got.shape) == (expected.dtype, expected.shape)
    return got, expected


def assert_close(got: np.ndarray, expected: np.ndarray, bound: Any) -> None:
    """Equal (NaN equal to NaN), or within ``bound`` of the reference."""
    with np.errstate(invalid="ignore"):  # inf - inf where both are inf
        err = np.abs(got.astype(np.float64) - expected.astype(np.float64))
    same = (got == expected) | (np.isnan(got) & np.isnan(expected))
    assert np.all(same | (err <= bound)), (got, expected, bound)


@st.composite
def shapes(draw: st.DrawFn, min_rank: int = 0, max_rank: int = 4) -> tuple[int, ...]:
    """Every dimension 0..4."""
    rank = draw(st.integers(min_rank, max_rank))
    return tuple(draw(st.lists(st.integers(0, 4), min_size=rank, max_size=rank)))


def values(rng: np.random.Generator, shape: tuple[int, ...], dtype: str, special: bool, small: bool) -> np.ndarray:
    """Floats over several magnitudes (NaN, inf, -inf, -0.0 sprinkled in when ``special``),
    integers over the whole range of their dtype; ``small``: values in 0..2 (many ties)."""
    if dtype == "bool":
        return np.asarray(rng.random(shape) < 0.5)
    if small:
        return np.asarray(rng.integers(0, 3, shape)).astype(dtype)
    if np.dtype(dtype).kind == "f":
        x = np.asarray(rng.standard_normal(shape) * 10.0 ** rng.integers(-3, 4, shape))
        if special and x.size:
            x.flat[rng.integers(0, x.size, 2)] = rng.choice([np.nan, np.inf, -np.inf, -0.0], 2)
        return x.astype(dtype)
    info = np.iinfo(dtype)
    return np.asarray(rng.integers(info.min, info.max, shape, dtype=dtype, endpoint=True))


@st.composite
def arrays(draw: st.DrawFn, dtype: str, shape: tuple[int, ...], special: bool | None = None) -> np.ndarray:
    """Values of ``values`` for drawn flags and seed."""
    rng = np.random.default_rng(draw(st.integers(0, 2**32 - 1)))
    special = draw(st.integers(0, 3)) > 0 if special is None else special
    return values(rng, shape, dtype, special, draw(st.integers(0, 3)) == 0)


def signed_axis(draw: st.DrawFn, axis: int, rank: int) -> int:
    """``axis`` or its negative alias."""
    return axis - rank if draw(st.booleans()) else axis


# --- reductions ---------------------------------------------------------------------------------


@st.composite
def reduce_axes(draw: st.DrawFn, rank: int) -> Any:
    """None, an int or a tuple of distinct axes (possibly empty); a 0-d tensor takes None or ()."""
    kind = draw(st.sampled_from(["none", "tuple"] if rank == 0 else ["none", "int", "tuple"]))
    if kind == "none":
        return None
    if kind == "int":
        return signed_axis(draw, draw(st.integers(0, rank - 1)), rank)
    chosen = draw(st.permutations(range(rank)))[:draw(st.integers(0, rank))]
    return tuple(signed_axis(draw, a, rank) for a in chosen)


@pytest.mark.parametrize("name", ["sum", "mean", "max", "min"])
@SETTINGS
@given(data=st.data())
def test_folds_match_reference(name: str, data: st.DataObject) -> None:
    dtype = data.draw(st.sampled_from(FLOATS) if name == "mean" else NUMBER_DTYPES)
    x = data.draw(arrays(dtype, data.draw(shapes())))
    axis, keepdims = data.draw(reduce_axes(x.ndim)), data.draw(st.booleans())
    got, expected = outcome(name, [x], axis=axis, keepdims=keepdims)
    if got is None:
        return
    if name in ("max", "min") or dtype not in FLOATS:
        np.testing.assert_array_equal(got, expected, strict=True)
        return
    magnitude = np.sum(np.abs(x.astype(np.float64)), axis=axis, keepdims=keepdims)
    if name == "mean":
        magnitude = magnitude / max(1, x.size // max(1, expected.size))
    assert_close(got, expected, RTOL[dtype] * magnitude)


@SETTINGS
@given(data=st.data())
def test_argmax_matches_reference(data: st.DataObject) -> None:
    x = data.draw(arrays(data.draw(NUMBER_DTYPES), data.draw(shapes())))
    axis = None if x.ndim == 0 or data.draw(st.booleans()) else signed_axis(
        data.draw, data.draw(st.integers(0, x.ndim - 1)), x.ndim)
    got, expected = outcome("argmax", [x], axis=axis, keepdims=data.draw(st.booleans()))
    if got is not None:
        np.testing.assert_array_equal(got, expected, strict=True)


def test_argmax_takes_the_first_maximum_or_the_first_nan() -> None:
    x = np.array([[1, 3, 3, np.nan, 3, np.nan], [-np.inf, -np.inf, 2, 2, np.inf, np.inf]], np.float32)
    for axis in (None, 0, 1):
        got, expected = outcome("argmax", [x], axis=axis)
        np.testing.assert_array_equal(got, expected, strict=True)
    np.testing.assert_array_equal(run_cuda("argmax", [x], axis=1), np.array([3, 4], np.int32), strict=True)


def softmax_bound(name: str, expected: np.ndarray, arrays: list[np.ndarray], axis: int) -> Any:
    """The allowed |kernel - reference| (see the module docstring of jit/cuda/reduce.py)."""
    dtype = arrays[0].dtype
    rtol = RTOL[dtype.name]
    if name == "softmax":
        return rtol * np.abs(expected.astype(np.float64)) + np.finfo(dtype).tiny
    if name == "log_softmax":
        return rtol * (1 + np.abs(expected.astype(np.float64)))
    z, y = (a.astype(np.float64) for a in arrays)
    peak = np.max(z, axis=axis, keepdims=True)
    terms = (np.log(z.shape[axis] + 1.0) + np.sum(np.abs(y * (z - peak)), axis=axis)
             + np.abs(np.squeeze(peak, axis)) * (1 + np.sum(np.abs(y), axis=axis)))
    return rtol * (1 + float(np.mean(terms)))


@pytest.mark.parametrize("name", ["softmax", "log_softmax", "softmax_cross_entropy"])
@SETTINGS
@given(data=st.data())
def test_softmax_family_matches_reference(name: str, data: st.DataObject) -> None:
    dtype = data.draw(st.sampled_from(FLOATS))
    x = data.draw(arrays(dtype, data.draw(shapes(min_rank=1))))
    axis = signed_axis(data.draw, data.draw(st.integers(0, x.ndim - 1)), x.ndim)
    inputs = [x]
    if name == "softmax_cross_entropy":
        labels = np.random.default_rng(data.draw(st.integers(0, 2**32 - 1))).random(x.shape)
        if data.draw(st.booleans()):  # rows summing to 1, as probabilities do
            labels = labels / np.maximum(labels.sum(axis=axis, keepdims=True), 1e-3)
        inputs.append(labels.astype(dtype))
    got, expected = outcome(name, inputs, axis=axis)
    if got is not None:
        with np.errstate(invalid="ignore"):
            bound = softmax_bound(name, expected, inputs, axis)
        assert_close(got, expected, bound)


# --- errors, the documented divergence, registration --------------------------------------------


@pytest.mark.parametrize("name, shape, attrs, message", [
    ("max", (2, 0), {"axis": 1}, "zero-size array"),
    ("min", (0,), {}, "zero-size array"),
    ("argmax", (0, 3), {"axis": 0}, "empty sequence"),
    ("argmax", (2, 0, 1), {"keepdims": True}, "empty sequence"),
])
def test_empty_reductions_raise(name: str, shape: tuple[int, ...], attrs: dict, message: str) -> None:
    x = np.zeros(shape, np.float32)
    with pytest.raises(ValueError):
        reference(name, [x], **attrs)
    with pytest.raises(ValueError, match=message):
        run_cuda(name, [x], **attrs)


def test_cross_entropy_of_an_empty_axis_raises_and_of_no_rows_is_nan() -> None:
    z = np.zeros((2, 0), np.float64)
    with pytest.raises(ValueError, match="zero-size"):
        run_cuda("softmax_cross_entropy", [z, z])
    z = np.zeros((0, 3), np.float32)
    got = run_cuda("softmax_cross_entropy", [z, z])
    assert got.dtype == np.float32 and got.shape == () and np.isnan(got)


def test_empty_results_raise_as_the_reference_does() -> None:
    # NumPy raises for an empty reduced axis even when the result is empty, where no thread runs.
    x = np.zeros((0, 0), np.float32)
    with pytest.raises(ValueError, match="zero-size array"):
        run_cuda("max", [x], axis=1)
    with pytest.raises(ValueError):
        run_cuda("softmax", [np.zeros((2, 0), np.float32)], axis=1)
    got = run_cuda("sum", [x], axis=1)  # an empty result that is fine
    assert got.shape == (0,) and got.dtype == np.float32


def test_integer_sums_wrap_and_float32_sums_add_in_float64() -> None:
    x = np.full(4, 100, np.int8)
    np.testing.assert_array_equal(run_cuda("sum", [x]), np.int8(-112), strict=True)
    y = np.array([1.0, 2.0**-24, 2.0**-24, 2.0**-24], np.float32)  # float32 adds each to 1 and loses it
    assert run_cuda("sum", [y]) == np.float32(1.0 + 3 * 2.0**-24)


def test_every_operator_has_a_cuda_generator() -> None:
    generators = load_generators("cuda")
    missing = [name for name in REDUCE_OPS + SHAPE_OPS if name not in generators]
    assert not missing, missing
