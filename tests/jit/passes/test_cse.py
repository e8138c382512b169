"""Common subexpression elimination: pure calls, projections and tuples merged within their
scope; references, reads and function calls never; depth; preservation."""

from __future__ import annotations

import sys


from jit.passes.cse import eliminate_common_subexpressions as cse
from relayish import alpha_equal, parse
from tests.core.test_deep import default_recursion_limit, let_chain  # noqa: F401  (fixture)
from tests.jit.passes.corpus import assert_preserved

F32 = "Tensor(FloatType(32), Shape())"


def test_preserves_the_corpus_and_generated_programs():
    assert_preserved(cse)





def test_two_tanh_merge_and_what_uses_them_too():
    m = parse(f"""
def @main(%x: {F32}) {{
  let %a = @tanh(%x) in
  let %b = @tanh(%x) in
  let %c = (%a, %x * 2.0) in
  let %d = (%b, %x * 2.0) in
  (%c[0] + %d[0], %d)
}}""")
    expected = parse(f"""
def @main(%x: {F32}) {{
  let %a = @tanh(%x) in
  let %c = (%a, %x * 2.0) in
  (%c[0] + %c[0], %c)
}}""")
    assert alpha_equal(cse(m), expected)


def test_references_reads_and_calls_are_not_merged():
    text = f"""
def @main(%x: {F32}, %f: ({F32}) -> {F32}) {{
  let %r = Ref(%x) in
  let %s = Ref(%x) in
  let %a = !%r in
  let %u = %r := %a + 1.0 in
  let %b = !%r in
  let %c = %f(%x) in
  let %d = %f(%x) in
  (%a, %b, %c, %d, !%s)
}}"""
    assert alpha_equal(cse(parse(text)), parse(text))


def test_bindings_inside_a_branch_or_closure_do_not_dominate_what_follows():
    text = f"""
def @main(%x: {F32}, %c: Tensor(BoolType, Shape())) {{
  let %y = if %c then (let %a = @exp(%x) in %a) else %x in
  let %g = fn () {{ let %b = @sin(%x) in %b }} in
  (%y, %g, @exp(%x), @sin(%x))
}}"""
    assert alpha_equal(cse(parse(text)), parse(text))


def test_a_binding_dominates_branches_and_closures():
    m = parse(f"""
def @main(%x: {F32}, %c: Tensor(BoolType, Shape())) {{
  let %a = @exp(%x) in
  let %y = if %c then @exp(%x) else %x in
  let %g = fn () {{ @exp(%x) }} in
  (%a, %y, %g)
}}""")
    expected = parse(f"""
def @main(%x: {F32}, %c: Tensor(BoolType, Shape())) {{
  let %a = @exp(%x) in
  let %y = if %c then %a else %x in
  let %g = fn () {{ %a }} in
  (%a, %y, %g)
}}""")
    assert alpha_equal(cse(m), expected)


def test_attributes_and_constants_must_agree():
    text = """
def @main(%x: Tensor(FloatType(32), Shape(2, 3))) {
  (@sum(%x, axis=0), @sum(%x, axis=1), %x * 2.0, %x * 2f64)
}"""
    assert alpha_equal(cse(parse(text)), parse(text))


def test_deep_let_chain():
    assert sys.getrecursionlimit() <= 1000
    cse(let_chain(20_000))
