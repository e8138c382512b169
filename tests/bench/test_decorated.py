"""The workloads as users write them (bench/decorated.py: ``@relay``, ``relay.grad``, ``Dim``
batch and length dimensions) optimize to the structure of their static-shape text twins
(bench/programs.py): no reference and no backpropagator closure left, and the same kernels.

Kernels are counted on the optimized IR: each fusion group is one (compared by its members, a
fill of a symbolic shape being the same member as the static twin's ``full``), and each operator
call outside a group is one, except what the JIT runs without a kernel: the operators it computes
on the host (``HOST_OPS``: a size read off a shape, which the static twin folds to a constant)
and scalar code (every argument rank 0: NumPy scalar arithmetic, jit/scalars.py).
"""

from __future__ import annotations

from collections import Counter

import numpy as np
import pytest

from bench import decorated, programs
from jit.lower import HOST_OPS
from jit.passes import optimize
from relayish.expr import Call, Function, Op, RefNew, RefRead, RefWrite
from relayish.module import Module
from relayish.traverse import post_order
from relayish.types import Shape, TensorType
from runtime.prepare import prepared
from typecheck import expr_types

ROWS = ["W1.fwd", "W1.vg", "W2.vg", "W2.pex", "W3.vg", "W4.vg", "W5.gradgrad", "W5.hvp"]


FILLS = {"zeros_like": "fill", "ones_like": "fill", "full": "fill"}


def kernels(module: Module) -> tuple[Counter, Counter]:
    """(operator calls outside groups by name, groups by their members) of an optimized module."""
    types = expr_types(module)
    calls: Counter = Counter()
    groups: Counter = Counter()
    inside: set[int] = set()
    for fn in module.functions.values():
        for node in post_order(fn):
            if isinstance(node, Function) and node.primitive:
                members = [n for n in post_order(node.body) if isinstance(n, Call) and isinstance(n.callee, Op)]
                groups[tuple(sorted(FILLS.get(n.callee.name, n.callee.name) for n in members))] += 1
                inside.update(id(n) for n in members)
        for node in post_order(fn):
            if not isinstance(node, Call) or not isinstance(node.callee, Op) or id(node) in inside:
                continue
            scalar = node.args and all(isinstance(t := types.get(id(a)), TensorType) and t.shape == Shape()
                                       for a in node.args)
            if node.callee.name not in HOST_OPS and not scalar:
                calls[node.callee.name] += 1
    return calls, groups


def refs_and_closures(module: Module) -> int:
    return sum(isinstance(n, (RefNew, RefRead, RefWrite)) or (isinstance(n, Function) and not n.primitive)
               for fn in module.functions.values() for n in post_order(fn.body))


@pytest.mark.parametrize("row", ROWS)
def test_the_decorated_form_optimizes_to_its_static_twins_kernels(row: str) -> None:
    fn = decorated.ENTRIES[row]
    name = programs.ENTRIES[row][0]
    typed = fn.ir
    assert any(f.type_params for f in typed.functions.values()), "the decorated form is polymorphic"
    poly = optimize(prepared(typed), fn.global_name)
    static = optimize(prepared(programs.module()), name)
    assert refs_and_closures(poly) == 0, str(poly)
    assert poly[fn.global_name].type_params, "optimized once for every batch size"
    assert kernels(poly) == kernels(static)


def test_a_new_batch_size_runs_the_same_program_and_compiles_nothing() -> None:
    """W2's decorated form compiled (the JIT, @relay's default backend) and run at batch 64, then
    17: one optimized program (explain says so), no kernel compiled for the second size, and
    both results right (NumPy's own derivation in float64 is the oracle)."""
    import relayish
    from bench.workloads import inputs, np_w2_vg
    from jit.kernels.registry import compile_stats

    fn = decorated.w2_vg
    compiled = relayish.compile(fn.ir, fn.global_name)
    assert "optimized once for every size of B" in compiled.explain()
    inp = inputs("W2.vg")
    args = [inp[k] for k in ("X", "Y", "W1", "b1", "W2", "b2")]
    first = compiled(*args)
    count = compile_stats()["compiled"]
    smaller = [args[0][:17], args[1][:17], *args[2:]]
    second = compiled(*smaller)
    assert compile_stats()["compiled"] == count
    for got, batch in ((first, args), (second, smaller)):
        expected = np_w2_vg(*[a.astype(np.float64) for a in batch])
        for g, e in zip([got[0], *got[1]], expected):
            np.testing.assert_allclose(g, e, rtol=2e-4, atol=1e-6)
