"""``jit.compile(module, name)``: a callable running the global as generated Python over
Numba kernels (``relayish.compile`` is this with the evaluator as its first tier).

The program is type-checked and its ``Grad`` nodes expanded (``runtime.prepare``, as for the
evaluator), optimized (``jit.passes``, ``opt_level``), then lowered once: kernels are chosen by the static dtypes and ranks, which every argument type
of a specialization shares (sizes stay dynamic); ``specializations`` records each distinct
argument type seen, and Numba specializes each kernel further on the arrays' layouts. ``.source`` shows the
generated Python, for debugging.

The JIT does not import the evaluator (the two are sibling layers, docs/design.md): the first
tier of a straight-line program (jit/tiers.py) is whatever runner the caller passes as
``first_tier``; ``relayish.compile`` and ``@relay`` pass the evaluator's (``interp.run_prepared``).
"""

from __future__ import annotations

import builtins
from contextlib import nullcontext
import subprocess
from pathlib import Path
from typing import Any, Callable, Sequence

import numpy as np

from relayish.errors import RelayRuntimeError
from relayish.expr import Function
from relayish.module import Module
from relayish.tracebacks import user_facing
from relayish.types import FuncType
from runtime.prepare import prepared
from runtime.values import check_arguments

from . import precompile, tiers
from .collector import older_objects_frozen
from .kernels.blas import calls_blas, fit_blas_threads
from .kernels.registry import cache_dir, numba_cache_failures, purge_numba_caches
from .passes import DEFAULT_OPT_LEVEL, explain, optimize
from .lower import RECURSION_LIMIT, CallBudget, CompileError, python_guard
from .program import lower_program
from .program_cache import cached_program
from .scalars import HOST, Boundary

# runs ``@name`` of a prepared module on checked arguments, with ``max_calls`` (interp.run_prepared)
FirstTier = Callable[[Module, str, Sequence[Any], int | None], Any]


class CompiledFunction:
    """Global ``@name`` of ``module``, compiled for ``target``; call it with NumPy arrays."""

    def __init__(self, module: Module, name: str, target: str = "cpu", opt_level: int = DEFAULT_OPT_LEVEL,
                 max_calls: int | None = None, tiered: bool | None = None, first_tier: FirstTier | None = None):
        if name not in module:
            raise KeyError(f"module has no global @{name}")
        self.boundary = target_boundary(target)
        self.name = name
        self.target = target
        self.opt_level = opt_level
        self.max_calls = max_calls
        self.budget = None if max_calls is None else CallBudget(max_calls)
        # typed, Grad expanded, optimized; from the disk cache where an earlier process did that
        self.module = cached_program(module, name, opt_level, lambda: optimize(prepared(module), name, opt_level))
        self.params = self.module[name].params
        self.fn_type = declared_function_type(self.module[name])  # prepared modules are typed
        # arguments and result cross unchanged (no scalar to unwrap, no device): the boundary is skipped
        self.plain = target == "cpu" and all(tiers.tensors(t, min_rank=1) for t in [*self.fn_type.params, self.fn_type.ret])
        self.specializations: dict[tuple, Any] = {}
        self._program: tuple[str, Any] | None = None
        # the first call runs on the evaluator (jit/tiers.py), when the caller gave it
        self.first_tier = first_tier
        self.evaluator_first = target == "cpu" and first_tier is not None and \
            tiers.evaluator_first(self.module, name, self.fn_type, tiered)
        self.ahead: subprocess.Popen | None = None  # the second process compiling the kernels (jit/precompile.py)

    def program(self) -> tuple[str, Any]:
        """The generated source and the entry function (lowered on first use)."""
        if self._program is None:
            lowering, native, source = lower_program(self.module, self.name, self.target, self.budget)
            if self.target == "cpu" and self.ahead is None:
                self.ahead = precompile.start(lowering.kernel_calls)
            namespace = dict(lowering.namespace)
            exec(builtins.compile(source, f"<relayish jit @{self.name}>", "exec"), namespace)  # noqa: S102 - our own code
            self._program = (source, namespace[lowering.global_names[self.name]])
            self.warns = lowering.numpy_scalars or self.target != "cpu"
            self.guarded = self.name not in native  # a native entry guards its Python version itself
            self.heap_objects = lowering.heap_objects
            # straight-line Python over kernels: no recursion to make room for, no warnings to silence
            self.bare = not (self.warns or lowering.python_calls or self.heap_objects)
            self.blas = self.target == "cpu" and any(map(calls_blas, lowering.namespace.values()))
        return self._program

    @property
    def source(self) -> str:
        return self.program()[0]

    def explain(self) -> str:
        """The optimized program this function runs (its globals) and its fused kernels."""
        return explain(self.module, self.name, self.opt_level)

    @user_facing
    def __call__(self, *args: Any) -> Any:
        if len(args) != len(self.params):
            raise RelayRuntimeError(f"@{self.name} takes {len(self.params)} arguments, got {len(args)}")
        # Arrays of dtypes and shapes seen before passed the checks then, and would pass them unchanged again.
        key = array_key(args)
        entry = None if key is None else self.specializations.get(key)
        checked = args
        if entry is None:
            checked = check_arguments(self.params, args, {}, self.name, self.module.type_defs)
            key = tuple(value_type(a) for a in checked)
            entry = self.specializations.get(key)
            if entry is None:
                if self.evaluator_first:
                    self.evaluator_first = False
                    if self._program is None:  # not lowered: the second process lowers it too
                        self.ahead = precompile.start_program(self.module, self.name)
                    return self.first_tier(self.module, self.name, checked, self.max_calls)
                entry = self.specializations[key] = self.program()[1]
                try:
                    return self.run_once(entry, checked)
                finally:  # this call loaded or compiled every kernel it needs: the second process is done
                    if self.ahead is not None:
                        precompile.stop(self.ahead)
        return self.run_once(entry, checked)

    def run_once(self, entry: Any, checked: list) -> Any:
        """``run``, again after each damaged file of Numba's cache it met is deleted (what it held
        compiles again); a file that fails again is an error."""
        purged: set[frozenset[Path]] = set()
        while True:
            try:
                return self.run(entry, checked)
            except DamagedCache as damaged:
                failed = frozenset(damaged.indexes)  # empty: not told which, every kernel loaded
                if failed in purged:
                    raise RelayRuntimeError(f"@{self.name}: Numba's kernel cache in {cache_dir()} fails to load "
                                            f"even after its files were deleted: {damaged.__cause__!r}") from None
                purged.add(failed)
                purge_numba_caches(damaged.indexes)

    def run(self, entry: Any, checked: list) -> Any:
        fn_type = self.fn_type
        if self.budget is not None:
            self.budget.reset()
        try:
            if not self.guarded:
                result = entry(*(self.boundary.inward(a, t) for a, t in zip(checked, fn_type.params)))
                return self.boundary.outward(result, fn_type.ret)
            if self.blas:
                fit_blas_threads()
            if self.bare and self.plain:
                return entry(*checked)
            with python_guard(self.warns), older_objects_frozen() if self.heap_objects else nullcontext():
                if self.plain:
                    return entry(*checked)
                result = entry(*(self.boundary.inward(a, t) for a, t in zip(checked, fn_type.params)))
            return self.boundary.outward(result, fn_type.ret)
        except Exception as err:
            failed = numba_cache_failures(err)
            if failed is not None:
                raise DamagedCache(failed) from err
            if isinstance(err, RecursionError):
                raise RelayRuntimeError(f"@{self.name}: non-tail recursion deeper than {RECURSION_LIMIT:,} calls in "
                                        "compiled code (tail calls are loops; relayish.evaluate has no such limit)") from None
            if isinstance(err, (ZeroDivisionError, IndexError, ValueError, OverflowError)):
                raise RelayRuntimeError(f"@{self.name}: {type(err).__name__}: {err}") from None
            if isinstance(err, MemoryError):  # a kernel's working memory (im2col): results are checked when lowered
                raise RelayRuntimeError(f"@{self.name} ran out of memory: a kernel's working memory does not fit, "
                                        f"though the tensors it makes do ({err or 'allocation failed'})") from None
            raise


class DamagedCache(Exception):
    """Numba failed reading its cache files (flipped bytes, truncation: it checks neither)."""

    def __init__(self, indexes: list[Path]):
        super().__init__(indexes)
        self.indexes = indexes


def target_boundary(target: str) -> Boundary:
    """How arguments and results cross into ``target``'s memory (checked before any work)."""
    if target == "cpu":
        return HOST
    if target == "cuda":
        from .cuda import runtime  # lazy: it imports numba.cuda, which only the CUDA target needs

        if not runtime.available():
            raise RuntimeError("target 'cuda' needs an NVIDIA GPU with its driver, or Numba's simulator: set "
                               "NUMBA_ENABLE_CUDASIM=1 before numba is imported")
        return runtime.BOUNDARY
    raise ValueError(f"unknown target {target!r} (targets: cpu, cuda)")


def declared_function_type(fn: Function) -> FuncType:
    """A typed global's type (``infer`` annotates every parameter and the result)."""
    return FuncType([p.type_annotation for p in fn.params], fn.ret_type)


def array_key(values: tuple) -> tuple | None:
    """``value_type`` of each of ``values`` when they are NumPy arrays, possibly in tuples (what the
    argument checks return unchanged), else None: the per-call fast path, in one pass."""
    key = []
    for value in values:
        if isinstance(value, np.ndarray):
            key.append((value.dtype, value.shape))
        elif isinstance(value, tuple):
            inner = array_key(value)
            if inner is None:
                return None
            key.append(inner)
        else:
            return None
    return tuple(key)


def value_type(value: Any) -> Any:
    """The specialization key of an argument: dtype and shape of tensors, structurally."""
    if isinstance(value, tuple):
        return tuple(value_type(v) for v in value)
    if hasattr(value, "dtype") and hasattr(value, "shape"):
        return (value.dtype, value.shape)
    return type(value)


@user_facing
def compile(module: Module, name: str, target: str = "cpu",  # noqa: A001 - the public name
            opt_level: int = DEFAULT_OPT_LEVEL, max_calls: int | None = None,
            tiered: bool | None = None, first_tier: FirstTier | None = None) -> CompiledFunction:
    """``@name`` of ``module`` compiled for ``target``: "cpu", or "cuda" (an NVIDIA GPU, or
    Numba's simulator with ``NUMBA_ENABLE_CUDASIM=1``), after the optimizer's passes of
    ``opt_level`` (0 to 3, default 3: docs/optimizer.md).

    ``max_calls`` (optional) bounds the calls of functions in each call of the result, as
    ``relayish.evaluate``'s does: past it, a ``StepLimitError``. Calls are those of the optimized
    program (a function the optimizer inlined is no call), and scalar functions then run as
    Python rather than natively, to count.

    ``tiered``: whether a straight-line program's first call runs on the evaluator while its
    kernels compile (jit/tiers.py); None (the default) leaves it to ``RELAYISH_TIERED`` (on
    unless set to 0). ``first_tier``: the evaluator that call runs on (``interp.run_prepared``,
    which ``relayish.compile`` passes: the JIT does not import the evaluator); without one every
    call runs compiled."""
    return CompiledFunction(module, name, target, opt_level, max_calls, tiered, first_tier)


__all__ = ["CompileError", "CompiledFunction", "compile"]
