"""Binary operators with NumPy broadcasting, comparisons, logic and ``where`` (Pattern.BROADCAST)."""

from __future__ import annotations

import functools
from typing import TYPE_CHECKING, Callable

import numpy as np

from ..types import BoolType
from . import generation as gen, relations as rel
from .adjoints import select, summed
from .elementwise import BOOL, FLOAT, NUMBER, check_kinds, define
from .generation import Hint
from .record import OpDef, Pattern, Raises

if TYPE_CHECKING:
    from ..expr import Expr
    from .sites import Site

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


def _pow_gradient(s: Site) -> list[Expr | None]:
    a, b = s.args
    da = s.op("mul", s.op("mul", s.g, b), s.op("pow", a, s.op("sub", b, s.const(1))))
    # d/db a**b = a**b log a, which is 0 (not nan) where a == 0
    log_term = s.op("where", s.op("equal", a, s.const(0)), s.zeros(s.out), s.op("mul", s.out, s.op("log", a)))
    return summed(s, da, s.op("mul", s.g, log_term))


def _where_gradient(s: Site) -> list[Expr | None]:
    cond, a, b = s.args
    return [None, s.op("sum_to", s.masked(cond, s.g), a), s.op("sum_to", s.op("where", cond, s.zeros(s.g), s.g), b)]


def _comparison(name: str, fn: Callable[..., np.ndarray], symbol: str) -> OpDef:
    return _binary(name, fn, f"a {symbol} b", kinds=None, dtypes="any → bool",
                   relation=rel.broadcasting(None, BoolType()), element=f"a {symbol} b", raises=Raises.NEVER,
                   rule=gen.comparison, hint=Hint(BOOL))


OPS = (
    _binary("add", np.add, "a + b", relation=rel.broadcasting(NUMBER), element="a + b", raises=Raises.NEVER,
            gradient=lambda s: summed(s, s.g, s.g), rule=gen.binary(NUMBER), hint=Hint(NUMBER)),
    _binary("sub", np.subtract, "a - b", relation=rel.broadcasting(NUMBER), element="a - b", raises=Raises.NEVER,
            gradient=lambda s: summed(s, s.g, s.op("neg", s.g)), rule=gen.binary(NUMBER), hint=Hint(NUMBER)),
    _binary("mul", np.multiply, "a * b", relation=rel.broadcasting(NUMBER), element="a * b", raises=Raises.NEVER,
            gradient=lambda s: summed(s, s.op("mul", s.g, s.args[1]), s.op("mul", s.g, s.args[0])),
            rule=gen.binary(NUMBER), hint=Hint(NUMBER)),
    _binary("div", _div, "a / b for floats; floor division a // b for integers, ZeroDivisionError on a 0 divisor",
            relation=rel.broadcasting(NUMBER), element="a / b", raises=Raises.ON_INTEGERS,
            gradient=lambda s: summed(s, s.op("div", s.g, s.args[1]),
                                      s.op("neg", s.op("div", s.op("mul", s.g, s.out), s.args[1]))),
            rule=gen.binary(NUMBER, "nonzero"), hint=Hint(NUMBER)),
    _binary("pow", np.power, "a ** b (integers to negative integer powers raise ValueError)",
            relation=rel.broadcasting(NUMBER), element="a ** b", raises=Raises.ON_INTEGERS, gradient=_pow_gradient,
            rule=gen.binary(NUMBER, "nonnegative"), hint=Hint(NUMBER)),
    _binary("maximum", np.maximum, "elementwise maximum (nan wins)", relation=rel.broadcasting(NUMBER),
            element="maximum(a, b)", raises=Raises.NEVER, gradient=select("greater_equal"),
            rule=gen.binary(NUMBER), hint=Hint(NUMBER)),
    _binary("minimum", np.minimum, "elementwise minimum (nan wins)", relation=rel.broadcasting(NUMBER),
            element="minimum(a, b)", raises=Raises.NEVER, gradient=select("less_equal"),
            rule=gen.binary(NUMBER), hint=Hint(NUMBER)),
    _comparison("equal", np.equal, "=="),
    _comparison("not_equal", np.not_equal, "!="),
    _comparison("less", np.less, "<"),
    _comparison("less_equal", np.less_equal, "<="),
    _comparison("greater", np.greater, ">"),
    _comparison("greater_equal", np.greater_equal, ">="),
    _binary("logical_and", np.logical_and, "a and b", kinds=BOOL, relation=rel.broadcasting(BOOL),
            element="a and b", raises=Raises.NEVER, rule=gen.binary(BOOL), hint=Hint(BOOL)),
    _binary("logical_or", np.logical_or, "a or b", kinds=BOOL, relation=rel.broadcasting(BOOL),
            element="a or b", raises=Raises.NEVER, rule=gen.binary(BOOL), hint=Hint(BOOL)),
    _binary("where", _where, "a where cond is true, else b; all three broadcast", num_args=3,
            signature="cond, a, b", dtypes="cond bool; a, b any", kinds=None, relation=rel.where, element="where(a, b, c)", raises=Raises.NEVER, gradient=_where_gradient,
            rule=gen.where, hint=Hint(None)),
)
