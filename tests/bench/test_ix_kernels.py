"""bench/ix_kernels.py runs: each row's index-expression kernel agrees with the built-in operator
(the script checks it before timing) and both tables (static text, @relay with a Dim batch) have every row. Timings are not asserted."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]


def test_the_benchmark_checks_its_kernels_and_prints_every_row():
    done = subprocess.run([sys.executable, str(REPO / "bench" / "ix_kernels.py"), "--repeats", "1"], cwd=REPO,
                          capture_output=True, text=True, timeout=600)
    assert done.returncode == 0, done.stderr
    rows = [line for line in done.stdout.splitlines() if line.startswith("| matmul") or line.startswith("| conv2d")]
    assert len(rows) == 6 and all(line.rstrip().endswith("x |") for line in rows), done.stdout  # text, then @relay
    assert "# the form users write: @relay, a Dim batch, the default backend" in done.stdout
