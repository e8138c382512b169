"""Algebraic simplification of zeros and ones: only where the type is unchanged, never
against IEEE semantics; depth; preservation."""

from __future__ import annotations

import sys


from jit.passes.simplify import simplify_algebra as simplify
from relayish import alpha_equal, parse
from relayish.ir import Call, Constant, Function, Let, Module, Op, Var
from relayish.traverse import post_order
from tests.core.test_deep import SCALAR, default_recursion_limit  # noqa: F401  (fixture)
from tests.jit.passes.corpus import assert_preserved
from typecheck import infer

V3 = "Tensor(FloatType(32), Shape(3))"
M23 = "Tensor(FloatType(32), Shape(2, 3))"


def test_preserves_the_corpus_and_generated_programs():
    assert_preserved(simplify, in_anf=False)


def simplified(text: str):
    return infer(simplify(infer(parse(text))))


def same(text: str, expected: str) -> bool:
    return alpha_equal(simplified(text), infer(parse(expected)))




def test_adding_zeros_of_the_same_shape():
    assert same(f"def @main(%x: {V3}, %y: {V3}) {{ %x + @zeros_like(%y) }}", f"def @main(%x: {V3}, %y: {V3}) {{ %x }}")
    assert same(f"def @main(%x: {V3}) {{ Zero({V3}) + %x - 0.0 }}", f"def @main(%x: {V3}) {{ %x }}")


def test_adding_zeros_that_broadcast_stays():
    text = f"def @main(%x: {V3}, %y: {M23}) {{ %x + @zeros_like(%y) }}"
    assert same(text, f"def @main(%x: {V3}, %y: {M23}) {{ %x + @full(shape=(2, 3), fill_value=0.0) }}")


def test_zeros_and_ones_through_variables():
    assert same(f"""
def @main(%x: {V3}, %s: Tensor(FloatType(32), Shape())) {{
  let %z = @zeros_like(%x) in
  let %o = @ones_like(%s) in
  (%z + %x) * %o / 1.0
}}""", f"""
def @main(%x: {V3}, %s: Tensor(FloatType(32), Shape())) {{
  let %z = @full(shape=(3,), fill_value=0.0) in
  let %o = @full(shape=(), fill_value=1.0) in
  %x
}}""")  # the fills depend on types only


def test_a_fill_of_a_symbolic_type_reads_a_parameter_of_that_type():
    """Only the type matters: a parameter with exactly that type stands in for the computed value,
    which may then be dead code; without such a parameter the fill stays."""
    N3 = "Tensor(FloatType(32), Shape(n, 3))"
    text = f"""
def @main[n: Dim](%x: {N3}, %y: {N3}, %v: Tensor(FloatType(32), Shape(n))) {{
  let %t = %x * %y in
  (@zeros_like(%t) * 2.0, @ones_like(@sum(%t, axis=1)) * 2.0, @ones_like(%y) * 2.0)
}}"""
    assert same(text, f"""
def @main[n: Dim](%x: {N3}, %y: {N3}, %v: Tensor(FloatType(32), Shape(n))) {{
  let %t = %x * %y in
  (@zeros_like(%x) * 2.0, @ones_like(%v) * 2.0, @ones_like(%y) * 2.0)
}}""")
    kept = f"def @main[n: Dim](%x: {N3}) {{ @zeros_like(@transpose(%x)) * 2.0 }}"
    assert same(kept, kept)


def test_ieee_cases_stay():
    text = f"def @main(%x: {V3}) {{ (%x * 0.0, %x - %x, 0.0 - %x, 1.0 / %x) }}"
    assert same(text, text)


def test_conversions_to_the_same_type():
    assert same(f"""
def @main(%x: {M23}, %y: {M23}) {{
  (@reshape(%x, newshape=(2, 3)), @sum_to(%x, %y), @broadcast_to_like(%x, %y), @cast(%x, dtype=FloatType(32)),
   @reshape(%x, newshape=(3, 2)), @cast(%x, dtype=FloatType(64)))
}}""", f"""
def @main(%x: {M23}, %y: {M23}) {{
  (%x, %x, %x, %x, @reshape(%x, newshape=(3, 2)), @cast(%x, dtype=FloatType(64)))
}}""")


def test_sum_to_that_one_sum_does_becomes_that_sum():
    """Leading axes (a bias gradient), or at equal rank the axes of size 1 in the target; sizes
    symbolic or not. Summing to (4, 1) from (2, 4, 5) takes two sums and stays."""
    shapes = "%x: Tensor(FloatType(32), Shape(n, m)), %b: Tensor(FloatType(32), Shape(m))"
    assert same(f"""
def @main[n: Dim, m: Dim]({shapes}, %c: Tensor(FloatType(32), Shape(n, 1)), %r: Tensor(FloatType(32), Shape(1, 1))) {{
  (@sum_to(%x, %b), @sum_to(%x, %c), @sum_to(%x, %r))
}}""", f"""
def @main[n: Dim, m: Dim]({shapes}, %c: Tensor(FloatType(32), Shape(n, 1)), %r: Tensor(FloatType(32), Shape(1, 1))) {{
  (@sum(%x, axis=(0,)), @sum(%x, axis=(1,), keepdims=true), @sum(%x, axis=(0, 1), keepdims=true))
}}""")
    stays = "def @main(%x: Tensor(FloatType(32), Shape(2, 4, 5)), %c: Tensor(FloatType(32), Shape(4, 1))) { @sum_to(%x, %c) }"
    assert same(stays, stays)
    # sum has no boolean form (found by the generated CUDA test: the rewrite was a type error)
    booleans = "def @main(%x: Tensor(BoolType, Shape(1, 4)), %c: Tensor(BoolType, Shape(4))) { @sum_to(%x, %c) }"
    assert same(booleans, booleans)


def test_broadcast_ones_is_ones_of_the_target():
    assert same(f"""
def @main(%s: Tensor(FloatType(32), Shape()), %y: {M23}) {{
  (@broadcast_to_like(@ones_like(%s), %y), @broadcast_to_like(@zeros_like(%s), %y))
}}""", f"""
def @main(%s: Tensor(FloatType(32), Shape()), %y: {M23}) {{
  (@ones_like(%y), @zeros_like(%y))
}}""")


def test_what_would_be_dropped_must_have_no_effect():
    text = f"def @main(%x: {V3}, %f: () -> {V3}) {{ %x + @zeros_like(%f()) }}"
    assert same(text, text)


def test_deep_let_chain():
    """``%x_i = %x_{i-1} * 1.0`` 20,000 times, annotated as ``infer`` leaves it: every product goes."""
    assert sys.getrecursionlimit() <= 1000
    x = Var("x", SCALAR)
    variables = [x] + [Var(f"x{i}", SCALAR) for i in range(20_000)]
    body = variables[-1]
    for previous, var in zip(reversed(variables[:-1]), reversed(variables[1:])):
        body = Let(var, Call(Op("mul"), [previous, Constant(1.0)]), body)
    out = simplify(Module({"main": Function([x], body, SCALAR)}))["main"]
    assert not any(isinstance(n, Call) for n in post_order(out))
