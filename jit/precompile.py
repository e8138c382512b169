"""Compiling ahead: a second process compiles a program's kernels while its first call runs.

Why: with an empty cache a program's first call is mostly Numba compiling its kernels, one
after another on one core (the LeNet demo's first training step: about 30 s on two cores).
Lowering knows every kernel a program calls and its arguments' dtypes and ranks, so a second
process compiles them into the disk cache starting from the program's end while the calling
process compiles from its start; when the calling process reaches a kernel the other has
finished, Numba loads its machine code from the cache. Both run the same compiler on the same
source, so the machine code, and every result, are the same whichever process compiled a
kernel.

Signatures are predicted: arrays of the lowered dtypes and ranks, F-ordered where the argument
is a transposed view of a matrix (lowering binds those) and the kernel's module is compiled per
layout (``PER_LAYOUT``: BLAS products, views), C-ordered otherwise (fresh results and
the user's arrays); a kernel called with another layout compiles in the calling process as
before. The second process starts only
where at least ``MIN_KERNELS`` kernels have no cached machine code yet and this process may
run on two cores or more that other processes do not keep busy; it skips kernels the calling process cached meanwhile, imports only
cache files whose content matches the hash in their name, exits when done, and is stopped when
the calling process exits or its call that lowered the program returns (from then on the
second process could only duplicate work and take a core from the program). ``RELAYISH_COMPILE_AHEAD=0`` turns it off.

Run as ``python -m jit.precompile --plan`` by ``start``, with the plan as JSON on stdin, or
as ``python -m jit.precompile --program`` by ``start_program``, with the optimized program
pickled on stdin: a program whose first call runs on the evaluator (jit/tiers.py) is not
lowered by the calling process until its second call, so the second process lowers it
itself and compiles every kernel not cached yet, last first (no ``MIN_KERNELS`` there).
"""

from __future__ import annotations

import atexit
import json
import os
import pickle
import subprocess
import sys
from pathlib import Path
from typing import Any, Sequence

from relayish.module import Module

from . import threads
from .kernels.registry import PACKAGE, import_file, source_digest
from .program import lower_program
from .program_cache import flatten, unflatten
from .tiers import switched_off

MIN_KERNELS = 3  # below this, the second process's start (~1.5 s: imports, Numba's first compile) does not pay

_RUNNING: list[subprocess.Popen] = []


def enabled() -> bool:
    """``RELAYISH_COMPILE_AHEAD`` (default on), at least two usable cores, and no other process
    keeping them busy (``jit.threads.busy_elsewhere``: there the two compilers would share one core)."""
    if switched_off("RELAYISH_COMPILE_AHEAD"):
        return False
    cores = len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else (os.cpu_count() or 1)
    return cores >= 2 and not threads.busy_elsewhere()


def _source_file(kernel: Any) -> Path:
    return Path(kernel.py_func.__code__.co_filename)


def compiled_part(kernel: Any) -> Any | None:
    """The Numba function a kernel call compiles with the kernel's arguments: the kernel, or where
    the kernel is Python choosing how to run, the Numba function it calls with its own arguments on
    one thread: an elementwise kernel's ``_serial`` loop, a fused group's ``_fused``."""
    if hasattr(kernel, "py_func"):
        return kernel
    module = sys.modules.get(getattr(kernel, "__module__", ""))
    for name in ("_serial", "_fused"):
        part = getattr(module, name, None)
        if hasattr(part, "py_func"):
            return part
    return None


def compiled_before(kernel: Any) -> bool:
    """Whether Numba's cache holds machine code for ``kernel`` (its index file exists)."""
    source = _source_file(kernel)
    return any((source.parent / "__pycache__").glob(f"{source.stem}.{kernel.py_func.__name__}-*.nbi"))


def pending(calls: Sequence[tuple[Any, Sequence[Any], str]]) -> list[tuple[Any, list[list]]]:
    """The Numba functions that kernel ``calls`` (a kernel, its ArgTypes and their predicted
    layouts, ``C`` or ``F``, in program order) compile and that have no cached machine code,
    each once with its predicted arguments (dtype, rank, layout), in program order."""
    todo: list[tuple[Any, list[list]]] = []
    seen: set[tuple[int, tuple]] = set()
    for kernel, arg_types, layouts in calls:
        fn = compiled_part(kernel)
        key = (id(fn), tuple(arg_types), layouts)
        if fn is None or key in seen or compiled_before(fn):
            continue
        seen.add(key)
        per_layout = fn.py_func.__globals__.get("PER_LAYOUT")  # others run F-ordered arrays as C copies (registry)
        todo.append((fn, [[t.dtype, t.rank, layout if t.rank >= 2 and per_layout else "C"] for t, layout in zip(arg_types, layouts)]))
    return todo


def plan(calls: Sequence[tuple[Any, Sequence[Any], str]]) -> dict[str, Any] | None:
    """What the second process does for kernel ``calls`` (as ``pending`` takes them): the cache
    files to import, in this process's order (helper modules before the kernels that import
    them), and the kernels to compile, last first; None when too few need compiling."""
    todo = [{"file": str(_source_file(fn)), "function": fn.py_func.__name__, "args": args}
            for fn, args in pending(calls)]
    if len(todo) < MIN_KERNELS:
        return None
    wanted = {entry["file"] for entry in todo}
    files = [getattr(m, "__file__", None) for name, m in list(sys.modules.items())
             if name.startswith((PACKAGE + "h_", PACKAGE + "k_"))]
    modules = [f for f in files if f is not None and (Path(f).name.startswith("h_") or f in wanted)]
    return {"modules": modules, "compile": todo[::-1]}


def start(calls: Sequence[tuple[Any, Sequence[Any], str]]) -> subprocess.Popen | None:
    """Start the second process for kernel ``calls`` where it pays (module docstring)."""
    if not enabled():
        return None
    work = plan(calls)
    return None if work is None else _spawn("--plan", json.dumps(work).encode())


def start_program(module: Module, name: str) -> subprocess.Popen | None:
    """Start the second process for ``@name`` of an optimized ``module`` that this process has
    not lowered (its first call runs on the evaluator, jit/tiers.py): it lowers the program
    itself, then compiles the kernels not cached yet, last first."""
    if not enabled():
        return None
    return _spawn("--program", pickle.dumps((flatten(module), name), protocol=pickle.HIGHEST_PROTOCOL))


def _spawn(mode: str, work: bytes) -> subprocess.Popen:
    root = str(Path(__file__).resolve().parents[1])
    env = {**os.environ, "PYTHONPATH": os.pathsep.join(p for p in (root, os.environ.get("PYTHONPATH")) if p),
           "RELAYISH_COMPILE_AHEAD": "0"}
    proc = subprocess.Popen([sys.executable, "-m", "jit.precompile", mode], stdin=subprocess.PIPE,
                            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, env=env, cwd=root)
    try:
        proc.stdin.write(work)
        proc.stdin.close()
    except OSError:  # it could not start its work: the calling process compiles everything, as without it
        proc.kill()
    _RUNNING[:] = [p for p in _RUNNING if p.poll() is None]  # poll reaps those done: no zombies pile up
    _RUNNING.append(proc)
    return proc


def stop(proc: subprocess.Popen | None = None) -> None:
    """Stop the second process ``proc``, or all those still running (at exit): their work is only
    ever ahead of ours, and once a call has loaded a program's kernels, the process compiling
    them could only take a core from the program."""
    for one in [proc] if proc is not None else _RUNNING[::-1]:
        if one in _RUNNING:
            _RUNNING.remove(one)
        if one.poll() is None:
            one.terminate()
            try:
                one.wait(timeout=5)
            except subprocess.TimeoutExpired:
                one.kill()


atexit.register(stop)


def run(work: dict[str, Any]) -> int:
    """The second process: import the plan's modules, compile its kernels; the number compiled.
    A module whose content does not have the hash its name ends with (registry.load names them
    so) is not imported: nothing is compiled then."""
    modules = {}
    for name in work["modules"]:
        path = Path(name)
        try:
            data = path.read_bytes()
        except OSError:
            return 0
        if source_digest(data) != path.stem.rsplit("_", 1)[-1]:
            return 0
        modules[name] = import_file(path, data.decode("utf-8"))
    return compile_all([(getattr(modules.get(entry["file"]), entry["function"], None), entry["args"])
                        for entry in work["compile"]])


def run_program(module: Module, name: str) -> int:
    """The second process for a program not lowered by the caller: lower it, compile its
    kernels not cached yet, last first; the number compiled."""
    lowering, _, _ = lower_program(module, name, "cpu")
    return compile_all(pending(lowering.kernel_calls)[::-1])


def compile_all(todo: Sequence[tuple[Any, list[list]]]) -> int:
    """Compile each Numba function for its arguments (dtype, rank, layout), skipping those whose
    machine code the calling process cached meanwhile; the number compiled."""
    import numba  # lazy: numba, in the second process only
    import numpy as np
    from numba import types

    done = 0
    ours: set[int] = set()  # functions this process compiled: their cache files are no sign of the caller's work
    for fn, args in todo:
        if fn is None or (id(fn) not in ours and compiled_before(fn)):
            continue
        ours.add(id(fn))
        signature = tuple(types.Array(numba.from_dtype(np.dtype(dtype)), rank, layout) for dtype, rank, layout in args)
        try:
            fn.compile(signature)
        except Exception:  # noqa: BLE001 - a signature the kernel rejects: the calling process reports its own error
            continue
        done += 1
    return done


if __name__ == "__main__":
    if sys.argv[1:] == ["--program"]:
        flat, entry = pickle.loads(sys.stdin.buffer.read())  # noqa: S301 - written by our own parent process
        run_program(unflatten(flat), entry)
    else:
        run(json.loads(sys.stdin.read()))
