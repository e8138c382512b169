"""Index-expression operators in the text format (relayish/ix/text.py): printing a definition and
parsing it back is a fixpoint and defines the same operator (its semantics give the same bits),
for the definitions of tests/ix/definitions.py and for generated ones; text-defined operators
compile and differentiate; bad text gets an error at its file:line:col."""

from __future__ import annotations

import itertools

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

import relayish
from relayish import ix
from relayish.errors import ParseError
from relayish.ix.text import MAX_DEPTH, definition_text
from relayish.ops.registry import lookup_op, unregister_user_op, user_op_names
from tests.ix.definitions import CASES, DEFINITIONS, arguments
from relayish.testing.ix_programs import bodies, definition

_names = itertools.count()


@pytest.fixture(autouse=True)
def forget_text_operators():
    yield
    for name in user_op_names():
        if name.startswith("ix_text_"):
            unregister_user_op(name)


def reparsed(defn) -> tuple[str, object]:
    """``defn`` printed, parsed back under a new name: (the printed text, the new operator)."""
    name = f"ix_text_{next(_names)}"
    text = definition_text(defn)
    module = relayish.parse(f"operator @{name}{text}\n")
    assert relayish.astext(module) == f"operator @{name}{text}\n"  # printing what was parsed gives it back
    assert definition_text(lookup_op(name).definition) == text
    return text, lookup_op(name)


@pytest.mark.parametrize("name", sorted(CASES))
def test_the_definitions_printed_and_parsed_back_are_the_same_operators(ops, name):
    _, again = reparsed(ops[name].definition)
    args = arguments(name, np.random.default_rng(3))
    np.testing.assert_array_equal(again.compute(*args), ops[name].compute(*args))


def test_every_definition_prints_and_parses_back(ops):
    for name in DEFINITIONS:
        reparsed(ops[name].definition)


@given(body=bodies(smooth=False), n=st.integers(1, 4), m=st.integers(1, 4), seed=st.integers(0, 2**32 - 1))
def test_generated_operators_printed_and_parsed_back_compute_the_same(body, n, m, seed):
    name = f"ix_text_generated_{next(_names)}"
    op = ix.operator(definition(body), name=name)
    _, again = reparsed(op.definition)
    rng = np.random.default_rng(seed)
    x0, x1 = (rng.standard_normal((n, m)).astype(np.float32) for _ in range(2))
    with np.errstate(all="ignore"):
        np.testing.assert_array_equal(again.compute(x0, x1), op.compute(x0, x1))


def test_a_text_operator_runs_compiled_and_differentiates():
    module = relayish.parse("""
    operator @ix_text_sqdist(%A, %B) = compute(shape(%A, 0), shape(%B, 0)) fn (%i, %j) {
      sum(%k: shape(%A, 1)) { (%A[%i, %k] - %B[%j, %k]) * (%A[%i, %k] - %B[%j, %k]) }
    }
    def @f[n: Dim](%a: Tensor(FloatType(64), Shape(n, 3)), %b: Tensor(FloatType(64), Shape(2, 3))) -> Tensor(FloatType(64), Shape()) {
      @sum(@ix_text_sqdist(%a, %b))
    }
    def @vg[n: Dim](%a: Tensor(FloatType(64), Shape(n, 3)), %b: Tensor(FloatType(64), Shape(2, 3))) { Grad(@f)(%a, %b) }
    """, filename="dist.rly")
    a, b = np.random.default_rng(0).standard_normal((4, 3)), np.random.default_rng(1).standard_normal((2, 3))
    value, (da, db) = relayish.compile(module, "vg", tiered=False)(a, b)
    diff = a[:, None, :] - b[None, :, :]
    np.testing.assert_allclose(value, (diff ** 2).sum(), rtol=1e-12)
    np.testing.assert_allclose(da, 2 * diff.sum(axis=1), rtol=1e-12)
    np.testing.assert_allclose(db, -2 * diff.sum(axis=0), rtol=1e-12)
    assert lookup_op("ix_text_sqdist").definition.where == "dist.rly:2"


@pytest.mark.parametrize("text, message, at", [
    ("operator @ix_text_a(%A) = compute(shape(%A, 0)) fn (%i) { %B[%i] }", r"%B is neither an input nor an index in scope", "%B"),
    ("operator @ix_text_a(%A) = compute(shape(%A, 0)) fn (%i) { %A }", r"read input %A at indices", "%A }"),
    ("operator @ix_text_a(%A) = compute(shape(%A, 0) / 2) fn (%i) { %A[%i] }", r"divides with //, not /", None),
    ("operator @ix_text_a(%A) = compute(shape(%A, 0)) fn (%i) { where(%A[%i] > 0, 1.0) }", r"where takes 3 arguments, not 2", "where"),
    ("operator @ix_text_a(%A) = compute(shape(%A, 0)) fn (%i) { cast(%A[%i], float8) }", r"unknown dtype float8", "float8"),
    ("operator @ix_text_a(%A) = compute(shape(%A, 0)) fn (%i) { sum(%i: 3) { %A[%i] } }", r"%i is already a name here", "%i: 3"),
    ("operator @ix_text_a(%A) = compute(shape(%A, 0)) fn (%i) { %A[%i, 0] + %A[%i] }", r"A is read with 2 and with 1 indices", None),
    ("operator @ix_text_a(%A, %A) = compute(1) fn (%i) { 1.0 }", r"%A is named twice", "%A)"),
    ("operator @tanh(%A) = compute(1) fn (%i) { 1.0 }", r"@tanh is a standard operator and cannot be redefined", "@tanh"),
    ("operator @ix_text_a(%A) = compute(shape(%A, 0)) fn (%i) { 2.5f32 * %A[%i] }", r"has no dtype suffix", "2.5f32"),
])
def test_bad_definitions_are_errors_at_their_place(text, message, at):
    """The error names the file and line; where the text is at fault, the column of ``at``."""
    with pytest.raises(ParseError, match=message) as err:
        relayish.parse(text, filename="bad.rly")
    assert err.value.span.file == "bad.rly" and err.value.span.line == 1
    if at is not None:
        assert err.value.span.col == text.index(at) + 1


def test_a_deeply_nested_expression_is_an_error_not_a_crash():
    for deep in ["(" * 5000 + "%A[%i]" + ")" * 5000, "-" * 5000 + "%A[%i]", "exp(" * 5000 + "%A[%i]" + ")" * 5000,
                 " + ".join(["%A[%i]"] * 5000), " * ".join(["%A[%i]"] * 5000)]:
        with pytest.raises(ParseError, match=f"nested more than {MAX_DEPTH} deep"):
            relayish.parse(f"operator @ix_text_deep(%A) = compute(shape(%A, 0)) fn (%i) {{ {deep} }}")


def test_a_text_that_fails_to_parse_registers_none_of_its_operators():
    """Definitions register once the whole text has parsed: an error later leaves nothing behind."""
    text = """operator @ix_text_early(%A) = compute(shape(%A, 0)) fn (%i) { %A[%i] * 2.0 }
    def @main(%x: Tensor(FloatType(32), Shape(3))) { @ix_text_early(%x) + }"""
    with pytest.raises(ParseError):
        relayish.parse(text)
    assert lookup_op("ix_text_early") is None
    relayish.parse(text.replace(" + }", " }"))
    assert lookup_op("ix_text_early").definition is not None
