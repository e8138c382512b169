"""Checks that wait for a type to be known: a projection of an unannotated parameter, and
Grad of a function whose result is not known yet (what the Python frontend produces for
loops over tuples and gradients of lambdas). Types are written by hand."""

from __future__ import annotations

import pytest

import relayish
from relayish import RelayTypeError

F = "Tensor(FloatType(64), Shape())"
F32 = "Tensor(FloatType(32), Shape())"


def test_a_projection_of_an_unannotated_parameter_is_typed_once_the_call_is_seen():
    mod = relayish.infer_types(relayish.parse(f"""
def @f(%x: {F}) {{
  let %swap = fn (%t) {{ (%t[1], %t[0] + %t[1]) }} in
  %swap((%x, %x * 2.0f64))
}}
"""))
    assert relayish.astext(mod["f"].ret_type) == f"({F}, {F})"


def test_a_projection_never_resolved_says_to_annotate():
    with pytest.raises(RelayTypeError, match=r"projection \[0\]: cannot infer the type of the tuple"):
        relayish.infer_types(relayish.parse(f"def @f(%x: {F}) {{ let %g = fn (%t) {{ %t[0] }} in %x }}"))


def test_a_projection_of_a_non_tuple_is_still_an_error_once_known():
    with pytest.raises(RelayTypeError, match=r"projection \[0\]: expected a tuple, found Tensor"):
        relayish.infer_types(relayish.parse(f"def @f(%x: {F}) {{ let %g = fn (%t) {{ %t[0] }} in %g(%x) }}"))


def test_grad_of_an_unannotated_function_is_checked_once_its_result_is_known():
    mod = relayish.infer_types(relayish.parse(f"def @f(%x: {F}) {{ Grad(fn (%y) {{ %x * %y }})(%x) }}"))
    assert relayish.astext(mod["f"].ret_type) == f"({F}, ({F},))"
    with pytest.raises(RelayTypeError, match="Grad: the function must return a floating-point scalar, but it returns"):
        relayish.infer_types(relayish.parse(f"def @f(%x: {F}) {{ Grad(fn (%y) {{ (%y, %y) }})(%x) }}"))
    with pytest.raises(RelayTypeError, match="Grad: the function must return a floating-point scalar"):
        relayish.infer_types(relayish.parse("def @f(%x: Tensor(IntType(32), Shape())) { Grad(fn (%y) { %y })(%x) }"))
    # float32 results are fine too:
    relayish.infer_types(relayish.parse(f"def @f(%x: {F32}) {{ Grad(fn (%y) {{ %y * %y }})(%x) }}"))
