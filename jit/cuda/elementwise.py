"""CUDA kernels of the elementwise operators: every operator given by an element expression
(``relayish/ops/element.py``), plus casts.

One thread per output element reads its arguments through NumPy broadcasting and computes the
operator's element expression, written by ``CudaDialect``. Transcendentals call CUDA's
libdevice through ``math`` (single precision for float32); integer arithmetic wraps as NumPy's
does (Numba computes small integers in 64 bits and the store truncates); integer division and
remainder floor and report a zero divisor, integer powers a negative exponent, as the reference
raises. Outside their domains the functions give IEEE results explicitly (inf, nan): libdevice
does, the simulator's ``math`` raises instead. Float16 is not a CUDA dtype here
(``relayish.compile(..., target="cuda")`` rejects it).
"""

from __future__ import annotations

from typing import Sequence

import numpy as np

from relayish.ops.element import translate
from relayish.ops.registry import lookup_op

from ..kernels.elementwise import selection
from ..kernels.registry import ArgType, element_generator, generator
from .launch import broadcast_index, element_body, kernel_module, read

ZERO_DIVISION = ("ZeroDivisionError", "integer division by zero")
NEGATIVE_POWER = ("ValueError", "Integers to negative integer powers are not allowed.")

# function -> expression of {0}, total on every float (constants from ``_constants``)
_FUNCTIONS = {
    "exp": "(math.exp({0}) if not ({0} > big) else inf)",
    "expm1": "(math.expm1({0}) if not ({0} > big) else inf)",
    "log": "(math.log({0}) if {0} > zero else (-inf if {0} == zero else nan))",
    "log1p": "(math.log1p({0}) if {0} > -one else (-inf if {0} == -one else nan))",
    "sqrt": "(math.sqrt({0}) if {0} >= zero else nan)",
    "tanh": "math.tanh({0})",
    "sin": "(math.sin({0}) if {0} - {0} == zero else nan)",
    "cos": "(math.cos({0}) if {0} - {0} == zero else nan)",
    "tan": "(math.tan({0}) if {0} - {0} == zero else nan)",
    "arcsin": "(math.asin({0}) if abs({0}) <= one else nan)",
    "arccos": "(math.acos({0}) if abs({0}) <= one else nan)",
    "arctan": "math.atan({0})",
    "sinh": "(math.sinh({0}) if abs({0}) <= huge else {0} * inf)",
    "cosh": "(math.cosh({0}) if abs({0}) <= huge else abs({0}) * inf)",
    "erf": "math.erf({0})",
    "floor": "_integral({0}, math.floor({0}) if abs({0}) < 4503599627370496.0 else zero)",
    "ceil": "_integral({0}, math.ceil({0}) if abs({0}) < 4503599627370496.0 else zero)",
    # floor or ceil, not math.trunc: the simulator's NumPy float32 scalars have no __trunc__
    "trunc": "_integral({0}, (math.floor({0}) if {0} >= zero else math.ceil({0})) if abs({0}) < 4503599627370496.0 "
             "else zero)",
    "rint": "_integral({0}, _rint({0}) if abs({0}) < 4503599627370496.0 else zero)",
}
# _integral: x itself where it is already integral (NaN, infinities, |x| >= 2**52), else the integer r with x's sign
# (floor(-0.0) and ceil(-0.5) are -0.0); _rint: the nearest integer, halves to even.
_ROUNDING = '''
@cuda.jit(device=True)
def _integral(x, r):
    if not (abs(x) < 4503599627370496.0):
        return x
    return math.copysign(float(r), x)


@cuda.jit(device=True)
def _rint(x):
    f = math.floor(x)
    d = x - f
    if d > 0.5 or (d == 0.5 and f % 2 != 0):
        return f + 1
    return f
'''
# NumPy's floor_divide and remainder of floats (npy_divmod): fmod, then the quotient snapped to an integer
_DIVMOD = '''
@cuda.jit(device=True)
def _divmod(a, b):
    if b == 0:
        return a / b, b / b
    m = math.fmod(a, b) if a - a == 0 else a - a  # fmod of an infinity or NaN is NaN
    d = (a - m) / b
    if m != 0:
        if (b < 0) != (m < 0):
            m += b
            d -= 1
    else:
        m = math.copysign(0.0, b)
    if d != 0:
        q = float(math.floor(d)) if abs(d) < 4503599627370496.0 else d
        if d - q > 0.5:
            q += 1
    else:
        q = math.copysign(0.0, a / b)
    return q, m
'''
_IPOW = '''
@cuda.jit(device=True)
def _ipow(a, b):
    """a ** b for b >= 0 by squaring, in wrapping arithmetic."""
    r = a - a + 1
    while b > 0:
        if b & 1:
            r = r * a
        a = a * a
        b = b >> 1
    return r
'''


class CudaDialect:
    """Writes element expressions for the CUDA kernels: ``lines`` run before the value (checks
    that report through ``err``), ``helpers`` are the device functions the value calls."""

    def __init__(self, args: Sequence[str], dtype: str):
        self.args, self.dtype = list(args), dtype
        self.floating = dtype.startswith("float")
        self.lines: list[str] = []
        self.helpers: dict[str, str] = {}
        self.errors: dict[int, tuple[str, str]] = {}

    def arg(self, index: int) -> str:
        return self.args[index]

    def literal(self, value: int | float | bool) -> str:
        return repr(bool(value)) if self.dtype == "bool" else f"np.{self.dtype}({value!r})"

    def unary(self, op: str, x: str) -> str:
        return f"(not {x})" if op == "not" else f"(-{x})"

    def binary(self, op: str, x: str, y: str) -> str:
        if op in ("//", "%") and self.floating:
            self.helpers["_divmod"] = _DIVMOD
            return f"_divmod({x}, {y})[{int(op == '%')}]"
        if op in ("/", "//", "%") and not self.floating:
            self._report(f"{y} == 0", 1, ZERO_DIVISION)
            if self.dtype.startswith("uint"):
                return f"({x} {'%' if op == '%' else '//'} {y})"
            # x // -1 negates (wrapping for the smallest integer)
            return f"(zero if {y} == -1 else {x} % {y})" if op == "%" else f"(-{x} if {y} == -1 else {x} // {y})"
        if op == "**" and not self.floating:
            self._report(f"{y} < 0", 2, NEGATIVE_POWER)
            self.helpers["_ipow"] = _IPOW
            return f"_ipow({x}, {y})"
        return f"({x} {op} {y})"  # and, or, comparisons, float ** (libdevice's pow), + - * /

    def call(self, name: str, args: list[str]) -> str:
        x = args[0]
        selected = selection(name, args, self.dtype)
        if selected is not None:
            return selected
        if name in ("floor", "ceil", "trunc", "rint"):
            self.helpers["_rounding"] = _ROUNDING
        return _FUNCTIONS[name].format(x)

    def _report(self, condition: str, code: int, error: tuple[str, str]) -> None:
        self.lines += [f"if {condition}:", f"    err[0] = {code}", "    return"]
        self.errors[code] = error


# Past ``big`` exp and expm1 overflow, past ``huge`` sinh and cosh: for float64 the largest arguments whose
# results are finite (the simulator's math raises OverflowError beyond them); for float32 any value past
# float32's overflow (88.7) that math takes without raising, as float32(709.78...) rounds up to 709.78271484375,
# where math.exp raises.
_OVERFLOW = {"float32": ("100.0", "100.0"), "float64": ("709.782712893384", "710.4758600739439")}


def _constants(dtype: str) -> list[str]:
    """``zero``, ``one`` (and for floats ``inf``, ``nan``, ``big`` and ``huge``, past which exp and expm1,
    sinh and cosh overflow) of the argument's dtype: a Python literal would widen float32 to float64."""
    if dtype == "bool":
        return ["zero = False", "one = True"]
    names = [f"zero = np.{dtype}(0)", f"one = np.{dtype}(1)"]
    if dtype.startswith("float"):
        big, huge = _OVERFLOW.get(dtype, _OVERFLOW["float32"])
        names += [f"inf = np.{dtype}(np.inf)", f"nan = np.{dtype}(np.nan)", f"big = np.{dtype}({big})",
                  f"huge = np.{dtype}({huge})"]
    return names


def _single(args: Sequence[ArgType], lines: list[str], value: str, errors: dict | None = None,
            helpers: str = "") -> str:
    out_rank = max(a.rank for a in args)
    reads = [f"{v} = {read(j, a, broadcast_index(j, a, out_rank))}" for j, (v, a) in enumerate(zip("abc", args))]
    body = element_body("body", args, out_rank, reads + lines, value)
    return kernel_module([body], ["body"], helpers=helpers, errors=errors)


@element_generator("cuda")
def generate_element(op: str, attrs: dict, args: Sequence[ArgType]) -> str:
    """The kernel of an operator given by its record's element expression."""
    dtype = next((a.dtype for a in args if a.dtype != "bool"), "bool")
    dialect = CudaDialect("abc"[:len(args)], dtype)
    value = translate(lookup_op(op).element, dialect)
    return _single(args, _constants(dtype) + dialect.lines, value, dialect.errors, "".join(dialect.helpers.values()))


@generator("cast", target="cuda")
def generate_cast(attrs: dict, args: Sequence[ArgType]) -> str:
    return _single(args, [], _converted(args[0].dtype, attrs["dtype"].to_numpy().name))


def _converted(source: str, target: str) -> str:
    """``a`` converted as NumPy's x86-64 cast loops convert it, the CPU kernels' rule (jit/kernels/elementwise.py):
    to bool is ``!= 0``, integers wrap, and floats go to narrow integers through int32 and to uint32/uint64 by the
    compilers' unsigned scheme. Where C leaves a float's conversion undefined (NaN, out of range) x86 gives the
    lowest integer but a GPU saturates (-1.06 to uint8 was 0, not NumPy's 255), so the range test is written out."""
    if target == "bool":
        return "a != 0"
    if np.dtype(source).kind != "f" or np.dtype(target).kind not in "iu":
        return f"np.{target}(a)"
    if target in ("uint32", "uint64"):
        signed, top = ("int32", 2 ** 31) if target == "uint32" else ("int64", 2 ** 63)
        high = _truncated(f"(a - np.{source}({top}.0))", signed, source)
        return (f"(np.{target}({high}) ^ np.{target}({top})) if a >= np.{source}({top}.0) "
                f"else np.{target}({_truncated('a', signed, source)})")
    return f"np.{target}({_truncated('a', 'int64' if target == 'int64' else 'int32', source)})"


def _truncated(value: str, signed: str, source: str) -> str:
    """x86's truncating conversion of a float to int32 or int64: NaN and values out of range give the lowest."""
    top = 2 ** (31 if signed == "int32" else 63)
    return (f"(np.{signed}({value}) if {value} >= np.{source}(-{top}.0) and {value} < np.{source}({top}.0) "
            f"else np.{signed}(-{top - 1} - 1))")


@generator("cast_like", target="cuda")
def generate_cast_like(attrs: dict, args: Sequence[ArgType]) -> str:
    """Only the first argument's values matter (the second gives the dtype)."""
    out_rank = args[0].rank
    body = element_body("body", args, out_rank, [f"a = {read(0, args[0], [f'o{k}' for k in range(out_rank)])}"],
                        _converted(args[0].dtype, args[1].dtype))
    return kernel_module([body], ["body"])
