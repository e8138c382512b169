"""CUDA kernels of the operators of relayish/ops/arithmetic.py (written from their element
expressions by jit/cuda/elementwise.py) against the NumPy reference: special values (NaN,
infinities, -0.0, domain edges, halves, values past 2**52 and near overflow), hypothesis-drawn
broadcasting shapes and values, integer zero divisors, rank-0 arguments, and whole programs
compiled for the CUDA target.

Tolerances: exact (NaN equal to NaN, signed zeros alike) for ceil, floor, trunc, round, sign,
floor_divide, floor_mod and every integer result; the transcendental functions (libdevice on a GPU,
Python's math in the simulator) rtol 1e-6 for float32 and 1e-12 for float64, atol 1e-44 / 1e-300 for
subnormal results, infinities where the reference has them.
"""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from hypothesis.extra import numpy as hnp

import relayish
from jit.kernels.registry import kernel_operators
from tests.cuda.support import reference, run_cuda

TRANSCENDENTAL = ["erf", "tan", "atan", "asin", "acos", "sinh", "cosh", "rsqrt", "log1p", "expm1"]
EXACT_UNARY = ["ceil", "floor", "trunc", "round", "sign"]
BINARY = ["floor_divide", "floor_mod"]
FLOATS = ["float32", "float64"]
INTS = ["int8", "int16", "int32", "int64", "uint8", "uint16", "uint32", "uint64"]
SPECIAL = [0.0, -0.0, 0.5, -0.5, 1.5, -1.5, 2.5, -2.5, 1.0, -1.0, 1.0000001, -1.0000001, np.inf, -np.inf, np.nan,
           1e-45, 1e-310, 0.49999997, 4503599627370497.0, 1e30, -1e30, 3e38, 88.7, 89.5, -89.5, 709.0, 710.0, -710.0,
           1e300, 1.5707963267948966, 3.141592653589793, 1e5, 709.782712893384, 709.78271484375, 710.4758600739439,
           710.475860073944, -710.4758600739439, 88.72284, 89.41599]
EXAMPLES = settings(max_examples=40, deadline=None)


def check(name: str, got: np.ndarray, ref: np.ndarray) -> None:
    assert isinstance(got, np.ndarray) and got.dtype == ref.dtype and got.shape == ref.shape, (got, ref)
    if name in TRANSCENDENTAL or name == "exp":
        rtol, atol = (1e-6, 1e-44) if ref.dtype == np.float32 else (1e-12, 1e-300)
        np.testing.assert_allclose(got, ref, rtol=rtol, atol=atol, equal_nan=True, err_msg=name)
        np.testing.assert_array_equal(np.isinf(got), np.isinf(ref), err_msg=name)
    else:
        np.testing.assert_array_equal(got, ref, err_msg=name)
    if ref.dtype.kind == "f":
        zeros = (got == 0) & (ref == 0)
        np.testing.assert_array_equal(np.signbit(got[zeros]), np.signbit(ref[zeros]), err_msg=name)


def test_every_new_operator_has_a_cuda_kernel() -> None:
    assert set(TRANSCENDENTAL + EXACT_UNARY + BINARY) <= kernel_operators("cuda")


@pytest.mark.parametrize("name", TRANSCENDENTAL + EXACT_UNARY)
@pytest.mark.parametrize("dtype", FLOATS)
def test_special_values(name: str, dtype: str) -> None:
    """Outside their domains the functions give nan or infinities as NumPy does (the simulator's
    math raises there; the kernels test the domain first), also as rank-0 arguments."""
    x = np.array(SPECIAL, dtype)
    with np.errstate(all="ignore"):
        check(name, run_cuda(name, [x]), reference(name, [x]))
        block = x[:len(x) // 4 * 4].reshape(4, -1)
        check(name, run_cuda(name, [block]), reference(name, [block]))
        for v in x[::3]:
            check(name, run_cuda(name, [np.array(v)]), reference(name, [np.array(v)]))


@pytest.mark.parametrize("name", ["exp", "expm1", "sinh", "cosh"])
def test_the_overflow_thresholds(name: str) -> None:
    """Each side of the largest float64 argument with a finite result (exp and expm1: ln of the largest double;
    sinh and cosh: ln 2 more), and float32(709.78...), which rounds up past it: the simulator's math raised
    OverflowError there, and sinh and cosh were inf from 709.78 on."""
    for dtype in FLOATS:
        x = np.array([709.782712893384, 709.7827128933841, 709.78271484375, 710.0, 710.4758600739439,
                      710.475860073944, -710.4758600739439, -710.475860073944, 88.72283, 88.72284, 89.41599, 89.416],
                     dtype)
        with np.errstate(all="ignore"):
            check(name, run_cuda(name, [x]), reference(name, [x]))


@pytest.mark.parametrize("dtype", INTS)
def test_sign_of_integers(dtype: str) -> None:
    info = np.iinfo(dtype)
    x = np.array(sorted({int(info.min), int(info.max), 0, 1, 7} | ({-1, -7} if info.min < 0 else set())), dtype)
    check("sign", run_cuda("sign", [x]), reference("sign", [x]))


def float_values(dtype: np.dtype) -> st.SearchStrategy:
    width = dtype.itemsize * 8
    return st.floats(width=width) | st.floats(-5, 5, width=width) | st.sampled_from(
        [float(dtype.type(v)) for v in SPECIAL])


@EXAMPLES
@given(data=st.data())
def test_unary_operators_on_drawn_arrays(data) -> None:
    name = data.draw(st.sampled_from(TRANSCENDENTAL + EXACT_UNARY), label="op")
    dtype = np.dtype(data.draw(st.sampled_from(FLOATS + (INTS if name == "sign" else [])), label="dtype"))
    shape = data.draw(hnp.array_shapes(min_dims=0, max_dims=3, min_side=0, max_side=4), label="shape")
    elements = float_values(dtype) if dtype.kind == "f" else \
        st.integers(int(np.iinfo(dtype).min), int(np.iinfo(dtype).max))
    x = data.draw(hnp.arrays(dtype, shape, elements=elements), label="x")
    with np.errstate(all="ignore"):
        check(name, run_cuda(name, [x]), reference(name, [x]))


@pytest.mark.parametrize("name", BINARY)
@pytest.mark.parametrize("dtype", FLOATS)
def test_floor_division_and_modulo_of_special_floats(name: str, dtype: str) -> None:
    v = np.array([-7.5, 7.5, -0.0, 0.0, 3.0, -3.0, np.inf, -np.inf, np.nan, 1e30, 1e-45, 6.0, 3e38, 0.1], dtype)
    a, b = np.meshgrid(v, v)
    with np.errstate(all="ignore"):
        check(name, run_cuda(name, [a, b]), reference(name, [a, b]))
        check(name, run_cuda(name, [v[:, None], v[None, :]]), reference(name, [v[:, None], v[None, :]]))
        for p, q in zip(a.ravel()[::11], b.ravel()[::11]):  # rank-0 arguments are scalars
            check(name, run_cuda(name, [np.array(p), np.array(q)]), reference(name, [np.array(p), np.array(q)]))


broadcast_shapes = hnp.mutually_broadcastable_shapes(num_shapes=2, min_dims=0, max_dims=3, min_side=0, max_side=3)


@EXAMPLES
@given(data=st.data())
def test_floor_division_and_modulo_broadcast(data) -> None:
    name = data.draw(st.sampled_from(BINARY), label="op")
    dtype = np.dtype(data.draw(st.sampled_from(FLOATS + INTS), label="dtype"))
    shapes = data.draw(broadcast_shapes, label="shapes").input_shapes
    if dtype.kind == "f":
        a, b = (data.draw(hnp.arrays(dtype, s, elements=float_values(dtype))) for s in shapes)
    else:
        info = np.iinfo(dtype)
        ints = st.integers(int(info.min), int(info.max)) | st.sampled_from([int(info.min), int(info.max), 1, 7])
        a = data.draw(hnp.arrays(dtype, shapes[0], elements=ints))
        b = data.draw(hnp.arrays(dtype, shapes[1], elements=ints.filter(bool)))
    with np.errstate(all="ignore"):
        check(name, run_cuda(name, [a, b]), reference(name, [a, b]))


@pytest.mark.parametrize("name", BINARY)
@pytest.mark.parametrize("dtype", ["int8", "int32", "uint8", "uint64"])
def test_integer_zero_divisors_raise(name: str, dtype: str) -> None:
    with pytest.raises(ZeroDivisionError):
        run_cuda(name, [np.array([4, 5], dtype), np.array([1, 0], dtype)])
    with pytest.raises(ZeroDivisionError):
        run_cuda(name, [np.array(4, dtype), np.array(0, dtype)])


@pytest.mark.parametrize("name", BINARY)
def test_the_smallest_integer_divided_by_minus_one_wraps(name: str) -> None:
    a, b = np.array([-128, 127, -7], np.int8), np.array([-1, -1, -1], np.int8)
    check(name, run_cuda(name, [a, b]), reference(name, [a, b]))


PROGRAM = """def @main[n: Dim](%x: Tensor({T}, Shape(n)), %y: Tensor({T}, Shape(n))) {{
  (@exp(@floor(%x) * %y),
   @floor_mod(%x, %y) + @round(%x) * @sign(%y) - @ceil(%x) + @trunc(%y),
   @floor_divide(%x, %y),
   @rsqrt(@cosh(%x)) - @atan(%y) + @erf(%x) * @expm1(%y) + @tan(%x) * @sinh(%y) + @asin(%x) + @acos(%y) * @log1p(%x))
}}"""


@pytest.mark.parametrize("dtype, T", [("float32", "FloatType(32)"), ("float64", "FloatType(64)")])
def test_a_program_on_the_cuda_target_matches_the_evaluator(dtype: str, T: str) -> None:
    module = relayish.parse(PROGRAM.format(T=T))
    rng = np.random.default_rng(5)
    x = np.concatenate([rng.uniform(-3, 3, 20), [0.0, -0.0, 0.5, -0.5, np.nan, np.inf, 2.5]]).astype(dtype)
    y = np.concatenate([rng.uniform(-3, 3, 20), [1.0, -1.0, 0.0, 2.0, 1.5, -np.inf, np.nan]]).astype(dtype)
    got = relayish.compile(module, "main", target="cuda")(x, y)
    ref = relayish.evaluate(module, "main", x, y)
    rtol = 1e-5 if dtype == "float32" else 1e-10
    for i, (g, r) in enumerate(zip(got, ref)):
        assert g.dtype == r.dtype and g.shape == r.shape
        if i in (1, 2):
            np.testing.assert_array_equal(g, r)
        else:
            np.testing.assert_allclose(g, r, rtol=rtol, atol=1e-30, equal_nan=True)
