"""The programs every optimization pass is checked on (``assert_pass_preserves(examples=...)``):
the evaluator's corpus with its own arguments, and small-size versions of the benchmark
workloads' gradients (the code ``Grad`` writes: references, backpropagator closures)."""

from __future__ import annotations

from typing import Callable

import numpy as np
from hypothesis import settings

import relayish
from relayish.module import Module
from relayish.testing import assert_pass_preserves
from relayish.testing.strategies import Program
from tests.interp import test_corpus as interp_corpus

F32 = "Tensor(FloatType(32), Shape({}))"

# W1-W5 of bench/programs.py at sizes small enough for the evaluator
GRADIENTS = f"""
def @w1(%x: {F32.format(8)}, %w: {F32.format(8)}, %b: {F32.format(8)}) {{
  Grad(fn (%w1: {F32.format(8)}, %b1: {F32.format(8)}) {{ @sum(sq @tanh(%x * %w1 + %b1)) }})(%w, %b)
}}
def @mlp(%X: {F32.format('4, 6')}, %Y: {F32.format('4, 3')}, %W1: {F32.format('6, 5')}, %b1: {F32.format(5)},
         %W2: {F32.format('5, 3')}, %b2: {F32.format(3)}) {{
  Grad(fn (%V1: {F32.format('6, 5')}, %c1: {F32.format(5)}, %V2: {F32.format('5, 3')}, %c2: {F32.format(3)}) {{
    let %h = @tanh(@matmul(%X, %V1) + %c1) in
    let %z = @matmul(%h, %V2) + %c2 in
    @mean(@sum(-%Y * @log_softmax(%z, axis=1), axis=1))
  }})(%W1, %b1, %W2, %b2)
}}
def @cube_sum(%x: {F32.format(5)}) -> {F32.format('')} {{ @sum(%x * %x * %x) }}
def @sum_grad(%x: {F32.format(5)}) -> {F32.format('')} {{ @sum(Grad(@cube_sum)(%x)[1][0]) }}
def @gradgrad(%x: {F32.format(5)}) {{ Grad(@sum_grad)(%x) }}
def @rnn(%xs: {F32.format('3, 2, 4')}, %Wx: {F32.format('4, 5')}, %Wh: {F32.format('5, 5')}) {{
  Grad(fn (%A: {F32.format('4, 5')}, %B: {F32.format('5, 5')}) {{
    let %loop = fn (%t: Tensor(IntType(32), Shape()), %h: {F32.format('2, 5')}) -> {F32.format('2, 5')} {{
      if %t >= 3 then %h else %loop(%t + 1, @tanh(@matmul(@take(%xs, %t, axis=0), %A) + @matmul(%h, %B)))
    }} in
    @sum(sq %loop(0, Zero(Tensor(FloatType(32), Shape(2, 5)))))
  }})(%Wx, %Wh)
}}
def @rnn_steps(%xs: {F32.format('3, 2, 4')}, %Wx: {F32.format('4, 5')}, %Wh: {F32.format('5, 5')},
               %n: Tensor(IntType(32), Shape())) {{
  Grad(fn (%A: {F32.format('4, 5')}, %B: {F32.format('5, 5')}) {{
    let %loop = fn (%t: Tensor(IntType(32), Shape()), %h: {F32.format('2, 5')}) -> {F32.format('2, 5')} {{
      if %t >= %n then %h else %loop(%t + 1, @tanh(@matmul(@take(%xs, %t, axis=0), %A) + @matmul(%h, %B)))
    }} in
    @sum(sq %loop(0, Zero(Tensor(FloatType(32), Shape(2, 5)))))
  }})(%Wx, %Wh)
}}
"""

# Polymorphic twins: the batch is a dimension variable, helpers are polymorphic globals called at
# several instances (one of them compound, n + 1), so inlining and partial evaluation must instantiate.
POLYMORPHIC = f"""
def @poly_loss[n: Dim](%X: {F32.format('n, 6')}, %Y: {F32.format('n, 3')}, %V1: {F32.format('6, 5')}, %c1: {F32.format(5)},
                      %V2: {F32.format('5, 3')}) -> {F32.format('')} {{
  let %h = @tanh(@matmul(%X, %V1) + %c1) in
  @softmax_cross_entropy(@matmul(%h, %V2), %Y) + @mean(%h)
}}
def @poly_mlp[b: Dim](%X: {F32.format('b, 6')}, %Y: {F32.format('b, 3')}, %W1: {F32.format('6, 5')}, %b1: {F32.format(5)},
                     %W2: {F32.format('5, 3')}) {{
  Grad(fn (%V1: {F32.format('6, 5')}, %c1: {F32.format(5)}, %V2: {F32.format('5, 3')}) {{
    @poly_loss(%X, %Y, %V1, %c1, %V2)
  }})(%W1, %b1, %W2)
}}
def @poly_norm[k: Dim](%v: {F32.format('k')}) -> {F32.format('')} {{ @sum(%v * %v) }}
def @poly_tail[m: Dim](%x: {F32.format('m + 1')}) -> {F32.format('')} {{
  @poly_norm(%x) + @poly_norm(@concatenate(%x, %x * 3.0, axis=0)) * 0.5
}}
def @poly_shift[m: Dim](%x: {F32.format('m + 1')}) {{ Grad(@poly_tail)(%x) }}
def @poly_id[t: BaseType](%v: Tensor(t, Shape())) -> Tensor(t, Shape()) {{ %v }}
def @poly_twice[m: Dim](%x: {F32.format('m + 1')}, %s: Tensor(IntType(32), Shape())) {{
  (Grad(fn (%y: {F32.format('m + 1')}) {{ @poly_tail(%y) * @cast(@poly_id(%s), dtype=FloatType(32)) }})(%x), @poly_id(%s))
}}
"""


def _workload_programs() -> list[Program]:
    rng = np.random.default_rng(0)
    module = relayish.parse(GRADIENTS, filename="corpus.rly")

    def f32(*shape: int) -> np.ndarray:
        return rng.standard_normal(shape).astype(np.float32) * 0.5

    labels = np.eye(3, dtype=np.float32)[[0, 2, 1, 0]]
    polymorphic = relayish.parse(POLYMORPHIC, filename="polymorphic.rly")
    return [
        Program(module, "w1", (f32(8), f32(8), f32(8))),
        Program(module, "mlp", (f32(4, 6), labels, f32(6, 5), f32(5), f32(5, 3), f32(3))),
        Program(module, "gradgrad", (f32(5),)),
        Program(module, "rnn", rnn := (f32(3, 2, 4), f32(4, 5), f32(5, 5))),  # unrolled: its steps are static
        Program(module, "rnn_steps", (*rnn, np.int32(3))),  # the same RNN as a loop: its steps are an argument
        Program(polymorphic, "poly_mlp", (f32(4, 6), labels, f32(6, 5), f32(5), f32(5, 3))),
        Program(polymorphic, "poly_shift", (f32(7),)),
        Program(polymorphic, "poly_twice", (f32(5), np.int32(3))),
    ]


def corpus() -> list[Program]:
    """Every case of the evaluator's corpus whose result can be compared (not closures or
    references: those cases check what calling them does), then the workload gradients."""
    found = [Program(interp_corpus.load(name), "main", case.args)
             for name, k in interp_corpus._case_ids() for case in [interp_corpus.EXPECTATIONS[name][k]]
             if not isinstance(case.expected, interp_corpus.Check)]
    return found + _workload_programs()


EXAMPLES = max(settings.default.max_examples // 10, 5)  # per check: every pass has three, on 2 cores


def assert_preserved(pass_fn: Callable[[Module], Module], *, in_anf: bool = True) -> None:
    """What every pass is checked on: the corpus and generated programs with Grad expanded
    (the code Grad writes), generated programs as written, and (``in_anf``) in A-normal form."""
    from ad.transform import expand
    from jit.passes.anf import to_anf

    assert_pass_preserves(lambda m: pass_fn(expand(m)), examples=corpus(), max_examples=EXAMPLES)
    assert_pass_preserves(pass_fn, max_examples=EXAMPLES)
    if in_anf:
        assert_pass_preserves(lambda m: pass_fn(to_anf(expand(m))), max_examples=EXAMPLES)
