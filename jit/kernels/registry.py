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
import importlib
import os
import sys
import tempfile
import types
import warnings
from pathlib import Path
from typing import Any, Callable, Sequence

import attrs
import numpy as np

from relayish.ops.registry import all_ops, lookup_op
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


ElementGenerator = Callable[[str, dict, Sequence["ArgType"]], str]
# target -> the generator of every operator given by its record's element expression (and no generator of its own)
ELEMENT_GENERATORS: dict[str, ElementGenerator] = {}


def element_generator(target: str) -> Callable[[ElementGenerator], ElementGenerator]:
    """Register ``target``'s generator of element-expression kernels (``generate(op, attrs, args)``)."""

    def register(fn: ElementGenerator) -> ElementGenerator:
        ELEMENT_GENERATORS[target] = fn
        return fn

    return register


def kernel_operators(target: str = "cpu") -> set[str]:
    """The operators with a kernel on ``target``: a generator of their own, or an element expression."""
    return set(load_generators(target)) | {name for name, op in all_ops().items() if op.element is not None}


def source_of(name: str, attrs_: dict, args: Sequence[ArgType], target: str) -> str:
    """The kernel module source of operator ``name``: its own generator's, else from its element expression."""
    generators = load_generators(target)
    if name in generators:
        return generators[name](attrs_, list(args))
    op = lookup_op(name)
    if op is None or op.element is None:
        raise NotImplementedError(f"operator {name} has no {target} kernel")
    return ELEMENT_GENERATORS[target](name, attrs_, list(args))


Launch = Callable[[str, dict, Any], Callable[..., Any]]
# target -> what runs a kernel module of an operator (name, attributes, module), where not its ``kernel``
# itself: CUDA's ``Launcher`` (jit/cuda/launch.py), registered as its generators are, so that this
# registry, which the CUDA target builds on, never imports it
LAUNCHERS: dict[str, Launch] = {}


def launcher(target: str) -> Callable[[Launch], Launch]:
    """Register how ``target`` runs the kernel modules of its operators."""

    def register(fn: Launch) -> Launch:
        LAUNCHERS[target] = fn
        return fn

    return register


PARALLEL_OFF = 2**62


def parallel_min() -> int:
    """Elements from which elementwise kernels take their parallel loop: ``RELAYISH_PARALLEL_MIN``
    (unset or 0: never; measurements in ``jit/kernels/elementwise.py``)."""
    configured = int(os.environ.get("RELAYISH_PARALLEL_MIN") or 0)
    return configured if configured > 0 else PARALLEL_OFF


def cache_dir() -> Path:
    """``RELAYISH_CACHE_DIR``, else ``$XDG_CACHE_HOME/relayish``, else ``~/.cache/relayish``, when it
    is safe to load code from (``_unsafe``); else, with a warning, the default or a private one."""
    configured = os.environ.get("RELAYISH_CACHE_DIR") or str(_default_cache_dir())
    found = _CHECKED.get(configured)
    if found is None:
        found = _CHECKED[configured] = _safe_cache_dir(Path(configured))
    return found


_CHECKED: dict[str, Path] = {}  # configured directory -> the one used


def _default_cache_dir() -> Path:
    base = os.environ.get("XDG_CACHE_HOME") or os.path.join(os.path.expanduser("~"), ".cache")
    return Path(base) / "relayish"


def _unsafe(path: Path) -> str | None:
    """Why code cached under ``path`` could have been planted by someone else, or None: the
    directory (or one of ours in it) belongs to another user or others may write to it. Kernel
    modules are imported and Numba's index files unpickled from there, so whoever can write
    there can run code in every process that compiles."""
    if not hasattr(os, "getuid"):
        return None  # no POSIX owners and modes to check
    for directory in (path, path / "kernels", path / "kernels" / "__pycache__", path / "programs"):
        try:
            info = directory.stat()
        except FileNotFoundError:
            continue
        except OSError as err:
            return f"it cannot be inspected ({err.strerror})"
        if info.st_uid != os.getuid():
            return f"{directory} belongs to user id {info.st_uid}, not to this process's ({os.getuid()})"
        if info.st_mode & 0o022:
            return f"{directory} is writable by {'group and others' if info.st_mode & 0o002 else 'its group'}"
    return None


def _made(path: Path) -> Path:
    """``path``, created readable and writable by this user alone when it is missing."""
    try:
        path.mkdir(mode=0o700, parents=True, exist_ok=True)
    except OSError:
        pass  # a cache that cannot be written costs the saving, not the run
    return path


def _safe_cache_dir(path: Path) -> Path:
    """``path`` when ``_unsafe`` finds nothing wrong (created private when missing), else a safe
    one, named in ``RELAYISH_CACHE_DIR`` so that the processes this one starts use it too."""
    problem = _unsafe(path)
    if problem is None:
        return _made(path)
    default = _default_cache_dir()
    fallback = _made(default) if default != path and _unsafe(default) is None else \
        Path(tempfile.mkdtemp(prefix="relayish-cache-"))
    warnings.warn(f"relayish does not use the cache directory {path}: {problem}; it caches in {fallback} instead "
                  "(make the directory yours and writable by you alone, e.g. chmod 700, to use it)", RuntimeWarning,
                  stacklevel=2)
    os.environ["RELAYISH_CACHE_DIR"] = str(fallback)
    _CHECKED[str(fallback)] = fallback
    return fallback


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
    key = _key(name, attrs_, args, target)
    found = _KERNELS.get(key)
    if found is None:
        module = load(source_of(name, attrs_, args, target), name, target)
        launch = LAUNCHERS.get(target)  # registered by the target's families, which source_of imported
        found = module.kernel if launch is None else launch(name, attrs_, module)
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
    import numba  # lazy: importing jit does not import numba (jit/tiers.py: the first call needs none)

    text = f"# relayish kernel for {name}; numba {numba.__version__}\n{source}"
    digest = source_digest(text.encode())
    directory = cache_dir() / "kernels"
    path = directory / f"{prefix or ('k' if target == 'cpu' else target)}_{name}_{digest}.py"
    if not _intact(path, text):
        write_atomically(path, text.encode("utf-8"))
        COUNTERS["kernels_generated"] += 1
    return import_file(path, text)


def source_digest(data: bytes) -> str:
    """The hash a cache file's name ends with: of its whole content."""
    return hashlib.sha256(data).hexdigest()[:24]


def import_file(path: Path, text: str) -> Any:
    """The module of the cache file ``path``, whose content the caller checked is ``text``, as
    ``relayish_kernels.`` + its stem (imported once). It runs ``text``, not what an import would
    find: Python's bytecode cache beside the file (a ``.pyc`` whose header copies the source's
    mtime and size is loaded in its place) is never read."""
    module_name = PACKAGE + path.stem
    module = sys.modules.get(module_name)
    if module is None:
        module = types.ModuleType(module_name)
        module.__file__ = str(path)  # Numba's cache stamps machine code with this file's mtime and size
        sys.modules[module_name] = module  # before running it, as importlib does: Numba's cache finds it there
        try:
            exec(compile(text, str(path), "exec"), module.__dict__)  # noqa: S102 - relayish's own generated source
        except BaseException:
            del sys.modules[module_name]
            raise
        for value in list(vars(module).values()) if not module.__dict__.get("PER_LAYOUT") else ():
            if type(value).__name__ == "CPUDispatcher" and value.py_func.__module__ == module_name:
                value._compile_for_args = _contiguous_first(value, value._compile_for_args)
    return module


def _contiguous_first(dispatcher: Any, compile_for_args: Callable[..., Any]) -> Callable[..., Any]:
    """Numba compiles a function again for each new layout of its array arguments (F-contiguous,
    strided: 1-4 s a kernel, the same code; a third of the test suite's compile time). Called with
    such an array where no compiled version matches, a kernel runs on C-contiguous copies instead
    (its own first step in most kernels, ``np.ascontiguousarray``), so it is compiled for C-contiguous
    arrays alone. C-contiguous calls never come here (Numba's dispatcher finds their version). A
    module that sets ``PER_LAYOUT`` keeps Numba's version per layout: it reads other layouts in place
    (transpose and strided_slice return views of any input; BLAS reads an F-ordered operand as the
    transpose of a C-ordered one)."""

    def compile_or_convert(*args: Any, **kws: Any) -> Callable[..., Any]:
        if not kws and any(type(a) is np.ndarray and not a.flags.c_contiguous for a in args):
            return lambda *given: dispatcher(*[_contiguous(a) for a in given])
        return compile_for_args(*args, **kws)

    return compile_or_convert


def _contiguous(value: Any) -> Any:
    """An array C-contiguous (a copy where it is not: never a 0-d one, which ``np.ascontiguousarray``
    would make 1-d); anything else as it is."""
    if type(value) is np.ndarray and not value.flags.c_contiguous:
        return np.ascontiguousarray(value)
    return value


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


def numba_cache_failures(err: BaseException) -> list[Path] | None:
    """The index files of the Numba caches that were being read (or written) where ``err`` was
    raised, or None when it was not raised there. What a damaged file raises there (an
    UnpicklingError, an LLVM bitcode error, a UnicodeDecodeError) says nothing about the program."""
    found: list[Path] | None = None
    tb = err.__traceback__
    while tb is not None:
        frame = tb.tb_frame
        if frame.f_code.co_filename.replace(os.sep, "/").endswith("numba/core/caching.py"):
            found = found or []
            index = getattr(getattr(frame.f_locals.get("self"), "_cache_file", None), "_index_path", None)
            if index is not None:
                found.append(Path(index))
        tb = tb.tb_next
    return found


def purge_numba_caches(indexes: Sequence[Path] = ()) -> int:
    """Delete Numba's files (index and machine code) of the caches ``indexes`` name, or when it
    names none, of every kernel and helper module loaded in this process: Numba writes its files
    atomically but checks nothing it reads, so a damaged one fails every later run. What is
    deleted compiles again at its next call and is cached again. Returns the files removed."""
    if not indexes:
        indexes = [index for name, module in list(sys.modules.items())
                   if name.startswith(PACKAGE) and not name.startswith(PACKAGE + "cuda_")
                   for index in (Path(module.__file__).parent / "__pycache__").glob(f"{Path(module.__file__).stem}.*.nbi")]
    removed = 0
    for index in indexes:
        for stale in index.parent.glob(index.name[: -len("nbi")] + "*"):  # the index and its .nbc data
            stale.unlink(missing_ok=True)
            removed += 1
    return removed


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
