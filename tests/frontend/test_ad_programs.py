"""The AD stress programs of tests/ad/test_programs.py, as decorated Python with relay.grad.

The functions are in ``ad_functions.py``; the expected numbers are copied from
tests/ad/test_programs.py, where they were derived by hand (the derivations are repeated
in the comments of ``ad_functions.py``). Every case is checked three ways:

- ``test_value``: calling the decorated function gives the value;
- ``test_grad``: ``relay.grad(f)(args)`` gives ``(value, gradients)``, exactly as the text
  program's ``Grad(@f)(args)`` does (float64, relative tolerance 1e-9; integer and bool
  arguments get zeros of their own dtype);
- ``test_grad_matches_finite_differences``: each float gradient element against central
  differences of ``f(...)`` itself, computed here in float64 (step 1e-6, rtol 1e-5).

The REFS program of test_programs.py is not here: references have no Python spelling.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np
import pytest

from relayish import relay
from relayish.testing import compare

from . import ad_functions as A
from tests.ad.support import boolean, f64, i32

RTOL = 1e-9  # exact numbers, as in tests/ad/support.py
FD_EPS = 1e-6
FD_RTOL = 1e-5
FD_ATOL = 1e-6  # for gradients that are exactly zero


def assert_same(actual: Any, expected: Any, rtol: float = RTOL) -> None:
    """Structural comparison: tuples by position, arrays by dtype, shape and value."""
    compare.assert_same(actual, expected, rtol=rtol, atol=0.0)


@dataclass
class Case:
    label: str
    fn: Any
    args: tuple
    value: Any
    grads: tuple


CASES: list[Case] = []


def case(label: str, fn: Any, args: tuple, value: Any, grads: tuple) -> None:
    CASES.append(Case(label, fn, args, value, grads))


# x^3 at 2: 8, 12, 12, 6, 0 (f, f', f'', f''', f''''); at 3: 27, 27, 18, 6.
case("cube at 2", A.cube, (f64(2.0),), f64(8.0), (f64(12.0),))
case("second derivative of x^3 at 2 is 12", A.cube_d1, (f64(2.0),), f64(12.0), (f64(12.0),))
case("x^3: d2 at 2 (value f'' = 12, gradient f''' = 6)", A.cube_d2, (f64(2.0),), f64(12.0), (f64(6.0),))
case("x^3: d3 at 2 (value f''' = 6, gradient f'''' = 0)", A.cube_d3, (f64(2.0),), f64(6.0), (f64(0.0),))
case("x^3: d1 at 3 (27, 18)", A.cube_d1, (f64(3.0),), f64(27.0), (f64(18.0),))
case("x^3: d2 at 3 (18, 6)", A.cube_d2, (f64(3.0),), f64(18.0), (f64(6.0),))

# x^5 + 2x at -3: -249, 407, -540, 540, -360, 120.
case("x^5 + 2x at -3", A.quint, (f64(-3.0),), f64(-249.0), (f64(407.0),))
case("x^5 + 2x: d1 at -3", A.quint_d1, (f64(-3.0),), f64(407.0), (f64(-540.0),))
case("x^5 + 2x: d2 at -3", A.quint_d2, (f64(-3.0),), f64(-540.0), (f64(540.0),))
case("x^5 + 2x: d3 at -3, gradient the fourth derivative -360", A.quint_d3, (f64(-3.0),), f64(540.0), (f64(-360.0),))
case("fourth derivative of x^5 + 2x at -3 is -360 (relay.grad nested four times)", A.quint_d4,
     (f64(-3.0),), f64(-360.0), (f64(120.0),))

# if: at -1, g = 1, g' = -2, g'' = 2; at 1, g = 1, g' = 3, g'' = 6.
for fn in (A.branch, A.branch_expr, A.branch_assign):
    case(f"if ({fn.__name__}): g at -1", fn, (f64(-1.0),), f64(1.0), (f64(-2.0),))
    case(f"if ({fn.__name__}): g at 1", fn, (f64(1.0),), f64(1.0), (f64(3.0),))
case("if: second derivative at -1 is 2", A.branch_d1, (f64(-1.0),), f64(-2.0), (f64(2.0),))
case("if: second derivative at 1 is 6", A.branch_d1, (f64(1.0),), f64(3.0), (f64(6.0),))

case("closure-captured variable: gradient 1", A.captured, (f64(3.0),), f64(3.0), (f64(1.0),))

# 4.5: 192.375, 105.75; -7.9: 59.51, -14.8.
for fn in (A.closures, A.closures_lambdas):
    case(f"branch-selected closures ({fn.__name__}) at 4.5", fn, (f64(4.5),), f64(192.375), (f64(105.75),))
    case(f"branch-selected closures ({fn.__name__}) at -7.9", fn, (f64(-7.9),), f64(59.51), (f64(-14.8),))

# x * x: at 1, value 1 and gradient 2; at 3, 9 and 6.
for fn in (A.confusion, A.confusion_lambda):
    case(f"perturbation confusion ({fn.__name__}) at 1", fn, (f64(1.0),), f64(1.0), (f64(2.0),))
    case(f"perturbation confusion ({fn.__name__}) at 3", fn, (f64(3.0),), f64(9.0), (f64(6.0),))

# 3^4 = 81, 4 * 3^3 = 108; 2^10 = 1024, 5120; x^0 = 1, 0. d/dn is an int32 zero.
case("recursion: power(3, 4)", A.power, (f64(3.0), i32(4)), f64(81.0), (f64(108.0), i32(0)))
case("recursion: power(2, 10)", A.power, (f64(2.0), i32(10)), f64(1024.0), (f64(5120.0), i32(0)))
case("recursion: power(7, 0)", A.power, (f64(7.0), i32(0)), f64(1.0), (f64(0.0), i32(0)))

# 4 -> 16 -> 256: x^4, 256. 3 -> 6561: x^8, 17496. 11 -> 121: 22. 150: 150, 1.
for fn in (A.loop, A.loop_recursive):
    case(f"loop ({fn.__name__}) at 4", fn, (f64(4.0),), f64(256.0), (f64(256.0),))
    case(f"loop ({fn.__name__}) at 3 (three squarings)", fn, (f64(3.0),), f64(6561.0), (f64(17496.0),))
    case(f"loop ({fn.__name__}) at 11 (one squaring)", fn, (f64(11.0),), f64(121.0), (f64(22.0),))
    case(f"loop ({fn.__name__}) at 150 (no squaring)", fn, (f64(150.0),), f64(150.0), (f64(1.0),))

# (4, 5): 3275, (450, 1810); (1, 2): 140, (48, 196).
case("higher-order over a tuple at (4, 5)", A.ho_loss, ((f64(4.0), f64(5.0)),), f64(3275.0),
     ((f64(450.0), f64(1810.0)),))
case("higher-order over a tuple at (1, 2)", A.ho_loss, ((f64(1.0), f64(2.0)),), f64(140.0),
     ((f64(48.0), f64(196.0)),))

BX = np.arange(12, dtype=np.float64).reshape(3, 4, 1) * 0.5
BY = np.array([[1.0, -2.0, 0.25, 3.0, -0.5]])
case("broadcasting undone in the adjoint", A.bsum, (BX, BY), f64(5 * BX.sum() + 12 * BY.sum()),
     (np.full((3, 4, 1), 5.0), np.full((1, 5), 12.0)))

# a = 2, v = (1, 2, 3), c = 0.5, k = 3, m = (4, -1): flag set 21.5, (10, 2v, 31); clear 14, (7, 2v, 28).
MIXED_P = (f64(2.0), (f64([1.0, 2.0, 3.0]), f64(0.5)))
MIXED_INTS = (i32(3), np.array([4, -1], np.int64))
ZERO_INTS = (i32(0), np.zeros(2, np.int64))
case("tuple, int and bool arguments, flag set", A.mixed, (MIXED_P, *MIXED_INTS, boolean(True)), f64(21.5),
     ((f64(10.0), (f64([2.0, 4.0, 6.0]), f64(31.0))), *ZERO_INTS, boolean(False)))
case("tuple, int and bool arguments, flag clear", A.mixed, (MIXED_P, *MIXED_INTS, boolean(False)), f64(14.0),
     ((f64(7.0), (f64([2.0, 4.0, 6.0]), f64(28.0))), *ZERO_INTS, boolean(False)))

# 2: 8 + 4 = 12, 12 + 4 = 16.
case("a tuple built and taken apart inside", A.inner_tuple, (f64(2.0),), f64(12.0), (f64(16.0),))

MA = np.array([[0.5, -0.25, 1.0], [0.75, 0.1, -0.6]])
MB = np.array([[0.2, -0.4, 0.6, 0.1], [0.3, 0.9, -0.7, 0.5], [-0.1, 0.2, 0.4, -0.8]])
MT = np.tanh(MA @ MB)
case("matmul and tanh against NumPy", A.mm, (MA, MB), f64(MT.sum()), ((1 - MT**2) @ MB.T, MA.T @ (1 - MT**2)))

# loss = sum(C * 2x) + S sum(x^2): gradient 2C + 2Sx.
PX = np.array([1.0, -2.0, 0.5, 3.0])
case("a tuple output used by a loss", A.pair_loss, (PX,), f64(np.sum(A.PAIR_C * 2 * PX) + A.PAIR_S * np.sum(PX * PX)),
     (2 * A.PAIR_C + 2 * A.PAIR_S * PX,))


def ids(cases: list[Case]) -> list[str]:
    return [c.label for c in cases]


_GRADS: dict[int, Any] = {}


def grad_of(fn: Any) -> Any:
    """``relay.grad(fn)``, made once per function: the gradient module of the nested cases
    takes seconds to build, and test_grad and the finite-difference test share it."""
    if id(fn) not in _GRADS:
        _GRADS[id(fn)] = relay.grad(fn)
    return _GRADS[id(fn)]


# ---------------------------------------------------------------------------------------
# Finite differences, in float64, of the decorated function itself


def float_leaves(value: Any, path: tuple = ()) -> list[tuple[tuple, np.ndarray]]:
    """(path, array) for every floating-point array in a nest of tuples."""
    if isinstance(value, tuple):
        return [leaf for i, v in enumerate(value) for leaf in float_leaves(v, path + (i,))]
    array = np.asarray(value)
    return [(path, array)] if array.dtype.kind == "f" else []


def at(value: Any, path: tuple) -> Any:
    for i in path:
        value = value[i]
    return value


def replace(value: Any, path: tuple, new: Any) -> Any:
    if not path:
        return new
    return tuple(replace(v, path[1:], new) if i == path[0] else v for i, v in enumerate(value))


def finite_differences(fn: Any, args: tuple) -> list[tuple[tuple, np.ndarray]]:
    """Central differences of ``fn(*args)`` in every float argument element."""
    result = []
    for path, array in float_leaves(args):
        grad = np.zeros(array.shape, np.float64)
        for index in np.ndindex(*array.shape):
            values = []
            for sign in (1, -1):
                moved = array.astype(np.float64).copy()
                moved[index] += sign * FD_EPS
                values.append(float(fn(*replace(args, path, moved))))
            grad[index] = (values[0] - values[1]) / (2 * FD_EPS)
        result.append((path, grad))
    return result


def assert_matches_finite_differences(grads: tuple, fd: list[tuple[tuple, np.ndarray]]) -> None:
    assert fd, "no float argument to differentiate"
    for path, expected in fd:
        actual = np.asarray(at(grads, path), dtype=np.float64)
        np.testing.assert_allclose(actual, expected, rtol=FD_RTOL, atol=FD_ATOL,
                                   err_msg=f"gradient of argument {path} vs central differences")


# ---------------------------------------------------------------------------------------
# The table, three ways


@pytest.mark.parametrize("c", CASES, ids=ids(CASES))
def test_value(c: Case):
    assert_same(c.fn(*c.args), c.value)


@pytest.mark.parametrize("c", CASES, ids=ids(CASES))
def test_grad(c: Case):
    assert_same(grad_of(c.fn)(*c.args), (c.value, c.grads))


@pytest.mark.parametrize("c", CASES, ids=ids(CASES))
def test_grad_matches_finite_differences(c: Case):
    _, grads = grad_of(c.fn)(*c.args)
    assert_matches_finite_differences(grads, finite_differences(c.fn, c.args))


# ---------------------------------------------------------------------------------------
# Cases outside the table


def test_fourth_derivative_with_nested_defs():
    """quint_d4 with annotated nested defs: value -360; its derivative (the fifth, 120) by
    central differences of the value (relay.grad of it would expand a fifth order again)."""
    assert_same(A.quint_d4_defs(f64(-3.0)), f64(-360.0))
    ((_, fd),) = finite_differences(A.quint_d4_defs, (f64(-3.0),))
    np.testing.assert_allclose(fd, 120.0, rtol=FD_RTOL)


@pytest.mark.parametrize("fn", [A.confusion_inline, A.confusion_inline_lambda], ids=lambda f: f.__name__)
def test_perturbation_confusion_inline(fn):
    """``relay.grad(lambda x: x * relay.grad(lambda y: x * y)(2.0)[1][0])(x0)`` at 1: (1, (2,))."""
    assert_same(fn(f64(1.0)), (f64(1.0), (f64(2.0),)))
    assert_same(fn(f64(3.0)), (f64(9.0), (f64(6.0),)))


def test_recursion_gradient_for_the_count_is_an_int32_zero():
    value, (dx, dn) = grad_of(A.power)(f64(3.0), i32(4))
    assert dn.dtype == np.int32 and dn.shape == () and dn == 0
    assert_same((value, dx), (f64(81.0), f64(108.0)))


def test_python_numbers_as_arguments():
    """Python floats and ints become the parameters' dtypes (float64, int32)."""
    assert_same(relay.grad(A.power)(3.0, 4), (f64(81.0), (f64(108.0), i32(0))))
    assert_same(relay.grad(A.cube_d1)(2.0), (f64(12.0), (f64(12.0),)))


def test_tuple_output_of_a_decorated_function():
    assert_same(A.pair(PX), (2 * PX, f64(np.sum(PX * PX))))


# f(x) = sum(tanh(x) x) + 0.5 sum(x), f' = tanh(x) + x (1 - tanh^2 x) + 0.5, at (0.5, 1, 1.5, 2);
# relative tolerances as in test_programs.py: float64 1e-12, float32 1e-5, float16 1e-2.
WIDTHS = {16: (A.widths16, 1e-2), 32: (A.widths32, 1e-5), 64: (A.widths64, 1e-12)}


@pytest.mark.parametrize("bits", sorted(WIDTHS))
def test_every_float_width(bits):
    fn, rtol = WIDTHS[bits]
    dtype = np.dtype(f"float{bits}")
    x = np.array([0.5, 1.0, 1.5, 2.0])
    t = np.tanh(x)
    value = np.sum(t * x) + 0.5 * np.sum(x)
    grad = t + x * (1 - t**2) + 0.5
    assert_same(relay.grad(fn)(x.astype(dtype)), (np.asarray(value, dtype), (grad.astype(dtype),)), rtol=rtol)


@pytest.mark.parametrize("c", [c for c in CASES if "grad" not in c.fn.python_function.__code__.co_names],
                         ids=ids([c for c in CASES if "grad" not in c.fn.python_function.__code__.co_names]))
def test_value_agrees_with_the_undecorated_python(c: Case):
    """``f.python(...)`` (the same source run by NumPy) gives the value too."""
    result = c.fn.python(*c.args)
    assert_same(np.asarray(result, dtype=np.float64), c.value)
