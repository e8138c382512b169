"""The checker's error contract (issue 20): whatever parses either checks or raises
RelayTypeError (KindError for a term of the wrong kind) at the user's source, never an
internal error and never another exception; ``relayish fmt`` and ``relayish check`` print
the module or the error.

Each case here once gave an internal error, a misleading second error, a hang, a crash
of the printer, or nothing at all.
"""

from __future__ import annotations

import pytest

import relayish
from relayish.cli import main
from relayish.dims import MAX_SIZE
from relayish.testing.ir_strategies import time_limit
from typecheck import check_kinds

USE = "def @main(%y: Tensor(FloatType(32), Shape(2))) { @f(%y) }"

# (what, a definition of @f that @main uses, line, column, message): one KindError, at @f's
# parameter (its definition for a result type, @main's use of it for an operator declaration:
# declarations keep no position), naming the variable, its kind and the kind expected.
KIND_CONFUSIONS = [
    ("the issue's: a Dim variable as a dtype", "def @f[n: Dim](%x: Tensor(n, Shape(2))) { %x }", 1, 16,
     "the element type of a tensor must be of kind BaseType, but n is of kind Dim"),
    ("a Dim variable as a dtype and a dimension", "def @f[n: Dim](%x: Tensor(n, Shape(n))) -> Tensor(n, Shape(n)) { %x }", 1, 16,
     "the element type of a tensor must be of kind BaseType, but n is of kind Dim"),
    ("a Dim variable as a dtype of a second parameter",
     "def @f[n: Dim](%x: Tensor(FloatType(32), Shape(n)), %d: Tensor(n, Shape())) -> Tensor(FloatType(32), Shape(n)) { %x }",
     1, 53, "the element type of a tensor must be of kind BaseType, but n is of kind Dim"),
    ("a Shape variable as a dtype", "def @f[s: Shape](%x: Tensor(s, s)) -> Tensor(s, s) { %x }", 1, 18,
     "the element type of a tensor must be of kind BaseType, but s is of kind Shape"),
    ("a Type variable as a shape", "def @f[t: Type](%x: Tensor(FloatType(32), t)) -> Tensor(FloatType(32), t) { %x }", 1, 17,
     "the shape of a tensor must be of kind Shape, but t is of kind Type"),
    ("a Dim variable as a shape", "def @f[n: Dim](%x: Tensor(FloatType(32), n)) -> Tensor(FloatType(32), n) { %x }", 1, 16,
     "the shape of a tensor must be of kind Shape, but n is of kind Dim"),
    ("a Dim variable as a type", "def @f[n: Dim](%x: n) -> n { %x }", 1, 16,
     "the annotation of parameter %x must be of kind Type, but n is of kind Dim"),
    ("a BaseType variable as a result type", "def @f[t: BaseType](%x: Tensor(t, Shape(2))) -> t { %x }", 1, 1,
     "the return type must be of kind Type, but t is of kind BaseType"),
    ("a declared operator's Dim variable as a dtype", "operator @f : forall (n: Dim), (Tensor(n, Shape(n))) -> Tensor(n, Shape(n))",
     2, 50, "the element type of a tensor must be of kind BaseType, but n is of kind Dim"),
    ("a declared operator returning a shape", "operator @f : forall (s: Shape), (Tensor(FloatType(32), s)) -> s", 2, 50,
     "the result of a function type must be of kind Type, but s is of kind Shape"),
    ("a declared operator with a base type as a shape", "operator @f : (Tensor(FloatType(32), FloatType(32))) -> Tensor(FloatType(32), Shape(2))",
     2, 50, "the shape of a tensor must be of kind Shape, but FloatType(32) is of kind BaseType"),
]  # fmt: skip


@pytest.mark.parametrize("what, definition, line, col, message", KIND_CONFUSIONS, ids=[c[0] for c in KIND_CONFUSIONS])
def test_a_kind_confusion_in_what_other_globals_use_is_one_kind_error(what, definition, line, col, message):
    module = relayish.parse(f"{definition}\n{USE}", "k.rly")
    with pytest.raises(relayish.KindError) as info:
        relayish.infer_types(module)
    assert (info.value.span.line, info.value.span.col) == (line, col)
    assert info.value.message == f"kind error: {message}"
    with pytest.raises(relayish.KindError) as alone:
        check_kinds(module)
    assert alone.value.message == info.value.message and alone.value.span == info.value.span


@pytest.mark.parametrize("written, value", [("-1", -1), ("2, 1 - 3", -2)])
def test_a_negative_dimension_is_a_kind_error_where_it_is_written(written, value):
    """``Shape(-1)`` was accepted; where an operator's relation then met it (strided_slice_backward's
    like argument) the checker raised an internal error (found by test_fuzz_typecheck). A symbolic
    dimension that may be negative (``n - 1``) is the checker's to compare, not an error in itself."""
    module = relayish.parse(f"def @main(%x: Tensor(FloatType(32), Shape(2))) {{\n  Zero(Tensor(FloatType(32), Shape({written})))\n}}")
    with pytest.raises(relayish.KindError) as info:
        relayish.infer_types(module)
    assert info.value.message.startswith(f"kind error: a dimension is a size, at least 0, not {value} ")
    assert (info.value.span.line, info.value.span.col) == (2, 3)
    relayish.infer_types(relayish.parse("def @f[n: Dim](%x: Tensor(FloatType(32), Shape(n - 1))) { %x }"))  # symbolic: fine


def test_an_unused_ill_kinded_operator_declaration_is_a_kind_error_naming_it():
    with pytest.raises(relayish.KindError) as info:
        relayish.infer_types(relayish.parse("operator @g : Shape(2)\ndef @main() { 1 }"))
    assert info.value.message == "kind error: the declared type of operator @g must be of kind Type, but Shape(2) is of kind Shape"
    assert info.value.span is None  # nothing in the source uses it, and a declaration keeps no position


def test_kind_errors_in_several_declarations_are_all_reported():
    src = "def @f[n: Dim](%x: Tensor(n, Shape(2))) { %x }\ndef @g[s: Shape](%x: s) { %x }\n" + USE
    with pytest.raises(relayish.RelayTypeError, match="2 type errors") as info:
        relayish.infer_types(relayish.parse(src))
    assert [type(e) for e in info.value.errors] == [relayish.KindError, relayish.KindError]
    assert "internal error" not in str(info.value)


# @g's result divides by its argument plus one: each call doubles the dimension's text, so
# 24 calls would write 4**24 terms (printing and checking them never ended).
DOUBLING = ("operator @g : forall (n: Dim), (Tensor(FloatType(32), Shape(n))) -> Tensor(FloatType(32), Shape(n // (n + 1)))\n"
            "def @main[m: Dim](%x: Tensor(FloatType(32), Shape(m))) { " + "@g(" * 24 + "%x" + ")" * 24 + " }")  # fmt: skip


def test_a_dimension_that_doubles_at_each_call_stops_at_the_size_limit():
    module = relayish.parse(DOUBLING)
    with time_limit(10, "checking 24 calls that double a dimension", cpu=True):
        with pytest.raises(relayish.RelayTypeError) as info:
            relayish.infer_types(module)
    err = info.value
    assert err.message == f"the result of the call: a dimension may have at most {MAX_SIZE:,} terms and atoms (floor divisions written out)"
    assert err.span.line == 2 and DOUBLING.split("\n")[1][err.span.col - 1 :].startswith("@g(")


def test_an_operator_result_past_the_dimension_limits_is_a_type_error_at_the_call():
    big = "1" + "0" * 60
    src = f"def @main(%x: Tensor(FloatType(32), Shape(2, {big}, {big}))) {{ @flatten(%x) }}"
    with pytest.raises(relayish.RelayTypeError) as info:
        relayish.infer_types(relayish.parse(src))
    assert info.value.message == "@flatten: a dimension's constants and coefficients may have at most 100 digits"
    assert src[info.value.span.col - 1 :].startswith("@flatten(")


# A global whose dimensions divide by its dimension parameters, called where the divisor is 0:
# the division happened while checking the caller and was an internal error. (A variable's
# position is where it is bound, so an error about an argument that is one is at the call.)
DIVIDES = "def @f[n: Dim, m: Dim](%x: Tensor(FloatType(32), Shape(n, m))"
DIVISIONS_BY_ZERO = [
    (f"{DIVIDES}, %y: Tensor(FloatType(32), Shape(n // m))) -> Tensor(FloatType(32), Shape(n, m)) {{ %x }}\n"
     "def @main(%a: Tensor(FloatType(32), Shape(4, 0)), %b: Tensor(FloatType(32), Shape(1))) { @f(%a, %b) }",
     "argument 2 of the call: dimension divided by zero", "@f("),
    (f"{DIVIDES}) -> Tensor(FloatType(32), Shape(n // m)) {{ Zero(Tensor(FloatType(32), Shape(n // m))) }}\n"
     "def @main(%a: Tensor(FloatType(32), Shape(4, 0))) { @f(%a) }", "the result of the call: dimension divided by zero", "@f("),
    (f"{DIVIDES}) -> Tensor(FloatType(32), Shape(n // (m - 2))) {{ Zero(Tensor(FloatType(32), Shape(n // (m - 2)))) }}\n"
     "def @main(%a: Tensor(FloatType(32), Shape(4, 2))) { @f(%a) }", "the result of the call: dimension divided by zero", "@f("),
]  # fmt: skip


@pytest.mark.parametrize("src, message, at", DIVISIONS_BY_ZERO, ids=["argument", "result", "result-difference"])
def test_a_division_by_zero_that_a_call_makes_is_a_type_error_there(src, message, at):
    with pytest.raises(relayish.RelayTypeError) as info:
        relayish.infer_types(relayish.parse(src))
    assert info.value.message == message
    assert info.value.span.line == 2 and src.split("\n")[1][info.value.span.col - 1 :].startswith(at)


@pytest.mark.parametrize(
    "command, text, words",
    [
        # the product has 8,000 digits, past what Python prints: fmt crashed with ValueError
        ("fmt", f"def @f(%x: Tensor(FloatType(32), Shape({'9' * 4000} * {'9' * 4000}))) {{ %x }}",
         "x.rly:1:40: a dimension may have at most 100 digits"),
        ("check", f"def @f[n: Dim](%x: Tensor(n, Shape(n))) -> Tensor(n, Shape(n)) {{ %x }}\n{USE}",
         "x.rly:1:16: kind error: the element type of a tensor must be of kind BaseType, but n is of kind Dim"),
        ("check", DOUBLING, f"a dimension may have at most {MAX_SIZE:,} terms and atoms"),
    ],
    ids=["fmt-huge-product", "check-kind-confusion", "check-doubling-dimension"],
)
def test_fmt_and_check_report_the_error(tmp_path, capsys, command, text, words):
    path = tmp_path / "x.rly"
    path.write_text(text)
    with time_limit(10, f"relayish {command}", cpu=True):
        assert main([command, str(path)]) == 1
    err = capsys.readouterr().err
    assert words in err and "internal error" not in err and "Traceback" not in err


@pytest.mark.parametrize("dim", ["n // -2", "(0 - n) // 2", "-(n // -2)", "n // (2 - n)", "(n - 5) // (1 - n)"])
def test_negative_dimensions_and_divisors_print_and_check(tmp_path, capsys, dim):
    path = tmp_path / "x.rly"
    path.write_text(f"def @f[n: Dim](%x: Tensor(FloatType(32), Shape({dim}))) {{ %x + %x }}")
    assert main(["check", str(path)]) == 0
    assert relayish.parse(capsys.readouterr().out)  # what check prints reads back
