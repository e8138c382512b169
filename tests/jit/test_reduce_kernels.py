"""Reduction and softmax-family kernels against the NumPy reference on drawn shapes and values.

Each case fixes the (dtype, rank, attributes) a kernel is compiled for; hypothesis draws the
sizes (0-d, size-0 and size-1 dimensions included), the values (NaN, inf and -0.0 among them)
and the layout (C-contiguous, or a strided or reversed view). Tolerances, as the kernels'
docstrings state them:

- max, min, argmax, integer sums: exact.
- float sum and mean of C-contiguous input: bitwise NumPy's (same pairwise order); of other
  layouts: ``|kernel - reference| <= rtol * sum(|x|)`` (mean: divided by the count), rtol 1e-5
  for float32 and 1e-12 for float64.
- softmax family: exp and log of buffers below 2048 elements come from libm instead of NumPy:
  softmax within rtol of the reference, log_softmax within ``rtol * (1 + |reference|)``, the cross
  entropy within rtol times the mean magnitude of its terms; rtol as above. A C-contiguous softmax
  of 2048 elements or more is bitwise the reference's.
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

RTOL = {"float32": 1e-5, "float64": 1e-12}
# The reference's np.mean warns about an empty mean (nan, which is what the kernels must give).
pytestmark = pytest.mark.filterwarnings(
    "ignore:Mean of empty slice", "ignore:invalid value encountered in scalar divide"
)
SETTINGS = settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.too_slow])




def outcome(name: str, arrays: list[np.ndarray], **attrs: Any) -> tuple[Any, Any]:
    """(kernel result, reference result); when the reference raises, the kernel must raise the
    same exception class, and both are None."""
    try:
        expected = get_op(name)(*arrays, **attrs)
    except Exception as error:  # noqa: BLE001 - the kernel must raise the same class
        with pytest.raises(type(error)):
            run(name, arrays, **attrs)
        return None, None
    got = run(name, arrays, **attrs)
    assert got.dtype == expected.dtype and got.shape == expected.shape
    return got, expected


@st.composite
def shapes(draw: st.DrawFn, rank: int, limit: int = 3000) -> tuple[int, ...]:
    """Sizes with 0 and 1 frequent and a few beyond the pairwise sum's block of 128."""
    dims = st.one_of(st.integers(0, 4), st.sampled_from([7, 8, 9, 17, 130, 300]))
    shape = tuple(draw(st.lists(dims, min_size=rank, max_size=rank)))
    assume(math.prod(shape) <= limit)
    return shape


def values(rng: np.random.Generator, shape: tuple[int, ...], dtype: str, special: bool) -> np.ndarray:
    """Random values of dtype: floats over several magnitudes (with NaN, inf, -inf and -0.0
    sprinkled in when ``special``), integers over the dtype's whole range."""
    if np.dtype(dtype).kind == "f":
        x = np.asarray(rng.standard_normal(shape) * 10.0 ** rng.integers(-3, 4, shape))
        if special and x.size:
            picks = rng.integers(0, x.size, 3)
            x.flat[picks] = rng.choice([np.nan, np.inf, -np.inf, -0.0], 3)
        return x.astype(dtype)
    info = np.iinfo(dtype)
    return np.asarray(rng.integers(info.min, info.max, shape, dtype=dtype, endpoint=True))


@st.composite
def tensors(draw: st.DrawFn, dtype: str, rank: int, special: bool = False, limit: int = 3000) -> np.ndarray:
    """A tensor of dtype and rank: C-contiguous, or a view with a step of 2 or -1 on an axis."""
    shape = draw(shapes(rank, limit))
    rng = np.random.default_rng(draw(st.integers(0, 2**32 - 1)))
    layout = draw(st.sampled_from(["C", "strided", "reversed"])) if rank else "C"
    if layout == "C":
        return values(rng, shape, dtype, special)
    axis = draw(st.integers(0, rank - 1))
    if layout == "reversed":
        return np.flip(values(rng, shape, dtype, special), axis)
    wide = shape[:axis] + (2 * shape[axis],) + shape[axis + 1:]
    return values(rng, wide, dtype, special)[(slice(None),) * axis + (slice(None, None, 2),)]


def assert_sum_close(got: np.ndarray, expected: np.ndarray, x: np.ndarray, axis: Any, scale: float = 1.0) -> None:
    """Bitwise for C-contiguous x (NumPy's order), else within rtol * sum(|x|) * scale."""
    if x.flags.c_contiguous or x.dtype.kind != "f":
        np.testing.assert_array_equal(got, expected, strict=True)
        return
    bound = RTOL[x.dtype.name] * scale * np.sum(np.abs(x.astype(np.float64)), axis=axis)
    bound = np.reshape(bound, got.shape)
    with np.errstate(invalid="ignore"):  # inf - inf where both are inf
        err = np.abs(got.astype(np.float64) - expected.astype(np.float64))
    same = (got == expected) | (np.isnan(got) & np.isnan(expected))
    assert np.all(same | (err <= bound)), (got, expected)


FOLDS = [
    ("sum", "float32", 3, (0, 2), False),
    ("sum", "float32", 2, None, True),
    ("sum", "float64", 1, 0, False),
    ("sum", "int8", 2, -1, False),
    ("sum", "uint8", 3, None, False),
    ("sum", "uint64", 2, 0, True),
    ("sum", "int64", 0, None, False),
    ("mean", "float32", 3, (0, 2), True),
    ("mean", "float64", 2, -1, False),
    ("max", "float32", 3, (0, 2), False),
    ("max", "int16", 2, None, True),
    ("min", "float64", 2, 1, True),
    ("min", "uint8", 1, 0, False),
]


@pytest.mark.parametrize("name, dtype, rank, axis, keepdims", FOLDS)
@SETTINGS
@given(data=st.data())
def test_folds_match_reference(
    name: str, dtype: str, rank: int, axis: Any, keepdims: bool, data: st.DataObject
) -> None:
    x = data.draw(tensors(dtype, rank, special=name in ("max", "min") or data.draw(st.booleans())))
    got, expected = outcome(name, [x], axis=axis, keepdims=keepdims)
    if got is None:
        return
    if name in ("max", "min"):
        np.testing.assert_array_equal(got, expected, strict=True)
    else:
        count = math.prod(x.shape) // max(1, expected.size) if name == "mean" else 1
        assert_sum_close(got, expected, x, axis, 1.0 / max(1, count))


@pytest.mark.parametrize(
    "dtype, rank, axis, keepdims",
    [("float32", 3, 1, False), ("float64", 2, None, True), ("int32", 3, -1, True), ("uint8", 1, 0, False)],
)
@SETTINGS
@given(data=st.data())
def test_argmax_matches_reference(dtype: str, rank: int, axis: Any, keepdims: bool, data: st.DataObject) -> None:
    x = data.draw(tensors(dtype, rank, special=True))
    if x.dtype.kind == "f" and x.size and data.draw(st.booleans()):
        x = np.round(x, 0)  # ties: the first maximum wins
    got, expected = outcome("argmax", [x], axis=axis, keepdims=keepdims)
    if got is not None:
        np.testing.assert_array_equal(got, expected, strict=True)


def test_pairwise_sum_is_numpys_on_large_contiguous_input() -> None:
    # Kernels of FOLDS: the recursion of the pairwise sum over 1e6 elements, whole and by rows.
    rng = np.random.default_rng(0)
    x = rng.standard_normal(1_000_003) * 1e3
    y = x[:1_000_000].astype(np.float32).reshape(1000, 1000)
    np.testing.assert_array_equal(run("sum", [x], axis=0), get_op("sum")(x, axis=0), strict=True)
    np.testing.assert_array_equal(run("sum", [y], keepdims=True), get_op("sum")(y, keepdims=True), strict=True)
    z = y.astype(np.float64)
    np.testing.assert_array_equal(run("mean", [z], axis=-1), get_op("mean")(z, axis=-1), strict=True)


def test_0d_tensors_and_empty_reductions() -> None:
    z = np.array(-2.5, np.float32)
    outcome("sum", [z], axis=0)  # NumPy's reductions take axis 0 or -1 of a 0-d tensor
    outcome("sum", [z], axis=(0,))  # but not in a tuple
    outcome("max", [z], axis=1)
    outcome("mean", [z], axis=0)  # np.mean rejects it
    outcome("argmax", [z], axis=0, keepdims=True)
    # With the kernels of FOLDS and test_argmax: max of nothing raises, sums of nothing are 0, mean nan.
    outcome("max", [np.zeros((0, 3, 2), np.float32)], axis=(0, 2))
    outcome("max", [np.zeros((2, 0, 3), np.float32)], axis=(0, 2))
    outcome("min", [np.zeros(0, np.uint8)], axis=0)
    outcome("mean", [np.zeros((3, 0))], axis=-1)
    outcome("sum", [np.zeros((0, 3), np.float32)], keepdims=True)
    outcome("argmax", [np.zeros((3, 0))], keepdims=True)
    outcome("argmax", [np.zeros((2, 0, 3), np.float32)], axis=1)
    outcome("argmax", [np.zeros((0, 3, 2), np.float32)], axis=1)
    outcome("sum", [np.zeros((2, 2), np.float32)], axis=(1, -1))  # a repeated axis


def test_float16_has_no_kernel() -> None:
    with pytest.raises(NotImplementedError):
        kernel("sum", {"axis": None, "keepdims": False}, [ArgType("float16", 1)])


def softmax_bound(name: str, expected: np.ndarray, arrays: list[np.ndarray], axis: int) -> np.ndarray | float:
    """The allowed |kernel - reference| (see the module docstring)."""
    rtol = RTOL[arrays[0].dtype.name]
    if name == "softmax":
        return rtol * np.abs(expected.astype(np.float64)) + 1e-30
    if name == "log_softmax":
        return rtol * (1 + np.abs(expected.astype(np.float64)))
    z, y = (a.astype(np.float64) for a in arrays)
    peak = np.max(z, axis=axis, keepdims=True)
    terms = np.log(z.shape[axis] + 1.0) + np.sum(np.abs(y * (z - peak)), axis=axis) + np.abs(
        np.squeeze(peak, axis)) * (1 + np.sum(np.abs(y), axis=axis))
    return rtol * (1 + float(np.mean(terms)))


SOFTMAX = [
    ("softmax", "float32", 2, -1),
    ("softmax", "float64", 3, 1),
    ("log_softmax", "float32", 3, 0),
    ("log_softmax", "float64", 2, -1),
    ("softmax_cross_entropy", "float32", 2, -1),
    ("softmax_cross_entropy", "float64", 3, 1),
]


@pytest.mark.parametrize("name, dtype, rank, axis", SOFTMAX)
@SETTINGS
@given(data=st.data())
def test_softmax_family_matches_reference(name: str, dtype: str, rank: int, axis: int, data: st.DataObject) -> None:
    special = data.draw(st.booleans())
    x = data.draw(tensors(dtype, rank, special=special))
    arrays = [x]
    if name == "softmax_cross_entropy":
        rng = np.random.default_rng(data.draw(st.integers(0, 2**32 - 1)))
        labels = rng.random(x.shape).astype(dtype)
        if data.draw(st.booleans()) and x.ndim:
            labels = labels / np.maximum(labels.sum(axis=axis, keepdims=True), 1e-3)
        shape_mismatch = data.draw(st.integers(0, 9)) == 0 and x.ndim
        arrays.append(labels[..., :-1] if shape_mismatch else labels)
        if not special:  # keep logits where exp neither overflows the sums nor loses them
            arrays[0] = np.clip(x, -50, 50)
    got, expected = outcome(name, arrays, axis=axis)
    if got is None:
        return
    if name == "softmax" and x.size >= 2048 and x.flags.c_contiguous:
        np.testing.assert_array_equal(got, expected, strict=True)  # NumPy's own exp
        return
    with np.errstate(invalid="ignore"):  # inf - inf where both are inf
        err = np.abs(got.astype(np.float64) - expected.astype(np.float64))
        bound = softmax_bound(name, expected, arrays, axis)
    same = (got == expected) | (np.isnan(got) & np.isnan(expected))
    assert np.all(same | (err <= bound)), (got, expected)


def test_large_softmax_is_bitwise_numpys() -> None:
    x = np.random.default_rng(1).standard_normal((64, 100)).astype(np.float32) * 5
    np.testing.assert_array_equal(run("softmax", [x]), get_op("softmax")(x), strict=True)


def test_softmax_family_edge_cases() -> None:
    z = np.array(3.0, np.float32)
    for axis in (0, -1, 1):  # a 0-d tensor takes axis 0 or -1, as NumPy's max does
        outcome("softmax", [z], axis=axis)
    outcome("softmax_cross_entropy", [z, z])
    for name, dtype in (("softmax", "float32"), ("log_softmax", "float64"), ("softmax_cross_entropy", "float32")):
        for shape in ((2, 0), (0, 3)):  # the reference's max of an empty axis raises; a mean of nothing is nan
            x = np.zeros(shape, dtype)
            outcome(name, [x, x] if name == "softmax_cross_entropy" else [x])
