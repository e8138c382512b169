"""Iterative traversal: a generator trampoline, visitor and mutator bases, free variables.

Nothing here recurses in Python, so a 100,000-deep let chain is as safe as a short one.
"""

from __future__ import annotations

import functools
from collections import Counter
from typing import Any, Generator, Iterator, Sequence

import attrs

from .expr import Expr, Function, GlobalVar, Let, Match, Var, field_names
from .module import Module

Step = Generator[Any, Any, Any]


def trampoline(root: Step) -> Any:
    """Run a generator written like a recursive function, without Python recursion.

    A generator "calls" another by yielding it and receives its return value back from
    ``yield``; an exception raised in the callee is re-raised at the caller's ``yield``.
    """
    stack = [root]
    value: Any = None
    error: BaseException | None = None
    while stack:
        gen = stack[-1]
        try:
            if error is not None:
                pending, error = error, None
                request = gen.throw(pending)
            else:
                request = gen.send(value)
        except StopIteration as stop:
            stack.pop()
            value = stop.value
            continue
        except Exception as exc:  # hand it to the caller's yield
            stack.pop()
            if not stack:
                raise
            error = exc
            continue
        stack.append(request)
        value = None
    return value


def post_order(root: Expr) -> Iterator[Expr]:
    """Every distinct node once, children before parents."""
    done: set[int] = set()
    stack: list[tuple[Expr, bool]] = [(root, False)]
    pop, push = stack.pop, stack.append
    while stack:
        node, expanded = pop()
        key = id(node)
        if key in done:
            continue
        if expanded:
            done.add(key)
            yield node
            continue
        push((node, True))
        children = node.children()
        for k in range(len(children) - 1, -1, -1):
            child = children[k]
            if id(child) not in done:
                push((child, False))


def with_children(node: Expr, children: Sequence[Expr]) -> Expr:
    """``node`` with its sub-expressions replaced in field order; ``node`` itself if unchanged."""
    if isinstance(node, Match):  # its variables live in its patterns
        return node if all(a is b for a, b in zip(children, node.children())) else node.with_children(tuple(children))
    new_children = iter(children)
    changes = {}
    for name in field_names(type(node)):
        value = getattr(node, name)
        if isinstance(value, Expr):
            new = next(new_children)
            if new is not value:
                changes[name] = new
        elif isinstance(value, tuple) and any(isinstance(v, Expr) for v in value):
            new_tuple = tuple(next(new_children) if isinstance(v, Expr) else v for v in value)
            if any(a is not b for a, b in zip(new_tuple, value)):
                changes[name] = new_tuple
    if not changes:
        return node
    return type(node)(**{alias: changes[name] if name in changes else getattr(node, name)
                         for name, alias in _init_fields(type(node))})


@functools.cache
def _init_fields(cls: type) -> tuple[tuple[str, str], ...]:
    """(attribute, __init__ argument) of each field of an expression class: ``attrs.evolve``
    without looking them up again for every node a pass rebuilds."""
    return tuple((f.name, f.alias) for f in attrs.fields(cls) if f.init)


class ExprMutator:
    """Bottom-up rewriting: override ``rewrite(old, new)``.

    ``new`` is ``old`` rebuilt with its already-rewritten children (``old`` itself when no
    child changed). Shared sub-expressions are rewritten once.
    """

    def __init__(self) -> None:
        self.memo: dict[int, tuple[Expr, Expr]] = {}

    def rewrite(self, old: Expr, new: Expr) -> Expr:
        return new

    def mutate(self, expr: Expr) -> Expr:
        memo = self.memo
        stack: list[tuple[Expr, tuple[Expr, ...] | None]] = [(expr, None)]
        while stack:  # post order, as ``post_order``, keeping each node's children for its rebuild
            node, children = stack.pop()
            if id(node) in memo:
                continue
            if children is None:
                children = node.children()
                stack.append((node, children))
                stack.extend((child, None) for child in reversed(children) if id(child) not in memo)
                continue
            new_children = [memo[id(c)][1] for c in children]
            changed = any(a is not b for a, b in zip(new_children, children))
            memo[id(node)] = (node, self.rewrite(node, with_children(node, new_children) if changed else node))
        return memo[id(expr)][1]


def replace(root: Expr, target: Expr, replacement: Expr) -> Expr:
    """``root`` with the node ``target`` (by identity) replaced by ``replacement``."""

    class Replace(ExprMutator):
        def rewrite(self, old: Expr, new: Expr) -> Expr:
            return replacement if old is target else new

    return Replace().mutate(root)


def globals_reached(module: Module, root: Expr) -> set[str]:
    """The globals of ``module`` that ``root`` refers to, directly or through other globals."""
    seen: set[str] = set()
    stack = [root]
    while stack:
        for node in post_order(stack.pop()):
            if isinstance(node, GlobalVar) and node.name in module and node.name not in seen:
                seen.add(node.name)
                stack.append(module[node.name])
    return seen


class ExprVisitor:
    """Visits every distinct node once, children first: override ``visit(node)``."""

    def visit(self, node: Expr) -> None:
        pass

    def run(self, expr: Expr) -> None:
        for node in post_order(expr):
            self.visit(node)


def reads(node: Expr) -> tuple[Expr, ...]:
    """The sub-expressions of ``node`` it evaluates or uses: all its children but the
    variables it binds (a let's variable, a function's parameters)."""
    if isinstance(node, Let):
        return node.value, node.body
    if isinstance(node, Function):
        return (node.body,)
    if isinstance(node, Match):
        return (node.value, *node.bodies)
    return node.children()


def use_counts(*roots: Expr) -> Counter[int]:
    """How many times each variable (by ``id``) is read in ``roots``."""
    counts: Counter[int] = Counter()
    for root in roots:
        for node in post_order(root):
            counts.update(id(c) for c in reads(node) if isinstance(c, Var))
    return counts


def _binds(node: Expr) -> Sequence[Var]:
    """The variables ``node`` itself binds: a let's, a function's parameters, a match's patterns'."""
    if isinstance(node, Let):
        return (node.var,)
    if isinstance(node, Function):
        return node.params
    return node.bound() if isinstance(node, Match) else ()


def bound_vars(expr: Expr) -> list[Var]:
    """Variables bound by lets, function parameters and match patterns inside ``expr``, in post order."""
    return [var for node in post_order(expr) for var in _binds(node)]


def bound_twice(expr: Expr) -> list[Var]:
    """Variables bound more than once in ``expr``: by two binders (lets, parameters, patterns), or
    by one binder reached along two paths (a sub-expression shared by two parents is evaluated, and
    binds its variables, once per parent: a closure made the first time would see the second
    binding). ``free_vars`` and the evaluator's frames rely on one binding per variable, so passes
    and AD keep this empty."""
    nodes = list(post_order(expr))  # children before parents; reversed, parents before children
    paths = {id(expr): 1}
    for node in reversed(nodes):
        for child in node.children():
            paths[id(child)] = paths.get(id(child), 0) + paths[id(node)]
    bindings: Counter[int] = Counter()
    found: dict[int, Var] = {}
    for node in nodes:
        for var in _binds(node):
            bindings[id(var)] += paths[id(node)]
            found[id(var)] = var
    return [found[key] for key, count in bindings.items() if count > 1]


def free_vars(expr: Expr) -> list[Var]:
    """Variables used in ``expr`` but bound outside it, in first-use order.

    Each variable object is bound in one place only (the printer and parser keep it so), so
    free = used - bound, without tracking scopes.
    """
    bound = {id(v) for v in bound_vars(expr)}
    seen: set[int] = set()
    result = []
    for node in post_order(expr):
        if isinstance(node, Var) and id(node) not in bound and id(node) not in seen:
            seen.add(id(node))
            result.append(node)
    return result
