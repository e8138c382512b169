"""Shape operators against references built element by element or by plain indexing.

Values move without arithmetic, so results must be exact, except ``sum_to`` (float32 rtol
1e-5 and float64 rtol 1e-12 of the sum of |x|, as in helpers.py).
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

from relayish.ops import get_op
from relayish.types import BaseType

from .helpers import I32, NUMBERS, arrays, assert_close, broadcast_source, shapes, source_index

any_array = st.sampled_from(NUMBERS).flatmap(lambda dtype: arrays(dtype, shapes()))


@st.composite
def regrouped(draw: Any, shape: tuple[int, ...]) -> tuple[int, ...]:
    """Another shape of the same size: the dimensions shuffled, merged in runs, 1s added."""
    dims = draw(st.permutations(shape)) + [1] * draw(st.integers(0, 2))
    dims = draw(st.permutations(dims))
    cuts = draw(st.lists(st.booleans(), min_size=len(dims), max_size=len(dims)))
    groups: list[list[int]] = []
    for dim, cut in zip(dims, cuts):
        if cut or not groups:
            groups.append([])
        groups[-1].append(dim)
    return tuple(math.prod(group) for group in groups)


@given(x=any_array, data=st.data())
def test_reshape(x: np.ndarray, data: st.DataObject) -> None:
    target = data.draw(regrouped(x.shape), label="target")
    newshape = [0 if i < x.ndim and n == x.shape[i] and data.draw(st.booleans()) else n for i, n in enumerate(target)]
    if newshape and data.draw(st.booleans(), label="infer"):
        newshape[data.draw(st.integers(0, len(newshape) - 1))] = -1
    expected = np.array(x.ravel().tolist(), dtype=x.dtype).reshape(target)
    assert_close(get_op("reshape")(x, newshape=newshape), expected, x.dtype)


def test_reshape_zero_beyond_the_input_rank_fails() -> None:
    with pytest.raises(ValueError, match="rank 1"):
        get_op("reshape")(np.ones(4), newshape=(2, 0))


LETTERS = "abcdefgh"


@given(x=any_array, data=st.data())
def test_transpose(x: np.ndarray, data: st.DataObject) -> None:
    axes = data.draw(st.none() | st.permutations(range(x.ndim)), label="axes")
    order = list(reversed(range(x.ndim))) if axes is None else axes
    spec = f"{LETTERS[:x.ndim]}->{''.join(LETTERS[a] for a in order)}"
    assert_close(get_op("transpose")(x, axes=axes), np.einsum(spec, x), x.dtype)


@given(x=any_array, data=st.data())
def test_expand_dims(x: np.ndarray, data: st.DataObject) -> None:
    axis = data.draw(st.integers(-x.ndim - 1, x.ndim), label="axis")
    count = data.draw(st.integers(0, 3), label="num_newaxis")
    position = axis if axis >= 0 else axis + x.ndim + 1
    expected = x[(slice(None),) * position + (None,) * count]
    assert_close(get_op("expand_dims")(x, axis=axis, num_newaxis=count), expected, x.dtype)


@given(x=any_array, data=st.data())
def test_squeeze(x: np.ndarray, data: st.DataObject) -> None:
    ones = [a for a, n in enumerate(x.shape) if n == 1]
    chosen = data.draw(st.lists(st.sampled_from(ones), unique=True) if ones else st.just([]), label="chosen")
    axis = data.draw(st.none() | st.just(tuple(a - x.ndim for a in chosen)), label="axis")
    dropped = ones if axis is None else chosen
    expected = x.reshape([n for a, n in enumerate(x.shape) if a not in dropped])
    assert_close(get_op("squeeze")(x, axis=axis), expected, x.dtype)


def test_squeezing_an_axis_that_is_not_1_fails() -> None:
    with pytest.raises(ValueError):
        get_op("squeeze")(np.ones((1, 2)), axis=1)


def broadcast_reference(x: np.ndarray, target: tuple[int, ...]) -> np.ndarray:
    out = np.empty(target, dtype=x.dtype)
    for index in np.ndindex(*target):
        out[index] = x[source_index(index, x.shape)]
    return out


@given(data=st.data(), target=shapes(), dtype=st.sampled_from(NUMBERS))
def test_broadcast_to_and_broadcast_to_like(data: st.DataObject, target: tuple[int, ...], dtype: np.dtype) -> None:
    x = data.draw(arrays(dtype, broadcast_source(target)), label="x")
    expected = broadcast_reference(x, target)
    assert_close(get_op("broadcast_to")(x, shape=target), expected, dtype)
    assert_close(get_op("broadcast_to_like")(x, np.zeros(target, dtype=bool)), expected, dtype)


@given(data=st.data(), target=shapes(), dtype=st.sampled_from(NUMBERS))
def test_sum_to(data: st.DataObject, target: tuple[int, ...], dtype: np.dtype) -> None:
    like_shape = data.draw(broadcast_source(target), label="like")
    x = data.draw(arrays(dtype, target, -100, 100), label="x")
    wide = x.astype(np.float64 if dtype.kind == "f" else np.int64)
    expected, scale = np.zeros(like_shape), np.zeros(like_shape)
    expected = expected.astype(wide.dtype)
    for index in np.ndindex(*target):
        expected[source_index(index, like_shape)] += wide[index]
        scale[source_index(index, like_shape)] += abs(wide[index])
    assert_close(get_op("sum_to")(x, np.zeros(like_shape, dtype)), expected, dtype, scale=scale)


def test_sum_to_undoes_broadcasting() -> None:
    x = np.array([[1.0], [2.0], [3.0]], dtype=np.float32)  # (3, 1)
    y = np.arange(24, dtype=np.float32).reshape(2, 3, 4)
    result = get_op("sum_to")(get_op("add")(get_op("broadcast_to")(x, shape=(2, 3, 4)), y), x)
    # Each x[i, 0] was used 2 * 4 times; y[a, i, b] all land in row i.
    expected = [[8 * x[i, 0] + sum(y[a, i, b] for a in range(2) for b in range(4))] for i in range(3)]
    assert_close(result, np.array(expected), np.float32)


def test_sum_to_a_shape_that_does_not_broadcast_fails() -> None:
    with pytest.raises(ValueError, match="sum_to"):
        get_op("sum_to")(np.ones((2, 3)), np.ones((2, 2)))


@st.composite
def joined(draw: Any, new_axis: bool) -> tuple[list[np.ndarray], int]:
    """1 to 3 arrays of one dtype that concatenate (or stack) along the drawn axis."""
    dtype = draw(st.sampled_from(NUMBERS))
    shape = draw(shapes(min_dims=0 if new_axis else 1, max_dims=3))
    rank = len(shape) + new_axis
    axis = draw(st.integers(-rank, rank - 1))
    count = draw(st.integers(1, 3))
    if new_axis:
        return [draw(arrays(dtype, shape)) for _ in range(count)], axis
    sizes = draw(st.lists(st.integers(0, 3), min_size=count, max_size=count))
    parts = [draw(arrays(dtype, shape[: axis % rank] + (n,) + shape[axis % rank + 1:])) for n in sizes]
    return parts, axis


@given(case=joined(new_axis=False))
def test_concatenate(case: tuple[list[np.ndarray], int]) -> None:
    parts, axis = case
    axis %= parts[0].ndim
    shape = list(parts[0].shape)
    shape[axis] = sum(p.shape[axis] for p in parts)
    expected = np.empty(shape, dtype=parts[0].dtype)
    start = 0
    for part in parts:
        stop = start + part.shape[axis]
        expected[(slice(None),) * axis + (slice(start, stop),)] = part
        start = stop
    assert_close(get_op("concatenate")(*parts, axis=axis), expected, parts[0].dtype)


@given(case=joined(new_axis=True))
def test_stack(case: tuple[list[np.ndarray], int]) -> None:
    parts, axis = case
    axis %= parts[0].ndim + 1
    shape = parts[0].shape[:axis] + (len(parts),) + parts[0].shape[axis:]
    expected = np.empty(shape, dtype=parts[0].dtype)
    for i, part in enumerate(parts):
        expected[(slice(None),) * axis + (i,)] = part
    assert_close(get_op("stack")(*parts, axis=axis), expected, parts[0].dtype)


@given(data=st.data(), x=any_array, index_shape=shapes(max_dims=2, min_side=0))
def test_take(data: st.DataObject, x: np.ndarray, index_shape: tuple[int, ...]) -> None:
    axis = data.draw(st.none() | st.integers(-x.ndim, x.ndim - 1) if x.ndim else st.none(), label="axis")
    size = x.size if axis is None else x.shape[axis]
    indices = data.draw(arrays(I32, index_shape, 0, size - 1), label="indices")
    expected = x.ravel()[indices] if axis is None else x[(slice(None),) * (axis % x.ndim) + (indices,)]
    assert_close(get_op("take")(x, indices, axis=axis), expected, x.dtype)


@pytest.mark.parametrize(("index", "axis"), [(3, 0), (-1, 0), (6, None), (-7, None), (2, -1)])
def test_take_out_of_range_raises(index: int, axis: int | None) -> None:
    data = np.arange(6).reshape(3, 2)
    with pytest.raises(IndexError, match=f"index {index} is out of range"):
        get_op("take")(data, np.array([0, index], dtype=np.int32), axis=axis)


@given(x=any_array, data=st.data())
def test_strided_slice(x: np.ndarray, data: st.DataObject) -> None:
    if data.draw(st.booleans(), label="explicit axes"):
        axes = data.draw(st.lists(st.integers(0, x.ndim - 1), unique=True) if x.ndim else st.just([]))
        axes = [data.draw(st.sampled_from([a, a - x.ndim])) for a in axes]
    else:
        axes = list(range(data.draw(st.integers(0, x.ndim))))
    count = len(axes)
    bounds = st.lists(st.integers(-6, 6), min_size=count, max_size=count)
    begin, end = data.draw(bounds, label="begin"), data.draw(bounds, label="end")
    steps = data.draw(st.none() | st.lists(st.integers(-3, 3).filter(bool), min_size=count, max_size=count))
    ranges = [range(n) for n in x.shape]
    for k, axis in enumerate(axes):
        ranges[axis] = range(x.shape[axis])[begin[k]:end[k]:(1 if steps is None else steps[k])]
    expected = x[np.ix_(*ranges)] if x.ndim else x
    attrs = {"begin": begin, "end": end, "strides": steps}
    result = get_op("strided_slice")(x, axes=None if axes == list(range(count)) else axes, **attrs)
    assert_close(result, expected, x.dtype)


@given(x=any_array, data=st.data(), value=st.integers(-5, 5))
def test_pad(x: np.ndarray, data: st.DataObject, value: int) -> None:
    widths = data.draw(st.lists(st.integers(0, 2), min_size=2 * x.ndim, max_size=2 * x.ndim), label="widths")
    before, after = widths[0::2], widths[1::2]
    expected = np.full([b + n + a for b, n, a in zip(before, x.shape, after)], value, dtype=x.dtype)
    expected[tuple(slice(b, b + n) for b, n in zip(before, x.shape))] = x
    assert_close(get_op("pad")(x, pad_width=widths, pad_value=float(value)), expected, x.dtype)


@pytest.mark.parametrize("value", [1000.0, math.inf, -math.inf, math.nan, 2.75])
def test_pad_value_outside_an_integer_dtype_converts_like_astype(value: float) -> None:
    # np.pad itself raises OverflowError here; relayish converts the value as cast does.
    x = np.array([[1, 2]], dtype=np.int8)
    with np.errstate(all="ignore"):
        border = np.array(value).astype(np.int8)
    result = get_op("pad")(x, pad_width=(0, 0, 1, 1), pad_value=value)
    np.testing.assert_array_equal(result, np.array([[border, 1, 2, border]], dtype=np.int8))


def test_pad_width_of_the_wrong_length_fails() -> None:
    with pytest.raises(ValueError, match="pad_width"):
        get_op("pad")(np.ones((2, 2)), pad_width=(1, 1))


@given(x=st.sampled_from(NUMBERS).flatmap(lambda dtype: arrays(dtype, shapes(min_dims=1, min_side=0))))
def test_flatten(x: np.ndarray) -> None:
    rest = 1
    for n in x.shape[1:]:
        rest *= n
    expected = np.array(x.ravel().tolist(), dtype=x.dtype).reshape(x.shape[0], rest)
    assert_close(get_op("flatten")(x), expected, x.dtype)


@pytest.mark.parametrize(("name", "value"), [("zeros_like", 0), ("ones_like", 1)])
@given(x=any_array)
def test_zeros_and_ones_like(name: str, value: int, x: np.ndarray) -> None:
    expected = np.empty(x.shape, dtype=x.dtype)
    expected[...] = value
    assert_close(get_op(name)(x), expected, x.dtype)


@given(shape=shapes(min_side=0), dtype=st.sampled_from(NUMBERS), value=st.integers(-5, 5), default=st.booleans())
def test_full(shape: tuple[int, ...], dtype: np.dtype, value: int, default: bool) -> None:
    expected = np.empty(shape, dtype=dtype)
    expected[...] = value
    attrs = {} if default and dtype == np.float32 else {"dtype": BaseType.from_numpy(dtype)}
    assert_close(get_op("full")(shape=shape, fill_value=value, **attrs), expected, dtype)


@given(data=st.data(), depth=st.integers(0, 4), dtype=st.sampled_from(NUMBERS))
def test_one_hot(data: st.DataObject, depth: int, dtype: np.dtype) -> None:
    """An index outside 0 .. depth-1 (negative ones included) gives a row of zeros."""
    indices = data.draw(arrays(I32, shapes(max_dims=3), -2, depth + 1), label="indices")
    expected = np.zeros(indices.shape + (depth,), dtype=dtype)
    for index in np.ndindex(*indices.shape):
        if 0 <= indices[index] < depth:
            expected[index + (indices[index],)] = 1
    assert_close(get_op("one_hot")(indices, depth=depth, dtype=BaseType.from_numpy(dtype)), expected, dtype)
    if dtype == np.float32:
        assert_close(get_op("one_hot")(indices, depth=depth), expected, dtype)
