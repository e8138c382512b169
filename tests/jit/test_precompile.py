"""Compiling ahead (jit/precompile.py): a second process compiles a program's kernels into the
disk cache while the first call runs; the calling process then loads them instead of compiling,
with the same results bit for bit; a plan lists the kernels not cached yet, last first, and only
where enough of them are; planted or changed cache files are never imported; the setting and a
single core and a busy machine turn it off. Programs compile in processes of their own, each with an empty cache."""

from __future__ import annotations

import hashlib
import json
import os
import pathlib
import signal
import subprocess
import sys

from jit import precompile, threads

ROOT = pathlib.Path(__file__).resolve().parents[2]

# opt_level 0: a kernel per operator, enough of them for the second process to start (cheap
# elementwise ones; a sum, whose engine the second process imports from a helper module; one
# product kernel called with a transposed view second, then first: three layouts to predict)
CALL = r"""
import json, os
import numpy as np
os.sched_getaffinity = lambda pid: {0, 1}  # two free cores, wherever the test runs
import relayish
from jit import precompile, threads
threads.busy_elsewhere = lambda: False
from jit.kernels.registry import compile_stats

mod = relayish.parse('''
def @main(%x: Tensor(FloatType(32), Shape(8, 5))) -> Tensor(FloatType(32), Shape()) {
  let %t = @transpose(%x) in
  @sum(@relu(@exp(@tanh(@sigmoid(@neg(@abs(%x))))))) + @sum(@matmul(%x, %t)) + @sum(@matmul(%t, %x))
}''')
f = relayish.compile(mod, "main", opt_level=0)
f.program()  # lowering: starts the second process where it pays
ahead = [proc.wait(timeout=600) for proc in precompile._RUNNING]
before = compile_stats()["compiled"]
value = f(np.random.default_rng(0).standard_normal((8, 5)).astype(np.float32))
print(json.dumps({"ahead": ahead, "compiled": compile_stats()["compiled"] - before, "bits": value.tobytes().hex()}))
"""

PLAN = r"""
import json
import numpy as np
import relayish
from runtime.prepare import prepared
from jit import precompile
from jit.lower import Lowering
from jit.passes import optimize
from typecheck import expr_types

mod = relayish.parse('''
def @main(%x: Tensor(FloatType(32), Shape(4)), %n: Tensor(IntType(32), Shape(4))) -> Tensor(FloatType(32), Shape(4)) {
  @relu(@exp(@tanh(@sigmoid(@neg(@abs(%x)))))) + @cast(%n, dtype="float32")
}''')
optimized = optimize(prepared(mod), "main", 0)
lowering = Lowering(optimized, expr_types(optimized))
lowering.program(["main"], {})
calls = lowering.kernel_calls
work = precompile.plan(calls)
few = precompile.plan(calls[:precompile.MIN_KERNELS - 1])
calls[0][0](np.ones(4, np.float32))  # abs compiled (and cached) here: no longer planned
print(json.dumps({"calls": len(calls), "work": work, "few": few, "after": len(precompile.plan(calls)["compile"])}))
"""

# the evaluator tier: the first call runs on the evaluator without lowering, so the second
# process gets the optimized program and lowers it itself
TIERED = CALL.replace("""f.program()  # lowering: starts the second process where it pays
ahead = [proc.wait(timeout=600) for proc in precompile._RUNNING]
before = compile_stats()["compiled"]
value = f(np.random.default_rng(0).standard_normal((8, 5)).astype(np.float32))""", """x = np.random.default_rng(0).standard_normal((8, 5)).astype(np.float32)
assert f._program is None
f(x)  # on the evaluator: nothing lowered, the second process lowers the program
assert f._program is None
ahead = [proc.wait(timeout=600) for proc in precompile._RUNNING]
before = compile_stats()["compiled"]
value = f(x)""")

# a branch the first call does not take: the second process is still compiling its kernels when
# the call returns, and is stopped then
BRANCH = CALL.split("mod = ")[0] + r"""
mod = relayish.parse('''
def @main(%x: Tensor(FloatType(32), Shape(8)), %c: Tensor(BoolType, Shape())) -> Tensor(FloatType(32), Shape(8)) {
  if %c then @relu(@exp(@tanh(@sigmoid(@neg(@abs(@sin(@cos(%x)))))))) else %x
}''')
f = relayish.compile(mod, "main", opt_level=0)
f.program()
proc = precompile._RUNNING[0]
f(np.ones(8, np.float32), np.bool_(False))
print(json.dumps({"running": proc.poll() is None, "code": proc.returncode, "left": len(precompile._RUNNING)}))
"""


def run(cache: pathlib.Path, ahead: bool, script: str = CALL, tiered: bool = False) -> dict:
    env = {**os.environ, "RELAYISH_CACHE_DIR": str(cache), "RELAYISH_COMPILE_AHEAD": "1" if ahead else "0",
           "RELAYISH_TIERED": "1" if tiered else "0",
           "PYTHONPATH": os.pathsep.join([str(ROOT), os.environ.get("PYTHONPATH", "")])}
    proc = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, env=env, timeout=1200)
    assert proc.returncode == 0, proc.stderr[-3000:]
    return json.loads(proc.stdout.strip().splitlines()[-1])


def test_kernels_compiled_ahead_are_loaded_not_compiled_and_give_the_same_bits(tmp_path):
    ahead = run(tmp_path / "ahead", ahead=True)
    alone = run(tmp_path / "alone", ahead=False)
    assert ahead["ahead"] == [0]  # the second process ran and exited cleanly
    assert ahead["compiled"] == 0, ahead  # every kernel came from the cache the second process filled
    assert alone["ahead"] == [] and alone["compiled"] >= precompile.MIN_KERNELS
    assert ahead["bits"] == alone["bits"]


def test_the_second_process_is_stopped_when_the_call_that_lowered_returns(tmp_path):
    result = run(tmp_path, ahead=True, script=BRANCH)
    assert result == {"running": False, "code": -signal.SIGTERM, "left": 0}


def test_a_program_not_lowered_yet_is_lowered_by_the_second_process(tmp_path):
    tiered = run(tmp_path / "tiered", ahead=True, script=TIERED, tiered=True)
    alone = run(tmp_path / "alone", ahead=False)
    assert TIERED != CALL
    assert tiered["ahead"] == [0] and tiered["compiled"] == 0, tiered
    assert tiered["bits"] == alone["bits"]


def test_a_plan_lists_the_kernels_not_cached_last_first_and_only_when_enough(tmp_path):
    result = run(tmp_path, ahead=True, script=PLAN)
    work = result["work"]
    assert result["calls"] == 8
    names = [pathlib.Path(e["file"]).name.split("_")[1] for e in work["compile"]]
    assert names == ["add", "cast", "relu", "exp", "tanh", "sigmoid", "neg", "abs"]
    assert work["compile"][1]["args"] == [["int32", 1, "C"]]
    assert all(e["file"] in work["modules"] for e in work["compile"])
    assert result["few"] is None
    assert result["after"] == 7


def test_the_setting_a_single_core_and_a_busy_machine_turn_it_off(monkeypatch):
    busy = [False]
    monkeypatch.setattr(threads, "busy_elsewhere", lambda: busy[0])
    monkeypatch.setattr(os, "sched_getaffinity", lambda pid: {0, 1}, raising=False)
    monkeypatch.setenv("RELAYISH_COMPILE_AHEAD", "1")
    assert precompile.enabled()
    monkeypatch.setenv("RELAYISH_COMPILE_AHEAD", "0")
    assert not precompile.enabled()
    monkeypatch.setenv("RELAYISH_COMPILE_AHEAD", "1")
    monkeypatch.setattr(os, "sched_getaffinity", lambda pid: {0}, raising=False)
    assert not precompile.enabled()
    monkeypatch.setattr(os, "sched_getaffinity", lambda pid: {0, 1}, raising=False)
    busy[0] = True
    assert not precompile.enabled()


def test_a_cache_file_whose_content_does_not_match_its_name_stops_the_second_process(tmp_path):
    """A planted or changed module is never imported: the process compiles nothing instead."""
    source = "import numba\n\n@numba.njit(cache=True)\ndef kernel(x):\n    return x + 1\n"
    digest = hashlib.sha256(source.encode()).hexdigest()[:24]
    good = tmp_path / f"k_add_{digest}.py"
    good.write_text(source)
    planted = tmp_path / f"k_evil_{digest}.py"
    planted.write_text(source + "raise SystemExit('ran code we did not write')\n")

    def work(path: pathlib.Path) -> dict:
        return {"modules": [str(path)], "compile": [{"file": str(path), "function": "kernel", "args": [["float32", 1, "C"]]}]}

    assert precompile.run(work(planted)) == 0
    assert precompile.run(work(good)) == 1
