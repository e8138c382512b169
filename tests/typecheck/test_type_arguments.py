"""``typecheck.type_arguments``: what each use of a polymorphic global instantiates it with,
against instantiations worked out by hand."""

from __future__ import annotations

import pytest

from relayish import parse
from relayish.dims import Dim
from relayish.errors import RelayTypeError
from relayish.expr import GlobalVar
from relayish.traverse import post_order
from relayish.types import FloatType, IntType, Kind
from typecheck import infer, type_arguments

F = "Tensor(FloatType(32), Shape({}))"

TEXT = f"""
def @norm[k: Dim](%v: {F.format('k')}) -> {F.format('')} {{ @sum(%v * %v) }}
def @id[t: BaseType](%v: Tensor(t, Shape())) -> Tensor(t, Shape()) {{ %v }}
def @free[q: Dim](%v: {F.format('')}) -> {F.format('')} {{ %v }}
def @outer[m: Dim](%x: {F.format('m + 1')}, %i: Tensor(IntType(32), Shape())) {{
  (@norm(%x), @norm(@concatenate(%x, %x, axis=0)), @norm(@full(shape=(4,))), @id(%i), @id(@sum(%x)), @free(1.0))
}}
"""


def instantiations(text: str, name: str) -> tuple[list[tuple[str, dict]], list]:
    """(callee, its type arguments) for each global referenced in ``@name``, in text order,
    and ``@name``'s type parameters."""
    module = infer(parse(text))
    table = type_arguments(module)
    uses = [n for n in post_order(module[name]) if isinstance(n, GlobalVar)]
    uses.sort(key=lambda n: (n.span.line, n.span.col))
    return [(n.name, table[id(n)]) for n in uses], list(module[name].type_params)


def test_each_use_is_instantiated_in_the_callers_dimensions():
    got, (m,) = instantiations(TEXT, "outer")
    m_dim = Dim.atom(m)
    assert [name for name, _ in got] == ["norm", "norm", "norm", "id", "id", "free"]
    (_, a), (_, b), (_, c), (_, d), (_, e), (_, f) = got
    assert [(tv.name, tv.kind) for tv in a] == [("k", Kind.DIM)] and list(a.values()) == [m_dim + 1]
    assert list(b.values()) == [2 * m_dim + 2]
    assert list(c.values()) == [Dim.const(4)]
    assert [(tv.name, tv.kind) for tv in d] == [("t", Kind.BASE_TYPE)] and list(d.values()) == [IntType(32)]
    assert list(e.values()) == [FloatType(32)]
    assert f == {}, "q appears in no type the call constrains: left out"


def test_a_monomorphic_global_has_no_entry():
    text = f"def @f(%x: {F.format(3)}) -> {F.format(3)} {{ %x }}\ndef @main(%y: {F.format(3)}) {{ @f(%y) }}"
    module = infer(parse(text))
    assert type_arguments(module) == {}


def test_an_untyped_module_is_refused():
    text = f"def @f[n: Dim](%x: {F.format('n')}) {{ %x }}\ndef @main(%y: {F.format(3)}) {{ @f(%y) }}"
    with pytest.raises(RelayTypeError, match="needs a module returned by infer"):
        type_arguments(parse(text))
