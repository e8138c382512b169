"""The cheap-gradient suite (issue 9 item 4): time(value + gradient) / time(value) in the JIT
over growing sizes, on programs where naive reverse mode is asymptotically slower than the
program it differentiates (Bernstein et al., "Differentiating a Tensor Language", arXiv:2008.11256).

Run:  python3 bench/cheap_gradient.py [--quick] [--sizes 32,128,512] [--only a,b,c,d] [--json PATH]
                                       [--timeout S] [--mem-limit GB] [--workloads | --no-workloads]

After the suite (unless ``--only`` or ``--no-workloads``), the same ratio for the benchmark
workloads W1-W4 (docs/workloads.md; bench/programs.py: ``@wK_loss`` and ``@wK_vg`` on the
inputs of bench/workloads.py), in this process: the issue's bound there is a ratio of at most 3.

Programs (float32, text format, one module per size, shapes concrete; ``m = n``). Default
sizes (16x apart): n = 32, 128, 512 for ``d``; 128, 512, 2048 for ``a`` and ``b``, and 2048,
8192, 32768 for ``c``, whose steps are so cheap that below those sizes the ratio is still
rising with the depth of the backpropagator chain (a non-tail Python call per step: at a few
thousand frames the stack no longer fits the caches; measured, the ratio then stays put).
``take``'s adjoint is accumulated with ``scatter_add`` in place (ad/transform.py, jit/lower.py):
before that, a dense n x n adjoint per step made ``a`` and ``b`` O(m n^2) in time and memory
(over 8 GB at n = 1024). Each cell runs in a process of its own, killed past ``--timeout``
seconds (600) or ``--mem-limit`` GB of resident memory (4): the machine is shared.

* ``a`` trace-of-diag: ``D = diag(x)`` built once (``expand_dims(x, 0) * one_hot(idx,
  depth=n)``, relayish has no diag or eye operator: ``idx`` is arange(n), an int32 input),
  then a recursive loop of m steps adds ``trace(D) = sum(take(D, idx * (n + 1)))`` (take
  with no axis reads the flattened D: n reads, trace has no operator either). Value
  O(n^2 + m n); a dense adjoint of take is an n x n tensor per step, O(m n^2).
* ``b`` column-row dots: a recursive loop of m steps adds ``dot(X[:, j], X[j, :])`` with
  ``j = i mod n`` (``take(X, j, axis=1)``, ``take(X, j, axis=0)``, int floor division),
  X n x n. Value O(m n); dense adjoints O(m n^2).
* ``c`` skip one: ``f(x) = sum over i < n of [i != k] x_i`` as a recursive loop reading
  ``take(x, i)`` times the Iverson bracket ``cast(i != k)`` (k = n // 2). Value O(n); dense
  adjoints O(n^2). (Written with tensor operators, ``sum(where(idx != k, x, 0))``, it would
  be O(n) both ways: the loop is the case that needs sparse adjoints.)
* ``d`` dead bindings: m bindings ``%dk = tanh(%d(k-1))`` (``%d0 = x``) that nothing reads,
  then ``sum(x * x)``. A compiler that drops dead code makes the value O(n); the gradient
  must then not pay for their (zero) adjoints either.

The programs ``a-ix`` to ``d-ix`` compute the same with operators written as index expressions
(``index_operators``: diag, trace, a column-row dot, a read at an index, tanh, a sum of squares),
whose adjoints relayish derives (docs/index-expressions.md); the JIT adds each adjoint's scatters
into the gradient in place, so a step costs its reads, not the input's size. Their inputs are
the float input and the steps (``a-ix`` needs no index vector).

Each value+gradient global is ``Grad`` of a closure over the program's integer inputs (the
gradient is in the float argument only). The loops' step counts are inputs too: a loop with a
constant count of at most 256 steps is unrolled by the optimizer (docs/optimizer.md), and the
suite is about loops that run as loops. Both globals are compiled with
``relayish.compile(module, name)`` (default options; the process's kernel cache).

Timing protocol (in one process): for the value and for value+gradient, the first call is timed
alone (compiling included; not in the ratio); warm-up runs at least 2 more calls and 0.2 s (at
most 30 calls once past 0.05 s); ``number`` is chosen so that one repeat of ``number``
back-to-back calls takes at least 50 ms. Then 9 pairs of repeats, the value's and the
gradient's one after the other, so that each pair sees the machine in the same state (on a
shared machine, timing one function and then the other made a neighbour's burst look like
growth); time per call = repeat time / number; the table shows the medians, and ``ratio`` is
the median over the pairs of time(value + gradient) / time(value).
``--quick`` (tests, smoke runs; not the protocol): 1 warm-up call, 10 ms repeats, 3 pairs.

Every cell also checks its outputs against closed forms (``expected``): ``err`` is
max|out - ref| / max|ref| over the value and the gradient, ``ok`` when <= 1e-4.

Verdict ("flat?", per program): the cheap-gradient principle bounds the ratio by a constant,
so what must not happen is growth with size. ``growth`` = the largest ratio(larger size) /
ratio(smaller size) over pairs of measured sizes (a ratio that falls as fixed per-call
overheads amortize is not growth); the program is ``flat`` when growth <= 2, with sizes at
least 16x apart by default (a ratio linear in n would show 16x).
"""

from __future__ import annotations

import argparse
import json
import math
import os
import platform
import resource
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

import numpy as np

BENCH = Path(__file__).resolve().parent
REPO = BENCH.parent
for _path in (REPO, BENCH):
    if str(_path) not in sys.path:
        sys.path.insert(0, str(_path))

import relayish  # noqa: E402
import workloads  # noqa: E402

PROGRAMS = ("a", "b", "c", "d", "a-ix", "b-ix", "c-ix", "d-ix")
TITLES = {"a": "trace(diag(x)) x m", "b": "dot(X[:, i%n], X[i%n, :]) x m",
          "c": "sum [i != k] x_i (loop)", "d": "m dead bindings"}
TITLES |= {f"{p}-ix": f"{TITLES[p]}, index expressions" for p in "abcd"}
DEFAULT_SIZES = (32, 128, 512)
SIZES = {"a": (128, 512, 2048), "b": (128, 512, 2048), "c": (2048, 8192, 32768)}  # see the docstring
SIZES |= {f"{p}-ix": sizes for p, sizes in SIZES.items()}
QUICK_SIZES = (8, 32)
FLAT_BOUND = 2.0
TOLERANCE = 1e-4

F32 = "FloatType(32)"
SCALAR = f"Tensor({F32}, Shape())"
I32 = "Tensor(IntType(32), Shape())"


def T(*dims: int) -> str:
    """The text of a float32 tensor type."""
    return f"Tensor({F32}, Shape({', '.join(str(d) for d in dims)}))"


def IV(n: int) -> str:
    """The text of an int32 vector type."""
    return f"Tensor(IntType(32), Shape({n}))"


def index_operators() -> None:
    """Register the operators the ``-ix`` programs call, written as index expressions
    (docs/index-expressions.md): their gradients are derived, none written here."""
    from relayish import ix

    def diag(x):
        return ix.tensor((x.shape[0], x.shape[0]), lambda i, j: ix.where(i == j, x[i], 0.0))

    def trace(D):
        k = ix.axis(D.shape[0], "k")
        return ix.tensor((), lambda: ix.sum(D[k, k], k))

    def column_row_dot(X, j):
        k = ix.axis(X.shape[0], "k")
        return ix.tensor((), lambda: ix.sum(X[k, j[()]] * X[j[()], k], k))

    def pick(x, i):
        return ix.tensor((), lambda: x[i[()]])

    def tanh(x):
        return ix.tensor((x.shape[0],), lambda i: ix.tanh(x[i]))

    def sum_of_squares(x):
        k = ix.axis(x.shape[0], "k")
        return ix.tensor((), lambda: ix.sum(x[k] * x[k], k))

    for fn in (diag, trace, column_row_dot, pick, tanh, sum_of_squares):
        ix.operator(fn, name=f"cg_{fn.__name__}")


def program_text(program: str, n: int, m: int) -> str:
    """``@loss`` (the value) and ``@vg`` (value and gradient in the float argument). The ``-ix``
    programs are the same computations with the operators of ``index_operators``."""
    if program.endswith("-ix"):
        index_operators()
        return _index_program_text(program[0], n, m)
    if program == "a":
        return f"""
def @loss(%x: {T(n)}, %idx: {IV(n)}, %m: {I32}) -> {SCALAR} {{
  let %D = @expand_dims(%x, axis=0) * @one_hot(%idx, depth={n}) in
  let %diagonal = %idx * {n + 1} in
  let %loop = fn (%i: {I32}, %acc: {SCALAR}) -> {SCALAR} {{
    if %i == %m then %acc else %loop(%i + 1, %acc + @sum(@take(%D, %diagonal)))
  }} in
  %loop(0, 0.0)
}}
def @vg(%x: {T(n)}, %idx: {IV(n)}, %m: {I32}) {{
  Grad(fn (%x_: {T(n)}) -> {SCALAR} {{ @loss(%x_, %idx, %m) }})(%x)
}}
"""
    if program == "b":
        return f"""
def @loss(%X: {T(n, n)}, %m: {I32}) -> {SCALAR} {{
  let %loop = fn (%i: {I32}, %acc: {SCALAR}) -> {SCALAR} {{
    if %i == %m then %acc else
    let %j = %i - (%i / {n}) * {n} in
    %loop(%i + 1, %acc + @sum(@take(%X, %j, axis=1) * @take(%X, %j, axis=0)))
  }} in
  %loop(0, 0.0)
}}
def @vg(%X: {T(n, n)}, %m: {I32}) {{
  Grad(fn (%Y: {T(n, n)}) -> {SCALAR} {{ @loss(%Y, %m) }})(%X)
}}
"""
    if program == "c":
        return f"""
def @loss(%x: {T(n)}, %n: {I32}) -> {SCALAR} {{
  let %loop = fn (%i: {I32}, %acc: {SCALAR}) -> {SCALAR} {{
    if %i == %n then %acc
    else %loop(%i + 1, %acc + @cast(%i != {n // 2}, dtype=FloatType(32)) * @take(%x, %i))
  }} in
  %loop(0, 0.0)
}}
def @vg(%x: {T(n)}, %n: {I32}) {{
  Grad(fn (%y: {T(n)}) -> {SCALAR} {{ @loss(%y, %n) }})(%x)
}}
"""
    if program == "d":
        dead = "".join(f"  let %d{k} = @tanh(%d{k - 1}) in\n" for k in range(1, m + 1))
        return f"""
def @loss(%x: {T(n)}) -> {SCALAR} {{
  let %d0 = %x in
{dead}  @sum(%x * %x)
}}
def @vg(%x: {T(n)}) {{
  Grad(@loss)(%x)
}}
"""
    raise ValueError(f"unknown program {program!r}")


def _index_program_text(program: str, n: int, m: int) -> str:
    loop = f"""let %loop = fn (%i: {I32}, %acc: {SCALAR}) -> {SCALAR} {{
    if %i == %m then %acc else %loop(%i + 1, %acc + STEP)
  }} in
  %loop(0, 0.0)"""
    if program == "d":
        dead = "".join(f"  let %d{k} = @cg_tanh(%d{k - 1}) in\n" for k in range(1, m + 1))
        return f"""
def @loss(%x: {T(n)}) -> {SCALAR} {{
  let %d0 = %x in
{dead}  @cg_sum_of_squares(%x)
}}
def @vg(%x: {T(n)}) {{
  Grad(@loss)(%x)
}}
"""
    shape, step = {"a": ((n,), "@cg_trace(%D)"), "b": ((n, n), f"@cg_column_row_dot(%x, %i - (%i / {n}) * {n})"),
                   "c": ((n,), f"@cast(%i != {n // 2}, dtype=FloatType(32)) * @cg_pick(%x, %i)")}[program]
    setup = "let %D = @cg_diag(%x) in\n  " if program == "a" else ""
    return f"""
def @loss(%x: {T(*shape)}, %m: {I32}) -> {SCALAR} {{
  {setup}{loop.replace("STEP", step)}
}}
def @vg(%x: {T(*shape)}, %m: {I32}) {{
  Grad(fn (%y: {T(*shape)}) -> {SCALAR} {{ @loss(%y, %m) }})(%x)
}}
"""


def inputs(program: str, n: int, m: int, seed: int = 0) -> tuple[np.ndarray, ...]:
    """The arguments of ``@loss`` and ``@vg``: the float input first, the loop's steps last."""
    if program.endswith("-ix"):  # the float input and the steps
        found = inputs(program[0], n, m, seed)
        return found[:1] if program == "d-ix" else (found[0], found[-1])
    rng = np.random.default_rng(seed)
    if program == "a":
        return rng.standard_normal(n).astype(np.float32), np.arange(n, dtype=np.int32), np.int32(m)
    if program == "b":
        return (rng.standard_normal((n, n)) / np.sqrt(n)).astype(np.float32), np.int32(m)
    if program == "c":
        return rng.standard_normal(n).astype(np.float32), np.int32(n)
    return rng.standard_normal(n).astype(np.float32),


def expected(program: str, n: int, m: int, args: tuple[np.ndarray, ...]) -> tuple[float, np.ndarray]:
    """(value, gradient in the float argument) in closed form, float64."""
    program = program[0]  # the -ix programs compute the same
    x = args[0].astype(np.float64)
    if program == "a":  # m * trace(diag(x)) = m * sum(x)
        return m * x.sum(), np.full(n, float(m))
    if program == "b":  # y = sum_j c_j sum_k X[k,j] X[j,k], c_j = #{i < m : i mod n = j}
        counts = np.bincount(np.arange(m) % n, minlength=n).astype(np.float64)
        value = float(counts @ np.einsum("kj,jk->j", x, x))
        return value, (counts[:, None] + counts[None, :]) * x.T  # dy/dX[a,b] = (c_a + c_b) X[b,a]
    if program == "c":
        keep = np.arange(n) != n // 2
        return float(x[keep].sum()), keep.astype(np.float64)
    if program == "d":
        return float((x * x).sum()), 2 * x
    raise ValueError(f"unknown program {program!r}")


def relative_error(out: Any, ref: Any) -> float:
    out, ref = np.asarray(out, np.float64), np.asarray(ref, np.float64)
    return float(np.max(np.abs(out - ref)) / max(np.max(np.abs(ref)), 1e-30))


@dataclass
class Timing:
    first: float
    times: list[float] = field(default_factory=list)

    @property
    def median(self) -> float:
        return statistics.median(self.times)


def time_pair(value: Callable[[], Any], both: Callable[[], Any], quick: bool) -> tuple[Timing, Timing, float]:
    """Both calls timed in alternating repeats, so that both see the machine as it is at that
    moment: (value timing, value+gradient timing, the median over repeats of their ratio). The
    first call, warm-up and ``number`` are bench/workloads.py's."""
    protocol = workloads.QUICK if quick else workloads.DEFAULT
    timings, numbers = [], []
    for call in (value, both):
        start = time.perf_counter()
        call()
        timings.append(Timing(first=time.perf_counter() - start))
        numbers.append(workloads.calibrate(call, protocol)[0])
    for _ in range(protocol.repeats):
        for call, timing, number in zip((value, both), timings, numbers):
            timing.times.append(workloads.repeat(call, number)[0] / number)
    ratio = statistics.median(b / v for v, b in zip(timings[0].times, timings[1].times))
    return timings[0], timings[1], ratio


@dataclass
class Cell:
    program: str
    n: int
    m: int
    value: float = math.nan  # median seconds per call
    value_and_grad: float = math.nan
    ratio: float = math.nan
    first_value: float = math.nan  # the first calls, compiling included
    first_value_and_grad: float = math.nan
    error: float = math.nan  # against the closed forms
    value_times: list[float] = field(default_factory=list)
    value_and_grad_times: list[float] = field(default_factory=list)
    peak_rss: int = 0  # bytes, of the cell's process
    failed: str | None = None  # why the cell has no figures


def measure(program: str, n: int, quick: bool = False) -> Cell:
    """Compile ``@loss`` and ``@vg`` for size n (m = n), check them, time them."""
    m = n
    module = relayish.parse(program_text(program, n, m), filename=f"cheap_gradient_{program}_{n}.rly")
    args = inputs(program, n, m)
    loss, vg = relayish.compile(module, "loss"), relayish.compile(module, "vg")
    ref_value, ref_grad = expected(program, n, m, args)
    value, both, ratio = time_pair(lambda: loss(*args), lambda: vg(*args), quick)
    out_value, (out_grad, *_) = vg(*args)
    error = max(relative_error(loss(*args), ref_value), relative_error(out_value, ref_value),
                relative_error(out_grad, ref_grad))
    return Cell(program, n, m, value.median, both.median, ratio, value.first, both.first,
                error, value.times, both.times)


WORKLOADS = ("W1", "W2", "W3", "W4")


def workload_ratios(quick: bool = False) -> list[tuple[str, float, float, float]]:
    """(workload, time(value), time(value + gradient), ratio) for W1-W4, compiled with the defaults."""
    programs = workloads.load_programs()
    found = []
    for row in WORKLOADS:
        named = workloads.inputs(row)
        name, order = programs.ENTRIES[f"{row}.vg"]
        args = [named[a] for a in order]
        loss = relayish.compile(programs.module(), name.replace("_vg", "_loss"))
        both = relayish.compile(programs.module(), name)
        value, grad, ratio = time_pair(lambda: loss(*args), lambda: both(*args), quick)
        found.append((row, value.median, grad.median, ratio))
    return found


def workload_table(found: list[tuple[str, float, float, float]]) -> str:
    lines = ["| workload | time(value) | time(value+grad) | ratio | <= 3? |", "| --- | ---: | ---: | ---: | --- |"]
    for row, value, both, ratio in found:
        lines.append(f"| {row} | {seconds(value)} | {seconds(both)} | {ratio:.2f} | {'yes' if ratio <= 3 else 'NO'} |")
    return "\n".join(lines)


def growth(ratios: list[float]) -> float:
    """The largest ratio(later size) / ratio(earlier size), sizes ascending (1 for one size)."""
    return max([ratios[j] / ratios[i] for i in range(len(ratios)) for j in range(i + 1, len(ratios))], default=1.0)


def verdicts(cells: list[Cell]) -> dict[str, dict[str, Any]]:
    """Per program: the growth of its measured ratios, whether it is flat (growth <=
    FLAT_BOUND, None without two measured sizes), and the sizes whose cell failed."""
    out = {}
    for program in dict.fromkeys(c.program for c in cells):
        mine = sorted((c for c in cells if c.program == program), key=lambda c: c.n)
        ratios = [c.ratio for c in mine if c.failed is None]
        g = growth(ratios)
        out[program] = {"growth": g, "flat": g <= FLAT_BOUND if len(ratios) > 1 else None,
                        "failed": [c.n for c in mine if c.failed is not None]}
    return out


def seconds(t: float) -> str:
    for unit, scale in (("s", 1.0), ("ms", 1e-3), ("us", 1e-6)):
        if t >= scale:
            return f"{t / scale:.3g} {unit}"
    return f"{t / 1e-9:.3g} ns"


def table(cells: list[Cell]) -> str:
    """The Markdown table, then one verdict line per program."""
    lines = ["| program | n | m | time(value) | time(value+grad) | ratio | peak RSS | check |",
             "| --- | ---: | ---: | ---: | ---: | ---: | ---: | --- |"]
    for c in cells:
        name = f"{c.program}: {TITLES[c.program]}"
        if c.failed is not None:
            lines.append(f"| {name} | {c.n} | {c.m} | - | - | - | - | {c.failed} |")
            continue
        check = "ok" if c.error <= TOLERANCE else f"FAIL err={c.error:.2g}"
        lines.append(f"| {name} | {c.n} | {c.m} | {seconds(c.value)} | {seconds(c.value_and_grad)} | "
                     f"{c.ratio:.2f} | {c.peak_rss / 2**30:.2f} GB | {check} |")
    lines.append("")
    for program, v in verdicts(cells).items():
        word = {True: "flat", False: "NOT flat", None: "unknown (fewer than two measured sizes)"}[v["flat"]]
        note = f"; no figures for n = {', '.join(map(str, v['failed']))}" if v["failed"] else ""
        lines.append(f"flat? {program}: {word} (largest growth of the ratio from a smaller to a larger n: "
                     f"{v['growth']:.2f}x, bound {FLAT_BOUND:g}x{note})")
    return "\n".join(lines)


def worker(spec: str, result: str, quick: bool) -> None:
    """One cell in this process (``--worker PROGRAM:N``): its Cell as JSON in ``result``."""
    program, n = spec.split(":")
    cell = measure(program, int(n), quick)
    cell.peak_rss = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * 1024
    Path(result).write_text(json.dumps(asdict(cell)))


def run_cell(program: str, n: int, quick: bool, timeout: float, memory_gb: float) -> Cell:
    """``measure`` in a fresh process, killed past ``timeout`` seconds or ``memory_gb`` of
    resident memory (a dense adjoint per loop step can take O(m n^2) memory): the machine is
    shared, and a killed cell is a finding, not a crash of the benchmark."""
    from workloads import MemoryLimitExceeded, run_limited, tail

    fd, result = tempfile.mkstemp(prefix="relayish-cheap-gradient-", suffix=".json")
    os.close(fd)
    command = [sys.executable, str(Path(__file__).resolve()), "--worker", f"{program}:{n}", "--result", result]
    command += ["--quick"] if quick else []
    try:
        try:
            proc = run_limited(command, dict(os.environ), timeout, memory_gb)
            failure = None if proc.returncode == 0 else f"worker exit status {proc.returncode}: {tail(proc.stderr)}"
        except subprocess.TimeoutExpired:
            failure = f"killed past the {timeout:g} s limit (--timeout)"
        except MemoryLimitExceeded as err:
            failure = f"the process {err}"
        if failure is None:
            return Cell(**json.loads(Path(result).read_text()))
        return Cell(program, n, n, failed=failure)
    finally:
        Path(result).unlink(missing_ok=True)


def main(argv: list[str] | None = None) -> list[Cell]:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help=f"sizes {QUICK_SIZES}, short timings")
    parser.add_argument("--sizes", help="comma-separated n (m = n) for every program")
    parser.add_argument("--only", help="comma-separated programs among " + ",".join(PROGRAMS))
    parser.add_argument("--json", help="write every measurement to this file")
    parser.add_argument("--timeout", type=float, default=600.0, help="seconds per cell before it is killed")
    parser.add_argument("--mem-limit", type=float, default=4.0, help="GB of resident memory per cell before it is killed")
    parser.add_argument("--workloads", action=argparse.BooleanOptionalAction, default=None,
                        help="also the ratio of W1-W4 (default: on unless --only)")
    parser.add_argument("--worker", help=argparse.SUPPRESS)
    parser.add_argument("--result", help=argparse.SUPPRESS)
    options = parser.parse_args(argv)
    if options.worker:
        worker(options.worker, options.result, options.quick)
        return []
    programs = options.only.split(",") if options.only else list(PROGRAMS)
    print(f"python {platform.python_version()}, numpy {np.__version__}, {platform.machine()}, "
          f"{os.cpu_count()} CPUs; one process per cell, limits {options.timeout:g} s and {options.mem_limit:g} GB",
          flush=True)
    cells = []
    for program in programs:
        if options.sizes:
            sizes = [int(s) for s in options.sizes.split(",")]
        else:
            sizes = list(QUICK_SIZES if options.quick else SIZES.get(program, DEFAULT_SIZES))
        for n in sorted(sizes):
            c = run_cell(program, n, options.quick, options.timeout, options.mem_limit)
            cells.append(c)
            what = c.failed or f"value {seconds(c.value)}, value+grad {seconds(c.value_and_grad)}"
            print(f"  measured {program} n={n}: {what}", file=sys.stderr, flush=True)
    print(table(cells))
    found = []
    if options.workloads or (options.workloads is None and not options.only):
        found = workload_ratios(options.quick)
        print()
        print(workload_table(found))
    if options.json:
        Path(options.json).write_text(json.dumps({"cells": [asdict(c) for c in cells], "verdicts": verdicts(cells),
                                                  "quick": options.quick, "flat_bound": FLAT_BOUND,
                                                  "workloads": found}, indent=1))
    return cells


if __name__ == "__main__":
    main()
