"""Type relations: an operator's result type from its argument types.

Each operator's record names its relation (``OpDef.type_relation``), built here. A relation
is ``relation(arg_types, attrs) -> Type``. The argument types are fully known but may hold
rigid type variables: a dtype of kind BaseType, a shape of kind Shape, symbolic
dimensions. ``attrs`` has every attribute, defaults filled in, in canonical form. A relation
returns the result type or raises ``RelayTypeError`` with a message that names the argument,
the expected and actual types and the conflicting dimension; the checker adds the call's span
and ``@opname: ``. Shapes are computed with ``Dim`` arithmetic, so symbolic results are
canonical (``(n + 2*p - k) // s + 1``).

Arguments are numbered from 1 in messages; dimensions and axes from 0.
"""

from __future__ import annotations

import functools
import math
import operator
import re
from typing import Any, Callable, Iterable, NoReturn, Sequence

from ..dims import Dim, as_dim, dim_text
from ..errors import RelayTypeError
from ..types import BaseType, Shape, TensorType, Type

Relation = Callable[[list[Type], dict[str, Any]], Type]
Dims = tuple[Dim, ...]

# Allowed dtype kinds, as NumPy kind letters (those of relayish.ops.elementwise); None: any.
FLOAT, INT, NUMBER, BOOL = "f", "iu", "iuf", "b"
_KIND_NAMES = {FLOAT: "a floating-point", INT: "an integer", NUMBER: "a numeric", BOOL: "a boolean"}


MAX_RANK = 64  # NumPy's limit on the number of axes

def fail(message: str) -> NoReturn:
    raise RelayTypeError(message)


# arguments ------------------------------------------------------------------------------


def check_dtype(dtype: Type, position: int, kinds: str | None) -> None:
    """Reject a concrete dtype outside ``kinds``; a dtype variable is accepted."""
    if kinds is not None and isinstance(dtype, BaseType) and dtype.numpy_kind not in kinds:
        fail(f"argument {position} must have {_KIND_NAMES[kinds]} dtype, not {dtype}")


def tensors(args: Sequence[Type], kinds: str | None = None) -> list[TensorType]:
    """The arguments, each of which must be a tensor with a dtype of ``kinds``."""
    for position, ty in enumerate(args, 1):
        if not isinstance(ty, TensorType):
            fail(f"argument {position} must be a tensor, not {ty}")
        check_dtype(ty.dtype, position, kinds)
    return list(args)


def same_dtype(ts: Sequence[TensorType]) -> Type:
    """The common dtype of ``ts``."""
    first = ts[0].dtype
    for t in ts[1:]:
        if t.dtype != first:
            fail(f"dtypes differ: {first} vs {t.dtype}")
    return first


def dims_of(t: TensorType, position: int) -> Dims:
    """The dimensions of argument ``position``, whose rank must be known."""
    if not isinstance(t.shape, Shape):
        fail(f"argument {position} needs a shape of known rank, not the shape variable {t.shape}")
    return t.shape.dims


def ranked_dims(t: TensorType, position: int, rank: int, at_least: bool = False, layout: str = "") -> Dims:
    """The dimensions of argument ``position``, checking its rank is ``rank`` (or more)."""
    dims = dims_of(t, position)
    if len(dims) < rank or (not at_least and len(dims) != rank):
        need = f">= {rank}" if at_least else f"{rank}" + (f" ({layout})" if layout else "")
        fail(f"argument {position} must have rank {need}, not {len(dims)} ({t.shape})")
    return dims


def check_same_dims(t: TensorType, position: int, ref: TensorType, skip: int | None = None) -> None:
    """Require argument ``position`` to have the dimensions of argument 1 (``ref``) except ``skip``."""
    if not (isinstance(t.shape, Shape) and isinstance(ref.shape, Shape)):
        fail(f"argument {position} has shape {t.shape}, but argument 1 has shape {ref.shape}")
    dims, ref_dims = t.shape.dims, ref.shape.dims
    if len(dims) != len(ref_dims):
        fail(f"argument {position} has rank {len(dims)} ({t.shape}), but argument 1 has rank {len(ref_dims)} ({ref.shape})")
    for i, (d, r) in enumerate(zip(dims, ref_dims)):
        if i != skip and d != r:
            fail(f"argument {position} {t.shape} differs from argument 1 {ref.shape} in dimension {i}: {dim_text(d)} vs {dim_text(r)}")


def normalize_axis(axis: int, rank: int, where: str | None = None) -> int:
    """``axis`` in 0 .. rank - 1 (negative counts from the end)."""
    if not -rank <= axis < rank:
        fail(f"axis {axis} is out of range for {where or f'a tensor of rank {rank}'}")
    return axis % rank


def normalize_axes(axes: Sequence[int], rank: int) -> list[int]:
    """Distinct axes in 0 .. rank - 1, in the order given."""
    result: list[int] = []
    for axis in axes:
        normal = normalize_axis(axis, rank)
        if normal in result:
            fail(f"axes {tuple(axes)} name axis {normal} twice")
        result.append(normal)
    return result


def product(dims: Iterable[Dim]) -> Dim:
    return functools.reduce(operator.mul, dims, Dim.const(1))


def static_shape(values: Sequence[int], name: str) -> Shape:
    """A shape attribute as a Shape; its sizes must not be negative."""
    if any(v < 0 for v in values):
        fail(f"{name} {tuple(values)} has a negative dimension")
    return Shape(*values)


# broadcasting ---------------------------------------------------------------------------


def _is_scalar(shape: Type) -> bool:
    return isinstance(shape, Shape) and shape.rank == 0


def broadcast(a: Type, b: Type) -> Type:
    """NumPy broadcasting of two shapes; a shape variable broadcasts only with itself (or a scalar)."""
    if a == b or _is_scalar(b):
        return a
    if _is_scalar(a):
        return b
    if not (isinstance(a, Shape) and isinstance(b, Shape)):
        fail(f"cannot broadcast {a} with {b}: a shape variable broadcasts only with itself")
    rank = max(a.rank, b.rank)
    one = (Dim.const(1),)
    result = []
    pairs = zip(one * (rank - a.rank) + a.dims, one * (rank - b.rank) + b.dims)
    for i, (x, y) in enumerate(pairs):
        if x != y and x != 1 and y != 1:
            fail(f"cannot broadcast {a} with {b}: dimension {i}: {dim_text(x)} vs {dim_text(y)}")
        result.append(y if x == 1 else x)
    return Shape(*result)


def check_broadcasts_to(src: Type, dst: Type, what: str) -> None:
    """Require ``src`` to broadcast to exactly ``dst``; ``what`` opens the error message."""
    if src == dst or _is_scalar(src):
        return
    if not (isinstance(src, Shape) and isinstance(dst, Shape)):
        fail(f"{what}: a shape variable broadcasts only with itself")
    if src.rank > dst.rank:
        fail(f"{what}: rank {src.rank} is larger than {dst.rank}")
    offset = dst.rank - src.rank
    for i, (x, y) in enumerate(zip(src.dims, dst.dims[offset:]), offset):
        if x != y and x != 1:
            fail(f"{what}: dimension {i}: {dim_text(x)} vs {dim_text(y)}")


# elementwise and broadcasting operators -------------------------------------------------


def unary(kinds: str | None) -> Relation:
    """The argument's own type, its dtype of ``kinds``."""

    def relation(args: list[Type], attrs: dict[str, Any]) -> Type:
        return tensors(args, kinds)[0]

    return relation


def cast(args: list[Type], attrs: dict[str, Any]) -> Type:
    (x,) = tensors(args)
    return TensorType(attrs["dtype"], x.shape)


def cast_like(args: list[Type], attrs: dict[str, Any]) -> Type:
    x, like = tensors(args)
    return TensorType(like.dtype, x.shape)


def broadcasting(kinds: str | None, result: BaseType | None = None) -> Relation:
    """Arguments of one dtype of ``kinds``; the broadcast shape, of ``result`` or that dtype."""

    def relation(args: list[Type], attrs: dict[str, Any]) -> Type:
        ts = tensors(args, kinds)
        dtype = same_dtype(ts)
        return TensorType(result or dtype, functools.reduce(broadcast, [t.shape for t in ts]))

    return relation


def where(args: list[Type], attrs: dict[str, Any]) -> Type:
    cond, a, b = tensors(args)
    check_dtype(cond.dtype, 1, BOOL)
    return TensorType(same_dtype([a, b]), broadcast(broadcast(cond.shape, a.shape), b.shape))


# reductions -----------------------------------------------------------------------------


def reduced_shape(x: TensorType, axis: int | tuple[int, ...] | None, keepdims: bool) -> Shape:
    """The shape left after reducing ``x`` over ``axis`` (None: all axes)."""
    if axis is None and not keepdims:
        return Shape()
    dims = dims_of(x, 1)
    if axis is None:
        axes = range(len(dims))
    else:
        axes = normalize_axes((axis,) if isinstance(axis, int) else axis, len(dims))
    if keepdims:
        return Shape(*(1 if i in axes else d for i, d in enumerate(dims)))
    return Shape(*(d for i, d in enumerate(dims) if i not in axes))


def reduction(kinds: str, result: BaseType | None = None) -> Relation:
    """A reduction of a tensor of ``kinds``; its dtype, or ``result``."""

    def relation(args: list[Type], attrs: dict[str, Any]) -> Type:
        (x,) = tensors(args, kinds)
        return TensorType(result or x.dtype, reduced_shape(x, attrs["axis"], attrs["keepdims"]))

    return relation


def ndarray_size(args: list[Type], attrs: dict[str, Any]) -> Type:
    """A scalar of ``dtype`` whatever ``x`` holds; the axes must be distinct axes of ``x``."""
    (x,) = tensors(args)
    reduced_shape(x, attrs["axis"], keepdims=False)
    if attrs["dtype"].numpy_kind not in NUMBER:
        fail(f"dtype must be a numeric type, not {attrs['dtype']}")
    return TensorType(attrs["dtype"], Shape())


# shape operators ------------------------------------------------------------------------


def reshape(args: list[Type], attrs: dict[str, Any]) -> Type:
    """0 copies the input's dimension at that position, one -1 is inferred by exact division."""
    (x,) = tensors(args)
    dims = dims_of(x, 1)
    newshape = attrs["newshape"]
    out: list[Dim | None] = []
    for position, value in enumerate(newshape):
        if value == 0:
            if position >= len(dims):
                fail(f"newshape[{position}] is 0, which copies input dimension {position}, but the input has rank {len(dims)}")
            out.append(dims[position])
        elif value < -1:
            fail(f"newshape {newshape} has a negative dimension {value}")
        else:
            out.append(None if value == -1 else Dim.const(value))
    unknown = sum(d is None for d in out)
    if unknown > 1:
        fail(f"newshape {newshape} has more than one -1")
    total = product(dims)
    known = product(d for d in out if d is not None)
    if unknown:
        if known == 0:
            fail(f"cannot infer the -1 in newshape {newshape} for {x.shape}: the other dimensions hold 0 elements")
        inferred = total // known
        if inferred * known != total:
            fail(f"cannot reshape {x.shape} ({dim_text(total)} elements) to {newshape}: "
                 f"{dim_text(total)} is not a multiple of {dim_text(known)}")
        out = [inferred if d is None else d for d in out]
    elif known != total:
        fail(f"cannot reshape {x.shape} ({dim_text(total)} elements) to {Shape(*out)} ({dim_text(known)} elements)")
    return TensorType(x.dtype, Shape(*out))


def flatten(args: list[Type], attrs: dict[str, Any]) -> Type:
    (x,) = tensors(args)
    dims = ranked_dims(x, 1, 1, at_least=True)
    return TensorType(x.dtype, Shape(dims[0], product(dims[1:])))


def transpose(args: list[Type], attrs: dict[str, Any]) -> Type:
    (x,) = tensors(args)
    dims = dims_of(x, 1)
    axes = attrs["axes"]
    if axes is None:
        order = list(reversed(range(len(dims))))
    elif len(axes) != len(dims):
        fail(f"axes {axes} is not a permutation of the {len(dims)} axes of {x.shape}")
    else:
        order = normalize_axes(axes, len(dims))
    return TensorType(x.dtype, Shape(*(dims[i] for i in order)))


def expand_dims(args: list[Type], attrs: dict[str, Any]) -> Type:
    (x,) = tensors(args)
    dims = dims_of(x, 1)
    count = attrs["num_newaxis"]
    if not 0 <= count <= MAX_RANK - len(dims):
        fail(f"num_newaxis must be between 0 and {MAX_RANK - len(dims)} (tensors have at most {MAX_RANK} axes), not {count}")
    at = normalize_axis(attrs["axis"], len(dims) + 1, f"a new axis in a tensor of rank {len(dims)}")
    return TensorType(x.dtype, Shape(*dims[:at], *(1,) * count, *dims[at:]))


def squeeze(args: list[Type], attrs: dict[str, Any]) -> Type:
    """Only dimensions known to be 1 are squeezed; without axes every dimension must be static."""
    (x,) = tensors(args)
    dims = dims_of(x, 1)
    axis = attrs["axis"]
    if axis is None:
        for i, d in enumerate(dims):
            if d.value is None:
                fail(f"squeeze without axis needs static dimensions, but dimension {i} of {x.shape} is "
                     f"{dim_text(d)}: name the axes to squeeze")
        axes = [i for i, d in enumerate(dims) if d == 1]
    else:
        axes = normalize_axes((axis,) if isinstance(axis, int) else axis, len(dims))
        for i in axes:
            if dims[i] != 1:
                fail(f"cannot squeeze dimension {i} of {x.shape}: its size is {dim_text(dims[i])}, not 1")
    return TensorType(x.dtype, Shape(*(d for i, d in enumerate(dims) if i not in axes)))


def broadcast_to(args: list[Type], attrs: dict[str, Any]) -> Type:
    (x,) = tensors(args)
    target = static_shape(attrs["shape"], "shape")
    check_broadcasts_to(x.shape, target, f"cannot broadcast {x.shape} to {target}")
    return TensorType(x.dtype, target)


def broadcast_to_like(args: list[Type], attrs: dict[str, Any]) -> Type:
    x, like = tensors(args)
    check_broadcasts_to(x.shape, like.shape, f"cannot broadcast {x.shape} to {like.shape}")
    return TensorType(x.dtype, like.shape)


def sum_to(args: list[Type], attrs: dict[str, Any]) -> Type:
    """``like``'s shape, which must broadcast to x's; the dtype stays x's (like's, when equal)."""
    x, like = tensors(args)
    check_broadcasts_to(like.shape, x.shape, f"cannot sum {x.shape} to {like.shape}, which does not broadcast to it")
    return TensorType(x.dtype, like.shape)


def concatenate(args: list[Type], attrs: dict[str, Any]) -> Type:
    ts = tensors(args)
    dtype = same_dtype(ts)
    dims = dims_of(ts[0], 1)
    axis = normalize_axis(attrs["axis"], len(dims))
    for position, t in enumerate(ts[1:], 2):
        check_same_dims(t, position, ts[0], skip=axis)
    joined = sum((t.shape.dims[axis] for t in ts[1:]), dims[axis])
    return TensorType(dtype, Shape(*dims[:axis], joined, *dims[axis + 1:]))


def stack(args: list[Type], attrs: dict[str, Any]) -> Type:
    ts = tensors(args)
    dtype = same_dtype(ts)
    dims = dims_of(ts[0], 1)
    for position, t in enumerate(ts[1:], 2):
        check_same_dims(t, position, ts[0])
    at = normalize_axis(attrs["axis"], len(dims) + 1, f"a new axis in a tensor of rank {len(dims)}")
    return TensorType(dtype, Shape(*dims[:at], len(ts), *dims[at:]))


def taken_shape(data: TensorType, data_position: int, indices: TensorType, axis: int | None) -> Type:
    """The shape of ``take(data, indices, axis)``; the indices are argument 2 and integers."""
    check_dtype(indices.dtype, 2, INT)
    if axis is None:
        return indices.shape
    dims = dims_of(data, data_position)
    axis = normalize_axis(axis, len(dims))
    return Shape(*dims[:axis], *dims_of(indices, 2), *dims[axis + 1:])


def take(args: list[Type], attrs: dict[str, Any]) -> Type:
    data, indices = tensors(args)
    return TensorType(data.dtype, taken_shape(data, 1, indices, attrs["axis"]))


def _slice_length(bounds: tuple[int, int, int]) -> int:
    """``len(range(*bounds))`` without building a range (sizes may exceed a machine word)."""
    start, stop, step = bounds
    if step > 0:
        return max(0, (stop - start + step - 1) // step)
    return max(0, (start - stop - step - 1) // -step)


def sliced_shape(x: TensorType, position: int, attrs: dict[str, Any]) -> Shape:
    """Python slicing (with its clamping) on each sliced axis, which must have a static size."""
    dims = list(dims_of(x, position))
    begin, end, strides, axes = (attrs[k] for k in ("begin", "end", "strides", "axes"))
    strides = (1,) * len(begin) if strides is None else strides
    axes = tuple(range(len(begin))) if axes is None else axes
    if not len(begin) == len(end) == len(strides) == len(axes):
        fail(f"begin, end, strides and axes have lengths {len(begin)}, {len(end)}, {len(strides)} "
             f"and {len(axes)}; they must be equal")
    for axis, start, stop, step in zip(normalize_axes(axes, len(dims)), begin, end, strides):
        if step == 0:
            fail(f"the stride of axis {axis} is 0")
        size = dims[axis].value
        if size is None:
            fail(f"sliced dimension {axis} of {x.shape} must have a static size, not {dim_text(dims[axis])}")
        dims[axis] = Dim.const(_slice_length(slice(start, stop, step).indices(size)))
    return Shape(*dims)


def strided_slice(args: list[Type], attrs: dict[str, Any]) -> Type:
    (x,) = tensors(args)
    return TensorType(x.dtype, sliced_shape(x, 1, attrs))


def pad(args: list[Type], attrs: dict[str, Any]) -> Type:
    (x,) = tensors(args)
    dims = dims_of(x, 1)
    widths = attrs["pad_width"]
    if len(widths) != 2 * len(dims):
        fail(f"pad_width needs {2 * len(dims)} numbers for rank {len(dims)}, not {len(widths)}")
    if any(w < 0 for w in widths):
        fail(f"pad_width {widths} has a negative number")
    return TensorType(x.dtype, Shape(*(d + widths[2 * i] + widths[2 * i + 1] for i, d in enumerate(dims))))


def full(args: list[Type], attrs: dict[str, Any]) -> Type:
    return TensorType(attrs["dtype"], static_shape(attrs["shape"], "shape"))


def one_hot(args: list[Type], attrs: dict[str, Any]) -> Type:
    (indices,) = tensors(args, INT)
    depth = attrs["depth"]
    if depth < 0:
        fail(f"depth must be >= 0, not {depth}")
    return TensorType(attrs["dtype"], Shape(*dims_of(indices, 1), depth))


# linear algebra and neural networks -----------------------------------------------------


def matmul(args: list[Type], attrs: dict[str, Any]) -> Type:
    """Matrix product of the last two axes; the leading (batch) axes broadcast."""
    a, b = tensors(args, NUMBER)
    dtype = same_dtype([a, b])
    da = ranked_dims(a, 1, 2, at_least=True)
    db = ranked_dims(b, 2, 2, at_least=True)
    if da[-1] != db[-2]:
        fail(f"inner dimensions differ: {dim_text(da[-1])} vs {dim_text(db[-2])} ({a.shape} @ {b.shape})")
    try:
        batch = broadcast(Shape(*da[:-2]), Shape(*db[:-2]))
    except RelayTypeError as err:
        fail(f"batch dimensions: {err.message}")
    return TensorType(dtype, Shape(*batch.dims, da[-2], db[-1]))


def dense(args: list[Type], attrs: dict[str, Any]) -> Type:
    """x (..., in) with weight (units, in) and optional bias (units,) gives (..., units)."""
    ts = tensors(args, NUMBER)
    dtype = same_dtype(ts)
    x, w = ts[0], ts[1]
    dx = ranked_dims(x, 1, 1, at_least=True)
    units, features = ranked_dims(w, 2, 2)
    if dx[-1] != features:
        fail(f"dense expects {dim_text(features)} input features (weight {w.shape}) "
             f"but the input has {dim_text(dx[-1])} ({x.shape})")
    if len(ts) == 3 and ts[2].shape != Shape(units):
        fail(f"the bias must have shape {Shape(units)} for {dim_text(units)} units (weight {w.shape}), not {ts[2].shape}")
    return TensorType(dtype, Shape(*dx[:-1], units))


def check_at_least(name: str, values: Sequence[int], low: int) -> None:
    if min(values) < low:
        fail(f"{name} {tuple(values)} must be >= {low}")


def windows(
    x: TensorType, kernel: Sequence[Dim | int], strides: Sequence[int], padding: Sequence[int],
    dilation: Sequence[int], word: str,
) -> tuple[Dim, Dim]:
    """Output height and width of sliding a ``kernel`` window over NCHW ``x``."""
    check_at_least("strides", strides, 1)
    check_at_least("padding", padding, 0)
    check_at_least("dilation", dilation, 1)
    out = []
    for axis, size, k, s, p, d in zip((2, 3), x.shape.dims[2:], kernel, strides, padding, dilation):
        padded = size + 2 * p
        span = d * (as_dim(k) - 1) + 1
        if padded.value is not None and span.value is not None and span.value > padded.value:
            fail(f"{word} {dim_text(span)} is larger than the padded input {dim_text(padded)} in dimension {axis}")
        out.append((padded - span) // s + 1)
    return out[0], out[1]


def conv_shape(x: TensorType, x_position: int, w: TensorType, w_position: int, attrs: dict[str, Any]) -> Shape:
    """NCHW x with OIHW w gives (N, O, OH, OW)."""
    n, channels, _, _ = ranked_dims(x, x_position, 4, layout="NCHW")
    out_channels, in_channels, kh, kw = ranked_dims(w, w_position, 4, layout="OIHW")
    if channels != in_channels:
        fail(f"conv2d expects {dim_text(in_channels)} input channels (weight {w.shape}) "
             f"but the input has {dim_text(channels)} ({x.shape})")
    spatial = windows(x, (kh, kw), attrs["strides"], attrs["padding"], attrs["dilation"], "kernel")
    return Shape(n, out_channels, *spatial)


def conv2d(args: list[Type], attrs: dict[str, Any]) -> Type:
    x, w = tensors(args, NUMBER)
    return TensorType(same_dtype([x, w]), conv_shape(x, 1, w, 2, attrs))


def pooled_shape(x: TensorType, position: int, attrs: dict[str, Any]) -> Shape:
    """Pooling of NCHW x over pool_size windows (strides None: pool_size)."""
    n, c, _, _ = ranked_dims(x, position, 4, layout="NCHW")
    size = attrs["pool_size"]
    check_at_least("pool_size", size, 1)
    spatial = windows(x, size, attrs["strides"] or size, attrs["padding"], (1, 1), "window")
    return Shape(n, c, *spatial)


def pool(kinds: str) -> Relation:
    def relation(args: list[Type], attrs: dict[str, Any]) -> Type:
        (x,) = tensors(args, kinds)
        return TensorType(x.dtype, pooled_shape(x, 1, attrs))

    return relation


def softmax(args: list[Type], attrs: dict[str, Any]) -> Type:
    (x,) = tensors(args, FLOAT)
    normalize_axis(attrs["axis"], len(dims_of(x, 1)))
    return x


def softmax_cross_entropy(args: list[Type], attrs: dict[str, Any]) -> Type:
    logits, labels = tensors(args, FLOAT)
    dtype = same_dtype([logits, labels])
    if labels.shape != logits.shape:
        check_same_dims(labels, 2, logits)
    normalize_axis(attrs["axis"], len(dims_of(logits, 1)))
    return TensorType(dtype, Shape())


# gradient operators ---------------------------------------------------------------------
# Each takes the gradient g (argument 1) of a forward operator's result; g must have exactly the
# shape that operator gives. A ``like`` argument supplies a shape only: its dtype is free.


def check_gradient_shape(g: TensorType, expected: Type, forward: str, position: int = 1) -> None:
    """Require argument ``position`` (the gradient) to have the ``forward`` result's shape ``expected``."""
    if g.shape == expected:
        return
    if not (isinstance(g.shape, Shape) and isinstance(expected, Shape)):
        fail(f"argument {position} has shape {g.shape}, but the {forward} result has shape {expected}")
    if g.shape.rank != expected.rank:
        fail(f"argument {position} has rank {g.shape.rank} ({g.shape}), but the {forward} result has rank "
             f"{expected.rank} ({expected})")
    for i, (d, e) in enumerate(zip(g.shape.dims, expected.dims)):
        if d != e:
            fail(f"argument {position} {g.shape} differs from the {forward} result {expected} in dimension {i}: "
                 f"{dim_text(d)} vs {dim_text(e)}")


def reshape_like(args: list[Type], attrs: dict[str, Any]) -> Type:
    """x's dtype and like's shape; both shapes must hold the same number of elements."""
    x, like = tensors(args)
    if x.shape != like.shape:
        total, target = product(dims_of(x, 1)), product(dims_of(like, 2))
        if total != target:
            fail(f"cannot reshape {x.shape} ({dim_text(total)} elements) to the shape of argument 2, "
                 f"{like.shape} ({dim_text(target)} elements)")
    return TensorType(x.dtype, like.shape)


def conv_backward(operand_is_weight: bool) -> Relation:
    """g (N, O, OH, OW), conv2d's other operand (argument 2) and like (argument 3), whose shape the
    result has: the input's gradient (N, C, H, W) when argument 2 is the weight (O, C, KH, KW),
    the weight's when argument 2 is the input."""

    def relation(args: list[Type], attrs: dict[str, Any]) -> Type:
        g, operand, like = tensors(args)
        check_dtype(g.dtype, 1, NUMBER)
        check_dtype(operand.dtype, 2, NUMBER)
        dtype = same_dtype([g, operand])
        sides = (like, 3, operand, 2) if operand_is_weight else (operand, 2, like, 3)
        check_gradient_shape(g, conv_shape(*sides, attrs), "conv2d")
        return TensorType(dtype, like.shape)

    return relation


def pool_backward(kinds: str, forward: str) -> Relation:
    """g of the pooled shape and the pool's input x (argument 2) give x's type."""

    def relation(args: list[Type], attrs: dict[str, Any]) -> Type:
        g, x = tensors(args, kinds)
        same_dtype([g, x])
        check_gradient_shape(g, pooled_shape(x, 2, attrs), forward)
        return x

    return relation


def shifted(relation: Relation, args: list[Type], attrs: dict[str, Any]) -> Type:
    """``relation`` on arguments 2, 3, ... of a call, its messages numbering them so."""
    try:
        return relation(args, attrs)
    except RelayTypeError as err:
        fail(re.sub(r"argument (\d+)", lambda m: f"argument {int(m.group(1)) + 1}", err.message))


def concatenate_backward(args: list[Type], attrs: dict[str, Any]) -> Type:
    """g of the joined shape of the parts (arguments 2, 3, ...) gives part ``index``'s shape."""
    g, *parts = tensors(args)
    if not 0 <= attrs["index"] < len(parts):
        fail(f"index {attrs['index']} is out of range for {len(parts)} parts")
    joined = shifted(concatenate, parts, attrs)
    check_gradient_shape(g, joined.shape, "concatenate")
    return TensorType(g.dtype, parts[attrs["index"]].shape)


def pad_backward(args: list[Type], attrs: dict[str, Any]) -> Type:
    g, x = tensors(args)
    padded = shifted(pad, [x], {**attrs, "pad_value": 0.0})
    check_gradient_shape(g, padded.shape, "pad")
    return TensorType(g.dtype, x.shape)


def max_pool2d_gather(args: list[Type], attrs: dict[str, Any]) -> Type:
    """h and x of one shape give the pooled shape of x, in h's dtype."""
    h, x = tensors(args, NUMBER)
    same_dtype([h, x])
    if h.shape != x.shape:
        fail(f"argument 1 {h.shape} and argument 2 {x.shape} must have the same shape")
    return TensorType(h.dtype, pooled_shape(x, 2, attrs))


def strided_slice_backward(args: list[Type], attrs: dict[str, Any]) -> Type:
    g, like = tensors(args)
    check_gradient_shape(g, sliced_shape(like, 2, attrs), "strided_slice")
    return TensorType(g.dtype, like.shape)


def take_backward(args: list[Type], attrs: dict[str, Any]) -> Type:
    g, indices, like = tensors(args)
    check_dtype(g.dtype, 1, NUMBER)
    check_gradient_shape(g, taken_shape(like, 3, indices, attrs["axis"]), "take")
    return TensorType(g.dtype, like.shape)


def scatter_add(args: list[Type], attrs: dict[str, Any]) -> Type:
    """data's type; updates (argument 3, data's dtype) has the shape take(data, indices) has."""
    data, indices, updates = tensors(args)
    check_dtype(data.dtype, 1, NUMBER)
    check_dtype(updates.dtype, 3, NUMBER)
    same_dtype([data, updates])
    check_gradient_shape(updates, taken_shape(data, 1, indices, attrs["axis"]), "take", position=3)
    return data


# composite operators (relayish/ops/composite.py) ------------------------------------------


def excluded_axes(x: TensorType, axis: int | tuple[int, ...] | None, exclude: bool) -> int | tuple[int, ...] | None:
    """The axes a reduction with ``exclude`` reduces, as an ``axis`` attribute without it:
    every axis of ``x`` that ``axis`` does not name (``axis`` must name some: None is refused)."""
    if not exclude:
        return axis
    if axis is None:
        fail("exclude needs axis: it reduces the axes that axis does not name")
    rank = len(dims_of(x, 1))
    named = normalize_axes((axis,) if isinstance(axis, int) else axis, rank)
    return tuple(a for a in range(rank) if a not in named)


def moments(args: list[Type], attrs: dict[str, Any]) -> Type:
    """variance and std: a float reduction over ``axis`` (with ``exclude``, over the other axes)."""
    (x,) = tensors(args, FLOAT)
    axis = excluded_axes(x, attrs["axis"], attrs["exclude"])
    return TensorType(x.dtype, reduced_shape(x, axis, attrs["keepdims"]))


def channel_vector(t: TensorType, position: int, data: TensorType, axis: int) -> None:
    """Require argument ``position`` to be a vector as long as axis ``axis`` of argument 1 (``data``)."""
    size = data.shape.dims[axis]
    if not (isinstance(t.shape, Shape) and t.shape == Shape(size)):
        fail(f"argument {position} must have shape {Shape(size)}, the size of axis {axis} of argument 1 "
             f"{data.shape}, not {t.shape}")


def bias_add(args: list[Type], attrs: dict[str, Any]) -> Type:
    """data of rank >= 1 and a bias (argument 2) of data's dtype as long as data's ``axis``: data's type."""
    data, bias = tensors(args, NUMBER)
    dtype = same_dtype([data, bias])
    dims = ranked_dims(data, 1, 1, at_least=True)
    channel_vector(bias, 2, data, normalize_axis(attrs["axis"], len(dims)))
    return TensorType(dtype, data.shape)


def normalization(args: list[Type], attrs: dict[str, Any]) -> Type:
    """layer_norm and batch_norm: float data of rank >= 1 and vectors (gamma, beta and for
    batch_norm the moving mean and variance) of its dtype as long as its ``axis``: data's type."""
    ts = tensors(args, FLOAT)
    dtype = same_dtype(ts)
    data = ts[0]
    dims = ranked_dims(data, 1, 1, at_least=True)
    axis = normalize_axis(attrs["axis"], len(dims))
    for position, t in enumerate(ts[1:], 2):
        channel_vector(t, position, data, axis)
    return TensorType(dtype, data.shape)


def global_pool(kinds: str) -> Relation:
    """An NCHW tensor of ``kinds`` pooled over its whole image: (N, C, 1, 1)."""

    def relation(args: list[Type], attrs: dict[str, Any]) -> Type:
        (x,) = tensors(args, kinds)
        n, c, _, _ = ranked_dims(x, 1, 4, layout="NCHW")
        return TensorType(x.dtype, Shape(n, c, 1, 1))

    return relation


def arange_length(start: float, stop: float, step: float) -> int:
    """How many values NumPy's ``arange(start, stop, step)`` has: ceil((stop - start) / step), at
    least 0 (a quotient that underflows to 0 counts 1 when it is positive, as NumPy counts it)."""
    quotient = (stop - start) / step
    if quotient == 0.0 and stop != start:
        return 0 if math.copysign(1.0, quotient) < 0 else 1
    return max(0, math.ceil(quotient))


def arange(args: list[Type], attrs: dict[str, Any]) -> Type:
    """A vector of the ``arange`` length, of the numeric ``dtype``; the bounds finite, the step not 0."""
    tensors(args)
    dtype = attrs["dtype"]
    if dtype.numpy_kind not in NUMBER:
        fail(f"dtype must be a numeric type, not {dtype}")
    start, stop, step = attrs["start"], attrs["stop"], attrs["step"]
    for name, value in (("start", start), ("stop", stop), ("step", step)):
        if not math.isfinite(value):
            fail(f"{name} must be finite, not {value}")
    if step == 0:
        fail("step must not be 0")
    return TensorType(dtype, Shape(arange_length(start, stop, step)))


def tile(args: list[Type], attrs: dict[str, Any]) -> Type:
    """NumPy's tile: x's dimensions and ``reps`` aligned at the end (the shorter padded with 1s in
    front) and multiplied; a dimension tiled more than once must have a static size."""
    (x,) = tensors(args)
    dims = dims_of(x, 1)
    reps = attrs["reps"]
    if any(r < 0 for r in reps):
        fail(f"reps {reps} has a negative number")
    rank = max(len(dims), len(reps))
    if rank > MAX_RANK:
        fail(f"reps {reps} gives rank {rank}, but tensors have at most {MAX_RANK} axes")
    new = rank - len(dims)
    reps = (1,) * (rank - len(reps)) + reps
    out = [Dim.const(r) for r in reps[:new]]
    for i, (d, r) in enumerate(zip(dims, reps[new:])):
        if r > 1 and d.value is None:
            fail(f"tiled dimension {i} of {x.shape} must have a static size, not {dim_text(d)}")
        out.append(d * r)
    return TensorType(x.dtype, Shape(*out))


def repeat(args: list[Type], attrs: dict[str, Any]) -> Type:
    """NumPy's repeat along ``axis``: that dimension times ``repeats`` (static unless repeats is 0 or 1)."""
    (x,) = tensors(args)
    dims = list(dims_of(x, 1))
    axis = normalize_axis(attrs["axis"], len(dims))
    repeats = attrs["repeats"]
    if repeats < 0:
        fail(f"repeats must be >= 0, not {repeats}")
    if repeats > 1 and dims[axis].value is None:
        fail(f"repeated dimension {axis} of {x.shape} must have a static size, not {dim_text(dims[axis])}")
    dims[axis] = dims[axis] * repeats
    return TensorType(x.dtype, Shape(*dims))
