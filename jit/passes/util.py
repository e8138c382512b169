"""What the IR-to-IR passes share: a scoped rewriter, substitution and fresh copies, and
the purity rules (which expressions may be dropped, duplicated or merged).

Purity is decided from types where they are known and conservatively where not: an
operator call "cannot fail" only when the types of its arguments say so (concrete dtypes,
and the static shapes some operators need). The types come from a ``type_of`` function;
the default reads what ``typecheck.infer`` leaves in the program: variable annotations (an
operator call bound by a ``let`` has the type of its variable) and constants.
"""

from __future__ import annotations

from typing import Any, Callable, Iterable, Iterator

import attrs
import numpy as np

from relayish.expr import (
    Ascribe, Call, Constant, Expr, Function, GlobalVar, Grad, If, Jvp, Let, Vmap, Op, RefWrite, Unpack, Var, Zero, written_type,
)  # fmt: skip
from relayish.module import Module
from relayish.ops.record import Raises
from relayish.ops.registry import lookup_op
from relayish.traverse import post_order, trampoline, with_children
from relayish.types import BaseType, FloatType, Shape, TensorType, TupleType, Type, has_unknown_dim
from typecheck.instances import compose_types, fresh_copy, instantiated, retyped, substitute

Step = Iterator[Any]
TypeOf = Callable[[Expr], "Type | None"]

ATOMS = (Var, GlobalVar, Constant, Op)


def map_functions(module: Module, rewrite: Callable[[Function], Function]) -> Module:
    """``module`` with every global rewritten; operator declarations kept."""
    return module.with_functions({name: rewrite(fn) for name, fn in module.functions.items()})


def lets(bindings: list[tuple[Var, Expr, Any]], body: Expr) -> Expr:
    """``let v1 = e1 in ... body`` from ``(var, value, span)`` triples, innermost last."""
    for var, value, span in reversed(bindings):
        body = Let(var, value, body, span=span)
    return body


class ScopedRewriter:
    """Rewrites a function top-down in evaluation order, without Python recursion.

    ``bind(let, value)`` sees each ``let`` with its value already rewritten and returns the
    value to bind, or None to drop the binding (recording the variable's replacement in
    ``subst``); ``rebuild(old, new)`` sees every other node after its children.
    ``enter_scope``/``leave_scope`` bracket what is visible only inside: the body of a ``let``
    chain, an ``if`` branch, a function body. A fusion group (``fn primitive``) is one kernel
    and is left as it is.
    """

    def __init__(self) -> None:
        self.subst: dict[int, Expr] = {}

    def bind(self, let: Let, value: Expr) -> Expr | None:
        return value

    def rebuild(self, old: Expr, new: Expr) -> Expr:
        return new

    def use(self, var: Var) -> Expr:
        return self.subst.get(id(var), var)

    def enter_scope(self) -> Any:
        return None

    def leave_scope(self, token: Any) -> None:
        pass

    def rewrite_function(self, fn: Function) -> Function:
        return trampoline(self.function(fn))

    def function(self, fn: Function) -> Step:
        token = self.enter_scope()
        body = yield self.visit(fn.body)
        self.leave_scope(token)
        return fn if body is fn.body else attrs.evolve(fn, body=body)

    def scoped(self, e: Expr) -> Step:
        token = self.enter_scope()
        result = yield self.visit(e)
        self.leave_scope(token)
        return result

    def visit(self, e: Expr) -> Step:
        if isinstance(e, Var):
            return self.use(e)
        if isinstance(e, Let):
            return (yield self.scoped_lets(e))
        if isinstance(e, Function):
            return self.rebuild(e, e if e.primitive else (yield self.function(e)))
        if isinstance(e, If):
            cond = yield self.visit(e.cond)
            then_branch = yield self.scoped(e.then_branch)
            else_branch = yield self.scoped(e.else_branch)
            return self.rebuild(e, with_children(e, [cond, then_branch, else_branch]))
        children = []
        for child in e.children():
            children.append((yield self.visit(child)))
        return self.rebuild(e, with_children(e, children))

    def scoped_lets(self, e: Let) -> Step:
        token = self.enter_scope()
        bindings: list[tuple[Let, Expr]] = []
        while isinstance(e, Let):  # one frame for a whole chain
            value = yield self.visit(e.value)
            kept = self.bind(e, value)
            if kept is not None:
                bindings.append((e, kept))
            e = e.body
        body = yield self.visit(e)
        self.leave_scope(token)
        for let, value in reversed(bindings):
            body = let if value is let.value and body is let.body else Let(let.var, value, body, span=let.span)
        return body


def let_values(nodes: Iterable[Expr]) -> dict[int, Expr]:
    """The value each ``let`` variable among ``nodes`` is bound to, by ``id`` of the variable."""
    return {id(n.var): n.value for n in nodes if isinstance(n, Let)}


def annotation_types(nodes: Iterable[Expr]) -> TypeOf:
    """The types ``infer`` leaves among ``nodes`` (a function's, in post order): variables'
    annotations, constants' types, and a let-bound expression has its variable's type."""
    bound = {id(n.value): n.var.type_annotation for n in nodes if isinstance(n, Let)}

    def type_of(e: Expr) -> Type | None:
        if isinstance(e, Var):
            return e.type_annotation
        if isinstance(e, Constant):
            return TensorType(e.dtype, Shape(*e.value.shape))
        if isinstance(e, Ascribe):
            return e.type
        return bound.get(id(e))

    return type_of


def _static_shape(ty: Type | None) -> tuple[int, ...] | None:
    if isinstance(ty, TensorType) and isinstance(ty.shape, Shape):
        return ty.shape.static()
    return None


def _static_past_batch(ty: Type) -> bool:
    """Every dimension after the first is a number."""
    return isinstance(ty.shape, Shape) and all(d.value is not None for d in ty.shape.dims[1:])


def op_cannot_fail(call: Call, type_of: TypeOf) -> bool:
    """Whether an operator call can never raise, judged by the types of its arguments."""
    op = lookup_op(call.callee.name)
    if op is None:
        return False  # a declared operator has no implementation: calling it raises
    arg_types = [type_of(a) for a in call.args]
    if not all(isinstance(t, TensorType) and isinstance(t.dtype, BaseType) for t in arg_types):
        return False  # a dtype variable may stand for a dtype the operator refuses at run time
    if any(map(has_unknown_dim, arg_types)):
        return False  # sizes the checker took on trust: the relation checks them at run time
    raises = op.raises
    if raises == Raises.NEVER:
        return True
    if raises == Raises.ON_INTEGERS:
        return all(isinstance(t.dtype, FloatType) for t in arg_types)
    if raises == Raises.UNLESS_RANKED:
        return all(isinstance(t.shape, Shape) for t in arg_types)
    if raises == Raises.ON_WINDOWS:  # windows slide over axes 2 and 3 (NCHW); a symbolic batch is never in one
        return all(map(_static_past_batch, arg_types))
    if raises == Raises.ON_EMPTY:
        return all(s is not None and 0 not in s for s in map(_static_shape, arg_types))
    if raises.indexed is not None:
        return _indices_in_bounds(call, arg_types[raises.indexed])
    return False


def _indices_in_bounds(call: Call, indexed: TensorType) -> bool:
    """Constant indices, each inside the static size they index (take's error is out of bounds);
    the other dimensions may be symbolic."""
    indices = call.args[1]
    if not isinstance(indices, Constant) or not isinstance(indexed.shape, Shape):
        return False
    dims = indexed.shape.dims
    axis = lookup_op(call.callee.name).full_attrs(call.attrs)["axis"]
    if axis is None:
        static = indexed.shape.static()
        size = None if static is None else int(np.prod(static))
    else:
        size = dims[axis].value if -len(dims) <= axis < len(dims) else 0
    if size is None:
        return False
    values = indices.value
    return values.size == 0 or bool(values.min() >= 0 and values.max() < size)


def _zero_is_static(ty: Type) -> bool:
    stack = [ty]
    while stack:
        t = stack.pop()
        if isinstance(t, TupleType):
            stack.extend(t.fields)
        elif _static_shape(t) is None:
            return False
    return True


def removable_nodes(nodes: list[Expr], type_of: TypeOf | None = None) -> set[int]:
    """``id``s of the ``nodes`` (in post order, e.g. ``list(post_order(fn))``) whose evaluation
    has no effect and cannot fail, so they can be dropped when their value is unused: no calls
    of functions, no ``:=``, no operator that may raise. A function literal is removable
    whatever its body: making a closure runs nothing. Reading or creating a reference is
    removable too. ``type_of`` defaults to ``annotation_types(nodes)``."""
    type_of = type_of or annotation_types(nodes)
    removable: set[int] = set()
    for node in nodes:
        if isinstance(node, (Function, *ATOMS)):
            removable.add(id(node))
            continue
        if isinstance(node, (Grad, Jvp, Vmap, RefWrite, Unpack)) or isinstance(node, Ascribe) and checks_sizes(node, type_of):
            continue
        if isinstance(node, Call) and not (isinstance(node.callee, Op) and op_cannot_fail(node, type_of)):
            continue
        if isinstance(node, Zero) and not _zero_is_static(node.type):
            continue  # a symbolic size not known where Zero runs is an error
        children = node.args if isinstance(node, Call) else tuple(node.children())
        if isinstance(node, Let):
            children = (node.value, node.body)
        if all(id(c) in removable for c in children):
            removable.add(id(node))
    return removable


def checks_sizes(e: Ascribe, type_of: TypeOf) -> bool:
    """Whether ascription ``e`` checks sizes at run time (so it may fail): the type of what it
    ascribes has ``?`` (the checker puts one where such a value meets a known size)."""
    inner = type_of(e.expr)
    return inner is None or has_unknown_dim(inner) and inner != e.type


def _unknown_sizes(name: str) -> bool:
    op = lookup_op(name)
    return op is not None and op.unknown_sizes  # None: an operator only declared, which raises when called


def mentions_unknown_dim(module: Module) -> bool:
    """Whether a type written in ``module`` (an annotation, a result, an ascription) has ``?``, or
    ``module`` calls an operator whose result type has ``?`` whatever its arguments' (``OpDef.unknown_sizes``):
    where neither, no ascription checks anything."""
    for fn in module.functions.values():
        for node in post_order(fn):
            if isinstance(node, Op) and _unknown_sizes(node.name):
                return True
            ty = written_type(node)
            if ty is not None and has_unknown_dim(ty):
                return True
    return False


def is_removable(expr: Expr, type_of: TypeOf | None = None) -> bool:
    """Whether ``expr`` can be dropped when its value is unused (see ``removable_nodes``)."""
    return isinstance(expr, ATOMS) or id(expr) in removable_nodes(list(post_order(expr)), type_of)


__all__ = [
    "ATOMS", "ScopedRewriter", "annotation_types", "checks_sizes", "mentions_unknown_dim", "compose_types", "fresh_copy", "instantiated", "is_removable", "let_values",
    "lets", "map_functions", "op_cannot_fail", "removable_nodes", "retyped", "substitute",
]  # fmt: skip
