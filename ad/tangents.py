"""Forward rules: an operator call's tangent, derived from its gradient rule by transposition.

An operator's ``gradient`` (``OpDef.gradient``) gives, for the adjoint ``g`` of its result, each
argument's contribution ``c_i(g) = J_i^T g``: linear in ``g``. Its forward rule is the other
product, the tangent of the result for tangents ``t_i`` of the arguments, ``sum_i J_i t_i``; and
since ``<c_i(g), t_i> = <g, J_i t_i>``, that is the gradient with respect to ``g`` of
``sum_i <c_i(g), t_i>``. The rule's expressions are operator calls, each with a gradient rule of
its own, so that gradient is one backward walk over them, done here on the expressions (no
references, no closures): the tangent is again a few operator calls. ``sin``'s ``g * cos(x)``
gives ``t * cos(x)``, ``matmul``'s ``matmul(g, transpose(b))`` gives ``matmul(t, b)``, and an
operator defined by an index expression gets its forward rule from its derived adjoint (itself an
index expression with a gradient). So every differentiable operator has a forward rule, written
once, and the two modes cannot disagree.
"""

from __future__ import annotations

from typing import Sequence

from relayish.errors import RelayTypeError, Span
from relayish.expr import Call, Constant, Expr, Let, Op, Tuple, Var
from relayish.ops.registry import is_user_op, lookup_op
from relayish.ops.sites import Site
from relayish.traverse import free_vars, post_order
from relayish.types import Shape, TensorType, Type


def tangent(site: Site, tangents: Sequence[Expr | None], span: Span | None = None) -> Expr | None:
    """The tangent of ``site``'s result (``site.g`` a fresh variable, its other parts variables, ``site.out`` the result)
    for argument tangents ``tangents`` (None where an argument has none), as an expression binding
    its intermediate values with ``let``; None when no argument contributes (the tangent is zero)."""
    definition = lookup_op(site.name)
    if definition is None or definition.gradient is None:
        return None
    g = site.g
    roots = [(c, t) for c, t in zip(definition.gradient(site), tangents) if c is not None and t is not None]
    if not roots:
        return None
    order = _post_order([c for c, _ in roots])
    depends = {id(g)}  # the nodes whose values depend on g's (zeros_like(g) does not: no gradient, as in Grad)
    for node in order:
        if isinstance(node, Call) and any(id(a) in depends for a in node.args):
            inner = lookup_op(node.callee.name)
            if inner.gradient is not None:
                depends.add(id(node))
            elif inner.lowering is not None or is_user_op(node.callee.name):
                raise RelayTypeError(f"Jvp: the forward rule of @{site.name} cannot be derived: its gradient calls "
                                     f"@{node.callee.name}, which has no gradient rule of its own", span)
    known: dict[int, Type] = {id(a): t for a, t in zip(site.args, site.types)}
    known[id(g)] = site.out_type
    if site.out is not None:
        known[id(site.out)] = site.out_type
    types = _types(order, known, site.name, span)
    adjoint: dict[int, Expr] = {}
    for c, t in roots:
        _accumulate(adjoint, c, t)
    bindings: list[tuple[Var, Expr]] = []
    for node in reversed(order):
        if id(node) not in depends or id(node) not in adjoint or node is g:
            continue
        a = Var("ta")
        bindings.append((a, adjoint.pop(id(node))))
        inner = lookup_op(node.callee.name)
        arg_types = tuple(types[id(x)] for x in node.args)
        inner_site = Site(node.callee.name, tuple(node.args), arg_types, node, types[id(node)],
                          inner.full_attrs(node.attrs), a)
        for x, part in zip(node.args, inner.gradient(inner_site)):
            if part is not None and id(x) in depends:
                _accumulate(adjoint, x, part)
    if id(g) not in adjoint:
        return None
    result: Expr = adjoint[id(g)]
    # What still reads g reads its shape alone (``sum_to``'s gradient broadcasts like its argument):
    # a linear rule uses g's values only through the walk above. The result has g's type.
    if any(v is g for v in free_vars(Tuple([result, *(value for _, value in bindings)]))):
        bindings.insert(0, (g, site.out))
    for var, value in reversed(bindings):
        result = Let(var, value, result)
    return result


def _accumulate(adjoint: dict[int, Expr], node: Expr, part: Expr) -> None:
    known = adjoint.get(id(node))
    adjoint[id(node)] = part if known is None else Call(Op("add"), [known, part])


def _post_order(roots: list[Expr]) -> list[Expr]:
    """The operator calls, variables and constants under ``roots``, each once, arguments first."""
    root = Tuple(roots)
    order: list[Expr] = []
    for node in post_order(root):
        if isinstance(node, (Call, Var, Constant)):
            order.append(node)
        elif not isinstance(node, Op) and node is not root:
            raise AssertionError(f"a gradient rule built a {type(node).__name__}: only operator calls are transposed")
    return order


def _types(order: list[Expr], known: dict[int, Type], name: str, span: Span | None) -> dict[int, Type]:
    """The type of every node of a gradient rule's expressions, by the operators' type relations."""
    types = dict(known)
    for node in order:
        if id(node) in types:
            continue
        if isinstance(node, Constant):
            types[id(node)] = TensorType(node.dtype, Shape(*node.value.shape))
        elif isinstance(node, Call):
            relation = lookup_op(node.callee.name)
            types[id(node)] = relation.type_relation([types[id(a)] for a in node.args], relation.full_attrs(node.attrs))
        else:
            raise RelayTypeError(f"Jvp: the gradient rule of @{name} reads a variable it was not given", span)
    return types
