"""The element language: an elementwise operator's value at one element, written once.

An elementwise or broadcasting operator's record gives ``element``, an expression over its
arguments' elements ``a``, ``b``, ``c``. Each backend translates it (``translate`` with a
``Dialect``): the compiled programs' scalar code on NumPy scalars, the CPU kernels and the
fused kernels (Numba), the CUDA kernels. So a new elementwise operator needs no kernel of
its own: its record is its kernel.

The language is a small subset of Python expressions:

- the arguments ``a``, ``b``, ``c``; number literals and ``True``/``False``;
- ``-x``, ``x + y``, ``x - y``, ``x * y``, ``x / y``, ``x // y``, ``x % y``, ``x ** y``;
- comparisons ``==``, ``!=``, ``<``, ``<=``, ``>``, ``>=`` (one at a time), giving bools;
- ``not x``, ``x and y``, ``x or y`` on bools;
- calls of the functions in ``FUNCTIONS``, and ``where(cond, x, y)``.

Every value has the dtype of the operator's computation: that of argument ``a`` (of ``b`` for
an operator whose first argument is a condition), bool for comparisons and logic. Literals
take that dtype. Each operation means what the NumPy operator of the same name does on
that dtype (``/`` is relayish's ``div``: floor division for integers; integer ``/``, ``//``
and ``%`` by zero raise ZeroDivisionError, integer ``**`` with a negative exponent
ValueError); the reference semantics stay the record's ``compute``, which the tests hold
every backend to.
"""

from __future__ import annotations

import ast
import functools
from typing import Protocol

ARGS = ("a", "b", "c")

# name -> (arity, meaning); each is NumPy's function of that name on one dtype
FUNCTIONS: dict[str, tuple[int, str]] = {
    "exp": (1, "e ** x"),
    "log": (1, "natural logarithm"),
    "sqrt": (1, "square root"),
    "tanh": (1, "hyperbolic tangent"),
    "sin": (1, "sine"),
    "cos": (1, "cosine"),
    "tan": (1, "tangent"),
    "arcsin": (1, "inverse sine"),
    "arccos": (1, "inverse cosine"),
    "arctan": (1, "inverse tangent"),
    "sinh": (1, "hyperbolic sine"),
    "cosh": (1, "hyperbolic cosine"),
    "erf": (1, "error function (scipy.special.erf)"),
    "log1p": (1, "log(1 + x), accurate for small x"),
    "expm1": (1, "exp(x) - 1, accurate for small x"),
    "floor": (1, "largest integer not above x"),
    "ceil": (1, "smallest integer not below x"),
    "trunc": (1, "x rounded toward zero"),
    "rint": (1, "x rounded to the nearest integer, halves to even"),
    "abs": (1, "absolute value"),
    "maximum": (2, "the larger (NaN wins; of equal arguments the second)"),
    "minimum": (2, "the smaller (NaN wins; of equal arguments the second)"),
    "where": (3, "x where cond, else y"),
}

_BINARY = {ast.Add: "+", ast.Sub: "-", ast.Mult: "*", ast.Div: "/", ast.FloorDiv: "//", ast.Mod: "%", ast.Pow: "**"}
_COMPARE = {ast.Eq: "==", ast.NotEq: "!=", ast.Lt: "<", ast.LtE: "<=", ast.Gt: ">", ast.GtE: ">="}


class Dialect(Protocol):
    """How one backend writes each construct; every method returns source text."""

    def arg(self, index: int) -> str: ...
    def literal(self, value: int | float | bool) -> str: ...
    def unary(self, op: str, x: str) -> str: ...  # "-" or "not"
    def binary(self, op: str, x: str, y: str) -> str: ...  # + - * / // % ** and or, == != < <= > >=
    def call(self, name: str, args: list[str]) -> str: ...


class ElementError(ValueError):
    """An element expression outside the language."""


@functools.cache
def parse(text: str) -> ast.expr:
    """The checked syntax tree of ``text`` (ElementError saying what is not allowed)."""
    try:
        tree = ast.parse(text, mode="eval").body
    except SyntaxError as err:
        raise ElementError(f"element expression {text!r}: {err.msg}") from None
    for node in ast.walk(tree):
        _check(node, text)
    return tree


def _check(node: ast.AST, text: str) -> None:
    ok = (
        isinstance(node, (ast.expr_context, ast.operator, ast.unaryop, ast.cmpop, ast.boolop))
        or isinstance(node, ast.Name) and node.id in ARGS
        or isinstance(node, ast.Constant) and type(node.value) in (int, float, bool)
        or isinstance(node, ast.UnaryOp) and isinstance(node.op, (ast.USub, ast.Not))
        or isinstance(node, ast.BinOp) and type(node.op) in _BINARY
        or isinstance(node, ast.BoolOp)
        or isinstance(node, ast.Compare) and len(node.ops) == 1 and type(node.ops[0]) in _COMPARE
        or isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and not node.keywords
        and FUNCTIONS.get(node.func.id, (None,))[0] == len(node.args)
    )
    if not ok and not (isinstance(node, ast.Name) and node.id in FUNCTIONS):  # a called function's name
        raise ElementError(f"element expression {text!r}: {ast.unparse(node)!r} is not in the element language "
                           f"(arguments {', '.join(ARGS)}, numbers, operators, {', '.join(sorted(FUNCTIONS))})")


def arguments_used(text: str) -> frozenset[int]:
    """The argument positions ``text`` reads."""
    return frozenset(ARGS.index(n.id) for n in ast.walk(parse(text)) if isinstance(n, ast.Name) and n.id in ARGS)


def fill_value(text: str) -> int | float | bool | None:
    """The constant ``text`` is (``zeros_like``'s ``0``), or None when it reads an argument."""
    tree = parse(text)
    return tree.value if isinstance(tree, ast.Constant) else None


def gives_bool(text: str) -> bool:
    """Whether ``text`` is a comparison or logic (a bool result) rather than a value of the
    computation dtype."""
    tree = parse(text)
    return isinstance(tree, (ast.Compare, ast.BoolOp)) or isinstance(tree, ast.UnaryOp) and isinstance(tree.op, ast.Not)


def translate(text: str, dialect: Dialect) -> str:
    """``text`` written in ``dialect``, fully parenthesized."""
    return _write(parse(text), dialect)


def _write(node: ast.expr, d: Dialect) -> str:
    # Element expressions are a line of an operator record: their nesting is tiny, so recursion is safe here.
    if isinstance(node, ast.Name):
        return d.arg(ARGS.index(node.id))
    if isinstance(node, ast.Constant):
        return d.literal(node.value)
    if isinstance(node, ast.UnaryOp):
        return d.unary("-" if isinstance(node.op, ast.USub) else "not", _write(node.operand, d))
    if isinstance(node, ast.BinOp):
        return d.binary(_BINARY[type(node.op)], _write(node.left, d), _write(node.right, d))
    if isinstance(node, ast.Compare):
        return d.binary(_COMPARE[type(node.ops[0])], _write(node.left, d), _write(node.comparators[0], d))
    if isinstance(node, ast.BoolOp):
        op = "and" if isinstance(node.op, ast.And) else "or"
        parts = [_write(v, d) for v in node.values]
        result = parts[0]
        for part in parts[1:]:
            result = d.binary(op, result, part)
        return result
    assert isinstance(node, ast.Call) and isinstance(node.func, ast.Name)
    return d.call(node.func.id, [_write(a, d) for a in node.args])
