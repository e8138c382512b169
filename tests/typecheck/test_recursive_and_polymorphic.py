"""Inference past annotations (issue 22, scope 2): recursive and mutually recursive globals
without a result type, polymorphic function values used where one type is expected, and a
dimension-polymorphic literal called directly. Expected types are written out by hand; the
programs also run in the evaluator and the JIT (against each other and hand-computed
values), and a gradient through an unannotated recursive global matches finite differences.
"""

import numpy as np
import pytest

import relayish
from typecheck.inference import declared_type

F = "Tensor(FloatType(32), Shape())"
I = "Tensor(IntType(32), Shape())"
B = "Tensor(BoolType, Shape())"
V3 = "Tensor(FloatType(32), Shape(3))"


def types_of(src: str) -> dict[str, str]:
    module = relayish.infer_types(relayish.parse(src, "t.rly"))
    return {name: str(declared_type(fn)) for name, fn in module.functions.items()}


def run_both(src: str, entry: str, *args):
    """The evaluator's result, after checking the JIT gives the same."""
    module = relayish.parse(src)
    expected = relayish.evaluate(module, entry, *args)
    actual = relayish.compile(module, entry, tiered=False)(*args)
    for got, want in zip(np.atleast_1d(np.asarray(actual, dtype=object)).ravel(), np.atleast_1d(np.asarray(expected, dtype=object)).ravel()):
        np.testing.assert_array_equal(np.asarray(got), np.asarray(want))
    return expected


FACT = f"def @fact(%n: {I}) {{\n  if %n <= 0 then 1 else %n * @fact(%n - 1)\n}}"

EVEN_ODD = (f"def @even(%n: {I}) {{\n  if %n == 0 then true else @odd(%n - 1)\n}}\n"
            f"def @odd(%n: {I}) {{\n  if %n == 0 then false else @even(%n - 1)\n}}")


def test_an_unannotated_recursive_global_gets_the_result_type_a_person_would_write() -> None:
    assert types_of(FACT) == {"fact": f"({I}) -> {I}"}
    assert run_both(FACT, "fact", np.int32(5)) == 120
    # the typed text says it, and reads back
    printed = relayish.astext(relayish.infer_types(relayish.parse(FACT)))
    assert f"def @fact(%n: {I}) -> {I}" in printed
    assert relayish.astext(relayish.infer_types(relayish.parse(printed))) == printed


def test_an_unannotated_mutually_recursive_pair_is_inferred_together() -> None:
    assert types_of(EVEN_ODD) == {"even": f"({I}) -> {B}", "odd": f"({I}) -> {B}"}
    assert bool(run_both(EVEN_ODD, "even", np.int32(10))) is True
    assert bool(run_both(EVEN_ODD, "odd", np.int32(10))) is False


def test_a_cycle_of_three_with_an_annotated_caller_and_a_parameter_decided_by_the_group() -> None:
    """@a's parameter is unannotated: only @c's call with a float decides it."""
    src = (f"def @main(%x: {F}) -> {F} {{\n  @a(%x, 3)\n}}\n"
           f"def @a(%x, %n: {I}) {{\n  if %n <= 0 then %x else @b(%x * 2.0, %n - 1)\n}}\n"
           f"def @b(%x: {F}, %n: {I}) {{\n  @c(%x + 1.0, %n)\n}}\n"
           f"def @c(%x, %n) {{\n  @a(%x, %n)\n}}")
    assert types_of(src) == {"main": f"({F}) -> {F}", "a": f"({F}, {I}) -> {F}", "b": f"({F}, {I}) -> {F}",
                             "c": f"({F}, {I}) -> {F}"}
    # x -> 2x + 1, three times: 1 -> 3 -> 7 -> 15
    assert run_both(src, "main", np.float32(1.0)) == np.float32(15.0)


def test_a_group_whose_members_disagree_is_an_error_at_the_call() -> None:
    src = (f"def @f(%n: {I}) {{\n  if %n <= 0 then 1.0 else @g(%n)\n}}\n"
           f"def @g(%n: {I}) {{\n  if %n <= 0 then true else @f(%n - 1)\n}}")
    with pytest.raises(relayish.RelayTypeError) as info:
        relayish.infer_types(relayish.parse(src, "t.rly"))
    # @f's then branch decided Float; @g's branches meet it at @g's recursive call
    assert (info.value.span.file, info.value.span.line, info.value.span.col) == ("t.rly", 5, 29)
    assert info.value.message.startswith("the else branch (it must have the type of the then branch): "
                                         f"expected {B}, found {F}")


def test_a_callee_that_failed_is_named_in_its_callers_error_and_both_are_reported() -> None:
    src = "def @g() {\n  @f(1)\n}\ndef @f(%n) {\n  if 1 then %n else %n\n}"
    with pytest.raises(relayish.RelayTypeError) as info:
        relayish.infer_types(relayish.parse(src, "t.rly"))
    messages = [e.message for e in info.value.errors]
    assert any("the condition of if" in m for m in messages)
    assert "the type of @f is not known: checking it failed (its own error says why)" in messages


def test_a_long_chain_of_unannotated_recursive_globals_needs_no_deep_stack() -> None:
    """Each @f_k calls @f_{k+1}; the last calls @f_0: one group of 3,000, found iteratively."""
    n = 3000
    defs = [f"def @f{k}(%x: {F}, %n: {I}) {{\n  if %n <= 0 then %x else @f{(k + 1) % n}(%x + 1.0, %n - 1)\n}}"
            for k in range(n)]
    types = types_of("\n".join(defs))
    assert len(types) == n and set(types.values()) == {f"({F}, {I}) -> {F}"}


def test_gradient_through_an_unannotated_recursive_global_matches_finite_differences() -> None:
    src = (f"def @power(%x: {F}, %n: {I}) {{\n  if %n <= 0 then 1.0 else %x * @power(%x, %n - 1)\n}}\n"
           f"def @main(%x: {F}) {{\n  Grad(fn (%y: {F}) {{ @sin(@power(%y, 3)) }})(%x)\n}}")
    x = 0.7
    value, (grad,) = run_both(src, "main", np.float32(x))
    h = 1e-4
    fd = (np.sin((x + h) ** 3) - np.sin((x - h) ** 3)) / (2 * h)
    assert value == pytest.approx(np.sin(x ** 3), rel=1e-6)
    assert grad == pytest.approx(fd, rel=1e-4)


APPLY = f"def @apply(%f: ({V3}) -> {V3}, %x: {V3}) -> {V3} {{\n  %f(%x)\n}}\n"


def test_a_polymorphic_identity_passed_to_a_higher_order_function() -> None:
    src = APPLY + f"def @main(%x: {V3}) {{\n  @apply(fn [b: Type](%y: b) -> b {{ %y }}, %x)\n}}"
    assert types_of(src)["main"] == f"({V3}) -> {V3}"
    np.testing.assert_array_equal(run_both(src, "main", np.arange(3, dtype=np.float32)), [0, 1, 2])


def test_a_let_bound_polymorphic_function_is_used_at_two_shapes() -> None:
    src = APPLY + (f"def @main(%x: {V3}) {{\n"
                   "  let %sq = fn [n: Dim](%y: Tensor(FloatType(32), Shape(n))) { %y * %y } in\n"
                   "  (@apply(%sq, %x), %sq(@concatenate(%x, %x, axis=0)))\n}")
    assert types_of(src)["main"] == f"({V3}) -> ({V3}, Tensor(FloatType(32), Shape(6)))"
    first, second = run_both(src, "main", np.arange(3, dtype=np.float32))
    np.testing.assert_array_equal(first, [0, 1, 4])
    np.testing.assert_array_equal(second, [0, 1, 4, 0, 1, 4])


def test_a_polymorphic_function_returned_where_one_type_is_expected() -> None:
    src = (f"def @pick() -> ({V3}) -> {V3} {{\n  fn [b: Type](%y: b) -> b {{ %y }}\n}}\n"
           f"def @main(%x: {V3}) {{\n  @pick()(%x)\n}}")
    assert types_of(src)["main"] == f"({V3}) -> {V3}"
    np.testing.assert_array_equal(run_both(src, "main", np.arange(3, dtype=np.float32)), [0, 1, 2])


def test_a_polymorphic_function_whose_body_does_not_fit_the_expected_type_is_rejected() -> None:
    src = APPLY + f"def @main(%x: {V3}) {{\n  @apply(fn [n: Dim](%y: Tensor(FloatType(32), Shape(n))) {{ @sum(%y) }}, %x)\n}}"
    with pytest.raises(relayish.RelayTypeError, match="argument 1 of the call"):
        relayish.infer_types(relayish.parse(src))


def test_a_dimension_polymorphic_literal_called_directly_has_a_concrete_result() -> None:
    src = f"def @main(%x: {V3}) {{\n  (fn [n: Dim](%y: Tensor(FloatType(32), Shape(n))) {{ %y + %y }})(%x)\n}}"
    assert types_of(src)["main"] == f"({V3}) -> {V3}"
    printed = relayish.astext(relayish.infer_types(relayish.parse(src)))
    assert relayish.astext(relayish.infer_types(relayish.parse(printed))) == printed  # no unbound n
    np.testing.assert_array_equal(run_both(src, "main", np.arange(3, dtype=np.float32)), [0, 2, 4])
