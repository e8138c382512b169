"""relayish-jit beside the user's NumPy: whether NumPy products in the same process, or another process
on a core, slow the JIT down (its float products call NumPy's own BLAS, one thread pool: jit/kernels/blas.py).

Run:  python3 bench/threads.py [--rows W2.vg,W3.vg] [--rounds 3] [--quick]
      RELAYISH_BLAS=numba python3 bench/threads.py   # the kernels on Numba's gemm (SciPy's BLAS), as before

For each row (bench/workloads.py's inputs, program, float64 reference and output check), relayish-jit's
median time per call in four settings, each in a fresh process with the default thread settings
(OPENBLAS_NUM_THREADS and the like are removed from its environment):

* (a) the process alone;
* (b) alternating, call by call, one NumPy float32 matrix product of the workload's sizes with one relayish
  call, only the relayish calls timed (W2: X @ W1, (64, 784) @ (784, 256); W3: (16, 800) @ (800, 500),
  its first dense layer);
* (c) as (a) and (d) as (b), while a second process keeps one core busy (a pure-Python loop, started before
  the measured process and killed after it).

Timing: workloads.time_calls's protocol (the first call alone, warm-up, ``number`` calls per repeat, 9
repeats), each repeat's time being the sum of its relayish calls alone; a process reports the median per
call. The settings run in turn, (a) to (d), ``--rounds`` times (3), and a cell shows the median over the
rounds: on a shared machine a neighbour's burst then spoils one round of every setting rather than all
of one. The table also shows (b)/(a), (d)/(c) and the BLAS the kernels call (``blas_in_use()``); a cell
whose first or last outputs fail workloads.check_outputs in some round shows FAIL. One temporary kernel
cache serves every process (the first one fills it). ``--quick``: one round of workloads.QUICK's short
protocol (smoke runs; not these figures).
"""

from __future__ import annotations

import argparse
import dataclasses
import json
import os
import platform
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

import numpy as np

BENCH = Path(__file__).resolve().parent
REPO = BENCH.parent
for _path in (REPO, BENCH):
    if str(_path) not in sys.path:
        sys.path.insert(0, str(_path))

import workloads  # noqa: E402

ROWS = ("W2.vg", "W3.vg")
SETTINGS = {"a": (False, False), "b": (True, False), "c": (False, True), "d": (True, True)}  # (alternate, busy)
THREAD_VARIABLES = ("OPENBLAS_NUM_THREADS", "GOTO_NUM_THREADS", "OMP_NUM_THREADS", "MKL_NUM_THREADS",
                    "BLIS_NUM_THREADS", "VECLIB_MAXIMUM_THREADS", "NUMEXPR_NUM_THREADS", "NUMBA_NUM_THREADS",
                    "RELAYISH_THREADS")


def numpy_operands(row: str, inp: dict) -> tuple[np.ndarray, np.ndarray]:
    """The operands of the NumPy product of setting (b): the workload's first dense layer."""
    if row == "W2.vg":
        return inp["X"], inp["W1"]
    if row == "W3.vg":
        return workloads.normal(np.random.default_rng(0), (16, 800)), inp["W3"]
    raise ValueError(f"no NumPy product for {row} (rows: {', '.join(ROWS)})")


def measure(row: str, alternate: bool, quick: bool) -> dict[str, Any]:
    """relayish-jit's median seconds per call of ``row`` in this process, one NumPy product before each call
    when ``alternate``; the outputs' check and the BLAS in use."""
    from jit.kernels.blas import blas_in_use

    inp = workloads.inputs(row)
    refs = workloads.reference(row)
    prep = workloads.relayish_jit_impl(row, inp)
    a, b = numpy_operands(row, inp)
    spent: list[float] = []

    def call() -> Any:
        if alternate:
            np.matmul(a, b)
        start = time.perf_counter()
        out = prep.call()
        spent.append(time.perf_counter() - start)
        return out

    protocol = workloads.QUICK if quick else workloads.DEFAULT
    figures = workloads.time_calls(dataclasses.replace(prep, call=call), protocol)
    number, repeats = figures["number"], figures["repeats"]
    timed = spent[len(spent) - number * repeats:]
    per_call = [sum(timed[i * number:(i + 1) * number]) / number for i in range(repeats)]
    checks = [workloads.check_outputs(row, prep.outputs(figures[k]), refs) for k in ("first_out", "last_out")]
    return {"median_s": statistics.median(per_call), "ok": all(c["ok"] for c in checks),
            "err": max(c["err"] for c in checks), "blas": blas_in_use()}


def run_setting(row: str, setting: str, quick: bool, cache: str) -> dict[str, Any]:
    """``measure`` in a fresh process of the default thread settings, beside a busy process for (c) and (d)."""
    alternate, busy = SETTINGS[setting]
    env = {k: v for k, v in os.environ.items() if k not in THREAD_VARIABLES}
    env["RELAYISH_CACHE_DIR"] = cache
    command = [sys.executable, str(Path(__file__).resolve()), "--worker", row] + ["--alternate"] * alternate
    command += ["--quick"] * quick
    spinner = subprocess.Popen([sys.executable, "-c", "while True: pass"], env=env) if busy else None
    try:
        proc = subprocess.run(command, capture_output=True, text=True, env=env, timeout=1200, check=False)
    finally:
        if spinner is not None:
            spinner.kill()
            spinner.wait()
    if proc.returncode != 0:
        return {"failed": workloads.tail(proc.stderr)}
    return json.loads(proc.stdout.strip().splitlines()[-1])


def combined(rounds: list[dict[str, Any]]) -> dict[str, Any]:
    """One setting's rounds as one result: the median time, every check, the first failure."""
    failed = [r["failed"] for r in rounds if "failed" in r]
    if failed:
        return {"failed": failed[0]}
    return {"median_s": statistics.median(r["median_s"] for r in rounds), "ok": all(r["ok"] for r in rounds),
            "err": max(r["err"] for r in rounds), "blas": rounds[0]["blas"]}


def cell(result: dict[str, Any]) -> str:
    if "failed" in result:
        return "ERROR"
    text = workloads.fmt_time(result["median_s"])
    return text if result["ok"] else f"{text} FAIL (err {result['err']:.1e})"


def ratio(top: dict[str, Any], bottom: dict[str, Any]) -> str:
    return "-" if "failed" in top or "failed" in bottom else f"{top['median_s'] / bottom['median_s']:.2f}"


def table(results: dict[str, dict[str, dict[str, Any]]]) -> str:
    lines = ["| row | (a) alone | (b) with NumPy | (b)/(a) | (c) busy core | (d) both | (d)/(c) | BLAS |",
             "|---|---|---|---|---|---|---|---|"]
    for row, r in results.items():
        blas = next((x["blas"] for x in r.values() if "blas" in x), "?")
        lines.append(f"| {row} | {cell(r['a'])} | {cell(r['b'])} | {ratio(r['b'], r['a'])} | {cell(r['c'])} | "
                     f"{cell(r['d'])} | {ratio(r['d'], r['c'])} | {blas} |")
    failures = [f"{row} ({s}): {x['failed']}" for row, r in results.items() for s, x in r.items() if "failed" in x]
    return "\n".join(lines + failures)


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rows", default=",".join(ROWS), help=f"comma-separated, among {', '.join(ROWS)}")
    parser.add_argument("--rounds", type=int, default=3, help="runs of every setting; cells show their median")
    parser.add_argument("--quick", action="store_true", help="one round of a short timing protocol (smoke runs)")
    parser.add_argument("--worker", help=argparse.SUPPRESS)
    parser.add_argument("--alternate", action="store_true", help=argparse.SUPPRESS)
    options = parser.parse_args(argv)
    if options.worker:
        print(json.dumps(measure(options.worker, options.alternate, options.quick)))
        return
    rounds = 1 if options.quick else options.rounds
    print(f"python {platform.python_version()}, numpy {np.__version__}, {os.cpu_count()} CPUs, "
          f"RELAYISH_BLAS={os.environ.get('RELAYISH_BLAS', '(unset)')}, {rounds} rounds", flush=True)
    results: dict[str, dict[str, dict[str, Any]]] = {}
    with tempfile.TemporaryDirectory(prefix="relayish-threads-") as cache:
        for row in options.rows.split(","):
            found: dict[str, list[dict[str, Any]]] = {setting: [] for setting in SETTINGS}
            for k in range(rounds):
                for setting in SETTINGS:
                    found[setting].append(run_setting(row, setting, options.quick, cache))
                    print(f"  {row} ({setting}) round {k + 1}: {cell(found[setting][-1])}", file=sys.stderr, flush=True)
            results[row] = {setting: combined(runs) for setting, runs in found.items()}
    print(table(results))


if __name__ == "__main__":
    main()
