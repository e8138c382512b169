"""The decorated form against the static text form, in one process: what writing ``@relay`` with
``Dim`` batch dimensions costs per call, apart from the machine's load.

Run:  python3 bench/forms.py [--only W2.vg,W5.gradgrad] [--repeats 15]

bench/workloads.py's ``relay/text`` divides medians measured in different processes minutes
apart; on a shared machine a neighbour's busy spell in one of them moves the ratio by 20-50%.
Here both forms of a row (bench/workloads.py's relayish-relay and relayish-jit cells: the same
inputs, float64 references and output check) live in one process: each is called once (compiling
its kernels), warmed up and calibrated by workloads.py's protocol, then their repeats alternate,
``--repeats`` of each, so that a busy spell falls on both. The table shows each form's median and
min per call and their ratio (decorated / text), per row. The kernel cache is a fresh temporary
directory.
"""

from __future__ import annotations

import argparse
import os
import statistics
import sys
import tempfile
from pathlib import Path

BENCH = Path(__file__).resolve().parent
ROWS = ("W1.fwd", "W1.vg", "W2.vg", "W3.vg", "W4.vg", "W5.gradgrad", "W5.hvp", "W6.fib", "W6.loop")
FORMS = ("relayish-relay", "relayish-jit")


def measure(row: str, repeats: int) -> dict:
    """Both forms of ``row``: their repeat times per call, alternating, and the output checks."""
    import workloads as W

    refs = W.reference(row)
    preps, numbers, checks = {}, {}, {}
    for form in FORMS:
        prep = preps[form] = W.BUILDERS[form](row, W.inputs(row))
        checks[form] = [W.check_outputs(row, prep.outputs(prep.first()), refs)["ok"]]
        numbers[form], _, out = W.calibrate(prep.call)
        checks[form].append(W.check_outputs(row, prep.outputs(out), refs)["ok"])
    times: dict[str, list[float]] = {form: [] for form in FORMS}
    for _ in range(repeats):
        for form in FORMS:
            seconds, _ = W.repeat(preps[form].call, numbers[form])
            times[form].append(seconds / numbers[form])
    return {"times": times, "ok": {form: all(c) for form, c in checks.items()}}


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--only", help=f"comma-separated rows (default: {','.join(ROWS)})")
    parser.add_argument("--repeats", type=int, default=15, help="alternating repeats of each form (default 15)")
    options = parser.parse_args(argv)
    rows = options.only.split(",") if options.only else list(ROWS)
    unknown = [r for r in rows if r not in ROWS]
    if unknown:
        raise SystemExit(f"--only: unknown rows {', '.join(unknown)} (choose from {', '.join(ROWS)})")
    os.environ["RELAYISH_CACHE_DIR"] = tempfile.mkdtemp(prefix="relayish-forms-cache-")
    sys.path.insert(0, str(BENCH))
    import workloads as W

    print("# the decorated form (@relay, Dim) against the static text form, one process: bench/forms.py")
    print(W.format_facts(W.machine_facts()))
    print()
    print("| workload | decorated | text | decorated/text |")
    print("|---|---|---|---|")
    for row in rows:
        result = measure(row, options.repeats)
        cells = []
        for form in FORMS:
            t = result["times"][form]
            mark = "✓" if result["ok"][form] else "FAIL"
            cells.append(f"{W.fmt_time(statistics.median(t))} ({W.fmt_time(min(t))}) {mark}")
        ratio = statistics.median(result["times"]["relayish-relay"]) / statistics.median(result["times"]["relayish-jit"])
        print(f"| {row} | {cells[0]} | {cells[1]} | {ratio:.2f}× |", flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
