"""Arguments whose sizes break their types' dimension relations (``n + 1``, ``2 * n``, ``n * n``,
``n // 2``) are refused at the boundary, by the evaluator and by compiled code alike.

A fused kernel indexes every operand with one set of sizes, so compiled code that took the
sizes on trust read past the end of the shorter array (heap contents, or a segfault). The cases
run in a child process, so that a crash fails the test instead of killing pytest. The oracle is
independent of the solver under test: a search over the sizes of ``n`` with the dimensions
written as Python functions.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

# Pairs of one dimension written two ways (the type checker must see them equal, so that the
# elementwise operators between them type-check and fuse), and the same as Python functions.
EQUAL_PAIRS = [
    ("n + 1", "1 + n", lambda n: n + 1),
    ("2 * n", "n + n", lambda n: 2 * n),
    ("n * n", "n * n", lambda n: n * n),
    ("n // 2", "n // 2", lambda n: n // 2),
    ("3 * n + 2", "n + 2 * n + 2", lambda n: 3 * n + 2),
    ("n", "n", lambda n: n),
]
OTHERS = [("n", lambda n: n), ("n + 1", lambda n: n + 1), ("n * n", lambda n: n * n), ("2 * n", lambda n: 2 * n)]
LARGEST_N = 64

CHILD = r"""
import json, sys
import numpy as np
import relayish

results = []
for case in json.load(sys.stdin):
    module = relayish.parse(case["program"])
    args = [np.linspace(-0.5, 1, size, dtype=np.float32) for size in case["sizes"]]
    outcome = []
    for run in (lambda: relayish.evaluate(module, "main", *args), lambda: relayish.compile(module, "main")(*args)):
        try:
            outcome.append(["value", float(run())])
        except relayish.RelayError as err:
            kind = "RelayRuntimeError" if isinstance(err, relayish.RelayRuntimeError) else type(err).__name__
            outcome.append(["error", kind, str(err)])
    results.append(outcome)
print(json.dumps(results))
"""


@st.composite
def cases(draw):
    """A program over ``x`` and ``z`` of one dimension written two ways (and maybe ``y`` of
    another), and argument sizes that satisfy the relations or, as often, do not."""
    left, right, size_of = draw(st.sampled_from(EQUAL_PAIRS))
    other = draw(st.none() | st.sampled_from(OTHERS))
    params = [f"%x: Tensor(FloatType(32), Shape({left}))", f"%z: Tensor(FloatType(32), Shape({right}))"]
    body = "@sum(@tanh(%x) * 2.0 + @tanh(%z))"
    rules = [size_of, size_of]
    if other is not None:
        params.append(f"%y: Tensor(FloatType(32), Shape({other[0]}))")
        body += " + @sum(%y)"
        rules.append(other[1])
    if draw(st.booleans()):
        n = draw(st.integers(0, LARGEST_N))
        sizes = [rule(n) for rule in rules]
    else:
        sizes = draw(st.lists(st.integers(0, 80), min_size=len(rules), max_size=len(rules)))
    program = f"def @main[n: Dim]({', '.join(params)}) {{ {body} }}"
    fits = any(all(rule(n) == s for rule, s in zip(rules, sizes)) for n in range(4 * 80 + 2))
    return {"program": program, "sizes": sizes, "fits": fits}


def expected(sizes: list[int]) -> float:
    x, z, *y = (np.linspace(-0.5, 1, s, dtype=np.float32).astype(np.float64) for s in sizes)
    return float(np.sum(np.tanh(x) * 2 + np.tanh(z)) + sum(np.sum(v) for v in y))


@settings(max_examples=4)
@given(st.lists(cases(), min_size=12, max_size=12))
def test_inconsistent_sizes_are_refused_by_both_and_consistent_ones_compute(batch):
    env = dict(os.environ, RELAYISH_TIERED="0")
    done = subprocess.run([sys.executable, "-c", CHILD], input=json.dumps(batch), capture_output=True, text=True,
                          env=env, timeout=600)
    assert done.returncode == 0, done.stderr[-3000:]
    for case, (interpreted, compiled) in zip(batch, json.loads(done.stdout)):
        for outcome in (interpreted, compiled):
            if case["fits"]:
                assert outcome[0] == "value", (case, outcome)
                assert outcome[1] == pytest.approx(expected(case["sizes"]), rel=1e-4, abs=1e-6 * sum(case["sizes"])), case
            else:
                assert outcome[:2] == ["error", "RelayRuntimeError"], (case, outcome)
                assert "argument %" in outcome[2], (case, outcome)  # refused at the boundary, naming the argument


def test_the_issue_program_is_refused_before_any_kernel_runs():
    """The reported program: the compiled one read 1,000 values from an array of 3."""
    import relayish

    module = relayish.parse("def @main[n: Dim](%x: Tensor(FloatType(32), Shape(n + 1)), "
                            "%z: Tensor(FloatType(32), Shape(n + 1))) { @tanh(%x) * 2.0 + @tanh(%z) }")
    x, z = np.ones(1000, np.float32), np.ones(3, np.float32)
    for run in (lambda: relayish.evaluate(module, "main", x, z), lambda: relayish.compile(module, "main")(x, z)):
        with pytest.raises(relayish.RelayRuntimeError, match=r"argument %z of @main: .* \(dimension 0 is 3, but "
                                                              r"n \+ 1 is 1000 in argument %x of @main\)"):
            run()


def test_a_fused_kernel_refuses_operands_of_other_sizes():
    """Defence in depth: a fused kernel called directly with operands its types do not allow
    raises instead of indexing past the shorter one."""
    import relayish
    from jit.kernels.fused import fused_kernel
    from jit.passes.fuse import fuse
    from tests.jit.passes.test_fuse import primitive_groups
    from typecheck import infer

    fused = fuse(infer(relayish.parse("def @main[n: Dim](%x: Tensor(FloatType(32), Shape(n)), "
                                      "%z: Tensor(FloatType(32), Shape(n))) { @tanh(%x) * 2.0 + %z }")))
    group, = primitive_groups(fused)
    kernel = fused_kernel(group)
    np.testing.assert_allclose(kernel(np.ones(5, np.float32), np.ones(5, np.float32)), np.tanh(1) * 2 + 1, rtol=1e-6)
    for x, z in [(np.ones(50_000, np.float32), np.ones(3, np.float32)), (np.ones(3, np.float32), np.ones(50_000, np.float32)),
                 (np.ones(4, np.float32), np.ones((4, 1), np.float32))]:
        with pytest.raises(ValueError, match="a fused kernel got an operand of shape"):
            kernel(x, z)
