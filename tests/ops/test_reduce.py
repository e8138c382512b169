"""Reductions against a reference that moves the reduced axes last and reduces one flat axis.

Float tolerances: the defaults of helpers.py, with the scale of a sum or mean being the same
reduction of |x| (float32 rtol 1e-5 of that, float64 rtol 1e-12); max, min and argmax exact.
"""

from __future__ import annotations

from typing import Any, Callable

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

from relayish.ops import get_op

from .helpers import FLOATS, I32, NUMBERS, arrays, assert_close, shapes


def reference(x: np.ndarray, axis: Any, keepdims: bool, reduce_last: Callable[[np.ndarray], Any]) -> np.ndarray:
    """Reduce ``x`` over ``axis`` by moving those axes last and flattening them into one."""
    axes = range(x.ndim) if axis is None else [axis] if isinstance(axis, int) else axis
    axes = sorted(a % x.ndim for a in axes)
    kept = [a for a in range(x.ndim) if a not in axes]
    moved = np.transpose(x, kept + axes).reshape([x.shape[a] for a in kept] + [-1])
    result = np.asarray(reduce_last(moved))
    if keepdims:
        result = result.reshape([1 if a in axes else n for a, n in enumerate(x.shape)])
    return result


@st.composite
def axis_attr(draw: Any, rank: int) -> int | tuple[int, ...] | None:
    """None, one axis or a tuple of distinct axes, each possibly negative."""
    if rank == 0:
        return draw(st.sampled_from([None, ()]))
    chosen = draw(st.lists(st.integers(0, rank - 1), unique=True, max_size=rank))
    signed = [draw(st.sampled_from([a, a - rank])) for a in chosen]
    return draw(st.sampled_from([None, tuple(signed)] + signed[:1]))


def sum_last(v: np.ndarray) -> Any:
    return np.add.reduce(v, axis=-1)


REDUCTIONS = {
    "sum": (sum_last, NUMBERS),
    "mean": (lambda v: sum_last(v) / v.shape[-1], FLOATS),
    "max": (lambda v: np.maximum.reduce(v, axis=-1), NUMBERS),
    "min": (lambda v: np.minimum.reduce(v, axis=-1), NUMBERS),
}


@pytest.mark.parametrize("name", sorted(REDUCTIONS))
@given(data=st.data(), dtype=st.sampled_from(NUMBERS), keepdims=st.booleans())
def test_reduction(name: str, data: st.DataObject, dtype: np.dtype, keepdims: bool) -> None:
    reduce_last, dtypes = REDUCTIONS[name]
    dtype = dtype if dtype in dtypes else dtypes[0]
    x = data.draw(arrays(dtype, shapes(), -1000, 1000), label="x")
    axis = data.draw(axis_attr(x.ndim), label="axis")
    wide = x.astype(np.float64 if dtype.kind == "f" else np.int64)
    expected = reference(wide, axis, keepdims, reduce_last)
    scale = reference(np.abs(wide), axis, keepdims, reduce_last) if name in ("sum", "mean") else None
    assert_close(get_op(name)(x, axis=axis, keepdims=keepdims), expected, dtype, scale=scale)


def first_largest(v: np.ndarray) -> np.ndarray:
    """Index of the first largest element along the last axis, by a Python loop."""
    rows = v.reshape(-1, v.shape[-1])
    best = [max(range(len(row)), key=lambda i, row=row: (row[i], -i)) for row in rows]
    return np.array(best, dtype=np.int64).reshape(v.shape[:-1])


@given(data=st.data(), dtype=st.sampled_from(NUMBERS), keepdims=st.booleans())
def test_argmax(data: st.DataObject, dtype: np.dtype, keepdims: bool) -> None:
    x = data.draw(arrays(dtype, shapes(), -3, 3), label="x")  # few values: many ties
    axis = data.draw(st.none() | st.integers(-x.ndim, x.ndim - 1) if x.ndim else st.none(), label="axis")
    if axis is None:
        expected = first_largest(x.reshape(-1))
        expected = expected.reshape((1,) * x.ndim) if keepdims else expected
    else:
        expected = reference(x, axis, keepdims, first_largest)
    assert_close(get_op("argmax")(x, axis=axis, keepdims=keepdims), expected, I32)


def test_reducing_an_axis_out_of_range_fails() -> None:
    with pytest.raises(ValueError, match="out of bounds"):
        get_op("sum")(np.ones((2, 3)), axis=2)


@given(data=st.data(), dtype=st.sampled_from(NUMBERS), exclude=st.booleans())
def test_ndarray_size_counts_the_elements_a_sum_over_those_axes_adds(data: st.DataObject, dtype: np.dtype,
                                                                      exclude: bool) -> None:
    """The count is the number of ones a sum over the counted axes adds up (the oracle); with
    ``exclude`` it counts the other axes."""
    x = data.draw(arrays(np.dtype(np.bool_), shapes(), 0, 1), label="x")
    axis = data.draw(axis_attr(x.ndim), label="axis")
    named = range(x.ndim) if axis is None else [axis] if isinstance(axis, int) else axis
    counted = [a for a in range(x.ndim) if (a in {n % x.ndim for n in named}) != exclude]
    expected = np.sum(np.ones([x.shape[a] for a in counted], np.int64))
    result = get_op("ndarray_size")(x, axis=axis, exclude=exclude, dtype=dtype)
    assert result.shape == () and result.dtype == dtype
    assert result == np.array(expected).astype(dtype)


def test_ndarray_size_of_axes_it_does_not_have_fails() -> None:
    with pytest.raises(ValueError, match="not a set of distinct axes"):
        get_op("ndarray_size")(np.ones((2, 3)), axis=(1, -1))
