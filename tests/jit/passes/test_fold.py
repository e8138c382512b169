"""Constant folding: operator calls on constants, constant ifs, projections of tuple
literals, atoms substituted; errors left to run time; size limit; depth; preservation."""

from __future__ import annotations

import sys

import numpy as np

import relayish

from jit.passes.fold import MAX_FOLDED_ELEMENTS, fold_constants as fold
from relayish import alpha_equal, parse
from relayish.expr import Call, Constant
from tests.core.test_deep import default_recursion_limit, let_chain  # noqa: F401  (fixture)
from tests.jit.passes.corpus import assert_preserved

F32 = "Tensor(FloatType(32), Shape())"
I32 = "Tensor(IntType(32), Shape())"


def test_preserves_the_corpus_and_generated_programs():
    assert_preserved(fold)





def test_a_uniform_result_becomes_full_only_when_its_value_is_exactly_a_float():
    """int64 2**63 - 1 is no float (the nearest is 2**63): folded as the constant it is, not as a
    ``full`` whose fill wraps to -2**63 (found by the generated programs)."""
    big = parse("def @main() { @broadcast_to(tensor(IntType(64), Shape(1), [9223372036854775807]), shape=(2, 2)) }")
    body = fold(big)["main"].body
    assert isinstance(body, Constant) and body.value.tolist() == [[2**63 - 1] * 2] * 2
    small = fold(parse("def @main() { @broadcast_to(tensor(IntType(64), Shape(1), [-5]), shape=(2, 2)) }"))["main"].body
    assert isinstance(small, Call) and small.callee.name == "full"


def test_one_plus_two():
    out = fold(parse("def @main() { 1.0 + 2.0 }"))
    assert alpha_equal(out, parse("def @main() { 3.0 }"))


def test_folding_propagates_through_bindings_and_ifs():
    m = parse(f"""
def @main(%x: {F32}) {{
  let %a = 1.0 in
  let %b = %a + 2.0 in
  let %y = %x in
  let %t = (%y, %b * %b) in
  if %b > 0.0 then %t[1] + (%x, %a)[0] else %y
}}""")
    expected = parse(f"""
def @main(%x: {F32}) {{
  let %t = (%x, 9.0) in
  9.0 + %x
}}""")
    assert alpha_equal(fold(m), expected)


def test_a_call_that_raises_is_left_for_run_time():
    text = "def @main() { (1 / 0, @take(@ones_like(Zero(Tensor(FloatType(32), Shape(3)))), 5)) }"
    out = fold(parse(text))
    assert alpha_equal(out["main"].body.fields[0], parse(text)["main"].body.fields[0])
    assert isinstance(out["main"].body.fields[1], Call)


def test_projection_keeps_fields_with_effects():
    text = f"def @main(%f: () -> {F32}) {{ (1.0, %f())[0] }}"
    assert alpha_equal(fold(parse(text)), parse(text))


def test_large_results_are_not_folded():
    n = MAX_FOLDED_ELEMENTS + 1
    out = fold(parse(f"def @main() {{ @full(shape=({n},), fill_value=1.0) + 1.0 }}"))
    assert isinstance(out["main"].body, Call)
    small = fold(parse("def @main() { @full(shape=(4,), fill_value=1.0) + tensor(FloatType(32), Shape(4), [0.0, 1.0, 2.0, 3.0]) }"))
    assert isinstance(small["main"].body, Constant) and np.array_equal(small["main"].body.value, [1.0, 2.0, 3.0, 4.0])
    uniform = fold(parse("def @main() { @full(shape=(4,), fill_value=1.0) + 1.0 }"))  # one value: a fill
    assert relayish.alpha_equal(uniform["main"].body, parse("def @main() { @full(shape=(4,), fill_value=2.0) }")["main"].body)


def test_deep_let_chain():
    assert sys.getrecursionlimit() <= 1000
    fold(let_chain(20_000))
