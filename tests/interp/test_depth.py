"""Deep evaluation at Python's default recursion limit: tail calls run in constant stack,
let chains in one machine frame, and non-tail recursion is bounded by ``RELAYISH_MAX_DEPTH``
(a million nested calls by default), not by Python's stack."""

import os
import subprocess
import sys

import numpy as np
import pytest

import relayish
from relayish.testing.deep_programs import LOOPS, let_chain


@pytest.fixture(autouse=True)
def default_recursion_limit():
    saved = sys.getrecursionlimit()
    sys.setrecursionlimit(min(saved, 1000))
    yield
    sys.setrecursionlimit(saved)


def test_a_tail_recursive_loop_of_200000_steps():
    """200 times the recursion limit: constant stack (a larger count only takes longer)."""
    assert relayish.evaluate(LOOPS, "count", np.int32(0), np.int32(200_000)) == 200_000


def test_mutual_recursion_of_depth_100000():
    assert relayish.evaluate(LOOPS, "even", np.int32(100_000)) == np.True_
    assert relayish.evaluate(LOOPS, "odd", np.int32(100_001)) == np.True_


def test_non_tail_recursion_of_depth_100000():
    result = relayish.evaluate(LOOPS, "total", np.int32(100_000))
    # 1 + ... + 100000 = 5,000,050,000, which wraps in int32 to 5,000,050,000 - 2**32
    assert result.dtype == np.int32 and result == 705_082_704


def test_let_chain_of_20000_bindings():
    """20 times the recursion limit: type checking, Grad expansion and evaluation never recurse
    per binding (a longer chain only takes longer)."""
    x = np.arange(8, dtype=np.float32)
    expected = x.copy()
    for _ in range(20_000):  # float32 arithmetic, as the program does it
        expected = expected * np.float32(0.5) + np.float32(1.0)
    np.testing.assert_array_equal(relayish.evaluate(let_chain(20_000), "chain", x), expected)


def test_the_call_limit_stops_runaway_recursion():
    with pytest.raises(relayish.RelayRuntimeError, match="step limit exceeded: more than 1000 calls"):
        relayish.evaluate(LOOPS, "count", np.int32(0), np.int32(10**9), max_calls=1000)


RUNAWAY_CHILD = """
import resource
import numpy as np
import relayish

resource.setrlimit(resource.RLIMIT_AS, (2**31, 2**31))  # without a depth limit, 2 GiB run out in seconds
module = relayish.parse("def @main(%n: Tensor(IntType(32), Shape())) -> Tensor(IntType(32), Shape()) "
                        "{ @main(%n + 1) + 1 }")
try:
    relayish.evaluate(module, "main", np.int32(0))
except relayish.RelayRuntimeError as err:
    print(err)
"""


@pytest.mark.skipif(sys.platform == "win32", reason="resource limits")
def test_runaway_non_tail_recursion_stops_at_the_depth_limit():
    # a process of its own: before the limit, memory ran out and Python aborted ("Cannot recover from MemoryErrors")
    env = {**os.environ, "RELAYISH_MAX_DEPTH": "20000"}
    done = subprocess.run([sys.executable, "-c", RUNAWAY_CHILD], capture_output=True, text=True, env=env, timeout=300)
    assert done.returncode == 0, done.stderr[-2000:]
    assert "non-tail recursion deeper than 20,000 calls (in @main)" in done.stdout
    assert "RELAYISH_MAX_DEPTH" in done.stdout
