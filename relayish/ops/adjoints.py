"""What several operators' gradients share: each helper takes the call's ``Site``
(``relayish.ops.sites``) and builds operator calls with ``Site.op``."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, Callable

from ..types import Shape, has_unknown_dim

if TYPE_CHECKING:
    from ..expr import Expr
    from .sites import Site

Gradient = Callable[["Site"], "list[Expr | None]"]

CONV = ("strides", "padding", "dilation")  # the attributes conv2d's gradient operators share with it
POOL = ("pool_size", "strides", "padding")  # those the pools' gradient operators share with them


def summed(s: Site, *parts: Expr, part_shapes: list[Shape] | None = None) -> list[Expr | None]:
    """Each part summed down to its argument's shape (undoing broadcasting). A part of the
    argument's static shape is used as it is: summing over no axis only turns -0.0 into 0.0,
    which adding the part to its zero-initialized adjoint does anyway."""
    shapes = part_shapes or [s.out_type.shape] * len(parts)
    return [part if isinstance(shape, Shape) and shape == ty.shape and not has_unknown_dim(shape) else s.op("sum_to", part, arg)
            for part, arg, ty, shape in zip(parts, s.args, s.types, shapes)]


def select(compare: str) -> Gradient:
    """maximum / minimum: the adjoint goes to the chosen argument (to the first on a tie)."""

    def gradient(s: Site) -> list[Expr | None]:
        first = s.op(compare, s.args[0], s.args[1])
        return summed(s, s.masked(first, s.g), s.op("where", first, s.zeros(s.g), s.g))

    return gradient


def axes(s: Site) -> list[int]:
    """The reduced axes of argument 0, normalized and ascending."""
    rank = s.rank(0)
    axis = s.attrs["axis"]
    if axis is None:
        return list(range(rank))
    return sorted(a % rank for a in ((axis,) if isinstance(axis, int) else axis))


def kept(s: Site, e: Expr) -> Expr:
    """A reduced value with the reduced axes put back as 1s (as keepdims would give), so
    that it broadcasts against the argument."""
    if s.attrs["keepdims"] or s.attrs["axis"] is None:  # a scalar broadcasts as it is
        return e
    for axis in axes(s):
        e = s.op("expand_dims", e, axis=axis)
    return e


def reduce_attrs(s: Site) -> dict[str, Any]:
    return {"axis": s.attrs["axis"], "keepdims": True}


def forward_to(name: str, *keys: str) -> Gradient:
    """The adjoint of argument 0 is operator ``name`` of (g, x, attributes ``keys``)."""
    return lambda s: [s.op(name, s.g, s.args[0], **s.pick(*keys))] + [None] * (len(s.args) - 1)


def swap_last(s: Site, e: Expr, rank: int) -> Expr:
    """``e`` (of ``rank``) with its last two axes swapped."""
    return s.op("transpose", e, axes=(*range(rank - 2), rank - 1, rank - 2))


def transposed(name: str) -> Gradient:
    """max_pool2d_backward(g, x) and max_pool2d_gather(h, x) are linear in their first
    argument and each other's transpose; x only chooses places (no gradient of its own)."""
    return lambda s: [s.op(name, s.g, s.args[1], **s.pick(*POOL)), None]
