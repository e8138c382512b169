"""Binary operators with NumPy broadcasting, comparisons, logic and ``where`` (Pattern.BROADCAST)."""

from __future__ import annotations

import functools

import numpy as np

from .elementwise import BOOL, FLOAT, check_kinds, define
from .registry import Pattern


_binary = functools.partial(define, pattern=Pattern.BROADCAST, num_args=2)


def _div(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """True division for floats (IEEE: x / 0 is inf or nan); floor division for integers."""
    if a.dtype.kind == FLOAT:
        return np.true_divide(a, b)
    if np.any(b == 0):
        raise ZeroDivisionError("div: integer division by zero (a divisor is 0)")
    return np.floor_divide(a, b)


def _where(cond: np.ndarray, a: np.ndarray, b: np.ndarray) -> np.ndarray:
    check_kinds("where", BOOL, cond)
    return np.where(cond, a, b)


_binary("add", np.add, "a + b")
_binary("sub", np.subtract, "a - b")
_binary("mul", np.multiply, "a * b")
_binary("div", _div, "a / b for floats; floor division a // b for integers, raising ZeroDivisionError on 0")
_binary("pow", np.power, "a ** b (integers to negative integer powers raise ValueError)")
_binary("maximum", np.maximum, "elementwise maximum (nan wins)")
_binary("minimum", np.minimum, "elementwise minimum (nan wins)")

for _name, _fn, _symbol in [
    ("equal", np.equal, "=="),
    ("not_equal", np.not_equal, "!="),
    ("less", np.less, "<"),
    ("less_equal", np.less_equal, "<="),
    ("greater", np.greater, ">"),
    ("greater_equal", np.greater_equal, ">="),
]:
    _binary(_name, _fn, f"a {_symbol} b, a boolean tensor", kinds=None, differentiable=False)

_binary("logical_and", np.logical_and, "a and b on boolean tensors", kinds=BOOL, differentiable=False)
_binary("logical_or", np.logical_or, "a or b on boolean tensors", kinds=BOOL, differentiable=False)
_binary(
    "where",
    _where,
    "a where cond is true, else b; cond is boolean, all three broadcast",
    num_args=3,
    kinds=None,
)
