"""Inlining: non-recursive globals, let-bound local functions and literal calls; recursion,
polymorphism and globals kept; depth; preservation."""

from __future__ import annotations

import sys


from jit.passes.inline import inline_functions as inline
from relayish import alpha_equal, parse
from relayish.expr import Function, GlobalVar, Let
from relayish.ir import Call, Module, Var
from relayish.traverse import bound_vars, post_order
from tests.core.test_deep import SCALAR, default_recursion_limit, let_chain  # noqa: F401  (fixture)
from tests.jit.passes.corpus import assert_preserved
from typecheck import infer

F32 = "Tensor(FloatType(32), Shape())"


def test_preserves_the_corpus_and_generated_programs():
    assert_preserved(inline)




def test_global_is_inlined_with_fresh_binders_and_kept():
    m = parse(f"""
def @sq_plus(%a: {F32}, %b: {F32}) -> {F32} {{ let %s = %a * %a in %s + %b }}
def @main(%x: {F32}) {{ @sq_plus(-%x, 1.0) * @sq_plus(%x, 2.0) }}""")
    expected = parse(f"""
def @sq_plus(%a: {F32}, %b: {F32}) -> {F32} {{ let %s = %a * %a in %s + %b }}
def @main(%x: {F32}) {{
  (let %a1: {F32} = -%x in let %b1: {F32} = 1.0 in let %s1 = %a1 * %a1 in %s1 + %b1)
  * (let %a2: {F32} = %x in let %b2: {F32} = 2.0 in let %s2 = %a2 * %a2 in %s2 + %b2)
}}""")
    out = inline(m)
    assert alpha_equal(out, expected)
    binders = [id(v) for fn in out.functions.values() for v in bound_vars(fn)]
    assert len(binders) == len(set(binders))


def test_local_function_and_literal_calls_are_inlined():
    m = parse(f"""
def @main(%x: {F32}) {{
  let %f = fn (%y: {F32}) {{ @exp(%y) }} in
  %f(%x) + fn (%z: {F32}) {{ %z * 3.0 }}(%x)
}}""")
    expected = parse(f"""
def @main(%x: {F32}) {{
  let %f = fn (%y: {F32}) {{ @exp(%y) }} in
  (let %y1: {F32} = %x in @exp(%y1)) + (let %z1: {F32} = %x in %z1 * 3.0)
}}""")
    assert alpha_equal(inline(m), expected)


def test_recursive_functions_stay():
    text = f"""
def @even(%n: Tensor(IntType(32), Shape())) -> Tensor(BoolType, Shape()) {{ if %n == 0 then true else @odd(%n - 1) }}
def @odd(%n: Tensor(IntType(32), Shape())) -> Tensor(BoolType, Shape()) {{ if %n == 0 then false else @even(%n - 1) }}
def @main(%x: {F32}) {{
  let %loop = fn (%i: Tensor(IntType(32), Shape())) -> Tensor(IntType(32), Shape()) {{
    if %i <= 0 then %i else %loop(%i - 1)
  }} in
  (@even(%loop(3)), %x)
}}"""
    assert alpha_equal(inline(infer(parse(text))), infer(parse(text)))


POLY = """
def @norm[k: Dim](%v: Tensor(FloatType(32), Shape(k))) -> Tensor(FloatType(32), Shape()) {
  let %s: Tensor(FloatType(32), Shape(k)) = %v * %v in @sum(%s)
}
def @id[t: BaseType](%v: Tensor(t, Shape())) -> Tensor(t, Shape()) { %v }
"""


def test_a_polymorphic_global_is_inlined_as_its_instance_at_each_call():
    """Every annotation of the copy says the caller's dimensions (m + 1, 2 * m + 2) and dtype."""
    text = POLY + """
def @main[m: Dim](%x: Tensor(FloatType(32), Shape(m + 1)), %i: Tensor(IntType(32), Shape())) {
  (@norm(%x) + @norm(@concatenate(%x, %x, axis=0)), @id(%i))
}"""
    expected = POLY + """
def @main[m: Dim](%x: Tensor(FloatType(32), Shape(m + 1)), %i: Tensor(IntType(32), Shape())) {
  ((let %v1: Tensor(FloatType(32), Shape(m + 1)) = %x in
    let %s1: Tensor(FloatType(32), Shape(m + 1)) = %v1 * %v1 in @sum(%s1))
   + (let %v2: Tensor(FloatType(32), Shape(2 * m + 2)) = @concatenate(%x, %x, axis=0) in
      let %s2: Tensor(FloatType(32), Shape(2 * m + 2)) = %v2 * %v2 in @sum(%s2)),
   let %v3: Tensor(IntType(32), Shape()) = %i in %v3)
}"""
    out = infer(inline(infer(parse(text))))
    assert alpha_equal(out["main"], infer(parse(expected))["main"])


def test_a_type_parameter_the_call_does_not_determine_keeps_the_call():
    text = """
def @free[q: Dim](%v: Tensor(FloatType(32), Shape())) -> Tensor(FloatType(32), Shape()) { %v }
def @main(%x: Tensor(FloatType(32), Shape())) { @free(%x) }"""
    module = infer(parse(text))
    assert alpha_equal(inline(module), module)


def test_deep_let_chain():
    assert sys.getrecursionlimit() <= 1000
    out = inline(let_chain(20_000))
    assert isinstance(out["main"].body, Let)


def test_deep_calls_of_a_chain_of_globals():
    """@f0 calls @f1 ... calls @f299 (no recursion): callees first, without RecursionError."""
    x = Var("x", SCALAR)
    functions = {"f299": Function([x], x, SCALAR)}
    for i in range(298, -1, -1):
        p = Var("p", SCALAR)
        functions[f"f{i}"] = Function([p], Call(GlobalVar(f"f{i + 1}"), [p]), SCALAR)
    out = inline(Module(functions))
    assert not any(isinstance(n, Call) for n in post_order(out["f0"]))
    assert set(out.functions) == set(functions)
