"""Copies of code: variables substituted, every bound variable renamed (so a copy can sit
beside its original), and instances of polymorphic functions at given type arguments. The
optimizer inlines with these and AD makes instances of polymorphic globals with them."""

from __future__ import annotations

import attrs

from relayish.dims import as_dim
from relayish.expr import Ascribe, Expr, Function, Var, Zero
from relayish.traverse import ExprMutator, bound_vars
from relayish.types import Kind, Type

from .solver import substitute as substitute_type


def substitute(expr: Expr, mapping: dict[int, Expr]) -> Expr:
    """``expr`` with variables (by identity, binders included) replaced by ``mapping``."""

    class Substitute(ExprMutator):
        def rewrite(self, old: Expr, new: Expr) -> Expr:
            return mapping.get(id(old), new) if isinstance(old, Var) else new

    return Substitute().mutate(expr)


def retyped(ty: Type | None, types: dict) -> Type | None:
    """``ty`` with the type variables of ``types`` replaced (dimensions included)."""
    return substitute_type(ty, types) if ty is not None and types else ty


def compose_types(type_args: dict, types: dict) -> dict:
    """``type_args`` (a call site's instantiation, in terms of its enclosing global's type
    parameters) with those parameters replaced by ``types`` (that global's own instance)."""
    if not types:
        return type_args
    dims = {tv: as_dim(v) for tv, v in types.items() if tv.kind is Kind.DIM}
    return {tv: as_dim(v).substitute(dims) if tv.kind is Kind.DIM else substitute_type(v, types)
            for tv, v in type_args.items()}


def fresh_copy(expr: Expr, types: dict | None = None) -> Expr:
    """``expr`` with every variable it binds renamed to a new one (same hint, type, span), so
    the copy can sit beside the original: each Var object is bound in one place only.
    ``types`` maps type variables to what replaces them in every type the copy carries
    (annotations, results, ``Zero`` and ``Ascribe``): an instance of a polymorphic body."""
    mapping: dict[int, Expr] = {
        id(v): Var(v.name_hint, retyped(v.type_annotation, types), span=v.span) for v in bound_vars(expr)
    }
    if not types:
        return substitute(expr, mapping) if mapping else expr

    class Retype(ExprMutator):
        def rewrite(self, old: Expr, new: Expr) -> Expr:
            if isinstance(old, Var):
                return mapping.get(id(old), new)
            if isinstance(new, Function) and new.ret_type is not None:
                return attrs.evolve(new, ret_type=retyped(new.ret_type, types))
            if isinstance(new, (Zero, Ascribe)):
                return attrs.evolve(new, type=retyped(new.type, types))
            return new

    return Retype().mutate(expr)


def instantiated(fn: Function, type_args: dict | None) -> Function | None:
    """A fresh copy of ``fn``; of a polymorphic ``fn``, its instance at ``type_args`` (what
    ``typecheck.type_arguments`` found at one call site), or None where the call site does
    not determine every type parameter."""
    if not fn.type_params:
        return fresh_copy(fn)
    if type_args is None or any(tv not in type_args for tv in fn.type_params):
        return None
    copy = fresh_copy(fn, {tv: type_args[tv] for tv in fn.type_params})
    return attrs.evolve(copy, type_params=())
