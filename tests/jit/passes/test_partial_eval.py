"""Partial evaluation: preserves results (corpus, generated programs with Grad), removes the
references and closures of gradients with static control flow, keeps dynamic code correct."""

from __future__ import annotations

import numpy as np
import pytest

import relayish
from ad.transform import expand
from bench.programs import module as workloads
from jit.passes import reached
from jit.passes.dce import eliminate_dead_code
from jit.passes.partial_eval import partially_evaluate
from relayish.expr import Call, Constant, Expr, Function, Let, Op, RefNew, RefRead, RefWrite, Var
from relayish.module import Module
from relayish.testing import assert_pass_preserves, check_pass
from relayish.traverse import post_order
from runtime.prepare import prepared
from tests.jit.passes.corpus import POLYMORPHIC, corpus
from typecheck import infer

F3 = "Tensor(FloatType(32), Shape(3))"


def specialized(module: Module) -> Module:
    return partially_evaluate(expand(module))


def refs_and_closures(module: Module) -> tuple[int, int]:
    nodes = [n for fn in module.functions.values() for n in post_order(fn.body)]
    return sum(isinstance(n, (RefNew, RefRead, RefWrite)) for n in nodes), sum(isinstance(n, Function) for n in nodes)


def test_preserves_the_corpus_and_generated_programs():
    assert_pass_preserves(specialized, examples=corpus())


def test_the_gradients_of_the_workloads_lose_every_reference_and_closure():
    """W1-W5 have static control flow (W4's loop runs 50 steps from a constant counter, so it
    is unrolled): after partial evaluation and dead code elimination their gradients are
    straight-line code."""
    module = prepared(workloads())
    for name in ["w1_vg", "w2_vg", "w3_vg", "w4_vg", "w5_gradgrad", "w5_hvp"]:
        before = reached(module, name)
        after = reached(infer(eliminate_dead_code(infer(partially_evaluate(before)))), name)
        assert refs_and_closures(before)[0] > 10, name
        assert refs_and_closures(after) == (0, 0), (name, str(after))


def test_polymorphic_gradients_lose_every_reference_and_closure_and_stay_polymorphic():
    """A batch dimension variable, helpers that are polymorphic globals called at several
    instances (m + 1, 2 * m + 2) and over a base type: their bodies are specialized as instances."""
    module = prepared(relayish.parse(POLYMORPHIC))
    for name in ["poly_mlp", "poly_shift", "poly_twice"]:
        before = reached(module, name)
        after = reached(infer(eliminate_dead_code(infer(partially_evaluate(before)))), name)
        assert refs_and_closures(before)[0] > 10, name
        assert refs_and_closures(after) == (0, 0), (name, str(after))
        assert after[name].type_params == before[name].type_params
        assert set(after.functions) == {name}, "every polymorphic helper was inlined"


def test_a_reference_read_under_a_dynamic_branch_is_materialized_first():
    source = f"""
    def @main(%x: {F3}, %c: Tensor(BoolType, Shape())) {{
      let %r = Ref(%x) in
      let %u = %r := %x * 2.0 in
      let %f = fn () {{ %r := !%r + 1.0 }} in
      let %v = if %c then %f() else () in
      let %w = %f() in
      !%r
    }}"""
    module = relayish.parse(source)
    x = np.array([1.0, 2.0, 3.0], np.float32)
    for c in (np.bool_(True), np.bool_(False)):
        out = check_pass(specialized, module, "main", (x, c))
    assert refs_and_closures(out)[0] > 0  # the branch may write it: it stays a reference


def test_a_closure_stored_in_the_reference_it_captures_is_left_alone():
    """Landin's knot: recursion through a reference. The pass keeps the global as it was."""
    source = """
    def @main(%n: Tensor(IntType(32), Shape())) -> Tensor(IntType(32), Shape()) {
      let %r = Ref(fn (%k: Tensor(IntType(32), Shape())) -> Tensor(IntType(32), Shape()) { %k }) in
      let %f = fn (%k: Tensor(IntType(32), Shape())) -> Tensor(IntType(32), Shape()) {
        if %k <= 0 then 0 else %k + (!%r)(%k - 1)
      } in
      let %u = %r := %f in
      let %g = fn () -> Tensor(IntType(32), Shape()) { (!%r)(%n) } in
      if %n > 100 then 0 else %g()
    }"""
    module = relayish.parse(source)
    check_pass(specialized, module, "main", (np.int32(10),))


def test_a_recursive_loop_stays_a_loop_and_a_static_call_is_inlined():
    source = f"""
    def @double(%x: {F3}) -> {F3} {{ %x + %x }}
    def @main(%x: {F3}, %n: Tensor(IntType(32), Shape())) -> {F3} {{
      let %loop = fn (%i: Tensor(IntType(32), Shape()), %acc: {F3}) -> {F3} {{
        if %i >= %n then %acc else %loop(%i + 1, @double(%acc))
      }} in
      %loop(0, %x)
    }}"""
    module = relayish.parse(source)
    out = check_pass(specialized, module, "main", (np.ones(3, np.float32), np.int32(4)))
    text = relayish.astext(out["main"])
    assert "%loop(" in text and "@double" not in text


I32 = "Tensor(IntType(32), Shape())"
LOOP = f"""
def @main(%x: {F3}, %n: {I32}) -> {F3} {{
  let %loop = fn (%i: {I32}, %acc: {F3}) -> {F3} {{
    if %i >= BOUND then %acc else %loop(%i + 1, %acc * 0.25 + %x)
  }} in
  %loop(0, %x)
}}"""


def functions_in(module: Module) -> int:
    return refs_and_closures(module)[1]


def test_a_loop_with_a_constant_counter_and_bound_is_unrolled():
    out = check_pass(specialized, relayish.parse(LOOP.replace("BOUND", "5")), "main",
                     (np.ones(3, np.float32), np.int32(0)))
    assert functions_in(out) == 0
    assert relayish.astext(out).count("0.25") == 5  # five steps, straight-line


def test_a_loop_whose_test_is_dynamic_stays_a_loop_from_its_first_step():
    out = check_pass(specialized, relayish.parse(LOOP.replace("BOUND", "%n")), "main",
                     (np.ones(3, np.float32), np.int32(7)))
    assert functions_in(out) == 1
    assert relayish.astext(out).count("0.25") == 1  # the loop's body, once


def test_a_loop_longer_than_the_limit_is_not_unrolled_at_all():
    from jit.passes.partial_eval import MAX_UNROLLED

    for bound in (MAX_UNROLLED, MAX_UNROLLED + 50):
        out = check_pass(specialized, relayish.parse(LOOP.replace("BOUND", str(bound))), "main",
                         (np.ones(3, np.float32), np.int32(0)))
        assert functions_in(out) == 1 and relayish.astext(out).count("0.25") == 1, bound
    out = check_pass(specialized, relayish.parse(LOOP.replace("BOUND", str(MAX_UNROLLED - 1))), "main",
                     (np.ones(3, np.float32), np.int32(0)))
    assert functions_in(out) == 0 and relayish.astext(out).count("0.25") == MAX_UNROLLED - 1


def test_undoing_an_unrolling_puts_back_the_references_it_wrote():
    """The loop writes a static reference on every step, then meets a dynamic test: the writes
    of the steps it had unrolled are undone, and the loop reads and writes the reference."""
    source = f"""
    def @main(%x: {F3}, %n: {I32}) -> {F3} {{
      let %r = Ref(%x) in
      let %loop = fn (%i: {I32}) -> () {{
        if %i >= 3 then (if %i >= %n then () else %loop(%i + 1)) else
        let %u = %r := !%r * 0.25 + %x in %loop(%i + 1)
      }} in
      let %v = %loop(0) in
      !%r
    }}"""
    module = relayish.parse(source)
    for n in (np.int32(2), np.int32(6)):
        out = check_pass(specialized, module, "main", (np.ones(3, np.float32), n))
    assert functions_in(out) == 1 and refs_and_closures(out)[0] > 0


def test_scalar_constants_fold_and_an_error_is_left_to_happen():
    source = f"""
    def @main(%x: {I32}) -> {I32} {{
      let %a = 6 * 7 in
      if %x == 0 then %a else %x / (%a - 42)
    }}"""
    module = relayish.parse(source)
    out = check_pass(specialized, module, "main", (np.int32(0),))
    text = relayish.astext(out["main"])
    assert "42" in text and "6 * 7" not in text and "/ 0" in text
    with pytest.raises(relayish.RelayRuntimeError, match="division by zero"):
        relayish.evaluate(out, "main", np.int32(3))


def test_a_deep_let_chain():
    """20,000 lets (built directly: parsing and checking that many take a minute) inside
    20,000 nested calls of closures: no RecursionError, every addition kept in order."""
    x = Var("x")
    body: Expr = x
    for _ in range(20_000):
        body = Call(Function([y := Var("y")], Call(Op("add"), [y, Constant(1.0)])), [body])
    out = partially_evaluate(Module({"main": Function([x], body)}))
    chain = out["main"].body
    adds = 0
    while isinstance(chain, Let):
        adds += isinstance(chain.value, Call) and chain.value.callee.name == "add"
        chain = chain.body
    assert adds + (chain.callee.name == "add") == 20_000  # the last is the result
