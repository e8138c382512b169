"""What the transforms know of the functions a module's lets bind: the code of a free variable of
function type, which Grad, Jvp and Vmap transform in place of the closure they cannot see into."""

from __future__ import annotations

from relayish.expr import Expr, Function, Let, Var
from relayish.module import Module
from relayish.traverse import free_vars, post_order


def let_literals(module: Module) -> dict[int, Function]:
    """By ``id`` of the variable: the function literal each ``let`` of the module binds."""
    literals: dict[int, Function] = {}
    for fn in module.functions.values():
        for node in post_order(fn):
            if isinstance(node, Let) and isinstance(node.value, Function):
                literals[id(node.var)] = node.value
    return literals


def free_in_order(f: Expr, literals: dict[int, Function], known: set[int] | frozenset = frozenset()) -> list[Var]:
    """``f``'s free variables and, for those bound to literals, the literals' own, dependencies
    first (a literal's free variables before it); those in ``known`` (by ``id``) left out."""
    order: list[Var] = []
    seen: set[int] = set(known)
    stack: list[tuple[Var, bool]] = [(v, False) for v in reversed(free_vars(f))]
    while stack:
        var, ready = stack.pop()
        if id(var) in seen:
            continue
        literal = literals.get(id(var))
        if ready or literal is None:
            seen.add(id(var))
            order.append(var)
            continue
        stack.append((var, True))
        stack += [(v, False) for v in reversed(free_vars(literal)) if v is not var and id(v) not in seen]
    return order
