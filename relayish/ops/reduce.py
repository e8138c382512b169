"""Reductions over some or all axes (Pattern.REDUCE), ``ndarray_size``, the number of
elements along some axes (what the gradients of means divide by; it reads only the shape),
and ``cumsum``, the running sums along an axis.

``axis`` is None (every axis), an int or a tuple of ints; negative axes count from the end.
``keepdims`` keeps the reduced axes with size 1. argmax (and argmin, composite.py) over several
axes gives the index in their row-major flattening, as TVM's does.
"""

from __future__ import annotations

import functools
import math
from typing import TYPE_CHECKING, Any, Callable

import numpy as np
from numpy.lib.array_utils import normalize_axis_index, normalize_axis_tuple

from ..types import IntType
from . import generation as gen, relations as rel
from .adjoints import kept, reduce_attrs
from .elementwise import FLOAT, NUMBER, define
from .generation import INT32, Hint
from .record import AttrSpec, OpDef, Pattern, Raises

if TYPE_CHECKING:
    from ..expr import Expr
    from .sites import Site

_KEEPDIMS = AttrSpec("keepdims", "bool", False)
# argmax's and argmin's attributes (TVM's, but select_last_index)
ARG_EXTREME_ATTRS = (AttrSpec("axis", "axes", None), _KEEPDIMS, AttrSpec("exclude", "bool", False))


def _reduction(name: str, fn: Callable[..., Any], doc: str, kinds: str = NUMBER, **record: Any) -> OpDef:
    attrs = (AttrSpec("axis", "axes", None), _KEEPDIMS)
    return define(name, fn, doc, pattern=Pattern.REDUCE, kinds=kinds, attrs=attrs, **record)


def _sum(x: np.ndarray, axis: Any, keepdims: bool) -> np.ndarray:
    # NumPy would sum int32 into int64; the result keeps the input's dtype.
    return np.sum(x, axis=axis, keepdims=keepdims, dtype=x.dtype)


def _accumulator(dtype: np.dtype) -> np.dtype:
    """The dtype a product or running sum of ``dtype`` accumulates in: its own (NumPy would
    multiply int32 in int64; here integers wrap in their dtype), float32 for float16, whose
    results are each rounded once (the compiled kernels compute float16 in float32; NumPy's
    float16 loops round some steps and not others, depending on the layout)."""
    return np.dtype(np.float32) if dtype == np.float16 else dtype


def _prod(x: np.ndarray, axis: Any, keepdims: bool) -> np.ndarray:
    return np.prod(x, axis=axis, keepdims=keepdims, dtype=_accumulator(x.dtype)).astype(x.dtype)


def reduced_axes(op: str, axis: Any, exclude: bool, rank: int) -> tuple[int, ...]:
    """The axes a reduction over ``axis`` (None: all) reduces, normalized and ascending; with
    ``exclude`` the axes ``axis`` does not name (then axis None is refused, as the relation refuses it)."""
    if axis is None:
        if exclude:
            raise ValueError(f"{op}: exclude needs axis: it reduces the axes that axis does not name")
        return tuple(range(rank))
    named = normalize_axis_tuple(axis, rank)
    return tuple(a for a in range(rank) if (a in named) != exclude)


def arg_extreme(op: str, x: np.ndarray, axis: Any, keepdims: bool, exclude: bool) -> np.ndarray:
    """The int32 index of np.argmax (op ``argmax``) or np.argmin (``argmin``) of x over axis (None:
    of the flattened x); over several axes (a tuple, or exclude), the index in the row-major
    flattening of those axes, which are moved last and merged as TVM's argmax merges them."""
    find = np.argmax if op == "argmax" else np.argmin
    if not exclude and not isinstance(axis, tuple):
        return find(x, axis=axis, keepdims=keepdims).astype(np.int32)
    axes = reduced_axes(op, axis, exclude, x.ndim)
    kept = [a for a in range(x.ndim) if a not in axes]
    merged = np.transpose(x, kept + list(axes)).reshape(
        [x.shape[a] for a in kept] + [math.prod(x.shape[a] for a in axes)])
    shape = [1 if a in axes else n for a, n in enumerate(x.shape)] if keepdims else [x.shape[a] for a in kept]
    return find(merged, axis=-1).reshape(shape).astype(np.int32)


def _cumsum(x: np.ndarray, axis: int | None, dtype: Any, exclusive: bool) -> np.ndarray:
    """The running sums of x converted to dtype (as cast converts), in that dtype; exclusive:
    shifted one place along the axis, starting from 0."""
    target = x.dtype if dtype is None else dtype.to_numpy()
    if target.kind not in NUMBER:
        raise TypeError(f"cumsum: the sums need a numeric dtype, not {target} (give one to count the trues of "
                        "a bool tensor)")
    if axis is None:
        x, axis = x.reshape(-1), 0
    else:
        axis = normalize_axis_index(axis, x.ndim, msg_prefix="cumsum")
    sums = np.cumsum(x.astype(target), axis=axis, dtype=_accumulator(target)).astype(target)
    if not exclusive:
        return sums
    before = (slice(None),) * axis
    shifted = np.zeros_like(sums)
    shifted[before + (slice(1, None),)] = sums[before + (slice(None, -1),)]
    return shifted


def counted_axes(axis: Any, exclude: bool, rank: int) -> list[int]:
    """The axes ``ndarray_size`` counts, in order: ``axis`` (None: all), or with ``exclude`` the others."""
    named = range(rank) if axis is None else (axis,) if isinstance(axis, int) else axis
    axes: set[int] = set()
    for a in named:
        if not -rank <= a < rank or a % rank in axes:
            raise ValueError(f"ndarray_size: axis {axis} is not a set of distinct axes of a rank-{rank} tensor")
        axes.add(a % rank)
    return [a for a in range(rank) if (a in axes) != exclude]


def _ndarray_size(x: np.ndarray, axis: Any, exclude: bool, dtype: Any) -> np.ndarray:
    return np.array(math.prod(x.shape[a] for a in counted_axes(axis, exclude, x.ndim))).astype(dtype.to_numpy())


def _mean_gradient(s: Site) -> list[Expr | None]:
    count = s.op("ndarray_size", s.args[0], axis=s.attrs["axis"], dtype=s.out_type.dtype)
    return [s.op("broadcast_to_like", s.op("div", kept(s, s.g), count), s.args[0])]


def _prod_gradient(s: Site) -> list[Expr | None]:
    """g times the product of the other elements, without a division by 0: with P the product of
    x's non-zeros and Z the part of x at its zeros, the others' product at element i is
    P / (x_i, or 1 at a zero) times 1 when no other element is 0, the sum of Z over the others
    (value 0, slope 1 in the one other zero) when one is, else 0. Every branch is finite, and
    each is the others' product to first order, so the second derivative is right too."""
    x = s.args[0]
    zero, one = s.const(0), s.const(1)
    at_zero = s.op("equal", x, zero)
    safe = s.op("where", at_zero, one, x)
    zero_part = s.masked(at_zero, x)
    zeros = s.op("cast", at_zero, dtype=s.types[0].dtype)
    other_zeros = s.op("sub", s.op("sum", zeros, **reduce_attrs(s)), zeros)
    other_zero_part = s.op("sub", s.op("sum", zero_part, **reduce_attrs(s)), zero_part)
    factor = s.op("where", s.op("equal", other_zeros, zero), one,
                  s.op("where", s.op("equal", other_zeros, one), other_zero_part, zero))
    others = s.op("mul", s.op("div", s.op("prod", safe, **reduce_attrs(s)), safe), factor)
    return [s.op("mul", kept(s, s.g), others)]


def _cumsum_lowering(s: Site) -> Expr | None:
    """axis None and a dtype other than the data's become a cumsum along axis 0 of the reshaped
    vector and of the data cast to dtype (as cast converts), so kernels and the gradient see only
    the primitive form: one axis, the data's dtype."""
    x, t = s.args[0], s.types[0]
    axis, dtype = s.attrs["axis"], s.attrs["dtype"]
    if axis is not None and dtype in (None, t.dtype):
        return None
    if dtype not in (None, t.dtype):
        x = s.op("cast", x, dtype=dtype)
    if axis is None:
        x, axis = s.op("reshape", x, newshape=(-1,)), 0
    return s.op("cumsum", x, axis=axis, exclusive=s.attrs["exclusive"])


def _cumsum_gradient(s: Site) -> list[Expr | None]:
    """The running sums of g from the end: g reversed, summed as cumsum sums (exclusive stays
    exclusive), reversed back (the primitive form: the lowering leaves one axis and one dtype)."""
    axis = s.attrs["axis"]
    backwards = s.op("cumsum", s.op("reverse", s.g, axis=axis), axis=axis, exclusive=s.attrs["exclusive"])
    return [s.op("reverse", backwards, axis=axis)]


def _extremum_gradient(s: Site) -> list[Expr | None]:
    """The adjoint shared equally by the elements equal to the max (or min)."""
    x = s.args[0]
    hit = s.op("cast", s.op("equal", x, kept(s, s.out)), dtype=s.types[0].dtype)
    count = s.op("sum", hit, **reduce_attrs(s))
    return [s.op("mul", s.op("div", kept(s, s.g), count), hit)]


OPS = (
    _reduction("sum", _sum, "sum of the elements along axis (in x's dtype)", relation=rel.reduction(NUMBER),
               raises=Raises.NEVER,
               gradient=lambda s: [s.op("broadcast_to_like", kept(s, s.g), s.args[0])],
               rule=gen.reduction(NUMBER), hint=Hint(NUMBER)),
    _reduction("prod", _prod,
               "product of the elements along axis in x's dtype (integers wrap; float16 multiplies in float32 "
               "and rounds once); the empty product is 1",
               relation=rel.reduction(NUMBER), raises=Raises.NEVER, gradient=_prod_gradient,
               rule=gen.reduction(NUMBER), hint=Hint(NUMBER)),
    _reduction("mean", np.mean, "arithmetic mean along axis", FLOAT,
               relation=rel.reduction(FLOAT), raises=Raises.NEVER, gradient=_mean_gradient,
               rule=gen.reduction(FLOAT), hint=Hint(FLOAT)),
    _reduction("max", np.max, "largest element along axis (an empty reduction is a ValueError)",
               relation=rel.reduction(NUMBER), raises=Raises.ON_EMPTY, gradient=_extremum_gradient,
               rule=gen.reduction(NUMBER), hint=Hint(NUMBER)),
    _reduction("min", np.min, "smallest element along axis (an empty reduction is a ValueError)",
               relation=rel.reduction(NUMBER), raises=Raises.ON_EMPTY, gradient=_extremum_gradient,
               rule=gen.reduction(NUMBER), hint=Hint(NUMBER)),
    define(
        "ndarray_size",
        _ndarray_size,
        (
            "the number of elements of x along axis (None: all axes; exclude: the other axes), a scalar of dtype "
            "(converted as `cast` converts); reads only x's shape, so the JIT computes it on the host without a kernel"
        ),
        dtypes="any → dtype (numeric)",
        pattern=Pattern.OPAQUE,
        kinds=None,
        attrs=(AttrSpec("axis", "axes", None), AttrSpec("exclude", "bool", False),
               AttrSpec("dtype", "dtype", IntType(64))),
        relation=rel.ndarray_size,
        raises=Raises.NEVER,
        rule=gen.ndarray_size,
        hint=Hint(NUMBER, 0, 0),
    ),
    define(
        "argmax",
        functools.partial(arg_extreme, "argmax"),
        "index of the first largest element along axis (None: of the flattened tensor; several axes, or "
        "with exclude the axes axis does not name: the index in their row-major flattening, as TVM); "
        "a nan counts as the largest",
        dtypes="numeric → int32",
        pattern=Pattern.REDUCE,
        attrs=ARG_EXTREME_ATTRS,
        relation=rel.reduction(NUMBER, IntType(32)),
        raises=Raises.ON_EMPTY,
        rule=gen.argmax,
        hint=Hint(INT32, 0, 2),
    ),
    define(
        "cumsum",
        _cumsum,
        "running sums of data converted to dtype (None: data's; as cast converts) along axis (None: of "
        "the flattened data, a vector), in dtype (integers wrap; float16 adds in float32 and rounds each sum once); "
        "exclusive shifts them one place (the first is 0)",
        signature="data",
        dtypes="numeric or bool → dtype (numeric)",
        pattern=Pattern.OPAQUE,
        kinds=None,
        attrs=(AttrSpec("axis", "int?", None), AttrSpec("dtype", "dtype?", None), AttrSpec("exclusive", "bool", False)),
        relation=rel.cumsum,
        raises=Raises.NEVER,
        gradient=_cumsum_gradient,
        lowering=_cumsum_lowering,
        rule=gen.cumsum,
        hint=Hint(NUMBER, 1, 3),
    ),
)
