"""CUDA kernels of index-expression operators (relayish/ix), generated from their definitions.

One thread per output element runs the element's statements as the CPU kernels write them
(jit/kernels/index_expr.py: reductions as loops, ``where`` as an ``if``), in this target's
dialect: transcendentals through ``math`` with NumPy's results outside their domains (the
simulator's ``math`` raises there, libdevice does not), ``maximum``/``minimum`` passing NaN on,
integer ``//`` and ``%`` giving 0 for a zero divisor as the semantics' NumPy does, floats' through
NumPy's divmod. Correct first, as the other CUDA kernels: no tiling.

The checks the CPU kernels make once per call run on the host, on the arguments' shapes; a read
outside an input found by a thread is reported through ``err``. Either way the call then runs
the operator's NumPy semantics on host copies, which raise their error (or, for sizes a ``?``
hid from the checker, compute the result). An adjoint's scatters run one thread per point of
each scatter's grid, adding in float64 with atomic additions (scatters may collide), then
narrowed to the target's dtype by one more kernel. Rank-0 arguments and results are host scalars, as elsewhere in
this target.
"""

from __future__ import annotations

import re
from typing import Any

import numpy as np

from relayish.ix.language import Definition
from relayish.ix.relation import dtypes, output_dtype
from relayish.ix.semantics import evaluate

from ..kernels.index_expr import Dialect, Writer, checks_source, made_once
from ..kernels.registry import load
from .elementwise import _DIVMOD, _FUNCTIONS, _OVERFLOW
from .launch import HEADER, launch


class CudaDialect(Dialect):
    """The CUDA spelling of the operations whose source differs from the CPU kernels'."""

    def __init__(self) -> None:
        self.helpers: dict[str, str] = {}

    def binary(self, op: str, x: str, y: str, dtype: str) -> str:
        if op in ("maximum", "minimum"):
            keep = ">=" if op == "maximum" else "<="
            return f"({x} if ({x} {keep} {y} or {x} != {x}) else {y})"
        if op in ("//", "%") and "float" in dtype:
            self.helpers["_divmod"] = _DIVMOD
            return f"_divmod({x}, {y})[{int(op == '%')}]"
        if op in ("//", "%"):
            return f"({x} {op} {y} if {y} != 0 else {dtype}(0))"
        return super().binary(op, x, y, dtype)

    def function(self, op: str, x: str, dtype: str) -> str:
        if op == "abs":
            return f"abs({x})"
        if op == "sigmoid":
            return f"{dtype}(1) / ({dtype}(1) + {self.function('exp', f'-{x}', dtype)})"
        big, huge = _OVERFLOW[dtype.removeprefix("np.")]
        names = {"zero": f"{dtype}(0)", "one": f"{dtype}(1)", "inf": f"{dtype}(np.inf)", "nan": f"{dtype}(np.nan)",
                 "big": f"{dtype}({big})", "huge": f"{dtype}({huge})"}
        template = re.sub(r"\b(zero|one|inf|nan|big|huge)\b", lambda m: names[m.group(1)], _FUNCTIONS[op])
        return template.format(f"({x})")

    def sum_step(self, total: str, x: str, dtype: str) -> str:
        return f"{total} + {x}"


def source(defn: Definition, arg_dtypes: list[np.dtype], ranks: list[int]) -> str:
    """The kernel module of ``defn``: ``checks``, ``shape`` (or ``counts``) on the host, ``BODIES``."""
    dialect = CudaDialect()
    writer = Writer(dtypes(defn, arg_dtypes), defn, arg_dtypes, dialect)
    params = ", ".join(f"a{k}" for k in range(len(arg_dtypes)))
    sizes = "".join(f"    S{k}_{a} = a{k}.shape[{a}]\n" for k, rank in enumerate(ranks) for a in range(rank))
    bodies, host = [], []
    if defn.target is None:
        out_dtype = output_dtype(defn, writer.found[id(defn.body)])
        lines: list[str] = []
        value = writer.expression(lines, 1, defn.body)
        at = ", ".join(writer.name(v) for v in defn.indices) or "()"
        store = f"    out[{at}] = np.{out_dtype.name}({value})\n"
        bodies.append(_thread("body", params, sizes, [writer.name(v) for v in defn.indices],
                              [f"out.shape[{a}]" for a in range(len(defn.indices))], "out.size", lines, store))
        host.append(f"def shape({params}):\n{sizes}    return ({''.join(writer.dim(d) + ', ' for d in defn.shape)})\n"
                    f"\n\nDTYPE = np.{out_dtype.name}\n")
    else:
        counts = []
        for k, part in enumerate(defn.scatters):
            lines = []
            places = [writer.expression(lines, 1, t) for t in part.targets]
            target = [f"S{defn.target}_{a}" for a in range(len(places))]
            inside = " and ".join(f"0 <= {p} < {s}" for p, s in zip(places, target)) or "True"
            flat = "0"
            for p, s in zip(places, target):
                flat = f"({flat}) * {s} + {p}"
            lines.append(f"    if {inside}:\n")
            value = writer.expression(lines, 2, part.value)
            lines.append(f"        cuda.atomic.add(out, {flat}, np.float64({value}))\n")
            extents = [writer.dim(v.extent) for v in part.space]
            count = " * ".join(extents) or "1"
            bodies.append(_thread(f"scatter{k}", params, sizes, [writer.name(v) for v in part.space], extents,
                                  count, lines, ""))
            counts.append(count)
        host.append(f"def counts({params}):\n{sizes}    return [{', '.join(counts)}]\n")
        bodies.append(_NARROW)
    names = ", ".join(b.split("(")[0].removeprefix("@cuda.jit\ndef ") for b in bodies)
    return HEADER + "".join(dialect.helpers.values()) + "\n\n" + "\n\n".join(bodies) + \
        f"\n\nBODIES = ({names},)\n\n\n{checks_source(writer, params, sizes)}\n\n{''.join(host)}"


def _thread(name: str, params: str, sizes: str, indices: list[str], extents: list[str], count: str,
            lines: list[str], store: str) -> str:
    """A ``@cuda.jit`` function whose thread ``t`` runs ``lines`` at the ``t``-th point (row-major)
    of the grid of ``extents``, naming its coordinates ``indices``; reports a bad read in ``err``."""
    head = [f"@cuda.jit\ndef {name}({params}{', ' if params else ''}out, err):\n", sizes,
            "    t = cuda.grid(1)\n", f"    if t >= {count}:\n        return\n"]
    for index, extent in reversed(list(zip(indices, extents))[1:]):
        head.append(f"    {index} = t % {extent}\n    t = t // {extent}\n")
    if indices:
        head.append(f"    {indices[0]} = t\n")
    head.append("    bad = 0\n")
    return "".join([*head, *lines, store, "    if bad:\n        err[0] = bad\n"])


_NARROW = """@cuda.jit
def narrow(total, out, err):
    t = cuda.grid(1)
    if t < total.size:
        out[t] = total[t]
"""


class CudaIndexKernel:
    """The operator on device arrays (rank-0 arguments as host scalars): ``kernel(*args)``."""

    def __init__(self, defn: Definition, arg_dtypes: list[np.dtype], ranks: list[int]):
        self.defn = defn
        self.module = load(source(defn, arg_dtypes, ranks), "ix", "cuda")

    def __call__(self, *args: Any) -> Any:
        from numba import cuda

        arrays = [a if hasattr(a, "copy_to_host") else cuda.to_device(np.asarray(a)) for a in args]
        if not self.module.checks(*arrays):
            return self.on_host(arrays)
        err = cuda.to_device(np.zeros(1, np.int32))
        if self.defn.target is None:
            out = cuda.device_array(self.module.shape(*arrays), self.module.DTYPE)
            launch(self.module.BODIES[0], out.size, *arrays, out, err)
        else:
            target = arrays[self.defn.target]
            total = cuda.to_device(np.zeros(target.size, np.float64))
            for body, count in zip(self.module.BODIES, self.module.counts(*arrays)):
                launch(body, count, *arrays, total, err)
            flat = cuda.device_array(target.size, target.dtype)
            launch(self.module.narrow, target.size, total, flat, err)
            out = flat.reshape(target.shape) if target.shape else flat
        if int(err.copy_to_host()[0]):
            return self.on_host(arrays)
        return out if out.shape else out.copy_to_host().reshape(())[()]

    def on_host(self, arrays: list[Any]) -> Any:
        """The semantics on host copies: their error, or their result (sizes a ``?`` hid)."""
        result = evaluate(self.defn, *(a.copy_to_host() for a in arrays))
        return cuda_array(result)


def cuda_array(value: np.ndarray) -> Any:
    from numba import cuda

    return cuda.to_device(value) if value.shape else value[()]


cuda_index_kernel = made_once(CudaIndexKernel)


__all__ = ["CudaIndexKernel", "cuda_index_kernel", "source"]
