"""CUDA elementwise kernels (jit/cuda/elementwise.py) against the NumPy reference, on small
hypothesis-drawn broadcasting shapes, dtypes and values (NaN, infinities, -0.0, extreme integers).

Tolerances: exact (NaN equal to NaN, signed zeros alike) for everything IEEE rounds exactly and for
integers and bools; exp, log, sigmoid, sin, cos, tanh and float pow (libdevice) rtol 1e-6 for float32
and 1e-12 for float64, atol 1e-44 / 1e-300 for subnormal results. Casts from floats to integers are
drawn in range; the values out of range (NaN, infinities, negative values to unsigned types), which C
leaves undefined and a GPU saturates, are a fixed table checked against NumPy's vectorized x86 loop
(its scalar loop, for short arrays, disagrees with it on some). Only a real GPU run shows that the
hardware's own conversion is not used there.
"""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from hypothesis.extra import numpy as hnp

from jit.kernels.registry import kernel_operators
from tests.cuda.support import reference, run_cuda

UNARY = {"neg", "sq", "exp", "log", "sqrt", "tanh", "sin", "cos", "abs", "sigmoid", "relu", "logical_not", "zeros_like",
         "ones_like"}
BINARY = {"add", "sub", "mul", "equal", "not_equal", "less", "less_equal", "greater", "greater_equal", "logical_and",
          "logical_or", "maximum", "minimum"}
FLOATS = ["float32", "float64"]
INTS = ["int8", "int16", "int32", "int64", "uint8", "uint16", "uint32", "uint64"]
FLOAT_ONLY = {"exp", "log", "sqrt", "tanh", "sin", "cos", "sigmoid"}
BOOL_ONLY = {"logical_not", "logical_and", "logical_or"}
TRANSCENDENTAL = {"exp", "log", "sigmoid", "sin", "cos", "tanh", "pow"}
EXAMPLES = settings(max_examples=60, deadline=None)


def dtypes_of(op: str) -> list[str]:
    if op in BOOL_ONLY:
        return ["bool"]
    if op in FLOAT_ONLY:
        return FLOATS
    return FLOATS + INTS + (["bool"] if op in {"equal", "not_equal", "zeros_like", "ones_like"} else [])


def values(dtype: np.dtype, lo: float | None = None, hi: float | None = None) -> st.SearchStrategy:
    if dtype.kind == "b":
        return st.booleans()
    if dtype.kind == "f":
        if lo is not None:
            return st.floats(lo, hi, width=dtype.itemsize * 8)
        return st.floats(width=dtype.itemsize * 8) | st.sampled_from([0.0, -0.0, 1.0, -1.0, np.inf, -np.inf, np.nan])
    info = np.iinfo(dtype)
    lo = info.min if lo is None else max(info.min, int(lo))
    hi = info.max if hi is None else min(info.max, int(hi))
    return st.integers(lo, hi) | st.sampled_from([v for v in (lo, hi, 0, 1) if lo <= v <= hi])


def arrays(draw, dtype: str, shapes: list[tuple[int, ...]], lo=None, hi=None) -> list[np.ndarray]:
    dt = np.dtype(dtype)
    return [draw(hnp.arrays(dt, shape, elements=values(dt, lo, hi))) for shape in shapes]


def check(name: str, got, ref, value_dtype: str) -> None:
    assert isinstance(got, np.ndarray) and got.dtype == ref.dtype and got.shape == ref.shape, (got, ref)
    if np.dtype(value_dtype).kind == "f" and name in TRANSCENDENTAL and ref.dtype.kind == "f":
        rtol, atol = (1e-6, 1e-44) if value_dtype == "float32" else (1e-12, 1e-300)
        np.testing.assert_allclose(got, ref, rtol=rtol, atol=atol, equal_nan=True)
    else:
        np.testing.assert_array_equal(got, ref)
    if ref.dtype.kind == "f":
        zeros = (got == 0) & (ref == 0)
        np.testing.assert_array_equal(np.signbit(got[zeros]), np.signbit(ref[zeros]))


def outcome(fn, *args, **kwargs):
    try:
        with np.errstate(all="ignore"):
            return fn(*args, **kwargs)
    except (ZeroDivisionError, ValueError) as err:
        return err


def compare(name: str, xs: list[np.ndarray], value_dtype: str, **attrs) -> None:
    ref = outcome(reference, name, xs, **attrs)
    got = outcome(run_cuda, name, xs, **attrs)
    if isinstance(ref, Exception):
        assert type(got) is type(ref), (name, got, ref)
        return
    assert not isinstance(got, Exception), got
    check(name, got, ref, value_dtype)


broadcast_shapes = hnp.mutually_broadcastable_shapes(num_shapes=2, min_dims=0, max_dims=3, min_side=0, max_side=3)


@EXAMPLES
@given(data=st.data())
def test_unary_operators(data) -> None:
    name = data.draw(st.sampled_from(sorted(UNARY)), label="op")
    dtype = data.draw(st.sampled_from(dtypes_of(name)), label="dtype")
    shape = data.draw(hnp.array_shapes(min_dims=0, max_dims=3, min_side=0, max_side=4), label="shape")
    compare(name, arrays(data.draw, dtype, [shape]), dtype)


@EXAMPLES
@given(data=st.data())
def test_binary_operators_broadcast(data) -> None:
    name = data.draw(st.sampled_from(sorted(BINARY) + ["div", "pow"]), label="op")
    dtype = data.draw(st.sampled_from(dtypes_of(name)), label="dtype")
    shapes = data.draw(broadcast_shapes, label="shapes").input_shapes
    lo, hi = (-3, 70) if name == "pow" and dtype not in FLOATS else (None, None)
    compare(name, arrays(data.draw, dtype, list(shapes), lo, hi), dtype)


@EXAMPLES
@given(data=st.data())
def test_where_broadcasts_three_arguments(data) -> None:
    dtype = data.draw(st.sampled_from(FLOATS + INTS), label="dtype")
    shapes = data.draw(hnp.mutually_broadcastable_shapes(num_shapes=3, max_dims=3, min_side=0, max_side=3)).input_shapes
    cond = arrays(data.draw, "bool", [shapes[0]])
    compare("where", cond + arrays(data.draw, dtype, list(shapes[1:])), dtype)


@EXAMPLES
@given(data=st.data())
def test_casts(data) -> None:
    source = data.draw(st.sampled_from(FLOATS + INTS + ["bool"]), label="from")
    target = data.draw(st.sampled_from(FLOATS + INTS + ["bool"]), label="to")
    shape = data.draw(hnp.array_shapes(min_dims=0, max_dims=2, max_side=4), label="shape")
    in_range = np.dtype(source).kind == "f" and np.dtype(target).kind in "iu"
    lo, hi = (float(max(np.iinfo(target).min, -1e6)), float(min(np.iinfo(target).max, 1e6))) if in_range else (None, None)
    xs = arrays(data.draw, source, [shape], lo, hi)
    compare("cast", xs, target, dtype=target)
    compare("cast_like", xs + [np.zeros((), target)], target)


def test_float_casts_out_of_range_give_numpys_x86_results() -> None:
    """The values difftest met on an H100 (-1.06 to uint8 gave 0, NumPy 255) and the other undefined cases, in
    an array long enough for NumPy's vectorized loop, whose results the kernels reproduce (NumPy's scalar loop,
    for short arrays, differs for some: -2**63 to uint32 is 0 there, 2**31 here)."""
    edges = [-1.0596818, -0.5, np.nan, np.inf, -np.inf, 1e10, -1e10, 3e9, -3.5, 2.0 ** 31, 2.0 ** 63, 1.8e19, -2.0 ** 63]
    for source in FLOATS:
        for target in INTS:
            compare("cast", [np.resize(np.array(edges, source), 64)], target, dtype=target)


def test_integer_division_by_zero_and_negative_powers_raise() -> None:
    with pytest.raises(ZeroDivisionError):
        run_cuda("div", [np.array([4, 5], np.int32), np.array([1, 0], np.int32)])
    with pytest.raises(ValueError, match="negative integer powers"):
        run_cuda("pow", [np.array([4, 5], np.int64), np.array([1, -1], np.int64)])


def test_rank_zero_arguments_are_scalars_and_rank_zero_results_come_back() -> None:
    got = run_cuda("add", [np.asarray(np.float32(1.5)), np.asarray(np.float32(2.0))])
    assert got.dtype == np.float32 and got.shape == () and got == 3.5


def test_every_elementwise_operator_has_a_cuda_kernel() -> None:
    elementwise = set(UNARY) | set(BINARY) | {"div", "pow", "where", "cast", "cast_like"}
    assert elementwise <= kernel_operators("cuda")
