"""Algebraic data types in the text format: type definitions, constructors, ``Is``/``Unpack``
and ``match`` print and read back (``parse(astext(m))`` alpha-equal to ``m``, printing
stable), alpha-equivalence and the structural hash treat them structurally, deep terms need
no recursion, and bad text gives a located ``ParseError``. Type checking is not used here.
"""

from __future__ import annotations

import subprocess
import sys

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from relayish import ParseError, alpha_equal, astext, parse, structural_hash
from relayish.expr import (
    Ascribe, Call, Constant, Construct, Expr, Function, GlobalVar, If, IsCtor, Let, Match, Op,
    Pattern, PatternCtor, PatternTuple, PatternVar, PatternWildcard, Proj, Tuple, Unpack, Var,
    pattern_vars,
)  # fmt: skip
from relayish.module import CtorDef, Module, TypeDef
from relayish.parser import parse_expr
from relayish.types import DataType, FloatType, IntType, Kind, Shape, TensorType, TupleType, TypeVar

F32 = TensorType(FloatType(32), Shape())
I32 = TensorType(IntType(32), Shape())
A_PARAM = TypeVar("a", Kind.TYPE)
LIST = TypeDef("List", [A_PARAM], [CtorDef("Cons", [A_PARAM, DataType("List", [A_PARAM])]), CtorDef("Nil")])
B_PARAM = TypeVar("b", Kind.TYPE)
OPTION = TypeDef("Option", [B_PARAM], [CtorDef("Some", [B_PARAM]), CtorDef("None")])
TREE = TypeDef("Tree", [], [
    CtorDef("Leaf", [TensorType(FloatType(32), Shape(4))]), CtorDef("Node", [DataType("Tree"), DataType("Tree")]),
])  # fmt: skip
TYPES = {"List": LIST, "Option": OPTION, "Tree": TREE}
DEFAULT_RECURSION_LIMIT = 1000


def assert_round_trip(m: Module) -> Module:
    text = astext(m)
    back = parse(text)
    assert alpha_equal(back, m), f"parse(astext(m)) is not alpha-equal to m; the text:\n{text}"
    assert structural_hash(back) == structural_hash(m)
    again = astext(back)
    assert again == text, f"printing the parsed module changed the text:\n{text}\n--- became ---\n{again}"
    return back


def round_trip_text(text: str) -> Module:
    """Parse hand-written text, then check the round trip of what it means."""
    return assert_round_trip(parse(text))


@pytest.fixture
def default_recursion_limit():
    saved = sys.getrecursionlimit()
    sys.setrecursionlimit(min(saved, DEFAULT_RECURSION_LIMIT))
    yield
    sys.setrecursionlimit(saved)


# -- hand-written modules ---------------------------------------------------------------------

PROGRAM = """\
# uses come before the definitions: names are known from a pre-scan
def @length[a: Type](%l: List[a]) -> Tensor(IntType(32), Shape()) {
  match %l {
    Cons(_, %t) => 1 + @length(%t),
    Nil => 0,
  }
}

type List[a] { Cons(a, List[a]), Nil }
type Option[b: Type] { Some(b), None }
type Tree { Leaf(Tensor(FloatType(32), Shape(4))), Node(Tree, Tree) }

def @head[a: Type](%l: List[a]) -> Option[a] {
  if Is[Cons](%l) then Some(Unpack[Cons](%l)[0]) else None
}

def @sum_tree(%t: Tree) -> Tensor(FloatType(32), Shape()) {
  match %t {
    Leaf(%x) => @sum(%x),
    Node(Leaf(%x), %r) => let %s = @sum(%x) in %s + @sum_tree(%r),
    Node(%l, %r) => @sum_tree(%l) + @sum_tree(%r)
  }
}

def @pairs(%p: (Option[Tree], List[Tensor(FloatType(32), Shape())])) {
  let %m = match %p {
    (Some(Node(_, %r)), Cons(%h, Nil)) => (%r, %h),
    (None, %l) => match %l { Cons(%h, _) => (Leaf(@full(shape=(4,), fill_value=1.0)), %h), _ => (Leaf(Zero(Tensor(FloatType(32), Shape(4)))), 0.0) },
    (%o, ()) => (Leaf(Zero(Tensor(FloatType(32), Shape(4)))), 0.0),
    ((%x,), _) => %x,
    _ => (Leaf(Zero(Tensor(FloatType(32), Shape(4)))), 0.0),
  } in
  let %f = fn (%o: Option[Tree]) -> Tree { match %o { Some(%t) => %t, None => Leaf(Zero(Tensor(FloatType(32), Shape(4)))) } } in
  (%m, %f(match %p { (%o, _) => %o }), -match %p { _ => 1.0 } * 2.0, Cons(@length(Nil), Nil))
}
"""


def test_program_reads_as_written_and_round_trips():
    m = round_trip_text(PROGRAM)
    assert list(m.type_defs) == ["List", "Option", "Tree"]
    assert alpha_equal(Module({}, {}, m.type_defs), Module({}, {}, TYPES))
    assert [p.kind for p in m.type_defs["List"].params] == [Kind.TYPE]  # [a] is [a: Type]
    length = m["length"].body
    assert isinstance(length, Match) and len(length.patterns) == 2
    first, second = length.patterns
    assert isinstance(first, PatternCtor) and first.ctor == "Cons"
    assert isinstance(first.patterns[0], PatternWildcard) and isinstance(first.patterns[1], PatternVar)
    assert isinstance(second, PatternCtor) and second.ctor == "Nil" and second.patterns == ()
    # the variable %t of the first clause is the one its body uses
    assert length.bodies[0].args[1].args[0] is first.patterns[1].var
    head = m["head"].body
    assert isinstance(head, If) and isinstance(head.cond, IsCtor) and head.cond.ctor == "Cons"
    assert isinstance(head.then_branch, Construct) and isinstance(head.then_branch.fields[0], Proj)
    assert isinstance(head.then_branch.fields[0].tuple_value, Unpack)
    assert isinstance(head.else_branch, Construct) and head.else_branch.fields == ()


def test_printed_layout():
    m = parse(PROGRAM)
    text = astext(Module({"length": m["length"], "head": m["head"]}, {}, {"List": m.type_defs["List"], "Option": m.type_defs["Option"]}))
    assert text == """\
type List[a: Type] {
  Cons(a, List[a]),
  Nil
}

type Option[b: Type] {
  Some(b),
  None
}

def @length[a: Type](%l: List[a]) -> Tensor(IntType(32), Shape()) {
  match %l {
    Cons(_, %t) =>
      1 + @length(%t),
    Nil =>
      0
  }
}

def @head[a: Type](%l: List[a]) -> Option[a] {
  if Is[Cons](%l) then
    Some(Unpack[Cons](%l)[0])
  else
    None
}
"""


def test_type_definitions_print_first_then_operators_then_globals():
    text = """\
operator @g : (Tree) -> Tree
def @f(%t: Tree) { @g(%t) }
type Tree { Leaf, Node(Tree, Tree) }
"""
    m = round_trip_text(text)
    printed = astext(m)
    assert printed.index("type Tree") < printed.index("operator @g") < printed.index("def @f")
    assert printed.startswith("type Tree {\n  Leaf,\n  Node(Tree, Tree)\n}\n\noperator @g : (Tree) -> Tree\n\ndef @f")


def test_mutually_recursive_types_and_type_with_ctor_of_its_name():
    m = round_trip_text("""\
type Forest[a] { Empty, Trees(Rose[a], Forest[a]) }
type Rose[a] { Rose(a, Forest[a]) }
type Box { Box(Tensor(FloatType(32), Shape())) }
def @f(%b: Box, %r: Rose[Box]) {
  ((Box) Box(1.0), (Rose[Box]) Rose(%b, Trees(%r, Empty)), match %r { Rose(Box(%x), Empty) => %x, _ => 0.0 })
}
""")
    fields = m["f"].body.fields
    assert isinstance(fields[0], Ascribe) and fields[0].type == DataType("Box") and isinstance(fields[0].expr, Construct)
    assert isinstance(fields[1], Ascribe) and fields[1].type == DataType("Rose", [DataType("Box")])


def test_matches_compose_with_the_rest_of_the_grammar():
    m = round_trip_text("""\
type L { C(Tensor(FloatType(32), Shape()), L), N }
def @g(%x: Tensor(FloatType(32), Shape())) { %x }
def @f(%l: L, %c: Tensor(BoolType, Shape())) {
  let %a = match %l { C(%h, _) => %h, N => 0.0 } in
  let %b = if %c then match %l { N => 1.0, _ => 2.0 } else match %l { _ => 3.0 } in
  let %k = fn (%y: L) { match %y { C(%h, %t) => fn (%z: L) { (%h, %t, %z) }, N => fn (%z: L) { (0.0, N, %z) } } } in
  let %r = Ref(N) in
  let %u = %r := match !%r { C(_, %t) => %t, N => N } in
  @g(match %l { C(%h, _) => %h, _ => %a }) + match match %l { N => N, %o => %o } { C(%v, _) => %v, N => %b }
    + %k(%l)(N)[0] + (match %l { _ => (1.0, 2.0) })[1] + match (let %q = %a in %q) { %w => %w }
}
""")
    body = m["f"].body
    assert isinstance(body.value, Match)
    assert isinstance(body.body.value, If) and isinstance(body.body.value.then_branch, Match)


def test_clause_bodies_extend_to_the_comma_and_shadow_like_let():
    m = parse("""\
type L { C(Tensor(FloatType(32), Shape()), L), N }
def @f(%l: L, %h: Tensor(FloatType(32), Shape())) {
  match %l { C(%h, %t) => let %x = %h in %x, N => if true then %h else %h, }
}
""")
    match = m["f"].body
    outer_h = m["f"].params[1]
    inner_h = match.patterns[0].patterns[0].var
    assert inner_h is not outer_h
    assert isinstance(match.bodies[0], Let) and match.bodies[0].value is inner_h
    assert match.bodies[1].then_branch is outer_h  # %h of the pattern is bound in its own clause only
    text = astext(m)
    assert "C(%h_1, %t) =>" in text  # the printer never shadows
    assert_round_trip(m)


def test_tuple_patterns_follow_the_tuple_conventions():
    v = Var("v")
    x, y = Var("x"), Var("y")
    patterns = [PatternTuple([]), PatternTuple([PatternVar(x)]), PatternTuple([PatternVar(y), PatternWildcard()])]
    m = Module({"main": Function([v], Match(v, patterns, [Constant(1.0), x, y]))})
    text = astext(assert_round_trip(m))
    assert "    () =>\n" in text and "    (%x,) =>\n" in text and "    (%y, _) =>\n" in text
    # a parenthesized pattern is the pattern itself
    parsed = parse("def @main(%v) {\n  match %v { ((%x)) => %x }\n}\n")
    assert isinstance(parsed["main"].body.patterns[0], PatternVar)


def test_constructor_without_fields_prints_without_parentheses():
    m = round_trip_text("type U { Unit }\ndef @f() { (Unit(), Unit) }\n")
    assert "(Unit, Unit)" in astext(m)
    # called as a function (wrong, but representable): "Unit(%x)" would read as its fields
    x = Var("x")
    called = Module({"f": Function([x], Call(Construct("Unit"), [x]))}, {}, {"U": TypeDef("U", [], [CtorDef("Unit")])})
    assert "Unit()(%x)" in astext(assert_round_trip(called))
    projected = Module({"f": Function([], Proj(Construct("Unit"), 0))}, {}, called.type_defs)
    assert "Unit[0]" in astext(assert_round_trip(projected))


def test_pattern_variables_print_without_their_types():
    """The typed text shows let and parameter types; pattern variables have no place for one."""
    lst = DataType("List", [F32])
    l, h, t = Var("l", lst), Var("h", F32), Var("t", lst)
    clause = PatternCtor("Cons", [PatternVar(h), PatternVar(t)])
    body = Match(l, [clause, PatternCtor("Nil")], [Let(Var("y", F32), h, h), Constant(0.0)])
    m = Module({"f": Function([l], body, F32)}, {}, {"List": LIST})
    text = astext(m)
    assert "Cons(%h, %t) =>" in text and "let %y: Tensor(FloatType(32), Shape()) = %h in" in text
    assert_round_trip(m)


def test_names_that_would_clash_are_renamed():
    """A type variable named like a data type would hide it; one named like a new keyword would not read back."""
    hidden = TypeVar("List", Kind.TYPE)
    keyword = TypeVar("match", Kind.TYPE)
    y = Var("y", DataType("List", [hidden]))
    z = Var("z", keyword)
    m = Module({"main": Function([y, z], y, DataType("List", [hidden]), [hidden, keyword])}, {}, {"List": LIST})
    text = astext(assert_round_trip(m))
    assert "def @main[List_1: Type, match_: Type](%y: List[List_1], %z: match_) -> List[List_1]" in text
    # the same outside a module
    e = Function([y], Ascribe(y, DataType("List", [hidden])), None, [hidden])
    assert astext(e).startswith("fn[List_1: Type](%y: List[List_1])")
    assert alpha_equal(parse_expr(astext(e)), e)


def test_a_type_variable_in_scope_hides_a_data_type():
    m = parse("type T { K }\ndef @f[T: Type](%x: T) { %x }\n")
    assert isinstance(m["f"].params[0].type_annotation, TypeVar)
    assert "def @f[T_1: Type](%x: T_1)" in astext(assert_round_trip(m))


def test_expressions_outside_a_module():
    """parse_expr knows no definitions: names are taken as the data types and constructors they name."""
    e = parse_expr("fn (%x: Option[Tree]) -> List[(Tree,)] { match %x { Some(%t) => Cons((%t,), Nil), None => Nil } }")
    assert e.params[0].type_annotation == DataType("Option", [DataType("Tree")])
    assert e.ret_type == DataType("List", [TupleType([DataType("Tree")])])
    assert alpha_equal(parse_expr(astext(e)), e)
    readings = [
        ("(Nil, Nil)", Tuple), ("(Nil)", Construct), ("(Tree) Leaf(1.0)", Ascribe),
        ("(Cons(1, Nil) + 1)", Call), ("Is[Cons](Nil)", IsCtor), ("Unpack[Cons](Nil)[1]", Proj),
    ]
    for text, cls in readings:
        assert isinstance(parse_expr(text), cls), text


def test_text_means_what_it_says():
    """Hand-written text parses to the intended tree (an oracle independent of the printer)."""
    l, h, t = Var("l"), Var("h"), Var("t")
    expected = Function([l], Match(
        l,
        [PatternCtor("Cons", [PatternVar(h), PatternVar(t)]), PatternCtor("Nil"), PatternWildcard()],
        [Construct("Cons", [h, Construct("Nil")]), Tuple([IsCtor(l, "Nil"), Unpack(l, "Cons")]), Construct("Nil")],
    ))  # fmt: skip
    text = "def @f(%l) { match %l { Cons(%h, %t) => Cons(%h, Nil()), Nil => (Is[Nil](%l), Unpack[Cons](%l)), _ => Nil } }"
    m = parse("type List[a] { Cons(a, List[a]), Nil }\n" + text)
    assert alpha_equal(m, Module({"f": expected}, {}, {"List": LIST}))
    # a different binding: the body uses %t instead of %h
    wrong = text.replace("Cons(%h, Nil())", "Cons(%t, Nil())")
    assert not alpha_equal(parse("type List[a] { Cons(a, List[a]), Nil }\n" + wrong), m)


# -- alpha-equivalence and the structural hash ---------------------------------------------------


def _list_fn(ctor_in_body: str = "Cons", test: str = "Cons", pattern_ctor: str = "Cons", last: str = "%h") -> Module:
    text = f"""\
type List[a] {{ Cons(a, List[a]), Nil, Other(a) }}
def @f(%l: List[Tensor(FloatType(32), Shape())]) {{
  match %l {{ {pattern_ctor}(%h, %t) => ({ctor_in_body}(%h, %t), Is[{test}](%t), Unpack[{test}](%t), {last}), _ => %l }}
}}
"""
    return parse(text)


def test_structural_hash_agrees_and_ctor_names_count():
    base = _list_fn()
    same = _list_fn()
    assert alpha_equal(base, same) and structural_hash(base) == structural_hash(same)
    for changed in (_list_fn(ctor_in_body="Other"), _list_fn(test="Nil"), _list_fn(pattern_ctor="Other"), _list_fn(last="%t")):
        assert not alpha_equal(base, changed) and structural_hash(base) != structural_hash(changed)
    for a, b in [
        (Construct("Cons", [Constant(1.0)]), Construct("Other", [Constant(1.0)])),
        (IsCtor(Constant(1.0), "Cons"), IsCtor(Constant(1.0), "Nil")),
        (Unpack(Constant(1.0), "Cons"), Unpack(Constant(1.0), "Nil")),
        (Unpack(Constant(1.0), "Cons"), IsCtor(Constant(1.0), "Cons")),
        (DataType("List", [F32]), DataType("Option", [F32])),
    ]:
        assert not alpha_equal(a, b) and structural_hash(a) != structural_hash(b)


def test_type_definitions_take_part_in_module_equality():
    def module(text: str) -> Module:
        return parse(text + "\ndef @f(%x: T[Tensor(FloatType(32), Shape())]) { %x }\n")

    base = module("type T[a] { A(a), B }")
    assert alpha_equal(base, module("type T[b: Type] { A(b), B }"))  # parameter names do not matter
    assert structural_hash(base) == structural_hash(module("type T[b: Type] { A(b), B }"))
    for other in ("type T[a] { B, A(a) }", "type T[a] { A(a), C }", "type T[a] { A(a, a), B }",
                  "type T[a] { A(Tensor(FloatType(32), Shape())), B }", "type T[a, c] { A(a), B }",
                  "type T[a] { A(a), B }\ntype U { D }"):
        assert not alpha_equal(base, module(other)), other
        assert structural_hash(base) != structural_hash(module(other)), other
    # definition order does not matter, as for globals
    assert alpha_equal(parse("type U { D }\ntype V { E }"), parse("type V { E }\ntype U { D }"))


def test_match_binds_its_pattern_variables_in_order():
    v = Var("v")
    x, y = Var("x"), Var("y")
    pattern = PatternTuple([PatternVar(x), PatternVar(y)])
    first = Module({"f": Function([v], Match(v, [pattern], [x]))})
    second = Module({"f": Function([v], Match(v, [pattern], [y]))})
    assert not alpha_equal(first, second) and structural_hash(first) != structural_hash(second)
    x2, y2 = Var("q"), Var("r")
    renamed = Module({"f": Function([v2 := Var("w")], Match(v2, [PatternTuple([PatternVar(x2), PatternVar(y2)])], [x2]))})
    assert alpha_equal(first, renamed) and structural_hash(first) == structural_hash(renamed)
    # a pattern variable is not the free variable of the same name
    outer = Var("x")
    free = Module({"f": Function([v, outer], Match(v, [PatternWildcard()], [outer]))})
    bound = Module({"f": Function([v, outer], Match(v, [PatternVar(Var("x"))], [outer]))})
    assert not alpha_equal(free, bound)
    # patterns compare structurally: a wildcard is not a variable, nor a one-tuple its content
    wild = Module({"f": Function([v], Match(v, [PatternWildcard()], [v]))})
    var = Module({"f": Function([v], Match(v, [PatternVar(Var("z"))], [v]))})
    one = Module({"f": Function([v], Match(v, [PatternTuple([PatternWildcard()])], [v]))})
    assert not alpha_equal(wild, var) and not alpha_equal(wild, one)
    assert len({structural_hash(wild), structural_hash(var), structural_hash(one)}) == 3


# -- deep terms --------------------------------------------------------------------------------


def test_10000_nested_constructors(default_recursion_limit):
    """A long list literal, Cons(0.0, Cons(1.0, ... Nil)), 10,000 deep."""
    lst = Construct("Nil")
    for i in range(10_000):
        lst = Construct("Cons", [Constant(float(i)), lst])
    m = Module({"main": Function([], lst)}, {}, {"List": LIST})
    back = assert_round_trip(m)
    assert astext(back).count("Cons(") == 10_000 + 1  # and the definition's


def test_deep_patterns_matches_and_data_types(default_recursion_limit):
    x = Var("x")
    pattern: Pattern = PatternVar(x)
    for i in range(5_000):
        pattern = PatternCtor("Cons", [PatternWildcard(), pattern]) if i % 2 else PatternTuple([pattern, PatternWildcard()])
    v = Var("v")
    body: Expr = Match(v, [pattern, PatternWildcard()], [x, v])
    for _ in range(2_000):  # matches nested in clause bodies
        body = Match(v, [PatternCtor("Nil")], [body])
    ty = F32
    for _ in range(5_000):
        ty = DataType("List", [ty])
    v_typed = Var("v", ty)
    typed = Module({"main": Function([v_typed], Ascribe(v_typed, ty))}, {}, {"List": LIST})
    assert_round_trip(Module({"main": Function([v], body)}, {}, {"List": LIST}))
    assert_round_trip(typed)


# -- errors ------------------------------------------------------------------------------------

LIST_TYPE = "type List[a] { Cons(a, List[a]), Nil }\n"

# (text, line, column, words the message must contain)
ERRORS = [
    (LIST_TYPE + "def @f() {\n  Conz(1.0, Nil)\n}\n", 3, 3, "unknown constructor Conz"),
    (LIST_TYPE + "def @f(%l) {\n  match %l { Cons(%h, Nul) => %h }\n}\n", 3, 23, "unknown constructor Nul"),
    (LIST_TYPE + "def @f(%l) {\n  Is[Cns](%l)\n}\n", 3, 6, "unknown constructor Cns"),
    (LIST_TYPE + "def @f(%l) {\n  List\n}\n", 3, 3, "unknown constructor List (List is a data type"),
    ("def @f() {\n  Nil\n}\n", 2, 3, "unknown constructor Nil"),
    (LIST_TYPE + "def @f(%x: Lst[Tensor(FloatType(32), Shape())]) {\n  %x\n}\n", 2, 12, "unknown type Lst"),
    (LIST_TYPE + "def @f(%x: Tree) {\n  %x\n}\n", 2, 12, "unknown type Tree"),
    ("type T { Leaf(Tre) }\n", 1, 15, "unknown type Tre"),
    ("type T { match }\n", 1, 10, "match is a keyword of the text format and cannot name a constructor"),
    ("type T { A, Unpack(T) }\n", 1, 13, "Unpack is a keyword of the text format and cannot name a constructor"),
    ("type let { A }\n", 1, 6, "let is a keyword of the text format and cannot name a data type"),
    ("type Tensor { A }\n", 1, 6, "Tensor is a keyword of the text format"),
    ("type T { _ }\n", 1, 10, "_ is the wildcard pattern and cannot name a constructor"),
    (LIST_TYPE + "def @f(%l) {\n  match %l {\n    Nil 1\n  }\n}\n", 4, 9, "expected '=>', found '1'"),
    (LIST_TYPE + "def @f(%l) {\n  match %l { Nil => 1 Cons(%h, %t) => 2 }\n}\n", 3, 23, "expected ',' or '}' after a match clause"),
    (LIST_TYPE + "def @f(%l) {\n  match %l { }\n}\n", 3, 14, "expected a match clause"),
    (LIST_TYPE + "def @f(%l) {\n  match %l { Cons(%h, %h) => 1 }\n}\n", 3, 23, "variable %h appears twice in a pattern"),
    (LIST_TYPE + "def @f(%l) {\n  match %l { let => 1 }\n}\n", 3, 14, "expected a pattern"),
    (LIST_TYPE + "def @f(%l) {\n  (match %l { %h => %h }, %h)\n}\n", 3, 27, "unbound variable %h"),
    ("type Empty { }\n", 1, 6, "type Empty needs at least one constructor"),
    ("type Empty\n", 1, 11, "expected '{', found end of input"),
    ("type T { A, B, A }\n", 1, 16, "constructor A is defined twice"),
    ("type T { A }\n\ntype U { B(T), A }\n", 3, 16, "constructor A is defined twice (type T defines it too)"),
    ("type T { A }\ntype T { B }\n", 2, 6, "type T is defined twice"),
    ("type T[a, a] { A(a) }\n", 1, 11, "type parameter a appears twice"),
    ("type T[n: Dim] { A }\n", 1, 11, "a data type's parameters are of kind Type, not Dim"),
    ("type T { A B }\n", 1, 12, "expected ',' or '}' after a constructor"),
    (LIST_TYPE + "def @f(%x: List[]) {\n  %x\n}\n", 2, 17, "expected a type, found ']'"),
    (LIST_TYPE + "def @f[match: Type](%x) {\n  %x\n}\n", 2, 8, "expected a type variable name, found 'match'"),
    ("fn (%x) { %x }\n", 1, 1, "(or 'type', which defines a data type)"),
]  # fmt: skip


@pytest.mark.parametrize("text, line, col, words", ERRORS)
def test_parse_error_location_and_message(text, line, col, words):
    with pytest.raises(ParseError) as info:
        parse(text, filename="bad.rly")
    err = info.value
    assert (err.span.line, err.span.col) == (line, col), str(err)
    assert words in err.message, str(err)
    assert str(err).startswith(f"bad.rly:{line}:{col}: ")


def test_constructor_names_are_prescanned_without_quadratic_work():
    """Many unterminated type definitions: the pre-scan looks at each token once."""
    text = "type T { A(" * 20_000
    with pytest.raises(ParseError):
        parse(text)


# -- generated terms ---------------------------------------------------------------------------

CTORS = {"Cons": 2, "Nil": 0, "Some": 1, "None": 0, "Leaf": 1, "Node": 2}
HINTS = ("x", "y", "h", "t", "x_1")


@st.composite
def patterns(draw, depth: int = 0) -> Pattern:
    """A random pattern; variable hints repeat so that the printer has to rename them."""
    kinds = ["wild", "var"] if depth >= 4 else ["wild", "var", "ctor", "tuple"]
    kind = draw(st.sampled_from(kinds))
    if kind == "wild":
        return PatternWildcard()
    if kind == "var":
        return PatternVar(Var(draw(st.sampled_from(HINTS))))
    if kind == "ctor":
        ctor = draw(st.sampled_from(sorted(CTORS)))
        return PatternCtor(ctor, [draw(patterns(depth + 1)) for _ in range(CTORS[ctor])])
    size = draw(st.integers(0, 3))
    return PatternTuple([draw(patterns(depth + 1)) for _ in range(size)])


@st.composite
def expressions(draw, scope: tuple[Var, ...], depth: int = 0) -> Expr:
    """A random (untyped) expression over the data type forms and the ones they meet."""
    leaves = ["const", "nil"] + (["var"] if scope else [])
    kinds = leaves if depth >= 4 else leaves + ["ctor", "is", "unpack", "match", "let", "if", "tuple", "proj", "call", "fn", "add"]
    kind = draw(st.sampled_from(kinds))
    sub = lambda s=scope: expressions(s, depth + 1)  # noqa: E731
    if kind == "const":
        return Constant(draw(st.sampled_from([0.0, 1.5, -2.0])))
    if kind == "nil":
        return Construct(draw(st.sampled_from(["Nil", "None"])))
    if kind == "var":
        return draw(st.sampled_from(scope))
    if kind == "ctor":
        ctor = draw(st.sampled_from(sorted(CTORS)))
        return Construct(ctor, [draw(sub()) for _ in range(CTORS[ctor])])
    if kind in ("is", "unpack"):
        return (IsCtor if kind == "is" else Unpack)(draw(sub()), draw(st.sampled_from(sorted(CTORS))))
    if kind == "match":
        value = draw(sub())
        clauses = draw(st.lists(patterns(), min_size=1, max_size=3))
        bodies = [draw(sub(scope + tuple(pattern_vars(p)))) for p in clauses]
        return Match(value, clauses, bodies)
    if kind == "let":
        var = Var(draw(st.sampled_from(HINTS)))
        return Let(var, draw(sub()), draw(sub(scope + (var,))))
    if kind == "if":
        return If(draw(sub()), draw(sub()), draw(sub()))
    if kind == "tuple":
        return Tuple([draw(sub()) for _ in range(draw(st.integers(0, 3)))])
    if kind == "proj":
        return Proj(draw(sub()), draw(st.integers(0, 2)))
    if kind == "call":
        callee = draw(st.one_of(st.just(GlobalVar("main")), sub()))
        return Call(callee, [draw(sub()) for _ in range(draw(st.integers(0, 2)))])
    if kind == "fn":
        param = Var(draw(st.sampled_from(HINTS)), draw(st.sampled_from([None, DataType("List", [F32]), DataType("Tree")])))
        return Function([param], draw(sub(scope + (param,))))
    return Call(Op("add"), [draw(sub()), draw(sub())])


@settings(max_examples=300)
@given(st.data())
def test_round_trip_of_generated_terms(data):
    param = Var("p")
    body = data.draw(expressions((param,)))
    tree = TypeDef("Tree", [], [CtorDef("Leaf", [F32]), CtorDef("Node", [DataType("Tree"), DataType("Tree")])])
    m = Module({"main": Function([param], body)}, {}, {"List": LIST, "Option": OPTION, "Tree": tree})
    assert_round_trip(m)


@settings(max_examples=200)
@given(st.lists(patterns(), min_size=1, max_size=4), st.data())
def test_generated_patterns_bind_what_they_name(clauses, data):
    """Each clause's body refers to one of its own pattern variables (or the scrutinee)."""
    v = Var("v")
    bodies = []
    for p in clauses:
        bound = pattern_vars(p)
        bodies.append(data.draw(st.sampled_from(bound)) if bound else v)
    m = Module({"main": Function([v], Match(v, clauses, bodies))}, {}, {"List": LIST, "Option": OPTION, "Tree": TREE})
    back = assert_round_trip(m)
    match = back["main"].body
    for p, body in zip(match.patterns, match.bodies):
        bound = pattern_vars(p)
        assert body in bound or body is back["main"].params[0]


# -- the docs ----------------------------------------------------------------------------------


def test_text_format_doc_examples_read_back():
    """The example module and the table of "Algebraic data types" in docs/text-format.md parse."""
    import pathlib

    doc = (pathlib.Path(__file__).resolve().parents[2] / "docs" / "text-format.md").read_text()
    section = doc.split("## Algebraic data types", 1)[1].split("\n## ", 1)[0].split("\n### The Prelude", 1)[0]
    example = section.split("```\n", 2)[2].split("```", 1)[0]
    m = round_trip_text(example)
    assert list(m.type_defs) == ["List", "Option", "Tree"] and list(m.functions) == ["length"]
    types = "type Pair[a, b: Type] { Pair(a, b) }\n" + example.split("\n\n")[0]
    header = "def @f(%h: Tree, %t: List[Tree], %x: Tree, %l: List[Tree], %o: Option[Tree], %a: Tree) "
    for line in section.splitlines():
        if not line.startswith("| ") or line.startswith("| form"):
            continue
        label, cell = line.strip("| ").split(" | ")
        for snippet in cell.split("`")[1::2]:
            if snippet.startswith("type "):
                parse(snippet)
            elif label == "data type":
                parse(types + f"\ndef @f[b: Type](%x: {snippet}) {{ %x }}")
            elif "pattern" in label:
                parse(types + f"\n{header}{{ match %l {{ {snippet} => 0.0 }} }}")
            else:
                parse(types + f"\n{header}{{ {snippet} }}")
    layout = doc.split("## Layout", 1)[1].split("```\n", 1)[1].split("```", 1)[0]
    assert astext(parse(example.split("\n\n")[0] + "\n" + layout)).endswith(layout)


# -- a base module (the Prelude) ------------------------------------------------------------------


def test_the_prelude_export_survives_loading_the_parser():
    """``relayish.prelude()`` gives the parsed Prelude also once ``relayish.parser``, which imports
    the Prelude's text, is loaded: a submodule named ``prelude`` would take the export's place.
    A fresh process, so that no other test has imported anything yet."""
    code = ("import relayish.parser\nimport relayish\nm = relayish.prelude()\n"
            "assert isinstance(m, relayish.Module), m\nprint(*(c.name for c in m.type_defs['List'].ctors))")
    result = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=300)
    assert result.returncode == 0, result.stderr
    assert result.stdout.split() == ["Cons", "Nil"]


def test_parse_extending_a_base_module():
    """``parse(text, base=m)``: the text may use the types, constructors and globals of ``m``
    (here the Prelude); the module has them first, then its own; redefining one is a located error."""
    from relayish.parser import prelude_module as prelude

    base = prelude()
    m = parse("def @f(%x: Tensor(FloatType(32), Shape())) -> List[Tensor(FloatType(32), Shape())] {\n"
              "  Cons(%x, Nil)\n}\n", base=base)
    assert list(m.type_defs) == list(base.type_defs) and list(m.functions) == [*base.functions, "f"]
    assert_round_trip(m)
    with pytest.raises(ParseError, match="unknown constructor Cons"):
        parse("def @f(%x) { Cons(%x, Nil) }\n")  # not without it
    for text, col, words in [
        ("type List[a] { Cons(a, List[a]), Nil }\n", 6, "type List is defined twice (the base module"),
        ("type Mine { Nil }\n", 13, "constructor Nil is defined twice (type List of the base module"),
        (f"def @{next(iter(base.functions))}() {{ 1 }}\n", 5, "is defined twice (the base module"),
    ]:
        with pytest.raises(ParseError) as info:
            parse(text, "bad.rly", base=base)
        assert (info.value.span.line, info.value.span.col) == (1, col) and words in info.value.message
    with pytest.raises(TypeError):
        parse("", base=True)
