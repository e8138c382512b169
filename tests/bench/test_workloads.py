"""The benchmark harness (bench/workloads.py, bench/programs.py, bench/decorated.py): every
implementation of every workload matches the float64 references within 1e-4 (outputs checked
once, no timing, except one quick timed cell per implementation), the references reproduce
docs/workloads.md's table (read from the file), W8's reference agrees with an independent
evaluation (complex-step derivatives of a loss written another way) and its initial
parameters follow the documented drawing rule, the timing protocol, the correctness check,
the table's format (relay/text, relay/best), W7's fresh-process programs and the command
line in --quick mode.

relayish-jit and relayish-relay cells run in worker processes of the harness (killed past a
memory limit, so a runaway compiled program cannot take the machine's memory), each
implementation's rows in one process, once per test run even under pytest-xdist (see
``isolated_cells``), and compile into a kernel cache directory of the test session's own
(see ``kernel_cache``), never the user's cache.
"""

from __future__ import annotations

import importlib.util
import json
import math
import os
import re
import subprocess
import sys
import time
from pathlib import Path
from types import SimpleNamespace

import numpy as np
import pytest

try:
    import fcntl
except ImportError:  # Windows: no file locks here, so each pytest-xdist worker computes its own cells
    fcntl = None

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

CORE_IMPLS = ("numpy", "relayish-interp", "relayish-jit", "relayish-relay", "numba")
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
def test_references_reproduce_the_docs_table(row):
    """docs/workloads.md's table has a figure for every output of the row, and the float64
    references the harness computes reproduce every figure."""
    entries = W.spec_reference()[row]
    assert {output for output, _, _ in entries} == set(W.OUTPUTS[row])
    assert W.spec_mismatches(row) == []


def test_the_docs_table_is_read_as_written():
    table = W.spec_reference()
    assert table["W1.fwd"] == (("L", "value", 488012.8264),)
    assert ("dL/db", "sum", 894.29099) in table["W1.vg"] and ("dW1", "norm", 2.3722937) in table["W2.vg"]
    assert table["W5.gradgrad"] == (("gradgrad", "norm", 1895.1607), ("gradgrad", "sum", 546.37682))
    assert table["W6.loop"] == (("x_10000", "value", 0.9999774133),)
    assert table["W8.step"][0] == ("L", "value", 2.414882105)
    assert ("linear4_bias", "norm", 0.022531771) in table["W8.step"]
    # every line of the file's table was read: as many figures as the table has numbers
    text = W.WORKLOADS_MD.read_text(encoding="utf-8").split("## Reference values", 1)[1]
    numbers = [re.sub(r"\s+\([^()]*\)$", "", line.strip().strip("|").split("|")[2].strip()) for line in text.splitlines()
               if line.startswith("| W")]
    figures = sum(len(re.findall(r"-?\d+(?:\.\d+)?(?:e-?\d+)?", n)) for n in numbers)
    distinct = {(row.split(".")[0], output, stat, value) for row, entries in table.items()
                for output, stat, value in entries}
    assert len(distinct) == figures


def test_a_table_line_that_cannot_be_read_is_an_error(tmp_path):
    good = W.WORKLOADS_MD.read_text(encoding="utf-8")
    for line in ("| W2 | ∂W9 | ‖·‖₂ = 1.0 |", "| W2 | ∂W1, ∂b1 | ‖·‖₂ = 1.0 |", "| W2 | ∂W1, ∂b1 | 1.0 |"):
        path = tmp_path / "workloads.md"
        path.write_text(good.rstrip("\n") + "\n" + line + "\n", encoding="utf-8")
        with pytest.raises(ValueError, match="cannot read the reference line"):
            W.spec_reference(path)


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
    w8 = W.inputs("W8.step")
    assert {k: v.shape for k, v in w8.items()} == {"x": (32, 1, 28, 28), "Y": (32, 10), **W.LENET_PARAMS}
    assert all(v.dtype == np.float32 for v in w8.values())
    assert np.array_equal(w8["Y"].sum(axis=1), np.ones(32, np.float32))


# -- W8: the reference, checked by a second evaluation ----------------------------------------


def lenet_loss(x, Y, params):
    """W8's loss written independently of the harness (einsum over sliding windows, pooling by
    strided slices, log-softmax); complex-safe, so that complex steps differentiate it."""
    K1, c1, K2, c2, W3, b3, W4, b4 = params

    def conv(A, K, c):
        windows = np.lib.stride_tricks.sliding_window_view(A, K.shape[2:], axis=(2, 3))  # n ch i j p q
        return np.einsum("ncijpq,ocpq->noij", windows, K, optimize=True) + c

    def pool(A):  # the block's element with the largest real part (the perturbation is imaginary)
        blocks = np.stack([A[:, :, p::2, q::2] for p in (0, 1) for q in (0, 1)])
        return np.take_along_axis(blocks, blocks.real.argmax(axis=0)[None], axis=0)[0]

    A1 = pool(np.tanh(conv(x, K1, c1)))
    A2 = pool(np.tanh(conv(A1, K2, c2)))
    H = np.tanh(A2.reshape(len(x), -1) @ W3.T + b3)
    Z = H @ W4.T + b4
    shifted = Z - Z.real.max(axis=1, keepdims=True)
    log_softmax = shifted - np.log(np.exp(shifted).sum(axis=1, keepdims=True))
    return -np.sum(Y * log_softmax) / len(x)


def test_w8_reference_agrees_with_complex_step_derivatives():
    """The reference's loss is the loss evaluated another way, and its one step is p - 0.1 g
    with g the true gradient: g . d equals the complex-step derivative of the loss along a
    random direction d, for every parameter (exact to rounding: no differences are taken)."""
    inp = {k: v.astype(np.float64) for k, v in W.inputs("W8.step").items()}
    params = [inp[name] for name in W.LENET_PARAMS]
    ref = W.reference("W8.step")
    assert len(ref) == 1 + len(params)
    assert lenet_loss(inp["x"], inp["Y"], params) == pytest.approx(float(ref[0]), rel=1e-12)
    rng = np.random.default_rng(0)
    h = 1e-30
    for k, (name, p, stepped) in enumerate(zip(W.LENET_PARAMS, params, ref[1:])):
        g = (p - stepped) / W.W8_LR
        d = rng.standard_normal(p.shape)
        moved = [q + 1j * h * d if j == k else q for j, q in enumerate(params)]
        slope = lenet_loss(inp["x"], inp["Y"], moved).imag / h
        assert abs(slope - np.sum(g * d)) <= 1e-10 * np.linalg.norm(g) * np.linalg.norm(d), name


def test_w8_initial_parameters_follow_the_documented_rule():
    """docs/workloads.md's rule for create_model(lenet, seed=0): one generator seeded 0, the
    weights in layer order, N(0, 1/fan_in) drawn in float64 then cast, biases zero."""
    prng = np.random.default_rng(0)
    inp = W.inputs("W8.step")
    for name, shape in W.LENET_PARAMS.items():
        if name.endswith("_bias"):
            expected = np.zeros(shape, np.float32)
        else:
            expected = prng.normal(0.0, 1 / math.sqrt(math.prod(shape[1:])), shape).astype(np.float32)
        assert np.array_equal(inp[name], expected), name


def test_w8_timed_calls_train_and_only_the_first_is_checked():
    cell = W.run_cell("numpy", "W8.step", quick=True)
    assert cell["status"] == "ok", describe(cell)
    assert cell["warmup_calls"] + cell["repeats"] * cell["number"] >= 3
    assert cell["last_loss"] < float(W.reference("W8.step")[0]), "the parameters moved between calls"



def test_w8_first_step_again_is_checked(monkeypatch):
    """relayish's first step runs on the evaluator: ``again`` (a fresh model's step after timing,
    compiled) is checked too, so wrong kernels fail the cell."""
    numpy_w8 = W.BUILDERS["numpy"]

    def spoiled(row, inp):
        prep = numpy_w8(row, inp)
        prep.again = lambda: (np.float32(0.0), [np.zeros_like(inp[name]) for name in W.LENET_PARAMS])
        return prep
    monkeypatch.setitem(W.BUILDERS, "numpy", spoiled)
    cell = W.run_cell("numpy", "W8.step", quick=True)
    assert cell["status"] == "fail", describe(cell)

# -- every implementation's outputs, once ----------------------------------------------------


ISOLATED = ("relayish-jit", "relayish-relay")  # worker processes, killed past MEMORY_GB: a runaway cannot take the machine
MEMORY_GB = 4.0


@pytest.fixture(scope="module")
def isolated_cells(kernel_cache, tmp_path_factory):
    """``cells(impl)``: the outputs check of every row of an ISOLATED implementation, in one
    worker process per implementation (so kernels compile once, a new process after a
    failure), computed at the first need and once per test run: under pytest-xdist the first
    worker to need them computes them under a lock and leaves them in a file that the others
    read, instead of every worker compiling everything again."""
    base = tmp_path_factory.getbasetemp()
    shared = base.parent if os.environ.get("PYTEST_XDIST_WORKER") and fcntl else base  # xdist: the run's directory
    found: dict[str, dict] = {}

    def cells(impl: str) -> dict:
        if impl not in found:
            result = shared / f"isolated-{impl}.json"
            with open(shared / f"isolated-{impl}.lock", "w") as lock:
                if fcntl:
                    fcntl.flock(lock, fcntl.LOCK_EX)
                if not result.exists():
                    rows = [row for i, row in CELLS if i == impl]
                    batch = W.run_worker_batch(impl, rows, quick=True, timeout=600, jit_cache=str(kernel_cache),
                                               memory_gb=MEMORY_GB, timing=False)
                    result.write_text(json.dumps(batch))
            found[impl] = json.loads(result.read_text())
        return found[impl]
    return cells


@pytest.mark.parametrize(("impl", "row"), CELLS, ids=[f"{i}-{r}" for i, r in CELLS])
def test_implementation_matches_reference(impl, row, request):
    need(impl)
    if impl in ISOLATED:
        cell = request.getfixturevalue("isolated_cells")(impl)[row]
    else:
        cell = W.run_cell(impl, row, timing=False)
    assert cell["status"] == "ok", describe(cell)
    assert cell["err"] <= W.TOLERANCE
    assert set(cell["errs"]) == set(W.OUTPUTS[row])
    if impl == "relayish-relay":
        assert cell["backend"] == "jit", "the column measures @relay's default backend, whatever the environment says"


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
    assert figures["second_s"] == pytest.approx(2e-6)
    assert calls["first"] == 1
    assert figures["repeats"] == 9 == len(figures["times_s"])
    assert figures["median_s"] == sorted(figures["times_s"])[4] and figures["min_s"] == min(figures["times_s"])
    # a cheap function: >= 30 warm-up calls, and repeats of about 50 ms or more
    assert figures["warmup_calls"] >= 30
    assert figures["number"] * figures["median_s"] >= W.DEFAULT.repeat_min_s * (1 - 1e-9)
    assert calls["call"] == 1 + figures["warmup_calls"] + 9 * figures["number"]


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
    ok = {"status": "ok", "median_s": 0.002, "min_s": 0.0019, "first_s": 0.5, "second_s": 0.004, "err": 1e-7}
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
    assert split[0] == ["workload", "numpy", "relayish-interp", "relayish-jit", "numba", "jit/best", "jit 1st / 2nd call"]
    assert set(lines[1]) <= {"|", "-"} and len(lines[1]) == len(lines[0]) == len(lines[2]) == len(lines[3])
    assert split[2] == ["W2.vg", "1.00 ms (0.95) ✓", "2.00 ms (1.90) FAIL err=2.5e-01", "2.00 ms (1.90) ✓", "—",
                        "2.00× (numpy)", "500 ms / 4.00 ms"]
    assert split[3][0] == "W6.fib" and split[3][1] == "2.00 ms (1.90) † ✓"
    assert split[3][2].startswith("ERROR [1] NotImplementedError") and "|" not in split[3][2]
    assert split[3][3].startswith("TIMEOUT [2]") and split[3][4] == "40.0 µs (39.0) ✓"
    assert split[3][5] == "—" and split[3][6] == "—"  # no jit time, no ratio
    assert "[1] NotImplementedError: operator | tanh" in lines and "[2] took longer than 60 s" in lines
    assert any(line.startswith("†") for line in lines)


def test_table_relay_columns():
    """relay/text = relayish-relay / relayish-jit, relay/best = relayish-relay / the best
    non-relayish column, and the first calls of both; W8 has no text program, so no relay/text."""
    ok = {"status": "ok", "err": 1e-7}
    cells = {
        ("numpy", "W2.vg"): dict(ok, median_s=0.004, min_s=0.004, first_s=0.004),
        ("relayish-jit", "W2.vg"): dict(ok, median_s=0.002, min_s=0.002, first_s=0.5, second_s=2.5),
        ("relayish-relay", "W2.vg"): dict(ok, median_s=0.003, min_s=0.003, first_s=1.5, second_s=3.5),
        ("torch", "W2.vg"): dict(ok, median_s=0.001, min_s=0.001, first_s=0.01),
        ("numpy", "W8.step"): dict(ok, median_s=0.02, min_s=0.02, first_s=0.02),
        ("relayish-relay", "W8.step"): dict(ok, median_s=0.01, min_s=0.01, first_s=0.2, second_s=30.0),
        ("numpy", "W6.fib"): dict(ok, median_s=0.002, min_s=0.002, first_s=0.002),
        ("relayish-jit", "W6.fib"): dict(ok, median_s=0.001, min_s=0.001, first_s=0.2, second_s=0.001),
        ("relayish-relay", "W6.fib"): dict(ok, status="fail", median_s=0.001, min_s=0.001, first_s=0.3, second_s=0.001,
                                           err=1.0),
    }
    impls = ["numpy", "relayish-jit", "relayish-relay", "torch"]
    lines = W.format_table(cells, ["W2.vg", "W6.fib", "W8.step"], impls).splitlines()
    split = [[c.strip() for c in line.strip("|").split("|")] for line in lines[:5]]
    assert split[0] == ["workload", *impls, "jit/best", "relay/text", "relay/best", "jit 1st / 2nd call",
                        "relay 1st / 2nd call"]
    assert split[2][5:] == ["2.00× (torch)", "1.50×", "3.00× (torch)", "500 ms / 2.50 s", "1.50 s / 3.50 s"]
    # a failing relay cell has no ratios
    assert split[3][5:] == ["0.50× (numpy)", "—", "—", "200 ms / 1.00 ms", "300 ms / 1.00 ms"]
    assert split[4][2] == "—" and split[4][5:] == ["—", "—", "0.50× (numpy)", "—", "200 ms / 30.0 s"]
    assert any(line.startswith("relay/text:") for line in lines) and any(line.startswith("W8:") for line in lines)


def test_only_selects_rows():
    assert W.select_rows(None) == list(W.ROWS)
    assert W.select_rows("W7,W1.vg") == ["W1.vg", "W7.cold", "W7.warm", "W7.import"]
    assert W.select_rows("W8,W6.loop") == ["W6.loop", "W8.step"]
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


def test_rounds_interleave_the_cells_and_combine_their_medians():
    jobs = [("numpy", "W1.fwd"), ("relayish-jit", "W1.fwd"), ("numpy", "W7.cold"), ("numpy", "W2.vg")]
    assert W.interleaved(jobs, 3) == [("numpy", "W1.fwd"), ("relayish-jit", "W1.fwd"), ("numpy", "W2.vg"),
                                      ("numpy", "W2.vg"), ("relayish-jit", "W1.fwd"), ("numpy", "W1.fwd"),
                                      ("numpy", "W1.fwd"), ("relayish-jit", "W1.fwd"), ("numpy", "W2.vg"),
                                      ("numpy", "W7.cold")]
    assert W.interleaved(jobs, 1) == [jobs[0], jobs[1], jobs[3], jobs[2]]
    runs = [{"status": "ok", "median_s": m, "min_s": m - 1, "times_s": [m], "first_s": f}
            for m, f in ((5.0, 9.0), (3.0, 1.0), (10.0, 2.0))]
    cell = W.combine_rounds(runs)
    assert (cell["median_s"], cell["min_s"], cell["first_s"]) == (5.0, 2.0, 2.0)
    assert cell["times_s"] == [5.0, 3.0, 10.0] and cell["round_medians_s"] == [5.0, 3.0, 10.0]
    failed = {"status": "fail", "err": 1.0}
    assert W.combine_rounds([runs[0], failed, runs[1]]) is failed


def test_command_line_quick(tmp_path):
    out = tmp_path / "bench.json"
    proc = subprocess.run([sys.executable, str(REPO / "bench" / "workloads.py"), "--only", "W5.gradgrad,W7.import",
                           "--impl", "numpy,relayish-interp", "--quick", "--rounds", "2", "--json", str(out)],
                          cwd=REPO, capture_output=True, text=True, timeout=300, check=False)
    assert proc.returncode == 0, proc.stderr
    lines = proc.stdout.splitlines()
    assert lines[0].startswith("# relayish benchmarks") and any("numpy" in line and "numba" in line for line in lines)
    header = next(line for line in lines if line.startswith("| workload"))
    assert [c.strip() for c in header.strip("|").split("|")] == [
        "workload", "numpy", "relayish-interp", "jit/best", "jit 1st / 2nd call"]
    rows = [line for line in lines if line.startswith("| W")]
    assert [r.split("|")[1].strip() for r in rows] == ["W5.gradgrad", "W7.import"]
    assert rows[0].count("✓") == 2
    record = json.loads(out.read_text())
    assert record["quick"] and record["rows"] == ["W5.gradgrad", "W7.import"]
    assert {(c["impl"], c["row"]) for c in record["cells"]} == {
        (i, r) for i in ("numpy", "relayish-interp") for r in ("W5.gradgrad", "W7.import")}
    assert all(c["status"] == "ok" and math.isfinite(c["median_s"]) for c in record["cells"])
    assert all(len(c["round_medians_s"]) == 2 for c in record["cells"] if c["row"] == "W5.gradgrad")


def test_command_line_relay_columns(tmp_path, kernel_cache):
    out = tmp_path / "bench.json"
    proc = subprocess.run([sys.executable, str(REPO / "bench" / "workloads.py"), "--only", "W6.loop",
                           "--impl", "numpy,relayish-jit,relayish-relay", "--quick", "--jit-cache", str(kernel_cache),
                           "--json", str(out)],
                          cwd=REPO, capture_output=True, text=True, timeout=600, check=False)
    assert proc.returncode == 0, proc.stderr
    lines = proc.stdout.splitlines()
    header = next(line for line in lines if line.startswith("| workload"))
    assert [c.strip() for c in header.strip("|").split("|")] == [
        "workload", "numpy", "relayish-jit", "relayish-relay", "jit/best", "relay/text", "relay/best",
        "jit 1st / 2nd call", "relay 1st / 2nd call"]
    row = [c.strip() for c in next(line for line in lines if line.startswith("| W6.loop")).strip("|").split("|")]
    assert all(c.endswith("✓") for c in row[1:4]) and all(c.endswith("×") or "× (" in c for c in row[4:7])
    assert all(c != "—" for c in row[7:])
    record = json.loads(out.read_text())
    relay = next(c for c in record["cells"] if c["impl"] == "relayish-relay")
    assert relay["backend"] == "jit" and relay["first_s"] > 0 and relay["second_s"] > 0

