"""Arguments that match a function's parameter types, for running programs in tests.

``inputs(fn)`` is a hypothesis strategy and ``example_inputs(fn, seed)`` draws from a NumPy
generator instead; both follow the same rules, those of the evaluator's argument check
(``runtime.values.check_value``): a tensor is a NumPy array of exactly its dtype (a 0-d
array for a scalar, never a NumPy scalar) and a tuple is a Python tuple.

Dimension variables (type variables of kind Dim) get one size per draw, in
``[min_dim, max_dim]`` unless ``dims`` fixes them, shared by every parameter; dimensions
written with them (``n + 1``, ``2*n``, ``(n + 1) // 2``) are evaluated at those sizes.

Values are chosen so that most operators stay in their domains:

- floating tensors: ``[0.5, 2.0]`` (positive and away from 0, for ``log``, ``sqrt``,
  ``div`` and ``pow``);
- signed and unsigned integers: ``[1, 5]`` (nonzero, so dividing by an input is safe);
- bools: either value.

Only tensors of a concrete dtype and shape and tuples of them can be made: a parameter of
function or reference type, or with a type variable of kind Type, BaseType or Shape in
its type, is a ``ValueError`` naming the parameter.
"""

from __future__ import annotations

from typing import Any, Callable, Iterator, Mapping, NoReturn, Protocol

import attrs
import numpy as np
from hypothesis import reject
from hypothesis import strategies as st
from hypothesis.extra import numpy as hnp

from ..dims import Dim
from ..expr import Function
from ..printer import astext
from ..traverse import trampoline
from ..types import BaseType, FuncType, Shape, TensorType, TupleType, Type, TypeVar

FLOAT_RANGE = (0.5, 2.0)
INT_RANGE = (1, 5)

SUPPORTED = "tensors of a concrete dtype and shape (dimension variables allowed) and tuples of them"


def map_leaves(tree: Any, fn: Callable[[tuple[int, ...], Any], Any]) -> Any:
    """``tree`` (nested Python tuples) with each non-tuple ``leaf`` replaced by ``fn(path, leaf)``.

    ``path`` holds the tuple indices from the root; leaves are visited left to right.
    """

    def walk(node: Any, path: tuple[int, ...]) -> Iterator[Any]:
        if not isinstance(node, tuple):
            return fn(path, node)
        items = []
        for k, item in enumerate(node):
            items.append((yield walk(item, path + (k,))))
        return tuple(items)

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


def _layout(ty: Type, what: str) -> Any:
    """The parameter type as nested tuples of ``_Leaf``; ValueError for what cannot be made."""

    def unsupported(reason: str) -> ValueError:
        return ValueError(f"cannot make an argument for {what} of type {astext(ty)}: {reason}; inputs supports {SUPPORTED}")

    def walk(t: Type) -> Iterator[Any]:
        if isinstance(t, TupleType):
            fields = []
            for field in t.fields:
                fields.append((yield walk(field)))
            return tuple(fields)
        if not isinstance(t, TensorType):
            raise unsupported(f"{astext(t)} is not a tensor or a tuple")
        if not isinstance(t.dtype, BaseType):
            raise unsupported(f"the dtype {astext(t.dtype)} is not determined")
        if not isinstance(t.shape, Shape):
            raise unsupported(f"the shape {astext(t.shape)} is not determined")
        return _Leaf(t.dtype.to_numpy(), t.shape.dims)

    return trampoline(walk(ty))


def _param_layouts(fn: Function | FuncType) -> tuple[Any, ...]:
    """One layout per parameter, checked before anything is drawn."""
    if isinstance(fn, FuncType):
        return tuple(_layout(ty, f"parameter {k + 1}") for k, ty in enumerate(fn.params))
    layouts = []
    for param in fn.params:
        what = f"parameter %{param.name_hint}"
        if param.type_annotation is None:
            raise ValueError(f"cannot make an argument for {what}: it has no type annotation; inputs supports {SUPPORTED}")
        layouts.append(_layout(param.type_annotation, what))
    return tuple(layouts)


def _dim_vars(layouts: tuple[Any, ...]) -> list[TypeVar]:
    """The dimension variables of every parameter, in a fixed order (so draws replay)."""
    found = {v for _, leaf in leaves(layouts) for d in leaf.dims for v in d.free_vars()}
    return sorted(found, key=lambda tv: tv.serial)


def _arguments(layouts: tuple[Any, ...], source: _Source, dims: Mapping[TypeVar, int], min_dim: int, max_dim: int) -> tuple:
    sizes = {tv: Dim.const(dims[tv] if tv in dims else source.size(min_dim, max_dim)) for tv in _dim_vars(layouts)}

    def make(path: tuple[int, ...], leaf: _Leaf) -> np.ndarray:
        shape = tuple(d.substitute(sizes).value for d in leaf.dims)
        if any(n < 0 for n in shape):
            bound = ", ".join(f"{tv.name} = {d.value}" for tv, d in sizes.items())
            source.reject(f"a negative dimension in shape {shape} with {bound}; choose other dims or min_dim")
        return source.tensor(leaf.dtype, shape)

    return map_leaves(layouts, make)


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
    fn: Function | FuncType, dims: Mapping[TypeVar, int] | None = None, *, min_dim: int = 1, max_dim: int = 4
) -> st.SearchStrategy[tuple]:
    """A strategy for argument tuples of ``fn`` (see the module docstring for the rules).

    Unsupported parameter types raise ValueError here, not when drawing.
    """
    _check_dim_range(min_dim, max_dim)
    layouts = _param_layouts(fn)
    fixed = dict(dims or {})

    @st.composite
    def arguments(draw: Callable[[st.SearchStrategy], Any]) -> tuple:
        return _arguments(layouts, _DrawSource(draw), fixed, min_dim, max_dim)

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
) -> tuple:
    """One argument tuple for ``fn`` from ``np.random.default_rng(seed)``: the same seed, the same arguments."""
    _check_dim_range(min_dim, max_dim)
    return _arguments(_param_layouts(fn), _RandomSource(seed), dict(dims or {}), min_dim, max_dim)
