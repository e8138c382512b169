"""Limits in compiled code, held to the evaluator's: ``max_calls`` counts calls as the evaluator
counts them (each loop iteration one) and stops with the same ``StepLimitError``; a tensor past
``RELAYISH_MAX_TENSOR_BYTES`` or with a negative dimension is the evaluator's
``RelayRuntimeError``, raised before anything is allocated; neither costs a program that stays
within them anything."""

from __future__ import annotations

import numpy as np
import pytest

import relayish
from interp.evaluator import Evaluator, prepared
from relayish.testing.deep_programs import LOOPS
from tests.interp.test_limits import F32, GIB, TOO_LARGE, expected_message

I32 = "Tensor(IntType(32), Shape())"


def test_max_calls_stops_a_runaway_loop():
    with pytest.raises(relayish.StepLimitError, match=r"more than 1000 calls \(in @count\): pass a larger max_calls"):
        relayish.compile(LOOPS, "count", max_calls=1000)(np.int32(0), np.int32(10**9))


def test_max_calls_stops_a_loop_without_an_exit():
    module = relayish.parse(f"def @main(%n: {I32}) -> {I32} {{ @main(%n + 1) }}")
    with pytest.raises(relayish.StepLimitError, match="more than 10000 calls"):
        relayish.compile(module, "main", max_calls=10_000)(np.int32(0))


@pytest.mark.parametrize("name, args", [("count", (0, 50)), ("total", (50,)), ("even", (51,))])
def test_max_calls_counts_as_the_evaluator_counts(name, args):
    args = tuple(map(np.int32, args))
    evaluator = Evaluator(prepared(LOOPS))
    expected = evaluator.run(name, args)
    calls = evaluator.calls
    exact = relayish.compile(LOOPS, name, max_calls=calls)
    assert exact(*args) == expected
    assert exact(*args) == expected  # each call counts from 0 again
    with pytest.raises(relayish.StepLimitError):
        relayish.compile(LOOPS, name, max_calls=calls - 1)(*args)


def test_without_max_calls_nothing_is_counted():
    plain, counted = relayish.compile(LOOPS, "count"), relayish.compile(LOOPS, "count", max_calls=10)
    assert "_count_call" not in plain.source and "k_native" in plain.source
    assert "_count_call" in counted.source and "k_native" not in counted.source


@pytest.mark.parametrize("case", TOO_LARGE)
def test_a_tensor_past_the_limit_is_the_evaluators_error(case, monkeypatch):
    monkeypatch.setenv("RELAYISH_MAX_TENSOR_BYTES", str(GIB))  # refused before it is made, whatever the memory
    source, args = TOO_LARGE[case]
    module = relayish.parse(source)
    with pytest.raises(relayish.RelayRuntimeError) as evaluated:
        relayish.evaluate(module, "main", *args)
    with pytest.raises(relayish.RelayRuntimeError) as compiled:
        relayish.compile(module, "main")(*args)
    assert str(compiled.value) == str(evaluated.value)
    assert expected_message(case) in str(compiled.value)


POLYMORPHIC = f"""
def @main[n: Dim](%a: Tensor({F32}, Shape(n, 1)), %b: Tensor({F32}, Shape(1, n))) -> Tensor({F32}, Shape(n, n)) {{
  %a + %b
}}"""


def test_a_size_known_only_at_run_time_is_checked_when_it_is_known(monkeypatch):
    monkeypatch.setenv("RELAYISH_MAX_TENSOR_BYTES", "1000")
    f = relayish.compile(relayish.parse(POLYMORPHIC), "main")
    assert f(np.ones((15, 1), np.float32), np.ones((1, 15), np.float32)).shape == (15, 15)  # 900 bytes
    with pytest.raises(relayish.RelayRuntimeError, match=r"@add in @main: a tensor of shape \(16, 16\)"):
        f(np.ones((16, 1), np.float32), np.ones((1, 16), np.float32))


def test_a_static_shape_within_the_limit_costs_nothing():
    source = f"def @main(%a: Tensor({F32}, Shape(3, 1)), %b: Tensor({F32}, Shape(1, 3))) -> " \
             f"Tensor({F32}, Shape(3, 3)) {{ %a + %b }}"
    assert "_check_tensor" not in relayish.compile(relayish.parse(source), "main").source
