"""minimize: greedy structural shrinking that keeps a failure and keeps programs well typed."""

from __future__ import annotations

import relayish
from relayish.testing.minimize import minimize, reachable

F = "Tensor(FloatType(32), Shape())"
PROGRAM = f"""
def @main(%x: {F}) -> ({F}, {F}) {{
  let %a = %x * 2.0 in
  let %b = @helper(%a) + 1.0 in
  let %f = fn (%y: {F}) {{ %y - 3.0 }} in
  (if %x > 0.0 then %f(%b) else %a, %a)
}}
def @helper(%z: {F}) -> {F} {{ %z * %z }}
def @unused(%z: {F}) -> {F} {{ %z }}
"""


def test_reachable_keeps_what_the_entry_calls():
    module = relayish.parse(PROGRAM)
    assert list(reachable(module, "main").functions) == ["main", "helper"]


def test_minimize_keeps_the_failure_and_removes_the_rest():
    module = relayish.parse(PROGRAM)
    calls = []

    def has_subtraction(candidate: relayish.Module) -> bool:
        calls.append(candidate)
        relayish.infer_types(candidate)  # every candidate it is given is well typed
        return " - " in relayish.astext(candidate)

    small = minimize(module, "main", has_subtraction)
    text = relayish.astext(small)
    assert " - 3.0" in text
    assert "@helper" not in text and "@unused" not in text and "%x * 2.0" not in text
    assert len(text.splitlines()) < len(relayish.astext(module).splitlines())
    assert relayish.infer_types(small)
    assert calls


def test_minimize_never_makes_the_entry_return_a_closure():
    module = relayish.parse(PROGRAM)

    def always(candidate: relayish.Module) -> bool:
        return True

    small = relayish.infer_types(minimize(module, "main", always))
    assert "->" not in relayish.astext(small["main"].ret_type)  # a tensor or a tuple, not a function


def test_minimize_respects_its_budget():
    module = relayish.parse(PROGRAM)
    tried = []

    def never(candidate: relayish.Module) -> bool:
        tried.append(candidate)
        return False

    assert minimize(module, "main", never, max_tries=3) is not None
    assert len(tried) <= 4  # the entry without its result type, then at most three candidates


def test_a_candidate_cut_short_by_the_call_bound_is_not_the_failure():
    """A candidate whose (bounded) run differs only because one side hit the call bound is
    no evidence: accepting it would make the final, unbounded re-run loop forever."""
    from relayish.errors import StepLimitError
    from relayish.testing.checks import EquivalenceError, minimized_failure

    module = relayish.parse(f"def @main(%x: {F}) -> {F} {{ let %y = %x * 2.0 in %y - 1.0 }}")
    original = relayish.astext(module)

    def failing(candidate: relayish.Module, max_calls) -> None:
        if relayish.astext(candidate) == original:
            raise EquivalenceError("the genuine difference")
        assert max_calls is not None, "a cut-short candidate was re-run without a bound"
        try:
            raise StepLimitError("step limit exceeded")
        except StepLimitError as cause:
            raise EquivalenceError("only module_a raised") from cause

    small, error = minimized_failure(failing, module, "main", EquivalenceError("the genuine difference"))
    assert relayish.astext(small) == original and str(error) == "the genuine difference"
