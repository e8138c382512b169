"""The operators of relayish/ops/arithmetic.py against Python's ``math`` and operators, element by element.

Oracles: each element converted exactly to a Python float (or int), the ``math`` function of
the same meaning (``math.erf``, ``math.tan``, ...; ``round()`` for ``round``, which rounds halves
to even; ``//`` and ``%`` for ``floor_divide`` and ``floor_mod``), the result rounded to the
tensor's dtype. Where ``math`` raises instead of giving the IEEE limit the oracle says which limit
(a domain error is nan, an overflow an infinity, ``log1p(-1)`` is -inf, a zero divisor of floats
gives ``a / b`` and nan). Never NumPy's function of the same name and never relayish's own code.

Tolerances: rounding, sign, floor division and modulo exactly (signed zeros too, NaN equal to
NaN); transcendental functions rtol 2e-3 for float16 (two float16 ulp: NumPy computes float16 in
float32 and rounds, the oracle rounds the double result), 1e-6 for float32 and 1e-12 for float64
(a few ulp of the libraries' float32 and float64 routines), with atol 1e-7 / 1e-44 / 1e-300 for
subnormal results.
"""

from __future__ import annotations

import math
import warnings
from typing import Callable

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from hypothesis.extra import numpy as hnp

from relayish.errors import RelayTypeError
from relayish.ops import Pattern, Raises, get_op
from relayish.types import BoolType, FloatType, IntType, Shape, TensorType, TypeVar, UIntType
from relayish.types import Kind

FLOAT_DTYPES = [np.dtype(np.float16), np.dtype(np.float32), np.dtype(np.float64)]
INT_DTYPES = [np.dtype(d) for d in (np.int8, np.int16, np.int32, np.int64, np.uint8, np.uint16, np.uint32, np.uint64)]
RTOL = {np.dtype(np.float16): 2e-3, np.dtype(np.float32): 1e-6, np.dtype(np.float64): 1e-12}
ATOL = {np.dtype(np.float16): 1e-7, np.dtype(np.float32): 1e-44, np.dtype(np.float64): 1e-300}
EXAMPLES = settings(max_examples=40, deadline=None)


def _ieee(fn: Callable[[float], float], overflow: Callable[[float], float]) -> Callable[[float], float]:
    """``fn`` with math's exceptions turned into IEEE results: a domain error is nan, an overflow
    ``overflow(x)`` (an infinity of the right sign)."""

    def total(x: float) -> float:
        try:
            return fn(x)
        except ValueError:
            return math.nan
        except OverflowError:
            return overflow(x)

    return total


def _inf_like(x: float) -> float:
    return math.copysign(math.inf, x)


def _rsqrt(x: float) -> float:
    root = math.sqrt(x)  # ValueError below zero: nan
    return math.copysign(math.inf, root) if root == 0 else 1.0 / root  # 1 / +-0 is +-inf


def _log1p(x: float) -> float:
    return -math.inf if x == -1.0 else math.log1p(x)  # math raises at the pole


# name -> (oracle on a Python float, lowest and highest drawn value by dtype width)
TRANSCENDENTAL: dict[str, tuple[Callable[[float], float], dict[int, tuple[float, float]]]] = {
    "erf": (math.erf, {16: (-5, 5), 32: (-10, 10), 64: (-10, 10)}),
    "tan": (_ieee(math.tan, _inf_like), {16: (-10, 10), 32: (-100, 100), 64: (-100, 100)}),
    "atan": (math.atan, {16: (-1e4, 1e4), 32: (-1e30, 1e30), 64: (-1e300, 1e300)}),
    "asin": (_ieee(math.asin, _inf_like), {16: (-1.2, 1.2), 32: (-1.2, 1.2), 64: (-1.2, 1.2)}),
    "acos": (_ieee(math.acos, _inf_like), {16: (-1.2, 1.2), 32: (-1.2, 1.2), 64: (-1.2, 1.2)}),
    "sinh": (_ieee(math.sinh, _inf_like), {16: (-10, 10), 32: (-80, 80), 64: (-700, 700)}),
    "cosh": (_ieee(math.cosh, lambda x: math.inf), {16: (-10, 10), 32: (-80, 80), 64: (-700, 700)}),
    "rsqrt": (_ieee(_rsqrt, _inf_like), {16: (-10, 1e4), 32: (-10, 1e30), 64: (-10, 1e300)}),
    "log1p": (_ieee(_log1p, _inf_like), {16: (-1.5, 1e4), 32: (-1.5, 1e30), 64: (-1.5, 1e300)}),
    "expm1": (_ieee(math.expm1, _inf_like), {16: (-20, 10), 32: (-100, 80), 64: (-800, 700)}),
}


def _integral(fn: Callable[[float], int]) -> Callable[[float], float]:
    """A rounding function as a float with x's sign (ceil(-0.5) is -0.0); NaN and infinities are themselves."""
    return lambda x: x if not math.isfinite(x) else math.copysign(float(fn(x)), x)


ROUNDING = {
    "ceil": _integral(math.ceil),
    "floor": _integral(math.floor),
    "trunc": _integral(math.trunc),
    "round": _integral(round),  # Python's round() takes halves to the even neighbour
}


def _sign(x: float | int) -> float | int:
    if isinstance(x, float) and math.isnan(x):
        return x
    return (x > 0) - (x < 0)  # 0 for -0.0 (a positive zero once converted)


def elementwise(fn: Callable, x: np.ndarray, dtype: np.dtype) -> np.ndarray:
    """``fn`` on every element as a Python number, rounded to ``dtype``."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # float64 -> float16/float32 overflowing to inf
        return np.array([fn(v) for v in x.ravel().tolist()], dtype=np.float64 if dtype.kind == "f" else object) \
            .astype(dtype).reshape(x.shape)


def assert_exact(actual: np.ndarray, expected: np.ndarray) -> None:
    """Same dtype, shape and values; NaN equal to NaN and zeros of the same sign."""
    assert actual.dtype == expected.dtype and actual.shape == expected.shape, (actual, expected)
    np.testing.assert_array_equal(actual, expected)
    if actual.dtype.kind == "f":
        np.testing.assert_array_equal(np.signbit(actual[actual == 0]), np.signbit(expected[actual == 0]))


def assert_close(actual: np.ndarray, expected: np.ndarray, dtype: np.dtype) -> None:
    assert actual.dtype == dtype and actual.shape == expected.shape, (actual.dtype, actual.shape, expected.shape)
    np.testing.assert_allclose(actual.astype(np.float64), expected.astype(np.float64), rtol=RTOL[dtype],
                               atol=ATOL[dtype], equal_nan=True)
    # infinities and NaN exactly where the oracle has them
    np.testing.assert_array_equal(np.isnan(actual), np.isnan(expected))
    np.testing.assert_array_equal(np.isposinf(actual), np.isposinf(expected))
    np.testing.assert_array_equal(np.isneginf(actual), np.isneginf(expected))


def float_arrays(dtype: np.dtype, lo: float, hi: float, specials: bool = True) -> st.SearchStrategy:
    elements = st.floats(float(dtype.type(lo)), float(dtype.type(hi)), width=dtype.itemsize * 8)
    if specials:
        elements = elements | st.sampled_from([0.0, -0.0, 1.0, -1.0, 0.5, -0.5, np.inf, -np.inf, np.nan])
    return hnp.arrays(dtype, hnp.array_shapes(min_dims=0, max_dims=3, min_side=0, max_side=4), elements=elements)


# ---------------------------------------------------------------------------------------------------------------
# Semantics against math, element by element


@pytest.mark.parametrize("name", sorted(TRANSCENDENTAL))
@pytest.mark.parametrize("dtype", FLOAT_DTYPES, ids=str)
@EXAMPLES
@given(data=st.data())
def test_transcendental_functions_against_math(name: str, dtype: np.dtype, data: st.DataObject) -> None:
    oracle, ranges = TRANSCENDENTAL[name]
    x = data.draw(float_arrays(dtype, *ranges[dtype.itemsize * 8]), label="x")
    assert_close(get_op(name)(x), elementwise(oracle, x, dtype), dtype)


@pytest.mark.parametrize("name", sorted(ROUNDING))
@pytest.mark.parametrize("dtype", FLOAT_DTYPES, ids=str)
@EXAMPLES
@given(data=st.data())
def test_rounding_against_math(name: str, dtype: np.dtype, data: st.DataObject) -> None:
    halves = st.integers(-64, 64).map(lambda k: k / 2)  # ties: where round differs from the others
    elements = st.floats(width=dtype.itemsize * 8) | halves | st.sampled_from([-0.0, 0.49999997, 4503599627370497.0])
    x = data.draw(hnp.arrays(dtype, hnp.array_shapes(min_dims=0, max_dims=3, min_side=0, max_side=4),
                             elements=elements), label="x")
    assert_exact(get_op(name)(x), elementwise(ROUNDING[name], x, dtype))


@pytest.mark.parametrize("dtype", FLOAT_DTYPES + INT_DTYPES, ids=str)
@EXAMPLES
@given(data=st.data())
def test_sign_against_python(dtype: np.dtype, data: st.DataObject) -> None:
    elements = st.floats(width=dtype.itemsize * 8) if dtype.kind == "f" else \
        st.integers(int(np.iinfo(dtype).min), int(np.iinfo(dtype).max))
    x = data.draw(hnp.arrays(dtype, hnp.array_shapes(min_dims=0, max_dims=3, min_side=0), elements=elements))
    assert_exact(get_op("sign")(x), elementwise(_sign, x, dtype))


def _python_floor_divide(a: float | int, b: float | int) -> float | int:
    if b == 0:  # floats only here: Python raises, IEEE division gives inf or nan
        with np.errstate(all="ignore"):
            return float(np.float64(a) / np.float64(b))
    return a // b


def _python_floor_mod(a: float | int, b: float | int) -> float | int:
    return math.nan if b == 0 else a % b


PYTHON_BINARY = {"floor_divide": _python_floor_divide, "floor_mod": _python_floor_mod}


def _pairwise(fn: Callable, a: np.ndarray, b: np.ndarray, dtype: np.dtype) -> np.ndarray:
    a, b = np.broadcast_arrays(a, b)
    values = [fn(x, y) for x, y in zip(a.ravel().tolist(), b.ravel().tolist())]
    return np.array(values, dtype=np.float64 if dtype.kind == "f" else object).astype(dtype).reshape(a.shape)


broadcast_pairs = hnp.mutually_broadcastable_shapes(num_shapes=2, min_dims=0, max_dims=3, min_side=0, max_side=4)


@pytest.mark.parametrize("name", sorted(PYTHON_BINARY))
@pytest.mark.parametrize("dtype", FLOAT_DTYPES, ids=str)
@EXAMPLES
@given(data=st.data())
def test_float_floor_division_and_modulo_against_python(name: str, dtype: np.dtype, data: st.DataObject) -> None:
    """Python's float // and % (fmod, then the quotient snapped to an integer) are NumPy's; a zero divisor gives
    a / b and nan instead of raising."""
    shapes = data.draw(broadcast_pairs, label="shapes").input_shapes
    elements = st.floats(width=dtype.itemsize * 8) | st.integers(-20, 20).map(lambda k: k / 4) | \
        st.sampled_from([0.0, -0.0, np.inf, -np.inf, np.nan])
    a, b = (data.draw(hnp.arrays(dtype, shape, elements=elements)) for shape in shapes)
    assert_exact(get_op(name)(a, b), _pairwise(PYTHON_BINARY[name], a, b, dtype))


@pytest.mark.parametrize("name", sorted(PYTHON_BINARY))
@pytest.mark.parametrize("dtype", INT_DTYPES, ids=str)
@EXAMPLES
@given(data=st.data())
def test_integer_floor_division_and_modulo_against_python(name: str, dtype: np.dtype, data: st.DataObject) -> None:
    info = np.iinfo(dtype)
    shapes = data.draw(broadcast_pairs, label="shapes").input_shapes
    a = data.draw(hnp.arrays(dtype, shapes[0], elements=st.integers(int(info.min) + 1, int(info.max))))
    b = data.draw(hnp.arrays(dtype, shapes[1], elements=st.integers(int(info.min), int(info.max)).filter(bool)))
    assert_exact(get_op(name)(a, b), _pairwise(PYTHON_BINARY[name], a, b, dtype))


def test_the_smallest_integer_divided_by_minus_one_wraps() -> None:
    a, b = np.array([-128, -128, 7], np.int8), np.array([-1, 1, -1], np.int8)
    assert_exact(get_op("floor_divide")(a, b), np.array([-128, -128, -7], np.int8))  # 128 wraps to -128
    assert_exact(get_op("floor_mod")(a, b), np.array([0, 0, 0], np.int8))


# ---------------------------------------------------------------------------------------------------------------
# Special values, written out


nan, inf = math.nan, math.inf
SPECIAL = [
    ("erf", [0.0, -0.0, inf, -inf, nan, 6.0], [0.0, -0.0, 1.0, -1.0, nan, 1.0]),
    ("tan", [0.0, -0.0, inf, -inf, nan], [0.0, -0.0, nan, nan, nan]),
    ("atan", [0.0, -0.0, inf, -inf, nan], [0.0, -0.0, math.pi / 2, -math.pi / 2, nan]),
    ("asin", [1.0, -1.0, -0.0, 1.5, -1.5, inf, nan], [math.pi / 2, -math.pi / 2, -0.0, nan, nan, nan, nan]),
    ("acos", [1.0, -1.0, 0.0, 1.5, -1.5, -inf, nan], [0.0, math.pi, math.pi / 2, nan, nan, nan, nan]),
    ("sinh", [0.0, -0.0, inf, -inf, nan, 1000.0, -1000.0], [0.0, -0.0, inf, -inf, nan, inf, -inf]),
    ("cosh", [0.0, -0.0, inf, -inf, nan, 1000.0, -1000.0], [1.0, 1.0, inf, inf, nan, inf, inf]),
    ("rsqrt", [0.0, -0.0, inf, -inf, -1.0, nan, 4.0, 0.25], [inf, -inf, 0.0, nan, nan, nan, 0.5, 2.0]),
    ("log1p", [-1.0, -2.0, 0.0, -0.0, inf, -inf, nan], [-inf, nan, 0.0, -0.0, inf, nan, nan]),
    ("expm1", [0.0, -0.0, inf, -inf, nan, 1000.0], [0.0, -0.0, inf, -1.0, nan, inf]),
    ("ceil", [-0.5, 0.5, -0.0, 2.0, inf, -inf, nan], [-0.0, 1.0, -0.0, 2.0, inf, -inf, nan]),
    ("floor", [-0.5, 0.5, -0.0, -2.0, inf, -inf, nan], [-1.0, 0.0, -0.0, -2.0, inf, -inf, nan]),
    ("trunc", [-0.7, 0.7, -1.5, 1.5, -0.0, inf, -inf, nan], [-0.0, 0.0, -1.0, 1.0, -0.0, inf, -inf, nan]),
    ("round", [0.5, 1.5, 2.5, -0.5, -1.5, -2.5, 0.49999997, -0.0, inf, nan],
     [0.0, 2.0, 2.0, -0.0, -2.0, -2.0, 0.0, -0.0, inf, nan]),
    ("sign", [-0.0, 0.0, -3.5, 2.0, inf, -inf, nan, 1e-45], [0.0, 0.0, -1.0, 1.0, 1.0, -1.0, nan, 1.0]),
]


@pytest.mark.parametrize(("name", "x", "expected"), SPECIAL, ids=[case[0] for case in SPECIAL])
@pytest.mark.parametrize("dtype", [np.float32, np.float64], ids=["float32", "float64"])
def test_special_values_without_warnings(name: str, x: list[float], expected: list[float], dtype: type) -> None:
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        result = get_op(name)(np.array(x, dtype))
    want = np.array(expected, dtype)
    if name in ("atan", "asin", "acos", "tan", "erf"):
        np.testing.assert_allclose(result, want, rtol=1e-7 if dtype == np.float32 else 1e-15, equal_nan=True)
    else:
        assert_exact(result, want)
    zeros = want == 0
    np.testing.assert_array_equal(np.signbit(result[zeros]), np.signbit(want[zeros]))


@pytest.mark.parametrize(("name", "a", "b", "expected"), [
    ("floor_divide", [7.0, -7.0, 7.5, -7.5, 0.0, -0.0, 1.0, 0.0, inf, 5.0, nan],
     [2.0, 2.0, -2.0, -2.0, 3.0, 3.0, 0.0, 0.0, 2.0, inf, 1.0],
     [3.0, -4.0, -4.0, 3.0, 0.0, -0.0, inf, nan, nan, 0.0, nan]),
    ("floor_mod", [7.0, -7.0, 7.5, -7.5, 0.0, -0.0, 1.0, inf, 5.0, -5.0, nan],
     [2.0, 2.0, -2.0, -2.0, -3.0, 3.0, 0.0, 2.0, inf, inf, 1.0],
     [1.0, 1.0, -0.5, -1.5, -0.0, 0.0, nan, nan, 5.0, inf, nan]),
])
def test_float_floor_division_special_values(name: str, a: list, b: list, expected: list) -> None:
    for dtype in (np.float16, np.float32, np.float64):
        with warnings.catch_warnings():
            warnings.simplefilter("error")
            result = get_op(name)(np.array(a, dtype), np.array(b, dtype))
        assert_exact(result, np.array(expected, dtype))


@pytest.mark.parametrize("name", sorted(PYTHON_BINARY))
@pytest.mark.parametrize("dtype", [np.int8, np.uint8, np.int32, np.uint64], ids=str)
def test_integer_division_by_zero_raises(name: str, dtype: type) -> None:
    with pytest.raises(ZeroDivisionError, match=f"{name}: integer division by zero"):
        get_op(name)(np.array([4, 5], dtype), np.array([1, 0], dtype))
    with pytest.raises(ZeroDivisionError):  # a zero divisor broadcast against an empty tensor still raises
        get_op(name)(np.zeros((0, 2), dtype), np.array([1, 0], dtype))


# ---------------------------------------------------------------------------------------------------------------
# Dtypes, kinds, type relations, records

FLOAT_ONLY = sorted(TRANSCENDENTAL) + sorted(ROUNDING)


@pytest.mark.parametrize("name", FLOAT_ONLY)
def test_float_operators_keep_each_float_dtype_and_refuse_the_others(name: str) -> None:
    for dtype in FLOAT_DTYPES:
        assert get_op(name)(np.array([0.25, 2.0], dtype)).dtype == dtype
    for dtype in (np.int32, np.uint8, np.bool_):
        with pytest.raises(TypeError, match=f"{name} needs floating-point tensors"):
            get_op(name)(np.array([1, 0], dtype))


@pytest.mark.parametrize("name", ["sign", "floor_divide", "floor_mod"])
def test_numeric_operators_keep_every_numeric_dtype_and_refuse_bool(name: str) -> None:
    count = 1 if name == "sign" else 2
    for dtype in FLOAT_DTYPES + INT_DTYPES:
        assert get_op(name)(*[np.array([3, 2], dtype)] * count).dtype == dtype
    with pytest.raises(TypeError, match=f"{name} needs numeric tensors"):
        get_op(name)(*[np.array([True])] * count)


F16, F32, F64, I8, I32, U8 = FloatType(16), FloatType(32), FloatType(64), IntType(8), IntType(32), UIntType(8)
n = TypeVar("n", Kind.DIM)


def relate(name: str, *args: TensorType):
    op = get_op(name)
    return op.type_relation(list(args), op.full_attrs(op.normalize_attrs({})))


@pytest.mark.parametrize("name", FLOAT_ONLY)
def test_float_type_relations(name: str) -> None:
    for dtype in (F16, F32, F64):
        ty = TensorType(dtype, Shape(n, 3))
        assert relate(name, ty) == ty
    with pytest.raises(RelayTypeError, match="argument 1 must have a floating-point dtype, not IntType"):
        relate(name, TensorType(I32, Shape(2)))


def test_sign_type_relation() -> None:
    for dtype in (F32, I8, U8):
        assert relate("sign", TensorType(dtype, Shape(n))) == TensorType(dtype, Shape(n))
    with pytest.raises(RelayTypeError, match="argument 1 must have a numeric dtype, not BoolType"):
        relate("sign", TensorType(BoolType(), Shape()))


@pytest.mark.parametrize("name", sorted(PYTHON_BINARY))
def test_binary_type_relations_broadcast(name: str) -> None:
    assert relate(name, TensorType(F32, Shape(3, 1)), TensorType(F32, Shape(4))) == TensorType(F32, Shape(3, 4))
    assert relate(name, TensorType(I32, Shape(n)), TensorType(I32, Shape())) == TensorType(I32, Shape(n))
    with pytest.raises(RelayTypeError):
        relate(name, TensorType(F32, Shape(3)), TensorType(F64, Shape(3)))  # one dtype
    with pytest.raises(RelayTypeError):
        relate(name, TensorType(F32, Shape(3)), TensorType(F32, Shape(4)))  # shapes that do not broadcast
    with pytest.raises(RelayTypeError, match="numeric"):
        relate(name, TensorType(BoolType(), Shape(3)), TensorType(BoolType(), Shape(3)))


def test_records() -> None:
    for name in FLOAT_ONLY + ["sign"]:
        op = get_op(name)
        assert op.pattern is Pattern.ELEMWISE and op.raises == Raises.NEVER and op.num_args == 1, name
        assert op.differentiable == (name in TRANSCENDENTAL), name
        assert op.element and op.doc and "\n" not in op.doc, name
    for name in PYTHON_BINARY:
        op = get_op(name)
        assert op.pattern is Pattern.BROADCAST and op.raises == Raises.ON_INTEGERS and op.num_args == 2, name
        assert op.element and op.doc
    assert get_op("floor_mod").differentiable and not get_op("floor_divide").differentiable
    assert "even" in get_op("round").doc
