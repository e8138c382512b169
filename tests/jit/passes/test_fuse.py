"""The fusion pass (jit/passes/fuse.py): it preserves programs (the evaluator's results, well
typed), and it forms the groups it should: W1's forward pass and its value-and-gradient each
become one ``fn primitive`` group, a bias add after a product one group, a lone operator none."""

from __future__ import annotations

import numpy as np

import relayish
from ad import expand
from jit.passes.fuse import MAX_GROUP, fuse
from relayish.expr import Call, Constant, Expr, Function, Let, Op, Var
from relayish.testing import assert_pass_preserves, check_equivalent
from relayish.testing.strategies import Features, programs
from relayish.traverse import post_order
from relayish.types import FloatType, IntType, Shape, TensorType
from tests.jit.passes.corpus import corpus
from typecheck import infer

F32 = "Tensor(FloatType(32), Shape({}))"

W1 = f"""
def @w1_loss(%x: {F32.format(8)}, %w: {F32.format(8)}, %b: {F32.format(8)}) -> {F32.format('')} {{
  let %t = @tanh(%x * %w + %b) in
  @sum(%t * %t)
}}
"""

# W1's value and gradient as partial evaluation leaves Grad's code: straight-line, with the
# zero adjoints (zeros_like) and their additions still there.
T8, T0 = F32.format(8), F32.format("")
W1_VG = f"""
def @w1_vg(%x: {T8}, %w: {T8}, %b: {T8}) -> ({T0}, ({T8}, {T8})) {{
  let %z: {T8} = @zeros_like(%x) in
  let %y: {T8} = %x * %w in
  let %y1: {T8} = %y + %b in
  let %y2: {T8} = @tanh(%y1) in
  let %z2: {T8} = @zeros_like(%y2) in
  let %y3: {T8} = sq %y2 in
  let %z3: {T8} = @zeros_like(%y3) in
  let %y4: {T0} = @sum(%y3) in
  let %g4: {T0} = @ones_like(%y4) in
  let %g3: {T8} = @broadcast_to_like(%g4, %y3) in
  let %a3: {T8} = %z3 + %g3 in
  let %a2: {T8} = %z2 + %a3 * %y2 * 2.0 in
  let %g1: {T8} = %a2 * (1.0 - %y2 * %y2) in
  let %dw: {T8} = %z + %g1 * %x in
  (%y4, (%dw, %g1))
}}
"""


def primitive_groups(module: relayish.Module) -> list[Function]:
    return [n for fn in module.functions.values() for n in post_order(fn) if isinstance(n, Function) and n.primitive]


def fused(text: str) -> relayish.Module:
    return fuse(infer(relayish.parse(text)))


def test_fusion_preserves_the_corpus_and_generated_programs_with_grad():
    """Grad's expansion (closures, references) and generated programs, fused, give the evaluator's
    results (float32 sums computed in another order: rtol 1e-5, atol 1e-6)."""
    assert_pass_preserves(lambda m: fuse(infer(expand(m))), programs(Features(grad=True)), examples=corpus(),
                          rtol=1e-5, atol=1e-6)


def test_fusion_preserves_generated_elementwise_programs():
    ops = ("add", "sub", "mul", "div", "neg", "sq", "exp", "tanh", "sigmoid", "maximum", "where", "greater",
           "cast", "sum", "mean", "broadcast_to_like", "zeros_like", "ones_like", "matmul", "log", "relu")
    assert_pass_preserves(lambda m: fuse(m), programs(Features(ops=ops)), rtol=1e-5, atol=1e-6)


def test_w1_forward_is_one_group_in_the_printed_ir():
    """Golden text: sum(tanh(x * w + b)^2) is one primitive group computing the scalar."""
    assert relayish.astext(fused(W1)) == f"""def @w1_loss(%x: {T8}, %w: {T8}, %b: {T8}) -> {T0} {{
  let %r: {T0} = fn primitive (%x_1: {T8}, %w_1: {T8}, %b_1: {T8}) -> {T0} {{
    let %t: {T8} = %x_1 * %w_1 in
    let %t_1: {T8} = %t + %b_1 in
    let %t_2: {T8} = @tanh(%t_1) in
    let %t_3: {T8} = %t_2 * %t_2 in
    let %r_1: {T0} = @sum(%t_3) in
    %r_1
  }}(%x, %w, %b) in
  %r
}}
"""


def test_w1_value_and_gradient_is_one_group_with_three_outputs():
    """The backward nodes share tanh(x * w + b) with the forward ones; the loss's ones_like uses
    only its (static) shape, so the loss, dw and db come out of one loop."""
    module = fused(W1_VG)
    (group,) = primitive_groups(module)
    assert len(group.ret_type.fields) == 3
    assert not any(isinstance(n, Call) and isinstance(n.callee, relayish.ir.Op) for n in post_order(module["w1_vg"])
                   if not any(n is m for m in post_order(group)))
    args = [np.random.default_rng(k).standard_normal(8).astype(np.float32) for k in range(3)]
    check_equivalent(module, infer(relayish.parse(W1_VG)), "w1_vg", args, rtol=1e-5, atol=1e-6)


def test_broadcast_tail_of_a_product_is_one_group_and_lone_operators_none():
    module = fused(f"""
def @main(%X: {F32.format('4, 6')}, %W: {F32.format('6, 5')}, %b: {F32.format(5)}) {{
  let %h = @tanh(@matmul(%X, %W) + %b) in
  (%h, @exp(%X))
}}
""")
    (group,) = primitive_groups(module)
    assert len(group.params) == 2  # the product and the bias row
    assert [n.callee.name for n in post_order(group.body) if isinstance(n, Call)] == ["add", "tanh"]


def test_groups_stop_at_values_used_in_between():
    """A value read by something the group must run after cannot come out of that group."""
    text = f"""
def @main(%x: {F32.format(4)}) {{
  let %a = @exp(%x) * 2.0 in
  let %r = Ref(%a) in
  let %b = !%r + %a in
  @tanh(%b) * %a
}}
"""
    module = fused(text)
    groups = [[n.callee.name for n in post_order(g.body) if isinstance(n, Call)] for g in primitive_groups(module)]
    assert groups == [["exp", "mul"], ["tanh", "mul"]]  # !%r + %a is not an operator tree: left alone
    check_equivalent(module, infer(relayish.parse(text)), "main", [np.linspace(-1, 1, 4, dtype=np.float32)])


def test_a_20000_deep_chain_is_fused_without_recursion():
    """Scalar steps (left alone) 20,000 deep, then a group: no Python recursion over the chain.
    Built annotated, as the type checker would leave it (parsing and checking it take longer)."""
    i32, f32 = TensorType(IntType(32), Shape()), TensorType(FloatType(32), Shape(8))
    start, x = Var("i", i32), Var("x", f32)
    steps = [Var(f"s{k}", i32) for k in range(20_000)]
    scaled = Call(Op("mul"), [Call(Op("exp"), [x]), Call(Op("cast"), [steps[-1]], {"dtype": FloatType(32)})])
    body: Expr = Call(Op("sum"), [scaled])
    for k in reversed(range(len(steps))):
        body = Let(steps[k], Call(Op("add"), [steps[k - 1] if k else start, Constant(np.int32(1))]), body)
    out = fuse(relayish.Module({"deep": Function([start, x], body, TensorType(FloatType(32), Shape()))}))
    (group,) = primitive_groups(out)
    assert [n.callee.name for n in post_order(group.body) if isinstance(n, Call)] == ["exp", "mul", "sum"]


def test_long_vector_chains_split_into_groups_of_at_most_max_group():
    n = 1000
    text = f"def @long(%x: {T8}) {{\n" + "".join(
        f"  let %v{i} = {'%x' if i == 0 else f'%v{i - 1}'} * 0.5 + %x in\n" for i in range(n)) + f"  %v{n - 1}\n}}\n"
    groups = primitive_groups(fuse(infer(relayish.parse(text))))
    assert len(groups) == -(-2 * n // MAX_GROUP)  # full groups, in chain order
