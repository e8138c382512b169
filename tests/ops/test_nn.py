"""Linear algebra and neural-network operators.

conv2d and the pools are checked against direct nested loops over every output element;
products against einsum. Float tolerances are those of helpers.py (float32 rtol 1e-5,
float64 rtol 1e-12) applied to the size of the accumulated terms: the same computation on
|x| and |w| for products, ``|expected| + max |x|`` for (log-)softmax and the cross entropy.
Integers are exact.
"""

from __future__ import annotations

import math
from typing import Any, Callable

import numpy as np
import pytest
from hypothesis import assume, given
from hypothesis import strategies as st
from hypothesis.extra import numpy as hnp

from relayish.ops import get_op

from .helpers import FLOATS, NUMBERS, arrays, assert_close, conv_taps, out_size, pool_windows, shapes

side = st.integers(1, 3)


@given(data=st.data(), dtype=st.sampled_from(NUMBERS), n=side, k=side, m=side)
def test_matmul(data: st.DataObject, dtype: np.dtype, n: int, k: int, m: int) -> None:
    batch = data.draw(hnp.mutually_broadcastable_shapes(num_shapes=2, max_dims=2, max_side=3), label="batch")
    a = data.draw(arrays(dtype, batch.input_shapes[0] + (n, k)), label="a")
    b = data.draw(arrays(dtype, batch.input_shapes[1] + (k, m)), label="b")
    product = get_op("matmul")(a, b)
    wide = [v.astype(np.float64 if dtype.kind == "f" else np.int64) for v in (a, b)]
    expected = np.einsum("...ij,...jk->...ik", *wide)
    scale = np.einsum("...ij,...jk->...ik", *map(np.abs, wide))
    assert_close(product, expected, dtype, scale=scale)


def test_matmul_needs_matrices() -> None:
    with pytest.raises(ValueError, match="rank >= 2"):
        get_op("matmul")(np.ones(3), np.ones((3, 2)))


@given(data=st.data(), dtype=st.sampled_from(NUMBERS), units=side, features=side, bias=st.booleans())
def test_dense(data: st.DataObject, dtype: np.dtype, units: int, features: int, bias: bool) -> None:
    lead = data.draw(shapes(max_dims=2, max_side=3), label="lead")
    x = data.draw(arrays(dtype, lead + (features,)), label="x")
    w = data.draw(arrays(dtype, (units, features)), label="w")
    b = [data.draw(arrays(dtype, (units,)), label="b")] if bias else []
    wide = [v.astype(np.float64 if dtype.kind == "f" else np.int64) for v in (x, w, *b)]
    expected = np.einsum("...i,ui->...u", wide[0], wide[1]) + (wide[2] if bias else 0)
    scale = np.einsum("...i,ui->...u", np.abs(wide[0]), np.abs(wide[1])) + (np.abs(wide[2]) if bias else 0)
    assert_close(get_op("dense")(x, w, *b), expected, dtype, scale=scale)


def loop_conv2d(x: np.ndarray, w: np.ndarray, strides: Any, padding: Any, dilation: Any) -> np.ndarray:
    """Direct definition: every output element is a sum over channels and kernel taps."""
    (n, _, h, wd), (o, _, kh, kw) = x.shape, w.shape
    oh = out_size(h, kh, strides[0], padding[0], dilation[0])
    ow = out_size(wd, kw, strides[1], padding[1], dilation[1])
    out = np.zeros((n, o, oh, ow), dtype=np.result_type(x, np.float64 if x.dtype.kind == "f" else np.int64))
    for out_index, w_index, x_index in conv_taps(x.shape, w.shape, strides, padding, dilation):
        out[out_index] += x[x_index] * w[w_index]
    return out


pairs = st.tuples(st.integers(1, 3), st.integers(1, 3))
paddings = st.tuples(st.integers(0, 2), st.integers(0, 2))


@given(
    data=st.data(),
    dtype=st.sampled_from(NUMBERS),
    strides=pairs,
    padding=paddings,
    dilation=st.tuples(st.integers(1, 2), st.integers(1, 2)),
)
def test_conv2d(data: st.DataObject, dtype: np.dtype, strides: Any, padding: Any, dilation: Any) -> None:
    n, c, o = (data.draw(st.integers(1, 2)) for _ in range(3))
    kernel = data.draw(pairs, label="kernel")
    image = data.draw(st.tuples(st.integers(1, 6), st.integers(1, 6)), label="image")
    assume(all(out_size(*args) >= 1 for args in zip(image, kernel, strides, padding, dilation)))
    x = data.draw(arrays(dtype, (n, c) + image), label="x")
    w = data.draw(arrays(dtype, (o, c) + kernel), label="w")
    wide = [v.astype(np.float64 if dtype.kind == "f" else np.int64) for v in (x, w)]
    expected = loop_conv2d(*wide, strides, padding, dilation)
    scale = loop_conv2d(*map(np.abs, wide), strides, padding, dilation)
    # An int n for a pair means (n, n): pass the symmetric attributes as ints half the time.
    attrs = {k: (v[0] if v[0] == v[1] and data.draw(st.booleans()) else v)
             for k, v in {"strides": strides, "padding": padding, "dilation": dilation}.items()}
    assert_close(get_op("conv2d")(x, w, **attrs), expected, dtype, scale=scale)


def test_conv2d_is_cross_correlation() -> None:
    x = np.arange(9, dtype=np.float32).reshape(1, 1, 3, 3)
    w = np.array([[[[1, 0], [0, 0]]]], dtype=np.float32)  # picks the top-left tap, no flip
    assert_close(get_op("conv2d")(x, w), x[:, :, :2, :2], np.float32)


def test_conv2d_window_larger_than_the_input_fails() -> None:
    with pytest.raises(ValueError, match="does not fit"):
        get_op("conv2d")(np.ones((1, 1, 2, 2)), np.ones((1, 1, 3, 3)))


def loop_pool(x: np.ndarray, pool: Any, strides: Any, padding: Any, combine: Callable[[list, int], Any]) -> np.ndarray:
    """``combine(in-image values, window size)`` for every window of every channel."""
    n, c, h, w = x.shape
    oh, ow = (out_size(s, k, st_, p) for s, k, st_, p in zip((h, w), pool, strides, padding))
    out = np.zeros((n, c, oh, ow))
    for out_index, window in pool_windows(x.shape, pool, strides, padding):
        out[out_index] = combine([x[index] for index in window], pool[0] * pool[1])
    return out


POOLS = {
    # name: (combine, dtypes); a window wholly in the padding has max -inf (smallest int for ints).
    "max_pool2d": (lambda values, size: max(values, default=-np.inf), NUMBERS),
    "avg_pool2d": (lambda values, size: sum(values) / size, FLOATS),
    "avg_pool2d exclude pad": (lambda values, size: sum(values) / len(values) if values else np.nan, FLOATS),
}


@pytest.mark.parametrize("case", sorted(POOLS))
@given(data=st.data(), pool=pairs, padding=paddings, dtype=st.sampled_from(NUMBERS))
def test_pools(case: str, data: st.DataObject, pool: Any, padding: Any, dtype: np.dtype) -> None:
    combine, dtypes = POOLS[case]
    dtype = dtype if dtype in dtypes else dtypes[0]
    strides = data.draw(st.none() | pairs, label="strides")
    image = data.draw(st.tuples(st.integers(1, 6), st.integers(1, 6)), label="image")
    assume(all(out_size(*args) >= 1 for args in zip(image, pool, strides or pool, padding)))
    shape = (data.draw(st.integers(1, 2)), data.draw(st.integers(1, 2))) + image
    x = data.draw(arrays(dtype, shape), label="x")
    expected = loop_pool(x.astype(np.float64), pool, strides or pool, padding, combine)
    attrs = {"pool_size": pool, "strides": strides, "padding": padding}
    if case == "avg_pool2d exclude pad":
        attrs["count_include_pad"] = False
    if dtype.kind == "i":
        expected[expected == -np.inf] = np.iinfo(dtype).min
    result = get_op(case.split()[0])(x, **attrs)
    scale = loop_pool(np.abs(x.astype(np.float64)), pool, strides or pool, padding, combine)
    assert_close(result, expected, dtype, scale=scale)


def softmax_reference(x: np.ndarray, axis: int) -> np.ndarray:
    e = np.exp(x)  # no shift needed in float64 for |x| <= 50
    return e / e.sum(axis=axis, keepdims=True)


@st.composite
def logits_and_axis(draw: Any) -> tuple[np.ndarray, int]:
    x = draw(arrays(draw(st.sampled_from(FLOATS)), shapes(min_dims=1), -50, 50))
    return x, draw(st.integers(-x.ndim, x.ndim - 1))


@given(case=logits_and_axis())
def test_softmax(case: tuple[np.ndarray, int]) -> None:
    x, axis = case
    expected = softmax_reference(x.astype(np.float64), axis)
    assert_close(get_op("softmax")(x, axis=axis), expected, x.dtype)
    if axis == -1:
        assert_close(get_op("softmax")(x), expected, x.dtype)


@given(case=logits_and_axis())
def test_log_softmax(case: tuple[np.ndarray, int]) -> None:
    x, axis = case
    expected = np.log(softmax_reference(x.astype(np.float64), axis))
    scale = np.abs(expected) + np.abs(x).max()
    assert_close(get_op("log_softmax")(x, axis=axis), expected, x.dtype, scale=scale)


@pytest.mark.parametrize("name", ["softmax", "log_softmax"])
def test_softmax_is_stable_for_large_logits(name: str) -> None:
    x = np.array([[1000.0, 1001.0, 1002.0], [-1000.0, -1001.0, -1002.0]], dtype=np.float32)
    small = np.array([[0.0, 1.0, 2.0], [0.0, -1.0, -2.0]])
    expected = softmax_reference(small, -1)
    expected = expected if name == "softmax" else np.log(expected)
    assert_close(get_op(name)(x), expected, np.float32)


@given(case=logits_and_axis(), data=st.data(), one_hot=st.booleans())
def test_softmax_cross_entropy(case: tuple[np.ndarray, int], data: st.DataObject, one_hot: bool) -> None:
    z, axis = case
    if one_hot:
        classes = z.shape[axis]
        other_axes = tuple(np.delete(z.shape, axis % z.ndim).tolist())
        labels = data.draw(arrays(np.int64, other_axes, 0, classes - 1), label="labels")
        y = np.moveaxis(np.eye(classes, dtype=z.dtype)[labels], -1, axis)
    else:
        y = data.draw(arrays(z.dtype, z.shape, 0, 1), label="y")
    wide_z, wide_y = z.astype(np.float64), y.astype(np.float64)
    lse = np.log(np.exp(wide_z).sum(axis=axis))
    losses = lse - (wide_y * wide_z).sum(axis=axis)
    expected = np.array(losses.sum() / losses.size)
    scale = np.abs(lse).mean() + 3 * np.abs(wide_z).max() * np.abs(wide_y).sum(axis=axis).mean()
    assert_close(get_op("softmax_cross_entropy")(z, y, axis=axis), expected, z.dtype, scale=scale)


def test_softmax_cross_entropy_of_uniform_logits_is_log_of_the_class_count() -> None:
    z = np.full((4, 5), 1000.0, dtype=np.float32)
    y = np.eye(5, dtype=np.float32)[[0, 1, 2, 3]]
    assert_close(get_op("softmax_cross_entropy")(z, y), np.array(math.log(5)), np.float32)
