"""Type-checking time against program size: it should grow linearly.

Run: python bench/typecheck_scaling.py
Prints the time to check let chains of 10,000, 20,000 and 100,000 bindings, and the
ratio of the 20k time to the 10k time (about 2 for linear growth).
"""

from __future__ import annotations

import time

import relayish
from relayish import ir


def let_chain(length: int) -> ir.Module:
    """``%v_i = %v_{i-1} * 0.5 + 1.0`` for i < length, over a float32 vector."""
    x = ir.Var("x", ir.TensorType(ir.FloatType(32), ir.Shape(8)))
    names = [ir.Var(f"v{i}") for i in range(length)]
    body: ir.Expr = names[-1]
    for i in range(length - 1, -1, -1):
        prev = names[i - 1] if i else x
        value = ir.Call(ir.Op("add"), [ir.Call(ir.Op("mul"), [prev, ir.Constant(0.5)]), ir.Constant(1.0)])
        body = ir.Let(names[i], value, body)
    return ir.Module({"chain": ir.Function([x], body)})


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
