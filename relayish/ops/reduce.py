"""Reductions over some or all axes (Pattern.REDUCE), and ``ndarray_size``, the number of
elements along some axes (what the gradients of means divide by; it reads only the shape).

``axis`` is None (every axis), an int or a tuple of ints; negative axes count from the end.
``keepdims`` keeps the reduced axes with size 1.
"""

from __future__ import annotations

import math
from typing import Any, Callable

import numpy as np

from ..types import IntType
from .elementwise import FLOAT, NUMBER, define
from .registry import AttrSpec, OpDef, Pattern

_KEEPDIMS = AttrSpec("keepdims", "bool", False)


def _reduction(name: str, fn: Callable[..., Any], doc: str, kinds: str = NUMBER) -> OpDef:
    attrs = (AttrSpec("axis", "axes", None), _KEEPDIMS)
    return define(name, fn, doc, pattern=Pattern.REDUCE, kinds=kinds, attrs=attrs)


def _sum(x: np.ndarray, axis: Any, keepdims: bool) -> np.ndarray:
    # NumPy would sum int32 into int64; the result keeps the input's dtype.
    return np.sum(x, axis=axis, keepdims=keepdims, dtype=x.dtype)


def _argmax(x: np.ndarray, axis: int | None, keepdims: bool) -> np.ndarray:
    return np.argmax(x, axis=axis, keepdims=keepdims).astype(np.int32)


_reduction("sum", _sum, "sum of the elements along axis")
_reduction("mean", np.mean, "arithmetic mean along axis (floating-point tensors only)", FLOAT)
_reduction("max", np.max, "largest element along axis (error on an empty reduction)")
_reduction("min", np.min, "smallest element along axis (error on an empty reduction)")
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


define(
    "ndarray_size",
    _ndarray_size,
    "the number of elements along axis (None: all; exclude: the other axes), as a scalar of dtype",
    pattern=Pattern.OPAQUE,
    kinds=None,
    attrs=(AttrSpec("axis", "axes", None), AttrSpec("exclude", "bool", False), AttrSpec("dtype", "dtype", IntType(64))),
    differentiable=False,
)
define(
    "argmax",
    _argmax,
    "int32 index of the first largest element along axis (None: of the flattened tensor)",
    pattern=Pattern.REDUCE,
    attrs=(AttrSpec("axis", "int?", None), _KEEPDIMS),
    differentiable=False,
)
