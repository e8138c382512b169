"""The cheap-gradient suite (bench/cheap_gradient.py): its four programs compute what they
claim, checked by independent oracles (closed forms, and central finite differences of the
compiled value, which involve no AD), on sizes where ``i mod n`` wraps; its verdict rule;
and the command line in --quick mode prints the table and writes the JSON. Kernels compile
into the test session's cache (tests/conftest.py). Timings are not asserted: --quick
figures are noise on a shared machine.
"""

from __future__ import annotations

import importlib.util
import json
import statistics
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

import relayish

REPO = Path(__file__).resolve().parents[2]
SCRIPT = REPO / "bench" / "cheap_gradient.py"


def _load():
    name = "relayish_bench_cheap_gradient"
    if name not in sys.modules:
        spec = importlib.util.spec_from_file_location(name, SCRIPT)
        module = importlib.util.module_from_spec(spec)
        sys.modules[name] = module
        spec.loader.exec_module(module)
    return sys.modules[name]


CG = _load()


def central_differences(f, x: np.ndarray, eps: float = 1e-2) -> np.ndarray:
    """d f / d x by central differences, x float32 (the programs are linear or quadratic in
    x, so the only error is float32 rounding)."""
    grad = np.zeros(x.shape)
    for i in np.ndindex(x.shape):
        up, down = x.copy(), x.copy()
        up[i] += eps
        down[i] -= eps
        grad[i] = (float(f(up)) - float(f(down))) / (2 * eps)
    return grad


@pytest.mark.parametrize("program, n, m", [("a", 6, 5), ("b", 5, 12), ("c", 7, 7), ("d", 6, 4),
                                            ("a-ix", 6, 5), ("b-ix", 5, 12), ("c-ix", 7, 7), ("d-ix", 6, 4)])
def test_value_and_gradient_against_closed_forms_and_finite_differences(program, n, m):
    module = relayish.parse(CG.program_text(program, n, m))
    args = CG.inputs(program, n, m, seed=1)
    loss, vg = relayish.compile(module, "loss"), relayish.compile(module, "vg")
    value, (grad, *rest) = vg(*args)
    assert rest == [] and grad.shape == args[0].shape and grad.dtype == np.float32
    if program in ("a-ix", "b-ix", "c-ix"):  # the loop's adjoints are added in place (jit/lower.py, scatter_addend)
        assert "__d0_in_place" in vg.source
    ref_value, ref_grad = CG.expected(program, n, m, args)
    assert CG.relative_error(value, ref_value) <= 1e-5
    assert CG.relative_error(loss(*args), ref_value) <= 1e-5
    assert CG.relative_error(grad, ref_grad) <= 1e-5
    fd = central_differences(lambda x: loss(x, *args[1:]), args[0])
    np.testing.assert_allclose(grad, fd, rtol=2e-2, atol=2e-2 * np.abs(fd).max())


def test_closed_form_of_b_by_hand():
    """The bincount closed form of b on a 2 x 2 case written out: m = 3 reads j = 0, 1, 0."""
    X = np.array([[1.0, 2.0], [3.0, 4.0]], np.float32)
    value, grad = CG.expected("b", 2, 3, (X,))
    # j=0: X00*X00 + X10*X01 = 1 + 6; j=1: X01*X10 + X11*X11 = 6 + 16; twice j=0
    assert value == 2 * 7 + 22
    # counts (2, 1): dy/dX[a,b] = (c_a + c_b) X[b,a]
    np.testing.assert_array_equal(grad, [[4 * 1, 3 * 3], [3 * 2, 2 * 4]])


def test_growth_and_verdicts():
    assert CG.growth([4.0, 2.0, 2.5]) == pytest.approx(1.25)  # a falling ratio is no growth
    assert CG.growth([2.0, 8.0, 30.0]) == pytest.approx(15.0)
    assert CG.growth([3.0]) == 1.0
    cells = [CG.Cell("a", 8, 8, ratio=2.0), CG.Cell("a", 32, 32, ratio=5.0),
             CG.Cell("d", 8, 8, ratio=3.0), CG.Cell("d", 32, 32, ratio=3.5), CG.Cell("d", 128, 128, failed="killed")]
    v = CG.verdicts(cells)
    assert v["a"]["flat"] is False and v["d"]["flat"] is True and v["d"]["failed"] == [128]
    text = CG.table(cells)
    assert "flat? a: NOT flat" in text and "flat? d: flat" in text and "no figures for n = 128" in text


def test_command_line_quick_prints_the_table(tmp_path):
    out = tmp_path / "cheap.json"
    proc = subprocess.run([sys.executable, str(SCRIPT), "--quick", "--only", "b", "--sizes", "4,8", "--json", str(out)],
                          cwd=REPO, capture_output=True, text=True, timeout=300)
    assert proc.returncode == 0, proc.stderr
    lines = proc.stdout.splitlines()
    assert "| program | n | m | time(value) | time(value+grad) | ratio | peak RSS | check |" in lines
    rows = [line for line in lines if line.startswith("| b:")]
    assert len(rows) == 2 and all(row.endswith("| ok |") for row in rows)
    assert sum(line.startswith("flat? ") for line in lines) == 1
    data = json.loads(out.read_text())
    assert data["quick"] is True and [(c["program"], c["n"]) for c in data["cells"]] == [("b", 4), ("b", 8)]
    for cell in data["cells"]:
        assert cell["failed"] is None and cell["error"] <= CG.TOLERANCE
        assert cell["value"] > 0 and cell["value_and_grad"] > 0
        assert len(cell["value_times"]) == len(cell["value_and_grad_times"]) == 3 and cell["peak_rss"] > 0
        pairs = [b / v for v, b in zip(cell["value_times"], cell["value_and_grad_times"])]
        assert cell["ratio"] == pytest.approx(statistics.median(pairs))  # the ratio of each pair of repeats
