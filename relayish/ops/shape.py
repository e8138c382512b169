"""Operators that move, select, combine or create elements without arithmetic on them.

Results may be views that share memory with the arguments (reshape, transpose,
strided_slice, broadcast_to, ...): callers treat every tensor as immutable.
"""

from __future__ import annotations

import functools
import math
from typing import TYPE_CHECKING

import numpy as np
from numpy.lib.array_utils import normalize_axis_index

from ..types import BaseType, FloatType
from . import generation as gen, relations as rel
from .adjoints import forward_to
from .elementwise import INT, check_kinds, define
from .generation import Hint
from .record import AttrSpec, Pattern, Raises

if TYPE_CHECKING:
    from ..expr import Expr
    from .sites import Site

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


def _reshaped(s: Site) -> list[Expr | None]:
    """The gradient of an operator that only reshapes its argument."""
    return [s.op("reshape_like", s.g, s.args[0])]


def _transpose_gradient(s: Site) -> list[Expr | None]:
    axes = s.attrs["axes"]
    if axes is None:
        return [s.op("transpose", s.g)]
    rank = s.rank(0)
    inverse = [0] * rank
    for i, a in enumerate(axes):
        inverse[a % rank] = i
    return [s.op("transpose", s.g, axes=tuple(inverse))]


def _concatenate_gradient(s: Site) -> list[Expr | None]:
    axis = s.attrs["axis"]
    return [s.op("concatenate_backward", s.g, *s.args, axis=axis, index=i) for i in range(len(s.args))]


def _stack_gradient(s: Site) -> list[Expr | None]:
    axis = s.attrs["axis"] % (s.rank(0) + 1)
    return [s.op("take", s.g, s.constant(np.int32(i)), axis=axis) for i in range(len(s.args))]


OPS = (
    _shape_op(
        "reshape",
        _reshape,
        (
            "x with shape newshape: -1 infers one dimension, 0 copies the input's dimension at that position (as in "
            "TVM Relay)"
        ),
        attrs=(AttrSpec("newshape", "ints"),),
        relation=rel.reshape,
        gradient=_reshaped,
        raises=Raises.UNLESS_RANKED,
        rule=gen.reshape,
        hint=Hint(None),
    ),
    _shape_op(
        "transpose",
        lambda x, axes: np.transpose(x, axes),
        "x with its axes permuted by axes (None: reversed)",
        attrs=(AttrSpec("axes", "ints?", None),),
        relation=rel.transpose,
        gradient=_transpose_gradient,
        raises=Raises.NEVER,
        rule=gen.transpose,
        hint=Hint(None, 1, 3),
    ),
    _shape_op(
        "expand_dims",
        _expand_dims,
        "x with num_newaxis axes of size 1 inserted at position axis (-rank-1 <= axis <= rank)",
        attrs=(AttrSpec("axis", "int"), AttrSpec("num_newaxis", "int", 1)),
        relation=rel.expand_dims,
        gradient=_reshaped,
        raises=Raises.NEVER,
        rule=gen.expand_dims,
        hint=Hint(None, 1, 3, static=True),
    ),
    _shape_op(
        "squeeze",
        lambda x, axis: np.squeeze(x, axis=axis),
        "x without the size-1 axes in axis (None: all of them); squeezing an axis of another size is a ValueError",
        attrs=(AttrSpec("axis", "axes", None),),
        relation=rel.squeeze,
        gradient=_reshaped,
        raises=Raises.UNLESS_RANKED,
        rule=gen.squeeze,
        hint=Hint(None, 0, 2),
    ),
    _shape_op(
        "broadcast_to",
        lambda x, shape: np.broadcast_to(x, shape),
        "x broadcast to shape by NumPy rules",
        attrs=(AttrSpec("shape", "ints"),),
        relation=rel.broadcast_to,
        gradient=lambda s: [s.op("sum_to", s.g, s.args[0])],
        raises=Raises.NEVER,
        rule=gen.broadcast_to,
        hint=Hint(None, 1, 3, static=True),
    ),
    _shape_op(
        "broadcast_to_like",
        lambda x, like: np.broadcast_to(x, like.shape),
        "x broadcast to the shape of like",
        signature="x, like",
        num_args=2,
        relation=rel.broadcast_to_like,
        gradient=lambda s: [s.op("sum_to", s.g, s.args[0]), None],
        raises=Raises.NEVER,
        rule=gen.broadcast_to_like,
        hint=Hint(None, 1, 3),
    ),
    _shape_op(
        "sum_to",
        _sum_to,
        (
            "x summed down to like's shape: the leading extra axes, and (keeping them) the axes where like has 1 and x "
            "not; undoes broadcasting"
        ),
        signature="x, like",
        num_args=2,
        relation=rel.sum_to,
        gradient=lambda s: [s.op("broadcast_to_like", s.g, s.args[0]), None],
        raises=Raises.NEVER,
        rule=gen.sum_to,
        hint=Hint(None),
    ),
    _shape_op(
        "concatenate",
        lambda *xs, axis: np.concatenate(xs, axis=axis),
        "the tensors joined along an existing axis",
        signature="x1, ..., xn (n >= 1)",
        num_args=(1, None),
        attrs=(_AXIS0,),
        relation=rel.concatenate,
        gradient=_concatenate_gradient,
        raises=Raises.UNLESS_RANKED,
        rule=gen.concatenate,
        hint=Hint(None, 1, 3),
    ),
    _shape_op(
        "stack",
        lambda *xs, axis: np.stack(xs, axis=axis),
        "the equally shaped tensors joined along a new axis at position axis",
        signature="x1, ..., xn (n >= 1)",
        num_args=(1, None),
        attrs=(_AXIS0,),
        relation=rel.stack,
        gradient=_stack_gradient,
        raises=Raises.UNLESS_RANKED,
        rule=gen.stack,
        hint=Hint(None, 1, 3, static=True),
    ),
    _shape_op(
        "take",
        _take,
        (
            "data's elements at indices along axis (None: of the flattened data); an index outside 0 .. size-1 "
            "(negative included) is an IndexError; differentiable in data only"
        ),
        signature="data, indices",
        dtypes="data any; indices int",
        num_args=2,
        attrs=TAKE_ATTRS,
        relation=rel.take,
        gradient=lambda s: [s.op("take_backward", s.g, s.args[1], s.args[0], axis=s.attrs["axis"]), None],
        raises=Raises.on_indices(0),
        rule=gen.take,
        hint=Hint(None),
    ),
    _shape_op(
        "strided_slice",
        _strided_slice,
        (
            "x[begin:end:strides] along axes (default the leading len(begin) axes), Python slicing with its clamping; "
            "strides None means 1"
        ),
        attrs=SLICE_ATTRS,
        relation=rel.strided_slice,
        gradient=forward_to("strided_slice_backward", "begin", "end", "strides", "axes"),
        raises=Raises.UNLESS_RANKED,
        rule=gen.strided_slice,
        hint=Hint(None, 1, 3, static=True),
    ),
    _shape_op(
        "pad",
        _pad,
        (
            "x padded with the constant pad_value, converted to x's dtype as `cast` converts (so `inf` in an int "
            "tensor is the dtype's `cast` of inf, not an error); pad_width is the flattened (before, after) pairs, 2 * "
            "rank numbers"
        ),
        attrs=(AttrSpec("pad_width", "ints"), AttrSpec("pad_value", "float", 0.0)),
        relation=rel.pad,
        gradient=lambda s: [s.op("pad_backward", s.g, s.args[0], pad_width=s.attrs["pad_width"])],
        raises=Raises.UNLESS_RANKED,
        rule=gen.pad,
        hint=Hint(None, 1, 3, static=True),
    ),
    _shape_op(
        "flatten",
        _flatten,
        "x (rank >= 1) reshaped to (d0, d1 * ... * dn)",
        relation=rel.flatten,
        gradient=_reshaped,
        raises=Raises.UNLESS_RANKED,
        rule=gen.flatten,
        hint=Hint(None, 2, 2),
    ),
    *(
        define(name, fn, f"{name.split('_')[0]} of x's shape and dtype", pattern=Pattern.ELEMWISE, kinds=None,
               relation=rel.unary(None), element=element, raises=Raises.NEVER, rule=gen.unary(None), hint=Hint(None))
        for name, fn, element in (("zeros_like", np.zeros_like, "0"), ("ones_like", np.ones_like, "1"))
    ),
    _shape_op(
        "full",
        _full,
        "a tensor of shape and dtype filled with fill_value",
        signature="(none)",
        dtypes="—",
        num_args=0,
        attrs=(AttrSpec("shape", "ints"), AttrSpec("fill_value", "float", 0.0), _DTYPE),
        relation=rel.full,
        raises=Raises.UNLESS_RANKED,
        rule=gen.full,
        hint=Hint(None, 0, 3, static=True),
    ),
    _shape_op(
        "one_hot",
        _one_hot,
        (
            "shape indices.shape + (depth,): 1 at each index and 0 elsewhere; an index outside 0 .. depth-1 (negative "
            "included) gives a row of zeros"
        ),
        signature="indices",
        dtypes="indices int",
        num_args=1,
        attrs=(AttrSpec("depth", "int"), _DTYPE),
        relation=rel.one_hot,
        rule=gen.one_hot,
        hint=Hint(None, 1, 3, static=True),
    ),
)
