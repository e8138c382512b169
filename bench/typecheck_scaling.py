"""Type-checking time against program size: it should grow linearly.

Run: python bench/typecheck_scaling.py
Prints the time to check let chains of 10,000, 20,000 and 100,000 bindings, and the
ratio of the 20k time to the 10k time (about 2 for linear growth).
"""

from __future__ import annotations

import time

import relayish
from relayish.testing.deep_programs import let_chain


def time_check(length: int) -> float:
    module = let_chain(length)
    start = time.perf_counter()
    typed = relayish.infer_types(module)
    elapsed = time.perf_counter() - start
    assert str(typed["chain"].ret_type) == "Tensor(FloatType(32), Shape(8))"
    return elapsed


def main() -> None:
    times = {n: time_check(n) for n in (10_000, 20_000, 100_000)}
    print(f"{'bindings':>10} {'check time (s)':>15}")
    for n, seconds in times.items():
        print(f"{n:>10} {seconds:>15.3f}")
    print(f"ratio 20k/10k: {times[20_000] / times[10_000]:.2f} (linear growth gives about 2)")


if __name__ == "__main__":
    main()
