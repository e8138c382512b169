"""Golden tests: what the optimizer (opt_level 2: inlining, partial evaluation, clean-up)
makes of three gradients, written out by hand. The oracle is the hand-written program, not
the optimizer: the optimized global must be alpha-equivalent to it."""

from __future__ import annotations

import textwrap

import relayish
from jit.passes import optimize
from runtime.prepare import prepared
from typecheck import infer

F = "Tensor(FloatType(32), Shape({}))"


def optimized(source: str, name: str = "main") -> relayish.ir.Function:
    return optimize(prepared(relayish.parse(textwrap.dedent(source))), name, opt_level=2)[name]


def expected(source: str, name: str = "main") -> relayish.ir.Function:
    return infer(relayish.parse(textwrap.dedent(source)))[name]


def assert_golden(actual: relayish.ir.Function, wanted: relayish.ir.Function) -> None:
    assert relayish.alpha_equal(actual, wanted), f"optimized:\n{relayish.astext(actual)}\nexpected:\n{relayish.astext(wanted)}"


def test_the_gradient_of_x_times_x_is_x_plus_x():
    """No reference, no closure left: the value, and 2x written as x + x."""
    actual = optimized(f"""
        def @f(%x: {F.format(3)}) -> {F.format('')} {{ @sum(%x * %x) }}
        def @main(%x: {F.format(3)}) {{ Grad(@f)(%x) }}""")
    assert_golden(actual, expected(f"""
        def @main(%x: {F.format(3)}) {{
          let %y = %x * %x in
          let %s = @sum(%y) in
          let %g = %x + %x in
          (%s, (%g,))
        }}"""))


def test_the_gradient_of_log_softmax_is_five_statements():
    """d/dx sum(log_softmax(x)) = 1 - exp(y) * sum(1): CSE shares y, the sum of ones is folded
    (a fill: ``full``), nothing else is left."""
    actual = optimized(f"""
        def @f(%x: {F.format('4, 5')}) -> {F.format('')} {{ @sum(@log_softmax(%x, axis=1)) }}
        def @main(%x: {F.format('4, 5')}) {{ Grad(@f)(%x) }}""")
    assert_golden(actual, expected(f"""
        def @main(%x: {F.format('4, 5')}) {{
          let %y = @log_softmax(%x, axis=1) in
          let %s = @sum(%y) in
          let %ones = @full(shape=(4, 5), fill_value=1.0) in
          let %e = @exp(%y) in
          let %total = @full(shape=(4, 1), fill_value=5.0) in
          let %p = %e * %total in
          let %g = %ones - %p in
          (%s, (%g,))
        }}"""))


def test_the_weight_gradient_of_a_dense_layer_is_one_matmul_with_the_transposed_cotangent():
    """dense(x, w) = x w^T, so dL/dw = g^T x: one matmul (the cotangent of a sum is a fill of
    ones, so its transpose is folded, and so is the bias gradient, its sum over the 8 rows); the
    gradient of the input x (a constant here) is not computed at all."""
    types = f"%w: {F.format('3, 4')}, %b: {F.format(3)}"
    actual = optimized(f"""
        def @layer(%x: {F.format('8, 4')}, {types}) -> {F.format('')} {{ @sum(@dense(%x, %w) + %b) }}
        def @main(%x: {F.format('8, 4')}, {types}) {{
          Grad(fn ({types.replace('%w', '%w1').replace('%b', '%b1')}) {{ @layer(%x, %w1, %b1) }})(%w, %b)
        }}""")
    assert_golden(actual, expected(f"""
        def @main(%x: {F.format('8, 4')}, {types}) {{
          let %y = @dense(%x, %w) in
          let %z = %y + %b in
          let %s = @sum(%z) in
          let %gb = @full(shape=(3,), fill_value=8.0) in
          let %gt = @full(shape=(3, 8), fill_value=1.0) in
          let %gw = @matmul(%gt, %x) in
          (%s, (%gw, %gb))
        }}"""))
