"""The evaluator tier (jit/tiers.py): a straight-line program's first call runs on the evaluator,
bit for bit its result, without compiling or loading a kernel; the second call compiles and
agrees with it to rounding, and calls repeat exactly; loops and ``RELAYISH_TIERED=0`` compile
at once; a failing first call still raises a RelayRuntimeError.
Each case runs in a fresh process (no kernel loaded yet) with an empty cache."""

from __future__ import annotations

import json
import os
import pathlib
import subprocess
import sys

ROOT = pathlib.Path(__file__).resolve().parents[2]

SCRIPT = r'''
import json, os, sys
import numpy as np
import relayish
from relayish import relay, Tensor, Float, Dim
from jit.kernels.registry import compile_stats

def loaded():
    stats = compile_stats()
    return stats["compiled"] + stats["cache_hits"]

report = {}
mod = relayish.parse("""
def @main(%x: Tensor(FloatType(32), Shape(6, 5)), %w: Tensor(FloatType(32), Shape(5, 4))) -> Tensor(FloatType(32), Shape()) {
  @sum(@tanh(@matmul(%x, %w)) * 3.0) / 7.0
}
def @loop(%x: Tensor(FloatType(32), Shape(3)), %n: Tensor(IntType(32), Shape())) -> Tensor(FloatType(32), Shape(3)) {
  let %go = fn (%i: Tensor(IntType(32), Shape()), %acc: Tensor(FloatType(32), Shape(3))) -> Tensor(FloatType(32), Shape(3)) {
    if %i < %n then %go(%i + 1, @exp(%acc) * 0.5) else %acc
  } in %go(0, %x)
}
def @divide(%a: Tensor(IntType(32), Shape(3)), %b: Tensor(IntType(32), Shape(3))) -> Tensor(FloatType(32), Shape(3)) {
  @exp(@cast(%a, dtype="float32")) * @cast(%a / %b, dtype="float32")
}
""")
rng = np.random.default_rng(0)
x = rng.standard_normal((6, 5)).astype(np.float32)
w = rng.standard_normal((5, 4)).astype(np.float32)
oracle = relayish.evaluate(mod, "main", x, w)

f = relayish.compile(mod, "main")
first = f(x, w)
report["first"] = dict(bitwise=first.tobytes() == oracle.tobytes(), loaded=loaded(), scipy="scipy.special" in sys.modules)
second = f(x, w)
third = f(x, w)
report["second"] = dict(close=bool(np.allclose(second, oracle, rtol=1e-5, atol=1e-6)), loaded=loaded(),
                        repeats=second.tobytes() == third.tobytes())
untiered = relayish.compile(mod, "main", tiered=False)(x, w)  # the argument overrides RELAYISH_TIERED
report["untiered"] = dict(compiled=untiered.tobytes() == second.tobytes(), evaluator=untiered.tobytes() == oracle.tobytes())
before = loaded()
h = relayish.compile(mod, "main")  # a function of its own: its first call is the evaluator's too
report["again"] = dict(first=h(x, w).tobytes() == oracle.tobytes(), second=h(x, w).tobytes() == second.tobytes(),
                       loaded=loaded() - before)

before = loaded()
relayish.compile(mod, "loop")(np.ones(3, np.float32), np.int32(2))
report["loop"] = dict(loaded=loaded() - before)

g = relayish.compile(mod, "divide")
a, b = np.array([1, 2, 3], np.int32), np.array([1, 0, 1], np.int32)
errors = []
for _ in range(2):
    try:
        g(a, b)
    except relayish.RelayRuntimeError as err:
        errors.append(type(err).__name__)
report["errors"] = errors

@relay
def scaled(x: Tensor[Float, (Dim("N"), 5)], w: Tensor[Float, (5, 4)]) -> Float:
    return relay.sum(relay.sigmoid(relay.matmul(x, w)) * 3.0) / 7.0  # a kernel not loaded yet: sigmoid

expected = relayish.evaluate(scaled.ir, scaled.global_name, x, w)
before = loaded()
report["decorated"] = dict(bitwise=scaled(x, w).tobytes() == expected.tobytes(), loaded=loaded() - before)
scaled(x, w)
report["decorated"]["then"] = loaded() - before
print(json.dumps(report))
'''


def run(tmp_path: pathlib.Path, tiered: str) -> dict:
    script = tmp_path / "tiers_case.py"
    script.write_text(SCRIPT)
    env = {**os.environ, "RELAYISH_TIERED": tiered, "RELAYISH_BACKEND": "jit", "RELAYISH_COMPILE_AHEAD": "0",
           "RELAYISH_CACHE_DIR": str(tmp_path / "cache"),
           "PYTHONPATH": os.pathsep.join(p for p in (str(ROOT), os.environ.get("PYTHONPATH")) if p)}
    proc = subprocess.run([sys.executable, str(script)], capture_output=True, text=True, cwd=ROOT, env=env,
                          timeout=900)
    assert proc.returncode == 0, proc.stderr[-3000:]
    return json.loads(proc.stdout.strip().splitlines()[-1])


def test_the_first_call_runs_on_the_evaluator_and_the_second_compiles(tmp_path):
    report = run(tmp_path, "1")
    # the evaluator's result; no kernel touched, nor scipy.special imported (a third of a fresh process's first call)
    assert report["first"] == {"bitwise": True, "loaded": 0, "scipy": False}
    assert report["second"]["close"] and report["second"]["repeats"] and report["second"]["loaded"] > 0
    assert report["untiered"] == {"compiled": True, "evaluator": False}
    assert report["again"] == {"first": True, "second": True, "loaded": 0}  # the kernels were loaded already
    assert report["loop"]["loaded"] > 0  # a loop compiles for its first call
    assert report["errors"] == ["RelayRuntimeError", "RelayRuntimeError"]  # evaluator, then kernels
    assert report["decorated"]["bitwise"] and report["decorated"]["loaded"] == 0 < report["decorated"]["then"]


def test_tiered_off_compiles_the_first_call(tmp_path):
    report = run(tmp_path, "0")
    assert report["first"]["loaded"] > 0 and not report["first"]["bitwise"]
