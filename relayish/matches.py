"""``match`` lowered to what AD and the compiler handle: ``let``, ``if``, ``Is[C]`` and ``Unpack[C]``.

    match %v { Cons(%h, Nil) => a, _ => b }

becomes

    let %s = %v in
    if (if Is[Cons](%s) then Is[Nil](Unpack[Cons](%s).1) else False) then
      let %u = Unpack[Cons](%s) in let %h = %u.0 in let %u2 = Unpack[Nil](%u.1) in a
    else b

Each clause but the last is tried by its test; the last is taken without one, and its
``Unpack``s check the constructors (a value no clause matches stops there, with the run-time
error the evaluator gives). Pattern variables become ``let`` bindings of the same variables,
so the bodies are kept as they are. Nothing here needs types; the result is checked again.
"""

from __future__ import annotations

from typing import Any, Iterator

import numpy as np

from .expr import (
    Constant, Expr, If, IsCtor, Let, Match, Pattern, PatternCtor, PatternTuple, PatternVar, Proj, Unpack, Var,
)  # fmt: skip
from .module import Module
from .traverse import ExprMutator, post_order, trampoline


def has_match(module: Module) -> bool:
    return any(isinstance(node, Match) for fn in module.functions.values() for node in post_order(fn))


def lower_matches(module: Module) -> Module:
    """``module`` with every ``match`` lowered (see the module docstring)."""
    mutator = _Lower()
    return module.with_functions({name: mutator.mutate(fn) for name, fn in module.functions.items()})


def lowered_function(fn: Expr) -> Expr:
    """``fn`` with every ``match`` in it lowered."""
    return _Lower().mutate(fn)


class _Lower(ExprMutator):
    def rewrite(self, old: Expr, new: Expr) -> Expr:
        return lowered(new) if isinstance(new, Match) else new


def lowered(e: Match) -> Expr:
    """One ``match`` (its bodies lowered already) as ``let``s and ``if``s."""
    subject = e.value if isinstance(e.value, Var) else Var("s", span=e.span)
    last = len(e.patterns) - 1
    result = _bound(e.patterns[last], subject, e.bodies[last])
    for k in range(last - 1, -1, -1):
        test = trampoline(_test(e.patterns[k], subject))
        body = _bound(e.patterns[k], subject, e.bodies[k])
        result = body if test is None else If(test, body, result, span=e.span)
    return result if subject is e.value else Let(subject, e.value, result, span=e.span)


_TRUE, _FALSE = np.array(True), np.array(False)


def _test(p: Pattern, subject: Expr) -> Iterator[Any]:
    """A bool expression: whether ``subject`` matches ``p``; None when it always does."""
    if isinstance(p, PatternCtor):
        is_ctor = IsCtor(subject, p.ctor, span=p.span)
        fields = yield _all_match(p.patterns, Unpack(subject, p.ctor, span=p.span))
        return is_ctor if fields is None else If(is_ctor, fields, Constant(_FALSE), span=p.span)
    if isinstance(p, PatternTuple):
        return (yield _all_match(p.patterns, subject))
    return None


def _all_match(patterns: tuple[Pattern, ...], source: Expr) -> Iterator[Any]:
    """Whether every field of tuple ``source`` matches its pattern: nested ``if``s (evaluated only
    once the tests before have passed), None when all always match."""
    tests = []
    for i, q in enumerate(patterns):
        t = yield _test(q, Proj(source, i))
        if t is not None:
            tests.append(t)
    if not tests:
        return None
    result = tests[-1]
    for t in reversed(tests[:-1]):
        result = If(t, result, Constant(_FALSE))
    return result


def _bound(p: Pattern, subject: Expr, body: Expr) -> Expr:
    """``body`` under the bindings of ``p``'s variables to the parts of ``subject``; each
    constructor pattern unpacks its value (checking the constructor)."""
    bindings: list[tuple[Var, Expr]] = []
    stack: list[tuple[Pattern, Expr]] = [(p, subject)]
    while stack:
        q, value = stack.pop()
        if isinstance(q, PatternVar):
            bindings.append((q.var, value))
        elif isinstance(q, PatternCtor):
            fields = Var("f", span=q.span)
            bindings.append((fields, Unpack(value, q.ctor, span=q.span)))
            stack.extend((sub, Proj(fields, i)) for i, sub in reversed(list(enumerate(q.patterns))))
        elif isinstance(q, PatternTuple):
            stack.extend((sub, Proj(value, i)) for i, sub in reversed(list(enumerate(q.patterns))))
    for var, value in reversed(bindings):
        body = Let(var, value, body, span=var.span)
    return body
