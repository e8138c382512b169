"""Python values as typed arguments, wherever relayish takes one: a call of a ``@relay``
function, a literal of ``relayish run``, a learning rate.

A Python number or list converts only when it fits the dtype exactly: an int for an integer
dtype within its range, an int or a float for a float dtype within its range (rounded to the
nearest value, as every float is), a bool for ``Bool``. A float never becomes an int (not
even 2.0: relayish turns no float into an int unasked, as a float literal never meets an
integer tensor), and a bool is not a number. NumPy values are not converted: their dtype
must be the parameter's, and ``misfit`` words what the backends' check found wrong with one that is not.
"""

from __future__ import annotations

import reprlib
from typing import Any, Callable

import numpy as np

from relayish.errors import RelayRuntimeError
from relayish.dims import dim_text
from relayish.printer import astext
from relayish.types import BaseType, Shape, TensorType, TupleType, Type
from runtime.values import ArgumentMismatch

DEFAULT_DTYPES = {"b": np.dtype(bool), "i": np.dtype(np.int32), "f": np.dtype(np.float32)}  # a literal's, untyped


class Misfit(Exception):
    """Why a value does not fit: ``got ..., which ...: what to do``; the caller says which
    argument it is and where its parameter is declared."""


def shown(value: Any) -> str:
    """A value as a message quotes it: ``the float 2.5``, ``[1, 2.5]``, ``None``."""
    if isinstance(value, (list, tuple)) or value is None:
        return reprlib.repr(value)
    return f"the {type(value).__name__} {reprlib.repr(value)}"


def a_dtype(dtype: np.dtype) -> str:
    """``a float32``, ``an int32``: a dtype with its article."""
    return f"{'an' if dtype.name.startswith('int') else 'a'} {dtype}"


def _kind(source: np.ndarray) -> str | None:
    """'b', 'i' or 'f': what kind of Python numbers ``source`` holds (None: not numbers)."""
    kind = source.dtype.kind
    if kind == "O":  # Python ints beyond int64, perhaps beside floats; anything else is not a number
        kinds = {"i" if type(v) is int else "f" if type(v) is float else None for v in source.flat}
        return None if None in kinds else "f" if "f" in kinds else "i"
    return {"b": "b", "i": "i", "u": "i", "f": "f"}.get(kind)


def exact_array(value: Any, dtype: np.dtype | None) -> np.ndarray:
    """``value`` (a number, a possibly nested list of numbers) as an array of ``dtype`` when
    it fits exactly (None: float32, int32 or bool, after the value's kind); else ``Misfit``."""
    try:
        source = np.asarray(value)
    except ValueError:  # NumPy 2 refuses ragged lists
        raise Misfit(f"got {shown(value)}, whose rows have different lengths: pass a rectangular list") from None
    if source.size == 0:
        return source.astype(dtype or DEFAULT_DTYPES["f"])
    kind = _kind(source)
    if kind is None:
        raise Misfit(f"got {shown(value)}, which is not a number")
    target = np.dtype(dtype) if dtype is not None else DEFAULT_DTYPES[kind]
    if (kind == "b") != (target.kind == "b"):
        fix = "bool parameters take True or False" if target.kind == "b" else "a bool is not a number here: write 1 or 0"
        raise Misfit(f"got {shown(value)}: {fix}")
    if target.kind in "iu":
        if kind == "f":
            whole = source.ndim == 0 and float(source).is_integer()
            fix = f"write {int(source)}" if whole else "round it first, e.g. round(x)"
            raise Misfit(f"got {shown(value)}: {target} parameters take ints, and relayish turns no float into an "
                         f"int: {fix}")
        info = np.iinfo(target)
        low, high = (source.min(), source.max()) if source.ndim else (source.item(),) * 2  # item(): 5 us less
        if low < info.min or high > info.max:
            raise Misfit(f"got {shown(value)}, which does not fit in {target} ({info.min} to {info.max})")
    if target.kind != "f":
        return source.astype(target)
    try:
        with np.errstate(over="raise"):  # inf stays inf; a finite value beyond the dtype raises
            return source.astype(np.float64).astype(target)
    except (OverflowError, FloatingPointError):  # OverflowError: a Python int beyond float64
        raise Misfit(f"got {shown(value)}, which is too large for {target} (largest {np.finfo(target).max:g})") from None


def one_number(value: Any, dtype: np.dtype, what: str) -> np.ndarray:
    """``value`` as a 0-d array of ``dtype`` (a learning rate, a standard deviation) when it
    is one number that fits it exactly; else an error that names ``what``."""
    try:
        result = exact_array(value, dtype)
        if result.ndim:
            raise Misfit(f"got {shown(value)}: pass one number")
    except Misfit as misfit:
        raise RelayRuntimeError(f"{what}: expected a {np.dtype(dtype)} number, {misfit}") from None
    return result


def to_argument(value: Any, ty: Type | None) -> Any:
    """A value as the backends take an argument of type ``ty`` (see the module's docstring):
    for a tensor, NumPy arrays pass unchanged and anything else must be numbers that fit;
    NumPy scalars become 0-d arrays; functions and references pass unchanged."""
    if isinstance(value, np.ndarray):
        return value
    if isinstance(value, np.generic):
        return np.asarray(value)
    if isinstance(ty, TupleType):
        if not isinstance(value, tuple) or len(value) != len(ty.fields):
            raise Misfit(f"got {shown(value)}: pass a tuple of {len(ty.fields)} values")
        return tuple(_field(i, to_argument, v, f) for i, (v, f) in enumerate(zip(value, ty.fields)))
    if isinstance(ty, TensorType):
        return exact_array(value, ty.dtype.to_numpy() if isinstance(ty.dtype, BaseType) else None)
    if ty is None and isinstance(value, (bool, int, float, list)):
        return exact_array(value, None)
    return value


def _field(index: int, step: Callable[..., Any], *args: Any) -> Any:
    """``step(*args)`` for field ``index`` of a tuple: a misfit says which field."""
    try:
        return step(*args)
    except Misfit as err:
        raise Misfit(f"field {index}: {err}") from None


def described(ty: Type) -> str:
    """A type in words: ``a float32 scalar``, ``a float32 tensor of shape (N, 4)``."""
    if isinstance(ty, TensorType) and isinstance(ty.dtype, BaseType) and isinstance(ty.shape, Shape):
        dtype = ty.dtype.to_numpy()
        if not ty.shape.rank:
            return f"{a_dtype(dtype)} scalar"
        dims = ", ".join(dim_text(d) for d in ty.shape.dims)
        return f"{a_dtype(dtype)} tensor of shape ({dims}{',' * (ty.shape.rank == 1)})"
    if isinstance(ty, TupleType):
        return f"a tuple of {len(ty.fields)} values"
    return astext(ty)


def _array_words(array: np.ndarray) -> str:
    words = a_dtype(array.dtype)
    return f"{words} scalar" if array.ndim == 0 else f"{words} array of shape {array.shape}"


def misfit(err: ArgumentMismatch, name: str) -> str:
    """What the backends' argument check (``runtime.values.check_value``) found, in the words
    of a user who called the parameter ``name``: ``got ...: how to fix it``."""
    fields = "".join(f"field {i}: " for i in err.path)
    value, ty = err.field, err.expected
    if err.why == "tuple":
        return f"{fields}got {shown(value)}: pass a tuple of {len(ty.fields)} values"
    if err.why == "kind":
        return f"{fields}got {shown(value)}, which is not {described(ty)}"
    words = _array_words(np.asarray(value))
    if err.why == "dtype":
        want = ty.dtype.to_numpy()
        return f"{fields}got {words}: pass np.{want} values: {name}{''.join(f'[{i}]' for i in err.path)}.astype(np.{want})"
    return f"{fields}got {words}{', of' if err.why == 'rank' else ':'} {err.detail}"
