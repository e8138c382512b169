"""Reductions over some or all axes (Pattern.REDUCE), and ``ndarray_size``, the number of
elements along some axes (what the gradients of means divide by; it reads only the shape).

``axis`` is None (every axis), an int or a tuple of ints; negative axes count from the end.
``keepdims`` keeps the reduced axes with size 1.
"""

from __future__ import annotations

import math
from typing import TYPE_CHECKING, Any, Callable

import numpy as np

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


def _reduction(name: str, fn: Callable[..., Any], doc: str, kinds: str = NUMBER, **record: Any) -> OpDef:
    attrs = (AttrSpec("axis", "axes", None), _KEEPDIMS)
    return define(name, fn, doc, pattern=Pattern.REDUCE, kinds=kinds, attrs=attrs, **record)


def _sum(x: np.ndarray, axis: Any, keepdims: bool) -> np.ndarray:
    # NumPy would sum int32 into int64; the result keeps the input's dtype.
    return np.sum(x, axis=axis, keepdims=keepdims, dtype=x.dtype)


def _argmax(x: np.ndarray, axis: int | None, keepdims: bool) -> np.ndarray:
    return np.argmax(x, axis=axis, keepdims=keepdims).astype(np.int32)


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
        _argmax,
        "index of the first largest element along axis (None: of the flattened tensor)",
        dtypes="numeric → int32",
        pattern=Pattern.REDUCE,
        attrs=(AttrSpec("axis", "int?", None), _KEEPDIMS),
        relation=rel.reduction(NUMBER, IntType(32)),
        raises=Raises.ON_EMPTY,
        rule=gen.argmax,
        hint=Hint(INT32, 0, 2),
    ),
)
