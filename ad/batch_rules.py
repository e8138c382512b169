"""Batching rules: an operator call whose arguments hold a batch of examples, as operator calls.

A batched argument has the batch along a new leading axis; the others are one value for every
example. Each rule rewrites the call's attributes (axes move up by one) or aligns the arguments
(a batched operand of lower rank gets axes after the batch, so NumPy broadcasting lines up the
example axes), from the argument types of the call as written for one example. ``Vmap``
(``ad.batching``) calls ``batched_call`` for every operator call with a batched argument.
"""

from __future__ import annotations

from typing import Any, Callable

import attrs
import numpy as np

from relayish.errors import RelayTypeError, Span
from relayish.expr import Call, Constant, Expr, Op, Tuple
from relayish.ops.record import Pattern
from relayish.ops.registry import lookup_op
from relayish.types import BoolType, Shape, TensorType, Type


@attrs.frozen
class BatchSite:
    """One operator call being batched: what a rule reads."""

    name: str
    attrs: dict[str, Any]  # every attribute, defaults filled in
    args: tuple[Expr, ...]  # the arguments, batched ones with the batch in front
    batched: tuple[bool, ...]
    types: tuple[Type, ...]  # each argument's type for one example
    out: Type  # the call's type for one example
    lift: Callable[[int], Expr]  # argument i batched (a copy per example where it was not)
    span: Span | None

    def rank(self, i: int) -> int:
        return _rank(self.types[i], self)

    def call(self, args: list[Expr], **changes: Any) -> Call:
        """This operator on ``args`` with some attributes changed."""
        return Call(Op(self.name), args, {**self.attrs, **changes}, span=self.span)

    def refuse(self, why: str) -> RelayTypeError:
        return RelayTypeError(f"Vmap: @{self.name} {why}", self.span)


def _rank(ty: Type, site: BatchSite) -> int:
    if not (isinstance(ty, TensorType) and isinstance(ty.shape, Shape)):
        raise site.refuse(f"takes a value of type {ty}, whose rank is unknown, so its axes cannot be moved")
    return ty.shape.rank


def op(name: str, *args: Expr, **attr_values: Any) -> Call:
    return Call(Op(name), list(args), attr_values)


def raised(e: Expr, have: int, want: int) -> Expr:
    """A batched ``e`` of rank ``have`` per example with axes of size 1 after the batch up to rank ``want``."""
    return e if have >= want else op("expand_dims", e, axis=1, num_newaxis=want - have)


def _axis(axis: int, rank: int) -> int:
    return axis + rank if axis < 0 else axis


def _shifted(axes: Any, rank: int) -> Any:
    """Axes (an int or a tuple) of one example's tensor as axes of the batched tensor."""
    if isinstance(axes, tuple):
        return tuple(_axis(a, rank) + 1 for a in axes)
    return _axis(axes, rank) + 1


# rules ------------------------------------------------------------------------------------------


def _pointwise(s: BatchSite) -> Expr:
    """Elementwise and broadcasting operators (and ``where``): batched operands get axes of size 1
    after the batch up to the highest rank, so the example axes line up at the end."""
    top = max(s.rank(i) for i in range(len(s.args)))
    return s.call([raised(a, s.rank(i), top) if b else a for i, (a, b) in enumerate(zip(s.args, s.batched))])


def _named(s: BatchSite) -> list[int]:
    """The axes of one example that ``axis`` (with ``exclude``) names: None names all."""
    rank, axis = s.rank(0), s.attrs["axis"]
    named = set(range(rank)) if axis is None else {_axis(a, rank) for a in (axis if isinstance(axis, tuple) else (axis,))}
    return sorted(set(range(rank)) - named if s.attrs.get("exclude") else named)


def _reduce(s: BatchSite) -> Expr:
    named = _named(s)
    if not named:  # over no axes: the value itself, or index 0 (of a scalar)
        if s.name in ("argmax", "argmin"):
            return op("zeros_like", op("cast", s.args[0], dtype=s.out.dtype))
        return s.args[0] if s.name in ("sum", "prod", "mean", "max", "min", "all", "any", "logsumexp") else s.call(
            [s.args[0]], axis=(), exclude=False)
    changes: dict[str, Any] = {"axis": tuple(a + 1 for a in named)}
    if "exclude" in s.attrs:
        changes["exclude"] = False
    return s.call([s.args[0]], **changes)


def _unary_axis(s: BatchSite) -> Expr:
    """One tensor argument and an ``axis`` attribute (softmax, reverse, cumsum); None (cumsum: of
    the flattened tensor) flattens each example first."""
    axis = s.attrs["axis"]
    x = s.args[0]
    if axis is None:
        return s.call([op("reshape", x, newshape=(0, -1))], axis=1)
    return s.call([x], axis=_shifted(axis, s.rank(0)))


def _all_lifted_axis(s: BatchSite, rank: int | None = None) -> Expr:
    """Every argument batched, the ``axis`` attribute moved (concatenate, stack, gather...): the
    axis of a tensor of ``rank`` (the first argument's by default)."""
    rank = s.rank(0) if rank is None else rank
    return s.call([s.lift(i) for i in range(len(s.args))], axis=_shifted(s.attrs["axis"], rank))


def _stack(s: BatchSite) -> Expr:
    return _all_lifted_axis(s, s.rank(0) + 1)


def _matmul(s: BatchSite) -> Expr:
    """Batched matrix products broadcast like NumPy's; a batch of (m, k) rows times one (k, n)
    matrix with m known is one (batch * m, k) product (a single GEMM, not a loop of small ones),
    and a product over k = 1 is a broadcast multiplication."""
    ra, rb = s.rank(0), s.rank(1)
    a, b = s.args
    top = max(ra, rb)
    if s.types[0].shape.dims[-1].value == 1:  # a product over one term: the outer product a gradient
        # of a row times a matrix has, per example; elementwise, so it fuses and runs in parallel
        return op("mul", *(raised(x, r, top) if f else x for x, r, f in zip((a, b), (ra, rb), s.batched)))
    if s.batched == (True, False) and ra == 2 and rb == 2:
        m = s.types[0].shape.dims[0].value
        if m is not None:
            rows = op("matmul", op("reshape", a, newshape=(-3, 0)), b)
            return op("reshape", rows, newshape=(-4, -1, m, 0))
    return s.call([raised(x, r, top) if f else x for x, r, f in zip((a, b), (ra, rb), s.batched)])


def _dense(s: BatchSite) -> Expr:
    if any(s.batched[1:]):
        raise s.refuse("with a weight or bias that differs per example has no batched form yet: write matmul")
    return s.call(list(s.args))


def _reshape(s: BatchSite) -> Expr:
    # newshape's codes read the input from the front, so a leading 0 copies the batch and the rest
    # read each example's axes as before
    return s.call([s.args[0]], newshape=(0, *s.attrs["newshape"]))


def _transpose(s: BatchSite) -> Expr:
    rank = s.rank(0)
    axes = s.attrs["axes"]
    axes = tuple(range(rank - 1, -1, -1)) if axes is None else axes
    return s.call([s.args[0]], axes=(0, *_shifted(tuple(axes), rank)))


def _expand_dims(s: BatchSite) -> Expr:
    axis = s.attrs["axis"]
    return s.call([s.args[0]], axis=axis + 1 if axis >= 0 else axis)


def _squeeze(s: BatchSite) -> Expr:
    rank, axis = s.rank(0), s.attrs["axis"]
    if axis is None:
        dims = s.types[0].shape.dims
        if any(not d.is_const for d in dims):
            raise s.refuse("of all size-1 axes, with a symbolic axis, has no batched form: name the axes")
        axis = tuple(i for i, d in enumerate(dims) if d.value == 1)
    return s.call([s.args[0]], axis=_shifted(axis if isinstance(axis, tuple) else (axis,), rank))


def _sum_axes(s: BatchSite) -> tuple[tuple[int, ...], tuple[int, ...]]:
    """What ``sum_to(x, like)`` sums, from the types: x's leading axes, then (kept) the axes
    where like has size 1 and x not."""
    x, like = s.types[0].shape.dims, s.types[1].shape.dims
    lead = len(x) - len(like)
    kept = []
    for j, (d, k) in enumerate(zip(x[lead:], like)):
        if d == k:
            continue
        if not (k.is_const and k.value == 1):
            raise s.refuse(f"to {s.types[1]} from {s.types[0]} has no batched form: which axes it sums depends on "
                           "sizes known only at run time")
        kept.append(lead + j)
    return tuple(range(lead)), tuple(kept)


def _sum_to(s: BatchSite) -> tuple[Expr, bool]:
    """``sum_to`` as ``sum``s over the axes it sums (the target's shape per example comes from types)."""
    if isinstance(s.types[0].dtype, BoolType):
        raise s.refuse("of booleans has no batched form yet")
    lead, kept = _sum_axes(s)
    x, shift = s.args[0], int(s.batched[0])
    if kept:
        x = op("sum", x, axis=tuple(a + shift for a in kept), keepdims=True)
    if lead:
        x = op("sum", x, axis=tuple(a + shift for a in lead))
    return x, s.batched[0]


def _widened(s: BatchSite, x: Expr, like: Expr) -> Expr:
    """A batched ``x`` broadcast against one (unbatched) ``like``: (batch, like's shape)."""
    zeros = op("zeros_like", op("cast", like, dtype=s.out.dtype))
    return op("logical_or" if isinstance(s.out.dtype, BoolType) else "add", x, zeros)


def _broadcast_to_like(s: BatchSite) -> Expr:
    x, like = s.args
    top = s.rank(1)
    if s.batched[0]:
        x = raised(x, s.rank(0), top)
    if s.batched[1]:
        return s.call([x, like])
    return _widened(s, x, like)


def _broadcast_to(s: BatchSite) -> Expr:
    shape = s.attrs["shape"]
    x = raised(s.args[0], s.rank(0), len(shape))
    target = op("full", shape=shape, fill_value=0.0, dtype=s.out.dtype)
    return op("logical_or" if isinstance(s.out.dtype, BoolType) else "add", x, target)


def _like_shape(s: BatchSite) -> tuple[Expr, bool]:
    """``reshape_like(x, like)``: batched x takes like's shape per example (a reshape when it is
    static, else like batched); an unbatched x reshaped to a batched like's shape per example is
    the same for every example."""
    x, like = s.args
    static = s.types[1].shape.static()
    if static is not None:
        return (op("reshape", x, newshape=(0, *static)) if s.batched[0] else op("reshape", x, newshape=static)), s.batched[0]
    return s.call([s.lift(0), s.lift(1)]), True


def _cast_like(s: BatchSite) -> tuple[Expr, bool]:
    return op("cast", s.args[0], dtype=s.types[1].dtype), s.batched[0]


def _take(s: BatchSite) -> Expr:
    x, indices = s.args
    axis = s.attrs["axis"]
    if s.batched == (True, False):
        if axis is None:
            return s.call([op("reshape", x, newshape=(0, -1)), indices], axis=1)
        return s.call([x, indices], axis=_axis(axis, s.rank(0)) + 1)
    if s.batched == (False, True):
        if axis is None:
            return s.call([op("reshape", x, newshape=(-1,)), indices], axis=0)
        a = _axis(axis, s.rank(0))
        taken = s.call([x, indices], axis=a)
        if a == 0:
            return taken
        total = s.rank(0) + s.rank(1)  # the result's rank: (x's axes before a, batch, indices, x's after)
        return op("transpose", taken, axes=(a, *range(a), *range(a + 1, total)))
    raise s.refuse("with both the data and the indices differing per example has no batched form yet")


def _scattered(s: BatchSite, target: int) -> Expr:
    """take_backward (g, indices, like) and scatter_add (data, indices, updates): ``values`` added
    into a tensor shaped like argument ``target`` at the indices (shared by the examples) along
    axis, or of each example's flattened target (axis None)."""
    if s.batched[1]:
        raise s.refuse("with indices that differ per example has no batched form yet")
    args = [s.lift(0), s.args[1], s.lift(2)]
    axis = s.attrs["axis"]
    if axis is None:
        whole = args[target]
        args[target] = op("reshape", whole, newshape=(0, -1))
        return op("reshape_like", s.call(args, axis=1), whole)
    return s.call(args, axis=_axis(axis, s.rank(target)) + 1)


def _softmax_cross_entropy(s: BatchSite) -> Expr:
    """Each example's mean over its non-axis positions of logsumexp(x) - sum(y * x) along axis."""
    x, y = s.lift(0), s.lift(1)
    rank = s.rank(0)
    axis = _axis(s.attrs["axis"], rank) + 1
    per_position = op("sub", op("logsumexp", x, axis=axis), op("sum", op("mul", y, x), axis=axis))
    return op("mean", per_position, axis=tuple(range(1, rank))) if rank > 1 else per_position


def _ndarray_size(s: BatchSite) -> tuple[Expr, bool]:
    """The same for every example: the count along the named axes of one example."""
    named = _named(s)
    sizes = [s.types[0].shape.dims[a].value for a in named]
    if all(size is not None for size in sizes):  # known from the type (a reduction's count, say)
        return Constant(np.array(int(np.prod(sizes, dtype=np.int64))).astype(s.attrs["dtype"].to_numpy())), False
    return s.call([s.args[0]], axis=tuple(a + 1 for a in named), exclude=False), False


def _strided_slice(s: BatchSite) -> Expr:
    rank = s.rank(0)
    axes = s.attrs["axes"]
    if axes is None:
        axes = tuple(range(max(len(s.attrs["begin"]), len(s.attrs["end"]), len(s.attrs["strides"] or ()))))
    return s.call([s.lift(i) for i in range(len(s.args))], axes=_shifted(tuple(axes), rank))


def _flatten(s: BatchSite) -> Expr:
    """Each example's (n, d1, ..., dk) as (n, d1 * ... * dk): the axes after n merged two at a time
    (-3 multiplies sizes, where a -1 would divide, which symbolic sizes do not always allow)."""
    x, rank = s.args[0], s.rank(0)
    if rank == 1:
        return op("expand_dims", x, axis=2)
    for _ in range(rank - 2):
        x = op("reshape", x, newshape=(0, 0, -3, -2))
    return x


def _one_hot(s: BatchSite) -> Expr:
    axis = s.attrs["axis"]
    return s.call([s.args[0]], axis=axis if axis < 0 else axis + 1)


def _pad(s: BatchSite) -> Expr:
    return s.call([s.args[0]], pad_width=(0, 0, *s.attrs["pad_width"]))


def _pad_backward(s: BatchSite) -> Expr:
    return s.call([s.lift(0), s.lift(1)], pad_width=(0, 0, *s.attrs["pad_width"]))


def _images(*images: int) -> Callable[[BatchSite], Expr]:
    """NCHW operators on a batch of (n, c, h, w) images: the arguments ``images`` (the others are
    weights, the same for every example) batched and merged with n into one axis of images, the
    result split again (n must be known: a split needs one of its two sizes)."""
    def rule(s: BatchSite) -> Expr:
        if any(b for i, b in enumerate(s.batched) if i not in images):
            raise s.refuse("with a weight that differs per example has no batched form yet")
        n = s.types[0].shape.dims[0].value
        if n is None:
            raise s.refuse("on a batch of images whose count per example is symbolic has no batched form yet")
        args = [op("reshape", s.lift(i), newshape=(-3, -2)) if i in images else a for i, a in enumerate(s.args)]
        return op("reshape", s.call(args), newshape=(-4, -1, n, -2))
    return rule


RULES: dict[str, Callable[[BatchSite], Any]] = {
    "dense": _dense, "matmul": _matmul, "reshape": _reshape, "transpose": _transpose,
    "expand_dims": _expand_dims, "squeeze": _squeeze, "sum_to": _sum_to, "broadcast_to": _broadcast_to,
    "broadcast_to_like": _broadcast_to_like, "reshape_like": _like_shape, "cast_like": _cast_like,
    "concatenate": _all_lifted_axis, "stack": _stack, "take": _take,
    "strided_slice": _strided_slice, "strided_slice_backward": _strided_slice, "flatten": _flatten,
    "take_backward": lambda s: _scattered(s, 2), "scatter_add": lambda s: _scattered(s, 0),
    "ndarray_size": _ndarray_size, "one_hot": _one_hot, "pad": _pad, "pad_backward": _pad_backward,
    "gather": _all_lifted_axis, "gather_backward": _all_lifted_axis, "concatenate_backward": _all_lifted_axis,
    "softmax": _unary_axis, "log_softmax": _unary_axis, "reverse": _unary_axis, "cumsum": _unary_axis,
    "softmax_cross_entropy": _softmax_cross_entropy,
    "conv2d": _images(0), "max_pool2d": _images(0), "avg_pool2d": _images(0), "conv2d_backward_input": _images(0, 2),
    "max_pool2d_backward": _images(0, 1), "avg_pool2d_backward": _images(0, 1), "max_pool2d_gather": _images(0, 1),
}


# operators batched in some configurations only (per-example weights, indices or symbolic sizes
# are a RelayTypeError "... has no batched form") and those lowered to them
PARTIAL = frozenset({
    "dense", "squeeze", "sum_to", "take", "take_backward", "scatter_add", "conv2d", "conv2d_transpose",
    "max_pool2d", "avg_pool2d", "conv2d_backward_input", "max_pool2d_backward", "avg_pool2d_backward",
    "max_pool2d_gather",
})


def always_batched(name: str) -> bool:
    """Whether every call of operator ``name`` batches: it has a rule or a lowering, and is not ``PARTIAL``."""
    definition = lookup_op(name)
    return definition is not None and name not in PARTIAL and (rule_of(name) is not None or definition.lowering is not None)


def rule_of(name: str) -> Callable[[BatchSite], Any] | None:
    """The batching rule of operator ``name``: its own, or its pattern's (elementwise,
    broadcasting, reductions); None for one without (index-expression and registered operators;
    an operator with a lowering that always expands, such as ``tile`` or ``clip``, is batched as
    the operators it stands for, since Vmap runs on lowered code)."""
    definition = lookup_op(name)
    if name in RULES:
        return RULES[name]
    if definition is None or definition.definition is not None:
        return None
    if definition.pattern in (Pattern.ELEMWISE, Pattern.BROADCAST):
        return _pointwise
    return _reduce if definition.pattern is Pattern.REDUCE else None


def batched_call(site: BatchSite) -> tuple[Expr, bool]:
    """The call of ``site`` on its batched arguments, and whether its result is batched."""
    rule = rule_of(site.name)
    if rule is None:
        raise site.refuse("has no batching rule: call it outside the mapped function, or once per example")
    result = rule(site)
    return result if isinstance(result, tuple) and not isinstance(result, Tuple) else (result, True)
