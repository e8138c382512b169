"""Where the CPU target keeps tensors: NumPy arrays (``HostRuntime``). The lowered program
calls its runtime for constants, for ``Zero`` and for ``dyn_reshape`` (jit/lower.py,
``target_runtime``); the CUDA target's ``DeviceRuntime`` (jit/cuda/runtime.py) keeps them on the
device instead.

A module of its own so that the CUDA target extends it without importing the lowering, which
imports the CUDA target's runtime when it is the target.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from relayish.dims import Dim
from relayish.errors import RelayRuntimeError, Span
from relayish.ix.language import Definition
from relayish.ops.shape import dyn_shape
from relayish.types import TensorType, TupleType, Type, TypeVar
from runtime.operators import op_failure

from .kernels.index_expr import index_kernel


def zero_shape(ty: TensorType, dims: list[TypeVar], values: tuple) -> tuple[int, ...]:
    """The sizes of ``Zero``'s type: dimension variables bound from the function's arguments."""
    binding = {tv: Dim.const(v) for tv, v in zip(dims, values)}
    shape = []
    for d in ty.shape.dims:
        size = d.substitute(binding).value
        if size is None:
            raise RelayRuntimeError(f"Zero of {ty}: the size of {d} is not known here")
        shape.append(size)
    return tuple(shape)


class HostRuntime:
    """Where the CPU target keeps tensors: NumPy arrays."""

    @staticmethod
    def constant(value: np.ndarray) -> Any:
        return value

    def zeros(self, ty: Type, dims: list[TypeVar], values: tuple) -> Any:
        """``Zero`` at run time (tuples of zeros structurally; rank 0 a NumPy scalar)."""
        if isinstance(ty, TupleType):
            return tuple(self.zeros(f, dims, values) for f in ty.fields)
        shape = zero_shape(ty, dims, values)
        dtype = ty.dtype.to_numpy()
        return dtype.type(0) if not shape else self.allocate_zeros(shape, dtype)

    @staticmethod
    def allocate_zeros(shape: tuple[int, ...], dtype: np.dtype) -> Any:
        return np.zeros(shape, dtype)

    @staticmethod
    def index_kernel(defn: Definition, arg_dtypes: list[Any], ranks: list[int]) -> Any:
        """The kernel of an index-expression operator on this target's arrays."""
        return index_kernel(defn, arg_dtypes, ranks)

    def dyn_reshape(self, data: Any, newshape: Any, span: Span | None, global_name: str) -> Any:
        """``dyn_reshape``, which no kernel computes: its result's shape is in newshape's values,
        resolved on the host as the reference resolves them (``relayish.ops.shape.dyn_shape``),
        then data seen in that shape; bad values are the evaluator's error at the call."""
        try:
            shape = dyn_shape(self.on_host(newshape), data)
        except ValueError as err:
            raise op_failure("dyn_reshape", global_name, err, span) from None
        return self.reshaped(data, shape)

    @staticmethod
    def on_host(value: Any) -> np.ndarray:
        """A tensor's values where Python reads them."""
        return value

    @staticmethod
    def reshaped(value: Any, shape: tuple[int, ...]) -> Any:
        """``value`` in ``shape`` (as many elements): NumPy's reshape, a view of C-contiguous data
        (values are immutable, and in-place updates take only arrays that own their memory); a
        rank-0 result is a NumPy scalar, as rank-0 values are in compiled code."""
        return np.reshape(value, shape)[()]
