"""Whether a ``match`` covers every value: the usefulness check over pattern matrices (as in
Maranget, "Warnings for pattern matching", 2007), answering with a value no clause matches.

A row is one clause's patterns for the columns still to match; ``None`` stands for a
wildcard (or a variable). Data types and tuples split a column into their fields; every
other type (tensors, functions, references) is matched by wildcards only. The walk is a
generator run by ``trampoline``, so deeply nested patterns need no Python stack.
"""

from __future__ import annotations

from typing import Any, Iterator, Mapping, Sequence

from relayish.expr import Pattern, PatternCtor, PatternTuple, PatternVar, PatternWildcard
from relayish.module import TypeDef
from relayish.traverse import trampoline
from relayish.types import DataType, TupleType, Type

from .solver import substitute

Row = list  # of Pattern | None


def missing_case(patterns: Sequence[Pattern], ty: Type, type_defs: Mapping[str, TypeDef]) -> str | None:
    """A value of type ``ty`` that none of ``patterns`` matches, in the text format's words
    (``Cons(_, Nil)``), or None when they cover every value."""
    rows = [[_plain(p)] for p in patterns]
    found = trampoline(_witness(rows, [ty], type_defs))
    return None if found is None else found[0]


def _plain(p: Pattern | None) -> Pattern | None:
    return None if p is None or isinstance(p, (PatternVar, PatternWildcard)) else p


def _witness(rows: list[Row], types: list[Type], type_defs: Mapping[str, TypeDef]) -> Iterator[Any]:
    """Values (one per column) that no row matches, or None."""
    if not types:
        return None if rows else []
    ty, rest = types[0], types[1:]
    firsts = [row[0] for row in rows]
    if isinstance(ty, DataType) and ty.name in type_defs:
        definition = type_defs[ty.name]
        mapping = dict(zip(definition.params, ty.args))
        used = {p.ctor for p in firsts if isinstance(p, PatternCtor)}
        if all(c.name in used for c in definition.ctors):
            for ctor in definition.ctors:
                fields = [substitute(f, mapping) for f in ctor.fields]
                found = yield _witness(_specialize(rows, ctor.name, len(fields)), fields + rest, type_defs)
                if found is not None:
                    return [_written(ctor.name, found[:len(fields)])] + found[len(fields):]
            return None
        found = yield _witness(_default(rows), rest, type_defs)
        if found is None:
            return None
        ctor = next(c for c in definition.ctors if c.name not in used)
        return [_written(ctor.name, ["_"] * len(ctor.fields))] + found
    if isinstance(ty, TupleType):
        found = yield _witness(_specialize(rows, None, len(ty.fields)), list(ty.fields) + rest, type_defs)
        if found is None:
            return None
        n = len(ty.fields)
        return ["(" + ", ".join(found[:n]) + ("," if n == 1 else "") + ")"] + found[n:]
    found = yield _witness(_default(rows), rest, type_defs)
    return None if found is None else ["_"] + found


def _specialize(rows: list[Row], ctor: str | None, arity: int) -> list[Row]:
    """The rows that match constructor ``ctor`` (None: a tuple), its fields in place of the first column."""
    out = []
    for row in rows:
        p = row[0]
        if p is None:
            out.append([None] * arity + row[1:])
        elif isinstance(p, PatternTuple) if ctor is None else isinstance(p, PatternCtor) and p.ctor == ctor:
            out.append([_plain(q) for q in p.patterns] + row[1:])
    return out


def _default(rows: list[Row]) -> list[Row]:
    """The rows whose first column matches anything, without it."""
    return [row[1:] for row in rows if row[0] is None]


def _written(ctor: str, fields: list[str]) -> str:
    return f"{ctor}({', '.join(fields)})" if fields else ctor
