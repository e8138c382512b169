"""Linear algebra and neural-network operators (Pattern.OPAQUE).

Images are NCHW and convolution weights OIHW. Along each spatial axis a window of size k
with dilation d, stride s and padding p on both sides gives
``(h + 2p - d*(k-1) - 1) // s + 1`` outputs (pools have d = 1).
"""

from __future__ import annotations

import functools
from typing import Any

import numpy as np
from numpy.lib.stride_tricks import sliding_window_view

from .elementwise import FLOAT, NUMBER, define
from .registry import AttrSpec, Pattern

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

_nn_op(
    "matmul",
    _matmul,
    "matrix product of the last two axes; leading batch axes broadcast (both ranks >= 2)",
    num_args=2,
    kinds=NUMBER,
)
_nn_op("dense", _dense, "x @ w.T (+ b), w of shape (units, in_features)", num_args=(2, 3), kinds=NUMBER)
_nn_op(
    "conv2d",
    _conv2d,
    "2-D cross-correlation of NCHW x with OIHW w, zero padding",
    num_args=2,
    attrs=CONV_ATTRS,
    kinds=NUMBER,
)
_nn_op(
    "max_pool2d",
    _max_pool2d,
    "maximum over pool_size windows of NCHW x, padding with -inf (strides None: pool_size)",
    attrs=MAX_POOL_ATTRS,
    kinds=NUMBER,
)
_nn_op(
    "avg_pool2d",
    _avg_pool2d,
    "mean over pool_size windows of NCHW x, zero padding counted unless count_include_pad is false",
    attrs=AVG_POOL_ATTRS,
)
_nn_op("softmax", _softmax, "exp(x) / sum(exp(x)) along axis, computed stably", attrs=(_AXIS,))
_nn_op("log_softmax", _log_softmax, "x - logsumexp(x) along axis, computed stably", attrs=(_AXIS,))
_nn_op(
    "softmax_cross_entropy",
    _softmax_cross_entropy,
    "0-d mean over non-axis positions of logsumexp(logits) - sum(labels * logits) along axis",
    num_args=2,
    attrs=(_AXIS,),
)
