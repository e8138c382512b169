"""Operators that move, select, combine or create elements without arithmetic on them.

Results may be views that share memory with the arguments (reshape, transpose,
strided_slice, broadcast_to, ...): callers treat every tensor as immutable.
"""

from __future__ import annotations

import functools
import math

import numpy as np
from numpy.lib.array_utils import normalize_axis_index

from ..types import BaseType, FloatType
from .elementwise import INT, check_kinds, define
from .registry import AttrSpec, Pattern

_shape_op = functools.partial(define, pattern=Pattern.OPAQUE, kinds=None)


def _reshape(x: np.ndarray, newshape: tuple[int, ...]) -> np.ndarray:
    """Reshape where 0 copies the input's dimension at that position and -1 is inferred."""
    shape = []
    for position, dim in enumerate(newshape):
        if dim == 0:
            if position >= x.ndim:
                raise ValueError(
                    f"reshape: newshape[{position}] is 0, which copies input dimension {position}, "
                    f"but the input has rank {x.ndim}"
                )
            dim = x.shape[position]
        shape.append(dim)
    return np.reshape(x, shape)


def _expand_dims(x: np.ndarray, axis: int, num_newaxis: int) -> np.ndarray:
    """Insert ``num_newaxis`` axes of size 1 at position ``axis`` (in -rank-1 .. rank)."""
    if num_newaxis < 0:
        raise ValueError(f"expand_dims: num_newaxis must be >= 0, not {num_newaxis}")
    position = normalize_axis_index(axis, x.ndim + 1)
    return np.reshape(x, x.shape[:position] + (1,) * num_newaxis + x.shape[position:])


def _sum_to(x: np.ndarray, like: np.ndarray) -> np.ndarray:
    """Sum ``x`` down to ``like``'s shape, undoing NumPy broadcasting of ``like`` to ``x``."""
    extra = x.ndim - like.ndim
    if extra < 0:
        raise ValueError(f"sum_to: cannot sum shape {x.shape} to the larger rank of {like.shape}")
    result = np.sum(x, axis=tuple(range(extra)), dtype=x.dtype)
    stretched = tuple(i for i, (n, m) in enumerate(zip(result.shape, like.shape)) if m == 1 and n != 1)
    result = np.sum(result, axis=stretched, keepdims=True, dtype=x.dtype) if stretched else result
    if result.shape != like.shape:
        raise ValueError(f"sum_to: shape {like.shape} does not broadcast to {x.shape}")
    return result


def _take_axis(op: str, shape: tuple[int, ...], indices: np.ndarray, axis: int | None) -> int | None:
    """``axis`` normalized for data of ``shape``; an IndexError unless every index is in range.

    Indices must be integers in 0 .. size - 1 of the axis (None: of the flattened data).
    """
    check_kinds(op, INT, indices)
    if axis is None:
        size, where = math.prod(shape), "the flattened data"
    else:
        axis = normalize_axis_index(axis, len(shape))
        size, where = shape[axis], f"axis {axis}"
    bad = (indices < 0) | (indices >= size)
    if bad.any():
        raise IndexError(f"{op}: index {indices[bad].flat[0]} is out of range for {where} of size {size}")
    return axis


def _take(data: np.ndarray, indices: np.ndarray, axis: int | None) -> np.ndarray:
    """``np.take`` without wrap-around: every index must be in 0 .. size - 1."""
    return np.take(data, indices, axis=_take_axis("take", data.shape, indices, axis))


def _slice_index(
    op: str,
    rank: int,
    begin: tuple[int, ...],
    end: tuple[int, ...],
    strides: tuple[int, ...] | None,
    axes: tuple[int, ...] | None,
) -> tuple[slice, ...]:
    """The index ``[begin:end:stride]`` along each of ``axes`` (default: the leading ones)."""
    axes = tuple(range(len(begin))) if axes is None else axes
    strides = (1,) * len(begin) if strides is None else strides
    if not len(begin) == len(end) == len(strides) == len(axes):
        raise ValueError(
            f"{op}: begin, end, strides and axes have lengths "
            f"{len(begin)}, {len(end)}, {len(strides)} and {len(axes)}; they must be equal"
        )
    index = [slice(None)] * rank
    seen = set()
    for axis, start, stop, step in zip(axes, begin, end, strides):
        axis = normalize_axis_index(axis, rank)
        if axis in seen:
            raise ValueError(f"{op}: axis {axis} is sliced twice")
        if step == 0:
            raise ValueError(f"{op}: a stride is 0")
        seen.add(axis)
        index[axis] = slice(start, stop, step)
    return tuple(index)


def _strided_slice(
    x: np.ndarray,
    begin: tuple[int, ...],
    end: tuple[int, ...],
    strides: tuple[int, ...] | None,
    axes: tuple[int, ...] | None,
) -> np.ndarray:
    """``x[begin:end:stride]`` along each of ``axes`` (default: the leading ones), clamped."""
    return x[_slice_index("strided_slice", x.ndim, begin, end, strides, axes)]


def _pad(x: np.ndarray, pad_width: tuple[int, ...], pad_value: float) -> np.ndarray:
    """Constant padding; ``pad_width`` is (before, after) for each axis, flattened."""
    if len(pad_width) != 2 * x.ndim:
        raise ValueError(f"pad: pad_width needs {2 * x.ndim} numbers for rank {x.ndim}, not {len(pad_width)}")
    if any(p < 0 for p in pad_width):
        raise ValueError(f"pad: pad_width {pad_width} has a negative number")
    if x.ndim == 0:
        return x.copy()
    pairs = list(zip(pad_width[0::2], pad_width[1::2]))
    value = np.asarray(pad_value).astype(x.dtype)  # converted as cast does: inf in an int tensor is no error
    return np.pad(x, pairs, mode="constant", constant_values=value)


def _flatten(x: np.ndarray) -> np.ndarray:
    if x.ndim == 0:
        raise ValueError("flatten: needs a tensor of rank >= 1")
    return np.reshape(x, (x.shape[0], math.prod(x.shape[1:])))


def _full(shape: tuple[int, ...], fill_value: float, dtype: BaseType) -> np.ndarray:
    return np.full(shape, fill_value, dtype=dtype.to_numpy())


def _one_hot(indices: np.ndarray, depth: int, dtype: BaseType) -> np.ndarray:
    check_kinds("one_hot", INT, indices)
    if depth < 0:
        raise ValueError(f"one_hot: depth must be >= 0, not {depth}")
    return (indices[..., np.newaxis] == np.arange(depth)).astype(dtype.to_numpy())


_AXIS0 = AttrSpec("axis", "int", 0)
# The attribute schemas the gradient operators (grad_ops.py) share with their forward operators.
TAKE_ATTRS = (AttrSpec("axis", "int?", None),)
SLICE_ATTRS = (
    AttrSpec("begin", "ints"),
    AttrSpec("end", "ints"),
    AttrSpec("strides", "ints?", None),
    AttrSpec("axes", "ints?", None),
)
_DTYPE = AttrSpec("dtype", "dtype", FloatType(32))

_shape_op(
    "reshape",
    _reshape,
    "x with shape newshape: -1 infers one dimension, 0 copies the input's dimension at that position",
    attrs=(AttrSpec("newshape", "ints"),),
)
_shape_op(
    "transpose",
    lambda x, axes: np.transpose(x, axes),
    "x with its axes permuted by axes (None: reversed)",
    attrs=(AttrSpec("axes", "ints?", None),),
)
_shape_op(
    "expand_dims",
    _expand_dims,
    "x with num_newaxis axes of size 1 inserted at position axis (-rank-1 <= axis <= rank)",
    attrs=(AttrSpec("axis", "int"), AttrSpec("num_newaxis", "int", 1)),
)
_shape_op(
    "squeeze",
    lambda x, axis: np.squeeze(x, axis=axis),
    "x without the size-1 axes in axis (None: all of them); squeezing another size is an error",
    attrs=(AttrSpec("axis", "axes", None),),
)
_shape_op(
    "broadcast_to",
    lambda x, shape: np.broadcast_to(x, shape),
    "x broadcast to shape by NumPy rules",
    attrs=(AttrSpec("shape", "ints"),),
)
_shape_op(
    "broadcast_to_like",
    lambda x, like: np.broadcast_to(x, like.shape),
    "x broadcast to the shape of like",
    num_args=2,
)
_shape_op(
    "sum_to",
    _sum_to,
    "x summed down to the shape of like (the inverse of broadcasting like to x's shape)",
    num_args=2,
)
_shape_op(
    "concatenate",
    lambda *xs, axis: np.concatenate(xs, axis=axis),
    "the tensors joined along an existing axis",
    num_args=(1, None),
    attrs=(_AXIS0,),
)
_shape_op(
    "stack",
    lambda *xs, axis: np.stack(xs, axis=axis),
    "the equally shaped tensors joined along a new axis at position axis",
    num_args=(1, None),
    attrs=(_AXIS0,),
)
_shape_op(
    "take",
    _take,
    "elements of data at integer indices along axis (None: flattened); out of range is IndexError",
    num_args=2,
    attrs=TAKE_ATTRS,
)
_shape_op(
    "strided_slice",
    _strided_slice,
    "x[begin:end:strides] along axes (default the leading ones), Python slicing with clamping",
    attrs=SLICE_ATTRS,
)
_shape_op(
    "pad",
    _pad,
    "x padded with pad_value (converted to x's dtype as cast does); pad_width is the flattened (before, after) pairs, one per axis",
    attrs=(AttrSpec("pad_width", "ints"), AttrSpec("pad_value", "float", 0.0)),
)
_shape_op("flatten", _flatten, "x reshaped to (d0, d1 * ... * dn)")
for _name, _fn in (("zeros_like", np.zeros_like), ("ones_like", np.ones_like)):
    define(_name, _fn, f"{_name.split('_')[0]} of x's shape and dtype", pattern=Pattern.ELEMWISE, kinds=None,
           differentiable=False)
_shape_op(
    "full",
    _full,
    "a tensor of shape and dtype filled with fill_value",
    num_args=0,
    attrs=(AttrSpec("shape", "ints"), AttrSpec("fill_value", "float", 0.0), _DTYPE),
    differentiable=False,
)
_shape_op(
    "one_hot",
    _one_hot,
    "indices.shape + (depth,): 1 at each index, 0 elsewhere; an index outside 0..depth-1 gives a row of 0",
    num_args=1,
    attrs=(AttrSpec("depth", "int"), _DTYPE),
    differentiable=False,
)
