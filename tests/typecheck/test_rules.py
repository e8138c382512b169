"""Every typing rule of the Relay paper's Figure 6 (plus ours): a well-typed program with its
exact inferred type, and an ill-typed variant with its exact error and location.

Expected types and messages are written out by hand here; they are the oracle.
"""

import pytest

import relayish
from typecheck.inference import declared_type

F = "Tensor(FloatType(32), Shape())"
I = "Tensor(IntType(32), Shape())"
B = "Tensor(BoolType, Shape())"


def typed(src: str, name: str = "f") -> str:
    module = relayish.infer_types(relayish.parse(src.replace("$F", F), "t.rly"))
    return str(declared_type(module[name]))


def type_error(src: str) -> relayish.RelayTypeError:
    with pytest.raises(relayish.RelayTypeError) as info:
        relayish.infer_types(relayish.parse(src.replace("$F", F), "t.rly"))
    return info.value


WELL_TYPED = [
    ("int literal", "def @f() { 1 }", f"() -> {I}"),
    ("float literal", "def @f() { 2.5 }", f"() -> {F}"),
    ("bool literal", "def @f() { true }", f"() -> {B}"),
    ("suffixed literal", "def @f() { 3i64 }", "() -> Tensor(IntType(64), Shape())"),
    ("tensor literal", "def @f() { tensor(FloatType(64), Shape(2, 3), [1.0, 2.0, 3.0, 4.0, 5.0, 6.0]) }",
     "() -> Tensor(FloatType(64), Shape(2, 3))"),
    ("product", "def @f() { (1, 2.5, ()) }", f"() -> ({I}, {F}, ())"),
    ("projection", "def @f() { (1, 2.5)[1] }", f"() -> {F}"),
    ("let", "def @f() { let %x = 1 in (%x, %x) }", f"() -> ({I}, {I})"),
    ("closure", "def @f() { fn (%x: $F) { (%x, %x) } }", f"() -> ({F}) -> ({F}, {F})"),
    ("closure with inferred parameter", "def @f() { let %g = fn (%x) { %x } in %g(1) }", f"() -> {I}"),
    ("call", "def @g(%x: $F) -> $F { %x }\ndef @f() { @g(2.0) }", f"() -> {F}"),
    ("if", f"def @f(%c: {B}) {{ if %c then 1 else 2 }}", f"({B}) -> {I}"),
    ("zero", "def @f() { Zero((Tensor(FloatType(32), Shape(3)), Tensor(IntType(8), Shape()))) }",
     "() -> (Tensor(FloatType(32), Shape(3)), Tensor(IntType(8), Shape()))"),
    ("grad", "def @f() { Grad(fn (%x: $F, %y: ($F, Tensor(IntType(32), Shape(2)))) { %x }) }",
     f"() -> ({F}, ({F}, Tensor(IntType(32), Shape(2)))) -> ({F}, ({F}, ({F}, Tensor(IntType(32), Shape(2)))))"),
    ("ref, read and write", "def @f() { let %r = Ref(1.0) in let %u = %r := 2.0 in (!%r, %u) }", f"() -> ({F}, ())"),
    ("ascription", "def @f() { ($F) 1.0 }", f"() -> {F}"),
    ("mutual recursion from annotations",
     f"def @even(%n: {I}) -> {B} {{ @odd(%n) }}\ndef @odd(%n: {I}) -> {B} {{ @even(%n) }}\ndef @f() {{ @even(1) }}",
     f"() -> {B}"),
    ("use before definition", "def @f(%x: Tensor(FloatType(32), Shape(3))) { @b(%x) }\n"
     "def @b(%y: Tensor(FloatType(32), Shape(3))) { (%y, %y) }",
     "(Tensor(FloatType(32), Shape(3))) -> (Tensor(FloatType(32), Shape(3)), Tensor(FloatType(32), Shape(3)))"),
    ("local recursion", f"def @f() {{ let %loop = fn (%i: {I}) -> {I} {{ %loop(%i) }} in %loop(3) }}", f"() -> {I}"),
    ("local recursion projecting its own result",
     f"def @f() {{ let %loop = fn (%i: {I}) -> ({I}, $F) {{ let %r = %loop(%i - 1) in (%i, %r[1]) }} in %loop(3)[1] }}",
     f"() -> {F}"),
    ("unary operators", "def @f(%a: Tensor(FloatType(32), Shape(3))) { (-%a, sq %a) }",
     "(Tensor(FloatType(32), Shape(3))) -> (Tensor(FloatType(32), Shape(3)), Tensor(FloatType(32), Shape(3)))"),
    ("arithmetic with broadcasting",
     "def @f(%a: Tensor(FloatType(32), Shape(3, 4, 1)), %b: Tensor(FloatType(32), Shape(1, 5))) { %a * %b + %b }",
     "(Tensor(FloatType(32), Shape(3, 4, 1)), Tensor(FloatType(32), Shape(1, 5))) -> Tensor(FloatType(32), Shape(3, 4, 5))"),
    ("comparison", "def @f(%a: Tensor(FloatType(64), Shape(3)), %b: Tensor(FloatType(64), Shape(3))) { %a < %b }",
     "(Tensor(FloatType(64), Shape(3)), Tensor(FloatType(64), Shape(3))) -> Tensor(BoolType, Shape(3))"),
]


@pytest.mark.parametrize("name, src, expected", WELL_TYPED, ids=[c[0] for c in WELL_TYPED])
def test_well_typed(name, src, expected):
    assert typed(src) == expected


ILL_TYPED = [
    ("int literal", "def @f() -> $F { 1 }", 1, 46,
     f"the function body (it must have the return type): expected {F}, found {I} (FloatType(32) vs IntType(32))"),
    ("bool literal", "def @f() -> $F {\n  true\n}", 2, 3,
     f"the function body (it must have the return type): expected {F}, found {B} (FloatType(32) vs BoolType)"),
    ("tensor literal", "def @f() {\n  (Tensor(FloatType(64), Shape(6))) tensor(FloatType(64), Shape(2, 3), [1.0, 2.0, 3.0, 4.0, 5.0, 6.0])\n}",
     2, 3, "the ascription: expected Tensor(FloatType(64), Shape(6)), found Tensor(FloatType(64), Shape(2, 3)) (rank 1 vs 2)"),
    ("product", "def @f() -> (Tensor(IntType(32), Shape()),) {\n  (1, 2.5)\n}", 2, 3,
     f"the function body (it must have the return type): expected ({I},), found ({I}, {F}) (a tuple of 1 vs a tuple of 2)"),
    ("projection out of range", "def @f() {\n  (1, 2.5)[2]\n}", 2, 11, f"projection [2]: the tuple has 2 fields ({I}, {F})"),
    ("projection of a tensor", "def @f() {\n  2.5[0]\n}", 2, 6, f"projection [0]: expected a tuple, found {F}"),
    ("let", "def @f() {\n  let %x: $F = 1 in %x\n}", 2, 3,
     f"the value bound to %x: expected {F}, found {I} (FloatType(32) vs IntType(32))"),
    ("closure", "def @f() {\n  fn (%x: $F) -> Tensor(IntType(32), Shape()) { %x }\n}", 2, 3,
     f"the function body (it must have the return type): expected {I}, found {F} (IntType(32) vs FloatType(32))"),
    ("call argument", "def @g(%x: $F) -> $F { %x }\ndef @f() {\n  @g(2)\n}", 3, 6,
     f"argument 1 of the call: expected {F}, found {I} (FloatType(32) vs IntType(32))"),
    ("call arity", "def @g(%x: $F) -> $F { %x }\ndef @f() {\n  @g(2.0, 3.0)\n}", 3, 3,
     f"call: the function takes 1 argument, not 2 (({F}) -> {F})"),
    ("call of a tensor", "def @f() {\n  let %x = 1 in %x(2)\n}", 2, 17, f"call: expected a function, found {I}"),
    ("if condition", "def @f(%a: $F) {\n  if %a then 1 else 2\n}", 2, 3,
     f"the condition of if: expected {B}, found {F} (BoolType vs FloatType(32))"),
    ("if branches", f"def @f(%c: {B}) {{\n  if %c then 1 else 2.0\n}}", 2, 21,
     f"the else branch (it must have the type of the then branch): expected {I}, found {F} (IntType(32) vs FloatType(32))"),
    ("zero", "def @f() {\n  Zero(RefType($F))\n}", 2, 3, f"Zero: expected a tensor type or a tuple of them, found RefType({F})"),
    ("grad of a non-scalar", "def @f() {\n  Grad(fn (%x: Tensor(FloatType(32), Shape(3))) { %x })\n}", 2, 3,
     "Grad: the function must return a floating-point scalar, but it returns Tensor(FloatType(32), Shape(3))"),
    ("grad of a non-function", "def @f() {\n  Grad(1.0)\n}", 2, 3, f"Grad: expected a function, found {F}"),
    ("ref write", "def @f() {\n  let %r = Ref(1.0) in %r := 2\n}", 2, 27,
     f"the reference written by :=: expected RefType({I}), found RefType({F}) (IntType(32) vs FloatType(32))"),
    ("ref read", "def @f() {\n  !1.0\n}", 2, 3, f"the operand of !: expected RefType(_), found {F} (RefType(_) vs {F})"),
    ("ascription", "def @f() {\n  (Tensor(FloatType(64), Shape())) 1.0\n}", 2, 3,
     f"the ascription: expected Tensor(FloatType(64), Shape()), found {F} (FloatType(64) vs FloatType(32))"),
    ("recursion that decides nothing", "def @f(%n) {\n  @f(%n)\n}", 1, 1, "cannot infer the type of @f ((_) -> __1): annotate its parameters"),
    ("uninferable parameter", "def @f(%x) {\n  %x\n}", 1, 1, "cannot infer the type of @f ((_) -> _): annotate its parameters"),
]


@pytest.mark.parametrize("name, src, line, col, message", ILL_TYPED, ids=[c[0] for c in ILL_TYPED])
def test_ill_typed(name, src, line, col, message):
    err = type_error(src)
    assert (err.span.file, err.span.line, err.span.col) == ("t.rly", line, col)
    assert err.message == message
    rendered = str(err).splitlines()
    assert rendered[0] == f"t.rly:{line}:{col}: {message}"
    assert rendered[2].strip() == "^"


def test_operator_errors_name_the_conflicting_dimension():
    err = type_error("def @f(%a: Tensor(FloatType(32), Shape(3)), %b: Tensor(FloatType(32), Shape(4))) {\n  %a + %b\n}")
    assert (err.span.line, err.span.col) == (2, 6)
    assert err.message.startswith("@add: ") and "dimension 0: 3 vs 4" in err.message


def test_comparison_of_different_dtypes_is_rejected():
    err = type_error("def @f(%a: Tensor(FloatType(32), Shape(3)), %b: Tensor(FloatType(64), Shape(3))) {\n  %a < %b\n}")
    assert (err.span.line, err.span.col) == (2, 6)
    assert "FloatType(32)" in err.message and "FloatType(64)" in err.message


def test_independent_errors_are_all_reported():
    src = (
        "def @a() -> $F {\n  1\n}\n"
        "def @ok() { 1.0 }\n"
        "def @b(%c: $F) {\n  if %c then 1 else 2\n}\n"
    )
    err = type_error(src)
    assert [(e.span.line, e.span.col) for e in err.errors] == [(2, 3), (6, 3)]
    assert str(err).startswith("2 type errors:\nt.rly:2:3: ")


def test_typed_ir_prints_and_parses_back():
    src = "def @f(%a: Tensor(FloatType(32), Shape(3))) {\n  let %g = fn (%x) { %x * %a } in\n  let %y = %g(%a) in\n  (%y, Ref(%y))\n}"
    typed_module = relayish.infer_types(relayish.parse(src))
    text = relayish.astext(typed_module)
    assert "let %g: (Tensor(FloatType(32), Shape(3))) -> Tensor(FloatType(32), Shape(3)) = fn (%x: Tensor(FloatType(32), Shape(3))) -> Tensor(FloatType(32), Shape(3)) {" in text
    assert "let %y: Tensor(FloatType(32), Shape(3)) = %g(%a) in" in text
    assert "def @f(%a: Tensor(FloatType(32), Shape(3))) -> (Tensor(FloatType(32), Shape(3)), RefType(Tensor(FloatType(32), Shape(3)))) {" in text
    again = relayish.parse(text)
    assert relayish.alpha_equal(again, typed_module)
    assert relayish.alpha_equal(relayish.infer_types(again), typed_module)
