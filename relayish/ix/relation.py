"""What the type checker knows of an index-expression operator: its dtypes and its type relation.

Dtypes follow NumPy's rules for arrays and Python numbers (NEP 50): index variables, sizes and
Python numbers are *weak* ("int" or "float") and take the dtype of the array value they meet, so
``x[i] * 2.0`` keeps float32 and ``x[i] + i`` keeps x's dtype; two arrays promote as NumPy
promotes them. A body that is weak throughout gives int64 or float32 (relayish's default float),
unless the definition names its dtype.

The relation: every argument is a tensor of the rank its reads use, with a known dtype; the
result has the definition's shape with the arguments' dimensions put in. A read whose index is
an index variable alone (``B[k, j]``) requires the variable's range to be that axis's size, as a
built-in operator requires its inner dimensions to agree; other indices (``x[i + 1]``, ``x[idx[i]]``)
are checked when the operator runs, where a read outside the input is an error unless a ``where``
does not choose it.
"""

from __future__ import annotations

from typing import Any, Sequence, Union

import numpy as np

from ..dims import Dim, dim_text
from ..errors import RelayTypeError
from ..types import BaseType, Shape, TensorType, Type
from .language import (
    COMPARISONS, FUNCTIONS, LOGICAL, Bin, Cast, Definition, InputDim, Lit, Node, Read, Reduce, Size, Unary, Var,
    Where, nodes, post_order,
)  # fmt: skip

DType = Union[np.dtype, str]  # a NumPy dtype, or a weak kind: "int" or "float"
_SAMPLE = {"int": 0, "float": 0.0}


def realized(t: DType) -> np.dtype:
    """The dtype a value of ``t`` is computed in: weak ints in int64, weak floats in float64."""
    return np.dtype(np.int64 if t == "int" else np.float64) if isinstance(t, str) else t


def output_dtype(defn: Definition, t: DType) -> np.dtype:
    """The result's dtype: the one the definition names, else the body's (weak: int64, float32)."""
    if defn.dtype is not None:
        return np.dtype(defn.dtype)
    return np.dtype(np.int64 if t == "int" else np.float32) if isinstance(t, str) else t


def _combine(a: DType, b: DType) -> DType:
    if isinstance(a, str) and isinstance(b, str):
        return "float" if "float" in (a, b) else "int"
    return np.result_type(_SAMPLE.get(a, a), _SAMPLE.get(b, b))  # type: ignore[arg-type]


def _floating(t: DType) -> DType:
    if isinstance(t, str):
        return "float"
    return t if t.kind == "f" else np.dtype(np.float64)


def _is_integer(t: DType) -> bool:
    return t == "int" or isinstance(t, np.dtype) and t.kind in "iu"


def _is_bool(t: DType) -> bool:
    return isinstance(t, np.dtype) and t.kind == "b"


def dtypes(defn: Definition, inputs: Sequence[np.dtype]) -> dict[int, DType]:
    """Every node's dtype, by ``id``, for inputs of dtypes ``inputs``; RelayTypeError for an index
    that is not an integer or a ``where`` condition that is not a boolean."""
    found: dict[int, DType] = {}
    for n in post_order(*defn.roots()):
        found[id(n)] = _dtype(n, found, inputs, defn)
    return found


def _dtype(n: Node, found: dict[int, DType], inputs: Sequence[np.dtype], defn: Definition) -> DType:
    if isinstance(n, (Var, Size)):
        return "int"
    if isinstance(n, Lit):
        return np.dtype(np.bool_) if isinstance(n.value, bool) else "float" if isinstance(n.value, float) else "int"
    if isinstance(n, Read):
        for position, index in enumerate(n.indices):
            if not _is_integer(found[id(index)]):
                raise RelayTypeError(f"{defn.inputs[n.input]}: index {position} is {_name(found[id(index)])}, "
                                     "not an integer (write ix.cast(..., 'int64') to truncate)")
        return inputs[n.input]
    if isinstance(n, Bin):
        a, b = found[id(n.a)], found[id(n.b)]
        if n.op in COMPARISONS:
            _combine(a, b)
            return np.dtype(np.bool_)
        if n.op in LOGICAL and not all(_is_bool(t) or _is_integer(t) for t in (a, b)):
            raise RelayTypeError(f"'{n.op}' combines booleans or integers, not {_name(a)} and {_name(b)}")
        t = _combine(a, b)
        return _floating(t) if n.op == "/" else t
    if isinstance(n, Unary):
        a = found[id(n.a)]
        return _floating(a) if n.op in FUNCTIONS and n.op != "abs" else a
    if isinstance(n, Where):
        if not _is_bool(found[id(n.cond)]):
            raise RelayTypeError(f"a where's condition must be a boolean (a comparison), not {_name(found[id(n.cond)])}")
        return _combine(found[id(n.a)], found[id(n.b)])
    if isinstance(n, Cast):
        return np.dtype(n.dtype)
    assert isinstance(n, Reduce)
    return found[id(n.body)]


def _name(t: DType) -> str:
    return f"a Python {t}" if isinstance(t, str) else str(t)


def relation(defn: Definition) -> Any:
    """The type relation of ``defn``'s operator."""

    def relate(args: list[Type], attrs: dict[str, Any]) -> Type:
        sizes: dict[object, Dim] = {}
        for k, (name, ty) in enumerate(zip(defn.inputs, args)):
            where = f"argument {k + 1} ({name})"
            if not isinstance(ty, TensorType):
                raise RelayTypeError(f"{where} must be a tensor, not {ty}")
            if not isinstance(ty.shape, Shape) or not isinstance(ty.dtype, BaseType):
                raise RelayTypeError(f"{where} needs a known rank and dtype, not {ty}")
            rank, used = defn.ranks[k], defn.shape_axes[k]
            if rank is not None and ty.shape.rank != rank:
                raise RelayTypeError(f"{where} must have rank {rank} (its reads have {rank} indices), not {ty}")
            if ty.shape.rank < used:
                raise RelayTypeError(f"{where} must have at least {used} axes (the definition uses "
                                     f"{name}.shape[{used - 1}]), not {ty}")
            for axis, d in enumerate(ty.shape.dims):
                sizes[InputDim(k, axis, f"{name}.shape[{axis}]")] = d
        found = dtypes(defn, [t.dtype.to_numpy() for t in args])  # type: ignore[union-attr]
        _check_lone_reads(defn, args, sizes)
        if defn.target is not None:  # an adjoint: of its input's type
            return args[defn.target]
        dims = [d.substitute(sizes) for d in defn.shape]
        ranges = [(f"dimension {k} of the result", d, dim) for k, (d, dim) in enumerate(zip(defn.shape, dims))]
        ranges += [(f"the range of {v.name}", v.extent, v.extent.substitute(sizes))
                   for n in nodes(defn.body) if isinstance(n, Reduce) for v in n.axes]
        for what, written, size in ranges:
            if size.is_const and size.value < 0:
                raise RelayTypeError(f"{what} is {size.value} for these arguments ({dim_text(written, _input_dim)})")
        return TensorType(BaseType.from_numpy(output_dtype(defn, found[id(defn.body)])), Shape(*dims))

    return relate


def _check_lone_reads(defn: Definition, args: list[Type], sizes: dict[object, Dim]) -> None:
    for n in nodes(*defn.roots()):
        if not isinstance(n, Read):
            continue
        dims = args[n.input].shape.dims  # type: ignore[union-attr]
        for axis, index in enumerate(n.indices):
            if isinstance(index, Var):
                extent = index.extent.substitute(sizes)
                if extent != dims[axis] and not extent.is_unknown and not dims[axis].is_unknown:
                    raise RelayTypeError(
                        f"{defn.inputs[n.input]}.shape[{axis}] is {dim_text(dims[axis])}, but it is read at "
                        f"{index.name}, which ranges over {dim_text(extent)} ({dim_text(index.extent, _input_dim)})")


def _input_dim(atom: object) -> str:
    return atom.name  # type: ignore[attr-defined]
