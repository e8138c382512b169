"""The Prelude (relayish/prelude_text.py) for Python code: its data types as ``Data`` objects and its
functions as ``relay.map``, ``relay.foldl``, ...

``List``, ``Option`` and ``Tree`` and their constructors (``Cons``, ``Nil``, ``Some``, ``Nothing``,
``Leaf``, ``Node``) are made from the Prelude's definitions at the first use (reading the
Prelude costs ~25 ms, which a program without data types need not pay). The Prelude's
``None`` cannot be a Python name: its constructor class is ``Nothing`` (values print
``Nothing()`` in Python, ``None`` in the IR). Inside ``@relay``, ``relay.map(f, xs)`` is a call of
the Prelude's ``@map``; outside, it runs ``PYTHON_SEMANTICS["map"]``, the same function on
Python values (as ``relay.tanh`` is the operator's NumPy semantics), without recursion, so a
long list needs no Python stack.
"""

from __future__ import annotations

import functools
from typing import Any, Callable

import numpy as np

from relayish.expr import Function, GlobalVar, Tuple
from relayish.module import Module
from relayish.parser import prelude_module
from relayish.traverse import globals_reached
from relayish.types import DataType, FuncType, TupleType, Type

from .data import Data, type_definitions

PYTHON_NAMES = {"None": "Nothing"}  # IR constructor name -> Python class name, where they differ
EXPORTS = ("List", "Option", "Tree", "Cons", "Nil", "Some", "Nothing", "Leaf", "Node")


@functools.cache
def prelude_types() -> dict[str, Data]:
    """The Prelude's data types by name, made once (their constructor classes must be unique)."""
    module = prelude_module()
    types = {name: Data(name, [p.name for p in td.params], {c.name: c.fields for c in td.ctors}, None,
                        definition=td, python_names=PYTHON_NAMES) for name, td in module.type_defs.items()}
    for item in types.values():
        item.set_references({t.name: types[t.name] for c in item.definition().ctors for f in c.fields
                             for t in _data_types(f)})
    return types


def _data_types(ty: Type | None) -> list[DataType]:
    """The data types in a type (the Prelude's field types: data types, tuples, functions)."""
    found, stack = [], [ty]
    while stack:
        t = stack.pop()
        if isinstance(t, DataType):
            found.append(t)
            stack.extend(t.args)
        elif isinstance(t, TupleType):
            stack.extend(t.fields)
        elif isinstance(t, FuncType):
            stack.extend([*t.params, t.ret])
    return found


def __getattr__(name: str) -> Any:
    """``List``, ``Cons``, ...: made at the first use (PEP 562)."""
    if name in EXPORTS:
        types = prelude_types()
        if name in types:
            return types[name]
        return next(getattr(t, name) for t in types.values() if any(c.__name__ == name for c in t.constructors))
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


def prelude_parts(called: set[str]) -> tuple[dict[str, Any], list[Data]]:
    """The Prelude's globals that the ``called`` ones reach (in the Prelude's order), and the
    data types they use: what a module that calls them must hold."""
    module = prelude_module()
    reached = globals_reached(module, Tuple([GlobalVar(n) for n in sorted(called)])) | set(called)
    functions = {name: fn for name, fn in module.functions.items() if name in reached}
    types = prelude_types()
    used = {t.name for fn in functions.values() for t in _signature_types(fn)}
    return functions, [types[n] for n in types if n in used]


def _signature_types(fn: Function) -> list[DataType]:
    """The data types a Prelude function's signature names (its body uses no others)."""
    return [t for ty in [*(p.type_annotation for p in fn.params), fn.ret_type] for t in _data_types(ty)]


def with_data(functions: dict[str, Any], used: list[Data], called: set[str]) -> Module:
    """A module of ``functions`` (the translated ones), the Prelude's globals they call, and the
    definitions of the data types they use (``used``) and those use."""
    prelude_functions, prelude_used = prelude_parts(called) if called else ({}, [])
    type_defs = type_definitions([*prelude_used, *used]) if used or prelude_used else {}
    return Module({**functions, **prelude_functions}, type_defs=type_defs)


# Python semantics of the Prelude's functions (relay.map(...) outside @relay) ------------------------
def _items(xs: Any) -> list[Any]:
    """The elements of a list value, first to last."""
    items = []
    while xs.ctor == "Cons":
        items.append(xs.fields[0])
        xs = xs.fields[1]
    return items


def _listed(items: list[Any]) -> Any:
    cons, nil = prelude_types()["List"].constructors
    result = nil()
    for item in reversed(items):
        result = cons(item, result)
    return result


def _map(f: Callable, xs: Any) -> Any:
    return _listed([f(x) for x in _items(xs)])


def _foldl(f: Callable, acc: Any, xs: Any) -> Any:
    for x in _items(xs):
        acc = f(acc, x)
    return acc


def _foldr(f: Callable, acc: Any, xs: Any) -> Any:
    for x in reversed(_items(xs)):
        acc = f(x, acc)
    return acc


def _nth(xs: Any, i: Any) -> Any:
    items = _items(xs)
    if not 0 <= int(i) < len(items):
        raise IndexError(f"nth: index {int(i)} of a list of {len(items)}")
    return items[int(i)]


def _get_or(o: Any, default: Any) -> Any:
    return o.fields[0] if o.ctor == "Some" else default


def _tree_fold(leaf: Callable, node: Callable, tree: Any) -> Any:
    """Bottom-up, with a stack of its own: a tree as deep as it is long needs no Python stack."""
    done: list[Any] = []
    stack: list[tuple[Any, bool]] = [(tree, False)]
    while stack:
        t, ready = stack.pop()
        if t.ctor == "Leaf":
            done.append(leaf(t.fields[0]))
        elif ready:
            right = done.pop()
            done.append(node(done.pop(), right))
        else:
            stack.extend([(t, True), (t.fields[1], False), (t.fields[0], False)])
    return done[0]


def _tree_map(f: Callable, tree: Any) -> Any:
    leaf, node = prelude_types()["Tree"].constructors
    return _tree_fold(lambda x: leaf(f(x)), node, tree)


PYTHON_SEMANTICS: dict[str, Callable[..., Any]] = {
    "map": _map,
    "foldl": _foldl,
    "foldr": _foldr,
    "length": lambda xs: np.asarray(len(_items(xs)), np.int32),
    "nth": _nth,
    "rev": lambda xs: _listed(_items(xs)[::-1]),
    "append": lambda xs, ys: _foldr(lambda x, acc: prelude_types()["List"].Cons(x, acc), ys, xs),
    "zip": lambda xs, ys: _listed(list(zip(_items(xs), _items(ys)))),
    "get_or": _get_or,
    "tree_map": _tree_map,
    "tree_fold": _tree_fold,
}
