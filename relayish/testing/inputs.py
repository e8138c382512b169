"""Arguments that match a function's parameter types, for running programs in tests.

``inputs(fn)`` is a hypothesis strategy and ``example_inputs(fn, seed)`` draws from a NumPy
generator instead; both follow the same rules, those of the evaluator's argument check
(``runtime.values.check_value``): a tensor is a NumPy array of exactly its dtype (a 0-d
array for a scalar, never a NumPy scalar) and a tuple is a Python tuple.

Dimension variables (type variables of kind Dim) get one size per draw, in
``[min_dim, max_dim]`` unless ``dims`` fixes them, shared by every parameter; dimensions
written with them (``n + 1``, ``2*n``, ``(n + 1) // 2``) are evaluated at those sizes. A ``?``
dimension gets a size of its own in that range wherever it occurs: nothing in the type relates
it to another (to make arguments that fit a program whose ``@main`` takes ``?``, pass the types
its body expects, as ``strategies.programs`` does).

Values are chosen so that most operators stay in their domains:

- floating tensors: ``[0.5, 2.0]`` (positive and away from 0, for ``log``, ``sqrt``,
  ``div`` and ``pow``);
- signed and unsigned integers: ``[1, 5]`` (nonzero, so dividing by an input is safe);
- bools: either value.

A parameter of a data type gets a ``DataValue`` when ``type_defs`` (the module's) define it:
each constructor is drawn among its type's, its fields made in turn (type arguments put in
for the type's parameters), until ``DATA_PARTS`` constructors have been drawn for one argument;
from there each takes the constructor with the shallowest values (``Nil`` for a list), so a
value stays small.

Only tensors of a concrete dtype and shape, tuples of them and values of data types that hold
only those can be made: a parameter of function or reference type, with a type variable of
kind Type, BaseType or Shape in its type, or of a data type missing from ``type_defs``, is a
``ValueError`` naming the parameter.
"""

from __future__ import annotations

import math
from typing import Any, Callable, Iterator, Mapping, NoReturn, Protocol, Sequence

import attrs
import numpy as np
from hypothesis import reject
from hypothesis import strategies as st
from hypothesis.extra import numpy as hnp

from runtime.values import DataValue
from typecheck.solver import substitute

from ..dims import Dim
from ..expr import Function
from ..module import TypeDef
from ..printer import astext
from ..traverse import trampoline
from ..types import BaseType, DataType, FuncType, Shape, TensorType, TupleType, Type, TypeVar

FLOAT_RANGE = (0.5, 2.0)
INT_RANGE = (1, 5)
DATA_PARTS = 6  # constructors drawn for one argument; past them, each finishes the value shortest
MAX_DATA_PARTS = 1_000  # a type whose every value is infinite (``type S { More(S) }``) stops here

SUPPORTED = ("tensors of a concrete dtype and shape (dimension variables and ? allowed), tuples of them "
             "and data types (with type_defs) holding those")


def map_leaves(tree: Any, fn: Callable[[tuple[int, ...], Any], Any]) -> Any:
    """``tree`` (nested Python tuples and data values) with each other ``leaf`` replaced by
    ``fn(path, leaf)``; a data value is rebuilt with the same constructor around its new fields.

    ``path`` holds the indices from the root (a tuple's item, a data value's field); leaves are
    visited left to right. Arguments and gradients are such trees, so the same paths lead to
    an argument's leaf and to its gradient.
    """

    def walk(node: Any, path: tuple[int, ...]) -> Iterator[Any]:
        if not isinstance(node, (tuple, DataValue)):
            return fn(path, node)
        items = []
        for k, item in enumerate(node.fields if isinstance(node, DataValue) else node):
            items.append((yield walk(item, path + (k,))))
        return DataValue(node.ctor, tuple(items)) if isinstance(node, DataValue) else tuple(items)

    return trampoline(walk(tree, ()))


def leaves(tree: Any) -> list[tuple[tuple[int, ...], Any]]:
    """The ``(path, leaf)`` pairs of ``tree``, left to right."""
    found: list[tuple[tuple[int, ...], Any]] = []
    map_leaves(tree, lambda path, leaf: found.append((path, leaf)))
    return found


@attrs.frozen
class _Leaf:
    """A tensor parameter (or part of one): its dtype and its possibly symbolic shape."""

    dtype: np.dtype
    dims: tuple[Dim, ...]


class _Source(Protocol):
    """Where sizes and values come from: hypothesis draws or a NumPy generator."""

    def size(self, lo: int, hi: int) -> int: ...

    def tensor(self, dtype: np.dtype, shape: tuple[int, ...]) -> np.ndarray: ...

    def reject(self, message: str) -> NoReturn: ...


@attrs.frozen
class _Data:
    """A parameter (or part of one) of a data type: its type, and the dimensions in its arguments."""

    type: DataType
    dims: tuple[Dim, ...]


def _layout(ty: Type, what: str, type_defs: Mapping[str, TypeDef]) -> Any:
    """The parameter type as nested tuples of ``_Leaf`` and ``_Data``; ValueError for what cannot be made."""

    def unsupported(reason: str) -> ValueError:
        return ValueError(f"cannot make an argument for {what} of type {astext(ty)}: {reason}; inputs supports {SUPPORTED}")

    def walk(t: Type) -> Iterator[Any]:
        if isinstance(t, TupleType):
            fields = []
            for field in t.fields:
                fields.append((yield walk(field)))
            return tuple(fields)
        if isinstance(t, DataType):
            _check_definitions(t, type_defs, unsupported)
            args = []
            for arg in t.args:
                args.append((yield walk(arg)))
            return _Data(t, tuple(leaf_dim for _, leaf in leaves(tuple(args)) for leaf_dim in leaf.dims))
        if not isinstance(t, TensorType):
            raise unsupported(f"{astext(t)} is not a tensor, a tuple or a data type")
        if not isinstance(t.dtype, BaseType):
            raise unsupported(f"the dtype {astext(t.dtype)} is not determined")
        if not isinstance(t.shape, Shape):
            raise unsupported(f"the shape {astext(t.shape)} is not determined")
        return _Leaf(t.dtype.to_numpy(), t.shape.dims)

    return trampoline(walk(ty))


def _check_definitions(ty: DataType, type_defs: Mapping[str, TypeDef], unsupported: Callable[[str], ValueError]) -> None:
    """Every data type that a value of ``ty`` holds is defined, with fields of tensors, tuples,
    type parameters and data types only (its arguments are checked as parameters are)."""
    seen: set[str] = set()
    stack: list[Type] = [ty]
    while stack:
        t = stack.pop()
        if isinstance(t, TupleType):
            stack.extend(t.fields)
        elif isinstance(t, DataType) and t.name not in seen:
            td = type_defs.get(t.name)
            if td is None:
                raise unsupported(f"the data type {t.name} is not in type_defs (pass the module's: type_defs=module.type_defs)")
            if len(td.params) != len(t.args):
                raise unsupported(f"{t.name} takes {len(td.params)} type arguments, not {len(t.args)}")
            seen.add(t.name)
            stack.extend(field for ctor in td.ctors for field in ctor.fields)
            stack.extend(t.args)
        elif not isinstance(t, (DataType, TensorType, TypeVar)):
            raise unsupported(f"a constructor of a data type in it holds {astext(t)}")


def _param_layouts(fn: Function | FuncType, type_defs: Mapping[str, TypeDef]) -> tuple[Any, ...]:
    """One layout per parameter, checked before anything is drawn."""
    if isinstance(fn, FuncType):
        return tuple(_layout(ty, f"parameter {k + 1}", type_defs) for k, ty in enumerate(fn.params))
    layouts = []
    for param in fn.params:
        what = f"parameter %{param.name_hint}"
        if param.type_annotation is None:
            raise ValueError(f"cannot make an argument for {what}: it has no type annotation; inputs supports {SUPPORTED}")
        layouts.append(_layout(param.type_annotation, what, type_defs))
    return tuple(layouts)


def _dim_vars(layouts: tuple[Any, ...]) -> list[TypeVar]:
    """The dimension variables of every parameter, in a fixed order (so draws replay)."""
    found = {v for _, leaf in leaves(layouts) for d in leaf.dims for v in d.free_vars()}
    return sorted(found, key=lambda tv: tv.serial)


def _arguments(layouts: tuple[Any, ...], source: _Source, dims: Mapping[TypeVar, int], min_dim: int, max_dim: int,
               type_defs: Mapping[str, TypeDef]) -> tuple:
    sizes = {tv: Dim.const(dims[tv] if tv in dims else source.size(min_dim, max_dim)) for tv in _dim_vars(layouts)}

    def tensor(dtype: np.dtype, dims: Sequence[Dim]) -> np.ndarray:
        shape = tuple(source.size(min_dim, max_dim) if d.is_unknown else d.substitute(sizes).value for d in dims)
        if any(n < 0 for n in shape):
            bound = ", ".join(f"{tv.name} = {d.value}" for tv, d in sizes.items())
            source.reject(f"a negative dimension in shape {shape} with {bound}; choose other dims or min_dim")
        return source.tensor(dtype, shape)

    shallowest = _shallowest(type_defs)

    def make(path: tuple[int, ...], leaf: _Leaf | _Data) -> Any:
        if isinstance(leaf, _Data):
            return _data_value(leaf.type, type_defs, shallowest, source, tensor)
        return tensor(leaf.dtype, leaf.dims)

    return map_leaves(layouts, make)


def _data_value(ty: DataType, type_defs: Mapping[str, TypeDef], shallowest: Mapping[str, float], source: _Source,
                tensor: Callable[[np.dtype, Sequence[Dim]], np.ndarray]) -> DataValue:
    """A value of ``ty`` (see the module docstring), built without recursion; ``shallowest``: ``_shallowest(type_defs)``."""
    parts = 0

    def build(t: Type) -> Iterator[Any]:
        nonlocal parts
        if isinstance(t, TupleType):
            items = []
            for field in t.fields:
                items.append((yield build(field)))
            return tuple(items)
        if isinstance(t, TensorType):
            return tensor(t.dtype.to_numpy(), t.shape.dims)
        td = type_defs[t.name]
        parts += 1
        if parts > MAX_DATA_PARTS:
            raise ValueError(f"cannot make a value of {astext(ty)} of fewer than {MAX_DATA_PARTS} constructors")
        if parts <= DATA_PARTS:
            ctor = td.ctors[source.size(0, len(td.ctors) - 1)]
        else:
            ctor = min(td.ctors, key=lambda c: _depth(c.fields, shallowest))
        mapping = dict(zip(td.params, t.args))
        fields = []
        for field in ctor.fields:
            fields.append((yield build(substitute(field, mapping))))
        return DataValue(ctor.name, tuple(fields))

    return trampoline(build(ty))


def _shallowest(type_defs: Mapping[str, TypeDef]) -> dict[str, float]:
    """For each data type, how many constructors deep its shallowest values are (``inf``: it has
    no finite value), counting type arguments as made already."""
    depth = {name: math.inf for name in type_defs}
    changed = True
    while changed:  # each round settles one more level; depths only go down
        changed = False
        for name, td in type_defs.items():
            best = min(1 + _depth(ctor.fields, depth) for ctor in td.ctors)
            if best < depth[name]:
                depth[name], changed = best, True
    return depth


def _depth(types: Sequence[Type], depth: Mapping[str, float]) -> float:
    """The deepest of the shallowest values of ``types`` (a constructor's fields)."""
    deepest: float = 0
    stack = list(types)
    while stack:
        t = stack.pop()
        if isinstance(t, TupleType):
            stack.extend(t.fields)
        elif isinstance(t, DataType):
            deepest = max(deepest, depth.get(t.name, math.inf))
    return deepest


def _check_dim_range(min_dim: int, max_dim: int) -> None:
    if not 0 <= min_dim <= max_dim:
        raise ValueError(f"need 0 <= min_dim <= max_dim, not min_dim={min_dim}, max_dim={max_dim}")


# -- hypothesis --------------------------------------------------------------------------------


def _elements(dtype: np.dtype) -> st.SearchStrategy:
    if dtype.kind == "f":
        return st.floats(*FLOAT_RANGE, width=dtype.itemsize * 8)
    if dtype.kind in "iu":
        return st.integers(*INT_RANGE)
    return st.booleans()


class _DrawSource:
    def __init__(self, draw: Callable[[st.SearchStrategy], Any]):
        self.draw = draw

    def size(self, lo: int, hi: int) -> int:
        return self.draw(st.integers(lo, hi))

    def tensor(self, dtype: np.dtype, shape: tuple[int, ...]) -> np.ndarray:
        return self.draw(hnp.arrays(dtype, shape, elements=_elements(dtype)))

    def reject(self, message: str) -> NoReturn:
        reject()


def inputs(
    fn: Function | FuncType,
    dims: Mapping[TypeVar, int] | None = None,
    *,
    min_dim: int = 1,
    max_dim: int = 4,
    type_defs: Mapping[str, TypeDef] | None = None,
) -> st.SearchStrategy[tuple]:
    """A strategy for argument tuples of ``fn`` (see the module docstring for the rules);
    ``type_defs``: the data types of ``fn``'s module, for parameters of those.

    Unsupported parameter types raise ValueError here, not when drawing.
    """
    _check_dim_range(min_dim, max_dim)
    defined = dict(type_defs or {})
    layouts = _param_layouts(fn, defined)
    fixed = dict(dims or {})

    @st.composite
    def arguments(draw: Callable[[st.SearchStrategy], Any]) -> tuple:
        return _arguments(layouts, _DrawSource(draw), fixed, min_dim, max_dim, defined)

    return arguments()


# -- NumPy generator ----------------------------------------------------------------------------


class _RandomSource:
    def __init__(self, seed: int):
        self.rng = np.random.default_rng(seed)

    def size(self, lo: int, hi: int) -> int:
        return int(self.rng.integers(lo, hi + 1))

    def tensor(self, dtype: np.dtype, shape: tuple[int, ...]) -> np.ndarray:
        if dtype.kind == "f":
            values = self.rng.uniform(*FLOAT_RANGE, size=shape)
        elif dtype.kind in "iu":
            values = self.rng.integers(INT_RANGE[0], INT_RANGE[1] + 1, size=shape)
        else:
            values = self.rng.integers(0, 2, size=shape)
        return np.asarray(values).astype(dtype)

    def reject(self, message: str) -> NoReturn:
        raise ValueError(message)


def example_inputs(
    fn: Function | FuncType,
    seed: int = 0,
    dims: Mapping[TypeVar, int] | None = None,
    *,
    min_dim: int = 1,
    max_dim: int = 4,
    type_defs: Mapping[str, TypeDef] | None = None,
) -> tuple:
    """One argument tuple for ``fn`` from ``np.random.default_rng(seed)``: the same seed, the same
    arguments (``type_defs`` as for ``inputs``)."""
    _check_dim_range(min_dim, max_dim)
    defined = dict(type_defs or {})
    return _arguments(_param_layouts(fn, defined), _RandomSource(seed), dict(dims or {}), min_dim, max_dim, defined)
