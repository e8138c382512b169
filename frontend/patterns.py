"""Python's ``match`` patterns as IR patterns, and whether a match's cases cover every value.

``case Cons(h, Nil()):`` is ``Cons(%h, Nil)``, ``case (a, _):`` the tuple pattern ``(%a, _)``,
``case x:`` a variable, ``case _:`` the wildcard; ``case P as name:`` (at the top only) binds
``name`` to the value matched. A class pattern with fewer fields than its constructor
matches any value of the rest (``case Cons():``), as in Python. Guards, ``|``, literal, value,
mapping and starred patterns are errors that say what to write instead.

A Python ``match`` that no case matches does nothing, so the translator adds ``_ => (the code
after the match)`` unless the cases cover every value. Whether they do is the usefulness check
of typecheck/patterns.py (Maranget 2007), but before types are known: the constructors a
column needs are those of the data type of a constructor pattern in it (a constructor belongs
to one data type), a tuple pattern gives the column's arity, and a column of wildcards needs
nothing. The uncovered value is written as a Python pattern (``Cons(_, Nil())``) for messages.
"""

from __future__ import annotations

import ast
from typing import Any, Iterator, Mapping

import attrs

from relayish.expr import Pattern, PatternCtor, PatternTuple, PatternVar, PatternWildcard, Var
from relayish.traverse import trampoline

from .data import ConstructorType

Row = list  # of Pattern | None (None: matches anything)


@attrs.frozen
class Case:
    """One ``case`` translated: its IR pattern, the names its variables bind (in order) and its body."""

    pattern: Pattern
    binds: tuple[tuple[str, Var], ...]
    alias: str | None  # ``case P as name:``: name is bound to the whole value (by the caller, which has it)
    body: list[ast.stmt]


class PatternTranslation:
    """The pattern half of translating ``match``: a mixin of frontend.translate.Translator, whose
    ``error``, ``span``, ``src``, ``constructor`` (what a name in the code denotes, if a
    constructor), ``note_data``, ``set_hint`` and ``field_hint`` it uses."""

    def case(self, case: ast.match_case, env: dict | None, classes: dict[str, ConstructorType]) -> Case:
        """A case's pattern; ``classes`` receives the constructors it names (by IR name)."""
        if case.guard is not None:
            raise self.error(case.guard, "a guard (case ... if condition) is not supported: match without it and test "
                                         "the condition with if inside the case (a failed guard would try the next "
                                         "case, so give that code to both)")
        node, alias = case.pattern, None
        if isinstance(node, ast.MatchAs) and node.pattern is not None:
            node, alias = node.pattern, node.name
        binds: list[tuple[str, Var]] = []
        done: dict[int, Pattern] = {}
        stack: list[tuple[ast.pattern, bool]] = [(node, False)]
        while stack:  # bottom-up without recursion: a pattern is built after its parts
            p, ready = stack.pop()
            parts = self.parts(p, env)
            if parts and not ready:
                stack.append((p, True))
                stack.extend((q, False) for q in reversed(parts))
                continue
            done[id(p)] = self.one_pattern(p, [done[id(q)] for q in parts], env, binds, classes)
        return Case(done[id(node)], tuple(binds), alias, case.body)

    def parts(self, p: ast.pattern, env: dict | None) -> list[ast.pattern]:
        """The sub-patterns of ``p``, or the error for a pattern relayish does not take."""
        if isinstance(p, ast.MatchClass):
            if p.kwd_patterns:
                cls = self.constructor(p.cls, env)
                fields = cls.signature() if cls is not None else f"{ast.unparse(p.cls)}(a, b)"
                raise self.error(p.kwd_patterns[0], "keyword patterns are not supported: constructor fields are "
                                                    f"positional, a pattern for each in order: {fields}")
            return list(p.patterns)
        if isinstance(p, ast.MatchSequence):
            star = next((q for q in p.patterns if isinstance(q, ast.MatchStar)), None)
            if star is not None:
                raise self.error(star, "a starred pattern is not supported: a tuple has a fixed length, match every "
                                       "field: case (a, b, c):")
            return list(p.patterns)
        if isinstance(p, ast.MatchAs):
            if p.pattern is not None:
                raise self.error(p, "a nested as pattern is not supported: write it at the top (case Cons(h, t) as "
                                    "xs:), or capture the part and match it in a nested match")
            return []
        if isinstance(p, ast.MatchOr):
            raise self.error(p, "alternatives (|) are not supported: write one case for each")
        if isinstance(p, ast.MatchSingleton) and p.value is None:
            raise self.error(p, "case None: matches Python's None, which no relayish value is: the Prelude's Option "
                                "constructor is Nothing(), write case Nothing():")
        if isinstance(p, ast.MatchValue) and self.constructor(p.value, env) is not None:
            raise self.error(p, f"a constructor is matched by calling it: write case {ast.unparse(p.value)}():")
        if isinstance(p, (ast.MatchValue, ast.MatchSingleton)):
            raise self.error(p, "literal and value patterns are not supported: capture the value (case x:) and compare "
                                "it with if")
        if isinstance(p, ast.MatchMapping):
            raise self.error(p, "mapping patterns are not supported: relayish has no dicts; match a constructor or a "
                                "tuple")
        raise self.error(p, f"{type(p).__name__} patterns are not supported")

    def one_pattern(self, p: ast.pattern, parts: list[Pattern], env: dict | None, binds: list[tuple[str, Var]],
                    classes: dict[str, ConstructorType]) -> Pattern:
        span = self.span(p)
        if isinstance(p, ast.MatchAs):
            if p.name is None:
                return PatternWildcard(span=span)
            if isinstance(self.src.lookup(p.name), ConstructorType):  # the capture makes the name local: look outside
                raise self.error(p, f"case {p.name}: would capture the value in a new variable named {p.name} (a bare "
                                    f"name in a pattern captures): write {p.name}() to match the constructor")
            var = Var(p.name, span=span)
            binds.append((p.name, var))
            return PatternVar(var, span=span)
        if isinstance(p, ast.MatchSequence):
            return PatternTuple(parts, span=span)
        cls = self.constructor(p.cls, env)
        if cls is None:
            raise self.error(p.cls, f"{ast.unparse(p.cls)} is not a constructor: a class pattern names a data type's "
                                    "constructor (case Cons(h, t):; relayish.data declares them)")
        if len(parts) > cls.arity:
            raise self.error(p, f"{cls.arity_message(len(parts))} (a pattern may leave out trailing fields)")
        self.note_data(cls.data_type, p.cls)
        for index, part in enumerate(parts):
            if isinstance(part, PatternVar):
                self.set_hint(part.var, self.field_hint(cls, index))
        classes[cls.ir_name] = cls
        parts = parts + [PatternWildcard(span=span)] * (cls.arity - len(parts))
        return PatternCtor(cls.ir_name, parts, span=span)


def uncovered(patterns: list[Pattern], classes: Mapping[str, ConstructorType]) -> str | None:
    """A value none of ``patterns`` matches, written as a Python pattern, or None when they
    cover every value (see the module's docstring)."""
    found = trampoline(_witness([[_plain(p)] for p in patterns], 1, classes))
    return None if found is None else found[0]


def _plain(p: Pattern) -> Pattern | None:
    return None if isinstance(p, (PatternVar, PatternWildcard)) else p


def _witness(rows: list[Row], width: int, classes: Mapping[str, ConstructorType]) -> Iterator[Any]:
    """Values (one per column) that no row matches, or None."""
    if width == 0:
        return None if rows else []
    heads = [row[0] for row in rows]
    ctor = next((p for p in heads if isinstance(p, PatternCtor)), None)
    tup = next((p for p in heads if isinstance(p, PatternTuple)), None)
    if ctor is not None:
        family = classes[ctor.ctor].data_type.constructors
        used = {p.ctor for p in heads if isinstance(p, PatternCtor)}
        absent = [c for c in family if c.ir_name not in used]
        for cls in family if not absent else ():
            found = yield _witness(_narrowed(rows, cls.ir_name, cls.arity), cls.arity + width - 1, classes)
            if found is not None:
                return [f"{cls.__name__}({', '.join(found[:cls.arity])})"] + found[cls.arity:]
        if not absent:
            return None
        found = yield _witness([row[1:] for row in rows if row[0] is None], width - 1, classes)
        return None if found is None else [f"{absent[0].__name__}({', '.join('_' * absent[0].arity)})"] + found
    if tup is not None:
        n = len(tup.patterns)
        found = yield _witness(_narrowed(rows, None, n), n + width - 1, classes)
        return None if found is None else [f"({', '.join(found[:n])}{',' * (n == 1)})"] + found[n:]
    found = yield _witness([row[1:] for row in rows if row[0] is None], width - 1, classes)
    return None if found is None else ["_"] + found


def _narrowed(rows: list[Row], ctor: str | None, arity: int) -> list[Row]:
    """The rows that can match constructor ``ctor`` (None: a tuple) of ``arity`` fields, with
    the fields' patterns in place of the first column."""
    out = []
    for row in rows:
        head = row[0]
        if head is None:
            out.append([None] * arity + row[1:])
        elif (isinstance(head, PatternCtor) and head.ctor == ctor
              or isinstance(head, PatternTuple) and ctor is None and len(head.patterns) == arity):
            out.append([_plain(q) for q in head.patterns] + row[1:])
    return out
