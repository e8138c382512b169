"""The reference semantics of an index-expression operator, in NumPy: what the evaluator runs and
the oracle for its derived parts. An adjoint (relayish/ix/derive.py) evaluates each scatter's
value and positions over its grid and adds them with ``np.add.at``, in float64.

Every index variable in scope owns one axis of a grid: the output's indices first, then each
enclosing reduction's axes, innermost last. A node's value is an array over that grid, of size 1
along the axes it does not depend on, so a read ``A[i, k]`` costs the sizes of ``i`` and ``k``
alone and only products of reads fill the grid. A ``Reduce`` folds its trailing axes with NumPy
(``sum`` pairwise, as NumPy sums; an empty range gives the identity: 0, 1, or -inf / +inf, and for
integers the dtype's limits). No reduction binds an axis already in scope (the definition is refused).

Reads outside an input: the index is clipped to read something, and the element is marked
invalid; ``where`` keeps the marks of the branch it chooses and arithmetic the marks of both
operands, so a guarded read (``where(y >= 0, x[y], 0)``) is fine and an unguarded one that the
result uses raises ValueError naming the input and the output position.
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np

from ..dims import Dim
from ..errors import RelayTypeError
from .language import (
    COMPARISONS, Bin, Cast, Definition, InputDim, Lit, Node, Read, Reduce, Size, Unary, Var, Where, children, nodes,
)  # fmt: skip
from .relation import DType, _combine, dtypes, output_dtype, realized

Marks = dict[int, np.ndarray]  # input position -> where a read of it fell outside
Value = tuple[np.ndarray, Marks]

_BINARY = {"+": np.add, "-": np.subtract, "*": np.multiply, "/": np.true_divide, "//": np.floor_divide,
           "%": np.remainder, "maximum": np.maximum, "minimum": np.minimum, "&": np.bitwise_and, "|": np.bitwise_or,
           "<": np.less, "<=": np.less_equal, ">": np.greater, ">=": np.greater_equal, "==": np.equal,
           "!=": np.not_equal}
_UNARY = {"-": np.negative, "~": np.invert, "exp": np.exp, "log": np.log, "tanh": np.tanh, "sqrt": np.sqrt,
          "abs": np.abs, "sin": np.sin, "cos": np.cos}
GRID_LIMIT = 1 << 24  # grid cells (output elements times reduction steps) evaluated at once; more go by rows
_FOLDS = {"sum": np.sum, "prod": np.prod, "max": np.max, "min": np.min}


def evaluate(defn: Definition, *arrays: np.ndarray) -> np.ndarray:
    """The operator's result for ``arrays`` (ValueError for arguments that do not fit it)."""
    arrays = tuple(np.asarray(a) for a in arrays)
    _check_arguments(defn, arrays)
    try:
        found = dtypes(defn, [a.dtype for a in arrays])
    except RelayTypeError as err:
        raise ValueError(f"{defn.name}: {err.message}") from None
    if defn.target is not None:
        return _adjoint(defn, arrays, found)
    whole = _Grid(arrays, found, defn.indices, None)
    shape = tuple(whole.extent(v) for v in defn.indices)
    cells = math.prod(shape) * math.prod(whole.extent(v) for n in nodes(defn.body) if isinstance(n, Reduce) for v in n.axes)
    if not shape or cells <= GRID_LIMIT or shape[0] < 2:
        return _evaluate(defn, whole)
    step = max(1, shape[0] * GRID_LIMIT // cells)
    parts = [_evaluate(defn, _Grid(arrays, found, defn.indices, (lo, min(lo + step, shape[0]))))
             for lo in range(0, shape[0], step)]
    return np.concatenate(parts)


def _evaluate(defn: Definition, grid: _Grid) -> np.ndarray:
    """The rows of the output ``grid`` covers."""
    result, marks = grid.evaluate(defn.body, defn.indices)
    _check_marks(defn, grid, marks, "output element", grid.rows[0] if grid.rows else 0)
    return np.array(result, dtype=output_dtype(defn, grid.found[id(defn.body)]))


def _check_marks(defn: Definition, grid: _Grid, marks: Marks, what: str, first_row: int) -> None:
    """Raise the error of the first element (its first index offset by ``first_row``) that read an
    input outside its shape."""
    for k, mark in marks.items():
        if mark.any():
            position = tuple(int(i) for i in np.argwhere(mark)[0])
            position = (position[0] + first_row, *position[1:]) if position else position
            raise ValueError(f"{defn.name}: {what} {position} reads {defn.inputs[k]} outside its shape "
                             f"{grid.arrays[k].shape} (guard the read with ix.where)")


def _adjoint(defn: Definition, arrays: tuple[np.ndarray, ...], found: dict[int, DType]) -> np.ndarray:
    """The sum of the scatters (np.add.at, in float64), in the target's dtype."""
    target = arrays[defn.target]  # type: ignore[index]
    total = np.zeros(target.shape, np.float64)
    grid = _Grid(arrays, found, (), None)
    for part in defn.scatters:
        value, marks = grid.evaluate(part.value, part.space)
        places = [grid.evaluate(t, part.space)[0] for t in part.targets]
        inside = np.ones(value.shape, bool)
        for place, size in zip(places, target.shape):
            inside &= (place >= 0) & (place < size)
        _check_marks(defn, grid, {k: m & inside for k, m in marks.items()}, "scatter element", 0)  # skipped ones are unread
        np.add.at(total, tuple(p[inside] for p in places), value[inside])
    return total.astype(target.dtype)


def _check_arguments(defn: Definition, arrays: tuple[np.ndarray, ...]) -> None:
    if len(arrays) != len(defn.inputs):
        raise ValueError(f"{defn.name} takes {len(defn.inputs)} arguments ({', '.join(defn.inputs)}), "
                         f"given {len(arrays)}")
    for name, rank, used, a in zip(defn.inputs, defn.ranks, defn.shape_axes, arrays):
        if rank is not None and a.ndim != rank or a.ndim < used:
            raise ValueError(f"{defn.name}: {name} must have rank {rank if rank is not None else f'>= {used}'}, "
                             f"not shape {a.shape}")


def _merge(*all_marks: Marks) -> Marks:
    merged: Marks = {}
    for marks in all_marks:
        for k, m in marks.items():
            merged[k] = merged[k] | m if k in merged else m
    return merged


class _Grid:
    """One evaluation: the arguments, their sizes, every node's dtype."""

    def __init__(self, arrays: tuple[np.ndarray, ...], found: dict[int, DType], indices: tuple[Var, ...],
                 rows: tuple[int, int] | None):
        self.arrays, self.found = arrays, found
        self.first = indices[0] if indices and rows else None  # the output index whose range is ``rows``
        self.rows = rows
        self.sizes = {InputDim(k, axis, ""): Dim.const(n) for k, a in enumerate(arrays) for axis, n in enumerate(a.shape)}

    def size(self, d: Dim) -> int:
        value = d.substitute(self.sizes).value
        if value is None or value < 0:
            raise ValueError(f"a dimension of the definition is {value} for these arguments")
        return value

    def evaluate(self, body: Node, space: tuple[Var, ...]) -> Value:
        """``body``'s value and marks over the grid of ``space``, broadcast to its full shape."""
        values: dict[tuple, Value] = {}
        stack: list[tuple[Node, tuple[Var, ...], bool]] = [(body, space, False)]
        while stack:
            n, scope, ready = stack.pop()
            key = (id(n), *map(id, scope))
            if key in values:
                continue
            inner = scope + n.axes if isinstance(n, Reduce) else scope
            if not ready:
                stack.append((n, scope, True))
                stack.extend((c, inner, False) for c in children(n))
                continue
            values[key] = self.value(n, [values[(id(c), *map(id, inner))] for c in children(n)], scope)
        result, marks = values[(id(body), *map(id, space))]
        shape = tuple(self.extent(v) for v in space)
        return np.broadcast_to(result, shape), {k: np.broadcast_to(m, shape) for k, m in marks.items()}

    def extent(self, v: Var) -> int:
        return self.rows[1] - self.rows[0] if v is self.first and self.rows else self.size(v.extent)

    def value(self, n: Node, args: list[Value], scope: tuple[Var, ...]) -> Value:
        rank = len(scope)
        dtype = realized(self.found[id(n)])
        if isinstance(n, Var):
            axis = next(p for p, v in enumerate(scope) if v is n)
            lo, hi = self.rows if n is self.first and self.rows else (0, self.extent(n))
            return np.arange(lo, hi, dtype=np.int64).reshape([-1 if p == axis else 1 for p in range(rank)]), {}
        if isinstance(n, (Lit, Size)):
            return np.full((1,) * rank, n.value if isinstance(n, Lit) else self.size(n.dim), dtype), {}
        if isinstance(n, Read):
            return _read(n, args, self.arrays[n.input], rank)
        values = [a for a, _ in args]
        marks = _merge(*(m for _, m in args))
        if isinstance(n, Bin):
            common = realized(_combine(self.found[id(n.a)], self.found[id(n.b)])) if n.op in COMPARISONS else dtype
            return _BINARY[n.op](values[0].astype(common, copy=False), values[1].astype(common, copy=False)), marks
        if isinstance(n, Unary):
            x = values[0].astype(dtype, copy=False)
            if n.op == "sigmoid":
                return (1 / (1 + np.exp(-x))).astype(dtype, copy=False), marks
            return _UNARY[n.op](x).astype(dtype, copy=False), marks
        if isinstance(n, Where):
            (c, a, b), (mc, ma, mb) = values, (m for _, m in args)
            chosen = {k: np.where(c, ma.get(k, False), mb.get(k, False)) for k in ma.keys() | mb.keys()}
            return np.where(c, a.astype(dtype, copy=False), b.astype(dtype, copy=False)), _merge(mc, chosen)
        if isinstance(n, Cast):
            return values[0].astype(dtype), marks
        assert isinstance(n, Reduce)
        full = values[0].shape[:rank] + tuple(self.extent(v) for v in n.axes)
        body = np.broadcast_to(values[0], full)
        axes = tuple(range(rank, rank + len(n.axes)))
        if n.kind in ("sum", "prod"):
            folded = _FOLDS[n.kind](body, axis=axes, dtype=dtype)
        else:
            folded = _FOLDS[n.kind](body, axis=axes, initial=_identity(n.kind, dtype))
        return folded, {k: np.broadcast_to(m, np.broadcast_shapes(m.shape, full)).any(axis=axes) for k, m in marks.items()}


def _identity(kind: str, dtype: np.dtype) -> Any:
    if dtype.kind == "f":
        return -np.inf if kind == "max" else np.inf
    if dtype.kind == "b":
        return kind == "min"
    info = np.iinfo(dtype)
    return info.min if kind == "max" else info.max


def _read(n: Read, args: list[Value], data: np.ndarray, rank: int) -> Value:
    indices = [a for a, _ in args]
    marks = _merge(*(m for _, m in args))
    shape = np.broadcast_shapes(*(i.shape for i in indices), (1,) * rank)
    outside = np.zeros(shape, bool)
    clipped = []
    for axis, index in enumerate(indices):
        size = data.shape[axis]
        outside = outside | (index < 0) | (index >= size)
        clipped.append(np.clip(index, 0, max(size - 1, 0)))
    if data.size == 0:
        value = np.zeros(shape, data.dtype)
    else:
        value = data[tuple(clipped)] if clipped else np.full(shape, data[()], data.dtype)
        value = np.broadcast_to(value, shape)
    if outside.any():
        marks = _merge(marks, {n.input: outside})
    return value, marks
