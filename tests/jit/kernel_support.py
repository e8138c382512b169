"""Shared by the kernel tests: run a kernel the way lowering calls it."""

from __future__ import annotations

from typing import Any

import numpy as np

from jit.kernels.registry import ArgType, kernel
from relayish.ops import get_op


def run(name: str, arrays: list[np.ndarray], **attrs: Any) -> np.ndarray:
    """The kernel's result; checks that the arguments are left as they were."""
    op = get_op(name)
    full = op.full_attrs(op.normalize_attrs(attrs))
    before = [a.copy() for a in arrays]
    result = kernel(name, full, [ArgType(a.dtype.name, a.ndim) for a in arrays])(*arrays)
    for a, b in zip(arrays, before):
        np.testing.assert_array_equal(a, b, strict=True)
    return result
