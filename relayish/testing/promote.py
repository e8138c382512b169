"""``to_float64``: a module rewritten to compute in float64, for finite differences.

Central differences in float32 lose most of their digits to rounding; the same program in
float64 gives a gradient oracle accurate to about 1e-10.
"""

from __future__ import annotations

from typing import Any, Iterator

import attrs
import numpy as np

from ..expr import Ascribe, Call, Constant, Expr, Function, Var, Zero
from ..module import Module
from ..traverse import ExprMutator, trampoline
from ..types import FloatType, Type

FLOAT64 = FloatType(64)


def promote_type(ty: Type) -> Type:
    """``ty`` with every FloatType(16) and FloatType(32) in it replaced by FloatType(64)."""

    def walk(t: Type) -> Iterator[Any]:
        if isinstance(t, FloatType) and t.bits < 64:
            return FLOAT64
        changes = {}
        for field in attrs.fields(type(t)):
            value = getattr(t, field.name) if field.init else None
            if isinstance(value, Type):
                new = yield walk(value)
                if new is not value:
                    changes[field.name] = new
            elif isinstance(value, tuple) and any(isinstance(v, Type) for v in value):
                items = []
                for item in value:
                    items.append((yield walk(item)))
                if any(a is not b for a, b in zip(items, value)):
                    changes[field.name] = tuple(items)
        return attrs.evolve(t, **changes) if changes else t

    return trampoline(walk(ty))


def promote_array(value: Any) -> Any:
    """A floating array as float64; anything else unchanged."""
    if isinstance(value, np.ndarray) and value.dtype.kind == "f":
        return value.astype(np.float64)
    return value


def _promote_optional(ty: Type | None) -> Type | None:
    return None if ty is None else promote_type(ty)


class _Promote(ExprMutator):
    """Rewrites floating types, constants and dtype attributes; each Var becomes one new Var.

    Binders are children of their Let or Function, and the mutator rewrites each node
    object once, so a binder and all its uses get the same replacement.
    """

    def rewrite(self, old: Expr, new: Expr) -> Expr:
        if isinstance(new, Var):
            ty = _promote_optional(new.type_annotation)
            return new if ty is new.type_annotation else Var(new.name_hint, ty, span=new.span)
        if isinstance(new, Function):
            return attrs.evolve(new, ret_type=_promote_optional(new.ret_type))
        if isinstance(new, (Ascribe, Zero)):
            return attrs.evolve(new, type=promote_type(new.type))
        if isinstance(new, Constant):
            return attrs.evolve(new, value=promote_array(new.value))
        if isinstance(new, Call) and new.attrs:
            return attrs.evolve(new, attrs=[(k, promote_type(v) if isinstance(v, Type) else v) for k, v in new.attrs])
        return new


def to_float64(module: Module) -> Module:
    """``module`` with float16 and float32 replaced by float64 everywhere.

    That is: parameter and let annotations, function result types, ascriptions, ``Zero``
    types, constants, operator attributes that are base types (``cast``'s ``dtype``), declared
    operators' types and the fields of data types. Type parameters are left as they are.
    """
    mutator = _Promote()
    functions = {name: mutator.mutate(fn) for name, fn in module.functions.items()}
    op_decls = {name: promote_type(ty) for name, ty in module.op_decls.items()}
    type_defs = {name: attrs.evolve(td, ctors=[attrs.evolve(c, fields=[promote_type(f) for f in c.fields]) for c in td.ctors])
                 for name, td in module.type_defs.items()}
    return Module(functions, op_decls, type_defs)
