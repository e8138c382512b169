"""Checking algebraic data types: constructors, Is/Unpack and match against hand-computed types,
kind errors of data types, clear errors, and warnings for matches with missing cases (each naming
a value no clause matches)."""

from __future__ import annotations

import warnings

import numpy as np
import pytest

import relayish
from relayish.errors import NonExhaustiveMatch
from relayish.ir import FloatType, Function, FuncType, Module, Shape, TensorType, TypeVar, Var
from relayish.module import CtorDef, TypeDef
from relayish.traverse import bound_vars
from relayish.types import DataType, TupleType, Type
from tests.core.test_adt_text import assert_round_trip
from typecheck.inference import declared_type

F = "Tensor(FloatType(32), Shape())"
F32 = TensorType(FloatType(32), Shape())
UNIT = TupleType([])


def checked(src: str) -> relayish.Module:
    with warnings.catch_warnings():
        warnings.simplefilter("error", NonExhaustiveMatch)
        return relayish.infer_types(relayish.parse(src, prelude=True))


def type_of(src: str, name: str = "f") -> str:
    return relayish.astext(declared_type(checked(src)[name]))


def missing_cases(src: str) -> list[str]:
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        relayish.infer_types(relayish.parse(src, prelude=True))
    return [str(w.message) for w in caught if issubclass(w.category, NonExhaustiveMatch)]


def test_constructors_instantiate_their_type_parameters() -> None:
    assert type_of(f"def @f(%x: {F}) {{ Cons(%x, Nil) }}") == f"({F}) -> List[{F}]"
    assert type_of(f"def @f(%x: {F}) {{ Some((%x, Cons(%x, Nil))) }}") == f"({F}) -> Option[({F}, List[{F}])]"
    assert type_of(f"def @f(%x: {F}) {{ Node(Leaf(%x), Leaf(%x * %x)) }}") == f"({F}) -> Tree[{F}]"


def test_is_and_unpack_have_bool_and_field_types() -> None:
    assert type_of(f"def @f(%l: List[{F}]) {{ Is[Cons](%l) }}") == \
        f"(List[{F}]) -> Tensor(BoolType, Shape())"
    assert type_of(f"def @f(%l: List[{F}]) {{ Unpack[Cons](%l) }}") == f"(List[{F}]) -> ({F}, List[{F}])"


def test_match_binds_pattern_variables_with_field_types() -> None:
    src = f"""
def @f(%p: (List[{F}], Option[{F}])) {{
  match %p {{
    (Cons(%h, _), Some(%y)) => %h + %y,
    (Cons(%h, %t), None) => %h,
    (Nil, _) => 0f32,
  }}
}}"""
    assert type_of(src) == f"((List[{F}], Option[{F}])) -> {F}"


def test_polymorphic_prelude_functions_instantiate() -> None:
    src = f"""
def @f(%l: List[{F}]) {{ @map(fn (%x: {F}) {{ (%x, %x > 0f32) }}, %l) }}"""
    assert type_of(src) == f"(List[{F}]) -> List[({F}, Tensor(BoolType, Shape()))]"
    assert type_of(f"def @f(%l: List[{F}]) {{ @length(%l) }}") == f"(List[{F}]) -> Tensor(IntType(32), Shape())"


@pytest.mark.parametrize("body, message", [
    ("Cons(%x)", "Cons takes 2 fields, not 1"),
    ("Cons(%x, Cons(1, Nil))", "field 2 of Cons"),
    ("Is[Some](%x)", "the operand of IsCtor"),
    ("match Cons(%x, Nil) { Some(%y) => %y, _ => %x }", "the pattern Some"),
    ("match Cons(%x, Nil) { Cons(%h, %t) => %h, Nil => 1 }", "clause 2 of the match"),
    ("match (%x, %x) { (%a, %b, %c) => %a }", "a tuple pattern of 3 fields"),
])
def test_type_errors_point_at_the_construct(body: str, message: str) -> None:
    src = f"def @f(%x: {F}) {{\n  {body}\n}}"
    with pytest.raises(relayish.RelayTypeError, match=message) as info:
        checked(src)
    assert info.value.span is not None and info.value.span.line == 2


def test_unknown_constructor_and_kind_errors() -> None:
    a = TypeVar("a")
    pair = TypeDef("Pair", [a], [CtorDef("MkPair", [a, a])])
    x = Var("x", DataType("Pair", []))
    with pytest.raises(relayish.KindError, match="Pair takes 1 type argument, not 0"):
        relayish.infer_types(Module({"f": Function([x], x)}, type_defs={"Pair": pair}))
    y = Var("y", DataType("Missing", [F32]))
    with pytest.raises(relayish.KindError, match="unknown data type Missing"):
        relayish.infer_types(Module({"f": Function([y], y)}, type_defs={"Pair": pair}))
    bad = TypeDef("Bad", [], [CtorDef("MkBad", [DataType("Pair", [F32, F32])])])
    with pytest.raises(relayish.KindError, match="field 0 of constructor MkBad of type Bad: .*Pair takes 1 type argument, not 2"):
        relayish.infer_types(Module({}, type_defs={"Bad": bad, "Pair": pair}))
    with pytest.raises(ValueError, match="kind Type"):
        TypeDef("Vec", [TypeVar("n", relayish.ir.Kind.DIM)], [CtorDef("MkVec", [])])


def test_missing_cases_are_warned_with_a_value_no_clause_matches() -> None:
    assert missing_cases(f"def @f(%l: List[{F}]) {{\n  match %l {{ Cons(%h, _) => %h }} }}") == \
        ["<string>:2:3: this match has no clause for Nil"]
    (nested,) = missing_cases(f"def @f(%l: List[{F}]) {{ match %l {{ Cons(%h, Nil) => %h, Nil => 0f32 }} }}")
    assert nested.endswith("no clause for Cons(_, Cons(_, _))")
    (pair,) = missing_cases(f"def @f(%p: (Option[{F}], Option[{F}])) {{ match %p {{ (Some(%a), _) => %a, (_, Some(%b)) => %b }} }}")
    assert pair.endswith("no clause for (None, None)")
    complete = f"def @f(%l: List[{F}]) {{ match %l {{ Cons(%h, Nil) => %h, Cons(_, Cons(%h, _)) => %h, Nil => 0f32 }} }}"
    assert missing_cases(complete) == []
    assert missing_cases(f"def @f(%x: {F}) {{ match %x {{ %y => %y }} }}") == []


def test_a_value_no_clause_matches_is_a_run_time_error_in_both_backends() -> None:
    src = f"def @f(%l: List[{F}], %x: {F}) -> {F} {{\n  match %l {{ Cons(%h, _) => %h + %x }}\n}}"
    nil = relayish.DataValue("Nil")
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", NonExhaustiveMatch)
        module = relayish.parse(src, prelude=True)
        with pytest.raises(relayish.RelayRuntimeError, match="Nil") as info:
            relayish.evaluate(module, "f", nil, np.float32(1))
        assert info.value.span.line == 2
        compiled = relayish.compile(module, "f", tiered=False)
        with pytest.raises(relayish.RelayRuntimeError, match="Nil") as info:
            compiled(nil, np.float32(1))
        assert info.value.span.line == 2
        assert compiled(relayish.DataValue("Cons", (np.float32(2), nil)), np.float32(1)) == 3


def binding_types(fn: Function) -> dict[str, Type | None]:
    """The annotation the checker gave each variable ``fn`` binds (lets, parameters, patterns), by name."""
    return {v.name_hint: v.type_annotation for v in bound_vars(fn)}


@pytest.mark.parametrize("body, expected", [
    ("let %y = Nil in match %y { Cons(%h, %t) => 1f32, Nil => %x }",
     {"y": DataType("List", [UNIT]), "h": UNIT, "t": DataType("List", [UNIT])}),
    ("let %p = (Nil, None) in %x", {"p": TupleType([DataType("List", [UNIT]), DataType("Option", [UNIT])])}),
    # the outer element type is the call's, the inner one is free
    ("let %g = fn (%l) { match %l { Nil => %x, Cons(_, _) => 1f32 } } in %g(Cons(Nil, Nil))",
     {"l": DataType("List", [DataType("List", [UNIT])]),
      "g": FuncType([DataType("List", [DataType("List", [UNIT])])], F32)}),
    ("match None { Some(%v) => 1f32, None => %x }", {"v": UNIT}),
    # not only data types: the parameter of a function never called
    ("let %f = fn (%a) { 1f32 } in %x", {"f": FuncType([UNIT], F32), "a": UNIT}),
])
def test_an_unconstrained_type_argument_defaults_to_unit(body: str, expected: dict[str, Type]) -> None:
    types = binding_types(checked(f"def @main(%x: {F}) {{ {body} }}")["main"])
    assert types == {"x": F32, **expected}


def test_a_typed_program_with_a_defaulted_argument_reads_back_and_runs_in_both_backends() -> None:
    src = f"""
def @main(%x: {F}) {{
  let %y = Cons(Nil, Nil) in
  match %y {{ Cons(Cons(_, _), _) => 1f32, Cons(Nil, _) => %x * 2f32, Nil => 0f32 }}
}}"""
    typed = checked(src)
    assert binding_types(typed["main"])["y"] == DataType("List", [DataType("List", [UNIT])])
    back = assert_round_trip(typed)
    x = np.float32(1.5)
    assert relayish.evaluate(back, "main", x) == 3
    assert relayish.compile(back, "main", tiered=False)(x) == 3
    assert relayish.compile(relayish.parse(src, prelude=True), "main", tiered=False)(x) == 3


def test_a_function_never_called_reads_back_and_compiles() -> None:
    """Its parameter's type was left unknown: the typed text said ``_`` and compiling raised a KindError."""
    src = f"def @main(%x: {F}) {{ let %f = fn (%a) {{ 1f32 }} in %x }}"
    back = assert_round_trip(checked(src))
    assert relayish.compile(back, "main", tiered=False)(np.float32(2.5)) == 2.5
    assert relayish.compile(relayish.parse(src), "main", tiered=False)(np.float32(2.5)) == 2.5


def test_a_free_type_argument_in_a_global_type_still_asks_for_an_annotation() -> None:
    with pytest.raises(relayish.RelayTypeError, match=r"cannot infer the type of @f \(\(\) -> List\[_\]\)"):
        checked("def @f() { Nil }")
