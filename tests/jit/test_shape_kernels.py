"""Shape-operator kernels against the NumPy reference on drawn shapes, values and layouts.

Every case fixes the (dtypes, ranks, attributes) a kernel is compiled for; hypothesis draws the
sizes (0-d, size-0 and size-1 dimensions included), values and layouts (C-contiguous, or a strided
or reversed view). All these operators are exact (sum_to's float sums are bitwise the reference's
for C-contiguous input, else within ``rtol * sum(|x|)`` with rtol 1e-5 for float32 and 1e-12 for
float64); where the reference raises, the kernel raises the same exception class. The operators
NumPy answers with views give views.
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np
import pytest
from hypothesis import HealthCheck, assume, given, settings
from hypothesis import strategies as st

from jit.kernels.registry import ArgType, kernel
from tests.jit.kernel_support import run
from relayish.ops import get_op

SETTINGS = settings(max_examples=20, deadline=None, suppress_health_check=[HealthCheck.too_slow])




def check(name: str, arrays: list[np.ndarray], **attrs: Any) -> np.ndarray | None:
    """The kernel equals the reference exactly (dtype, shape, values), or raises the reference's
    exception class; returns the kernel's result (None when it raised)."""
    try:
        expected = get_op(name)(*arrays, **attrs)
    except Exception as error:  # noqa: BLE001 - the kernel must raise the same class
        with pytest.raises(type(error)):
            run(name, arrays, **attrs)
        return None
    got = run(name, arrays, **attrs)
    np.testing.assert_array_equal(got, expected, strict=True)
    return got


def values(rng: np.random.Generator, shape: tuple[int, ...], dtype: str) -> np.ndarray:
    """Random values of dtype (arrays, 0-d included): floats over several magnitudes with a NaN,
    inf or -0.0, integers over the dtype's whole range."""
    if dtype == "bool":
        return np.asarray(rng.random(shape) < 0.5)
    if np.dtype(dtype).kind == "f":
        x = np.asarray(rng.standard_normal(shape) * 10.0 ** rng.integers(-3, 4, shape))
        if x.size:
            x.flat[rng.integers(0, x.size)] = rng.choice([np.nan, np.inf, -0.0])
        return x.astype(dtype)
    info = np.iinfo(dtype)
    return np.asarray(rng.integers(info.min, info.max, shape, dtype=dtype, endpoint=True))


@st.composite
def layouts(draw: st.DrawFn, x: np.ndarray) -> np.ndarray:
    """x itself, or an equal strided (step 2) or reversed (step -1) view."""
    layout = draw(st.sampled_from(["C", "strided", "reversed"])) if x.ndim else "C"
    if layout == "C":
        return x
    axis = draw(st.integers(0, x.ndim - 1))
    if layout == "reversed":
        return np.flip(np.flip(x, axis).copy(), axis)
    wide = np.repeat(x, 2, axis=axis)
    return wide[(slice(None),) * axis + (slice(None, None, 2),)]


@st.composite
def tensors(draw: st.DrawFn, dtype: str, shape: tuple[int, ...] | None = None, rank: int = 0) -> np.ndarray:
    """A tensor of dtype with the given shape (or drawn sizes of rank), in a drawn layout."""
    if shape is None:
        shape = tuple(draw(st.lists(st.integers(0, 5), min_size=rank, max_size=rank)))
        assume(math.prod(shape) <= 400)
    x = values(np.random.default_rng(draw(st.integers(0, 2**32 - 1))), shape, dtype)
    return draw(layouts(x))


def dims(low: int = 0, high: int = 5) -> st.SearchStrategy[int]:
    return st.integers(low, high)


@pytest.mark.parametrize(
    "dtype, rank, newshape",
    [("float32", 3, (0, -1)), ("int8", 2, (-1,)), ("bool", 0, (1, 1)), ("float64", 1, (2, -1, 1)),
     ("uint16", 2, (3, 0))],
)
@SETTINGS
@given(data=st.data())
def test_reshape(dtype: str, rank: int, newshape: tuple[int, ...], data: st.DataObject) -> None:
    x = data.draw(tensors(dtype, rank=rank))
    got = check("reshape", [x], newshape=newshape)
    if got is not None and x.flags.c_contiguous and x.size:
        assert np.shares_memory(got, x)  # a view, as NumPy's


@pytest.mark.parametrize("dtype, rank, axes", [("float32", 3, None), ("int64", 4, (2, 0, -1, 1)), ("bool", 1, None)])
@SETTINGS
@given(data=st.data())
def test_transpose(dtype: str, rank: int, axes: tuple[int, ...] | None, data: st.DataObject) -> None:
    x = data.draw(tensors(dtype, rank=rank))
    got = check("transpose", [x], axes=axes)
    assert x.size == 0 or np.shares_memory(got, x)


@pytest.mark.parametrize(
    "dtype, rank, axis, num_newaxis", [("float32", 2, -1, 2), ("uint8", 0, 0, 1), ("int32", 3, 1, 0)]
)
@SETTINGS
@given(data=st.data())
def test_expand_dims(dtype: str, rank: int, axis: int, num_newaxis: int, data: st.DataObject) -> None:
    x = data.draw(tensors(dtype, rank=rank))
    got = check("expand_dims", [x], axis=axis, num_newaxis=num_newaxis)
    assert x.size == 0 or np.shares_memory(got, x)


@pytest.mark.parametrize("dtype, rank, axis", [("float32", 3, (0, 2)), ("int32", 2, 1), ("bool", 2, (0, 1))])
@SETTINGS
@given(data=st.data())
def test_squeeze(dtype: str, rank: int, axis: Any, data: st.DataObject) -> None:
    shape = tuple(data.draw(st.lists(st.sampled_from([1, 1, 1, 0, 2, 3]), min_size=rank, max_size=rank)))
    x = data.draw(tensors(dtype, shape))
    got = check("squeeze", [x], axis=axis)
    assert got is None or x.size == 0 or np.shares_memory(got, x)


def test_squeeze_without_axes_has_no_kernel() -> None:
    with pytest.raises(NotImplementedError):
        kernel("squeeze", {"axis": None}, [ArgType("float32", 2)])


@st.composite
def broadcastable(draw: st.DrawFn, target: tuple[int, ...], rank: int) -> tuple[int, ...]:
    """A shape of rank that broadcasts to target (its trailing dims equal or 1), now and then not."""
    shape = tuple(draw(st.sampled_from([d, 1, 1])) for d in target[len(target) - rank:])
    if rank and draw(st.integers(0, 9)) == 0:
        axis = draw(st.integers(0, rank - 1))
        shape = shape[:axis] + (draw(dims()),) + shape[axis + 1:]
    return shape


@pytest.mark.parametrize("dtype, rank, shape", [("float32", 2, (3, 4, 5)), ("int16", 0, (2, 0)), ("bool", 1, (6,))])
@SETTINGS
@given(data=st.data())
def test_broadcast_to(dtype: str, rank: int, shape: tuple[int, ...], data: st.DataObject) -> None:
    x = data.draw(tensors(dtype, data.draw(broadcastable(shape, rank))))
    got = check("broadcast_to", [x], shape=shape)
    assert got is None or got.size == 0 or np.shares_memory(got, x)


@SETTINGS
@given(data=st.data())
def test_broadcast_to_like(data: st.DataObject) -> None:
    target = tuple(data.draw(st.lists(dims(), min_size=3, max_size=3)))
    x = data.draw(tensors("float64", data.draw(broadcastable(target, 2))))
    like = np.zeros(target, np.int8)
    got = check("broadcast_to_like", [x, like])
    assert got is None or got.size == 0 or np.shares_memory(got, x)


@pytest.mark.parametrize(
    "dtype, rank, like_rank", [("float32", 3, 2), ("float64", 2, 2), ("int32", 3, 0), ("bool", 2, 1), ("uint8", 4, 4)]
)
@SETTINGS
@given(data=st.data())
def test_sum_to(dtype: str, rank: int, like_rank: int, data: st.DataObject) -> None:
    shape = tuple(data.draw(st.lists(st.one_of(dims(), st.sampled_from([9, 130])), min_size=rank, max_size=rank)))
    assume(math.prod(shape) <= 5000)
    x = data.draw(tensors(dtype, shape))
    like = np.zeros(data.draw(broadcastable(shape, like_rank)), np.int8)
    try:
        expected = get_op("sum_to")(x, like)
    except ValueError:
        with pytest.raises(ValueError):
            run("sum_to", [x, like])
        return
    got = run("sum_to", [x, like])
    assert got.dtype == expected.dtype and got.shape == expected.shape
    if x.flags.c_contiguous or x.dtype.kind != "f":
        np.testing.assert_array_equal(got, expected, strict=True)
    else:
        rtol = {"float32": 1e-5, "float64": 1e-12}[dtype]
        bound = rtol * get_op("sum_to")(np.abs(x.astype(np.float64)), like)
        same = (got == expected) | (np.isnan(got) & np.isnan(expected))
        with np.errstate(invalid="ignore"):  # inf - inf where both are inf
            assert np.all(same | (np.abs(got.astype(np.float64) - expected) <= bound))


@st.composite
def joinable(draw: st.DrawFn, dtype: str, count: int, rank: int, axis: int | None) -> list[np.ndarray]:
    """count tensors whose dims agree except along axis (all dims for axis None), now and then not."""
    shape = tuple(draw(st.lists(dims(), min_size=rank, max_size=rank)))
    shapes = []
    for _ in range(count):
        own = shape
        if axis is not None:
            own = shape[:axis] + (draw(dims()),) + shape[axis + 1:]
        if rank and draw(st.integers(0, 14)) == 0:
            own = own[:-1] + (own[-1] + 1,)
        shapes.append(own)
    return [draw(tensors(dtype, s)) for s in shapes]


@pytest.mark.parametrize("dtype, rank, count, axis", [("float32", 2, 3, 1), ("int8", 1, 1, 0), ("bool", 3, 2, -3)])
@SETTINGS
@given(data=st.data())
def test_concatenate(dtype: str, rank: int, count: int, axis: int, data: st.DataObject) -> None:
    check("concatenate", data.draw(joinable(dtype, count, rank, axis % rank)), axis=axis)


@pytest.mark.parametrize("dtype, rank, count, axis", [("float64", 2, 2, -1), ("bool", 0, 3, 0), ("uint32", 1, 1, 0)])
@SETTINGS
@given(data=st.data())
def test_stack(dtype: str, rank: int, count: int, axis: int, data: st.DataObject) -> None:
    check("stack", data.draw(joinable(dtype, count, rank, None)), axis=axis)


def test_join_errors_of_attributes() -> None:
    x = np.zeros((2, 3), np.float32)
    check("concatenate", [np.array(1.0)], axis=0)
    check("concatenate", [x, x], axis=2)
    check("stack", [x, x], axis=-4)


@pytest.mark.parametrize(
    "dtype, rank, index_dtype, index_rank, axis",
    [("float32", 3, "int32", 2, 1), ("int64", 2, "uint8", 1, None), ("float64", 1, "int64", 0, 0),
     ("bool", 2, "uint64", 1, -1)],
)
@SETTINGS
@given(data=st.data())
def test_take(dtype: str, rank: int, index_dtype: str, index_rank: int, axis: int | None, data: st.DataObject) -> None:
    x = data.draw(tensors(dtype, rank=rank))
    size = x.size if axis is None else x.shape[axis]
    low = -2 if np.dtype(index_dtype).kind == "i" else 0
    index_shape = tuple(data.draw(st.lists(dims(), min_size=index_rank, max_size=index_rank)))
    rng = np.random.default_rng(data.draw(st.integers(0, 2**32 - 1)))
    indices = rng.integers(0, max(size, 1), index_shape).astype(index_dtype)
    if indices.size and data.draw(st.integers(0, 4)) == 0:  # an index out of range
        bad = data.draw(st.sampled_from([low, size, size + 3, int(np.iinfo(index_dtype).max)]))
        indices.flat[0] = np.asarray(bad).astype(index_dtype)  # wraps into the dtype (size + 3 in uint8)
    check("take", [x, data.draw(layouts(indices))], axis=axis)


SLICES = [
    ("float32", 3, dict(begin=(1, -100), end=(100, 2), strides=(1, -1), axes=(2, 1))),
    ("int16", 2, dict(begin=(0,), end=(-1,))),
    ("float64", 1, dict(begin=(5,), end=(-10,), strides=(-3,))),
    ("bool", 2, dict(begin=(-2**70, 1), end=(2**70, 2**40), strides=(2, 2**63))),
]


@pytest.mark.parametrize("dtype, rank, attrs", SLICES)
@SETTINGS
@given(data=st.data())
def test_strided_slice(dtype: str, rank: int, attrs: dict, data: st.DataObject) -> None:
    x = data.draw(tensors(dtype, rank=rank))
    got = check("strided_slice", [x], **attrs)
    assert got.size == 0 or np.shares_memory(got, x)


def test_strided_slice_errors_of_attributes() -> None:
    x = np.zeros((2, 3), np.float32)
    check("strided_slice", [x], begin=(0,), end=(1,), strides=(0,))
    check("strided_slice", [x], begin=(0, 0), end=(1, 1), axes=(1, -1))
    check("strided_slice", [x], begin=(0,), end=(1, 2))


@pytest.mark.parametrize(
    "dtype, rank, pad_width, pad_value",
    [("float32", 3, (1, 0, 0, 2, 1, 1), float("nan")), ("uint8", 2, (2, 1, 0, 3), -1.5), ("bool", 1, (1, 1), 2.0),
     ("int32", 0, (), 5.0), ("int8", 1, (0, 2), float("inf"))],
)
@SETTINGS
@given(data=st.data())
def test_pad(dtype: str, rank: int, pad_width: tuple[int, ...], pad_value: float, data: st.DataObject) -> None:
    check("pad", [data.draw(tensors(dtype, rank=rank))], pad_width=pad_width, pad_value=pad_value)


def test_pad_errors_of_attributes() -> None:
    x = np.zeros((2, 3), np.float32)
    check("pad", [x], pad_width=(1, 1))
    check("pad", [x], pad_width=(1, 1, -1, 0))


@pytest.mark.parametrize("dtype, rank", [("float32", 3), ("int8", 1), ("bool", 0)])
@SETTINGS
@given(data=st.data())
def test_flatten(dtype: str, rank: int, data: st.DataObject) -> None:
    x = data.draw(tensors(dtype, rank=rank))
    got = check("flatten", [x])
    if got is not None and x.flags.c_contiguous and x.size:
        assert np.shares_memory(got, x)


@pytest.mark.parametrize(
    "shape, fill_value, dtype",
    [((2, 3), 1.5, "float32"), ((), float("inf"), "int32"), ((4, 0, 2), -1.0, "uint8"), ((3,), float("nan"), "float64"),
     ((2,), 0.5, "bool"), ((2, -1), 0.0, "float32")],
)
def test_full(shape: tuple[int, ...], fill_value: float, dtype: str) -> None:
    check("full", [], shape=shape, fill_value=fill_value, dtype=dtype)
    if all(d >= 0 for d in shape):
        a, b = run("full", [], shape=shape, fill_value=fill_value, dtype=dtype), run(
            "full", [], shape=shape, fill_value=fill_value, dtype=dtype)
        assert a.size == 0 or not np.shares_memory(a, b)  # a new array each call


@pytest.mark.parametrize(
    "index_dtype, rank, depth, dtype", [("int32", 2, 4, "float32"), ("uint8", 1, 0, "bool"), ("int64", 0, 3, "int8"),
                                        ("uint64", 1, 5, "float64")],
)
@SETTINGS
@given(data=st.data())
def test_one_hot(index_dtype: str, rank: int, depth: int, dtype: str, data: st.DataObject) -> None:
    x = data.draw(tensors(index_dtype, rank=rank))
    if data.draw(st.booleans()):  # mostly in range, with the dtype's extremes now and then
        x = np.where(np.abs(x.astype(np.float64)) < 2**31, x % (depth + 2), x).astype(index_dtype)
    check("one_hot", [x], depth=depth, dtype=dtype)


def test_one_hot_negative_depth() -> None:
    check("one_hot", [np.zeros(3, np.int32)], depth=-1)


@pytest.mark.parametrize("dtype, rank, like_rank", [("float32", 3, 2), ("bool", 0, 2)])
@SETTINGS
@given(data=st.data())
def test_reshape_like(dtype: str, rank: int, like_rank: int, data: st.DataObject) -> None:
    x = data.draw(tensors(dtype, rank=rank))
    if data.draw(st.booleans()) and like_rank == 2 and x.size:
        like_shape = (x.size // x.shape[0] if rank else 1, x.shape[0] if rank else 1)
    else:
        like_shape = tuple(data.draw(st.lists(dims(), min_size=like_rank, max_size=like_rank)))
    got = check("reshape_like", [x, np.zeros(like_shape, np.uint8)])
    if got is not None and x.flags.c_contiguous and x.size:
        assert np.shares_memory(got, x)
