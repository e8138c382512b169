"""Run a CUDA kernel the way lowering calls it: device arrays in (rank-0 arguments as scalars),
host arrays out."""

from __future__ import annotations

from typing import Any

import numpy as np

from jit.kernels.registry import ArgType, kernel
from relayish.ops import get_op


def run_cuda(name: str, arrays: list[np.ndarray], **attrs: Any) -> Any:
    """The CUDA kernel's result on the host (a tuple for tuple results)."""
    from numba import cuda

    op = get_op(name)
    full = op.full_attrs(op.normalize_attrs(attrs))
    fn = kernel(name, full, [ArgType(a.dtype.name, a.ndim) for a in arrays], "cuda")
    result = fn(*(cuda.to_device(a) if a.ndim else a[()] for a in arrays))
    return tuple(map(to_host, result)) if isinstance(result, tuple) else to_host(result)


def to_host(value: Any) -> np.ndarray:
    return np.asarray(value.copy_to_host() if hasattr(value, "copy_to_host") else value)


def reference(name: str, arrays: list[np.ndarray], **attrs: Any) -> Any:
    """The operator's NumPy semantics."""
    return get_op(name)(*arrays, **attrs)
