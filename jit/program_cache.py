"""Optimized programs on disk: a process that compiles a program an earlier one compiled loads
what the optimizer made instead of type checking, expanding ``Grad`` and optimizing again
(W2's value and gradient: ~0.2 s of a 1.1 s cold start; an unrolled W4, seconds).

An entry is keyed by everything the result depends on: the module as given (its canonical
text, and its spans, so error messages keep pointing at the user's current lines), the global,
the ``opt_level``, and the source of relayish's own packages (any change to the optimizer makes
new entries). It lives beside the kernels under ``RELAYISH_CACHE_DIR``, written to a temporary
name and renamed (``registry.write_atomically``); an
entry that does not load (truncated, from another version) is computed and written again, and a
cache directory that cannot be written only costs the saving.

Modules are stored without recursion, so a 100,000-deep let chain is no problem: the nodes in
post order, each with its sub-expressions as indices of earlier nodes, in one pickle (which
keeps the sharing of everything else, type variables included). Types and dimensions pickle as
their constructors' arguments, so their cached hashes (which differ per process) are computed
again on loading. The files are pickles read by ``_ProgramUnpickler``, which builds relayish's
IR, type and dimension classes and NumPy arrays and nothing else (a planted pickle cannot call
anything more), and an entry holds its own key: one copied over another is computed again, never
run as the wrong program. The directory itself is checked by ``registry.cache_dir``.
"""

from __future__ import annotations

import functools
import hashlib
import pickle
from pathlib import Path
from typing import Any, Callable

import attrs
import numpy as np

from relayish.expr import Expr
from relayish.module import Module
from relayish.printer import astext
from relayish.traverse import post_order

from .kernels.registry import cache_dir, write_atomically

_PACKAGES = ("relayish", "typecheck", "ad", "runtime", "jit")  # the layers the JIT imports (docs/design.md)


@attrs.frozen
class _Node:
    """A sub-expression in a flattened module: the index of an earlier node."""

    index: int


def flatten(module: Module) -> tuple:
    """``module`` as (globals: name -> index of its function, nodes, operator declarations, data
    types), each
    node ``(class, field values)`` with sub-expressions replaced by ``_Node`` indices."""
    index: dict[int, int] = {}
    nodes: list[tuple[type, list[Any]]] = []

    def ref(value: Any) -> Any:
        if isinstance(value, Expr):
            return _Node(index[id(value)])
        if isinstance(value, tuple) and any(isinstance(v, Expr) for v in value):
            return tuple(ref(v) for v in value)
        return value

    roots = {}
    for name, fn in module.functions.items():
        for node in post_order(fn):
            if id(node) not in index:
                index[id(node)] = len(nodes)
                nodes.append((type(node), [ref(getattr(node, f.name)) for f in attrs.fields(type(node))]))
        roots[name] = index[id(fn)]
    return roots, nodes, dict(module.op_decls), dict(module.type_defs)


def unflatten(flat: tuple) -> Module:
    roots, nodes, op_decls, type_defs = flat
    built: list[Expr] = []

    def value(v: Any) -> Any:
        if isinstance(v, _Node):
            return built[v.index]
        if isinstance(v, tuple) and any(isinstance(x, _Node) for x in v):
            return tuple(value(x) for x in v)
        return v

    for cls, fields in nodes:
        built.append(cls(**{f.alias: value(v) for f, v in zip(attrs.fields(cls), fields)}))
    return Module({name: built[i] for name, i in roots.items()}, op_decls, type_defs)


def spans(module: Module) -> list[tuple[str, int, int]]:
    """Where each node of the module comes from, in a fixed order: the text does not show it."""
    return [(n.span.file, n.span.line, n.span.col) for fn in module.functions.values() for n in post_order(fn)
            if n.span is not None]


# Where an entry's classes may come from: their modules (classes defined there only), and
# the functions and NumPy names that pickles of types and arrays call (and ``?``'s one atom).
_IR_MODULES = ("relayish.expr", "relayish.types", "relayish.dims", "relayish.errors", "relayish.module", __name__)
_CALLABLES = {("relayish.types", "_build"), ("relayish.dims", "UNKNOWN"), ("numpy", "dtype"), ("numpy", "ndarray"),
              ("numpy._core.numeric", "_frombuffer"), ("numpy.core.numeric", "_frombuffer"),
              ("numpy._core.multiarray", "_reconstruct"), ("numpy.core.multiarray", "_reconstruct"),
              ("numpy._core.multiarray", "scalar"), ("numpy.core.multiarray", "scalar"),
              ("builtins", "frozenset"), ("builtins", "set"), ("builtins", "complex"), ("builtins", "slice")}


class _ProgramUnpickler(pickle.Unpickler):
    """Loads what ``flatten`` stores and refuses any other class or function."""

    def find_class(self, module: str, name: str) -> Any:
        if (module, name) in _CALLABLES:
            return super().find_class(module, name)
        if module in _IR_MODULES or module == "numpy":
            found = super().find_class(module, name)
            if isinstance(found, type) and (found.__module__ == module if module in _IR_MODULES else
                                            issubclass(found, np.generic)):
                return found
        raise pickle.UnpicklingError(f"a cached program may not name {module}.{name}")


@functools.cache
def code_version() -> str:
    """A hash of the source of relayish's packages (read once per process, a few ms)."""
    digest = hashlib.sha256()
    root = Path(__file__).resolve().parent.parent
    for package in _PACKAGES:
        for path in sorted((root / package).rglob("*.py")):
            digest.update(str(path.relative_to(root)).encode())
            digest.update(path.read_bytes())
    return digest.hexdigest()


def cached_program(module: Module, name: str, opt_level: int, make: Callable[[], Module]) -> Module:
    """What ``make()`` returns for (module, name, opt_level): from the cache when an earlier
    process stored it, else computed and stored."""
    key = hashlib.sha256(f"{code_version()}\n{name}\n{opt_level}\n{astext(module)}\n{spans(module)}".encode())
    key = key.hexdigest()[:32]
    path = cache_dir() / "programs" / f"{key}.pickle"
    try:
        with open(path, "rb") as handle:
            stored_key, flat = _ProgramUnpickler(handle).load()
        if stored_key == key:
            return unflatten(flat)
    except Exception:  # noqa: BLE001 - missing, damaged, foreign or planted: computed and written again
        pass
    result = make()
    try:
        write_atomically(path, pickle.dumps((key, flatten(result)), protocol=pickle.HIGHEST_PROTOCOL))
    except Exception:  # noqa: BLE001 - a read-only cache or an unpicklable value: not stored
        pass
    return result
