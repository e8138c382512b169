"""CUDA kernels: one thread per output element, and the launcher that runs them.

A CUDA generator (``@generator(name, target="cuda")``) returns the source of a module made by
``kernel_module``: ``BODIES``, one ``@cuda.jit`` function per result (an operator with a tuple
result has one per field), and ``ERRORS``. Each body is called as ``body(*args, out, err)`` on a
grid covering ``out``; thread ``i`` computes element ``i`` of ``out`` in row-major order, with its
indices in ``o0, o1, ...``. A generator therefore only says how one element is computed
(``element_body``). Arguments of rank 0 arrive as scalars, others as device arrays. A body
reports bad input by storing a code of ``ERRORS`` in ``err[0]``; the launcher raises it. An
empty result has no thread to report anything (NumPy raises for a max over an empty axis even
when the result is empty): the launcher then runs the NumPy reference on host copies of the
arguments, to raise exactly what it raises.

The result shapes and dtypes come from the operator's type relation applied to the concrete
argument shapes (cached per shapes), so no generator repeats shape rules. Correct first: a
reduction or a product is a loop per output element, which is fine for a GPU's many threads
but not tuned (no shared-memory tiling).
"""

from __future__ import annotations

from typing import Any, Sequence

import numpy as np

from relayish.ops.registry import lookup_op
from relayish.types import BaseType, Shape, TensorType, TupleType

from ..kernels.registry import ArgType, launcher

THREADS = 128  # per block

HEADER = "import math\n\nimport numpy as np\nfrom numba import cuda\n\n"


def read(j: int, arg: ArgType, index: Sequence[str]) -> str:
    """Argument ``j`` at ``index`` (a scalar argument is its value)."""
    if arg.rank == 0:
        return f"x{j}"
    return f"x{j}[{', '.join(index)}]"


def broadcast_index(j: int, arg: ArgType, out_rank: int) -> list[str]:
    """The index of argument ``j`` for output element ``o0, o1, ...`` under NumPy broadcasting."""
    lead = out_rank - arg.rank
    return [f"(0 if x{j}.shape[{a}] == 1 else o{lead + a})" for a in range(arg.rank)]


def element_body(name: str, args: Sequence[ArgType], out_rank: int, lines: Sequence[str], value: str) -> str:
    """A ``@cuda.jit`` function storing ``value`` (computed after ``lines``, which may use the
    output indices ``o0, o1, ...``, the arguments ``x0, x1, ...`` and ``err``) into ``out``."""
    params = [f"x{j}" for j in range(len(args))] + ["out", "err"]
    src = ["@cuda.jit", f"def {name}({', '.join(params)}):", "    i = cuda.grid(1)", "    if i >= out.size:",
           "        return"]
    for axis in reversed(range(1, out_rank)):
        src.append(f"    o{axis} = i % out.shape[{axis}]")
        src.append(f"    i = i // out.shape[{axis}]")
    if out_rank:
        src.append("    o0 = i")
    src.extend("    " + line for line in lines)
    src.append(f"    out[{', '.join(f'o{a}' for a in range(out_rank)) or '()'}] = {value}")
    return "\n".join(src) + "\n"


def kernel_module(bodies: Sequence[str], names: Sequence[str], helpers: str = "",
                  errors: dict[int, tuple[str, str]] | None = None) -> str:
    """The module source of a CUDA kernel: ``helpers`` (device functions), the bodies, and the
    error codes as ``{code: (exception name, message)}``."""
    return (HEADER + helpers + "\n\n" + "\n\n".join(bodies)
            + f"\n\nBODIES = ({''.join(n + ', ' for n in names)})\nERRORS = {dict(errors or {})!r}\n")


def launch(body: Any, count: int, *args: Any) -> None:
    """Run ``body(*args)`` on ``count`` threads (none for a count of 0), ``THREADS`` a block."""
    if count:
        threads = min(count, THREADS)
        body[(count + threads - 1) // threads, threads](*args)


@launcher("cuda")
class Launcher:
    """The host side of a CUDA kernel: allocates the results on the device, launches one
    thread per element, raises what the body reported; rank-0 results come back as NumPy scalars."""

    def __init__(self, name: str, attrs: dict, module: Any):
        self.op = lookup_op(name)
        self.attrs = attrs
        self.bodies = module.BODIES
        self.errors = module.ERRORS
        self.results: dict[tuple, tuple[bool, list[tuple[tuple[int, ...], np.dtype]]]] = {}
        self._no_errors: Any = None

    def result_types(self, args: Sequence[Any]) -> tuple[bool, list[tuple[tuple[int, ...], np.dtype]]]:
        key = tuple(np.shape(a) for a in args)
        found = self.results.get(key)
        if found is None:
            types = [TensorType(BaseType.from_numpy(np.dtype(a.dtype)), Shape(*np.shape(a))) for a in args]
            ret = self.op.type_relation(types, self.attrs)
            fields = ret.fields if isinstance(ret, TupleType) else [ret]
            found = self.results[key] = (isinstance(ret, TupleType),
                                         [(tuple(d.value for d in t.shape.dims), t.dtype.to_numpy()) for t in fields])
        return found

    def no_errors(self) -> Any:
        """The ``err`` of a kernel that reports nothing: one array for every call."""
        from numba import cuda  # lazy: numba.cuda, at the first launch (the simulator is chosen before)

        if self._no_errors is None:
            self._no_errors = cuda.to_device(np.zeros(1, np.int32))
        return self._no_errors

    def raise_as_reference(self, args: Sequence[Any]) -> None:
        """An empty result has no thread to report bad input (a max over an empty axis, an index
        out of range beside an empty axis): the reference raises what it raises, on host copies."""
        hosted = [a.copy_to_host() if hasattr(a, "copy_to_host") else np.asarray(a) for a in args]
        with np.errstate(all="ignore"):
            self.op.compute(*hosted, **self.attrs)

    def __call__(self, *args: Any) -> Any:
        from numba import cuda  # lazy: numba.cuda, at the first launch (the simulator is chosen before)

        is_tuple, results = self.result_types(args)
        if any(0 in shape for shape, _ in results):
            self.raise_as_reference(args)
        err = cuda.to_device(np.zeros(1, np.int32)) if self.errors else self.no_errors()
        outs = []
        for body, (shape, dtype) in zip(self.bodies, results):
            out = cuda.device_array(shape, dtype)
            launch(body, out.size, *args, out, err)
            outs.append(out if shape else out.copy_to_host()[()])
        if self.errors:
            code = int(err.copy_to_host()[0])
            if code:
                exc, message = self.errors[code]
                raise {"ZeroDivisionError": ZeroDivisionError, "ValueError": ValueError,
                       "IndexError": IndexError}[exc](message)
        return tuple(outs) if is_tuple else outs[0]
