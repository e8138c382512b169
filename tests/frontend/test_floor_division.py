"""``//`` and ``%`` in @relay functions keep Python's meaning on every dtype: ``floor_divide`` and
``floor_mod`` (the floor of the quotient; the remainder takes the divisor's sign), integers and
floats alike, negative operands included, in both backends.

Oracles: Python's own ``//`` and ``%`` on Python floats and ints (float64 and int64 values are
Python's exactly; a zero float divisor, where Python raises, gives IEEE inf/nan as NumPy does), and
NumPy's ``floor_divide`` / ``remainder`` for float32 and for tensors; the undecorated function
(``.python``) must agree too.
"""

from __future__ import annotations

import math

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from relayish import Float, Float64, Int, Int64, RelayRuntimeError, Tensor, relay


@relay
def floordiv64(a: Float64, b: Float64) -> Float64:
    return a // b


@relay
def mod64(a: Float64, b: Float64) -> Float64:
    return a % b


@relay
def divmod32(a: Float, b: Float) -> tuple[Float, Float]:
    return a // b, a % b


@relay
def int_divmod(a: Int64, b: Int64) -> tuple[Int64, Int64]:
    return a // b, a % b


@relay
def vectors(a: Tensor[Float64, 6], b: Tensor[Float64, 6]) -> Tensor[Float64, 6]:
    return (a + 1.0) % b + a // (b * 2) + 7.5 % -2 + (-7) // 2  # expressions, and constants Python folds


@relay
def with_literals(x: Float64) -> tuple[Float64, Float64, Float64, Float64]:
    return x % 2.5, 7.5 // x, x // 2, -x % 3  # weak literals take x's dtype (2 is 2.0 here)


@relay
def of_unknown_dtype(x: Float64) -> Float64:
    f = lambda v: v % 2 + v // 3  # noqa: E731 - the operands' dtype is known only once type-checked
    return f(x)


@relay
def int_vectors(a: Tensor[Int64, 6], b: Tensor[Int64, 6]) -> Tensor[Int64, 6]:
    return a // b * b + a % b  # == a, Python's identity


@relay
def divides_by(n: Int, d: Int) -> Int:
    return n // d


@relay
def remainder_of(n: Int, d: Int) -> Int:
    return n % d


FINITE = st.floats(-1e6, 1e6) | st.integers(-20, 20).map(lambda k: k / 4)
NONZERO = FINITE.filter(bool)


@settings(max_examples=200, deadline=None)
@given(a=FINITE, b=NONZERO)
def test_float64_floor_division_and_modulo_are_pythons(a: float, b: float) -> None:
    got_q, got_r = floordiv64(a, b), mod64(a, b)
    assert got_q.dtype == got_r.dtype == np.float64
    assert float(got_q) == a // b and math.copysign(1, got_q) == math.copysign(1, a // b)
    assert float(got_r) == a % b and math.copysign(1, got_r) == math.copysign(1, a % b)


@pytest.mark.parametrize(("a", "b", "q", "r"), [
    (7.0, 2.0, 3.0, 1.0), (-7.0, 2.0, -4.0, 1.0), (7.0, -2.0, -4.0, -1.0), (-7.0, -2.0, 3.0, -1.0),
    (7.5, 2.0, 3.0, 1.5), (-7.5, 2.0, -4.0, 0.5), (-0.0, 3.0, -0.0, 0.0), (0.0, -3.0, -0.0, -0.0),
    (5.0, math.inf, 0.0, 5.0), (-5.0, math.inf, -1.0, math.inf),
])
def test_negative_operands_and_signed_zeros_by_hand(a: float, b: float, q: float, r: float) -> None:
    for fn, expected in ((floordiv64, q), (mod64, r)):
        got = float(fn(a, b))
        assert got == expected and math.copysign(1, got) == math.copysign(1, expected), (fn, a, b, got)


def test_a_zero_float_divisor_gives_ieee_values_where_python_raises() -> None:
    assert floordiv64(5.0, 0.0) == math.inf and floordiv64(-5.0, 0.0) == -math.inf
    assert math.isnan(floordiv64(0.0, 0.0)) and math.isnan(mod64(5.0, 0.0))


@pytest.mark.parametrize("backend", ["interp", "jit"])
@settings(max_examples=60, deadline=None)
@given(a=st.floats(-1e4, 1e4, width=32), b=st.floats(-1e4, 1e4, width=32).filter(bool))
def test_float32_is_numpys_float32(backend: str, a: float, b: float) -> None:
    fn = divmod32 if backend == "interp" else relay(backend="jit")(divmod32.python_function)
    x, y = np.float32(a), np.float32(b)
    q, r = fn(x, y)
    assert q.dtype == r.dtype == np.float32
    assert q == np.floor_divide(x, y) and r == np.remainder(x, y)


INT64 = st.integers(-(2**62), 2**62)


@settings(max_examples=200, deadline=None)
@given(a=INT64, b=INT64.filter(bool))
def test_int64_floor_division_and_modulo_are_pythons(a: int, b: int) -> None:
    q, r = int_divmod(a, b)
    assert q.dtype == r.dtype == np.int64
    assert (int(q), int(r)) == (a // b, a % b)


@pytest.mark.parametrize("backend", ["interp", "jit"])
def test_tensors_in_both_backends(backend: str) -> None:
    fn = relay(backend=backend)(vectors.python_function)
    a = np.array([-7.5, -1.0, -0.0, 5.0, 9.25, 2.0**40])
    b = np.array([2.0, -3.0, 2.0, -2.0, 0.75, -7.0])
    expected = np.array([(x + 1.0) % y + x // (y * 2) + 7.5 % -2 + (-7) // 2 for x, y in zip(a.tolist(), b.tolist())])
    np.testing.assert_array_equal(fn(a, b), expected)
    np.testing.assert_array_equal(vectors.python(a, b), expected)  # the undecorated function agrees
    ints = relay(backend=backend)(int_vectors.python_function)
    i = np.array([-7, -1, 0, 5, 9, 2**40], np.int64)
    j = np.array([3, -3, 2, -2, 4, -7], np.int64)
    np.testing.assert_array_equal(ints(i, j), i)


def test_literals_take_the_tensors_dtype() -> None:
    for x in (-7.25, 3.5, -0.5):
        got = with_literals(x)
        assert all(v.dtype == np.float64 for v in got)
        assert [float(v) for v in got] == [x % 2.5, 7.5 // x, x // 2, -x % 3]


def test_operands_of_unknown_dtype() -> None:
    for x in (-7.5, 7.5, -2.0):
        assert float(of_unknown_dtype(x)) == x % 2 + x // 3


def test_the_ir_names_the_operators() -> None:
    assert "@floor_divide(%a, %b)" in floordiv64.astext()
    assert "@floor_mod(%a, %b)" in mod64.astext()
    text = vectors.astext()
    # the constants are folded by Python: 7.5 % -2 is -0.5, (-7) // 2 is -4 (meeting float64: -4.0)
    assert "@floor_mod(%a + 1.0f64, %b) + @floor_divide(%a, %b * 2.0f64) + -0.5f64 + -4.0f64" in text


@pytest.mark.parametrize(("fn", "symbol"), [(divides_by, "n // d"), (remainder_of, "n % d")])
def test_an_integer_zero_divisor_is_a_runtime_error_at_the_operator(fn, symbol: str) -> None:
    assert int(fn(-7, 2)) == -7 // 2 if symbol == "n // d" else int(fn(-7, 2)) == -7 % 2
    with pytest.raises(RelayRuntimeError, match="division by zero") as info:
        fn(7, 0)
    assert f"return {symbol}" in str(info.value)


@relay
def wrapped(x: Float64) -> Float64:
    return x % 1.5 * x


def test_gradient_through_modulo() -> None:
    """d/dx (x % 1.5) * x = x + x % 1.5 (the remainder's slope is 1 between its jumps)."""
    for x in (-2.0, 0.7, 4.0):
        value, (gradient,) = relay.grad(wrapped)(x)
        assert float(value) == (x % 1.5) * x
        assert float(gradient) == pytest.approx(x + x % 1.5, rel=1e-12)
