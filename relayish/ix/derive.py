"""Gradients of index-expression operators, derived as index expressions.

For ``output[I] = body(I)`` and a cotangent ``g`` of the output's shape, the adjoint of input ``X``
adds, at every point of the grid where a read ``X[f(I, R)]`` happens (``R`` the enclosing
reductions' axes), ``g[I]`` times the derivative of ``output[I]`` by that read, at position
``f(I, R)``. Reverse mode over the element expression gives each node occurrence (a node in its
scope of index variables) an adjoint expression over that scope: the root's is ``g[I]``, a sum
passes its adjoint to its body unchanged (the body's scope adds the summed axes), and a read's
adjoint becomes one ``Scatter`` over its scope. So the adjoint of a gather, a slice or a
strided window costs what the forward read did, with no dense zero-padded tensor
(the cheap-gradient principle of "Differentiating a Tensor Language").

An adjoint is itself a definition (``Definition.target`` set), with the cotangent as one more
input, so its own gradient follows the same way: the vector-Jacobian product of a scatter with a
cotangent ``h`` of its target's shape is the gradient of ``h[f(S)] * value(S)`` over its grid
``S``, with ``h`` read only where ``f(S)`` is inside. Second and higher derivatives are derived
again in the same way.

Local derivatives: the usual ones for arithmetic and the scalar functions. ``maximum`` and
``minimum`` pass the adjoint to ``a`` on ties, as the built-in operators do. ``where`` passes it to
the chosen branch. A max or min reduction passes it to the first extreme element in row-major
order of its axes. A product passes it times the product of the other elements, which also holds
where an element is zero. Integer-valued parts (indices, comparisons, ``//``, ``%``, casts to
integers) have no adjoint.
"""

from __future__ import annotations

from typing import Callable

from ..dims import Dim
from .language import (
    Bin, Cast, Definition, InputDim, Lit, Node, Read, Reduce, Scatter, Unary, Var, Where, children, node, post_order,
)  # fmt: skip

Key = tuple  # (id(node), *ids of the scope's variables)


def adjoint(defn: Definition, k: int) -> Definition:
    """The definition of the adjoint of input ``k``: inputs ``defn``'s and the cotangent last."""
    cotangent = len(defn.inputs)
    if defn.target is None:
        parts = [(defn.body, defn.indices, Read(cotangent, tuple(defn.indices)))]
        rank = len(defn.indices)
    else:
        shape = [Dim.atom(InputDim(defn.target, a, f"{defn.inputs[defn.target]}.shape[{a}]"))
                 for a in range(defn.ranks[defn.target] or 0)]
        parts = [(p.value, p.space, _guarded(Read(cotangent, p.targets), p.targets, shape)) for p in defn.scatters]
        rank = defn.ranks[defn.target]
    scatters = [s for body, space, seed in parts for s in reverse(body, space, seed).get(k, [])]
    return Definition(f"{defn.name}__d{k}", (*defn.inputs, f"d_{defn.name}"), (*defn.ranks, rank),
                      (*defn.shape_axes, 0), (), None, None, defn.where, tuple(scatters), k)  # type: ignore[arg-type]


def _guarded(read: Read, places: tuple[Node, ...], shape: list[Dim]) -> Node:
    inside: Node | None = None
    for place, size in zip(places, shape):
        test = (place >= 0) & (place < node(size))
        inside = test if inside is None else inside & test
    return read if inside is None else Where(inside, read, Lit(0.0))


def reverse(body: Node, space: tuple[Var, ...], seed: Node) -> dict[int, list[Scatter]]:
    """Per input, the scatters of reverse mode over ``body`` at scope ``space`` with adjoint ``seed``."""
    found: dict[Key, tuple[Node, tuple[Var, ...]]] = {}
    order: list[Key] = []  # post-order: children before parents
    stack: list[tuple[Node, tuple[Var, ...], bool]] = [(body, space, False)]
    while stack:
        n, scope, ready = stack.pop()
        key = (id(n), *map(id, scope))
        if ready:
            order.append(key)
            continue
        if key in found:
            continue
        found[key] = (n, scope)
        stack.append((n, scope, True))
        inner = scope + n.axes if isinstance(n, Reduce) else scope
        if not isinstance(n, Read):  # an index has no adjoint
            stack.extend((c, inner, False) for c in children(n))
    adjoints: dict[Key, Node] = {order[-1]: seed}
    scatters: dict[int, list[Scatter]] = {}
    for key in reversed(order):  # parents before children
        if key not in adjoints:
            continue
        n, scope = found[key]
        a = adjoints.pop(key)
        if isinstance(n, Read):
            scatters.setdefault(n.input, []).append(Scatter(scope, n.indices, a))
            continue
        inner = scope + n.axes if isinstance(n, Reduce) else scope
        for child, contribution in _local(n, a):
            child_key = (id(child), *map(id, inner))
            adjoints[child_key] = contribution if child_key not in adjoints else adjoints[child_key] + contribution
    return scatters


_FUNCTIONS: dict[str, Callable[[Node, Node, Node], Node]] = {  # (adjoint, node, argument) -> the argument's
    "exp": lambda a, n, x: a * n,
    "log": lambda a, n, x: a / x,
    "tanh": lambda a, n, x: a * (1 - n * n),
    "sqrt": lambda a, n, x: a * 0.5 / n,
    "abs": lambda a, n, x: Where(x > 0, a, Where(x < 0, -a, Lit(0.0))),
    "sin": lambda a, n, x: a * Unary("cos", x),
    "cos": lambda a, n, x: -(a * Unary("sin", x)),
    "sigmoid": lambda a, n, x: a * n * (1 - n),
    "-": lambda a, n, x: -a,
}


def _local(n: Node, a: Node) -> list[tuple[Node, Node]]:
    """The children of ``n`` with their parts of its adjoint ``a``."""
    zero = Lit(0.0)
    if isinstance(n, Bin):
        x, y = n.a, n.b
        rules = {"+": lambda: [(x, a), (y, a)], "-": lambda: [(x, a), (y, -a)], "*": lambda: [(x, a * y), (y, a * x)],
                 "/": lambda: [(x, a / y), (y, -(a * n) / y)],
                 "maximum": lambda: [(x, Where(x >= y, a, zero)), (y, Where(x >= y, zero, a))],
                 "minimum": lambda: [(x, Where(x <= y, a, zero)), (y, Where(x <= y, zero, a))]}
        return rules[n.op]() if n.op in rules else []
    if isinstance(n, Unary):
        return [(n.a, _FUNCTIONS[n.op](a, n, n.a))] if n.op in _FUNCTIONS else []
    if isinstance(n, Where):
        return [(n.a, Where(n.cond, a, zero)), (n.b, Where(n.cond, zero, a))]
    if isinstance(n, Cast):
        return [(n.a, a)] if n.dtype.startswith("float") else []
    if isinstance(n, Reduce):
        return [(n.body, _reduction_adjoint(n, a))]
    return []


def _reduction_adjoint(n: Reduce, a: Node) -> Node:
    # ``a`` holds the reduction itself where a quotient or a function reuses it (x / sum(...)): its
    # axes are bound again inside it, so they get fresh variables before ``a`` enters the body's scope
    a = rename(a, {id(v): Var(v.name + "'", v.extent, True) for v in n.axes})
    if n.kind == "sum":
        return a
    others, extreme = _copy(n), _copy(n)  # the same reduction over fresh axes (the body's are in scope)
    here, there = _linear(n.axes), _linear(others.axes)
    if n.kind == "prod":
        return a * Reduce("prod", others.axes, Where(there == here, Lit(1), others.body))
    count = node(_count(n.axes))
    first = Reduce("min", others.axes, Where(others.body == extreme, there, count))  # the first extreme element
    return Where(here == first, a, Lit(0.0))


def _copy(n: Reduce) -> Reduce:
    axes = tuple(Var(v.name + "'", v.extent, True) for v in n.axes)
    return Reduce(n.kind, axes, rename(n.body, dict(zip(map(id, n.axes), axes))))


def _linear(axes: tuple[Var, ...]) -> Node:
    """The row-major position of ``axes`` in their grid."""
    position: Node = axes[0]
    for v in axes[1:]:
        position = position * node(v.extent) + v
    return position


def _count(axes: tuple[Var, ...]) -> Dim:
    total = axes[0].extent
    for v in axes[1:]:
        total = total * v.extent
    return total


def rename(root: Node, mapping: dict[int, Var]) -> Node:
    """``root`` with the variables of ``mapping`` (by id) replaced, its other nodes shared where unchanged."""
    done: dict[int, Node] = {}
    for n in post_order(root):
        done[id(n)] = mapping.get(id(n), n) if isinstance(n, Var) else _rebuilt(n, [done[id(c)] for c in children(n)], mapping)
    return done[id(root)]


def axes_of(n: Node) -> tuple[Var, ...]:
    return n.axes if isinstance(n, Reduce) else ()


def _rebuilt(n: Node, kids: list[Node], mapping: dict[int, Var]) -> Node:
    axes = tuple(mapping.get(id(v), v) for v in axes_of(n))
    if all(k is c for k, c in zip([*kids, *axes], [*children(n), *axes_of(n)])):
        return n
    if isinstance(n, Read):
        return Read(n.input, tuple(kids))
    if isinstance(n, Bin):
        return Bin(n.op, *kids)
    if isinstance(n, Where):
        return Where(*kids)
    if isinstance(n, Unary):
        return Unary(n.op, kids[0])
    if isinstance(n, Cast):
        return Cast(n.dtype, kids[0])
    assert isinstance(n, Reduce)
    return Reduce(n.kind, axes, kids[0])


__all__ = ["adjoint", "rename", "reverse"]
