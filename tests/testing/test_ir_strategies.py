"""The untyped IR generator (relayish.testing.ir_strategies) with data types: what it promises
(closed terms, defined constructors and data types of the right arity, pattern variables bound
in their clause only) and that it produces every form the printer and parser must survive."""

from __future__ import annotations

import collections

from hypothesis import given, settings

from relayish import free_vars
from relayish.expr import Construct, IsCtor, Match, PatternCtor, PatternTuple, PatternVar, Unpack
from relayish.module import Module
from relayish.testing.ir_strategies import modules
from relayish.traverse import post_order
from relayish.types import DataType, Type


def _patterns(match: Match) -> list:
    found, stack = [], list(match.patterns)
    while stack:
        p = stack.pop()
        found.append(p)
        if isinstance(p, (PatternCtor, PatternTuple)):
            stack.extend(p.patterns)
    return found


def _data_types(ty: Type) -> list[DataType]:
    found, stack = [], [ty]
    while stack:
        t = stack.pop()
        if isinstance(t, DataType):
            found.append(t)
        stack.extend(v for v in t._items() if isinstance(v, Type))
    return found


def _written_types(m: Module) -> list[Type]:
    types = [t for td in m.type_defs.values() for c in td.ctors for t in c.fields]
    for fn in m.functions.values():
        for node in post_order(fn):
            types += [t for t in (getattr(node, "type_annotation", None), getattr(node, "ret_type", None),
                                  getattr(node, "type", None)) if isinstance(t, Type)]
    return types


def _features(m: Module) -> set[str]:
    found = {"type parameters" for td in m.type_defs.values() if td.params}
    found |= {"recursive type" for td in m.type_defs.values()
              if any(d.name == td.name for c in td.ctors for t in c.fields for d in _data_types(t))}
    found |= {"constructor named as its type" for td in m.type_defs.values() if any(c.name == td.name for c in td.ctors)}
    for fn in m.functions.values():
        for node in post_order(fn):
            if isinstance(node, Match):
                found.add(f"match of {min(len(node.patterns), 3)} clauses")
                for p in _patterns(node):
                    found.add(type(p).__name__)
                    if isinstance(p, (PatternCtor, PatternTuple)) and any(isinstance(q, PatternCtor) for q in p.patterns):
                        found.add("nested constructor pattern")
            elif isinstance(node, Construct):
                found.add("constructor without fields" if not node.fields else "constructor with fields")
    return found


@settings(max_examples=200, database=None)
@given(modules())
def test_constructors_and_data_types_are_defined_and_pattern_variables_bound(m):
    ctors = {c.name for td in m.type_defs.values() for c in td.ctors}
    for fn in m.functions.values():
        assert not free_vars(fn)  # pattern variables are bound in their clause's body
        for node in post_order(fn):
            if isinstance(node, (Construct, IsCtor, Unpack)):
                assert node.ctor in ctors
            elif isinstance(node, Match):
                for p in _patterns(node):
                    assert not isinstance(p, PatternCtor) or p.ctor in ctors
                    assert not isinstance(p, PatternVar) or p.var.type_annotation is None  # patterns carry no types
    for ty in _written_types(m):
        for d in _data_types(ty):
            assert len(d.args) == len(m.type_defs[d.name].params)


def test_every_data_form_is_generated():
    seen: collections.Counter = collections.Counter()

    @settings(max_examples=300, database=None)
    @given(modules())
    def collect(m):
        seen.update(_features(m))

    collect()
    expected = {
        "type parameters", "recursive type", "constructor named as its type", "match of 1 clauses",
        "match of 3 clauses", "PatternCtor", "PatternTuple", "PatternVar", "PatternWildcard",
        "nested constructor pattern", "constructor without fields", "constructor with fields",
    }  # fmt: skip
    assert expected <= set(seen), sorted(expected - set(seen))
