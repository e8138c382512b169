"""The benchmark harness (bench/workloads.py, bench/programs.py): every implementation of
every workload matches WORKLOADS.md's float64 references within 1e-4 (outputs checked once,
no timing, except one quick timed cell per implementation), the references reproduce
WORKLOADS.md's table, the timing protocol, the correctness check, the table's format, W7's
fresh-process programs and the command line in --quick mode.

relayish-jit cells run in worker processes of the harness (killed past a memory limit, so a
runaway compiled program cannot take the machine's memory) and compile into a kernel cache
directory of the test session's own (see ``kernel_cache``), never the user's cache.
"""

from __future__ import annotations

import importlib.util
import json
import math
import os
import subprocess
import sys
import time
from pathlib import Path
from types import SimpleNamespace

import numpy as np
import pytest

REPO = Path(__file__).resolve().parents[2]


def _load_workloads():
    name = "relayish_bench_workloads"
    if name not in sys.modules:
        spec = importlib.util.spec_from_file_location(name, REPO / "bench" / "workloads.py")
        module = importlib.util.module_from_spec(spec)
        sys.modules[name] = module
        spec.loader.exec_module(module)
    return sys.modules[name]


W = _load_workloads()

CORE_IMPLS = ("numpy", "relayish-interp", "relayish-jit", "numba")
OPTIONAL_IMPLS = ("jax", "jax-scan", "torch")
CELLS = [(impl, row) for impl in CORE_IMPLS + OPTIONAL_IMPLS for row in W.TIMED_ROWS if W.supported(impl, row)]


@pytest.fixture(scope="module", autouse=True)
def kernel_cache(tmp_path_factory):
    """A kernel cache directory for this test session only (relayish reads the variable at
    use): the one tests/conftest.py made for the session (so kernels compiled elsewhere are
    found here), else a fresh one."""
    old = os.environ.get("RELAYISH_CACHE_DIR")
    if old and Path(old).name.startswith("relayish-test-cache-"):
        path = Path(old)
    else:
        path = tmp_path_factory.mktemp("bench-kernel-cache")
    os.environ["RELAYISH_CACHE_DIR"] = str(path)
    yield path
    if old is None:
        os.environ.pop("RELAYISH_CACHE_DIR", None)
    else:
        os.environ["RELAYISH_CACHE_DIR"] = old


def need(impl: str) -> None:
    if not W.available(impl):
        pytest.skip(f"{W.OPTIONAL[impl]} is not installed")


def describe(cell: dict) -> str:
    return f"{cell['impl']} {cell['row']}: {cell.get('status')} {cell.get('message', '')}\n{cell.get('traceback', '')}"


# -- references and inputs ----------------------------------------------------------------


@pytest.mark.parametrize("row", W.TIMED_ROWS)
def test_references_reproduce_workloads_md(row):
    assert W.spec_mismatches(row) == []


def test_inputs_are_float32_in_the_stated_shapes():
    shapes = {"W1": {"x": (1_000_000,), "w": (1_000_000,), "b": (1_000_000,)},
              "W2": {"X": (64, 784), "Y": (64, 10), "W1": (784, 256), "b1": (256,), "W2": (256, 10), "b2": (10,)},
              "W4": {"xs": (50, 32, 64), "h0": (32, 128), "Wx": (64, 128), "Wh": (128, 128), "b": (128,)},
              "W5": {"x": (100_000,), "v": (100_000,)}}
    for workload, expected in shapes.items():
        got = W.inputs(workload + ".x")
        assert {k: v.shape for k, v in got.items()} == expected
        assert all(v.dtype == np.float32 for v in got.values())
    w3 = W.inputs("W3.vg")
    assert [w3[k].shape for k in ("X", "K1", "c1", "K2", "c2", "W3", "b3", "W4", "b4")] == [
        (16, 1, 28, 28), (20, 1, 5, 5), (20,), (50, 20, 5, 5), (50,), (800, 500), (500,), (500, 10), (10,)]
    assert np.array_equal(w3["Y"].sum(axis=1), np.ones(16, np.float32))


# -- every implementation's outputs, once ----------------------------------------------------


ISOLATED = ("relayish-jit",)  # run in a worker process, killed past MEMORY_GB: a runaway cannot take the machine
MEMORY_GB = 4.0


@pytest.fixture(scope="module")
def isolated_cells(kernel_cache):
    """The outputs check of every row of the ISOLATED implementations, computed once, in one
    worker process per implementation (so kernels compile once), a new one after a failure."""
    cells = {}
    for impl in ISOLATED:
        rows = [row for i, row in CELLS if i == impl]
        batch = W.run_worker_batch(impl, rows, quick=True, timeout=600, jit_cache=str(kernel_cache),
                                   memory_gb=MEMORY_GB, timing=False)
        cells.update({(impl, row): cell for row, cell in batch.items()})
    return cells


@pytest.mark.parametrize(("impl", "row"), CELLS, ids=[f"{i}-{r}" for i, r in CELLS])
def test_implementation_matches_reference(impl, row, request):
    need(impl)
    if impl in ISOLATED:
        cell = request.getfixturevalue("isolated_cells")[(impl, row)]
    else:
        cell = W.run_cell(impl, row, timing=False)
    assert cell["status"] == "ok", describe(cell)
    assert cell["err"] <= W.TOLERANCE
    assert set(cell["errs"]) == set(W.OUTPUTS[row])


@pytest.mark.parametrize("impl", CORE_IMPLS + OPTIONAL_IMPLS)
def test_quick_timed_cell(impl, kernel_cache):
    """The timing path end to end, on a cheap row, with both outputs checked."""
    need(impl)
    row = "W6.loop" if impl == "numba" else "W4.vg" if impl == "jax-scan" else "W5.hvp"
    if impl in ISOLATED:
        cell = W.run_worker_process(impl, row, True, timeout=600, jit_cache=str(kernel_cache), memory_gb=MEMORY_GB)
    else:
        cell = W.run_cell(impl, row, quick=True)
    assert cell["status"] == "ok", describe(cell)
    assert cell["repeats"] == W.QUICK.repeats == len(cell["times_s"])
    assert 0 < cell["min_s"] <= cell["median_s"]
    assert cell["first_s"] > 0 and cell["number"] >= 1


# -- the timing protocol and the check --------------------------------------------------------


def test_protocol_first_call_warmup_number_repeats(monkeypatch):
    """On a clock of our own, where a call takes exactly 2 us (a busy machine cannot move it)."""
    calls = {"first": 0, "call": 0}
    clock = [0.0]
    monkeypatch.setattr(W, "time", SimpleNamespace(perf_counter=lambda: clock[0]))

    def first():
        calls["first"] += 1
        clock[0] += 1e-3
        return np.float32(1)

    def call():
        calls["call"] += 1
        clock[0] += 2e-6
        return np.float32(1)

    figures = W.time_calls(W.Prepared(first=first, call=call, outputs=W.flatten), W.DEFAULT)
    assert figures["first_s"] == pytest.approx(1e-3) and figures["median_s"] == pytest.approx(2e-6)
    assert calls["first"] == 1
    assert figures["repeats"] == 9 == len(figures["times_s"])
    assert figures["median_s"] == sorted(figures["times_s"])[4] and figures["min_s"] == min(figures["times_s"])
    # a cheap function: >= 30 warm-up calls, and repeats of about 50 ms or more
    assert figures["warmup_calls"] >= 30
    assert figures["number"] * figures["median_s"] >= W.DEFAULT.repeat_min_s * (1 - 1e-9)
    assert calls["call"] == figures["warmup_calls"] + 9 * figures["number"]


def test_protocol_slow_function_runs_once_per_repeat():
    figures = W.time_calls(W.simple(lambda: time.sleep(0.012)), W.QUICK)
    assert figures["number"] == 1 and figures["repeats"] == 3
    assert figures["first_s"] >= 0.012 and figures["min_s"] >= 0.012


def test_check_outputs():
    refs = W.reference("W2.vg")
    outs = [r.astype(np.float32) for r in refs]
    assert W.check_outputs("W2.vg", outs, refs)["ok"]
    bad = list(outs)
    bad[2] = bad[2] * np.float32(1.001)
    verdict = W.check_outputs("W2.vg", bad, refs)
    assert not verdict["ok"] and verdict["errs"]["db1"] > W.TOLERANCE and "db1" in verdict["problem"]
    assert not W.check_outputs("W2.vg", [r for r in refs], refs)["ok"]  # float64 outputs are not float32
    assert W.check_outputs("W2.vg", [r for r in refs], refs, python_floats=True)["ok"]
    assert not W.check_outputs("W2.vg", outs[:4], refs)["ok"]
    assert not W.check_outputs("W2.vg", [outs[0], outs[1].T, *outs[2:]], refs)["ok"]
    nan = list(outs)
    nan[0] = np.float32("nan")
    assert not W.check_outputs("W2.vg", nan, refs)["ok"]


# -- the table ----------------------------------------------------------------------------------


def test_time_units():
    assert W.fmt_time(1.5) == "1.50 s"
    assert W.fmt_time(12.34) == "12.3 s"
    assert W.fmt_time(0.01234) == "12.3 ms"
    assert W.fmt_time(0.000123) == "123 µs"
    assert W.fmt_time(2.5e-6) == "2.50 µs"
    assert W.fmt_time(0.9999) == "1.00 s"
    assert W.fmt_time(None) == "—"


def test_table_format():
    ok = {"status": "ok", "median_s": 0.002, "min_s": 0.0019, "first_s": 0.5, "err": 1e-7}
    cells = {
        ("numpy", "W2.vg"): dict(ok, median_s=0.001, min_s=0.00095),
        ("relayish-interp", "W2.vg"): dict(ok, status="fail", err=0.25, message="dW1: err 2.50e-01"),
        ("relayish-jit", "W2.vg"): ok,
        ("numpy", "W6.fib"): dict(ok, median_s=2e-3, python_floats=True),
        ("relayish-interp", "W6.fib"): {"status": "error", "message": "NotImplementedError: operator | tanh"},
        ("relayish-jit", "W6.fib"): {"status": "timeout", "message": "took longer than 60 s"},
        ("numba", "W6.fib"): dict(ok, median_s=4e-5, min_s=3.9e-5),
        ("numba", "W2.vg"): {"status": "n/a"},
    }
    text = W.format_table(cells, ["W2.vg", "W6.fib"], ["numpy", "relayish-interp", "relayish-jit", "numba"])
    lines = text.splitlines()
    split = [[c.strip() for c in line.strip("|").split("|")] for line in lines[:4]]
    assert split[0] == ["workload", "numpy", "relayish-interp", "relayish-jit", "numba", "jit/best", "jit first call"]
    assert set(lines[1]) <= {"|", "-"} and len(lines[1]) == len(lines[0]) == len(lines[2]) == len(lines[3])
    assert split[2] == ["W2.vg", "1.00 ms (0.95) ✓", "2.00 ms (1.90) FAIL err=2.5e-01", "2.00 ms (1.90) ✓", "—",
                        "2.00× (numpy)", "500 ms"]
    assert split[3][0] == "W6.fib" and split[3][1] == "2.00 ms (1.90) † ✓"
    assert split[3][2].startswith("ERROR [1] NotImplementedError") and "|" not in split[3][2]
    assert split[3][3].startswith("TIMEOUT [2]") and split[3][4] == "40.0 µs (39.0) ✓"
    assert split[3][5] == "—" and split[3][6] == "—"  # no jit time, no ratio
    assert "[1] NotImplementedError: operator | tanh" in lines and "[2] took longer than 60 s" in lines
    assert any(line.startswith("†") for line in lines)


def test_only_selects_rows():
    assert W.select_rows(None) == list(W.ROWS)
    assert W.select_rows("W7,W1.vg") == ["W1.vg", "W7.cold", "W7.warm", "W7.import"]
    with pytest.raises(SystemExit):
        W.select_rows("W9")


# -- W7 and the command line --------------------------------------------------------------------


def test_w7_runs_cache_bytecode_as_python_does_by_default(monkeypatch, tmp_path):
    """The other frameworks load bytecode pip compiled; relayish's checkout gets its own cached
    by the untimed run even where the environment says not to write any."""
    monkeypatch.setenv("PYTHONDONTWRITEBYTECODE", "1")
    env = W.w7_environment(str(tmp_path))
    assert "PYTHONDONTWRITEBYTECODE" not in env and os.environ["PYTHONDONTWRITEBYTECODE"] == "1"
    assert env["RELAYISH_CACHE_DIR"] == env["TORCHINDUCTOR_CACHE_DIR"] == str(tmp_path)


@pytest.mark.parametrize("impl", ("numpy", "relayish-interp", "relayish-jit", "jax", "torch", "torch-compile"))
def test_w7_program_prints_the_w2_loss(impl, kernel_cache):
    need(impl)
    _, proc = W.run_w7_once(impl, "W7.cold", str(kernel_cache), timeout=600, memory_gb=MEMORY_GB)
    assert proc.returncode == 0, proc.stderr
    loss = float(proc.stdout.strip().splitlines()[-1])
    assert abs(loss - 2.490324587) <= 1e-4 * 2.490324587
    if W.supported(impl, "W7.import"):
        assert W.run_w7_once(impl, "W7.import", str(kernel_cache), timeout=300)[1].returncode == 0
    if impl == "torch-compile":
        assert "torch.compile(loss)" in W.w7_script(impl, "W7.cold")
        assert (Path(kernel_cache) / "fxgraph").is_dir(), "inductor's cache went where the run told it to"


def test_command_line_quick(tmp_path):
    out = tmp_path / "bench.json"
    proc = subprocess.run([sys.executable, str(REPO / "bench" / "workloads.py"), "--only", "W5.gradgrad,W7.import",
                           "--impl", "numpy,relayish-interp", "--quick", "--json", str(out)],
                          cwd=REPO, capture_output=True, text=True, timeout=300, check=False)
    assert proc.returncode == 0, proc.stderr
    lines = proc.stdout.splitlines()
    assert lines[0].startswith("# relayish benchmarks") and any("numpy" in line and "numba" in line for line in lines)
    header = next(line for line in lines if line.startswith("| workload"))
    assert [c.strip() for c in header.strip("|").split("|")] == [
        "workload", "numpy", "relayish-interp", "jit/best", "jit first call"]
    rows = [line for line in lines if line.startswith("| W")]
    assert [r.split("|")[1].strip() for r in rows] == ["W5.gradgrad", "W7.import"]
    assert rows[0].count("✓") == 2
    record = json.loads(out.read_text())
    assert record["quick"] and record["rows"] == ["W5.gradgrad", "W7.import"]
    assert {(c["impl"], c["row"]) for c in record["cells"]} == {
        (i, r) for i in ("numpy", "relayish-interp") for r in ("W5.gradgrad", "W7.import")}
    assert all(c["status"] == "ok" and math.isfinite(c["median_s"]) for c in record["cells"])
