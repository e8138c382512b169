"""``relayish difftest``: generated programs through several backends, against the evaluator.

Each generated program (``strategies.random_programs``: a seed gives the same programs in any
process) runs in the reference evaluator and in every other chosen backend on the same
arguments; results must agree (``check_equivalent``). Backends are named: ``roundtrip``
evaluates the program after printing and parsing its typed text; ``pass:MODULE:FUNCTION``
evaluates the output of your IR-to-IR pass; ``jit`` and ``cuda`` run the compiled program
(CUDA: on a GPU, or with ``NUMBA_ENABLE_CUDASIM=1``). A failure is minimized (``minimize``)
and written to a ``.rly`` file whose comments hold the error and the arguments, so it can be
re-run and read. ``--jobs N`` splits the programs over N processes (``run_jobs``).

Generated programs end by construction, so a program that does not is itself a failure: the
evaluator runs first, with at most ``STEP_LIMIT`` function calls, and every program has
``--time-limit`` seconds (compiling included) in all backends together.
"""

from __future__ import annotations

import collections
import contextlib
import copy
import functools
import importlib
import itertools
import multiprocessing
import signal
import statistics
import threading
import time
from pathlib import Path
from typing import Any, Callable, Iterator

import attrs
import numpy as np

from interp import evaluate
from typecheck import infer

from ..errors import RelayRuntimeError, StepLimitError
from ..expr import EXPR_CLASSES
from ..ix.define import unregister
from ..module import IndexDecl, Module
from ..ops.registry import all_ops
from ..parser import parse
from ..printer import astext
from ..types import FloatType
from .checks import EquivalenceError, check_equivalent, minimized_failure
from .ir_strategies import TimeLimitExceeded, time_limit
from .strategies import DEFAULT_DTYPES, Features, Program, coverage, random_programs

REFERENCE = "interp"
STEP_LIMIT = 100_000  # function calls in the evaluator; generated programs make at most a few thousand
TIME_LIMIT = 600.0  # seconds a program may take in all backends together, compiling included


class NotEnding(Exception):
    """The evaluator reached ``STEP_LIMIT`` on a generated program."""


def _limited(seconds: float) -> contextlib.AbstractContextManager:
    """``time_limit`` for one program, where a timer can interrupt it: the main thread of a POSIX
    process (machine code is interrupted when it returns to Python). Elsewhere: no limit."""
    if not hasattr(signal, "setitimer") or threading.current_thread() is not threading.main_thread():
        return contextlib.nullcontext()
    return time_limit(seconds, "the program")


def _roundtrip(module: Module, name: str, *args: Any, max_calls: int | None = None) -> Any:
    return evaluate(parse(astext(infer(module))), name, *args, max_calls=max_calls)


def _after_pass(pass_fn: Callable[[Module], Module], module: Module, name: str, *args: Any,
                max_calls: int | None = None) -> Any:
    return evaluate(pass_fn(infer(module)), name, *args, max_calls=max_calls)


def _jit(module: Module, name: str, *args: Any, max_calls: int | None = None, target: str = "cpu") -> Any:
    """The compiled program from its first call (the evaluator tier would compare the evaluator
    with itself). No ``max_calls``: counting runs scalar code as Python instead of natively, and
    generated programs are bounded by construction."""
    from jit import compile as jit_compile

    return jit_compile(module, name, target=target, tiered=False)(*args)


def backend(spec: str) -> Callable[..., Any]:
    """The backend named ``spec``: ``interp``, ``roundtrip``, ``jit``, ``cuda`` or ``pass:MODULE:FUNCTION``.

    A backend is ``backend(module, name, *args, max_calls=None) -> value``.
    """
    if spec == REFERENCE:
        return evaluate
    if spec == "roundtrip":
        return _roundtrip
    if spec == "jit":
        return _jit
    if spec == "cuda":  # a GPU, or the simulator (NUMBA_ENABLE_CUDASIM=1)
        return functools.partial(_jit, target="cuda")
    if spec.startswith("pass:"):
        module_name, _, function = spec[len("pass:"):].partition(":")
        if not module_name or not function:
            raise ValueError(f"--pass needs MODULE:FUNCTION (a module on the Python path), not {spec[5:]!r}")
        try:
            pass_fn = getattr(importlib.import_module(module_name), function)
        except (ImportError, AttributeError) as err:
            raise ValueError(f"cannot load the pass {spec[5:]!r}: {err}") from None
        return functools.partial(_after_pass, pass_fn)
    raise ValueError(f"unknown backend {spec!r} (backends: interp, roundtrip, jit, cuda, pass:MODULE:FUNCTION)")


@attrs.define
class _Timed:
    """A backend that adds up the seconds it runs, and keeps what its last call raised."""

    fn: Callable[..., Any]
    max_calls: int | None = None
    seconds: float = 0.0
    raised: Exception | None = None
    running: bool = False  # stays True when TimeLimitExceeded stopped it

    def __call__(self, module: Module, name: str, *args: Any) -> Any:
        start = time.perf_counter()
        self.raised, self.running = None, True
        try:
            value = self.fn(module, name, *args, max_calls=self.max_calls)
        except Exception as err:
            self.raised, self.running = err, False
            raise
        finally:
            self.seconds += time.perf_counter() - start
        self.running = False
        return value


@attrs.define
class Report:
    """What one difftest run found."""

    seed: int
    backends: list[str]
    jobs: int = 1  # processes; job k used seed ``seed + k``
    checked: int = 0
    seconds: float = 0.0
    backend_seconds: dict[str, float] = attrs.Factory(dict)
    sizes: list[int] = attrs.Factory(list)
    op_calls: list[int] = attrs.Factory(list)
    coverage: collections.Counter = attrs.Factory(collections.Counter)
    wrong: int = 0  # programs called with arguments of another size or dtype than their types say
    refused: int = 0  # of those, the ones every backend refused (the rest fit after all, and agreed)
    failure: str | None = None
    failure_file: Path | None = None

    def lines(self) -> list[str]:
        nodes = {cls.__name__ for cls in EXPR_CLASSES}
        ops = set(all_ops())
        missing_nodes = sorted(n for n in nodes if not self.coverage[n])
        per = 1000 * self.seconds / max(self.checked, 1)
        seeds = f"seed {self.seed}" if self.jobs == 1 else f"seeds {self.seed}-{self.seed + self.jobs - 1} ({self.jobs} processes)"
        rows = [
            f"relayish difftest: {seeds}; {self.backends[0]} (reference) against {', '.join(self.backends[1:])}",
            f"{'programs checked':<22}{self.checked}",
            f"{'failures':<22}{0 if self.failure is None else 1}",
            f"{'time':<22}{self.seconds:.1f} s ({per:.0f} ms a program, generation and checking included"
            f"{'' if self.jobs == 1 else ', wall clock over all processes'})",
            *(f"  {name + ':':<20} {seconds:.1f} s" for name, seconds in self.backend_seconds.items()),
        ]
        if self.wrong:
            rows.append(f"{'wrong arguments':<22}{self.wrong} programs; {self.refused} refused by every backend "
                        "(RelayRuntimeError), the rest computed alike")
        if self.sizes:
            rows.append(f"{'median program':<22}{statistics.median(self.sizes):.0f} nodes, "
                        f"{statistics.median(self.op_calls):.0f} operator calls (largest {max(self.sizes)} nodes)")
        missing = f" (not generated: {', '.join(missing_nodes)})" if missing_nodes else ""
        rows.append(f"{'expression nodes':<22}{len(nodes) - len(missing_nodes)} of {len(nodes)} kinds{missing}")
        rows.append(f"{'operators':<22}{sum(1 for op in ops if self.coverage['@' + op])} of {len(ops)}")
        if self.failure is not None:
            where = f"the program (minimized where it ends) written to {self.failure_file}" if self.failure_file else "no program written"
            rows += ["", f"FAILED, {where}:", self.failure]
        return rows


def _write_failure(program: Program, original: Module, error: str, backends: list[str], seed: int,
                   out_dir: Path) -> tuple[str, Path]:
    """The failure's text (``program``: the minimized one), written to ``out_dir/difftest-seed<S>.rly``."""
    with np.printoptions(threshold=100, precision=17):
        args = [f"# argument {i + 1}: {arg!r}".replace("\n", "\n#   ") for i, arg in enumerate(program.args)]
    message = "\n".join("# " + line for line in error.splitlines())
    text = astext(infer(program.module))
    sizes = (f"# minimized from a program of {len(astext(original).splitlines())} lines to {len(text.splitlines())}"
             if program.module is not original else "# the program as generated (one that does not end is not minimized)")
    head = f"# relayish difftest failure (seed {seed}): {backends[0]} against {', '.join(backends[1:])}"
    failure = "\n".join([head, sizes, message, "# arguments of @main:", *args, text])
    out_dir.mkdir(parents=True, exist_ok=True)
    path = out_dir / f"difftest-seed{seed}.rly"
    path.write_text(failure + "\n", encoding="utf-8")
    return failure, path


def wrong_arguments(args: tuple, rng: np.random.Generator) -> tuple | None:
    """``args`` with one tensor argument replaced by one of another size along one axis (or,
    one time in four, of another dtype), values drawn afresh; None when there is no tensor of
    rank 1 or more to change."""
    tensors = [i for i, a in enumerate(args) if isinstance(a, np.ndarray) and a.ndim]
    if not tensors:
        return None
    i = tensors[rng.integers(len(tensors))]
    shape, dtype = list(args[i].shape), args[i].dtype
    if rng.integers(4) == 0:
        dtype = np.dtype(np.float64 if dtype != np.float64 else np.float32)
    else:
        axis = rng.integers(len(shape))
        shape[axis] = int(rng.choice([size for size in range(2 * shape[axis] + 3) if size != shape[axis]]))
    value = (rng.standard_normal(shape) * 3).astype(dtype) if dtype.kind != "b" else rng.random(shape) < 0.5
    return args[:i] + (value,) + args[i + 1:]


def _backend_names(others: list[str]) -> list[str]:
    """The reference first, then the other backends."""
    return [REFERENCE] + [name for name in others if name != REFERENCE]


def default_features(backends: list[str]) -> Features:
    """Every construct, ``Grad`` included; no float16 where CUDA runs (it has no float16 kernels
    and refuses them with a clear error, tested in tests/cuda)."""
    if "cuda" in backends:
        return Features(grad=True, dtypes=tuple(d for d in DEFAULT_DTYPES if d != FloatType(16)))
    return Features(grad=True)


def run(examples: int, seed: int, others: list[str], out_dir: Path, features: Features | None = None,
        wrong: float = 0.0, seconds: float = TIME_LIMIT, generate: Callable[[int], Iterator[Program]] | None = None) -> Report:
    """Check ``examples`` generated programs (``random_programs(seed)`` with ``features``,
    by default ``default_features``) in the evaluator and in each
    backend of ``others``; the first failure is minimized and written under ``out_dir``. A
    fraction ``wrong`` of the programs get arguments that break their types
    (``wrong_arguments``): every backend must refuse them alike, or compute alike where they
    fit after all. A program that runs past ``STEP_LIMIT`` calls in the evaluator or past
    ``seconds`` in all is a failure too, written as generated (not minimized). ``generate``, when
    given, makes the programs from the seed instead (``ix_programs.index_programs``: operators
    defined by index expressions, forgotten after their program)."""
    names = _backend_names(others)
    timed = {name: _Timed(backend(name), STEP_LIMIT if name == REFERENCE else None) for name in names}
    report = Report(seed, names)
    rng = np.random.default_rng([seed, 1])  # the wrong arguments; programs come from ``seed`` alone

    def check_all(program: Program, runners: dict[str, _Timed]) -> None:
        """The evaluator once, first (a program that does not end stops here), then each backend
        against its result."""
        expected, raised = None, None
        try:
            expected = runners[REFERENCE](program.module, program.entry, *copy.deepcopy(program.args))
        except StepLimitError as error:
            if runners[REFERENCE].max_calls != STEP_LIMIT:
                raise  # the minimizer's smaller bound: a candidate that lost a loop's exit
            raise NotEnding(f"the program did not end within {STEP_LIMIT} calls in the evaluator: "
                            f"generated programs end by construction ({error})") from None
        except Exception as error:  # noqa: BLE001 - the evaluator's raise is its answer, compared below
            raised = error

        def reference(module: Module, name: str, *args: Any) -> Any:
            if raised is not None:
                raise raised
            return copy.deepcopy(expected)

        for name in names[1:]:
            check_equivalent(program.module, program.module, program.entry, program.args,
                             backend_a=runners[name], backend_b=reference)

    start = time.perf_counter()
    programs = generate(seed) if generate is not None else random_programs(seed, features or default_features(names))
    for program in itertools.islice(programs, examples):
        changed = wrong_arguments(program.args, rng) if rng.random() < wrong else None
        if changed is not None:
            program = attrs.evolve(program, args=changed)
            report.wrong += 1
        counts = coverage(program.module)
        report.coverage.update(counts)
        report.sizes.append(sum(v for k, v in counts.items() if not k.startswith("@")))
        report.op_calls.append(sum(v for k, v in counts.items() if k.startswith("@")))
        report.checked += 1
        try:
            with _limited(seconds):
                check_all(program, timed)
        except (NotEnding, TimeLimitExceeded) as error:  # not minimized: every candidate would take as long
            running = next((n for n, r in timed.items() if r.running), REFERENCE)
            message = f"{error} (running: {running})"
            report.failure, report.failure_file = _write_failure(program, program.module, message, names, seed, out_dir)
            break
        except EquivalenceError as error:
            failed = program

            def again(module: Module, max_calls: int | None) -> None:
                limits = {n: max_calls or (STEP_LIMIT if n == REFERENCE else None) for n in names}
                try:
                    with _limited(seconds):
                        check_all(attrs.evolve(failed, module=module), {n: _Timed(backend(n), limits[n]) for n in names})
                except (NotEnding, TimeLimitExceeded) as slow:
                    raise RuntimeError(str(slow)) from None  # a candidate that fails otherwise: not this failure

            small, final = minimized_failure(again, failed.module, failed.entry, error)
            report.failure, report.failure_file = _write_failure(attrs.evolve(failed, module=small), failed.module,
                                                                 str(final), names, seed, out_dir)
            break
        if changed is not None and isinstance(timed[REFERENCE].raised, RelayRuntimeError):
            report.refused += 1  # the reference refused, and every backend agreed with it
        for name, decl in program.module.op_decls.items():
            if isinstance(decl, IndexDecl):
                unregister(name)
    report.seconds = time.perf_counter() - start
    report.backend_seconds = {name: runner.seconds for name, runner in timed.items()}
    return report


def _share(examples: int, seed: int, others: list[str], out_dir: Path, features: Features | None, wrong: float,
           seconds: float, jobs: int, k: int, generate: Callable[[int], Iterator[Program]] | None) -> Report:
    """Job ``k`` of ``jobs``: its part of the programs, with seed ``seed + k``."""
    return run(examples // jobs + (k < examples % jobs), seed + k, others, out_dir, features, wrong, seconds, generate)


def run_jobs(examples: int, seed: int, others: list[str], out_dir: Path, features: Features | None = None,
             wrong: float = 0.0, jobs: int = 1, seconds: float = TIME_LIMIT,
             generate: Callable[[int], Iterator[Program]] | None = None) -> Report:
    """``run`` split over ``jobs`` processes (job k: seed ``seed + k``), one merged report.

    Processes, not threads: the backends compile and run under the GIL. A job whose process
    dies (a crash in compiled code) is a failure of the whole run, named by its seed."""
    jobs = max(1, min(jobs, examples))
    if jobs == 1:
        return run(examples, seed, others, out_dir, features, wrong, seconds, generate)
    from concurrent.futures import ProcessPoolExecutor

    start = time.perf_counter()
    merged = Report(seed, _backend_names(others), jobs=jobs)
    with ProcessPoolExecutor(jobs, mp_context=multiprocessing.get_context("spawn")) as pool:
        futures = [pool.submit(_share, examples, seed, others, out_dir, features, wrong, seconds, jobs, k, generate)
                   for k in range(jobs)]
        for k, future in enumerate(futures):
            try:
                part = future.result()
            except Exception as error:  # noqa: BLE001 - a dead worker; the run must fail, not stop here
                if merged.failure is None:
                    merged.failure = f"job {k} (seed {seed + k}) ended without a report: {type(error).__name__}: {error}"
                continue
            merged.checked += part.checked
            merged.wrong += part.wrong
            merged.refused += part.refused
            merged.sizes += part.sizes
            merged.op_calls += part.op_calls
            merged.coverage.update(part.coverage)
            for name, seconds in part.backend_seconds.items():
                merged.backend_seconds[name] = merged.backend_seconds.get(name, 0.0) + seconds
            if merged.failure is None and part.failure is not None:
                merged.failure, merged.failure_file = part.failure, part.failure_file
    merged.seconds = time.perf_counter() - start
    return merged
