"""The canonical typed text form (docs/text-format.md), printed without recursion.

Printing is deterministic and faithful: ``parse(astext(m))`` is alpha-equivalent to ``m``
and printing the result again gives the same text. Variables are named from their hints,
made unique across the whole printed text (``%x``, ``%x_1``), so no binding ever shadows
another. Print functions are generators run by ``traverse.trampoline``: ``yield`` on a
sub-term prints it in place.
"""

from __future__ import annotations

import json
from typing import Any, Iterator

import numpy as np

from .dims import Dim, dim_text
from .expr import (
    Ascribe, Call, Constant, Construct, Expr, Function, GlobalVar, Grad, If, IsCtor, Jvp, Let, Match, Vmap,
    Op, Pattern, PatternCtor, PatternTuple, PatternVar, PatternWildcard, Proj, RefNew, RefRead,
    RefWrite, Tuple, Unpack, Var, Zero, written_type,
)  # fmt: skip
from .module import IndexDecl, Module, RelationDecl, TypeDef
from .names import Names
from .traverse import post_order, trampoline
from .types import (
    BaseType, BoolType, DataType, FloatType, ForallType, FuncType, IntType, RefType, Shape,
    TensorType, TupleType, Type, TypeVar, UIntType, data_types_in,
)  # fmt: skip

# Infix and prefix spellings of operators (the paper's BinOp and UnaryOp).
BINARY_OPS = {
    "add": "+", "sub": "-", "mul": "*", "div": "/",
    "equal": "==", "not_equal": "!=", "less": "<", "less_equal": "<=",
    "greater": ">", "greater_equal": ">=",
}  # fmt: skip
UNARY_OPS = {"neg": "-", "sq": "sq"}

# Precedence levels: a sub-expression printed where a tighter level is required gets
# parentheses. Let and if extend as far right as possible, so they sit lowest.
LEVEL_BLOCK, LEVEL_ASSIGN, LEVEL_COMPARE, LEVEL_ADD, LEVEL_MUL, LEVEL_PREFIX, LEVEL_POSTFIX = range(7)
BINARY_LEVELS = {"+": LEVEL_ADD, "-": LEVEL_ADD, "*": LEVEL_MUL, "/": LEVEL_MUL}
for _symbol in ("==", "!=", "<", "<=", ">", ">="):
    BINARY_LEVELS[_symbol] = LEVEL_COMPARE

DTYPE_SUFFIX = {
    IntType(8): "i8", IntType(16): "i16", IntType(64): "i64",
    UIntType(8): "u8", UIntType(16): "u16", UIntType(32): "u32", UIntType(64): "u64",
    FloatType(16): "f16", FloatType(64): "f64",
}  # fmt: skip
MAX_INDENT = 32  # deeper nesting stops indenting further, so text size stays linear


def _binary_symbol(call: Call) -> str | None:
    if isinstance(call.callee, Op) and not call.attrs and len(call.args) == 2:
        return BINARY_OPS.get(call.callee.name)
    return None


def _unary_symbol(call: Call) -> str | None:
    if isinstance(call.callee, Op) and not call.attrs and len(call.args) == 1:
        return UNARY_OPS.get(call.callee.name)
    return None


def _leftmost(e: Expr) -> Expr:
    """The node whose text starts the printed form of ``e`` (at prefix level)."""
    while True:
        if isinstance(e, Proj):
            e = e.tuple_value
        elif isinstance(e, Call) and expr_level(e) == LEVEL_POSTFIX:
            e = e.callee
        else:
            return e


def expr_level(e: Expr) -> int:
    """How tightly ``e``'s printed form binds (higher is tighter)."""
    if isinstance(e, (Let, If)):
        return LEVEL_BLOCK
    if isinstance(e, RefWrite):
        return LEVEL_ASSIGN
    if isinstance(e, Call):
        symbol = _binary_symbol(e)
        if symbol is not None:
            return BINARY_LEVELS[symbol]
        if _unary_symbol(e) is not None:
            return LEVEL_PREFIX
    if isinstance(e, (RefRead, Ascribe)):
        return LEVEL_PREFIX
    if isinstance(e, Constant) and e.value.ndim == 0 and _scalar_text(e).startswith("-"):
        return LEVEL_PREFIX  # "-1.0[0]" would read as -(1.0[0])
    return LEVEL_POSTFIX


def float_text(value: Any) -> str:
    """Shortest text that reads back to exactly this floating value."""
    text = str(value)
    if text in ("nan", "inf", "-inf"):
        return text
    if not any(c in text for c in ".e"):
        text += ".0"
    return text


def _element_text(x: Any, dtype: np.dtype) -> str:
    if dtype.kind == "b":
        return "true" if x else "false"
    if dtype.kind == "f":
        return float_text(x)
    return str(int(x))


def _scalar_text(c: Constant) -> str:
    value = c.value
    text = _element_text(value[()], value.dtype)
    return text + DTYPE_SUFFIX.get(c.dtype, "")


class Printer:
    """One printing session: names are unique across everything it prints."""

    def __init__(self, type_names: frozenset[str] = frozenset()) -> None:
        self.out: list[str] = []
        self.type_names = type_names  # the data types: a type variable named so would hide one
        self.fresh_names()

    # helpers ----------------------------------------------------------------------
    def emit(self, text: str) -> None:
        self.out.append(text)

    def newline(self, indent: int) -> None:
        self.out.append("\n" + "  " * min(indent, MAX_INDENT))

    def var_name(self, v: Var) -> str:
        return "%" + self.vars.name(v, v.name_hint)

    def tvar_name(self, tv: TypeVar) -> str:
        return self.tvars.name(tv, tv.name)

    def text(self) -> str:
        return "".join(self.out)

    def comma_list(self, items: list[Any], each) -> Iterator[Any]:
        for i, item in enumerate(items):
            if i:
                self.emit(", ")
            yield each(item)

    # types ------------------------------------------------------------------------
    def type_(self, t: Type) -> Iterator[Any]:
        if isinstance(t, TypeVar):
            self.emit(self.tvar_name(t))
        elif isinstance(t, (IntType, UIntType, FloatType)):
            self.emit(f"{type(t).__name__}({t.bits})")
        elif isinstance(t, BoolType):
            self.emit("BoolType")
        elif isinstance(t, Shape):
            self.emit("Shape(" + ", ".join(self.dim(d) for d in t.dims) + ")")
        elif isinstance(t, TensorType):
            self.emit("Tensor(")
            yield self.type_(t.dtype)
            self.emit(", ")
            yield self.type_(t.shape)
            self.emit(")")
        elif isinstance(t, TupleType):
            self.emit("(")
            yield from self.comma_list(list(t.fields), self.type_)
            self.emit(",)" if len(t.fields) == 1 else ")")
        elif isinstance(t, FuncType):
            self.emit("(")
            yield from self.comma_list(list(t.params), self.type_)
            self.emit(") -> ")
            yield self.type_(t.ret)
        elif isinstance(t, RefType):
            self.emit("RefType(")
            yield self.type_(t.value)
            self.emit(")")
        elif isinstance(t, DataType):
            self.emit(t.name)
            if t.args:
                self.emit("[")
                yield from self.comma_list(list(t.args), self.type_)
                self.emit("]")
        elif isinstance(t, ForallType):
            self.emit("forall (" + self.type_params(t.params) + "), ")
            yield self.type_(t.body)
        else:
            raise TypeError(f"cannot print {type(t).__name__} as a type")

    def type_params(self, params: tuple[TypeVar, ...]) -> str:
        return ", ".join(f"{self.tvar_name(tv)}: {tv.kind.value}" for tv in params)

    def dim(self, d: Dim) -> str:
        return dim_text(d, self.tvar_name)

    # expressions ------------------------------------------------------------------
    def expr(self, e: Expr, level: int, indent: int) -> Iterator[Any]:
        if expr_level(e) < level:
            self.emit("(")
            yield self.expr(e, LEVEL_BLOCK, indent)
            self.emit(")")
            return
        if isinstance(e, Let):
            yield self.let_chain(e, indent)
        elif isinstance(e, Var):
            self.emit(self.var_name(e))
        elif isinstance(e, (GlobalVar, Op)):
            self.emit("@" + e.name)
        elif isinstance(e, Constant):
            self.emit(self.constant(e))
        elif isinstance(e, Tuple):
            self.emit("(")
            yield from self.comma_list(list(e.fields), lambda f: self.expr(f, LEVEL_BLOCK, indent))
            self.emit(",)" if len(e.fields) == 1 else ")")
        elif isinstance(e, Proj):
            yield self.expr(e.tuple_value, LEVEL_POSTFIX, indent)
            self.emit(f"[{e.index}]")
        elif isinstance(e, If):
            yield self.if_(e, indent)
        elif isinstance(e, Call):
            yield self.call(e, indent)
        elif isinstance(e, Function):
            yield self.function("fn", e, indent)
        elif isinstance(e, Ascribe):
            self.emit("(")
            yield self.type_(e.type)
            self.emit(") ")
            yield self.expr(e.expr, LEVEL_PREFIX, indent)
        elif isinstance(e, Zero):
            self.emit("Zero(")
            yield self.type_(e.type)
            self.emit(")")
        elif isinstance(e, (Grad, Jvp, RefNew)):
            self.emit("Ref(" if isinstance(e, RefNew) else f"{type(e).__name__}(")
            yield self.expr(e.value if isinstance(e, RefNew) else e.func, LEVEL_BLOCK, indent)
            self.emit(")")
        elif isinstance(e, Vmap):
            self.emit("Vmap(")
            yield self.expr(e.func, LEVEL_BLOCK, indent)
            self.emit(f", in_axes={self.attr_value(e.in_axes)})")
        elif isinstance(e, RefRead):
            self.emit("!")
            yield self.expr(e.ref, LEVEL_PREFIX, indent)
        elif isinstance(e, RefWrite):
            yield self.expr(e.ref, LEVEL_COMPARE, indent)
            self.emit(" := ")
            yield self.expr(e.value, LEVEL_COMPARE, indent)
        elif isinstance(e, Construct):
            self.emit(e.ctor)
            if e.fields:  # a constructor without fields is written without parentheses
                self.emit("(")
                yield from self.comma_list(list(e.fields), lambda f: self.expr(f, LEVEL_BLOCK, indent))
                self.emit(")")
        elif isinstance(e, (IsCtor, Unpack)):
            self.emit(f"{'Is' if isinstance(e, IsCtor) else 'Unpack'}[{e.ctor}](")
            yield self.expr(e.value, LEVEL_BLOCK, indent)
            self.emit(")")
        elif isinstance(e, Match):
            yield self.match(e, indent)
        else:
            raise TypeError(f"cannot print {type(e).__name__}")

    def let_chain(self, e: Expr, indent: int) -> Iterator[Any]:
        while isinstance(e, Let):  # chains print flat, one binding a line
            self.emit("let " + self.var_name(e.var))
            if e.var.type_annotation is not None:
                self.emit(": ")
                yield self.type_(e.var.type_annotation)
            self.emit(" = ")
            yield self.expr(e.value, LEVEL_ASSIGN if isinstance(e.value, Let) else LEVEL_BLOCK, indent)
            self.emit(" in")
            self.newline(indent)
            e = e.body
        yield self.expr(e, LEVEL_BLOCK, indent)

    def if_(self, e: If, indent: int) -> Iterator[Any]:
        self.emit("if ")
        yield self.expr(e.cond, LEVEL_ASSIGN, indent)
        self.emit(" then")
        self.newline(indent + 1)
        yield self.expr(e.then_branch, LEVEL_BLOCK, indent + 1)
        self.newline(indent)
        self.emit("else")
        self.newline(indent + 1)
        yield self.expr(e.else_branch, LEVEL_BLOCK, indent + 1)

    def match(self, e: Match, indent: int) -> Iterator[Any]:
        """Each clause on a line of its own, its body on the next, indented as an if's branches."""
        self.emit("match ")
        yield self.expr(e.value, LEVEL_ASSIGN, indent)
        self.emit(" {")
        for i, (pattern, body) in enumerate(zip(e.patterns, e.bodies)):
            if i:
                self.emit(",")
            self.newline(indent + 1)
            yield self.pattern(pattern)
            self.emit(" =>")
            self.newline(indent + 2)
            yield self.expr(body, LEVEL_BLOCK, indent + 2)
        self.newline(indent)
        self.emit("}")

    def pattern(self, p: Pattern) -> Iterator[Any]:
        """A pattern; its variables print without their types (patterns carry no annotations)."""
        if isinstance(p, PatternWildcard):
            self.emit("_")
        elif isinstance(p, PatternVar):
            self.emit(self.var_name(p.var))
        elif isinstance(p, PatternCtor):
            self.emit(p.ctor)
            if p.patterns:
                self.emit("(")
                yield from self.comma_list(list(p.patterns), self.pattern)
                self.emit(")")
        elif isinstance(p, PatternTuple):
            self.emit("(")
            yield from self.comma_list(list(p.patterns), self.pattern)
            self.emit(",)" if len(p.patterns) == 1 else ")")
        else:
            raise TypeError(f"cannot print {type(p).__name__} as a pattern")

    def call(self, e: Call, indent: int) -> Iterator[Any]:
        symbol = _binary_symbol(e)
        if symbol is not None:
            level = BINARY_LEVELS[symbol]
            left_level = level + 1 if level == LEVEL_COMPARE else level  # comparisons do not chain
            yield self.expr(e.args[0], left_level, indent)
            self.emit(f" {symbol} ")
            yield self.expr(e.args[1], level + 1, indent)
            return
        symbol = _unary_symbol(e)
        if symbol is not None:
            operand = e.args[0]
            # "-" touching a number reads back as a negative literal, so keep them apart.
            spaced = symbol != "-" or isinstance(_leftmost(operand), Constant)
            self.emit(symbol + " " if spaced else symbol)
            yield self.expr(operand, LEVEL_PREFIX, indent)
            return
        if isinstance(e.callee, Construct) and not e.callee.fields:
            self.emit(e.callee.ctor + "()")  # "Nil(%x)" would read as the constructor's fields
        else:
            yield self.expr(e.callee, LEVEL_POSTFIX, indent)
        self.emit("(")
        yield from self.comma_list(list(e.args), lambda a: self.expr(a, LEVEL_BLOCK, indent))
        for i, (name, value) in enumerate(e.attrs):
            self.emit((", " if e.args or i else "") + f"{name}={self.attr_value(value)}")
        self.emit(")")

    def attr_value(self, value: Any) -> str:
        if value is None:
            return "none"
        if isinstance(value, bool):
            return "true" if value else "false"
        if isinstance(value, int):
            return str(value)
        if isinstance(value, float):
            return float_text(value)
        if isinstance(value, str):
            return json.dumps(value)
        if isinstance(value, BaseType):
            return trampoline_text(self, value)
        if isinstance(value, tuple):
            inner = ", ".join(self.attr_value(v) for v in value)
            return f"({inner},)" if len(value) == 1 else f"({inner})"
        raise TypeError(f"cannot print attribute value {value!r}")

    def constant(self, c: Constant) -> str:
        if c.value.ndim == 0:
            return _scalar_text(c)
        dtype_text = trampoline_text(self, c.dtype)
        shape = ", ".join(str(n) for n in c.value.shape)
        data = ", ".join(_element_text(x, c.value.dtype) for x in c.value.reshape(-1))
        return f"tensor({dtype_text}, Shape({shape}), [{data}])"

    def function(self, keyword: str, fn: Function, indent: int) -> Iterator[Any]:
        self.emit(keyword + (" primitive" if fn.primitive else ""))
        if fn.type_params:
            self.emit("[" + self.type_params(fn.type_params) + "]")
        self.emit("(" if keyword != "fn" or fn.type_params else " (")
        for i, param in enumerate(fn.params):
            self.emit((", " if i else "") + self.var_name(param))
            if param.type_annotation is not None:
                self.emit(": ")
                yield self.type_(param.type_annotation)
        self.emit(")")
        if fn.ret_type is not None:
            self.emit(" -> ")
            yield self.type_(fn.ret_type)
        self.emit(" {")
        self.newline(indent + 1)
        yield self.expr(fn.body, LEVEL_BLOCK, indent + 1)
        self.newline(indent)
        self.emit("}")

    # modules ----------------------------------------------------------------------
    def fresh_names(self) -> None:
        """Each top-level definition is its own naming scope."""
        self.vars = Names(allow_leading_digit=True)
        self.tvars = Names(allow_leading_digit=False)
        self.tvars.used.update(self.type_names)

    def module(self, m: Module) -> Iterator[Any]:
        """Data types first, then operator declarations, then globals, each in module order."""
        for i, td in enumerate(m.type_defs.values()):
            if i:
                self.emit("\n")
            self.fresh_names()
            yield self.type_def(td)
        for i, (name, ty) in enumerate(m.op_decls.items()):
            if not i and m.type_defs:
                self.emit("\n")
            self.fresh_names()
            if isinstance(ty, IndexDecl):
                self.emit(f"operator @{name}{ty.text}\n")
                continue
            self.emit(f"operator @{name} : ")
            if isinstance(ty, RelationDecl):
                self.emit(f"relation {ty.relation}")
            else:
                yield self.type_(ty)
            self.emit("\n")
        for i, (name, fn) in enumerate(m.functions.items()):
            if i or m.op_decls or m.type_defs:
                self.emit("\n")
            self.fresh_names()
            yield self.function(f"def @{name}", fn, 0)
            self.emit("\n")

    def type_def(self, td: TypeDef) -> Iterator[Any]:
        """``type Name[params] {``, then a constructor a line."""
        self.emit(f"type {td.name}")
        if td.params:
            self.emit("[" + self.type_params(td.params) + "]")
        self.emit(" {")
        for i, ctor in enumerate(td.ctors):
            if i:
                self.emit(",")
            self.newline(1)
            self.emit(ctor.name)
            if ctor.fields:
                self.emit("(")
                yield from self.comma_list(list(ctor.fields), self.type_)
                self.emit(")")
        self.emit("\n}\n")


def trampoline_text(printer: Printer, t: Type) -> str:
    """Print a type to a string within the same naming session."""
    saved, printer.out = printer.out, []
    trampoline(printer.type_(t))
    text, printer.out = printer.text(), saved
    return text


def _data_type_names(root: Expr | Type) -> frozenset[str]:
    """The data types an expression or type outside a module mentions."""
    types = [root] if isinstance(root, Type) else [t for node in post_order(root) if (t := written_type(node)) is not None]
    return frozenset(d.name for t in types for d in data_types_in(t))


def astext(obj: Module | Expr | Type | Dim) -> str:
    """The canonical text of a module, expression, type or dimension."""
    if isinstance(obj, Module):
        type_names = frozenset(obj.type_defs)
    elif isinstance(obj, (Expr, Type)):
        type_names = _data_type_names(obj)
    else:
        type_names = frozenset()
    printer = Printer(type_names)
    if isinstance(obj, Module):
        trampoline(printer.module(obj))
    elif isinstance(obj, Expr):
        trampoline(printer.expr(obj, LEVEL_BLOCK, 0))
    elif isinstance(obj, Type):
        trampoline(printer.type_(obj))
    elif isinstance(obj, Dim):
        return printer.dim(obj)
    else:
        raise TypeError(f"astext takes a Module, Expr, Type or Dim, not {type(obj).__name__}")
    return printer.text()
