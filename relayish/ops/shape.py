"""Operators that move, select, combine or create elements without arithmetic on them.

Results may be views that share memory with the arguments (reshape, transpose,
strided_slice, broadcast_to, ...): callers treat every tensor as immutable.
"""

from __future__ import annotations

import functools
import math
from typing import TYPE_CHECKING, Any, NoReturn

import numpy as np
from numpy.lib.array_utils import normalize_axis_index

from ..dims import Dim
from ..types import BaseType, BoolType, FloatType, IntType, Shape, UIntType
from . import generation as gen, relations as rel
from .adjoints import forward_to
from .elementwise import INT, check_kinds, define
from .generation import Hint
from .record import AttrSpec, Pattern, Raises

if TYPE_CHECKING:
    from ..expr import Expr
    from ..types import TensorType
    from .sites import Site

_shape_op = functools.partial(define, pattern=Pattern.OPAQUE, kinds=None)


def value_error(op: str) -> rel.Fail:
    """A ``fail`` for the shared shape rules of ``relations`` raising ValueError at run time."""

    def fail(message: str) -> NoReturn:
        raise ValueError(f"{op}: {message}")

    return fail


def _reshape(x: np.ndarray, newshape: tuple[int, ...]) -> np.ndarray:
    """newshape's sizes and Relay's codes 0, -1, -2, -3, -4 resolved as the type relation resolves them."""
    return np.reshape(x, rel.reshaped(newshape, x.shape, value_error("reshape")))


def dyn_shape(newshape: np.ndarray, data: Any) -> tuple[int, ...]:
    """The shape dyn_reshape gives ``data`` (an array, a NumPy scalar or a device array) for the
    values of ``newshape``: sizes and Relay's dyn.reshape codes 0, -1 and -3, each standing at the
    input dimension after those the values before it use, as reshape's (-2 and -4 would make the
    rank depend on values). A ValueError says what was expected. The evaluator and both JIT
    targets resolve it here, so they refuse alike."""
    check_kinds("dyn_reshape", INT, newshape)
    fail = value_error("dyn_reshape")
    if newshape.ndim != 1:
        fail(f"newshape must be a vector, not of shape {newshape.shape}")
    values = [int(v) for v in newshape]
    for position, value in enumerate(values):
        if value < 0 and value not in (-1, -3):
            fail(f"newshape[{position}] is {value}, but newshape holds sizes (>= 1) and the codes 0 (copy), -1 "
                 "(infer) and -3 (merge two); -2 and -4 would make the result's rank depend on values")
    shape = tuple(rel.reshaped(values, np.shape(data), fail))
    # an empty result may have huge sizes beside its 0: NumPy refuses one whose other sizes overflow its byte count
    if math.prod(n for n in shape if n) * data.dtype.itemsize > np.iinfo(np.intp).max:
        fail(f"the shape {shape} is too large for an array of {data.dtype}")
    return shape


def _dyn_reshape(data: np.ndarray, newshape: np.ndarray) -> np.ndarray:
    return np.reshape(data, dyn_shape(newshape, data))


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


def _taken_axis(shape: tuple[int, ...], axis: int | None) -> tuple[int | None, int, str]:
    """(axis normalized, its size, its name in messages) for data of ``shape``; None: the flattened data."""
    if axis is None:
        return None, math.prod(shape), "the flattened data"
    axis = normalize_axis_index(axis, len(shape))
    return axis, shape[axis], f"axis {axis}"


def _take_axis(op: str, shape: tuple[int, ...], indices: np.ndarray, axis: int | None) -> int | None:
    """``axis`` normalized for data of ``shape``; an IndexError unless every index is in range.

    Indices must be integers in 0 .. size - 1 of the axis (None: of the flattened data).
    """
    check_kinds(op, INT, indices)
    axis, size, where = _taken_axis(shape, axis)
    bad = (indices < 0) | (indices >= size)
    if bad.any():
        raise IndexError(f"{op}: index {indices[bad].flat[0]} is out of range for {where} of size {size}")
    return axis


def _take(data: np.ndarray, indices: np.ndarray, axis: int | None, mode: str) -> np.ndarray:
    """``np.take``: in mode raise every index must be in 0 .. size - 1; clip clamps the indices into
    that range, wrap takes them modulo size (computed in int64, uint64 for uint64 indices)."""
    rel.check_take_mode(mode, value_error("take"))
    if mode != "raise":
        check_kinds("take", INT, indices)
        _, size, where = _taken_axis(data.shape, axis)
        if size == 0 and indices.size:
            raise IndexError(f"take: mode {mode} has no element to take from {where}, of size 0")
        wide = indices.astype(np.uint64 if indices.dtype == np.uint64 else np.int64)
        indices = np.clip(wide, 0, max(size - 1, 0)) if mode == "clip" else np.mod(wide, max(size, 1))
    return np.take(data, indices, axis=_take_axis("take", data.shape, indices, axis))


def _gathered(op: str, shape: tuple[int, ...], indices: np.ndarray, axis: int) -> tuple[np.ndarray, ...]:
    """Where ``gather(data, indices, axis)`` reads data of ``shape``, as an index of it: the indices
    along axis, each position's own coordinates along the others. ValueError unless the indices
    have data's rank and along the other axes at most its sizes; IndexError unless each index is in
    0 .. size - 1."""
    check_kinds(op, INT, indices)
    if indices.ndim != len(shape):
        raise ValueError(f"{op}: the indices {indices.shape} must have the rank of the data {shape}")
    axis = normalize_axis_index(axis, len(shape))
    if any(k > n for d, (k, n) in enumerate(zip(indices.shape, shape)) if d != axis):
        raise ValueError(f"{op}: the indices {indices.shape} are longer than the data {shape} along an axis but {axis}")
    _take_axis(op, shape, indices, axis)
    own = np.indices(indices.shape, sparse=True)
    return tuple(indices if d == axis else own[d] for d in range(len(shape)))


def _gather(data: np.ndarray, indices: np.ndarray, axis: int) -> np.ndarray:
    return data[_gathered("gather", data.shape, indices, axis)]


def _slice_index(
    op: str,
    rank: int,
    begin: tuple[int, ...],
    end: tuple[int, ...],
    strides: tuple[int, ...] | None,
    axes: tuple[int, ...] | None,
) -> tuple[slice, ...]:
    """The index ``[begin:end:stride]`` along each sliced axis (``relations.slice_columns``)."""
    index = [slice(None)] * rank
    for axis, start, stop, step in rel.slice_columns(begin, end, strides, axes, rank, value_error(op)):
        index[axis] = slice(start, stop, step)
    return tuple(index)


def _strided_slice(
    x: np.ndarray,
    begin: tuple[int, ...],
    end: tuple[int, ...],
    strides: tuple[int, ...] | None,
    axes: tuple[int, ...] | None,
    slice_mode: str,
) -> np.ndarray:
    """``x[begin:end:stride]`` along each sliced axis, clamped; in size mode ``x[begin:begin + size]``
    with begin counted from the end when negative and clamped first, strides ignored."""
    fail = value_error("strided_slice")
    rel.check_slice_mode(slice_mode, fail)
    if slice_mode == "end":
        return x[_slice_index("strided_slice", x.ndim, begin, end, strides, axes)]
    index = [slice(None)] * x.ndim
    for axis, start, size, _ in rel.slice_columns(begin, end, None, axes, x.ndim, fail):
        index[axis] = slice(*rel.size_bounds(start, size, x.shape[axis]))
    return x[tuple(index)]


def _pad(x: np.ndarray, pad_width: tuple[int, ...], pad_value: float, pad_mode: str) -> np.ndarray:
    """NumPy's padding in ``pad_mode`` (checked as the relation checks it); ``pad_width`` is
    (before, after) for each axis, flattened."""
    rel.padded_dims([Dim.const(n) for n in x.shape], pad_width, pad_mode, value_error("pad"))
    if x.ndim == 0:
        return x.copy()
    pairs = list(zip(pad_width[0::2], pad_width[1::2]))
    if pad_mode != "constant":
        return np.pad(x, pairs, mode=pad_mode)
    value = np.asarray(pad_value).astype(x.dtype)  # converted as cast does: inf in an int tensor is no error
    return np.pad(x, pairs, mode="constant", constant_values=value)


def _flatten(x: np.ndarray) -> np.ndarray:
    if x.ndim == 0:
        raise ValueError("flatten: needs a tensor of rank >= 1")
    return np.reshape(x, (x.shape[0], math.prod(x.shape[1:])))


def fill_argument(op: str, fill: tuple[np.ndarray, ...], position: int, fill_value: float | None, required: bool
                  ) -> np.ndarray | None:
    """The fill value when given as argument ``position`` (checked as the relation checks it: a
    scalar, not given twice), None when it is the attribute ``fill_value`` or, unless
    ``required``, neither (``full``, ``full_like``)."""
    rel.check_fill([Shape(*v.shape) for v in fill], position, fill_value, required, value_error(op))
    return fill[0] if fill else None


def _full(*fill: np.ndarray, shape: tuple[int, ...], fill_value: float | None, dtype: BaseType) -> np.ndarray:
    value = fill_argument("full", fill, 1, fill_value, required=False)
    if value is None:
        return np.full(shape, 0.0 if fill_value is None else fill_value, dtype=dtype.to_numpy())
    return np.full(shape, value.astype(dtype.to_numpy()))  # converted as cast converts


def _one_hot(indices: np.ndarray, depth: int, on_value: float, off_value: float, axis: int, dtype: BaseType
             ) -> np.ndarray:
    check_kinds("one_hot", INT, indices)
    if depth < 0:
        raise ValueError(f"one_hot: depth must be >= 0, not {depth}")
    rank = indices.ndim + 1
    rel.normalize_axis(axis, rank, f"the depth axis of a result of rank {rank}", value_error("one_hot"))
    on, off = (np.asarray(v).astype(dtype.to_numpy()) for v in (on_value, off_value))  # as cast converts
    return np.moveaxis(np.where(indices[..., np.newaxis] == np.arange(depth), on, off), -1, axis)


_AXIS0 = AttrSpec("axis", "int", 0)
# The attribute schemas the gradient operators (grad_ops.py) share with their forward operators.
TAKE_ATTRS = (AttrSpec("axis", "int?", None),)
GATHER_ATTRS = (AttrSpec("axis", "int"),)
SLICE_ATTRS = (
    AttrSpec("begin", "ints"),
    AttrSpec("end", "ints"),
    AttrSpec("strides", "ints?", None),
    AttrSpec("axes", "ints?", None),
)
_DTYPE = AttrSpec("dtype", "dtype", FloatType(32))


def _reshaped(s: Site) -> list[Expr | None]:
    """The gradient of an operator that only reshapes its first argument (the others, such as
    dyn_reshape's newshape, only say how: they get none)."""
    return [s.op("reshape_like", s.g, s.args[0]), *[None] * (len(s.args) - 1)]


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


def _take_lowering(s: Site) -> Expr | None:
    """Clip and wrap as a take in raise mode of the indices clamped into 0 .. size - 1 or taken
    modulo max(size, 1), with the size from ndarray_size (symbolic too), in int64 (uint64
    indices in uint64): the gradient and the kernels are take's. Raise mode is primitive. An
    empty axis gives the index -1 (in uint64 the largest) or 0, which take raises for."""
    if s.attrs["mode"] == "raise":
        return None
    data, indices = s.args
    axis, dtype = s.attrs["axis"], s.types[1].dtype
    wide = UIntType(64) if dtype == UIntType(64) else IntType(64)
    if dtype != wide:
        indices = s.op("cast", indices, dtype=wide)
    size = s.op("ndarray_size", data, axis=axis, dtype=wide)
    zero, one = (s.constant(np.array(v, wide.to_numpy())) for v in (0, 1))
    if s.attrs["mode"] == "wrap":
        indices = s.op("floor_mod", indices, s.op("maximum", size, one))
    else:
        indices = s.op("minimum", s.op("maximum", indices, zero), s.op("sub", size, one))
    return s.op("take", data, indices, axis=axis)


def _strided_slice_lowering(s: Site) -> Expr | None:
    """Size mode, and lists shorter than the others, written in end mode with begin, end, strides
    and axes of one length and every bound explicit (the relation makes each axis not sliced
    whole static; those sliced whole are left out): the form the kernels and the gradient
    (strided_slice_backward) take. None for a call in that form."""
    begin, end, strides, axes, mode = (s.attrs[k] for k in ("begin", "end", "strides", "axes", "slice_mode"))
    if mode == "end" and len({len(v) for v in (begin, end, strides, axes) if v is not None}) == 1:
        return None
    size_mode = mode == "size"
    dims = s.types[0].shape.dims
    columns = []
    for column in rel.slice_columns(begin, end, None if size_mode else strides, axes, len(dims), rel.fail):
        if rel.whole_axis(column, size_mode):
            continue
        axis, start, stop, step = column
        n = dims[axis].value
        if size_mode:
            start, stop = rel.size_bounds(start, stop, n)
        else:
            start = (0 if step > 0 else n - 1) if start is None else start
            stop = (n if step > 0 else -n - 1) if stop is None else stop  # -n - 1: before the first element
        columns.append((axis, start, stop, step))
    if not columns:
        return s.args[0]
    axes, begin, end, strides = zip(*columns)
    return s.op("strided_slice", s.args[0], begin=begin, end=end, strides=strides, axes=axes)


def _padded_positions(mode: str, size: int, before: int, after: int) -> np.ndarray:
    """Where each element of an axis padded in ``mode`` is read from: its position clamped to
    the axis (edge), or reflected about the end elements (reflect; each width is below the
    size, so one reflection)."""
    positions = np.arange(-before, size + after)
    if mode == "edge":
        return np.clip(positions, 0, size - 1)
    positions = np.abs(positions)
    return np.where(positions < size, positions, 2 * (size - 1) - positions)


def _pad_lowering(s: Site) -> Expr | None:
    """Edge and reflect padding as a take of constant positions along each padded axis (whose
    size the relation makes static), so the gradient is take's; constant padding is primitive
    (its kernels, and pad_backward for its gradient)."""
    mode = s.attrs["pad_mode"]
    if mode == "constant":
        return None
    x, widths = s.args[0], s.attrs["pad_width"]
    for axis, d in enumerate(s.types[0].shape.dims):
        before, after = widths[2 * axis], widths[2 * axis + 1]
        if before or after:
            x = s.op("take", x, s.constant(_padded_positions(mode, d.value, before, after)), axis=axis)
    return x


def as_fill(s: Site, value: Expr, t: TensorType, dtype: BaseType) -> Expr:
    """A fill value argument of type ``t`` converted to ``dtype`` as cast converts."""
    return value if t.dtype == dtype else s.op("cast", value, dtype=dtype)


def _full_lowering(s: Site) -> Expr | None:
    """The fill argument converted and broadcast to the shape, so its gradient is the sum of g;
    the attribute form is primitive, an omitted fill_value written out as the 0 it means (the
    kernels read it)."""
    shape, dtype = s.attrs["shape"], s.attrs["dtype"]
    if s.args:
        return s.op("broadcast_to", as_fill(s, s.args[0], s.types[0], dtype), shape=shape)
    if s.attrs["fill_value"] is None:
        return s.op("full", shape=shape, fill_value=0.0, dtype=dtype)
    return None


def _one_hot_lowering(s: Site) -> Expr | None:
    """Other on and off values chosen by where from a boolean one_hot, another axis made by a
    transpose moving the depth axis there; the plain call (1 and 0, depth last) is primitive."""
    rank = s.rank(0)
    at = s.attrs["axis"] % (rank + 1)
    on, off, depth, dtype = (s.attrs[k] for k in ("on_value", "off_value", "depth", "dtype"))
    plain = on == 1.0 and off == 0.0 and math.copysign(1.0, off) > 0  # -0.0 is another off value
    if plain and at == rank:
        return None
    if plain:
        out = s.op("one_hot", s.args[0], depth=depth, dtype=dtype)
    else:
        on_off = (s.op("cast", s.constant(np.float64(v)), dtype=dtype) for v in (on, off))
        out = s.op("where", s.op("one_hot", s.args[0], depth=depth, dtype=BoolType()), *on_off)
    if at != rank:
        out = s.op("transpose", out, axes=(*range(at), rank, *range(at, rank)))
    return out


OPS = (
    _shape_op(
        "reshape",
        _reshape,
        (
            "x with shape newshape, whose entries are sizes or TVM Relay's codes: 0 copies an input dimension, -1 "
            "infers one dimension from the element count, -2 copies all the input dimensions left, -3 merges two "
            "input dimensions into one, -4 splits one into the two sizes after it (one of them may be -1). As in "
            "Relay, each code stands at the input dimension after those the entries before it use (a size, 0, -1 "
            "and -4 use one, -3 two, -2 the rest)"
        ),
        attrs=(AttrSpec("newshape", "ints"),),
        relation=rel.reshape,
        gradient=_reshaped,
        raises=Raises.UNLESS_RANKED,
        rule=gen.reshape,
        hint=Hint(None),
    ),
    _shape_op(
        "dyn_reshape",
        _dyn_reshape,
        (
            "Relay's dyn.reshape: data with the shape the values of newshape give, a vector known when the program "
            "runs (its length, the result's rank, is static); each value is a size or one of the codes Relay's "
            "dynamic reshape takes: 0 copies an input dimension, -1 infers one dimension from the element count, -3 "
            "merges two input dimensions into one, each standing at the input dimension after those the values "
            "before it use (a size, 0 and -1 use one, -3 two), as in reshape; -2, -4 (which would make the rank "
            "depend on values), any other negative value, two -1s or sizes that do not keep the element count are a "
            "ValueError. Every dimension of the result's type is ?, except that a rank-1 result is data's element "
            "count. Relay's allowzero (0 as a size) is not supported. Differentiable in data"
        ),
        signature="data, newshape",
        dtypes="data any; newshape int",
        num_args=2,
        relation=rel.dyn_reshape,
        unknown_sizes=True,
        gradient=_reshaped,
        rule=gen.dyn_reshape,
        hint=Hint(None, 0, 3),
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
            "data's elements at indices along axis (None: of the flattened data). mode \"raise\" (the default "
            "here; Relay's default is \"clip\"): an index outside 0 .. size-1 (negative included) is an IndexError; "
            "\"clip\": each index clamped into 0 .. size-1; \"wrap\": each index modulo size (Python's non-negative "
            "modulo). Clip and wrap raise an IndexError only for indices into an empty axis, as np.take does. "
            "Differentiable in data only"
        ),
        signature="data, indices",
        dtypes="data any; indices int",
        num_args=2,
        attrs=(*TAKE_ATTRS, AttrSpec("mode", "str", "raise")),
        relation=rel.take,
        gradient=lambda s: [s.op("take_backward", s.g, s.args[1], s.args[0], axis=s.attrs["axis"]), None],
        lowering=_take_lowering,
        raises=Raises.on_indices(0),
        rule=gen.take,
        hint=Hint(None),
    ),
    _shape_op(
        "gather",
        _gather,
        (
            "Relay's gather(data, axis, indices), axis an attribute: out[i.., j, k..] = data[i.., indices[i.., j, "
            "k..], k..] with j along axis, as np.take_along_axis; the indices' shape, data's dtype. The indices have "
            "data's rank and along every other axis at most data's size (TVM's docs ask for equal sizes; a smaller "
            "one reads data's leading part, as TVM's kernel and torch.gather do); an index outside 0 .. size-1 "
            "(negative included) is an IndexError; differentiable in data only"
        ),
        signature="data, indices",
        dtypes="data any; indices int",
        num_args=2,
        attrs=GATHER_ATTRS,
        relation=rel.gather,
        gradient=lambda s: [s.op("gather_backward", s.g, s.args[1], s.args[0], axis=s.attrs["axis"]), None],
        raises=Raises.on_indices(0),
        rule=gen.gather,
        hint=Hint(None, 1, 3),
    ),
    _shape_op(
        "strided_slice",
        _strided_slice,
        (
            "x[begin:end:strides] along axes (default: the leading ones, as many as the longest list has entries), "
            "Python slicing with its clamping; where begin, end or strides is shorter, the missing begin and end are "
            "Python's defaults (the whole axis in the stride's direction) and the stride 1 (strides None: all 1). "
            "slice_mode \"size\" (TVM Relay's): end holds sizes, x[begin:begin + size] with begin counted from the "
            "end when negative and clamped first, a negative size (-1) taking all the rest; strides are ignored. "
            "Each sliced axis needs a static size unless it is sliced whole (begin 0, to the end, stride 1)"
        ),
        attrs=(*SLICE_ATTRS, AttrSpec("slice_mode", "str", "end")),
        relation=rel.strided_slice,
        gradient=forward_to("strided_slice_backward", "begin", "end", "strides", "axes"),
        lowering=_strided_slice_lowering,
        raises=Raises.UNLESS_RANKED,
        rule=gen.strided_slice,
        hint=Hint(None, 1, 3),
    ),
    _shape_op(
        "reverse",
        lambda x, axis: np.flip(x, normalize_axis_index(axis, x.ndim, msg_prefix="reverse")),
        "x with the order of its elements along axis reversed (rank >= 1)",
        attrs=(AttrSpec("axis", "int"),),
        relation=rel.reverse,
        gradient=lambda s: [s.op("reverse", s.g, axis=s.attrs["axis"])],
        raises=Raises.NEVER,
        rule=gen.reverse,
        hint=Hint(None, 1, 3),
    ),
    _shape_op(
        "pad",
        _pad,
        (
            "x padded by pad_width, the flattened (before, after) pairs, 2 * rank numbers, as np.pad in pad_mode: "
            "\"constant\" with pad_value, converted to x's dtype as `cast` converts (so `inf` in an int tensor is the "
            "dtype's `cast` of inf, not an error); \"edge\" repeats the end elements of each axis; \"reflect\" "
            "mirrors each axis about its end elements without repeating them, each width below the axis' size (as "
            "Relay). edge and reflect ignore pad_value (as Relay) and need a static size on each axis they pad; "
            "constant padding takes symbolic sizes"
        ),
        attrs=(AttrSpec("pad_width", "ints"), AttrSpec("pad_value", "float", 0.0), AttrSpec("pad_mode", "str", "constant")),
        relation=rel.pad,
        gradient=lambda s: [s.op("pad_backward", s.g, s.args[0], pad_width=s.attrs["pad_width"])],
        raises=Raises.UNLESS_RANKED,
        lowering=_pad_lowering,
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
        (
            "a tensor of shape and dtype filled with the fill value: the scalar tensor fill (Relay's form; any dtype, "
            "converted as `cast` converts; differentiable, its adjoint the sum of g in fill's dtype) or the attribute "
            "fill_value (converted as np.full converts; None: 0), not both"
        ),
        signature="[fill]",
        dtypes="fill any (rank 0)",
        num_args=(0, 1),
        attrs=(AttrSpec("shape", "ints"), AttrSpec("fill_value", "float?", None), _DTYPE),
        relation=rel.full,
        raises=Raises.UNLESS_RANKED,
        lowering=_full_lowering,
        rule=gen.full,
        hint=Hint(None, 0, 3, static=True),
    ),
    _shape_op(
        "one_hot",
        _one_hot,
        (
            "on_value at each index and off_value elsewhere along a new depth axis at position axis (-1: last, as "
            "Relay; other negative values count from the end of the result): indices.shape with depth inserted "
            "there. on_value and off_value are converted to dtype as `cast` converts; an index outside 0 .. depth-1 "
            "(negative included) gives off_value all along the depth axis. Relay takes on_value and off_value as "
            "scalar tensors; here they are attributes"
        ),
        signature="indices",
        dtypes="indices int",
        num_args=1,
        attrs=(AttrSpec("depth", "int"), AttrSpec("on_value", "float", 1.0), AttrSpec("off_value", "float", 0.0),
               AttrSpec("axis", "int", -1), _DTYPE),
        relation=rel.one_hot,
        lowering=_one_hot_lowering,
        differentiable=False,
        rule=gen.one_hot,
        hint=Hint(None, 1, 3, static=True),
    ),
)
