"""A-normal form: every intermediate result gets a name, in evaluation order.

After ``to_anf`` the operands of every call, tuple, projection, reference operation
and ``Grad`` are atoms (variables, globals, constants), and every non-atomic
sub-expression is bound by a ``let`` in the order the evaluator runs it: arguments left
to right and then the callee, a reference before the value written to it. Each scope (a
function body, an ``if`` branch) is a chain of ``let``s ending in one expression over atoms,
which stays unbound so that calls in tail position remain tail calls; an ascription wraps such
an expression (not an atom bound before it), so a call it checks stays a tail call too. Nested ``let`` chains
are flattened into the enclosing one (each variable is bound once, so nothing is captured).
Fresh variables are left unannotated: ``infer`` gives them their types. A fusion group
(``fn primitive``) stays where it is called, as it is.
"""

from __future__ import annotations

import attrs

from relayish.expr import Ascribe, Call, Expr, Function, If, Let, Op, Proj, RefNew, RefRead, RefWrite, Tuple, Var
from relayish.module import Module
from relayish.traverse import trampoline, with_children

from .util import ATOMS, Step, lets, map_functions

Bindings = list[tuple[Var, Expr, object]]


def to_anf(module: Module) -> Module:
    """``module`` in A-normal form; it computes the same, with effects in the same order."""
    return map_functions(module, lambda fn: trampoline(_function(fn)))


def _function(fn: Function) -> Step:
    body = yield _scope(fn.body)
    return fn if body is fn.body else attrs.evolve(fn, body=body)


def _scope(e: Expr) -> Step:
    out: Bindings = []
    tail = yield _normalize(e, out)
    return lets(out, tail)


def _atom(e: Expr, out: Bindings) -> Step:
    """``e``'s bindings appended to ``out``; its value as an atom."""
    simple = yield _normalize(e, out)
    if isinstance(simple, ATOMS):
        return simple
    var = Var(_hint(simple), span=e.span)
    out.append((var, simple, e.span))
    return var


def _stays(callee: Expr) -> bool:
    """An operator, or a fusion group (``fn primitive``), which is called where it is written."""
    return isinstance(callee, Op) or isinstance(callee, Function) and callee.primitive


def _hint(e: Expr) -> str:
    if isinstance(e, Call) and isinstance(e.callee, Op):
        return e.callee.name
    return {Function: "fn", Tuple: "tup", Proj: "p", RefNew: "ref", RefRead: "r", RefWrite: "u"}.get(type(e), "t")


def _normalize(e: Expr, out: Bindings) -> Step:
    """``e``'s bindings appended to ``out``; what is left: an expression over atoms."""
    while isinstance(e, Let):
        value = yield _normalize(e.value, out)
        out.append((e.var, value, e.span))
        e = e.body
    if isinstance(e, ATOMS):
        return e
    if isinstance(e, If):
        cond = yield _atom(e.cond, out)
        then_branch = yield _scope(e.then_branch)
        else_branch = yield _scope(e.else_branch)
        return If(cond, then_branch, else_branch, span=e.span)
    if isinstance(e, Function):
        return e if e.primitive else (yield _function(e))
    if isinstance(e, Ascribe):
        return Ascribe((yield _normalize(e.expr, out)), e.type, span=e.span)
    if isinstance(e, Call):
        args = []
        for arg in e.args:  # the evaluator runs the arguments first, then the callee
            args.append((yield _atom(arg, out)))
        callee = e.callee if _stays(e.callee) else (yield _atom(e.callee, out))
        return Call(callee, args, e.attrs, span=e.span)
    operands = []
    for child in e.children():  # tuples, projections, references, Grad, Zero: in field order
        operands.append((yield _atom(child, out)))
    return with_children(e, operands)
