"""``relayish difftest``: generated programs through several backends, against the evaluator.

Each generated program (``strategies.programs``) runs in the reference evaluator and in
every other chosen backend on the same arguments; results must agree (``check_equivalent``).
Backends are named: ``roundtrip`` evaluates the program after printing and parsing its
typed text; ``pass:MODULE:FUNCTION`` evaluates the output of your IR-to-IR pass; ``jit``
and ``cuda`` run the compiled program (CUDA: on a GPU, or with ``NUMBA_ENABLE_CUDASIM=1``). A failure is minimized (``minimize``) and written to a ``.rly``
file whose comments hold the error and the arguments, so it can be re-run and read.
"""

from __future__ import annotations

import collections
import functools
import importlib
import statistics
import time
from pathlib import Path
from typing import Any, Callable

import attrs
import numpy as np

from interp import evaluate
from typecheck import infer

from ..errors import RelayRuntimeError
from ..expr import EXPR_CLASSES
from ..module import Module
from ..ops.registry import all_ops
from ..parser import parse
from ..printer import astext
from .checks import EquivalenceError, check_equivalent, minimized_failure
from .strategies import Features, Program, coverage, programs

REFERENCE = "interp"


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
    """A backend that adds up the seconds it runs."""

    fn: Callable[..., Any]
    max_calls: int | None = None
    seconds: float = 0.0

    def __call__(self, module: Module, name: str, *args: Any) -> Any:
        start = time.perf_counter()
        try:
            return self.fn(module, name, *args, max_calls=self.max_calls)
        finally:
            self.seconds += time.perf_counter() - start


@attrs.define
class Report:
    """What one difftest run found."""

    seed: int
    backends: list[str]
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
        rows = [
            f"relayish difftest: seed {self.seed}; {self.backends[0]} (reference) against {', '.join(self.backends[1:])}",
            f"{'programs checked':<22}{self.checked}",
            f"{'failures':<22}{0 if self.failure is None else 1}",
            f"{'time':<22}{self.seconds:.1f} s ({per:.0f} ms a program, generation and checking included)",
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
            rows += ["", f"FAILED, minimized program written to {self.failure_file}:", self.failure]
        return rows


def _failure_text(program: Program, original: Module, error: Exception, backends: list[str], seed: int) -> str:
    with np.printoptions(threshold=100, precision=17):
        args = [f"# argument {i + 1}: {arg!r}".replace("\n", "\n#   ") for i, arg in enumerate(program.args)]
    message = "\n".join("# " + line for line in str(error).splitlines())
    text = astext(infer(program.module))
    sizes = f"# minimized from a program of {len(astext(original).splitlines())} lines to {len(text.splitlines())}"
    head = f"# relayish difftest failure (seed {seed}): {backends[0]} against {', '.join(backends[1:])}"
    return "\n".join([head, sizes, message, "# arguments of @main:", *args, text])


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


def run(examples: int, seed: int, others: list[str], out_dir: Path, features: Features | None = None,
        wrong: float = 0.0) -> Report:
    """Check ``examples`` generated programs (hypothesis seed ``seed``; every construct,
    ``Grad`` included, unless ``features`` says otherwise) in the evaluator and in each
    backend of ``others``; a failure is minimized and written under ``out_dir``. A fraction
    ``wrong`` of the programs get arguments that break their types (``wrong_arguments``):
    every backend must refuse them alike, or compute alike where they fit after all."""
    from hypothesis import HealthCheck, Phase, given, settings
    from hypothesis import seed as with_seed
    from hypothesis import strategies as st

    names = [REFERENCE] + [name for name in others if name != REFERENCE]
    timed = {name: _Timed(backend(name)) for name in names}
    report = Report(seed, names)
    failing: list[Program] = []

    def check_all(program: Program, runners: dict[str, _Timed]) -> None:
        for name in names[1:]:
            check_equivalent(program.module, program.module, program.entry, program.args,
                             backend_a=runners[name], backend_b=runners[REFERENCE])

    @with_seed(seed)
    @settings(max_examples=examples, database=None, deadline=None, phases=[Phase.generate],
              suppress_health_check=list(HealthCheck))
    @given(programs(features or Features(grad=True)), st.integers(0, 2**32 - 1))
    def each(program: Program, draw: int) -> None:
        rng = np.random.default_rng(draw)
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
            check_all(program, timed)
        except EquivalenceError:
            failing.append(program)
            raise
        if changed is not None:
            try:
                evaluate(program.module, program.entry, *program.args)
            except RelayRuntimeError:
                report.refused += 1

    start = time.perf_counter()
    try:
        each()
    except EquivalenceError as error:
        program = failing[-1]

        def again(module: Module, max_calls: int | None) -> None:
            check_all(attrs.evolve(program, module=module), {n: _Timed(backend(n), max_calls) for n in names})

        small, final = minimized_failure(again, program.module, program.entry, error)
        out_dir.mkdir(parents=True, exist_ok=True)
        report.failure_file = out_dir / f"difftest-seed{seed}.rly"
        report.failure = _failure_text(attrs.evolve(program, module=small), program.module, final, names, seed)
        report.failure_file.write_text(report.failure + "\n", encoding="utf-8")
    report.seconds = time.perf_counter() - start
    report.backend_seconds = {name: runner.seconds for name, runner in timed.items()}
    return report
