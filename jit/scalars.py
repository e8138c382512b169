"""Scalar code: rank-0 tensors inside compiled programs are NumPy scalars (``np.float32``).

Calling a Numba kernel costs about 0.8 us of dispatch; NumPy scalar arithmetic about
0.04 us. Control flow, counters and recursion on scalars (loops, ``fib``) are dominated by
that overhead, so an elementwise or broadcasting operator whose arguments are all rank 0
becomes a Python expression on NumPy scalars, with the operator's exact semantics (NumPy
computes both: dtypes are preserved, overflow wraps, IEEE results, warnings off; integer
division by zero raises ZeroDivisionError as the reference does). Everything else calls
its kernel, with rank-0 arguments passed as 0-d arrays and rank-0 results read back.

At the boundary (``Boundary``), rank-0 arguments become scalars and rank-0 results 0-d
arrays again, structurally through tuples and functions.
"""

from __future__ import annotations

from typing import Any, Callable

import numpy as np

from runtime.values import DataValue, RefCell
from relayish.ops.element import translate
from relayish.ops.registry import lookup_op
from relayish.types import DataType, FuncType, RefType, TensorType, TupleType, Type

def expression(op: str, args: list[str], arg_types: list[TensorType], attrs: dict) -> str | None:
    """The scalar expression of ``op`` on ``args`` (all rank 0), or None if it has none: the
    record's element expression (``relayish.ops.element``) written on NumPy scalars."""
    if op == "cast":
        return f"{args[0]}.astype(_np.{attrs['dtype'].to_numpy().name})"
    if op == "cast_like":
        return f"{args[0]}.astype({args[1]}.dtype)"
    definition = lookup_op(op)
    if definition is None or definition.element is None:
        return None
    return translate(definition.element, ScalarDialect(args, computation_dtype(arg_types)))


def computation_dtype(arg_types: list[TensorType]) -> str:
    """The dtype an element expression computes in (its literals' dtype): the first argument's
    that is not bool (``where``'s values, not its condition), else bool."""
    names = [t.dtype.to_numpy().name for t in arg_types]
    return next((n for n in names if n != "bool"), "bool")


class ScalarDialect:
    """Element expressions on NumPy scalars: NumPy computes each operation, so the results are
    the reference's (dtypes preserved, overflow wraps, IEEE results; integer division by zero
    raises ZeroDivisionError as the reference does)."""

    _FLOAT_BINARY = {"/": "({0} / {1})", "//": "_np.floor_divide({0}, {1})", "%": "_np.remainder({0}, {1})",
                     # NumPy's scalar ``**`` calls libm's powf, its ufunc a SIMD routine: the ufunc, as the reference
                     "**": "_np.power({0}, {1})"}
    _INT_BINARY = {"/": "_floordiv({0}, {1})", "//": "_floordiv({0}, {1})", "%": "_floormod({0}, {1})",
                   "**": "({0} ** {1})", "and": "({0} & {1})", "or": "({0} | {1})"}

    def __init__(self, args: list[str], dtype: str):
        self.args, self.dtype = args, dtype
        self.floating = np.dtype(dtype).kind == "f"

    def arg(self, index: int) -> str:
        return self.args[index]

    def literal(self, value: int | float | bool) -> str:
        return f"_np.{'bool_' if self.dtype == 'bool' else self.dtype}({value!r})"

    def unary(self, op: str, x: str) -> str:
        return f"_np.logical_not({x})" if op == "not" else f"(-{x})"

    def binary(self, op: str, x: str, y: str) -> str:
        table = self._FLOAT_BINARY if self.floating else self._INT_BINARY
        return table.get(op, "({0} %s {1})" % op).format(x, y)

    def call(self, name: str, args: list[str]) -> str:
        if name == "where":
            return f"({args[1]} if {args[0]} else {args[2]})"
        if name == "abs":
            return f"abs({args[0]})"
        function = "_erf" if name == "erf" else f"_np.{name}"
        return f"{function}({', '.join(args)})"


def floordiv(a: Any, b: Any) -> Any:
    if b == 0:
        raise ZeroDivisionError("integer division by zero")
    return a // b


def floormod(a: Any, b: Any) -> Any:
    if b == 0:
        raise ZeroDivisionError("integer modulo by zero")
    return a % b


def erf(x: Any) -> Any:
    """scipy's erf in the argument's dtype, as the reference's: scipy computes float16 in float64."""
    import scipy.special  # only where a program calls erf: its import takes 0.23 s

    return x.dtype.type(scipy.special.erf(x))


NAMESPACE = {"_np": np, "_floordiv": floordiv, "_floormod": floormod, "_erf": erf}


def is_scalar(ty: Type) -> bool:
    return isinstance(ty, TensorType) and ty.shape.rank == 0


class Boundary:
    """How values cross into and out of compiled code, structurally through tuples, functions
    and references: rank-0 tensors are NumPy scalars inside on every target; other tensors go
    through ``to_inside`` / ``to_outside`` (identity on the CPU, host-device copies for CUDA)."""

    def __init__(self, to_inside: Callable[[Any], Any] = lambda a: a, to_outside: Callable[[Any], Any] = lambda a: a):
        self.to_inside, self.to_outside = to_inside, to_outside

    def inward(self, value: Any, ty: Type) -> Any:
        """An argument as compiled code holds it."""
        if isinstance(ty, TensorType):
            return value[()] if ty.shape.rank == 0 else self.to_inside(value)
        if isinstance(ty, TupleType):
            return tuple(self.inward(v, t) for v, t in zip(value, ty.fields))
        if isinstance(ty, FuncType):
            return _adapt(value, ty, self.outward, self.inward)
        if isinstance(ty, DataType):
            return _data_mapped(value, lambda a: (a[()] if a.ndim == 0 else self.to_inside(a)) if isinstance(a, np.ndarray) else a)
        return value

    def outward(self, value: Any, ty: Type) -> Any:
        """A result as the evaluator gives it: 0-d arrays, callable closures, RefCells."""
        if isinstance(ty, TensorType):
            return np.asarray(value) if ty.shape.rank == 0 else self.to_outside(value)
        if isinstance(ty, TupleType):
            return tuple(self.outward(v, t) for v, t in zip(value, ty.fields))
        if isinstance(ty, FuncType):
            return _adapt(value, ty, self.inward, self.outward)
        if isinstance(ty, RefType):
            return RefCell(self.outward(value[0], ty.value))
        if isinstance(ty, DataType):
            return _data_mapped(value, lambda a: np.asarray(a) if isinstance(a, np.generic) else
                                self.to_outside(a) if hasattr(a, "copy_to_host") else a)
        return value


HOST = Boundary()


def _data_mapped(value: Any, convert: Callable[[Any], Any]) -> Any:
    """A data value (``DataValue``s and tuples, holding tensors) with each other part ``convert``ed:
    a data type's fields are not known here, but its tensors are what crosses the boundary. Without
    recursion: a list may be long."""
    done: dict[int, Any] = {}
    stack: list[tuple[Any, bool]] = [(value, False)]
    while stack:
        item, ready = stack.pop()
        if isinstance(item, (DataValue, tuple)):
            parts = item.fields if isinstance(item, DataValue) else item
            if not ready:
                stack.append((item, True))
                stack.extend((p, False) for p in parts if id(p) not in done)
                continue
            new = tuple(done[id(p)] for p in parts)
            done[id(item)] = DataValue(item.ctor, new) if isinstance(item, DataValue) else new
        else:
            done[id(item)] = convert(item)
    return done[id(value)]


def _adapt(fn: Callable, ty: FuncType, convert_args: Callable, convert_result: Callable) -> Callable:
    def adapted(*args: Any) -> Any:
        return convert_result(fn(*(convert_args(a, t) for a, t in zip(args, ty.params))), ty.ret)
    return adapted
