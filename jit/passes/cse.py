"""Common subexpression elimination within scopes.

An operator call, projection or tuple whose operands are the same (the same variables
after earlier merges, equal constants, the same globals; with the same operator and
attributes) as one already bound by a ``let`` that dominates it is replaced by that
``let``'s variable; a ``let`` so replaced is dropped. Operators are functions of their
arguments, so this holds even for one that may raise: the earlier one raised first.
Never merged: ``Ref(..)`` (each makes a new cell), ``!r`` (the cell may change between
reads), calls of functions (they may have effects). A binding inside an ``if`` branch or a
function body is forgotten when that scope ends: it does not dominate what follows.
"""

from __future__ import annotations

from typing import Any, Hashable

from relayish.expr import Call, Constant, Expr, GlobalVar, Let, Op, Proj, Tuple, Var
from relayish.module import Module
from relayish.ops.registry import lookup_op

from .util import ScopedRewriter, map_functions


def eliminate_common_subexpressions(module: Module) -> Module:
    """``module`` with repeated pure operator calls, projections and tuples merged."""
    return map_functions(module, lambda fn: _CSE().rewrite_function(fn))


class _CSE(ScopedRewriter):
    def __init__(self) -> None:
        super().__init__()
        self.available: dict[int, Var] = {}  # key of an expression -> the variable bound to it
        self.added: list[int] = []  # keys in the order they became available, to forget by scope
        self.interned: dict[Hashable, int] = {}  # keys are small ints: nesting never hashes deep tuples
        self.keys: dict[int, tuple[Expr, int | None]] = {}  # id(node) -> (node, its key)

    def key(self, e: Expr) -> int | None:
        """Equal keys mean equal values: a flat description over the operands' keys."""
        known = self.keys.get(id(e))
        if known is not None:
            return known[1]
        parts: Any = None
        if isinstance(e, Var):
            parts = ("var", id(e))
        elif isinstance(e, Constant):
            parts = ("const", str(e.value.dtype), e.value.shape, e.value.tobytes())
        elif isinstance(e, GlobalVar):
            parts = ("global", e.name)
        elif isinstance(e, Call) and isinstance(e.callee, Op) and lookup_op(e.callee.name) is not None:
            parts = self.compound(("call", e.callee.name, _attrs_key(e.attrs)), e.args)
        elif isinstance(e, Proj):
            parts = self.compound(("proj", e.index), (e.tuple_value,))
        elif isinstance(e, Tuple):
            parts = self.compound(("tuple",), e.fields)
        key = None if parts is None else self.interned.setdefault(parts, len(self.interned))
        self.keys[id(e)] = (e, key)
        return key

    def compound(self, head: tuple, operands: tuple[Expr, ...]) -> tuple | None:
        keys = [self.key(o) for o in operands]
        return None if None in keys else (*head, *keys)

    def bind(self, let: Let, value: Expr) -> Expr | None:
        if isinstance(value, Var) and not isinstance(let.value, Var):  # the value was merged
            self.subst[id(let.var)] = value
            return None
        if not isinstance(value, (Call, Proj, Tuple)):
            return value
        key = self.key(value)
        if key is not None and key not in self.available:
            self.available[key] = let.var
            self.added.append(key)
        return value

    def rebuild(self, old: Expr, new: Expr) -> Expr:
        if isinstance(new, (Call, Proj, Tuple)):
            key = self.key(new)
            if key is not None and key in self.available:
                return self.available[key]
        return new

    def enter_scope(self) -> int:
        return len(self.added)

    def leave_scope(self, token: int) -> None:
        while len(self.added) > token:
            del self.available[self.added.pop()]


def _attrs_key(attrs: tuple[tuple[str, Any], ...]) -> tuple:
    """Attributes compared as written: NaN equals NaN, -0.0 differs from 0.0."""
    return tuple((name, type(v).__name__, v.hex() if isinstance(v, float) else repr(v)) for name, v in attrs)
