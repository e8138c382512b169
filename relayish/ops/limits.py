"""The largest tensor a program may make, checked before it is made by both backends.

A tensor past the machine's memory is an allocation that fails (a bare ``MemoryError``) or,
worse, one the operating system grants lazily and then kills the process for filling. So
every operator result and ``Zero`` is checked first against ``RELAYISH_MAX_TENSOR_BYTES``
(bytes per tensor; default the machine's physical memory): past it, or with a negative
dimension, the run stops with a ``RelayRuntimeError`` naming the shape and the limit. The
evaluator checks in ``runtime.operators.run_op`` and ``interp.evaluator._zeros``, the JIT where it lowers an
operator call or ``Zero`` (``jit.lower.Lowering.check_size``). Working memory inside an
operator (conv2d's im2col buffer, the evaluator's window copy) is not a tensor of the program
and is not counted: when it does not fit, the allocation's ``MemoryError`` becomes a
``RelayRuntimeError`` naming the operator (evaluator) or the compiled function (JIT).
"""

from __future__ import annotations

import math
import os

import numpy as np

from ..errors import RelayRuntimeError, Span
from ..types import BaseType, Shape, TensorType, TupleType, Type

VARIABLE = "RELAYISH_MAX_TENSOR_BYTES"
UNKNOWN_MEMORY = 2**36  # the default where the machine does not say how much memory it has (64 GiB)


def setting(variable: str, default: int) -> int:
    """A positive integer from the environment (``RELAYISH_MAX_TENSOR_BYTES``, the evaluator's
    ``RELAYISH_MAX_DEPTH``), ``default`` when unset."""
    configured = os.environ.get(variable, "").strip()
    if not configured:
        return default
    try:
        value = int(configured)
    except ValueError:
        value = 0
    if value <= 0:
        raise ValueError(f"{variable}={configured!r} is not a positive integer")
    return value


def max_tensor_bytes() -> int:
    """``RELAYISH_MAX_TENSOR_BYTES``, else the machine's physical memory."""
    try:
        memory = os.sysconf("SC_PAGE_SIZE") * os.sysconf("SC_PHYS_PAGES")
    except (AttributeError, OSError, ValueError):
        memory = UNKNOWN_MEMORY
    return setting(VARIABLE, memory)


def tensor_bytes(shape: tuple[int, ...], dtype: np.dtype) -> int:
    """The bytes of a tensor of ``shape`` and ``dtype``; -1 when a dimension is negative."""
    return -1 if min(shape, default=0) < 0 else math.prod(shape) * dtype.itemsize


def check_tensor(shape: tuple[int, ...], dtype: np.dtype, limit: int, where: str, span: Span | None = None) -> None:
    """Raise ``RelayRuntimeError`` unless a tensor of ``shape`` and ``dtype`` may be made:
    ``where`` says what makes it (``@full in @main``)."""
    size = tensor_bytes(shape, dtype)
    if size < 0:
        raise RelayRuntimeError(f"{where}: a tensor of shape {shape} has a negative dimension", span)
    if size > limit:
        raise RelayRuntimeError(f"{where}: a tensor of shape {shape} and dtype {dtype} would take {size:,} bytes, "
                                f"more than the limit of {limit:,} bytes per tensor: set {VARIABLE} to allow larger "
                                "tensors", span)


def tensor_types(ty: Type | None) -> list[TensorType]:
    """The tensor types in ``ty`` (through tuples) whose rank and dtype are known: what a value of it allocates."""
    if isinstance(ty, TupleType):
        return [t for field in ty.fields for t in tensor_types(field)]
    known = isinstance(ty, TensorType) and isinstance(ty.shape, Shape) and isinstance(ty.dtype, BaseType)
    return [ty] if known else []
