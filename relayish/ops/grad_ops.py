"""Operators that reverse-mode AD needs for gradients (Pattern.OPAQUE, all differentiable).

Each ``*_backward`` operator is the adjoint (transpose) of a forward operator in one of its
arguments: for ``y = forward(x, ...)``, ``backward(g, ..., like)`` is the gradient of
``sum(y * g)`` with respect to x. ``g`` has the shape of the forward result (anything else is
a ValueError) and gives the result its dtype; a ``like`` argument supplies a shape only (its
dtype does not matter). The attributes are exactly those of the forward operator, so a forward
call's attributes pass through unchanged.

``scatter_add(data, indices, updates)`` is take_backward's accumulating form: it adds into a
copy of data, so a gradient of many small ``take`` reads costs O(slice) per read rather than
a dense zero tensor each.
"""

from __future__ import annotations

import functools
from typing import TYPE_CHECKING

import numpy as np
from numpy.lib.array_utils import normalize_axis_index

from . import generation as gen, relations as rel
from .adjoints import CONV, POOL, transposed
from .elementwise import FLOAT, NUMBER, check_kinds, define
from .generation import Hint
from .nn import (
    AVG_POOL_ATTRS, CONV_ATTRS, MAX_POOL_ATTRS, OUTPUT_PADDING, Pair, _check_conv_shapes, _in_image, _lowest,
    _pool_divisor, _scatter, _transposed_shape, _unwindows, _window_grid, _windows,
)  # fmt: skip
from .record import AttrSpec, Pattern, Raises
from .shape import GATHER_ATTRS, SLICE_ATTRS, TAKE_ATTRS, _gathered, _slice_index, _take_axis, value_error

if TYPE_CHECKING:
    from ..expr import Expr
    from .sites import Site

_grad_op = functools.partial(define, pattern=Pattern.OPAQUE, kinds=None)


def _check_gradient(
    op: str, g: np.ndarray, expected: tuple[int, ...], forward: str, what: str = "the gradient"
) -> None:
    """``g`` (named ``what`` in the message) must have the shape of the forward operator's result."""
    if g.shape != tuple(expected):
        raise ValueError(f"{op}: {what} has shape {g.shape}, but the {forward} result has shape {tuple(expected)}")


def _reshape_like(x: np.ndarray, like: np.ndarray) -> np.ndarray:
    if x.size != like.size:
        raise ValueError(
            f"reshape_like: cannot reshape {x.shape} ({x.size} elements) to {like.shape} ({like.size} elements)"
        )
    return np.reshape(x, like.shape)


def _check_conv_gradient(
    op: str, g: np.ndarray, operand: np.ndarray, x_shape: tuple[int, ...], w_shape: tuple[int, ...],
    strides: Pair, padding: Pair, dilation: Pair,
) -> None:
    """Numeric g and operand; an input of x_shape and a weight of w_shape that conv2d accepts,
    and g of the shape of their convolution."""
    check_kinds(op, NUMBER, g, operand)
    _check_conv_shapes(op, x_shape, w_shape)
    out = _window_grid(x_shape, w_shape[2:], strides, padding, dilation)
    _check_gradient(op, g, (x_shape[0], w_shape[0], *out), "conv2d")


def _conv2d_backward_input(
    g: np.ndarray, w: np.ndarray, like: np.ndarray | None = None, *, strides: Pair, padding: Pair, dilation: Pair,
    output_padding: Pair,
) -> np.ndarray:
    """Every output gradient times every tap of its kernel, added back at the input it read; the
    input's shape is like's, or without like the one output_padding picks (conv2d_transpose's)."""
    op = "conv2d_backward_input"
    if like is None:
        shape = _transposed_shape(op, g.shape, w.shape, strides, padding, dilation, output_padding)
    elif output_padding != (0, 0):
        raise ValueError(f"{op}: output_padding {output_padding} is for the form without like (like gives the shape)")
    else:
        shape = like.shape
    _check_conv_gradient(op, g, w, shape, w.shape, strides, padding, dilation)
    return _scatter(g, w, shape, strides, padding, dilation)


def _conv2d_backward_weight(
    g: np.ndarray, x: np.ndarray, like: np.ndarray, strides: Pair, padding: Pair, dilation: Pair
) -> np.ndarray:
    """Each weight tap's gradient: the output gradients against the inputs that tap read."""
    _check_conv_gradient("conv2d_backward_weight", g, x, x.shape, like.shape, strides, padding, dilation)
    windows = _windows(x, like.shape[2:], strides, padding, dilation, 0)  # (N, C, OH, OW, KH, KW)
    return np.tensordot(g, windows, axes=((0, 2, 3), (0, 2, 3)))


def _first_maxima(x: np.ndarray, pool_size: Pair, strides: Pair, padding: Pair) -> tuple[np.ndarray, np.ndarray]:
    """For each window of x (N, C, OH, OW): the flat index in the window of its first maximum
    in row-major order (a NaN is the maximum; padding never wins), and whether the window
    has any in-image element at all."""
    windows = _windows(x, pool_size, strides, padding, (1, 1), _lowest(x.dtype))
    taps = pool_size[0] * pool_size[1]  # not -1: an empty batch has no size to infer it from
    values = windows.reshape(windows.shape[:4] + (taps,))
    inside = _in_image(x.shape, pool_size, strides, padding, bool).reshape(values.shape[2:4] + (taps,))
    peak = values.max(axis=-1, keepdims=True)
    hit = inside & ((values == peak) | ((values != values) & (peak != peak)))
    return hit.argmax(axis=-1), hit.any(axis=-1)


def _max_pool2d_backward(
    g: np.ndarray, x: np.ndarray, pool_size: Pair, strides: Pair | None, padding: Pair
) -> np.ndarray:
    """Each window's gradient goes to the window's first maximum in row-major order (a NaN is
    the maximum); padding never wins, and a window wholly in the padding passes nothing on."""
    op = "max_pool2d_backward"
    check_kinds(op, NUMBER, g, x)
    strides = strides or pool_size
    first, any_inside = _first_maxima(x, pool_size, strides, padding)
    _check_gradient(op, g, first.shape, "max_pool2d")
    cols = np.zeros(first.shape + (pool_size[0] * pool_size[1],), dtype=g.dtype)
    np.put_along_axis(cols, first[..., np.newaxis], np.where(any_inside, g, 0)[..., np.newaxis], axis=-1)
    return _unwindows(cols.reshape(first.shape + tuple(pool_size)), x.shape, strides, padding, (1, 1))


def _max_pool2d_gather(
    h: np.ndarray, x: np.ndarray, pool_size: Pair, strides: Pair | None, padding: Pair
) -> np.ndarray:
    """For each window of x, h at the window's first maximum (0 for a window wholly in the
    padding): the transpose of max_pool2d_backward in g, so its gradient has a gradient."""
    op = "max_pool2d_gather"
    check_kinds(op, NUMBER, h, x)
    if h.shape != x.shape:
        raise ValueError(f"{op}: h has shape {h.shape}, but x has shape {x.shape}; they must be equal")
    strides = strides or pool_size
    first, any_inside = _first_maxima(x, pool_size, strides, padding)
    values = _windows(h, pool_size, strides, padding, (1, 1), 0).reshape(first.shape + (pool_size[0] * pool_size[1],))
    picked = np.take_along_axis(values, first[..., np.newaxis], axis=-1)[..., 0]
    return np.where(any_inside, picked, 0).astype(h.dtype)


def _avg_pool2d_backward(
    g: np.ndarray, x: np.ndarray, pool_size: Pair, strides: Pair | None, padding: Pair, count_include_pad: bool
) -> np.ndarray:
    """Each window's gradient, divided as the forward mean divides, spread over the window."""
    op = "avg_pool2d_backward"
    check_kinds(op, FLOAT, g, x)
    strides = strides or pool_size
    out = _window_grid(x.shape, pool_size, strides, padding, (1, 1))
    _check_gradient(op, g, x.shape[:2] + out, "avg_pool2d")
    share = g / _pool_divisor(x.shape, pool_size, strides, padding, count_include_pad, g.dtype)
    cols = np.broadcast_to(share[..., np.newaxis, np.newaxis], share.shape + tuple(pool_size))
    return _unwindows(cols, x.shape, strides, padding, (1, 1))


def _strided_slice_backward(
    g: np.ndarray,
    like: np.ndarray,
    begin: tuple[int, ...],
    end: tuple[int, ...],
    strides: tuple[int, ...] | None,
    axes: tuple[int, ...] | None,
) -> np.ndarray:
    """Zeros of like's shape with g written where the slice reads (a slice reads each place once)."""
    attrs = {"begin": begin, "end": end, "strides": strides, "axes": axes}
    rel.check_one_length(attrs, value_error("strided_slice_backward"))
    index = _slice_index("strided_slice_backward", like.ndim, begin, end, strides, axes)
    out = np.zeros(like.shape, dtype=g.dtype)
    _check_gradient("strided_slice_backward", g, out[index].shape, "strided_slice")
    out[index] = g
    return out


def _add_taken(op: str, out: np.ndarray, indices: np.ndarray, values: np.ndarray, axis: int | None,
               what: str) -> np.ndarray:
    """Add ``values`` (take's result shape, else ValueError) into the C-contiguous ``out`` in place
    at the indices along axis (None: the flat indices): take's adjoint, repeated indices adding
    up in order. Every index is checked (IndexError) before out changes."""
    axis = _take_axis(op, out.shape, indices, axis)
    if axis is None:
        _check_gradient(op, values, indices.shape, "take", what)
        np.add.at(out.reshape(-1), indices, values)  # out is contiguous: the reshape is a view
        return out
    _check_gradient(op, values, out.shape[:axis] + indices.shape + out.shape[axis + 1:], "take", what)
    np.add.at(out, (slice(None),) * axis + (indices,), values)
    return out


def _take_backward(g: np.ndarray, indices: np.ndarray, like: np.ndarray, axis: int | None) -> np.ndarray:
    """Zeros of like's shape with g added at the indices (repeated indices add up)."""
    check_kinds("take_backward", NUMBER, g)
    return _add_taken("take_backward", np.zeros(like.shape, dtype=g.dtype), indices, g, axis, "the gradient")


def _scatter_add(data: np.ndarray, indices: np.ndarray, updates: np.ndarray, axis: int | None) -> np.ndarray:
    """data + take_backward(updates, indices, data), without a dense zero tensor: O(updates) adds
    into a copy, so AD can accumulate take's gradient a slice at a time."""
    op = "scatter_add"
    check_kinds(op, NUMBER, data, updates)
    if data.dtype != updates.dtype:
        raise TypeError(f"{op} needs data and updates of one dtype, not {data.dtype} and {updates.dtype}")
    return _add_taken(op, data.copy(), indices, updates, axis, "updates")


def _gather_backward(g: np.ndarray, indices: np.ndarray, like: np.ndarray, axis: int) -> np.ndarray:
    """Zeros of like's shape with g added where gather reads, in index order (repeated indices add up)."""
    op = "gather_backward"
    check_kinds(op, NUMBER, g)
    _check_gradient(op, g, indices.shape, "gather")
    out = np.zeros(like.shape, dtype=g.dtype)
    np.add.at(out, _gathered(op, like.shape, indices, axis), g)
    return out


def _concatenate_backward(g: np.ndarray, *parts: np.ndarray, axis: int, index: int) -> np.ndarray:
    """The piece of g that concatenating ``parts`` along axis took from part ``index``."""
    op = "concatenate_backward"
    if not 0 <= index < len(parts):
        raise ValueError(f"{op}: index {index} is out of range for {len(parts)} parts")
    if not -g.ndim <= axis < g.ndim:
        raise ValueError(f"{op}: axis {axis} is out of range for the gradient of rank {g.ndim}")
    axis = normalize_axis_index(axis, g.ndim)
    for k, part in enumerate(parts):
        if part.ndim != g.ndim or any(n != m for i, (n, m) in enumerate(zip(part.shape, parts[0].shape)) if i != axis):
            raise ValueError(f"{op}: part {k + 1} {part.shape} does not concatenate with part 1 {parts[0].shape} along axis {axis}")
    joined = list(parts[0].shape)
    joined[axis] = sum(p.shape[axis] for p in parts)
    _check_gradient(op, g, tuple(joined), "concatenate")
    start = sum(p.shape[axis] for p in parts[:index])
    index_ = [slice(None)] * g.ndim
    index_[axis] = slice(start, start + parts[index].shape[axis])
    return g[tuple(index_)]


def _pad_backward(g: np.ndarray, x: np.ndarray, pad_width: tuple[int, ...]) -> np.ndarray:
    """The part of g that padding x with ``pad_width`` did not add."""
    op = "pad_backward"
    if len(pad_width) != 2 * x.ndim:
        raise ValueError(f"{op}: pad_width needs {2 * x.ndim} numbers for rank {x.ndim}, not {len(pad_width)}")
    if any(w < 0 for w in pad_width):
        raise ValueError(f"{op}: pad_width {pad_width} has a negative number")
    _check_gradient(op, g, tuple(n + pad_width[2 * i] + pad_width[2 * i + 1] for i, n in enumerate(x.shape)), "pad")
    return g[tuple(slice(pad_width[2 * i], pad_width[2 * i] + n) for i, n in enumerate(x.shape))]


# The gradients of the gradient operators, so that gradients of gradients work.


def _conv2d_backward_input_gradient(s: Site) -> list[Expr | None]:
    g_in, w = s.args[:2]
    attrs = s.pick(*CONV)
    return [s.op("conv2d", s.g, w, **attrs), s.op("conv2d_backward_weight", g_in, s.g, w, **attrs)] + \
        [None] * (len(s.args) - 2)


def _conv2d_backward_weight_gradient(s: Site) -> list[Expr | None]:
    g_in, x, like = s.args
    attrs = s.pick(*CONV)
    return [s.op("conv2d", x, s.g, **attrs), s.op("conv2d_backward_input", g_in, s.g, x, **attrs), None]


def _avg_pool2d_backward_gradient(s: Site) -> list[Expr | None]:
    """Linear in g: its transpose is the pool itself, except that a window wholly in the
    padding (without count_include_pad) passes nothing back, where the pool divides 0 by 0."""
    pooled = s.op("avg_pool2d", s.g, **s.pick(*POOL, "count_include_pad"))
    if s.attrs["count_include_pad"]:
        return [pooled, None]
    windows = s.op("avg_pool2d", s.op("ones_like", s.g), **s.pick(*POOL, "count_include_pad"))
    return [s.op("where", s.op("equal", windows, windows), pooled, s.zeros(pooled)), None]  # nan only for empty ones


def _concatenate_backward_gradient(s: Site) -> list[Expr | None]:
    """Linear in g: h goes back to part ``index``'s place, zeros to the others'."""
    parts = s.args[1:]
    pieces = [s.g if i == s.attrs["index"] else s.zeros(p) for i, p in enumerate(parts)]
    return [s.op("concatenate", *pieces, axis=s.attrs["axis"])] + [None] * len(parts)


OPS = (
    _grad_op(
        "concatenate_backward",
        _concatenate_backward,
        (
            "gradient of `concatenate` in part index: the piece of g along axis that `concatenate(x1, ..., xn, axis)` "
            "took from x_index (0-based), of x_index's shape in g's dtype; the attributes are concatenate's plus "
            "index, and an index outside 0 .. n-1 (negative included) is a ValueError"
        ),
        signature="g, x1, ..., xn (n >= 1)",
        dtypes="g any; x1 .. xn any, one dtype",
        num_args=(2, None),
        attrs=(AttrSpec("axis", "int", 0), AttrSpec("index", "int")),
        relation=rel.concatenate_backward,
        gradient=_concatenate_backward_gradient,
        raises=Raises.UNLESS_RANKED,
        rule=gen.concatenate_backward,
        hint=Hint(None, 1, 3),
    ),
    _grad_op(
        "pad_backward",
        _pad_backward,
        (
            "gradient of constant `pad` in x: g without the padding that `pad(x, pad_width)` added, of x's shape in "
            "g's dtype; pad's pad_value, which does not change the gradient, is not an attribute, nor its pad_mode "
            "(edge and reflect padding are lowered to take, whose gradient is take_backward)"
        ),
        signature="g, x",
        dtypes="g any; x any",
        num_args=2,
        attrs=(AttrSpec("pad_width", "ints"),),
        relation=rel.pad_backward,
        gradient=lambda s: [s.op("pad", s.g, pad_width=s.attrs["pad_width"]), None],
        raises=Raises.UNLESS_RANKED,
        rule=gen.pad_backward,
        hint=Hint(None),
    ),
    _grad_op(
        "reshape_like",
        _reshape_like,
        (
            "x reshaped (C order) to like's shape, in x's dtype; the element counts must be equal (ValueError; the "
            "type checker compares the products of the dimensions). Gradient of `reshape` (and of itself)"
        ),
        signature="x, like",
        dtypes="x any; like any",
        num_args=2,
        relation=rel.reshape_like,
        gradient=lambda s: [s.op("reshape_like", s.g, s.args[0]), None],
        raises=Raises.UNLESS_RANKED,
        rule=gen.reshape_like,
        hint=Hint(None),
    ),
    _grad_op(
        "conv2d_backward_input",
        _conv2d_backward_input,
        (
            "gradient of `conv2d` in its input: for `y = conv2d(x, w, ...)` with x of like's shape (N, C, H, W), the "
            "gradient of sum(y * g) in x; g is (N, O, OH, OW), w (O, C, KH, KW); each g times each kernel tap is added "
            "back at the input position the tap read (padding dropped). Without like, x is (N, C, (OH - 1) * stride - "
            "2 * padding + dilation * (KH - 1) + output_padding + 1, ...) with 0 <= output_padding < stride (which "
            "must be 0 with like): `conv2d_transpose`, whose lowering it is"
        ),
        signature="g, w[, like]",
        dtypes="g, w numeric; like any",
        num_args=(2, 3),
        attrs=CONV_ATTRS + (OUTPUT_PADDING,),
        relation=rel.conv_backward(operand_is_weight=True),
        gradient=_conv2d_backward_input_gradient,
        raises=Raises.ON_WINDOWS,
        rule=gen.conv2d_backward_input,
        hint=Hint(NUMBER, 4, 4, static=True),
    ),
    _grad_op(
        "conv2d_backward_weight",
        _conv2d_backward_weight,
        (
            "gradient of `conv2d` in its weight: the gradient of sum(conv2d(x, w, ...) * g) in w, w of like's shape "
            "(O, C, KH, KW); g is (N, O, OH, OW), x (N, C, H, W)"
        ),
        signature="g, x, like",
        dtypes="g, x numeric; like any",
        num_args=3,
        attrs=CONV_ATTRS,
        relation=rel.conv_backward(operand_is_weight=False),
        gradient=_conv2d_backward_weight_gradient,
        raises=Raises.ON_WINDOWS,
        rule=gen.conv2d_backward_weight,
        hint=Hint(NUMBER, 4, 4, static=True),
    ),
    _grad_op(
        "max_pool2d_backward",
        _max_pool2d_backward,
        (
            "gradient of `max_pool2d` in x: each window's g goes to the window's first maximum of x in row-major order "
            "(a NaN counts as the maximum), added up where windows overlap; padding never wins, and a window wholly in "
            "the padding passes nothing on. x's shape and dtype"
        ),
        signature="g, x",
        dtypes="numeric",
        num_args=2,
        attrs=MAX_POOL_ATTRS,
        relation=rel.pool_backward(NUMBER, "max_pool2d"),
        gradient=transposed("max_pool2d_gather"),
        raises=Raises.ON_WINDOWS,
        rule=gen.pool_backward(NUMBER, averaging=False),
        hint=Hint(NUMBER, 4, 4, static=True),
    ),
    _grad_op(
        "max_pool2d_gather",
        _max_pool2d_gather,
        (
            "for each pooling window of x, h (x's shape, else ValueError) at the window's first maximum of x, chosen "
            "as `max_pool2d_backward` chooses it (row-major order, a NaN counts as the maximum, padding never wins); 0 "
            "for a window wholly in the padding. The pooled shape, in h's dtype. The transpose of "
            "`max_pool2d_backward` in g: sum(max_pool2d_backward(g, x) * h) = sum(g * max_pool2d_gather(h, x)), so the "
            "gradient of that gradient"
        ),
        signature="h, x",
        dtypes="numeric",
        num_args=2,
        attrs=MAX_POOL_ATTRS,
        relation=rel.max_pool2d_gather,
        gradient=transposed("max_pool2d_backward"),
        raises=Raises.ON_WINDOWS,
        rule=gen.max_pool2d_gather,
        hint=Hint(NUMBER, 4, 4, static=True),
    ),
    _grad_op(
        "avg_pool2d_backward",
        _avg_pool2d_backward,
        (
            "gradient of `avg_pool2d` in x: each window's g divided as the forward mean divides (the window size, or "
            "its in-image count), spread over the window, added up where windows overlap; x supplies the shape and "
            "dtype only"
        ),
        signature="g, x",
        dtypes="float",
        num_args=2,
        attrs=AVG_POOL_ATTRS,
        relation=rel.pool_backward(FLOAT, "avg_pool2d"),
        gradient=_avg_pool2d_backward_gradient,
        raises=Raises.ON_WINDOWS,
        rule=gen.pool_backward(FLOAT, averaging=True),
        hint=Hint(FLOAT, 4, 4, static=True),
    ),
    _grad_op(
        "strided_slice_backward",
        _strided_slice_backward,
        (
            "gradient of `strided_slice`: zeros of like's shape (g's dtype) with g placed where `strided_slice(like, "
            "begin, end, strides, axes)` reads; begin, end, strides and axes of one length (strided_slice's other "
            "forms are lowered to that one before AD)"
        ),
        signature="g, like",
        dtypes="g any; like any",
        num_args=2,
        attrs=SLICE_ATTRS,
        relation=rel.strided_slice_backward,
        gradient=lambda s: [s.op("strided_slice", s.g, **s.pick("begin", "end", "strides", "axes")), None],
        raises=Raises.UNLESS_RANKED,
        rule=gen.strided_slice_backward,
        hint=Hint(None, 1, 3, static=True),
    ),
    _grad_op(
        "take_backward",
        _take_backward,
        (
            "gradient of `take` in data: zeros of like's shape (g's dtype) with g added at the indices along axis "
            "(None: of the flattened like), repeated indices adding up; g has take's result shape; an index outside 0 "
            ".. size-1 is an IndexError"
        ),
        signature="g, indices, like",
        dtypes="g numeric; indices int; like any",
        num_args=3,
        attrs=TAKE_ATTRS,
        relation=rel.take_backward,
        gradient=lambda s: [s.op("take", s.g, s.args[1], axis=s.attrs["axis"]), None, None],
        raises=Raises.on_indices(2),
        rule=gen.take_backward,
        hint=Hint(NUMBER),
    ),
    _grad_op(
        "scatter_add",
        _scatter_add,
        (
            "a copy of data with updates added at the indices along axis (None: of the flattened data), repeated "
            "indices adding up in index order: exactly data + take_backward(updates, indices, data, axis). "
            "take_backward's accumulating form, which costs O(updates), not a dense tensor of data's shape; updates "
            "has take's result shape (ValueError), an index outside 0 .. size-1 is an IndexError, data and updates of "
            "different dtypes a TypeError; data's type. Gradient: g for data, take(g, indices, axis) for updates"
        ),
        signature="data, indices, updates",
        dtypes="data, updates numeric, one dtype; indices int",
        num_args=3,
        attrs=TAKE_ATTRS,
        relation=rel.scatter_add,
        # data + (take's adjoint of updates): g passes to data unchanged, and take reads updates' share back
        gradient=lambda s: [s.g, None, s.op("take", s.g, s.args[1], axis=s.attrs["axis"])],
        raises=Raises.on_indices(0),
        rule=gen.scatter_add,
        hint=Hint(NUMBER),
    ),
    _grad_op(
        "gather_backward",
        _gather_backward,
        (
            "gradient of `gather` in data: zeros of like's shape (g's dtype) with g added where `gather(like, "
            "indices, axis)` reads, repeated indices adding up in index order; g has the indices' shape (ValueError), "
            "the indices follow gather's rules (an index outside 0 .. size-1 is an IndexError). Gradient: "
            "gather(h, indices, axis) for g"
        ),
        signature="g, indices, like",
        dtypes="g numeric; indices int; like any",
        num_args=3,
        attrs=GATHER_ATTRS,
        relation=rel.gather_backward,
        gradient=lambda s: [s.op("gather", s.g, s.args[1], axis=s.attrs["axis"]), None, None],
        raises=Raises.on_indices(2),
        rule=gen.gather_backward,
        hint=Hint(NUMBER, 1, 3),
    ),
)
