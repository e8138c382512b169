"""The kernel cache on disk: a second process compiles nothing, a corrupted entry is
detected and rebuilt, and processes filling one cache at once do not corrupt it."""

from __future__ import annotations

import json
import os
import pathlib
import subprocess
import sys

import pytest

ROOT = pathlib.Path(__file__).resolve().parents[2]

SCRIPT = r"""
import json, sys
import numpy as np
import relayish
from jit.kernels.registry import compile_stats

mod = relayish.parse('''
def @main(%x: Tensor(FloatType(32), Shape(4, 3)), %w: Tensor(FloatType(32), Shape(2, 3))) -> Tensor(FloatType(32), Shape()) {
  @sum(@tanh(@dense(%x, %w)) * 2.0)
}
''')
x = np.arange(12, dtype=np.float32).reshape(4, 3) / 10
w = np.ones((2, 3), np.float32)
value = float(relayish.compile(mod, "main", opt_level=0)(x, w))  # a kernel per operator
fused = float(relayish.compile(mod, "main")(x, w))  # dense, then one fused kernel: tanh, mul, sum
expected = float(np.sum(np.tanh(x.astype(np.float64) @ w.T.astype(np.float64)) * 2))
print(json.dumps({"value": value, "fused": fused, "expected": expected, **compile_stats()}))
"""


def run(cache: pathlib.Path, count: int = 1) -> list[dict]:
    env = {**os.environ, "RELAYISH_CACHE_DIR": str(cache),
           "PYTHONPATH": os.pathsep.join([str(ROOT), os.environ.get("PYTHONPATH", "")])}
    procs = [subprocess.Popen([sys.executable, "-c", SCRIPT], stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                              text=True, env=env) for _ in range(count)]
    results = []
    for proc in procs:
        out, err = proc.communicate(timeout=600)
        assert proc.returncode == 0, err[-3000:]
        result = json.loads(out.strip().splitlines()[-1])
        assert result["value"] == pytest.approx(result["expected"], rel=1e-5)
        assert result["fused"] == pytest.approx(result["expected"], rel=1e-5)
        results.append(result)
    return results


def test_a_warm_cache_compiles_nothing_and_a_corrupted_entry_is_rebuilt(tmp_path):
    cache = tmp_path / "cache"
    cold = run(cache)[0]
    written = len(list((cache / "kernels").glob("k_*.py")))
    helpers = len(list((cache / "kernels").glob("h_*.py")))  # modules of helpers kernels share (registry.shared)
    assert helpers >= 2  # dense's BLAS call, sum's reduction
    assert cold["kernels_generated"] == written + helpers and written >= 4  # dense, tanh, sum, fused, ...
    assert cold["compiled"] >= written + helpers
    assert len(list((cache / "kernels").glob("k_fused_*.py"))) == 1
    warm = run(cache)[0]
    assert warm["kernels_generated"] == 0 and warm["compiled"] == 0 and warm["cache_hits"] >= written
    files = sorted((cache / "kernels").glob("k_tanh_*.py"))
    assert len(files) == 1
    files[0].write_text("this is not the kernel")  # corrupted: detected by content, rewritten
    rebuilt = run(cache)[0]
    assert rebuilt["kernels_generated"] == 1
    for index in (cache / "kernels" / "__pycache__").glob("*.nbi"):
        index.write_bytes(b"garbage")  # Numba's own index: Numba recompiles and rewrites it
    assert run(cache)[0]["kernels_generated"] == 0
    assert run(cache)[0]["compiled"] == 0


def test_processes_filling_one_cache_at_once(tmp_path):
    cache = tmp_path / "shared"
    results = run(cache, count=3)
    assert all(r["kernels_generated"] <= len(list((cache / "kernels").glob("[kh]_*.py"))) for r in results)
    assert run(cache)[0]["compiled"] == 0
    leftovers = [p.name for p in (cache / "kernels").iterdir() if p.name.startswith(".tmp_")]
    assert leftovers == []
