"""Limits in compiled code, held to the evaluator's: ``max_calls`` counts calls as the evaluator
counts them (each loop iteration one) and stops with the same ``StepLimitError``; a tensor past
``RELAYISH_MAX_TENSOR_BYTES`` or with a negative dimension is the evaluator's
``RelayRuntimeError``, raised before anything is allocated; neither costs a program that stays
within them anything."""

from __future__ import annotations

import numpy as np
import pytest

import relayish
from interp.evaluator import Evaluator
from runtime.prepare import prepared
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


WORKING_MEMORY_CHILD = """
import resource
import numpy as np
import relayish

# conv2d's result is 301 x 301, but its working memory (im2col columns; the evaluator's copy of
# the windows) is 90,000 x 90,601 floats, 33 GB: past this address-space limit at once
resource.setrlimit(resource.RLIMIT_AS, (8 * 2**30, 8 * 2**30))
module = relayish.parse('def @main(%x: Tensor(FloatType(32), Shape(1, 1, 600, 600)), '
                        '%w: Tensor(FloatType(32), Shape(1, 1, 300, 300))) { @conv2d(%x, %w) }')
x, w = np.ones((1, 1, 600, 600), np.float32), np.ones((1, 1, 300, 300), np.float32)
for run in (lambda: relayish.evaluate(module, "main", x, w), lambda: relayish.compile(module, "main", tiered=False)(x, w)):
    try:
        run()
        print("computed")
    except relayish.RelayRuntimeError as err:
        print("refused:", str(err).splitlines()[0])
"""


def test_working_memory_that_does_not_fit_is_a_runtime_error_in_both_backends():
    """Not a bare MemoryError (the error contract): the operator's result is within the limit,
    its working memory is not. In a child process with a bounded address space."""
    import subprocess
    import sys

    result = subprocess.run([sys.executable, "-c", WORKING_MEMORY_CHILD], capture_output=True, text=True, timeout=600)
    assert result.returncode == 0, result.stderr[-3000:]
    lines = result.stdout.splitlines()
    assert len(lines) == 2, result.stdout + result.stderr[-3000:]
    assert lines[0].startswith("refused:") and "@conv2d ran out of memory in @main" in lines[0], lines
    assert lines[1].startswith("refused:") and "@main ran out of memory" in lines[1], lines
