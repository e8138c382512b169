"""Linear algebra and neural-network operators (Pattern.OPAQUE).

Images are NCHW and convolution weights OIHW. Along each spatial axis a window of size k
with dilation d, stride s and padding p on both sides gives
``(h + 2p - d*(k-1) - 1) // s + 1`` outputs (pools have d = 1).
"""

from __future__ import annotations

import functools
from typing import TYPE_CHECKING, Any

import numpy as np
from numpy.lib.stride_tricks import sliding_window_view

from ..types import Shape
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


def _check_conv_shapes(op: str, x_shape: tuple[int, ...], w_shape: tuple[int, ...]) -> None:
    """An NCHW input and an OIHW weight with the same number of input channels."""
    if len(w_shape) != 4 or len(x_shape) != 4 or w_shape[1] != x_shape[1]:
        raise ValueError(f"{op}: input {x_shape} (NCHW) and weight {w_shape} (OIHW) do not match")


def _conv2d(x: np.ndarray, w: np.ndarray, strides: Pair, padding: Pair, dilation: Pair) -> np.ndarray:
    """Cross-correlation of NCHW x with OIHW w, zero padding."""
    _check_conv_shapes("conv2d", x.shape, w.shape)
    windows = _windows(x, w.shape[2:], strides, padding, dilation, 0)
    out = np.tensordot(windows, w, axes=((1, 4, 5), (1, 2, 3)))  # (N, OH, OW, O)
    return np.moveaxis(out, 3, 1)


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
MAX_POOL_ATTRS = (AttrSpec("pool_size", "pair"), _STRIDES, _PADDING)
AVG_POOL_ATTRS = MAX_POOL_ATTRS + (AttrSpec("count_include_pad", "bool", True),)



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
    x, w = s.args
    attrs = s.pick(*CONV)
    return [s.op("conv2d_backward_input", s.g, w, x, **attrs), s.op("conv2d_backward_weight", s.g, x, w, **attrs)]


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
        "2-D cross-correlation (no kernel flip) of NCHW x with OIHW w, zero padding",
        signature="x, w",
        num_args=2,
        attrs=CONV_ATTRS,
        kinds=NUMBER,
        relation=rel.conv2d,
        gradient=_conv2d_gradient,
        raises=Raises.ON_WINDOWS,
        rule=gen.conv2d,
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
