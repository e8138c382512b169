"""The CUDA target's tests (tests/cuda) run in a process of their own: Numba's CUDA simulator
must be chosen before numba is imported, and this process has imported it. Under the simulator
they run on every machine; on a real GPU only where one is present (skipped otherwise)."""

from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

import relayish

ROOT = Path(__file__).resolve().parents[2]


def run_cuda_tests(simulate: bool) -> str:
    env = {**os.environ, "RELAYISH_CUDA_PROCESS": "1"}
    env.pop("NUMBA_ENABLE_CUDASIM", None)
    if simulate:
        env["NUMBA_ENABLE_CUDASIM"] = "1"
    proc = subprocess.run([sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", "tests/cuda"],
                          cwd=ROOT, env=env, capture_output=True, text=True, timeout=1200)
    output = proc.stdout[-8000:] + proc.stderr[-4000:]
    assert proc.returncode == 0, output
    assert re.search(r"\d+ passed", proc.stdout) and " failed" not in proc.stdout, output
    return proc.stdout


def gpu_present() -> bool:
    env = {k: v for k, v in os.environ.items() if k != "NUMBA_ENABLE_CUDASIM"}
    probe = subprocess.run([sys.executable, "-c", "from numba import cuda; print(cuda.is_available())"],
                           env=env, capture_output=True, text=True, timeout=300)
    return probe.stdout.strip() == "True"


def test_cuda_kernels_and_programs_under_the_simulator() -> None:
    run_cuda_tests(simulate=True)


def test_cuda_kernels_and_programs_on_a_real_gpu() -> None:
    if not gpu_present():
        pytest.skip("no CUDA GPU here (the simulator test covers the CUDA target)")
    run_cuda_tests(simulate=False)


def test_the_cuda_target_without_a_gpu_or_simulator_says_what_to_do() -> None:
    if os.environ.get("NUMBA_ENABLE_CUDASIM") or gpu_present():
        pytest.skip("a GPU or the simulator is available here")
    mod = relayish.parse("def @main(%x: Tensor(FloatType(32), Shape(2))) { @tanh(%x) }")
    with pytest.raises(RuntimeError, match="NUMBA_ENABLE_CUDASIM=1"):
        relayish.compile(mod, "main", target="cuda")(np.ones(2, np.float32))


def test_an_unknown_target_is_refused() -> None:
    mod = relayish.parse("def @main(%x: Tensor(FloatType(32), Shape(2))) { @tanh(%x) }")
    with pytest.raises(ValueError, match="unknown target 'tpu'"):
        relayish.compile(mod, "main", target="tpu")
