"""Reductions over some or all axes (Pattern.REDUCE).

``axis`` is None (every axis), an int or a tuple of ints; negative axes count from the end.
``keepdims`` keeps the reduced axes with size 1.
"""

from __future__ import annotations

from typing import Any, Callable

import numpy as np

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
define(
    "argmax",
    _argmax,
    "int32 index of the first largest element along axis (None: of the flattened tensor)",
    pattern=Pattern.REDUCE,
    attrs=(AttrSpec("axis", "int?", None), _KEEPDIMS),
    differentiable=False,
)
