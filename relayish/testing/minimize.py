"""Structural minimization of a failing program.

Hypothesis shrinks the byte string a generated program was decoded from, and one zeroed
byte early in it re-reads everything after it as a different program: the shrinker keeps
few of its tries. ``minimize`` instead shrinks the program itself, greedily: it drops the
globals the entry does not reach and the entry's declared result type, and replaces any sub-expression by one of its own
children (an ``if`` by a branch, a ``let`` by its body, a call by an argument, ...) or
inlines a ``let``, a call of a function literal or the one call of a global, keeping
a change when the result still type-checks and still fails. Outer nodes are tried first,
so big pieces go first. What is left is a program in which no such replacement keeps the
failure: usually a few lines; data types it no longer mentions are dropped last.
"""

from __future__ import annotations

import time
from typing import Callable, Iterator

import attrs

from typecheck import infer

from ..errors import RelayError, RelayTypeError
from ..expr import (
    Call, Constant, Construct, Expr, Function, GlobalVar, IsCtor, Let, Match, Op, Pattern, PatternCtor, Unpack, Var,
    written_type,
)  # fmt: skip
from ..module import Module
from ..traverse import ExprMutator, globals_reached, post_order, replace
from ..types import data_types_in, is_first_order


def reachable(module: Module, entry: str) -> Module:
    """``module`` without the globals ``@entry`` cannot reach."""
    seen = {entry} | globals_reached(module, module[entry])
    return module.with_functions({name: fn for name, fn in module.functions.items() if name in seen})


def without_unused_types(module: Module) -> Module:
    """``module`` without the data types its code does not mention (in a written type, a
    constructor or a pattern), nor the data types mentioned use."""
    names: list[str] = []
    for fn in module.functions.values():
        for node in post_order(fn):
            ty = written_type(node)
            names += [d.name for d in data_types_in(ty)] if ty is not None else []
            ctors = [node.ctor] if isinstance(node, (Construct, IsCtor, Unpack)) else []
            if isinstance(node, Match):
                ctors += [p.ctor for pattern in node.patterns for p in _patterns(pattern) if isinstance(p, PatternCtor)]
            names += [module.ctor(c)[0].name for c in ctors if module.ctor(c) is not None]
    used: set[str] = set()
    while names:
        name = names.pop()
        if name in used or name not in module.type_defs:
            continue
        used.add(name)
        names += [d.name for c in module.type_defs[name].ctors for f in c.fields for d in data_types_in(f)]
    if len(used) == len(module.type_defs):
        return module
    return Module(module.functions, module.op_decls, {n: td for n, td in module.type_defs.items() if n in used})


def _patterns(pattern: Pattern) -> Iterator[Pattern]:
    stack = [pattern]
    while stack:
        p = stack.pop()
        yield p
        stack.extend(getattr(p, "patterns", ()))


def _substituted(body: Expr, values: dict[int, Expr]) -> Expr:
    """``body`` with variables (by identity) replaced by expressions."""

    class Substitute(ExprMutator):
        def rewrite(self, old: Expr, new: Expr) -> Expr:
            return values.get(id(old), new) if isinstance(old, Var) else new

    return Substitute().mutate(body)


def _inlinable(var: Var, value: Expr, body: Expr) -> bool:
    """Substituting keeps every binder in one place: a leaf, or a variable used at most once."""
    leaf = isinstance(value, (Var, Constant, GlobalVar, Op))
    return leaf or sum(node is var for node in _uses(body)) <= 1


def _uses(body: Expr) -> Iterator[Expr]:
    stack = [body]
    while stack:  # every occurrence, not every distinct node
        node = stack.pop()
        yield node
        stack.extend(node.children())


def _inlined(node: Expr) -> Expr | None:
    """A ``let`` or a call of a function literal with its variables substituted, or None."""
    if isinstance(node, Let) and _inlinable(node.var, node.value, node.body):
        return _substituted(node.body, {id(node.var): node.value})
    if isinstance(node, Call) and isinstance(node.callee, Function) and len(node.args) == len(node.callee.params):
        fn = node.callee
        if all(_inlinable(p, a, fn.body) for p, a in zip(fn.params, node.args)):
            return _substituted(fn.body, {id(p): a for p, a in zip(fn.params, node.args)})
    return None


def _replacements(node: Expr, inlinable_globals: dict[str, Function]) -> Iterator[Expr]:
    inlined = _inlined(node)
    if inlined is not None:
        yield inlined
    if isinstance(node, Call) and isinstance(node.callee, GlobalVar) and node.callee.name in inlinable_globals:
        yield Call(inlinable_globals[node.callee.name], node.args, span=node.span)  # then inlined as a literal
    yield from node.children()
    for child in node.children():  # through a wrapper: (a, b)[0], !Ref(a), f(a)(b), ...
        yield from child.children()


def _single_use_globals(module: Module) -> dict[str, Function]:
    """Globals called from exactly one place, not recursive and not polymorphic: a call of
    one can become a call of its function literal (its binders then still appear once)."""
    uses: dict[str, int] = {}
    for fn in module.functions.values():
        for node in _uses(fn.body):
            if isinstance(node, GlobalVar):
                uses[node.name] = uses.get(node.name, 0) + 1
    return {name: fn for name, fn in module.functions.items()
            if uses.get(name) == 1 and not fn.type_params and name not in globals_reached(module, fn)}


def _candidates(fn: Function, module: Module) -> Iterator[Function]:
    """``fn`` with one sub-expression inlined or replaced by a child or grandchild, outermost first."""
    inlinable_globals = _single_use_globals(module)
    nodes = list(post_order(fn.body))[::-1]  # parents before their children
    for node in nodes:
        for replacement in _replacements(node, inlinable_globals):
            if isinstance(replacement, Op):
                continue  # an operator is not a value
            try:
                yield replace(fn, node, replacement)
            except RelayError:
                continue  # e.g. a call whose callee became another operator, without its attributes


def _acceptable(module: Module, entry: str) -> bool:
    """Well typed, with an entry that returns tensors or tuples of them: a closure or a
    reference in the result cannot be compared, so it would fail for the wrong reason."""
    try:
        typed = infer(module)
    except RelayTypeError:
        return False
    return is_first_order(typed[entry].ret_type)


def minimize(
    module: Module,
    entry: str,
    fails: Callable[[Module], bool],
    *,
    max_tries: int = 5000,
    seconds: float = 120.0,
) -> Module:
    """The smallest module this greedy search finds on which ``fails`` still holds.

    ``fails(candidate)`` is only called on well-typed candidates whose entry returns tensors
    or tuples of them; it should run the check
    that failed (bounded, e.g. with ``max_calls``: a replacement may remove a loop's exit).
    The search stops after ``max_tries`` candidates or ``seconds``, returning the best so far.
    """
    best = reachable(module, entry)
    unannotated = best.with_function(entry, attrs.evolve(best[entry], ret_type=None))
    if _acceptable(unannotated, entry) and fails(unannotated):
        best = unannotated  # the result type may shrink too (a tuple to one of its fields)
    tries = 0
    deadline = time.monotonic() + seconds
    improved = True
    while improved:
        improved = False
        for name in list(best.functions):
            for fn in _candidates(best[name], best):
                if tries >= max_tries or time.monotonic() > deadline:
                    return best
                candidate = best.with_function(name, fn)
                tries += 1
                if _acceptable(candidate, entry) and fails(candidate):
                    best = reachable(candidate, entry)
                    improved = True
                    break
            if improved:
                break
    pruned = without_unused_types(best)
    return pruned if pruned is not best and _acceptable(pruned, entry) and fails(pruned) else best
