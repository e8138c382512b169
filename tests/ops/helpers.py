"""Strategies and comparisons shared by the operator tests.

Tolerances: ``|actual - expected| <= atol + rtol * scale``, where ``expected`` is computed in
float64 from the same (exactly converted) inputs and ``scale`` is ``|expected|`` unless a
test passes the size of the terms that were accumulated (``sum |x|`` for a sum, ``|a| @ |b|``
for a product). Defaults: float32 rtol 1e-5, atol 1e-6; float64 rtol 1e-12, atol 1e-14.
Integer and boolean results must be exact.
"""

from __future__ import annotations

from typing import Any, Iterator

import numpy as np
from hypothesis import strategies as st
from hypothesis.extra import numpy as hnp

F32, F64, I32 = np.dtype(np.float32), np.dtype(np.float64), np.dtype(np.int32)
FLOATS = (F32, F64)
NUMBERS = (F32, F64, I32)
TOLERANCE = {F32: (1e-5, 1e-6), F64: (1e-12, 1e-14)}


def shapes(min_dims: int = 0, max_dims: int = 4, min_side: int = 1, max_side: int = 4) -> st.SearchStrategy:
    return hnp.array_shapes(min_dims=min_dims, max_dims=max_dims, min_side=min_side, max_side=max_side)


def elements(dtype: Any, lo: float = -10, hi: float = 10) -> st.SearchStrategy:
    """Finite values in [lo, hi] of ``dtype`` (booleans for bool)."""
    dtype = np.dtype(dtype)
    if dtype.kind == "f":
        width = dtype.itemsize * 8
        return st.floats(float(dtype.type(lo)), float(dtype.type(hi)), width=width)
    if dtype.kind == "b":
        return st.booleans()
    return st.integers(int(np.ceil(lo)), int(np.floor(hi)))


def arrays(dtype: Any, shape: Any, lo: float = -10, hi: float = 10) -> st.SearchStrategy:
    """Arrays of ``dtype`` and ``shape`` (a tuple or a strategy) with values in [lo, hi]."""
    return hnp.arrays(np.dtype(dtype), shape, elements=elements(dtype, lo, hi))


@st.composite
def broadcast_source(draw: Any, target: tuple[int, ...]) -> tuple[int, ...]:
    """A shape that NumPy broadcasts to exactly ``target``: leading axes dropped, some sizes 1."""
    dropped = draw(st.integers(0, len(target)))
    return tuple(draw(st.sampled_from((n, 1))) for n in target[dropped:])


def out_size(size: int, k: int, stride: int, pad: int, dilation: int = 1) -> int:
    """How many windows of size k (dilated, strided, padded on both sides) fit along an axis."""
    return (size + 2 * pad - dilation * (k - 1) - 1) // stride + 1


Index = tuple[int, ...]


def conv_taps(
    x_shape: Index, w_shape: Index, strides: Any, padding: Any, dilation: Any
) -> Iterator[tuple[Index, Index, Index]]:
    """(output, weight, input) indices of every kernel tap of a convolution that reads the image
    (taps on the zero padding are left out), by direct definition."""
    (n, c, h, wd), (o, _, kh, kw) = x_shape, w_shape
    oh, ow = (out_size(*axis) for axis in zip((h, wd), (kh, kw), strides, padding, dilation))
    for b, f, i, j in np.ndindex(n, o, oh, ow):
        for ch, p, q in np.ndindex(c, kh, kw):
            row = i * strides[0] - padding[0] + p * dilation[0]
            col = j * strides[1] - padding[1] + q * dilation[1]
            if 0 <= row < h and 0 <= col < wd:
                yield (b, f, i, j), (f, ch, p, q), (b, ch, row, col)


def pool_windows(shape: Index, pool: Any, strides: Any, padding: Any) -> Iterator[tuple[Index, list[Index]]]:
    """Every pooling window: its output index and its in-image input indices, in row-major order."""
    n, c, h, w = shape
    oh, ow = (out_size(s, k, st_, p) for s, k, st_, p in zip((h, w), pool, strides, padding))
    for b, ch, i, j in np.ndindex(n, c, oh, ow):
        yield (b, ch, i, j), [
            (b, ch, row, col)
            for row in range(i * strides[0] - padding[0], i * strides[0] - padding[0] + pool[0])
            for col in range(j * strides[1] - padding[1], j * strides[1] - padding[1] + pool[1])
            if 0 <= row < h and 0 <= col < w
        ]


def source_index(index: tuple[int, ...], shape: tuple[int, ...]) -> tuple[int, ...]:
    """Where element ``index`` of a broadcast result comes from in a tensor of ``shape``."""
    trailing = index[len(index) - len(shape):]
    return tuple(0 if n == 1 else i for i, n in zip(trailing, shape))


def assert_close(
    actual: Any,
    expected: Any,
    dtype: Any,
    *,
    scale: Any = None,
    rtol: float | None = None,
    atol: float | None = None,
) -> None:
    """``actual`` is an ndarray of ``dtype`` and of expected's shape, and its values are close."""
    dtype = np.dtype(dtype)
    expected = np.asarray(expected)
    assert isinstance(actual, np.ndarray), f"got {type(actual).__name__}, not an ndarray"
    assert actual.dtype == dtype, f"dtype {actual.dtype}, expected {dtype}"
    assert actual.shape == expected.shape, f"shape {actual.shape}, expected {expected.shape}"
    if dtype.kind != "f":
        assert np.array_equal(actual, expected), f"{actual} != {expected}"
        return
    default_rtol, default_atol = TOLERANCE[dtype]
    rtol = default_rtol if rtol is None else rtol
    atol = default_atol if atol is None else atol
    expected = expected.astype(np.float64)
    got = actual.astype(np.float64)
    bound = atol + rtol * (np.abs(expected) if scale is None else np.asarray(scale))
    with np.errstate(invalid="ignore"):  # inf - inf
        exact = (got == expected) | (np.isnan(got) & np.isnan(expected))
        ok = exact | (np.abs(got - expected) <= bound)
    assert ok.all(), f"mismatch at {np.argwhere(~ok)[:5].tolist()}:\nactual\n{actual}\nexpected\n{expected}"
