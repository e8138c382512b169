"""Time and peak memory of the reference evaluator on deep programs.

Run: python bench/interp_depth.py
Tail calls (the counting loop, the mutual recursion) should show the same peak memory at
every depth; the non-tail recursion's peak grows with depth (its machine stack is on the
heap, so it cannot overflow Python's stack). Peak memory is what tracemalloc sees of
Python allocations, measured in a second run of each case.
"""

from __future__ import annotations

import time
import tracemalloc
from typing import Any, Callable

import numpy as np

import relayish
from interp import Evaluator
from relayish.testing.deep_programs import LOOPS, let_chain


def measure(run: Callable[[], Any]) -> tuple[float, float]:
    start = time.perf_counter()
    run()
    seconds = time.perf_counter() - start
    tracemalloc.start()
    run()
    _, peak = tracemalloc.get_traced_memory()
    tracemalloc.stop()
    return seconds, peak / 2**10


def main() -> None:
    loops = Evaluator(relayish.infer_types(LOOPS))
    chain = Evaluator(relayish.infer_types(let_chain(100_000)))
    x = np.ones(8, np.float32)
    cases = [
        ("tail-recursive loop, 10,000 steps", lambda: loops.run("count", [np.int32(0), np.int32(10_000)])),
        ("tail-recursive loop, 100,000 steps", lambda: loops.run("count", [np.int32(0), np.int32(100_000)])),
        ("tail-recursive loop, 1,000,000 steps", lambda: loops.run("count", [np.int32(0), np.int32(1_000_000)])),
        ("mutual recursion, depth 100,000", lambda: loops.run("even", [np.int32(100_000)])),
        ("non-tail recursion, depth 10,000", lambda: loops.run("total", [np.int32(10_000)])),
        ("non-tail recursion, depth 100,000", lambda: loops.run("total", [np.int32(100_000)])),
        ("let chain, 100,000 bindings (evaluation only)", lambda: chain.run("chain", [x])),
    ]
    print(f"{'case':<48} {'time (s)':>9} {'peak (KiB)':>11}")
    for name, run in cases:
        seconds, peak = measure(run)
        print(f"{name:<48} {seconds:>9.2f} {peak:>11.1f}")


if __name__ == "__main__":
    main()
