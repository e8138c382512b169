"""assert_pass_preserves: a correct pass passes, broken passes are caught and shrunk.

The oracle is the evaluator on the pass's input; the passes here are written in a few
lines so what they do is plain.
"""

from __future__ import annotations

import functools
import re

import numpy as np
import pytest

import relayish
from relayish.expr import Call, Constant, Expr, Function, Let, Op, Var
from relayish.module import Module
from relayish.testing import EquivalenceError, PassError, assert_pass_preserves, check_pass
from relayish.testing.checks import MINIMIZE_MAX_CALLS
from relayish.testing.minimize import minimize
from relayish.testing.strategies import Features, Program, programs
from relayish.traverse import ExprMutator


def rewrite_calls(module: Module, fn) -> Module:
    """Apply ``fn(call) -> Expr`` to every operator call of every global."""

    class Rewrite(ExprMutator):
        def rewrite(self, old: Expr, new: Expr) -> Expr:
            if isinstance(new, Call) and isinstance(new.callee, Op):
                return fn(new)
            return new

    return module.with_functions({name: Rewrite().mutate(f) for name, f in module.functions.items()})


def sub_as_add_neg(module: Module) -> Module:
    """``a - b`` becomes ``a + (-b)``: exact in IEEE floats and in wrapping integers."""
    return rewrite_calls(module, lambda c: Call(Op("add"), [c.args[0], Call(Op("neg"), [c.args[1]])], span=c.span)
                         if c.callee.name == "sub" else c)


def swap_sub(module: Module) -> Module:
    """A broken pass: ``a - b`` becomes ``b - a``."""
    return rewrite_calls(module, lambda c: Call(Op("sub"), c.args[::-1], span=c.span) if c.callee.name == "sub" else c)


def test_a_correct_pass_preserves_generated_programs():
    assert_pass_preserves(sub_as_add_neg, max_examples=300)


ARITHMETIC = programs(Features(ops=("add", "sub", "mul", "neg", "sum")))  # sub is common among few operators


def test_a_broken_pass_is_caught_with_a_minimized_counterexample(capsys):
    with pytest.raises(EquivalenceError) as info:
        assert_pass_preserves(swap_sub, ARITHMETIC, max_examples=300)
    message = str(info.value)
    assert re.search(r"@main differs between module_a \(actual\) and module_b \(expected\): result(\[\d+\])*: ", message)
    program = message.split("program a:\n", 1)[1].split("program b:", 1)[0]
    assert " - " in program  # the swapped subtraction is in what is shown
    before, after = map(int, re.search(r"minimized from a program of (\d+) lines to (\d+)", message).groups())
    assert after < before and program.count("def @") == 1, program
    # Minimal for the shrinker: minimizing the counterexample again changes nothing. (How
    # small that is depends on the program found: "-2 - -5" in 3 lines, or a loop whose
    # only subtraction is its counter in 9.)
    found = info.value.counterexample
    assert len(relayish.astext(found.module).splitlines()) == after

    def still_fails(candidate: Module) -> bool:
        bounded = functools.partial(relayish.evaluate, max_calls=MINIMIZE_MAX_CALLS)
        try:
            check_pass(swap_sub, candidate, found.entry, found.args, backend=bounded)
        except EquivalenceError as err:
            return not isinstance(err.__cause__, relayish.StepLimitError)
        return False

    assert still_fails(found.module)
    assert relayish.alpha_equal(minimize(found.module, found.entry, still_fails), found.module)


def test_a_pass_that_breaks_typing_is_a_pass_error():
    def float_to_int(module: Module) -> Module:
        return rewrite_calls(module, lambda c: Call(c.callee, c.args + (Constant(1),), c.attrs, span=c.span)
                             if c.callee.name == "add" else c)

    with pytest.raises(PassError, match="does not type-check"):
        assert_pass_preserves(float_to_int, max_examples=100)


def test_a_pass_that_returns_no_module_is_a_pass_error():
    program = Program(relayish.parse("def @main() { 1 }"), "main", ())
    with pytest.raises(PassError, match="returned NoneType, not a Module"):
        check_pass(lambda m: None, program.module, program.entry, program.args)


def test_a_pass_that_shares_a_binding_between_two_parents_is_a_pass_error():
    """``let %u = body in body`` with one node for both ``body``s: the evaluator would bind ``%y``
    twice in one frame (AD once made a backpropagator call itself this way). The values agree, so
    only the binding check sees it."""
    def share_body(module: Module) -> Module:
        fn = module["main"]
        body = Let(Var("u", None), fn.body, fn.body)
        return module.with_functions({"main": Function(fn.params, body, fn.ret_type, fn.type_params, span=fn.span)})

    module = relayish.parse("def @main(%x: Tensor(FloatType(32), Shape())) { let %y = %x * 2.0 in %y + 1.0 }")
    with pytest.raises(PassError, match="binds %y more than once"):
        check_pass(share_body, module, "main", (np.float32(1.5),))
    check_pass(lambda m: m, module, "main", (np.float32(1.5),))


def test_examples_run_before_generated_programs():
    """A user's own corpus is checked too: this one program catches the broken pass."""
    program = Program(relayish.parse(
        "def @main(%a: Tensor(FloatType(32), Shape(2))) { %a - 1.0 }"), "main", (relayish.ir.Constant([3.0, 4.0]).value,))
    with pytest.raises(EquivalenceError, match="@main differs"):
        assert_pass_preserves(swap_sub, max_examples=1, examples=[program])


def test_check_pass_returns_the_typed_output():
    module = relayish.parse("def @main(%a: Tensor(FloatType(32), Shape())) { %a - 2.0 }")
    out = check_pass(sub_as_add_neg, module, "main", (relayish.ir.Constant(5.0).value,))
    assert isinstance(out["main"], Function)
    assert "%a + - 2.0" in relayish.astext(out) or "@neg" in relayish.astext(out)


def _docs_example() -> str:
    from pathlib import Path

    text = (Path(__file__).resolve().parents[2] / "docs/difftest.md").read_text()
    return text.split("## In ten lines", 1)[1].split("```python", 1)[1].split("```", 1)[0]


def test_the_docs_example_runs_and_has_teeth():
    code = _docs_example()
    assert len([line for line in code.strip().splitlines() if line.strip()]) <= 15
    exec(compile(code, "docs/difftest.md", "exec"), {})
    broken = code.replace("new.args[0].args[0] if", "new.args[0] if")  # drops one negation, not two
    assert broken != code
    with pytest.raises(EquivalenceError, match="minimized from a program"):
        exec(compile(broken, "docs/difftest.md (broken)", "exec"), {})
