"""Accumulated products (jit/passes/products.py): ``c + a @ b`` becomes one ``fn primitive`` group
(one gemm adding into ``c``) exactly where the product is read once and the types match; programs
keep the evaluator's results."""

from __future__ import annotations

import numpy as np

import relayish
from jit.passes.anf import to_anf
from jit.passes.products import accumulate_products, is_matmul_add
from relayish.expr import Call, Function
from relayish.testing import assert_pass_preserves, check_equivalent
from relayish.testing.strategies import Features, programs
from relayish.traverse import post_order
from tests.jit.passes.corpus import EXAMPLES, assert_preserved
from typecheck import infer

M = "Tensor(FloatType({bits}), Shape({dims}))"


def t(dims: str, bits: int = 32) -> str:
    return M.format(bits=bits, dims=dims)


def rewritten(text: str) -> relayish.Module:
    return infer(accumulate_products(infer(relayish.parse(text))))


def groups(module: relayish.Module) -> list[Function]:
    return [n for fn in module.functions.values() for n in post_order(fn) if isinstance(n, Function) and n.primitive]


def test_the_pass_preserves_the_corpus_and_generated_programs():
    assert_preserved(lambda m: accumulate_products(infer(m)))


def test_the_pass_preserves_generated_products_in_a_normal_form():
    ops = ("add", "sub", "mul", "matmul", "tanh", "transpose", "sum")
    assert_pass_preserves(lambda m: accumulate_products(infer(to_anf(m))), programs(Features(ops=ops)),
                          max_examples=EXAMPLES, rtol=1e-5, atol=1e-6)


def test_a_sum_of_products_becomes_a_group_adding_into_the_first_golden():
    """``x @ Wx + h @ Wh`` (an RNN step): the second product is added into the first, which stays a plain product."""
    module = rewritten(f"""
def @main(%x: {t('2, 3')}, %Wx: {t('3, 4')}, %h: {t('2, 4')}, %Wh: {t('4, 4')}) -> {t('2, 4')} {{
  let %p = @matmul(%x, %Wx) in
  let %q = @matmul(%h, %Wh) in
  let %s = %p + %q in
  @tanh(%s)
}}
""")
    assert relayish.astext(module) == f"""def @main(%x: {t('2, 3')}, %Wx: {t('3, 4')}, %h: {t('2, 4')}, %Wh: {t('4, 4')}) -> {t('2, 4')} {{
  let %p: {t('2, 4')} = @matmul(%x, %Wx) in
  let %s: {t('2, 4')} = fn primitive (%p_1: {t('2, 4')}, %h_1: {t('2, 4')}, %Wh_1: {t('4, 4')}) -> {t('2, 4')} {{
    %p_1 + @matmul(%h_1, %Wh_1)
  }}(%p, %h, %Wh) in
  @tanh(%s)
}}
"""
    (group,) = groups(module)
    assert is_matmul_add(group)
    rng = np.random.default_rng(0)
    args = [rng.standard_normal(s).astype(np.float32) for s in ((2, 3), (3, 4), (2, 4), (4, 4))]
    check_equivalent(module, relayish.parse(relayish.astext(module)), "main", args)  # the text parses back
    check_equivalent(module, infer(relayish.parse(f"""
def @main(%x: {t('2, 3')}, %Wx: {t('3, 4')}, %h: {t('2, 4')}, %Wh: {t('4, 4')}) -> {t('2, 4')} {{
  @tanh(@matmul(%x, %Wx) + @matmul(%h, %Wh))
}}
""")), "main", args, rtol=1e-6)


def test_a_gradient_summed_over_steps_is_a_chain_of_groups():
    """Three steps of ``dW += h_t^T d_t`` in float64: every addition is a group, no product is left
    to add at the end; the product in front of the chain stays a plain product."""
    module = rewritten(f"""
def @main(%a: {t('2, 3', 64)}, %b: {t('2, 3', 64)}, %c: {t('2, 3', 64)}, %d: {t('2, 4', 64)}) -> {t('3, 4', 64)} {{
  let %at = @transpose(%a) in
  let %p1 = @matmul(%at, %d) in
  let %bt = @transpose(%b) in
  let %p2 = @matmul(%bt, %d) in
  let %s2 = %p1 + %p2 in
  let %ct = @transpose(%c) in
  let %p3 = @matmul(%ct, %d) in
  let %s3 = %p3 + %s2 in
  %s3
}}
""")
    assert len(groups(module)) == 2 and all(map(is_matmul_add, groups(module)))
    matmuls = [n for n in post_order(module["main"]) if isinstance(n, Call) and getattr(n.callee, "name", "") == "matmul"]
    assert len(matmuls) == 3  # one plain, two inside the groups


def test_what_is_left_alone():
    """A product read twice, a broadcast addition (a bias), integer products, a product bound
    outside the function that adds it (moving it into a closure would run it every call)."""
    for text in [
        f"""def @main(%a: {t('2, 2')}, %b: {t('2, 2')}) -> {t('2, 2')} {{
  let %p = @matmul(%a, %b) in
  let %s = %a + %p in
  %s * %p
}}""",
        f"""def @main(%a: {t('2, 2')}, %b: {t('2, 2')}, %c: {t('2')}) -> {t('2, 2')} {{
  let %p = @matmul(%a, %b) in
  let %s = %c + %p in
  %s
}}""",
        """def @main(%a: Tensor(IntType(32), Shape(2, 2)), %b: Tensor(IntType(32), Shape(2, 2))) -> Tensor(IntType(32), Shape(2, 2)) {
  let %p = @matmul(%a, %b) in
  let %s = %a + %p in
  %s
}""",
        f"""def @main(%a: {t('2, 2')}, %b: {t('2, 2')}) -> {t('2, 2')} {{
  let %p = @matmul(%a, %b) in
  let %f = fn (%c: {t('2, 2')}) -> {t('2, 2')} {{ let %s = %c + %p in %s }} in
  %f(%a)
}}""",
    ]:
        assert not groups(rewritten(text)), text


def test_w4_weight_gradients_have_no_sum_of_products_left():
    """The optimized W4 gradient: all 98 later weight-gradient products and the 50 forward
    ``h @ Wh`` are groups adding into one buffer each; the three products that start a sum stay."""
    from bench import programs as bench_programs
    from runtime.prepare import prepared
    from jit.passes import optimize

    module = optimize(prepared(bench_programs.module()), "w4_vg", 3)
    found = groups(module)
    assert sum(map(is_matmul_add, found)) == 50 + 2 * 49
    assert not any(
        any(isinstance(n, Call) and getattr(n.callee, "name", "") == "matmul" for n in post_order(g.body))
        for g in found if not is_matmul_add(g))
