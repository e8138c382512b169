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

from interp.values import RefCell
from relayish.types import FloatType, FuncType, RefType, TensorType, TupleType, Type

# operator -> Python expression over the argument names {0}, {1}, {2}
TEMPLATES: dict[str, str] = {
    "neg": "(-{0})", "sq": "({0} * {0})", "abs": "abs({0})",
    "exp": "_np.exp({0})", "log": "_np.log({0})", "sqrt": "_np.sqrt({0})", "tanh": "_np.tanh({0})",
    "sin": "_np.sin({0})", "cos": "_np.cos({0})", "sigmoid": "(1.0 / (1.0 + _np.exp(-{0})))",
    "relu": "_np.maximum({0}, {0}.dtype.type(0))", "logical_not": "_np.logical_not({0})",
    "zeros_like": "{0}.dtype.type(0)", "ones_like": "{0}.dtype.type(1)",
    "add": "({0} + {1})", "sub": "({0} - {1})", "mul": "({0} * {1})", "pow": "({0} ** {1})",
    "maximum": "_np.maximum({0}, {1})", "minimum": "_np.minimum({0}, {1})",
    "equal": "({0} == {1})", "not_equal": "({0} != {1})", "less": "({0} < {1})", "less_equal": "({0} <= {1})",
    "greater": "({0} > {1})", "greater_equal": "({0} >= {1})",
    "logical_and": "({0} & {1})", "logical_or": "({0} | {1})",
    "where": "({1} if {0} else {2})", "cast_like": "{0}.astype({1}.dtype)",
}


def expression(op: str, args: list[str], arg_types: list[TensorType], attrs: dict) -> str | None:
    """The scalar expression of ``op`` on ``args`` (all rank 0), or None if it has none."""
    if op == "div":
        floating = isinstance(arg_types[0].dtype, FloatType)
        return f"({args[0]} / {args[1]})" if floating else f"_floordiv({args[0]}, {args[1]})"
    if op == "pow" and isinstance(arg_types[0].dtype, FloatType):
        # NumPy's scalar ``**`` calls libm's powf, its ufunc a SIMD routine that can differ in the last bit.
        return f"_np.power({args[0]}, {args[1]})"
    if op == "cast":
        return f"{args[0]}.astype(_np.{attrs['dtype'].to_numpy().name})"
    template = TEMPLATES.get(op)
    return None if template is None else template.format(*args)


def floordiv(a: Any, b: Any) -> Any:
    if b == 0:
        raise ZeroDivisionError("integer division by zero")
    return a // b


NAMESPACE = {"_np": np, "_floordiv": floordiv}


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
        return value


HOST = Boundary()


def _adapt(fn: Callable, ty: FuncType, convert_args: Callable, convert_result: Callable) -> Callable:
    def adapted(*args: Any) -> Any:
        return convert_result(fn(*(convert_args(a, t) for a, t in zip(args, ty.params))), ty.ret)
    return adapted
