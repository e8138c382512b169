"""Runtime values of the reference evaluator, and the check of arguments against types.

Tensors are NumPy arrays (0-d for scalars), tuples are Python tuples, functions are
``Closure``s (callable from Python) and references are ``RefCell``s.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from relayish.dims import Dim
from relayish.errors import RelayRuntimeError
from relayish.expr import Function
from relayish.printer import astext
from relayish.traverse import trampoline
from relayish.types import BaseType, FuncType, Kind, RefType, Shape, TensorType, TupleType, Type, TypeVar


class Frame:
    """The variables of one function activation; closures keep their defining frame."""

    __slots__ = ("values", "parent", "dims", "global_name")

    def __init__(self, parent: Frame | None, global_name: str, dims: dict[TypeVar, int] | None = None):
        self.values: dict[int, Any] = {}
        self.parent = parent
        self.global_name = global_name
        self.dims = dims if dims is not None else (parent.dims if parent is not None else {})  # shared unless new

    def lookup(self, var: Any) -> Any:
        frame: Frame | None = self
        key = id(var)
        while frame is not None:
            if key in frame.values:
                return frame.values[key]
            frame = frame.parent
        raise KeyError(var)


class RefCell:
    """A mutable cell: every copy of the reference sees the same content."""

    __slots__ = ("value",)

    def __init__(self, value: Any):
        self.value = value

    def __repr__(self) -> str:
        return f"RefCell({self.value!r})"


class Closure:
    """A function value. Calling it from Python runs it in the evaluator."""

    __slots__ = ("fn", "frame", "global_name", "evaluator")

    def __init__(self, fn: Function, frame: Frame | None, global_name: str, evaluator: Any):
        self.fn, self.frame, self.global_name, self.evaluator = fn, frame, global_name, evaluator

    def __call__(self, *args: Any) -> Any:
        return self.evaluator.call_from_python(self, args)

    def __repr__(self) -> str:
        return f"<closure of {len(self.fn.params)} arguments from @{self.global_name}>"


def describe(value: Any) -> str:
    """A value's type in the text format's words, for error messages."""
    if isinstance(value, (np.ndarray, np.generic)):
        try:
            dtype = astext(BaseType.from_numpy(value.dtype))
        except TypeError:
            dtype = f"NumPy {value.dtype}"
        return f"Tensor({dtype}, Shape({', '.join(map(str, np.shape(value)))}))"
    if isinstance(value, tuple):
        return "(" + ", ".join(describe(v) for v in value) + ("," if len(value) == 1 else "") + ")"
    if isinstance(value, (Closure, RefCell)):
        return "a function" if isinstance(value, Closure) else "a reference"
    return f"a Python {type(value).__name__}"


def check_value(ty: Type, value: Any, dims: dict[TypeVar, int], what: str) -> Any:
    """Check ``value`` against ``ty``, binding dimension variables in ``dims``.

    Returns the value as the evaluator holds it (NumPy scalars become 0-d arrays).
    """

    def check(t: Type, v: Any):
        if isinstance(t, TensorType):
            return _check_tensor(t, v, dims, what)
        if isinstance(t, TupleType):
            if not isinstance(v, tuple) or len(v) != len(t.fields):
                raise _mismatch(what, ty, value)
            items = []
            for field, item in zip(t.fields, v):
                items.append((yield check(field, item)))
            return tuple(items)
        if isinstance(t, FuncType) and not isinstance(v, Closure) or isinstance(t, RefType) and not isinstance(v, RefCell):
            raise _mismatch(what, ty, value)
        return v

    return trampoline(check(ty, value))


def _check_tensor(t: TensorType, v: Any, dims: dict[TypeVar, int], what: str) -> np.ndarray:
    if not isinstance(v, (np.ndarray, np.generic)):
        raise _mismatch(what, t, v, hint=" (pass a NumPy array, e.g. np.float32(1.0))")
    array = np.asarray(v)
    if isinstance(t.dtype, BaseType) and array.dtype != t.dtype.to_numpy():
        raise _mismatch(what, t, v)
    if isinstance(t.shape, Shape):
        if array.ndim != t.shape.rank:
            raise _mismatch(what, t, v)
        for axis, (dim, size) in enumerate(zip(t.shape.dims, array.shape)):
            _check_dim(dim, size, axis, dims, what, t, v)
    return array


def _check_dim(dim: Dim, size: int, axis: int, dims: dict[TypeVar, int], what: str, t: Type, v: Any) -> None:
    known = dim.substitute({tv: Dim.const(n) for tv, n in dims.items()})
    if known.value is not None:
        if known.value != size:
            detail = f"dimension {axis} is {size}, but {astext(dim)} is {known.value} here"
            raise _mismatch(what, t, v, hint=f" ({detail})" if not dim.is_const else "")
        return
    free = [tv for tv in known.free_vars() if isinstance(tv, TypeVar) and tv.kind is Kind.DIM]
    if len(free) == 1 and known == Dim.atom(free[0]):
        dims[free[0]] = size


def _mismatch(what: str, ty: Type, value: Any, hint: str = "") -> RelayRuntimeError:
    return RelayRuntimeError(f"{what}: expected {astext(ty)}, got {describe(value)}{hint}")
