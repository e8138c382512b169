"""Linear algebra and neural-network operators (Pattern.OPAQUE).

Images are NCHW and convolution weights OIHW. Along each spatial axis a window of size k
with dilation d, stride s and padding p on both sides gives
``(h + 2p - d*(k-1) - 1) // s + 1`` outputs (pools have d = 1).

conv2d's groups and out_dtype, and conv2d_transpose, are lowered (``_lowered_conv``): out_dtype
to casts, groups to per-group calls (depthwise conv2d to a sum of elementwise products over the
kernel taps), conv2d_transpose to conv2d_backward_input without like; so plain conv2d and its
gradient operators are the only convolutions with kernels.
"""

from __future__ import annotations

import functools
from typing import TYPE_CHECKING, Any, Callable

import numpy as np
from numpy.lib.stride_tricks import sliding_window_view

from ..types import BaseType, Shape
from . import generation as gen, relations as rel
from .adjoints import CONV, POOL, forward_to, summed, swap_last
from .elementwise import FLOAT, NUMBER, define
from .generation import Hint
from .record import AttrSpec, Pattern, Raises

if TYPE_CHECKING:
    from ..expr import Expr
    from .sites import Site

Pair = tuple[int, int]


_nn_op = functools.partial(define, pattern=Pattern.OPAQUE, kinds=FLOAT)


def _matmul(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    if a.ndim < 2 or b.ndim < 2:
        raise ValueError(f"matmul: both operands need rank >= 2, not {a.ndim} and {b.ndim}")
    return np.matmul(a, b)


def _dense(x: np.ndarray, w: np.ndarray, b: np.ndarray | None = None) -> np.ndarray:
    if w.ndim != 2:
        raise ValueError(f"dense: the weight needs shape (units, in_features), not {w.shape}")
    y = np.matmul(x, w.T)
    return y if b is None else y + b


def _spans(window: Pair, dilation: Pair) -> Pair:
    """How many input rows and columns a (dilated) window covers."""
    kh, kw = (d * (k - 1) + 1 for k, d in zip(window, dilation))
    return kh, kw


def _window_grid(shape: tuple[int, ...], window: Pair, strides: Pair, padding: Pair, dilation: Pair) -> Pair:
    """The output height and width of sliding ``window`` over an NCHW tensor of ``shape``.

    A ValueError when the shape is not NCHW, an attribute is out of range or a window does not
    fit in the padded input.
    """
    if len(shape) != 4:
        raise ValueError(f"expected an NCHW tensor of rank 4, not shape {shape}")
    if min(window + strides + dilation) < 1 or min(padding) < 0:
        raise ValueError(
            f"window {window}, strides {strides} and dilation {dilation} must be >= 1, padding {padding} >= 0"
        )
    spans = _spans(window, dilation)
    if any(size + 2 * p < span for size, p, span in zip(shape[2:], padding, spans)):
        raise ValueError(f"a window spanning {spans} does not fit in {shape[2:]} padded by {padding}")
    oh, ow = ((size + 2 * p - span) // s + 1 for size, p, span, s in zip(shape[2:], padding, spans, strides))
    return oh, ow


def _windows(x: np.ndarray, window: Pair, strides: Pair, padding: Pair, dilation: Pair, pad_value: Any) -> np.ndarray:
    """The (N, C, OH, OW, KH, KW) view of every window of an NCHW tensor padded with pad_value."""
    _window_grid(x.shape, window, strides, padding, dilation)
    spans = _spans(window, dilation)
    (ph, pw), (sh, sw), (dh, dw) = padding, strides, dilation
    padded = np.pad(x, ((0, 0), (0, 0), (ph, ph), (pw, pw)), constant_values=pad_value)
    return sliding_window_view(padded, spans, axis=(2, 3))[:, :, ::sh, ::sw, ::dh, ::dw]


def _in_image(shape: tuple[int, ...], window: Pair, strides: Pair, padding: Pair, dtype: Any) -> np.ndarray:
    """The (1, 1, OH, OW, KH, KW) windows (dilation 1) of an image of ones padded with zeros."""
    ones = np.ones((1, 1) + tuple(shape[2:]), dtype=dtype)
    return _windows(ones, window, strides, padding, (1, 1), 0)


def _check_conv_shapes(op: str, x_shape: tuple[int, ...], w_shape: tuple[int, ...], groups: int = 1) -> None:
    """An NCHW input and an OIHW weight: the input has groups times the weight's input channels,
    and groups (>= 1) divides the weight's output channels."""
    if groups < 1:
        raise ValueError(f"{op}: groups must be >= 1, not {groups}")
    if len(w_shape) != 4 or len(x_shape) != 4 or w_shape[1] * groups != x_shape[1] or w_shape[0] % groups:
        grouped = f" with groups {groups} (weight (O, C / groups, KH, KW), O divisible by groups)" * (groups != 1)
        raise ValueError(f"{op}: input {x_shape} (NCHW) and weight {w_shape} (OIHW) do not match{grouped}")


def _unwindows(cols: np.ndarray, shape: tuple[int, ...], strides: Pair, padding: Pair, dilation: Pair) -> np.ndarray:
    """The adjoint of ``_windows``: each entry of the (N, C, OH, OW, KH, KW) ``cols`` added
    back where its window read it from, in an NCHW tensor of ``shape``; padding is dropped."""
    n, c, h, w = shape
    oh, ow, kh, kw = cols.shape[2:]
    (ph, pw), (sh, sw), (dh, dw) = padding, strides, dilation
    padded = np.zeros((n, c, h + 2 * ph, w + 2 * pw), dtype=cols.dtype)
    for p, q in np.ndindex(kh, kw):
        rows = slice(p * dh, p * dh + sh * (oh - 1) + 1, sh)
        columns = slice(q * dw, q * dw + sw * (ow - 1) + 1, sw)
        padded[:, :, rows, columns] += cols[:, :, :, :, p, q]
    return padded[:, :, ph:ph + h, pw:pw + w]


def _scatter(g: np.ndarray, w: np.ndarray, shape: tuple[int, ...], strides: Pair, padding: Pair, dilation: Pair
             ) -> np.ndarray:
    """conv2d's adjoint in its input, shapes already checked: each element of g (N, O, OH, OW)
    times every tap of w (O, C, KH, KW), added back where the tap read an input of ``shape``."""
    cols = np.moveaxis(np.tensordot(g, w, axes=((1,), (0,))), 3, 1)  # (N, C, OH, OW, KH, KW)
    return _unwindows(cols, shape, strides, padding, dilation)


def _transposed_shape(op: str, g_shape: tuple[int, ...], w_shape: tuple[int, ...], strides: Pair, padding: Pair,
                      dilation: Pair, output_padding: Pair) -> tuple[int, ...]:
    """The (N, C, H, W) that ``_scatter`` of g (N, O, OH, OW) through w (O, C, KH, KW) fills, with
    ``(oh - 1) * s - 2p + d * (k - 1) + output_padding + 1`` along each axis (conv2d_transpose's
    size: of the input sizes that conv2d maps to OH, output_padding picks the one); a ValueError
    for shapes and attributes that give none, an empty g image among them (conv2d gives no empty
    image: a window must fit)."""
    if len(g_shape) != 4 or len(w_shape) != 4 or g_shape[1] != w_shape[0]:
        raise ValueError(f"{op}: input {g_shape} (NCHW) and weight {w_shape} (dimension 0 the input's channels) "
                         "do not match")
    if min(w_shape[2:] + strides + dilation) < 1 or min(padding) < 0:
        raise ValueError(f"{op}: kernel {w_shape[2:]}, strides {strides} and dilation {dilation} must be >= 1, "
                         f"padding {padding} >= 0")
    if not all(0 <= o < s for o, s in zip(output_padding, strides)):
        raise ValueError(f"{op}: output_padding {output_padding} must be >= 0 and below the strides {strides}")
    if 0 in g_shape[2:]:
        raise ValueError(f"{op}: the input image {g_shape[2:]} is empty")
    sizes = tuple((oh - 1) * s - 2 * p + d * (k - 1) + o + 1
                  for oh, k, s, p, d, o in zip(g_shape[2:], w_shape[2:], strides, padding, dilation, output_padding))
    if min(sizes) < 0:
        raise ValueError(f"{op}: padding {padding} leaves a negative output size {sizes}")
    return (g_shape[0], w_shape[1], *sizes)


def _conv_inputs(op: str, x: np.ndarray, w: np.ndarray, out_dtype: BaseType | None) -> tuple[np.ndarray, np.ndarray]:
    """x and w converted to out_dtype as ``cast`` converts (Relay: the dtype of the products and
    their sum), or as they are, of one dtype, without it."""
    if out_dtype is None:
        if x.dtype != w.dtype:
            raise TypeError(f"{op} needs x and w of one dtype (or out_dtype), not {x.dtype} and {w.dtype}")
        return x, w
    dtype = out_dtype.to_numpy()
    if dtype.kind not in NUMBER:
        raise TypeError(f"{op}: out_dtype must be numeric, not {out_dtype}")
    return x.astype(dtype), w.astype(dtype)


def _conv2d(x: np.ndarray, w: np.ndarray, strides: Pair, padding: Pair, dilation: Pair, groups: int,
            out_dtype: BaseType | None) -> np.ndarray:
    """Cross-correlation of NCHW x with OIHW w, zero padding; output channel group g reads input
    channel group g."""
    x, w = _conv_inputs("conv2d", x, w, out_dtype)
    _check_conv_shapes("conv2d", x.shape, w.shape, groups)
    if len(padding) == 4:  # (top, left, bottom, right): zeros added here, none by the windows
        if min(padding) < 0:
            raise ValueError(f"padding {padding} must be >= 0")
        top, left, bottom, right = padding
        x, padding = np.pad(x, ((0, 0), (0, 0), (top, bottom), (left, right))), (0, 0)
    windows = _windows(x, w.shape[2:], strides, padding, dilation, 0)
    c, o = w.shape[1], w.shape[0] // groups
    parts = [np.tensordot(windows[:, g * c:(g + 1) * c], w[g * o:(g + 1) * o], axes=((1, 4, 5), (1, 2, 3)))
             for g in range(groups)]  # each (N, OH, OW, O / groups)
    return np.moveaxis(np.concatenate(parts, axis=3), 3, 1)


def _conv2d_transpose(x: np.ndarray, w: np.ndarray, strides: Pair, padding: Pair, dilation: Pair,
                      output_padding: Pair, groups: int, out_dtype: BaseType | None) -> np.ndarray:
    """Each pixel of NCHW x times the kernel w (C, O / groups, KH, KW), added into the output at
    the pixel's position times the strides, less the padding: conv2d's adjoint in its input,
    group g's input channels feeding group g's output channels."""
    op = "conv2d_transpose"
    x, w = _conv_inputs(op, x, w, out_dtype)
    shape = _transposed_shape(op, x.shape, w.shape, strides, padding, dilation, output_padding)
    if groups < 1 or x.shape[1] % groups:
        raise ValueError(f"{op}: groups ({groups}) must be >= 1 and divide the input's {x.shape[1]} channels")
    c = x.shape[1] // groups
    parts = [_scatter(x[:, g * c:(g + 1) * c], w[g * c:(g + 1) * c], shape, strides, padding, dilation)
             for g in range(groups)]
    return np.concatenate(parts, axis=1)


def _lowest(dtype: np.dtype) -> Any:
    """The value max-pooling pads with: -inf, or the smallest integer."""
    return -np.inf if dtype.kind == FLOAT else np.iinfo(dtype).min


def _max_pool2d(x: np.ndarray, pool_size: Pair, strides: Pair | None, padding: Pair) -> np.ndarray:
    windows = _windows(x, pool_size, strides or pool_size, padding, (1, 1), _lowest(x.dtype))
    return windows.max(axis=(4, 5))


def _pool_divisor(
    shape: tuple[int, ...], pool_size: Pair, strides: Pair, padding: Pair, count_include_pad: bool, dtype: Any
) -> Any:
    """What average pooling divides each window's sum by: the window size, or (1, 1, OH, OW) in-image counts."""
    if count_include_pad:
        return pool_size[0] * pool_size[1]
    return _in_image(shape, pool_size, strides, padding, dtype).sum(axis=(4, 5))


def _avg_pool2d(
    x: np.ndarray, pool_size: Pair, strides: Pair | None, padding: Pair, count_include_pad: bool
) -> np.ndarray:
    strides = strides or pool_size
    sums = _windows(x, pool_size, strides, padding, (1, 1), 0).sum(axis=(4, 5))
    return sums / _pool_divisor(x.shape, pool_size, strides, padding, count_include_pad, x.dtype)


def _shifted(x: np.ndarray, axis: int) -> tuple[np.ndarray, np.ndarray]:
    """``x - max(x)`` along axis, and that max (keepdims), for stable exponentials."""
    peak = np.max(x, axis=axis, keepdims=True)
    return x - peak, peak


def _softmax(x: np.ndarray, axis: int) -> np.ndarray:
    e = np.exp(_shifted(x, axis)[0])
    return e / np.sum(e, axis=axis, keepdims=True)


def _log_softmax(x: np.ndarray, axis: int) -> np.ndarray:
    s = _shifted(x, axis)[0]
    return s - np.log(np.sum(np.exp(s), axis=axis, keepdims=True))


def _softmax_cross_entropy(z: np.ndarray, y: np.ndarray, axis: int) -> np.ndarray:
    """Mean over the non-axis positions of ``logsumexp(z) - sum(y * z)``.

    With ``s = z - m`` (m the max) that is ``log(sum(exp(s))) - sum(y * s) + m * (1 - sum(y))``:
    exactly the same value, without the cancellation of two large numbers when y sums to 1.
    """
    if z.shape != y.shape:
        raise ValueError(f"softmax_cross_entropy: logits {z.shape} and labels {y.shape} differ in shape")
    s, peak = _shifted(z, axis)
    log_sum = np.log(np.sum(np.exp(s), axis=axis))
    mass = np.sum(y, axis=axis)
    loss = log_sum - np.sum(y * s, axis=axis) + np.squeeze(peak, axis) * (1 - mass)
    return np.mean(loss)


_STRIDES = AttrSpec("strides", "pair?", None)
_PADDING = AttrSpec("padding", "pair", (0, 0))
_AXIS = AttrSpec("axis", "int", -1)
# The attribute schemas the gradient operators (grad_ops.py) share with their forward operators.
CONV_ATTRS = (AttrSpec("strides", "pair", (1, 1)), _PADDING, AttrSpec("dilation", "pair", (1, 1)))
OUTPUT_PADDING = AttrSpec("output_padding", "pair", (0, 0))
MAX_POOL_ATTRS = (AttrSpec("pool_size", "pair"), _STRIDES, _PADDING)
AVG_POOL_ATTRS = MAX_POOL_ATTRS + (AttrSpec("count_include_pad", "bool", True),)
_CONV_FORMS = (AttrSpec("groups", "int", 1), AttrSpec("out_dtype", "dtype?", None))  # lowered (_lowered_conv)
# conv2d's padding may also be Relay's four numbers (lowered to a pad: _lowered_conv)
CONV2D_ATTRS = (CONV_ATTRS[0], AttrSpec("padding", "padding", (0, 0)), CONV_ATTRS[2]) + _CONV_FORMS



def _matmul_gradient(s: Site) -> list[Expr | None]:
    a, b = s.args
    ra, rb = s.rank(0), s.rank(1)
    shapes = None
    if all(isinstance(t.shape, Shape) for t in (*s.types, s.out_type)):
        batch = s.out_type.shape.dims[:-2]  # the parts have the result's (broadcast) batch axes
        shapes = [Shape(*batch, *t.shape.dims[-2:]) for t in s.types]
    return summed(s, s.op("matmul", s.g, swap_last(s, b, rb)), s.op("matmul", swap_last(s, a, ra), s.g),
                  part_shapes=shapes)


def _dense_gradient(s: Site) -> list[Expr | None]:
    x, w = s.args[0], s.args[1]
    dx = s.op("dense", s.g, s.op("transpose", w))
    rank = s.rank(0)
    if rank == 1:  # an outer product
        dw = s.op("matmul", s.op("expand_dims", s.g, axis=1), s.op("expand_dims", x, axis=0))
    else:  # g^T x per leading batch index, summed over the batch (matmul broadcasts it)
        dw = s.op("sum_to", s.op("matmul", swap_last(s, s.g, rank), x), w)
    return [dx, dw] + ([s.op("sum_to", s.g, s.args[2])] if len(s.args) == 3 else [])


def _conv2d_gradient(s: Site) -> list[Expr | None]:
    """Of the plain form: groups and out_dtype are lowered before AD."""
    x, w = s.args
    attrs = s.pick(*CONV)
    return [s.op("conv2d_backward_input", s.g, w, x, **attrs), s.op("conv2d_backward_weight", s.g, x, w, **attrs)]


def _channels(s: Site, e: Expr, group: int, size: int, axis: int) -> Expr:
    """Channel group ``group`` (``size`` channels) of ``e`` along axis: a take of constant indices,
    whose kernel serves every group (strided_slice's bakes each group's bounds into one of its own)."""
    return s.op("take", e, s.constant(np.arange(group * size, (group + 1) * size, dtype=np.int32)), axis=axis)


def _joined(s: Site, parts: list[Expr]) -> Expr:
    """The parts concatenated along the channels two at a time, in a balanced tree: every join
    shares one kernel, where the kernel of one G-part concatenate takes Numba minutes to compile for
    G in the hundreds, and its gradient needs a kernel per part."""
    if len(parts) == 1:
        return parts[0]
    half = len(parts) // 2
    return s.op("concatenate", _joined(s, parts[:half]), _joined(s, parts[half:]), axis=1)


def _depthwise(s: Site) -> Expr | None:
    """A grouped conv2d of one input channel per group (depthwise, with any channel multiplier) as
    the sum over the kernel taps of a strided slice of the padded image times the tap's weights:
    elementwise operators, which the JIT fuses into one loop, and as many calls whatever the number
    of channels (per-group calls compile in time growing with it: about a minute for the gradient
    of 512 groups). None (per-group calls) unless the image sizes are static, as slices need."""
    (_, channels, *image), (out_channels, per_group, kh, kw) = (t.shape.dims for t in s.types)
    if per_group.value != 1 or any(d.value is None for d in image):
        return None
    (sh, sw), (ph, pw), (dh, dw) = s.attrs["strides"], s.attrs["padding"], s.attrs["dilation"]
    oh, ow = (d.value for d in s.out_type.shape.dims[2:])
    x = s.op("pad", s.args[0], pad_width=(0, 0, 0, 0, ph, ph, pw, pw)) if ph or pw else s.args[0]
    multiplier = out_channels.value // channels.value
    if multiplier > 1:  # output channel o reads input channel o // multiplier
        x = s.op("repeat", x, repeats=multiplier, axis=1)
    taps = s.op("reshape", s.args[1], newshape=(1, out_channels.value, kh.value, kw.value))
    total = None
    for p, q in np.ndindex(kh.value, kw.value):
        window = s.op("strided_slice", x, begin=(p * dh, q * dw), end=(p * dh + (oh - 1) * sh + 1,
                      q * dw + (ow - 1) * sw + 1), strides=(sh, sw), axes=(2, 3))
        term = s.op("mul", window, s.op("strided_slice", taps, begin=(p, q), end=(p + 1, q + 1), axes=(2, 3)))
        total = term if total is None else s.op("add", total, term)
    return total


def _lowered_conv(group_sizes: Callable[[tuple[Any, ...], int], Pair], plain: Callable[[Site], Expr | None],
                  grouped: Callable[[Site], Expr | None] = lambda s: None) -> Callable[[Site], Expr | None]:
    """The lowering of conv2d or conv2d_transpose: with four-number padding (conv2d), the call on
    the input padded by ``pad``; with out_dtype, the call of its inputs cast to out_dtype (the
    dtype Relay multiplies and adds in); with groups, ``grouped`` where it gives a form, else one
    call per group of the group's input channels and weights (``group_sizes(weight dims,
    groups)``: how many of each), joined along the channels; the plain form is ``plain`` (None:
    kept as written)."""

    def lowering(s: Site) -> Expr | None:
        if len(s.attrs["padding"]) == 4:
            top, left, bottom, right = s.attrs["padding"]
            x = s.op("pad", s.args[0], pad_width=(0, 0, 0, 0, top, bottom, left, right))
            return s.op(s.name, x, s.args[1], **{**s.attrs, "padding": (0, 0)})
        out_dtype, groups = s.attrs["out_dtype"], s.attrs["groups"]
        attrs = {k: v for k, v in s.attrs.items() if k not in ("groups", "out_dtype")}
        if out_dtype is not None:
            x, w = (a if t.dtype == out_dtype else s.op("cast", a, dtype=out_dtype) for a, t in zip(s.args, s.types))
            return s.op(s.name, x, w, groups=groups, **attrs)
        if groups == 1:
            return plain(s)
        special = grouped(s)
        if special is not None:
            return special
        x_size, w_size = group_sizes(tuple(d.value for d in s.types[1].shape.dims), groups)
        return _joined(s, [s.op(s.name, _channels(s, s.args[0], g, x_size, 1), _channels(s, s.args[1], g, w_size, 0),
                                **attrs) for g in range(groups)])

    return lowering


def _softmax_gradient(s: Site) -> list[Expr | None]:
    y, axis = s.out, s.attrs["axis"]
    return [s.op("mul", y, s.op("sub", s.g, s.op("sum", s.op("mul", s.g, y), axis=axis, keepdims=True)))]


def _log_softmax_gradient(s: Site) -> list[Expr | None]:
    axis = s.attrs["axis"]
    return [s.op("sub", s.g, s.op("mul", s.op("exp", s.out), s.op("sum", s.g, axis=axis, keepdims=True)))]


def _softmax_cross_entropy_gradient(s: Site) -> list[Expr | None]:
    """loss = mean over positions p of logsumexp(z_p) - sum(y_p * z_p):
    d/dz = (softmax(z) - y) / P, d/dy = -z / P, with P the number of positions."""
    z, labels = s.args
    axis = s.attrs["axis"]
    positions = s.op("ndarray_size", z, axis=axis, exclude=True, dtype=s.out_type.dtype)
    scale = s.op("div", s.g, positions)
    return [s.op("mul", s.op("sub", s.op("softmax", z, axis=axis), labels), scale),
            s.op("neg", s.op("mul", z, scale))]


OPS = (
    _nn_op(
        "matmul",
        _matmul,
        "matrix product of the last two axes (both ranks >= 2); leading batch axes broadcast, as np.matmul",
        num_args=2,
        kinds=NUMBER,
        relation=rel.matmul,
        gradient=_matmul_gradient,
        raises=Raises.UNLESS_RANKED,
        rule=gen.matmul,
        hint=Hint(NUMBER, 2, 3),
    ),
    _nn_op(
        "dense",
        _dense,
        "x @ w.T (+ b), w of shape (units, in_features)",
        signature="x, w[, b]",
        num_args=(2, 3),
        kinds=NUMBER,
        relation=rel.dense,
        gradient=_dense_gradient,
        raises=Raises.UNLESS_RANKED,
        rule=gen.dense,
        hint=Hint(NUMBER, 1, 3),
    ),
    _nn_op(
        "conv2d",
        _conv2d,
        (
            "2-D cross-correlation (no kernel flip) of NCHW x with OIHW w, zero padding; with groups, w is (O, C / "
            "groups, KH, KW) and output channel group g reads input channel group g (groups divides C and O, and "
            "w's channel counts must be static; depthwise: groups = C); out_dtype (default: the inputs' dtype, then "
            "one) converts "
            "both inputs as `cast` converts and is the result's dtype, so the products add up in it (int8 inputs, "
            "int32 sums); padding is (height, width) on both sides, or Relay's four numbers (top, left, bottom, "
            "right)"
        ),
        signature="x, w",
        dtypes="numeric (one dtype without out_dtype) → out_dtype",
        num_args=2,
        attrs=CONV2D_ATTRS,
        kinds=NUMBER,
        relation=rel.conv2d,
        gradient=_conv2d_gradient,
        raises=Raises.ON_WINDOWS,
        lowering=_lowered_conv(lambda w, groups: (w[1], w[0] // groups), lambda s: None, _depthwise),
        rule=gen.conv2d,
        hint=Hint(NUMBER, 4, 4, static=True),
    ),
    _nn_op(
        "conv2d_transpose",
        _conv2d_transpose,
        (
            "transposed convolution (conv2d's adjoint in its input, as `conv2d_backward_input` without like) of NCHW "
            "x with w (C, O / groups, KH, KW), Relay's IOHW: each pixel of x times the kernel, added at the pixel's "
            "position times the strides, the padding cropped off; (h - 1) * stride - 2 * padding + dilation * (k - "
            "1) + output_padding + 1 outputs per axis, 0 <= output_padding < stride; groups and out_dtype as "
            "conv2d's; an empty image is a ValueError. Relay's four-number padding is not supported"
        ),
        signature="x, w",
        dtypes="numeric (one dtype without out_dtype) → out_dtype",
        num_args=2,
        attrs=CONV_ATTRS + (OUTPUT_PADDING,) + _CONV_FORMS,
        kinds=NUMBER,
        relation=rel.conv2d_transpose,
        raises=Raises.ON_WINDOWS,
        lowering=_lowered_conv(lambda w, groups: (w[0] // groups, w[0] // groups),
                               lambda s: s.op("conv2d_backward_input", *s.args, **s.pick(*CONV, "output_padding"))),
        rule=gen.conv2d_transpose,
        hint=Hint(NUMBER, 4, 4, static=True),
    ),
    _nn_op(
        "max_pool2d",
        _max_pool2d,
        (
            "maximum over each pool_size window of NCHW x; padding is -inf (the smallest integer for ints); strides "
            "None means pool_size"
        ),
        attrs=MAX_POOL_ATTRS,
        kinds=NUMBER,
        relation=rel.pool(NUMBER),
        gradient=forward_to("max_pool2d_backward", *POOL),
        raises=Raises.ON_WINDOWS,
        rule=gen.pool(NUMBER, averaging=False),
        hint=Hint(NUMBER, 4, 4, static=True),
    ),
    _nn_op(
        "avg_pool2d",
        _avg_pool2d,
        (
            "mean over each pool_size window of NCHW x with zero padding; count_include_pad false divides by the "
            "in-image count (nan for a window wholly in the padding)"
        ),
        attrs=AVG_POOL_ATTRS,
        relation=rel.pool(FLOAT),
        gradient=forward_to("avg_pool2d_backward", *POOL, "count_include_pad"),
        raises=Raises.ON_WINDOWS,
        rule=gen.pool(FLOAT, averaging=True),
        hint=Hint(FLOAT, 4, 4, static=True),
    ),
    _nn_op(
        "softmax",
        _softmax,
        "exp(x) / sum(exp(x)) along axis, computed after subtracting the max",
        attrs=(_AXIS,),
        relation=rel.softmax,
        gradient=_softmax_gradient,
        raises=Raises.ON_EMPTY,
        rule=gen.softmax,
        hint=Hint(FLOAT, 1, 3),
    ),
    _nn_op(
        "log_softmax",
        _log_softmax,
        "x - logsumexp(x) along axis, computed after subtracting the max",
        attrs=(_AXIS,),
        relation=rel.softmax,
        gradient=_log_softmax_gradient,
        raises=Raises.ON_EMPTY,
        rule=gen.softmax,
        hint=Hint(FLOAT, 1, 3),
    ),
    _nn_op(
        "softmax_cross_entropy",
        _softmax_cross_entropy,
        (
            "0-d: the mean over every non-axis position of logsumexp(logits) - sum(labels * logits) along axis, "
            "computed stably"
        ),
        signature="logits, labels",
        num_args=2,
        attrs=(_AXIS,),
        relation=rel.softmax_cross_entropy,
        gradient=_softmax_cross_entropy_gradient,
        raises=Raises.UNLESS_RANKED,
        rule=gen.softmax_cross_entropy,
        hint=Hint(FLOAT, 0, 0),
    ),
)
