"""CUDA kernels of the elementwise operators: unary ops, casts, ``*_like``, broadcasting binary ops, ``where``.

One thread per output element reads its arguments through NumPy broadcasting. Transcendentals call
CUDA's libdevice through ``math`` (single precision for float32); integer arithmetic wraps as NumPy's
does (Numba computes small integers in 64 bits and the store truncates); integer ``div`` floor-divides
and reports a zero divisor, integer ``pow`` a negative exponent, as the reference raises. Float16 is
not a CUDA dtype here (``relayish.compile(..., target="cuda")`` rejects it).
"""

from __future__ import annotations

from typing import Sequence

from ..kernels.registry import ArgType, generator
from .launch import broadcast_index, element_body, kernel_module, read

ZERO_DIVISION = {1: ("ZeroDivisionError", "integer division by zero")}
NEGATIVE_POWER = {1: ("ValueError", "Integers to negative integer powers are not allowed.")}

# Outside their domains the functions give IEEE results explicitly (inf, nan): libdevice does, the
# simulator's ``math`` raises instead.
_EXP = "(math.exp({0}) if not ({0} > big) else inf)"
UNARY = {"neg": "-a", "sq": "a * a", "exp": _EXP.format("a"),
         "log": "math.log(a) if a > zero else (-inf if a == zero else nan)",
         "sqrt": "math.sqrt(a) if a >= zero else nan", "tanh": "math.tanh(a)",
         "sin": "math.sin(a) if a - a == zero else nan", "cos": "math.cos(a) if a - a == zero else nan",
         "abs": "abs(a)", "sigmoid": f"one / (one + {_EXP.format('-a')})",
         "relu": "a if (a > zero) or (a != a) else zero",
         "logical_not": "not a", "zeros_like": "zero", "ones_like": "one"}

BINARY = {"add": "a + b", "sub": "a - b", "mul": "a * b", "equal": "a == b", "not_equal": "a != b",
          "less": "a < b", "less_equal": "a <= b", "greater": "a > b", "greater_equal": "a >= b",
          "logical_and": "a and b", "logical_or": "a or b",
          # NaN wins; for equal arguments (-0.0, 0.0) the second, as NumPy's loops give
          "maximum": "b if (a <= b) or (b != b) else a", "minimum": "b if (a >= b) or (b != b) else a"}


def _single(args: Sequence[ArgType], lines: list[str], value: str, errors: dict | None = None) -> str:
    out_rank = max(a.rank for a in args)
    reads = [f"{v} = {read(j, a, broadcast_index(j, a, out_rank))}" for j, (v, a) in enumerate(zip("abc", args))]
    body = element_body("body", args, out_rank, reads + lines, value)
    return kernel_module([body], ["body"], errors=errors)


def _constants(dtype: str) -> list[str]:
    """``zero``, ``one`` (and for floats ``inf``, ``nan`` and ``big``, where exp overflows) of the
    argument's dtype: a Python literal would widen float32 to float64."""
    if dtype == "bool":
        return ["zero = False", "one = True"]
    names = [f"zero = np.{dtype}(0)", f"one = np.{dtype}(1)"]
    if _is_float(dtype):
        names += [f"inf = np.{dtype}(np.inf)", f"nan = np.{dtype}(np.nan)", f"big = np.{dtype}(709.782712893384)"]
    return names


def _unary_generator(op: str):
    def generate(attrs: dict, args: Sequence[ArgType]) -> str:
        return _single(args, _constants(args[0].dtype), UNARY[op])

    generate.__name__ = f"generate_cuda_{op}"
    return generate


for _op in UNARY:
    generator(_op, target="cuda")(_unary_generator(_op))


@generator("cast", target="cuda")
def generate_cast(attrs: dict, args: Sequence[ArgType]) -> str:
    return _single(args, [], _converted(attrs["dtype"].to_numpy().name))


def _converted(dtype: str) -> str:
    """``a`` converted as NumPy casts: to bool is ``!= 0``; integers wrap (C's truncating conversion)."""
    return "a != 0" if dtype == "bool" else f"np.{dtype}(a)"


@generator("cast_like", target="cuda")
def generate_cast_like(attrs: dict, args: Sequence[ArgType]) -> str:
    """Only the first argument's values matter (the second gives the dtype)."""
    out_rank = args[0].rank
    body = element_body("body", args, out_rank, [f"a = {read(0, args[0], [f'o{k}' for k in range(out_rank)])}"],
                        _converted(args[1].dtype))
    return kernel_module([body], ["body"])


def _binary_generator(op: str):
    def generate(attrs: dict, args: Sequence[ArgType]) -> str:
        return _single(args, [], BINARY[op])

    generate.__name__ = f"generate_cuda_{op}"
    return generate


for _op in BINARY:
    generator(_op, target="cuda")(_binary_generator(_op))


def _is_float(dtype: str) -> bool:
    return dtype.startswith("float")


@generator("div", target="cuda")
def generate_div(attrs: dict, args: Sequence[ArgType]) -> str:
    """Floats divide (IEEE); integers floor-divide, ``x // -1`` negates (wrapping for the smallest integer)."""
    if _is_float(args[0].dtype):
        return _single(args, [], "a / b")
    lines = ["if b == 0:", "    err[0] = 1", "    return"]
    signed = not args[0].dtype.startswith("u")
    return _single(args, lines, "-a if b == -1 else a // b" if signed else "a // b", ZERO_DIVISION)


@generator("pow", target="cuda")
def generate_pow(attrs: dict, args: Sequence[ArgType]) -> str:
    """Floats through libdevice's pow; integers by repeated squaring in wrapping arithmetic."""
    if _is_float(args[0].dtype):
        return _single(args, [], "a ** b")
    lines = ["if b < 0:", "    err[0] = 1", "    return",
             "r = a - a + 1", "base = a", "e = b",
             "while e > 0:", "    if e & 1:", "        r = r * base", "    base = base * base", "    e = e >> 1"]
    return _single(args, lines, "r", NEGATIVE_POWER)


@generator("where", target="cuda")
def generate_where(attrs: dict, args: Sequence[ArgType]) -> str:
    return _single(args, [], "b if a else c")
