"""Elementwise operators of one argument, and the helper every operator module uses.

``define`` registers an operator whose compute checks the dtype kinds of its arguments, runs
its NumPy function under IEEE rules (overflow, division by zero and invalid operations give
inf or nan without a warning) and always returns an array.
"""

from __future__ import annotations

import functools
from typing import Any, Callable, Iterable

import numpy as np

from ..types import BaseType
from .registry import AttrSpec, OpDef, Pattern, register

# Allowed dtype kinds (NumPy ``dtype.kind`` letters) and how an error message names them.
FLOAT = "f"
INT = "iu"
NUMBER = "iuf"
BOOL = "b"
_KIND_NAMES = {FLOAT: "floating-point", INT: "integer", NUMBER: "numeric", BOOL: "boolean"}


def check_kinds(op: str, kinds: str, *arrays: np.ndarray) -> None:
    """Raise TypeError unless every array's dtype is of one of ``kinds``."""
    for array in arrays:
        if array.dtype.kind not in kinds:
            raise TypeError(f"{op} needs {_KIND_NAMES[kinds]} tensors, not {array.dtype}")


def define(
    name: str,
    fn: Callable[..., Any],
    doc: str,
    *,
    pattern: Pattern,
    num_args: int | tuple[int, int | None] = 1,
    kinds: str | None = NUMBER,
    attrs: Iterable[AttrSpec] = (),
    differentiable: bool = True,
) -> OpDef:
    """Register operator ``name`` computing ``fn(*arrays, **attrs)``.

    ``kinds`` restricts the dtypes of every argument (None: the operator checks itself).
    """

    def compute(*arrays: np.ndarray, **attr_values: Any) -> np.ndarray:
        if kinds is not None:
            check_kinds(name, kinds, *arrays)
        with np.errstate(all="ignore"):
            return np.asarray(fn(*arrays, **attr_values))

    compute.__name__ = compute.__qualname__ = f"compute_{name}"
    return register(
        OpDef(
            name=name,
            compute=compute,
            pattern=pattern,
            num_args=num_args,
            attrs=tuple(attrs),
            differentiable=differentiable,
            doc=doc,
        )
    )


_unary = functools.partial(define, pattern=Pattern.ELEMWISE)


def _sigmoid(x: np.ndarray) -> np.ndarray:
    # exp(-x) overflows to inf for very negative x, and 1 / inf is the right limit, 0.
    return 1.0 / (1.0 + np.exp(-x))


def _cast(x: np.ndarray, dtype: BaseType) -> np.ndarray:
    return x.astype(dtype.to_numpy())


def _cast_like(x: np.ndarray, like: np.ndarray) -> np.ndarray:
    return x.astype(like.dtype)


_unary("neg", np.negative, "-x")
_unary("sq", lambda x: x * x, "x * x")
_unary("exp", np.exp, "e to the power x", kinds=FLOAT)
_unary("log", np.log, "natural logarithm (log 0 = -inf, log of a negative number = nan)", kinds=FLOAT)
_unary("sqrt", np.sqrt, "square root (nan for negative numbers)", kinds=FLOAT)
_unary("tanh", np.tanh, "hyperbolic tangent", kinds=FLOAT)
_unary("sigmoid", _sigmoid, "logistic function 1 / (1 + exp(-x))", kinds=FLOAT)
_unary("relu", lambda x: np.maximum(x, 0), "max(x, 0)")
_unary("abs", np.abs, "absolute value")
_unary("sin", np.sin, "sine (radians)", kinds=FLOAT)
_unary("cos", np.cos, "cosine (radians)", kinds=FLOAT)
_unary("logical_not", np.logical_not, "boolean negation", kinds=BOOL, differentiable=False)
_unary(
    "cast",
    _cast,
    "x converted to dtype as NumPy's astype does (float to int truncates toward zero)",
    kinds=None,
    attrs=(AttrSpec("dtype", "dtype"),),
)
define(
    "cast_like",
    _cast_like,
    "x converted to like's dtype as cast converts; like supplies only the dtype (any shape)",
    pattern=Pattern.OPAQUE,
    num_args=2,
    kinds=None,
)
