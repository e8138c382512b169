"""CUDA shape-operator kernels against the NumPy reference, on the simulator.

Hypothesis draws small shapes (every dimension 0..4, rank 0..4 where the operator takes it),
dtypes (bool and every integer and float dtype the CUDA target has), attributes (negative axes,
strides of either sign, begin/end beyond the sizes, paddings, fill values NaN and inf into
integers, ...) and values. Everything is exact (dtype, shape, values, the sign of zeros) except
sum_to's float sums, within ``rtol * sum(|x|)`` (rtol 1e-5 float32, 1e-12 float64) as
``jit/cuda/shape.py`` states. take with an index out of range raises IndexError as the
reference does.
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from tests.cuda.support import reference, run_cuda
from tests.cuda.test_cuda_reduce import (
    ALL,
    FLOATS,
    INTS,
    RTOL,
    arrays,
    assert_close,
    outcome,
    shapes,
    signed_axis,
)

pytestmark = pytest.mark.filterwarnings("ignore:overflow encountered", "ignore:invalid value encountered")
SETTINGS = settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
FILLS = [0.0, -0.0, 1.0, -1.5, 300.0, 7e4, math.nan, math.inf, -math.inf]


def check(name: str, inputs: list[np.ndarray], **attrs: Any) -> None:
    """The kernel equals the reference exactly (dtype, shape, values with NaN equal to NaN, the
    sign of every float), or raises its exception."""
    got, expected = outcome(name, inputs, **attrs)
    if got is None:
        return
    np.testing.assert_array_equal(got, expected, strict=True)
    if got.dtype.kind == "f":
        np.testing.assert_array_equal(np.signbit(got), np.signbit(expected))


@st.composite
def tensors(draw: st.DrawFn, dtypes: tuple[str, ...] = ALL, min_rank: int = 0, max_rank: int = 4,
            shape: tuple[int, ...] | None = None) -> np.ndarray:
    """A tensor of a drawn dtype and shape (or the given shape)."""
    dtype = draw(st.sampled_from(dtypes))
    return draw(arrays(dtype, draw(shapes(min_rank, max_rank)) if shape is None else shape))


@st.composite
def regrouped(draw: st.DrawFn, shape: tuple[int, ...]) -> tuple[int, ...]:
    """Another shape with as many elements: runs of adjacent dimensions merged, 1s inserted,
    maybe reversed."""
    out, i = [], 0
    while i < len(shape):
        j = draw(st.integers(i + 1, len(shape)))
        out.append(math.prod(shape[i:j]))
        i = j
    for _ in range(draw(st.integers(0, 2))):
        out.insert(draw(st.integers(0, len(out))), 1)
    return tuple(reversed(out)) if draw(st.booleans()) else tuple(out)


@SETTINGS
@given(data=st.data())
def test_reshape(data: st.DataObject) -> None:
    x = data.draw(tensors())
    newshape = list(data.draw(regrouped(x.shape)))
    for p in range(min(len(newshape), x.ndim)):  # 0 copies the input's dimension
        if newshape[p] == x.shape[p] and data.draw(st.booleans()):
            newshape[p] = 0
    if newshape and data.draw(st.booleans()):  # one -1 inferred, when the others hold elements
        p = data.draw(st.integers(0, len(newshape) - 1))
        known = [x.shape[q] if d == 0 and q < x.ndim else d for q, d in enumerate(newshape) if q != p]
        if math.prod(known):
            newshape[p] = -1
    check("reshape", [x], newshape=tuple(newshape))


@SETTINGS
@given(data=st.data())
def test_flatten_and_reshape_like(data: st.DataObject) -> None:
    x = data.draw(tensors(min_rank=1))
    check("flatten", [x])
    like = data.draw(tensors(shape=data.draw(regrouped(x.shape))))
    check("reshape_like", [x, like])


@SETTINGS
@given(data=st.data())
def test_transpose(data: st.DataObject) -> None:
    x = data.draw(tensors())
    axes = None
    if data.draw(st.booleans()):
        axes = tuple(signed_axis(data.draw, a, x.ndim) for a in data.draw(st.permutations(range(x.ndim))))
    check("transpose", [x], axes=axes)


@SETTINGS
@given(data=st.data())
def test_expand_dims(data: st.DataObject) -> None:
    x = data.draw(tensors())
    axis = signed_axis(data.draw, data.draw(st.integers(0, x.ndim)), x.ndim + 1)
    check("expand_dims", [x], axis=axis, num_newaxis=data.draw(st.integers(0, 2)))


@SETTINGS
@given(data=st.data())
def test_squeeze(data: st.DataObject) -> None:
    x = data.draw(tensors())
    ones = [a for a in range(x.ndim) if x.shape[a] == 1]
    chosen = [signed_axis(data.draw, a, x.ndim) for a in data.draw(st.permutations(ones))[:data.draw(
        st.integers(0, len(ones)))]]
    axis = chosen[0] if len(chosen) == 1 and data.draw(st.booleans()) else tuple(chosen)
    check("squeeze", [x], axis=axis)


def test_squeeze_without_axes_has_no_kernel() -> None:
    with pytest.raises(NotImplementedError):
        run_cuda("squeeze", [np.zeros((1, 2), np.float32)])


@st.composite
def broadcast_pair(draw: st.DrawFn) -> tuple[tuple[int, ...], tuple[int, ...]]:
    """(small, big): big has 0..2 leading axes more, and any size where small has 1."""
    small = draw(shapes(max_rank=3))
    lead = tuple(draw(st.lists(st.integers(0, 4), max_size=2)))
    return small, lead + tuple(draw(st.integers(0, 4)) if d == 1 else d for d in small)


@SETTINGS
@given(data=st.data())
def test_broadcast_to_and_like(data: st.DataObject) -> None:
    small, big = data.draw(broadcast_pair())
    x = data.draw(tensors(shape=small))
    check("broadcast_to", [x], shape=big)
    check("broadcast_to_like", [x, data.draw(tensors(shape=big))])


@SETTINGS
@given(data=st.data())
def test_sum_to(data: st.DataObject) -> None:
    small, big = data.draw(broadcast_pair())
    x, like = data.draw(tensors(shape=big)), data.draw(tensors(shape=small))
    got, expected = outcome("sum_to", [x, like])
    assert got is not None  # like's shape broadcasts to x's: the reference does not raise
    if x.dtype.name not in FLOATS:
        np.testing.assert_array_equal(got, expected, strict=True)
        return
    magnitude = reference("sum_to", [np.abs(x.astype(np.float64)), like])
    assert_close(got, expected, RTOL[x.dtype.name] * magnitude)


@SETTINGS
@given(data=st.data())
def test_concatenate(data: st.DataObject) -> None:
    dtype = data.draw(st.sampled_from(ALL))
    base = data.draw(shapes(min_rank=1))
    axis = data.draw(st.integers(0, len(base) - 1))
    parts = [data.draw(arrays(dtype, base[:axis] + (data.draw(st.integers(0, 3)),) + base[axis + 1:]))
             for _ in range(data.draw(st.integers(1, 3)))]
    check("concatenate", parts, axis=signed_axis(data.draw, axis, len(base)))


@SETTINGS
@given(data=st.data())
def test_stack(data: st.DataObject) -> None:
    dtype = data.draw(st.sampled_from(ALL))
    shape = data.draw(shapes(max_rank=3))
    parts = [data.draw(arrays(dtype, shape)) for _ in range(data.draw(st.integers(1, 3)))]
    axis = signed_axis(data.draw, data.draw(st.integers(0, len(shape))), len(shape) + 1)
    check("stack", parts, axis=axis)


@SETTINGS
@given(data=st.data())
def test_take(data: st.DataObject) -> None:
    axis = data.draw(st.one_of(st.none(), st.integers(0, 2)))
    x = data.draw(tensors(min_rank=0 if axis is None else axis + 1, max_rank=3))
    size = x.size if axis is None else x.shape[axis]
    rng = np.random.default_rng(data.draw(st.integers(0, 2**32 - 1)))
    idx_shape = data.draw(shapes(max_rank=2))
    low, high = (-2, size + 2) if data.draw(st.integers(0, 3)) == 0 else (0, max(size, 1))
    # negative indices wrap into large ones for unsigned dtypes: out of range either way
    indices = np.asarray(rng.integers(low, high, idx_shape)).astype(data.draw(st.sampled_from(INTS)))
    check("take", [x, indices], axis=None if axis is None else signed_axis(data.draw, axis, x.ndim))


def test_take_out_of_range_raises() -> None:
    data = np.arange(6, dtype=np.float32).reshape(2, 3)
    for indices, axis in ((np.array([0, 3], np.int32), 1), (np.array(-1, np.int64), 0),
                          (np.array([6], np.uint8), None), (np.array([2**64 - 1], np.uint64), None)):
        with pytest.raises(IndexError):
            reference("take", [data, indices], axis=axis)
        with pytest.raises(IndexError, match="out of range"):
            run_cuda("take", [data, indices], axis=axis)


@SETTINGS
@given(data=st.data())
def test_strided_slice(data: st.DataObject) -> None:
    x = data.draw(tensors())
    chosen = data.draw(st.permutations(range(x.ndim)))[:data.draw(st.integers(0, x.ndim))]
    leading = data.draw(st.booleans())
    if leading:  # axes None: the leading ones
        chosen = list(range(len(chosen)))
    bounds = st.integers(-6, 6)
    begin = tuple(data.draw(bounds) for _ in chosen)
    end = tuple(data.draw(bounds) for _ in chosen)
    strides = None if data.draw(st.booleans()) else tuple(
        data.draw(st.sampled_from([-3, -2, -1, 1, 2, 3])) for _ in chosen)
    axes = None if leading else tuple(signed_axis(data.draw, a, x.ndim) for a in chosen)
    check("strided_slice", [x], begin=begin, end=end, strides=strides, axes=axes)


@SETTINGS
@given(data=st.data())
def test_pad(data: st.DataObject) -> None:
    x = data.draw(tensors())
    widths = tuple(data.draw(st.lists(st.integers(0, 2), min_size=2 * x.ndim, max_size=2 * x.ndim)))
    check("pad", [x], pad_width=widths, pad_value=data.draw(st.sampled_from(FILLS)))


@SETTINGS
@given(data=st.data())
def test_full(data: st.DataObject) -> None:
    shape = data.draw(shapes())
    check("full", [], shape=shape, fill_value=data.draw(st.sampled_from(FILLS)),
          dtype=data.draw(st.sampled_from(ALL)))


@SETTINGS
@given(data=st.data())
def test_one_hot(data: st.DataObject) -> None:
    depth = data.draw(st.integers(0, 4))
    shape = data.draw(shapes(max_rank=3))
    rng = np.random.default_rng(data.draw(st.integers(0, 2**32 - 1)))
    indices = np.asarray(rng.integers(-1, depth + 2, shape)).astype(data.draw(st.sampled_from(INTS)))
    check("one_hot", [indices], depth=depth, dtype=data.draw(st.sampled_from(ALL)))
