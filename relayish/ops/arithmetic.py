"""More elementwise arithmetic: transcendental functions, rounding, floor division and modulo.

The names and meanings are TVM Relay's (``relay.erf``, ``relay.tan``, ..., ``relay.floor_mod``),
with NumPy's semantics: ``round`` is NumPy's ``rint`` (halves to even; Relay's LLVM lowering
rounds halves away from zero), ``floor_divide`` and ``floor_mod`` are NumPy's ``floor_divide``
and ``remainder`` (the result of ``floor_mod`` has the divisor's sign, as Python's ``%``), and
``log1p`` and ``expm1`` (not Relay operators; TVM has them as TIR intrinsics) are NumPy's. Each
record's element expression is all the JIT needs: scalar code, CPU, fused and CUDA kernels are
written from it.
"""

from __future__ import annotations

import functools
import math
from typing import TYPE_CHECKING, Callable

import numpy as np

from . import generation as gen, relations as rel
from .adjoints import summed
from .elementwise import FLOAT, NUMBER, define
from .generation import Hint
from .record import OpDef, Pattern, Raises

if TYPE_CHECKING:
    from ..expr import Expr
    from .sites import Site

_TWO_OVER_SQRT_PI = 2.0 / math.sqrt(math.pi)


def _float_unary(name: str, fn: Callable[[np.ndarray], np.ndarray], doc: str, element: str,
                 gradient: Callable[[Site, Expr, Expr, Expr], Expr] | None) -> OpDef:
    """A float-only elementwise operator that never raises; ``gradient(s, g, x, y)`` is the adjoint of x."""
    return define(name, fn, doc, pattern=Pattern.ELEMWISE, kinds=FLOAT, relation=rel.unary(FLOAT), element=element,
                  raises=Raises.NEVER, gradient=None if gradient is None else (lambda s: [gradient(s, s.g, s.args[0],
                                                                                                   s.out)]),
                  rule=gen.unary(FLOAT), hint=Hint(FLOAT))


def _erf(x: np.ndarray) -> np.ndarray:
    # imported here: scipy.special takes 0.23 s to import, a third of a fresh process's first call (W7)
    import scipy.special

    # scipy computes float16 in float32: round back to the argument's dtype
    return scipy.special.erf(x).astype(x.dtype)


def _rsqrt(x: np.ndarray) -> np.ndarray:
    return 1 / np.sqrt(x)


def _sign(x: np.ndarray) -> np.ndarray:
    return np.sign(x)


def _integer_divisor(name: str, a: np.ndarray, b: np.ndarray) -> None:
    """Integer division by zero raises, as ``div``'s does (NumPy would give 0 with a warning)."""
    if a.dtype.kind != FLOAT and np.any(b == 0):
        raise ZeroDivisionError(f"{name}: integer division by zero (a divisor is 0)")


def _floor_divide(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    _integer_divisor("floor_divide", a, b)
    return np.floor_divide(a, b)


def _floor_mod(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    _integer_divisor("floor_mod", a, b)
    return np.remainder(a, b)


def _floor_mod_gradient(s: Site) -> list[Expr | None]:
    """a - floor(a / b) * b: 1 for a, -floor_divide(a, b) for b (the quotient is piecewise constant)."""
    a, b = s.args
    return summed(s, s.g, s.op("neg", s.op("mul", s.g, s.op("floor_divide", a, b))))


_binary = functools.partial(define, pattern=Pattern.BROADCAST, num_args=2, relation=rel.broadcasting(NUMBER),
                            raises=Raises.ON_INTEGERS, rule=gen.binary(NUMBER, "nonzero"), hint=Hint(NUMBER))


OPS = (
    _float_unary("erf", _erf, "error function 2/sqrt(pi) * integral of exp(-t^2) from 0 to x (scipy.special.erf)",
                 "erf(a)", lambda s, g, x, y: s.op("mul", g, s.op("mul", s.const(_TWO_OVER_SQRT_PI),
                                                                    s.op("exp", s.op("neg", s.op("mul", x, x)))))),
    _float_unary("tan", np.tan, "tangent (radians)", "tan(a)",
                 lambda s, g, x, y: s.op("mul", g, s.op("add", s.const(1), s.op("mul", y, y)))),
    _float_unary("atan", np.arctan, "inverse tangent, in [-pi/2, pi/2]", "arctan(a)",
                 lambda s, g, x, y: s.op("div", g, s.op("add", s.const(1), s.op("mul", x, x)))),
    _float_unary("asin", np.arcsin, "inverse sine, in [-pi/2, pi/2] (nan outside [-1, 1])", "arcsin(a)",
                 lambda s, g, x, y: s.op("div", g, s.op("sqrt", s.op("sub", s.const(1), s.op("mul", x, x))))),
    _float_unary("acos", np.arccos, "inverse cosine, in [0, pi] (nan outside [-1, 1])", "arccos(a)",
                 lambda s, g, x, y: s.op("neg", s.op("div", g, s.op("sqrt", s.op("sub", s.const(1),
                                                                                  s.op("mul", x, x)))))),
    _float_unary("sinh", np.sinh, "hyperbolic sine", "sinh(a)",
                 lambda s, g, x, y: s.op("mul", g, s.op("cosh", x))),
    _float_unary("cosh", np.cosh, "hyperbolic cosine", "cosh(a)",
                 lambda s, g, x, y: s.op("mul", g, s.op("sinh", x))),
    _float_unary("rsqrt", _rsqrt, "1 / sqrt(x) (inf at 0, nan for negative numbers)", "1 / sqrt(a)",
                 lambda s, g, x, y: s.op("mul", s.op("mul", g, s.const(-0.5)), s.op("mul", y, s.op("mul", y, y)))),
    _float_unary("log1p", np.log1p, "log(1 + x), accurate for small x (-inf at -1, nan below)", "log1p(a)",
                 lambda s, g, x, y: s.op("div", g, s.op("add", s.const(1), x))),
    _float_unary("expm1", np.expm1, "exp(x) - 1, accurate for small x", "expm1(a)",
                 lambda s, g, x, y: s.op("mul", g, s.op("add", y, s.const(1)))),
    _float_unary("ceil", np.ceil, "smallest integer not below x (a float; ceil(-0.5) = -0.0)", "ceil(a)", None),
    _float_unary("floor", np.floor, "largest integer not above x (a float)", "floor(a)", None),
    _float_unary("trunc", np.trunc, "x rounded toward zero (a float)", "trunc(a)", None),
    _float_unary("round", np.rint, "x rounded to the nearest integer, halves to even as NumPy's round and rint "
                 "(round(2.5) = 2.0, round(-0.5) = -0.0)", "rint(a)", None),
    define("sign", _sign, "-1, 0 or 1 as x is negative, zero or positive (sign(-0.0) = 0.0, nan for nan)",
           pattern=Pattern.ELEMWISE, relation=rel.unary(NUMBER), element="where(a > 0, 1, where(a < 0, -1, a - a))",
           raises=Raises.NEVER, rule=gen.unary(NUMBER), hint=Hint(NUMBER)),
    _binary("floor_divide", _floor_divide,
            "floor(a / b) as NumPy's floor_divide (floats: IEEE, x // 0 is inf or nan); integer division by 0 raises "
            "ZeroDivisionError", element="a // b"),
    _binary("floor_mod", _floor_mod,
            "a - floor_divide(a, b) * b, with b's sign, as NumPy's remainder and Python's % (floats: x % 0 is nan); "
            "integer division by 0 raises ZeroDivisionError", element="a % b", gradient=_floor_mod_gradient),
)
