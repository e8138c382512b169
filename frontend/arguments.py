"""Python values as typed arguments, wherever relayish takes one: a call of a ``@relay``
function, a literal of ``relayish run``, a learning rate.

A Python number or list converts only when it fits the dtype exactly: an int for an integer
dtype within its range, an int or a float for a float dtype within its range (rounded to the
nearest value, as every float is), a bool for ``Bool``. A float never becomes an int (not
even 2.0: relayish turns no float into an int unasked, as a float literal never meets an
integer tensor), and a bool is not a number. NumPy values are not converted: their dtype
must be the parameter's, and ``misfit`` words what the backends' check found wrong with one that is not.
The fields of a tuple, and of a data value (a ``DataValue``: ``Cons(1.0, Nil())``), convert alike.
"""

from __future__ import annotations

import reprlib
from typing import Any, Iterator, Mapping

import numpy as np

from relayish.dims import dim_text
from relayish.errors import RelayRuntimeError
from relayish.module import TypeDef
from relayish.printer import astext
from relayish.traverse import trampoline
from relayish.types import BaseType, DataType, Shape, TensorType, TupleType, Type
from runtime.values import ArgumentMismatch, DataValue
from typecheck.solver import substitute

from .data import ConstructorType

DEFAULT_DTYPES = {"b": np.dtype(bool), "i": np.dtype(np.int32), "f": np.dtype(np.float32)}  # a literal's, untyped


class Misfit(Exception):
    """Why a value does not fit: ``got ..., which ...: what to do``; the caller says which
    argument it is and where its parameter is declared. ``steps``: the fields it is in, from
    the inside out, as ``(index, constructor name or None)``."""

    def __init__(self, message: str):
        super().__init__(message)
        self.steps: list[tuple[int, str | None]] = []


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


def to_argument(value: Any, ty: Type | None, type_defs: Mapping[str, TypeDef] | None = None) -> Any:
    """A value as the backends take an argument of type ``ty`` (see the module's docstring):
    for a tensor, NumPy arrays pass unchanged and anything else must be numbers that fit;
    NumPy scalars become 0-d arrays; a tuple's fields and a data value's (its constructor's
    field types from ``type_defs``) convert in turn; functions and references pass unchanged."""
    if isinstance(value, np.ndarray):
        return value
    if isinstance(value, np.generic):
        return np.asarray(value)
    if isinstance(ty, (TupleType, DataType)):
        try:
            return trampoline(_converted(value, ty, type_defs or {}))
        except Misfit as err:
            if not err.steps:
                raise
            raise Misfit(f"{path_words(err.steps[::-1])}{err}") from None
    if isinstance(ty, TensorType):
        return exact_array(value, ty.dtype.to_numpy() if isinstance(ty.dtype, BaseType) else None)
    if ty is None and isinstance(value, (bool, int, float, list)):
        return exact_array(value, None)
    return value


def _converted(value: Any, ty: Type | None, type_defs: Mapping[str, TypeDef]) -> Iterator[Any]:
    """``to_argument`` through tuples and data values, as a generator for ``trampoline`` (a
    list is as deep as it is long); a misfit says which field, from the outside in."""
    if isinstance(ty, TupleType) and not isinstance(value, (np.ndarray, np.generic)):
        if not isinstance(value, tuple) or len(value) != len(ty.fields):
            raise Misfit(f"got {shown(value)}: pass a tuple of {len(ty.fields)} values")
        field_types = list(ty.fields)
    elif isinstance(ty, DataType) and isinstance(value, DataValue) and ty.name in type_defs:
        definition = type_defs[ty.name]
        ctor = next((c for c in definition.ctors if c.name == value.ctor), None)
        if ctor is None or len(ctor.fields) != len(value.fields):
            return value  # not of this type: the backends' check says so
        mapping = dict(zip(definition.params, ty.args))
        field_types = [substitute(f, mapping) for f in ctor.fields]
    elif isinstance(ty, DataType):
        return value  # not a data value: the backends' check says what it is instead
    else:
        return to_argument(value, ty)
    parts = value if isinstance(value, tuple) else value.fields
    fields = []
    for index, (part, field_type) in enumerate(zip(parts, field_types)):
        try:
            fields.append((yield _converted(part, field_type, type_defs)))
        except Misfit as err:
            err.steps.append((index, constructor_name(value)))
            raise
    if all(a is b for a, b in zip(fields, parts)):
        return value
    return tuple(fields) if isinstance(value, tuple) else DataValue(value.ctor, tuple(fields))


def constructor_name(value: Any) -> str | None:
    """The name of the constructor that built a data value as Python calls it (``Nothing``), else None."""
    if not isinstance(value, DataValue):
        return None
    return type(value).__name__ if isinstance(type(value), ConstructorType) else value.ctor


def path_words(steps: list[tuple[int, str | None]]) -> str:
    """``field 1 of Cons (3 times): field 0 of Cons: ``: where in an argument, from the outside in;
    a run of the same step is said once (an element deep in a list)."""
    words = []
    k = 0
    while k < len(steps):
        run = 1
        while k + run < len(steps) and steps[k + run] == steps[k]:
            run += 1
        index, ctor = steps[k]
        words.append(f"field {index}{f' of {ctor}' if ctor else ''}{f' ({run} times)' if run > 1 else ''}: ")
        k += run
    return "".join(words)


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
    if isinstance(ty, DataType):
        return f"a value of the data type {astext(ty)}"
    return astext(ty)


def _array_words(array: np.ndarray) -> str:
    words = a_dtype(array.dtype)
    return f"{words} scalar" if array.ndim == 0 else f"{words} array of shape {array.shape}"


def misfit(err: ArgumentMismatch, name: str, value: Any = None) -> str:
    """What the backends' argument check (``runtime.values.check_value``) found, in the words
    of a user who called the parameter ``name`` and passed ``value``: ``got ...: how to fix it``."""
    steps, part = [], value
    for i in err.path:  # the argument's fields down to the part that does not fit
        steps.append((i, constructor_name(part)))
        part = part.fields[i] if isinstance(part, DataValue) else part[i] if isinstance(part, tuple) else None
    fields = path_words(steps)
    field, ty = err.field, err.expected
    if err.why == "tuple":
        return f"{fields}got {shown(field)}: pass a tuple of {len(ty.fields)} values"
    if err.why == "kind":
        build = ": build one with its constructors" if isinstance(ty, DataType) else ""
        return f"{fields}got {shown(field)}, which is not {described(ty)}{build}"
    words = _array_words(np.asarray(field))
    if err.why == "dtype":
        want = ty.dtype.to_numpy()
        if any(ctor for _, ctor in steps):  # inside a data value: no indexing to show
            return f"{fields}got {words}: pass np.{want} values (x.astype(np.{want}))"
        return f"{fields}got {words}: pass np.{want} values: {name}{''.join(f'[{i}]' for i in err.path)}.astype(np.{want})"
    return f"{fields}got {words}{', of' if err.why == 'rank' else ':'} {err.detail}"
