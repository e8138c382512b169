"""bench/forms.py: both forms of a row in one process, checked against the float64 reference."""

import subprocess
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]


def test_the_forms_table_checks_and_compares_both_forms():
    proc = subprocess.run([sys.executable, str(REPO / "bench" / "forms.py"), "--only", "W6.loop", "--repeats", "2"],
                          cwd=REPO, capture_output=True, text=True, timeout=600, check=False)
    assert proc.returncode == 0, proc.stderr
    row = next(line for line in proc.stdout.splitlines() if line.startswith("| W6.loop"))
    cells = [c.strip() for c in row.strip("|").split("|")]
    assert cells[1].endswith("✓") and cells[2].endswith("✓") and cells[3].endswith("×")
    assert float(cells[3].rstrip("×")) > 0


def test_an_unknown_row_is_refused():
    proc = subprocess.run([sys.executable, str(REPO / "bench" / "forms.py"), "--only", "W9"],
                          cwd=REPO, capture_output=True, text=True, timeout=60, check=False)
    assert proc.returncode != 0 and "unknown rows W9" in proc.stderr
