"""Kernels: one Numba function per (operator, attributes, argument types, target).

Each operator has a *generator*: given the operator's full attributes and its arguments'
concrete tensor types (dtype and rank; sizes stay dynamic), it returns the Python source
of a module defining ``kernel(*arrays) -> array`` (decorated with ``numba.njit``).
Attributes are baked into the source, so each kernel is specialized to them. The source
is written as a real ``.py`` file under the cache directory (``RELAYISH_CACHE_DIR``,
default ``~/.cache/relayish``) and imported from there, so Numba's own ``cache=True``
keeps the machine code: a second process finds both and compiles nothing.

Cache files are named by a hash of their source; a file whose content does not match its
name (corrupted, truncated) is rewritten; files are written to a temporary name and
renamed, so processes filling the cache at once never see half a file.
"""

from __future__ import annotations

import hashlib
import importlib.util
import os
import pickle
import sys
import tempfile
from pathlib import Path
from typing import Any, Callable, Sequence

import attrs

from relayish.types import BaseType, Shape, TensorType, Type

Generator = Callable[[dict, Sequence["ArgType"]], str]

TARGETS = ("cpu", "cuda")
PACKAGE = "relayish_kernels."  # kernel and helper modules are imported under it (``import_file``)
# target -> operator name -> kernel source generator
GENERATORS: dict[str, dict[str, Generator]] = {target: {} for target in TARGETS}


@attrs.frozen
class ArgType:
    """What a kernel is specialized to: the NumPy dtype name and the rank."""

    dtype: str
    rank: int

    @staticmethod
    def of(ty: Type) -> ArgType:
        if not (isinstance(ty, TensorType) and isinstance(ty.dtype, BaseType) and isinstance(ty.shape, Shape)):
            raise TypeError(f"kernels take tensors of a concrete dtype and rank, not {ty}")
        return ArgType(ty.dtype.to_numpy().name, ty.shape.rank)


def generator(*names: str, target: str = "cpu") -> Callable[[Generator], Generator]:
    """Register a kernel source generator for operators ``names`` on ``target``."""

    def register(fn: Generator) -> Generator:
        for name in names:
            if name in GENERATORS[target]:
                raise ValueError(f"operator {name} already has a {target} kernel generator")
            GENERATORS[target][name] = fn
        return fn

    return register


PARALLEL_OFF = 2**62


def parallel_min() -> int:
    """Elements from which elementwise kernels take their parallel loop: ``RELAYISH_PARALLEL_MIN``
    (unset or 0: never; measurements in ``jit/kernels/elementwise.py``)."""
    configured = int(os.environ.get("RELAYISH_PARALLEL_MIN") or 0)
    return configured if configured > 0 else PARALLEL_OFF


def cache_dir() -> Path:
    """``RELAYISH_CACHE_DIR``, else ``$XDG_CACHE_HOME/relayish``, else ``~/.cache/relayish``."""
    configured = os.environ.get("RELAYISH_CACHE_DIR")
    if configured:
        return Path(configured)
    base = os.environ.get("XDG_CACHE_HOME") or os.path.join(os.path.expanduser("~"), ".cache")
    return Path(base) / "relayish"


_KERNELS: dict[tuple, Callable[..., Any]] = {}  # in-memory: key -> compiled kernel
COUNTERS = {"kernels_generated": 0}  # kernel modules written to the cache in this process


def _key(name: str, attrs_: dict, args: Sequence[ArgType], target: str) -> tuple:
    return (name, tuple(sorted((k, repr(v)) for k, v in attrs_.items())), tuple(args), target)


# the modules that register generators, per target (CUDA's import numba.cuda: only on demand)
FAMILIES = {"cpu": ("jit.kernels.elementwise", "jit.kernels.reduce", "jit.kernels.shape", "jit.kernels.nn"),
            "cuda": ("jit.cuda.elementwise", "jit.cuda.reduce", "jit.cuda.shape", "jit.cuda.nn")}


def load_generators(target: str = "cpu") -> dict[str, Generator]:
    if target not in GENERATORS:
        raise ValueError(f"unknown target {target!r} (targets: {', '.join(TARGETS)})")
    for family in FAMILIES[target]:
        importlib.import_module(family)
    return GENERATORS[target]


def kernel(name: str, attrs_: dict, args: Sequence[ArgType], target: str = "cpu") -> Callable[..., Any]:
    """The kernel of operator ``name`` for these attributes and argument types."""
    generators = load_generators(target)
    key = _key(name, attrs_, args, target)
    found = _KERNELS.get(key)
    if found is None:
        if name not in generators:
            raise NotImplementedError(f"operator {name} has no {target} kernel")
        module = load(generators[name](attrs_, list(args)), name, target)
        if target == "cuda":
            from jit.cuda.launch import Launcher

            found = Launcher(name, attrs_, module)
        else:
            found = module.kernel
        _KERNELS[key] = found
    return found


def kernel_from_source(name: str, source: str, target: str = "cpu") -> Callable[..., Any]:
    """The ``kernel`` of a generated module that no operator generator writes (a fusion group,
    jit/kernels/fused.py), cached in memory by its source and on disk like every kernel."""
    key = (name, source, target)
    found = _KERNELS.get(key)
    if found is None:
        found = _KERNELS[key] = load(source, name, target).kernel
    return found


def shared(source: str, name: str, names: Sequence[str]) -> str:
    """A kernel-module line importing ``names`` from the helper module of ``source`` (a CPU module,
    ``h_*.py``, loaded and cached on disk like a kernel's; it must import what it uses).

    Why: kernels that each define the same helper make Numba type and compile it once per kernel
    (a LeNet training step compiled the BLAS call six times, the softmax family's sums twice:
    about a fifth of its first step); imported from one module, a helper compiles once per process
    and signature. The line names the helper module's file, whose name is its source's hash, so a
    kernel's cached machine code (which contains its helpers') is never reused beside other helpers."""
    module = load(source, name, prefix="h")
    return f"from {module.__name__} import {', '.join(names)}\n"


def load(source: str, name: str, target: str = "cpu", prefix: str = "") -> Any:
    """Import the kernel module of ``source`` from the cache directory (writing it first
    when it is missing or does not match its name); its file is named ``k_`` (CPU) or ``cuda_``,
    else ``prefix``, then ``name`` and the source's hash."""
    import numba

    text = f"# relayish kernel for {name}; numba {numba.__version__}\n{source}"
    digest = source_digest(text.encode())
    directory = cache_dir() / "kernels"
    path = directory / f"{prefix or ('k' if target == 'cpu' else target)}_{name}_{digest}.py"
    if not _intact(path, text):
        write_atomically(path, text.encode("utf-8"))
        COUNTERS["kernels_generated"] += 1
    return import_file(path)


def source_digest(data: bytes) -> str:
    """The hash a cache file's name ends with: of its whole content."""
    return hashlib.sha256(data).hexdigest()[:24]


def import_file(path: Path) -> Any:
    """The module of the cache file ``path``, as ``relayish_kernels.`` + its stem (imported once)."""
    module_name = PACKAGE + path.stem
    module = sys.modules.get(module_name)
    if module is None:
        spec = importlib.util.spec_from_file_location(module_name, path)
        module = importlib.util.module_from_spec(spec)
        sys.modules[module_name] = module  # before running it, as importlib does: Numba's cache finds it there
        try:
            spec.loader.exec_module(module)
        except BaseException:
            del sys.modules[module_name]
            raise
    return module


def write_atomically(path: Path, data: bytes) -> None:
    """``data`` as the file ``path`` (its directory made if missing): written under a temporary
    name and renamed, so processes filling one cache at once never read half a file; the
    temporary file is removed when writing fails."""
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=".tmp_", suffix=path.suffix)
    try:
        with os.fdopen(fd, "wb") as handle:
            handle.write(data)
        os.replace(tmp, path)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise


def purge_numba_caches() -> int:
    """Delete Numba's cached machine code, of the kernels and helper modules loaded, where its
    index no longer reads (used when a cache file turns out to be corrupted: Numba writes
    atomically but does not check what it reads); those compile again at their next call,
    the intact entries stay.
    Returns the files removed."""
    removed = 0
    for name, module in list(sys.modules.items()):
        if not name.startswith(PACKAGE) or name.startswith(PACKAGE + "cuda_"):
            continue
        source = Path(module.__file__)
        for index in (source.parent / "__pycache__").glob(f"{source.stem}.*.nbi"):
            if _readable_index(index):
                continue
            for stale in index.parent.glob(index.name[: -len("nbi")] + "*"):  # the index and its .nbc data
                stale.unlink(missing_ok=True)
                removed += 1
    return removed


def _readable_index(path: Path) -> bool:
    """Whether a Numba cache index unpickles (a version stamp, then the pickled entries)."""
    try:
        with open(path, "rb") as handle:
            pickle.load(handle)
            pickle.loads(handle.read())
    except FileNotFoundError:
        return True
    except Exception:  # noqa: BLE001 - whatever garbage raises, the index is unusable
        return False
    return True


def _intact(path: Path, text: str) -> bool:
    try:
        return path.read_text(encoding="utf-8") == text
    except (OSError, UnicodeDecodeError):
        return False


def compile_stats() -> dict[str, int]:
    """Numba compilations and cache hits of every kernel loaded in this process (each Numba
    function of a kernel module: the kernel, its helpers, its parallel loop)."""
    misses = hits = 0
    for name, module in list(sys.modules.items()):
        if not name.startswith(PACKAGE):
            continue
        for value in vars(module).values():
            stats = getattr(value, "stats", None)
            if stats is not None and hasattr(stats, "cache_misses"):
                misses += sum(stats.cache_misses.values())
                hits += sum(stats.cache_hits.values())
    return {"compiled": misses, "cache_hits": hits, **COUNTERS}
