"""Lowered operators replaced by the operator calls they stand for.

An operator with a ``lowering`` (``layer_norm``, ``logsumexp``, ``clip``, ...) is defined by
other operators: the evaluator runs its NumPy semantics (the oracle), while the compiler and
AD replace each call by its lowering, so it gets its kernels (fused with its neighbours), its
gradient and its place in every pass from the operators it is made of.

The lowering gets a ``Site`` whose arguments are variables bound to the call's arguments
(each computed once however often the lowering reads it), with their types; it returns an
expression of operator calls, or None where the call is primitive as written (``pad`` lowers
its reflect and edge modes and keeps its constant mode). The result needs type inference
again (new nodes are unannotated); a lowering may call lowered operators, which the next
round expands (``ad.lowered`` repeats until nothing changes).
"""

from __future__ import annotations

from typing import Callable

from ..expr import Call, Expr, Let, Op, Var
from ..module import Module
from ..traverse import ExprMutator, post_order
from ..types import Type
from .registry import lookup_op
from .sites import Site

TypeOf = Callable[[Expr], Type]


def has_lowered(expr: Expr) -> bool:
    """Whether ``expr`` calls an operator that has a lowering (which may keep the call)."""
    return any(isinstance(n, Call) and isinstance(n.callee, Op) and _lowering_of(n.callee.name) is not None
               for n in post_order(expr))


def expand_lowered(module: Module, type_of: TypeOf) -> Module:
    """``module`` with every call of a lowered operator replaced by its lowering; ``type_of``
    gives the type of each node of ``module`` (from type inference). ``module`` itself when
    no call was replaced."""
    if not any(has_lowered(fn) for fn in module.functions.values()):
        return module
    functions = {name: _Expand(type_of).mutate(fn) for name, fn in module.functions.items()}
    if all(functions[name] is fn for name, fn in module.functions.items()):
        return module
    return module.with_functions(functions)


def _lowering_of(name: str) -> Callable[[Site], Expr] | None:
    op = lookup_op(name)
    return None if op is None else op.lowering


class _Expand(ExprMutator):
    def __init__(self, type_of: TypeOf):
        super().__init__()
        self.type_of = type_of

    def rewrite(self, old: Expr, new: Expr) -> Expr:
        if not (isinstance(old, Call) and isinstance(old.callee, Op)):
            return new
        op = lookup_op(old.callee.name)
        if op is None or op.lowering is None:
            return new
        types = tuple(self.type_of(a) for a in old.args)
        params = [Var(f"l{i}", t) for i, t in enumerate(types)]
        site = Site(op.name, tuple(params), types, None, self.type_of(old), op.full_attrs(old.attrs), None)
        body = op.lowering(site)
        if body is None:  # primitive as written
            return new
        for param, arg in reversed(list(zip(params, new.args))):
            body = Let(param, arg, body, span=old.span)
        return body
