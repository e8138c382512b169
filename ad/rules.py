"""Gradient rules: for each differentiable operator, the adjoint of each argument as IR.

A rule gets a ``Site`` (the call's primal arguments and their types, its result, its
attributes and the adjoint ``g`` of its result, all as variables) and returns one
expression per argument: the contribution to that argument's adjoint, or None where the
argument gets nothing (an integer argument, a shape-only argument). The expressions are
ordinary relayish operator calls, so a gradient is again a program and can itself be
differentiated (gradients of gradients). Broadcasting is undone with ``sum_to``.

Operators declared non-differentiable in the registry (comparisons, argmax, one_hot, ...)
have no rule: their results are constants to AD. ``RULES`` covers every other operator;
a test asserts it.
"""

from __future__ import annotations

from typing import Any, Callable

import attrs
import numpy as np

from relayish.expr import Call, Constant, Expr, Op
from relayish.types import Shape, TensorType


@attrs.frozen
class Site:
    """One operator call being differentiated."""

    name: str
    args: tuple[Expr, ...]  # primal arguments
    types: tuple[TensorType, ...]
    out: Expr  # primal result
    out_type: TensorType
    attrs: dict[str, Any]  # every attribute, defaults filled in
    g: Expr  # the adjoint of the result

    def const(self, value: float, like: TensorType | None = None) -> Constant:
        """A scalar of ``like``'s dtype (the result's by default)."""
        dtype = (like or self.out_type).dtype.to_numpy()
        return Constant(np.array(value, dtype=dtype))

    def rank(self, position: int) -> int:
        return self.types[position].shape.rank

    def pick(self, *keys: str) -> dict[str, Any]:
        """The attributes ``keys``, to pass on to the operators of the gradient."""
        return {k: self.attrs[k] for k in keys}


Rule = Callable[[Site], list["Expr | None"]]


def op(name: str, *args: Expr, **attrs_: Any) -> Call:
    return Call(Op(name), args, attrs_)


def zeros(e: Expr) -> Call:
    return op("zeros_like", e)


def masked(cond: Expr, g: Expr) -> Call:
    """``g`` where ``cond``, else 0."""
    return op("where", cond, g, zeros(g))


# elementwise ---------------------------------------------------------------------------------


def _unary(fn: Callable[[Site, Expr, Expr, Expr], Expr]) -> Rule:
    """A rule ``fn(site, g, x, y)`` of a one-argument elementwise operator."""
    return lambda s: [fn(s, s.g, s.args[0], s.out)]


UNARY: dict[str, Rule] = {
    "neg": _unary(lambda s, g, x, y: op("neg", g)),
    "sq": _unary(lambda s, g, x, y: op("mul", op("mul", g, x), s.const(2))),
    "exp": _unary(lambda s, g, x, y: op("mul", g, y)),
    "log": _unary(lambda s, g, x, y: op("div", g, x)),
    "sqrt": _unary(lambda s, g, x, y: op("div", g, op("mul", y, s.const(2)))),
    "tanh": _unary(lambda s, g, x, y: op("mul", g, op("sub", s.const(1), op("mul", y, y)))),
    "sigmoid": _unary(lambda s, g, x, y: op("mul", g, op("mul", y, op("sub", s.const(1), y)))),
    "relu": _unary(lambda s, g, x, y: masked(op("greater", x, s.const(0)), g)),
    "abs": _unary(lambda s, g, x, y: op("where", op("greater", x, s.const(0)), g,
                                        masked(op("less", x, s.const(0)), op("neg", g)))),
    "sin": _unary(lambda s, g, x, y: op("mul", g, op("cos", x))),
    "cos": _unary(lambda s, g, x, y: op("neg", op("mul", g, op("sin", x)))),
}


def _cast(s: Site) -> list[Expr | None]:
    source = s.types[0].dtype
    return [op("cast", s.g, dtype=source) if source.numpy_kind == "f" else None]


def _cast_like(s: Site) -> list[Expr | None]:
    """Like cast's; ``like`` gives only a dtype, so it has no gradient."""
    return [_cast(s)[0], None] if s.types[0].dtype.numpy_kind != "f" else [op("cast_like", s.g, s.args[0]), None]


def _summed(s: Site, *parts: Expr, part_shapes: list[Shape] | None = None) -> list[Expr | None]:
    """Each part summed down to its argument's shape (undoing broadcasting). A part of the
    argument's static shape is used as it is: summing over no axis only turns -0.0 into 0.0,
    which adding the part to its zero-initialized adjoint does anyway."""
    shapes = part_shapes or [s.out_type.shape] * len(parts)
    return [part if isinstance(shape, Shape) and shape == ty.shape else op("sum_to", part, arg)
            for part, arg, ty, shape in zip(parts, s.args, s.types, shapes)]


def _pow(s: Site) -> list[Expr | None]:
    a, b = s.args
    da = op("mul", op("mul", s.g, b), op("pow", a, op("sub", b, s.const(1))))
    # d/db a**b = a**b log a, which is 0 (not nan) where a == 0
    log_term = op("where", op("equal", a, s.const(0)), zeros(s.out), op("mul", s.out, op("log", a)))
    return _summed(s, da, op("mul", s.g, log_term))


def _select(compare: str) -> Rule:
    """maximum / minimum: the adjoint goes to the chosen argument (to the first on a tie)."""

    def rule(s: Site) -> list[Expr | None]:
        first = op(compare, s.args[0], s.args[1])
        return _summed(s, masked(first, s.g), op("where", first, zeros(s.g), s.g))

    return rule


BINARY: dict[str, Rule] = {
    "add": lambda s: _summed(s, s.g, s.g),
    "sub": lambda s: _summed(s, s.g, op("neg", s.g)),
    "mul": lambda s: _summed(s, op("mul", s.g, s.args[1]), op("mul", s.g, s.args[0])),
    "div": lambda s: _summed(s, op("div", s.g, s.args[1]), op("neg", op("div", op("mul", s.g, s.out), s.args[1]))),
    "pow": _pow,
    "maximum": _select("greater_equal"),
    "minimum": _select("less_equal"),
}


def _where(s: Site) -> list[Expr | None]:
    cond, a, b = s.args
    return [None, op("sum_to", masked(cond, s.g), a), op("sum_to", op("where", cond, zeros(s.g), s.g), b)]


# reductions ----------------------------------------------------------------------------------


def _axes(s: Site) -> list[int]:
    """The reduced axes of argument 0, normalized and ascending."""
    rank = s.rank(0)
    axis = s.attrs["axis"]
    if axis is None:
        return list(range(rank))
    return sorted(a % rank for a in ((axis,) if isinstance(axis, int) else axis))


def _kept(s: Site, e: Expr) -> Expr:
    """A reduced value with the reduced axes put back as 1s (as keepdims would give), so
    that it broadcasts against the argument."""
    if s.attrs["keepdims"] or s.attrs["axis"] is None:  # a scalar broadcasts as it is
        return e
    for axis in _axes(s):
        e = op("expand_dims", e, axis=axis)
    return e


def _reduce_attrs(s: Site) -> dict[str, Any]:
    return {"axis": s.attrs["axis"], "keepdims": True}


def _sum(s: Site) -> list[Expr | None]:
    return [op("broadcast_to_like", _kept(s, s.g), s.args[0])]


def _mean(s: Site) -> list[Expr | None]:
    count = op("ndarray_size", s.args[0], axis=s.attrs["axis"], dtype=s.out_type.dtype)
    return [op("broadcast_to_like", op("div", _kept(s, s.g), count), s.args[0])]


def _extremum(s: Site) -> list[Expr | None]:
    """The adjoint shared equally by the elements equal to the max (or min)."""
    x = s.args[0]
    hit = op("cast", op("equal", x, _kept(s, s.out)), dtype=s.types[0].dtype)
    count = op("sum", hit, **_reduce_attrs(s))
    return [op("mul", op("div", _kept(s, s.g), count), hit)]


# shape operators -----------------------------------------------------------------------------


def _reshaped(s: Site) -> list[Expr | None]:
    return [op("reshape_like", s.g, s.args[0])]


def _transpose(s: Site) -> list[Expr | None]:
    axes = s.attrs["axes"]
    if axes is None:
        return [op("transpose", s.g)]
    rank = s.rank(0)
    inverse = [0] * rank
    for i, a in enumerate(axes):
        inverse[a % rank] = i
    return [op("transpose", s.g, axes=tuple(inverse))]


def _concatenate(s: Site) -> list[Expr | None]:
    axis = s.attrs["axis"]
    return [op("concatenate_backward", s.g, *s.args, axis=axis, index=i) for i in range(len(s.args))]


def _stack(s: Site) -> list[Expr | None]:
    axis = s.attrs["axis"] % (s.rank(0) + 1)
    return [op("take", s.g, Constant(np.int32(i)), axis=axis) for i in range(len(s.args))]


def _forward_to(name: str, *keys: str) -> Rule:
    """The adjoint of argument 0 is operator ``name`` of (g, x, attributes ``keys``)."""
    return lambda s: [op(name, s.g, s.args[0], **s.pick(*keys))] + [None] * (len(s.args) - 1)


SHAPES: dict[str, Rule] = {
    **{name: _reshaped for name in ("reshape", "expand_dims", "squeeze", "flatten")},
    "transpose": _transpose,
    "broadcast_to": lambda s: [op("sum_to", s.g, s.args[0])],
    "broadcast_to_like": lambda s: [op("sum_to", s.g, s.args[0]), None],
    "sum_to": lambda s: [op("broadcast_to_like", s.g, s.args[0]), None],
    "concatenate": _concatenate,
    "stack": _stack,
    "take": lambda s: [op("take_backward", s.g, s.args[1], s.args[0], axis=s.attrs["axis"]), None],
    "strided_slice": _forward_to("strided_slice_backward", "begin", "end", "strides", "axes"),
    "pad": lambda s: [op("pad_backward", s.g, s.args[0], pad_width=s.attrs["pad_width"])],
}


# linear algebra and neural networks ----------------------------------------------------------


def _swap_last(e: Expr, rank: int) -> Call:
    return op("transpose", e, axes=(*range(rank - 2), rank - 1, rank - 2))


def _matmul(s: Site) -> list[Expr | None]:
    a, b = s.args
    ra, rb = s.rank(0), s.rank(1)
    shapes = None
    if all(isinstance(t.shape, Shape) for t in (*s.types, s.out_type)):
        batch = s.out_type.shape.dims[:-2]  # the parts have the result's (broadcast) batch axes
        shapes = [Shape(*batch, *t.shape.dims[-2:]) for t in s.types]
    return _summed(s, op("matmul", s.g, _swap_last(b, rb)), op("matmul", _swap_last(a, ra), s.g), part_shapes=shapes)


def _dense(s: Site) -> list[Expr | None]:
    x, w = s.args[0], s.args[1]
    dx = op("dense", s.g, op("transpose", w))
    rank = s.rank(0)
    if rank == 1:  # an outer product
        dw = op("matmul", op("expand_dims", s.g, axis=1), op("expand_dims", x, axis=0))
    else:  # g^T x per leading batch index, summed over the batch (matmul broadcasts it)
        dw = op("sum_to", op("matmul", _swap_last(s.g, rank), x), w)
    return [dx, dw] + ([op("sum_to", s.g, s.args[2])] if len(s.args) == 3 else [])


_CONV = ("strides", "padding", "dilation")
_POOL = ("pool_size", "strides", "padding")


def _conv2d(s: Site) -> list[Expr | None]:
    x, w = s.args
    attrs_ = s.pick(*_CONV)
    return [op("conv2d_backward_input", s.g, w, x, **attrs_), op("conv2d_backward_weight", s.g, x, w, **attrs_)]


def _softmax(s: Site) -> list[Expr | None]:
    y, axis = s.out, s.attrs["axis"]
    return [op("mul", y, op("sub", s.g, op("sum", op("mul", s.g, y), axis=axis, keepdims=True)))]


def _log_softmax(s: Site) -> list[Expr | None]:
    axis = s.attrs["axis"]
    return [op("sub", s.g, op("mul", op("exp", s.out), op("sum", s.g, axis=axis, keepdims=True)))]


def _softmax_cross_entropy(s: Site) -> list[Expr | None]:
    """loss = mean over positions p of logsumexp(z_p) - sum(y_p * z_p):
    d/dz = (softmax(z) - y) / P, d/dy = -z / P, with P the number of positions."""
    z, labels = s.args
    axis = s.attrs["axis"]
    positions = op("ndarray_size", z, axis=axis, exclude=True, dtype=s.out_type.dtype)
    scale = op("div", s.g, positions)
    return [op("mul", op("sub", op("softmax", z, axis=axis), labels), scale), op("neg", op("mul", z, scale))]


NETWORKS: dict[str, Rule] = {
    "matmul": _matmul,
    "dense": _dense,
    "conv2d": _conv2d,
    "max_pool2d": _forward_to("max_pool2d_backward", *_POOL),
    "avg_pool2d": _forward_to("avg_pool2d_backward", *_POOL, "count_include_pad"),
    "softmax": _softmax,
    "log_softmax": _log_softmax,
    "softmax_cross_entropy": _softmax_cross_entropy,
}


# the operators gradients use, so that gradients of gradients work ---------------------------


def _conv2d_backward_input(s: Site) -> list[Expr | None]:
    g_in, w, like = s.args
    attrs_ = s.pick(*_CONV)
    return [op("conv2d", s.g, w, **attrs_), op("conv2d_backward_weight", g_in, s.g, w, **attrs_), None]


def _conv2d_backward_weight(s: Site) -> list[Expr | None]:
    g_in, x, like = s.args
    attrs_ = s.pick(*_CONV)
    return [op("conv2d", x, s.g, **attrs_), op("conv2d_backward_input", g_in, s.g, x, **attrs_), None]


def _avg_pool2d_backward(s: Site) -> list[Expr | None]:
    """Linear in g: its transpose is the pool itself, except that a window wholly in the
    padding (without count_include_pad) passes nothing back, where the pool divides 0 by 0."""
    pooled = op("avg_pool2d", s.g, **s.pick(*_POOL, "count_include_pad"))
    if s.attrs["count_include_pad"]:
        return [pooled, None]
    windows = op("avg_pool2d", op("ones_like", s.g), **s.pick(*_POOL, "count_include_pad"))
    return [op("where", op("equal", windows, windows), pooled, zeros(pooled)), None]  # nan only for empty ones


def _transposed(name: str) -> Rule:
    """max_pool2d_backward(g, x) and max_pool2d_gather(h, x) are linear in their first
    argument and each other's transpose; x only chooses places (no gradient of its own)."""
    return lambda s: [op(name, s.g, s.args[1], **s.pick(*_POOL)), None]


def _concatenate_backward(s: Site) -> list[Expr | None]:
    """Linear in g: h goes back to part ``index``'s place, zeros to the others'."""
    parts = s.args[1:]
    pieces = [s.g if i == s.attrs["index"] else zeros(p) for i, p in enumerate(parts)]
    return [op("concatenate", *pieces, axis=s.attrs["axis"])] + [None] * len(parts)


GRADIENT_OPS: dict[str, Rule] = {
    "reshape_like": lambda s: [op("reshape_like", s.g, s.args[0]), None],
    "conv2d_backward_input": _conv2d_backward_input,
    "conv2d_backward_weight": _conv2d_backward_weight,
    "max_pool2d_backward": _transposed("max_pool2d_gather"),
    "max_pool2d_gather": _transposed("max_pool2d_backward"),
    "avg_pool2d_backward": _avg_pool2d_backward,
    "strided_slice_backward": lambda s: [op("strided_slice", s.g, **s.pick("begin", "end", "strides", "axes")), None],
    "take_backward": lambda s: [op("take", s.g, s.args[1], axis=s.attrs["axis"]), None, None],
    # data + (take's adjoint of updates): g passes to data unchanged, and take reads updates' share back
    "scatter_add": lambda s: [s.g, None, op("take", s.g, s.args[1], axis=s.attrs["axis"])],
    "concatenate_backward": _concatenate_backward,
    "pad_backward": lambda s: [op("pad", s.g, pad_width=s.attrs["pad_width"]), None],
}

RULES: dict[str, Rule] = {
    **UNARY,
    "cast": _cast,
    "cast_like": _cast_like,
    **BINARY,
    "where": _where,
    "sum": _sum,
    "mean": _mean,
    "max": _extremum,
    "min": _extremum,
    **SHAPES,
    **NETWORKS,
    **GRADIENT_OPS,
}
