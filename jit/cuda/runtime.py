"""The CUDA program's runtime: tensors of rank 1 and more live on the device, scalars on the host.

Arguments are copied to the device once when the compiled function is called and results back
once when it returns (``BOUNDARY``); constants are copied when the program is lowered; ``Zero``
is allocated and cleared on the device. Rank-0 values stay NumPy scalars on the host, where
control flow needs them: kernels take them by value, and a kernel with a rank-0 result
(a loss) returns it to the host.
"""

from __future__ import annotations

from typing import Any

import numpy as np
from numba import cuda

from relayish.ix.language import Definition

from ..host import HostRuntime
from ..scalars import Boundary
from .index_expr import cuda_index_kernel
from .launch import launch


def to_device(array: Any) -> Any:
    return cuda.to_device(np.ascontiguousarray(array))


def to_host(array: Any) -> np.ndarray:
    return array.copy_to_host()


BOUNDARY = Boundary(to_device, to_host)


@cuda.jit
def _clear(flat: Any) -> None:
    i = cuda.grid(1)
    if i < flat.size:
        flat[i] = 0


class DeviceRuntime(HostRuntime):
    """Constants, ``Zero`` and ``dyn_reshape``'s views on the device."""

    @staticmethod
    def constant(value: np.ndarray) -> Any:
        return to_device(value)

    @staticmethod
    def allocate_zeros(shape: tuple[int, ...], dtype: np.dtype) -> Any:
        array = cuda.device_array(shape, dtype)
        launch(_clear, array.size, array.reshape(array.size))
        return array

    @staticmethod
    def index_kernel(defn: Definition, arg_dtypes: list[Any], ranks: list[int]) -> Any:
        return cuda_index_kernel(defn, arg_dtypes, ranks)

    @staticmethod
    def on_host(value: Any) -> np.ndarray:
        return to_host(value)

    @staticmethod
    def reshaped(value: Any, shape: tuple[int, ...]) -> Any:
        """A device array viewed in ``shape`` (device arrays are C-contiguous: arguments are copied
        so, kernels make new ones), or moved across when the rank-0 side, a scalar, is on the host."""
        on_device = hasattr(value, "copy_to_host")
        if not shape:
            return to_host(value).reshape(())[()] if on_device else value
        return value.reshape(shape) if on_device else to_device(np.reshape(value, shape))


def available() -> bool:
    """A GPU, or the simulator (``NUMBA_ENABLE_CUDASIM=1``)."""
    return cuda.is_available()
