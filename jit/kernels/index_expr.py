"""CPU kernels of index-expression operators (relayish/ix), generated from their definitions.

A definition ``out[I] = body(I)`` becomes a loop nest over the output's indices with the body
written out as statements: each reduction is a loop (its float sum adds with ``_lane_add``, so
LLVM may add in vector lanes, jit/kernels/vectorize.py), a ``where`` an ``if`` that evaluates only
the branch it chooses, and every read is checked against its input's shape unless its index is
an index variable ranging over exactly that axis. A read outside its input sets a flag instead
of touching memory; the operator's NumPy semantics then run on the same arguments and raise
their error, which names the input and the output element. Values are converted to each node's
dtype as the semantics convert them (relayish/ix/relation.py), so the kernel computes what they
compute, with the reductions' additions in another order.

The outermost output index is split into chunks run on every core (jit/threads.py) when the
output is large enough: gathers never write one element twice. An adjoint (a sum of scatters)
runs serially over each scatter's grid, adding in float64 and skipping positions outside its
result, as the semantics do.

A kernel is generated per definition and argument dtypes and ranks; the registry caches it by
its source, in memory and on disk.
"""

from __future__ import annotations

from typing import Any, Callable

import numpy as np

from relayish.dims import Dim, FloorDiv
from relayish.ix.language import (
    COMPARISONS, Bin, Cast, Definition, InputDim, Lit, Node, Read, Reduce, Size, Unary, Var, Where,
)  # fmt: skip
from relayish.ix.relation import DType, _combine, dtypes, output_dtype, realized
from relayish.ix.semantics import evaluate

from .elementwise import _HEADER
from .registry import kernel_from_source
from .vectorize import SOURCE as VECTORIZE

_OPERATORS = {"+": "+", "-": "-", "*": "*", "/": "/", "//": "//", "%": "%", "&": "&", "|": "|", **{c: c for c in COMPARISONS}}
_FUNCTIONS = {"exp": "np.exp", "log": "np.log", "tanh": "np.tanh", "sqrt": "np.sqrt", "abs": "np.abs",
              "sin": "np.sin", "cos": "np.cos"}


class IndexKernel:
    """The compiled operator for arguments of given dtypes and ranks: ``kernel(*arrays) -> array``."""

    def __init__(self, defn: Definition, arg_dtypes: list[np.dtype], ranks: list[int]):
        self.defn = defn
        self.run = kernel_from_source("ix", source(defn, arg_dtypes, ranks))

    def __call__(self, *arrays: np.ndarray) -> np.ndarray:
        out, bad = self.run(*arrays)
        if bad:  # a read outside an input: the semantics raise the error that says where
            evaluate(self.defn, *arrays)
        return out


def source(defn: Definition, arg_dtypes: list[np.dtype], ranks: list[int]) -> str:
    """The kernel module of ``defn`` for arguments of ``arg_dtypes`` and ``ranks``."""
    found = dtypes(defn, arg_dtypes)
    params = [f"a{k}" for k in range(len(arg_dtypes))]
    sizes = [f"    S{k}_{a} = a{k}.shape[{a}]\n" for k, rank in enumerate(ranks) for a in range(rank)]
    writer = _Writer(found, defn, ranks)
    lines: list[str] = []
    if defn.target is None:
        out_dtype = output_dtype(defn, found[id(defn.body)])
        shape = [writer.dim(v.extent) for v in defn.indices]
        rank = len(shape)
        index = ", ".join(writer.name(v) for v in defn.indices) if rank else "()"
        loops = [(writer.name(v), writer.dim(v.extent)) for v in defn.indices]
        if loops:
            loops[0] = (loops[0][0], "lo, hi")
        depth = writer.loops(lines, 1, loops)
        value = writer.expression(lines, depth, defn.body)
        lines.append(f"{'    ' * depth}out[{index}] = {_cast(out_dtype)}({value})\n")
        shape_code = "(" + "".join(f"{s}, " for s in shape) + ")"
        per_row = " * ".join(shape[1:]) or "1"
        body = "".join(lines)
        return (f"{_HEADER}from jit import threads\n{VECTORIZE}\n\n"
                f"@numba.njit(cache=True, nogil=True, error_model=\"numpy\")\n"
                f"def _part({', '.join(params)}, out, lo, hi):\n{''.join(sizes)}    bad = 0\n{body}    return bad\n\n\n"
                f"def kernel({', '.join(params)}):\n{''.join(sizes)}"
                f"    out = np.empty({shape_code}, np.{out_dtype.name})\n"
                + (f"    bounds = threads.chunk_bounds(out.shape[0], {per_row} * {writer.reduction_steps()})\n"
                   f"    if bounds is None:\n"
                   f"        return out, _part({', '.join(params)}, out, 0, out.shape[0])\n"
                   f"    return out, max(threads.run_chunks(_part, ({', '.join(params)}, out), bounds))\n"
                   if rank else f"    return out, _part({', '.join(params)}, out, 0, 1)\n"))
    target = defn.target
    for part in defn.scatters:
        depth = writer.loops(lines, 1, [(writer.name(v), writer.dim(v.extent)) for v in part.space])
        value = writer.expression(lines, depth, part.value)
        places = [writer.expression(lines, depth, t) for t in part.targets]
        pad = "    " * depth
        inside = " and ".join(f"0 <= {p} < S{target}_{a}" for a, p in enumerate(places)) or "True"
        lines.append(f"{pad}if {inside}:\n{pad}    out[{', '.join(places) or '()'}] += np.float64({value})\n")
    return (f"{_HEADER}{VECTORIZE}\n\n"
            f"@numba.njit(cache=True, nogil=True, error_model=\"numpy\")\n"
            f"def _scatter({', '.join(params)}, out):\n{''.join(sizes)}    bad = 0\n{''.join(lines)}    return bad\n\n\n"
            f"def kernel({', '.join(params)}):\n"
            f"    out = np.zeros(a{target}.shape, np.float64)\n"
            f"    bad = _scatter({', '.join(params)}, out)\n"
            f"    return out.astype(a{target}.dtype), bad\n")


def _cast(dtype: np.dtype) -> str:
    return f"np.{np.dtype(dtype).name}"


class _Writer:
    """Statements computing expressions, written iteratively into ``lines`` at a given depth."""

    def __init__(self, found: dict[int, DType], defn: Definition, ranks: list[int]):
        self.found, self.defn, self.ranks = found, defn, ranks
        self.names: dict[int, str] = {}
        self.count = 0
        self.reductions: list[Reduce] = []

    def fresh(self, prefix: str) -> str:
        self.count += 1
        return f"{prefix}{self.count}"

    def name(self, v: Var) -> str:
        if id(v) not in self.names:
            self.names[id(v)] = self.fresh("i" if not v.reduction else "r")
        return self.names[id(v)]

    def dim(self, d: Dim) -> str:
        terms = []
        for mono, coeff in d.terms.items():
            factors = [str(coeff)] + [self.atom(atom) for atom, power in mono for _ in range(power)]
            terms.append("*".join(factors))
        return "(" + " + ".join(terms) + ")" if terms else "0"

    def atom(self, atom: object) -> str:
        if isinstance(atom, FloorDiv):
            return f"({self.dim(atom.num)} // {self.dim(atom.den)})"
        assert isinstance(atom, InputDim)
        return f"S{atom.input}_{atom.axis}"

    def loops(self, lines: list[str], depth: int, loops: list[tuple[str, str]]) -> int:
        for var, bound in loops:
            lines.append(f"{'    ' * depth}for {var} in range({bound}):\n")
            depth += 1
        return depth

    def reduction_steps(self) -> str:
        return " * ".join(self.dim(v.extent) for r in self.reductions for v in r.axes) or "1"

    def expression(self, lines: list[str], depth: int, root: Node) -> str:
        """Append the statements computing ``root`` at ``depth``; the name holding its value."""
        result = self.fresh("v")
        tasks: list[tuple] = [("node", root, result, depth)]
        while tasks:
            task = tasks.pop()
            if task[0] == "line":
                lines.append(task[1])
                continue
            _, n, target, level = task
            tasks.extend(reversed(self.node(n, target, level)))
        return result

    def node(self, n: Node, target: str, level: int) -> list[tuple]:
        """The tasks computing ``n`` into ``target``: lines, and nodes written before them."""
        pad = "    " * level
        dtype = _cast(realized(self.found[id(n)]))
        if isinstance(n, Var):
            return [("line", f"{pad}{target} = {self.name(n)}\n")]
        if isinstance(n, Lit):
            return [("line", f"{pad}{target} = {dtype}({n.value!r})\n")]
        if isinstance(n, Size):
            return [("line", f"{pad}{target} = {dtype}({self.dim(n.dim)})\n")]
        if isinstance(n, Read):
            return self.read(n, target, level)
        if isinstance(n, Bin):
            a, b = self.fresh("v"), self.fresh("v")
            common = _cast(realized(_combine(self.found[id(n.a)], self.found[id(n.b)]))) if n.op in COMPARISONS else dtype
            x, y = f"{common}({a})", f"{common}({b})"
            expr = f"np.{n.op}({x}, {y})" if n.op in ("maximum", "minimum") else f"{x} {_OPERATORS[n.op]} {y}"
            return [("node", n.a, a, level), ("node", n.b, b, level), ("line", f"{pad}{target} = {dtype}({expr})\n")]
        if isinstance(n, Unary):
            a = self.fresh("v")
            x = f"{dtype}({a})"
            expr = {"-": f"-{x}", "~": f"not {x}" if dtype == "np.bool_" else f"~{x}",
                    "sigmoid": f"{dtype}(1) / ({dtype}(1) + np.exp(-{x}))"}.get(n.op) or f"{_FUNCTIONS[n.op]}({x})"
            return [("node", n.a, a, level), ("line", f"{pad}{target} = {dtype}({expr})\n")]
        if isinstance(n, Where):
            c = self.fresh("v")
            return [("node", n.cond, c, level), ("line", f"{pad}if {c}:\n"), ("node", n.a, target, level + 1),
                    ("line", f"{pad}    {target} = {dtype}({target})\n{pad}else:\n"), ("node", n.b, target, level + 1),
                    ("line", f"{pad}    {target} = {dtype}({target})\n")]
        if isinstance(n, Cast):
            a = self.fresh("v")
            return [("node", n.a, a, level), ("line", f"{pad}{target} = {dtype}({a})\n")]
        assert isinstance(n, Reduce)
        self.reductions.append(n)
        b = self.fresh("v")
        start = {"sum": f"{dtype}(0)", "prod": f"{dtype}(1)"}.get(n.kind) or _extreme(n.kind, realized(self.found[id(n)]))
        inner = level + len(n.axes)
        step = {"sum": f"_lane_add({target}, {dtype}({b}))" if "float" in dtype else f"{target} + {dtype}({b})",
                "prod": f"{target} * {dtype}({b})", "max": f"np.maximum({target}, {b})",
                "min": f"np.minimum({target}, {b})"}[n.kind]
        heads = [("line", f"{'    ' * (level + k)}for {self.name(v)} in range({self.dim(v.extent)}):\n")
                 for k, v in enumerate(n.axes)]
        return [("line", f"{pad}{target} = {start}\n"), *heads, ("node", n.body, b, inner),
                ("line", f"{'    ' * inner}{target} = {dtype}({step})\n")]

    def read(self, n: Read, target: str, level: int) -> list[tuple]:
        pad = "    " * level
        places = [self.fresh("x") for _ in n.indices]
        tasks: list[tuple] = [("node", i, p, level) for i, p in zip(n.indices, places)]
        checks = [f"0 <= {p} < S{n.input}_{a}" for a, (p, i) in enumerate(zip(places, n.indices))
                  if not (isinstance(i, Var) and i.extent == Dim.atom(InputDim(n.input, a, "")))]
        at = ", ".join(places) if places else "()"
        if not checks:
            return [*tasks, ("line", f"{pad}{target} = a{n.input}[{at}]\n")]
        zero = f"a{n.input}.dtype.type(0)"
        return [*tasks, ("line", f"{pad}if {' and '.join(checks)}:\n{pad}    {target} = a{n.input}[{at}]\n"
                                 f"{pad}else:\n{pad}    bad = 1\n{pad}    {target} = {zero}\n")]


def _extreme(kind: str, dtype: np.dtype) -> str:
    """The start of a max or min: the semantics' identity."""
    if dtype.kind == "f":
        return f"np.{dtype.name}({'-' if kind == 'max' else ''}np.inf)"
    if dtype.kind == "b":
        return repr(kind == "min")
    info = np.iinfo(dtype)
    return f"np.{dtype.name}({info.min if kind == 'max' else info.max})"


_CACHE: dict[tuple, IndexKernel] = {}


def index_kernel(defn: Definition, arg_dtypes: list[Any], ranks: list[int]) -> Callable[..., np.ndarray]:
    """The kernel of ``defn`` for these argument dtypes and ranks (made once per process)."""
    key = (id(defn), tuple(np.dtype(d).name for d in arg_dtypes), tuple(ranks))
    if key not in _CACHE:
        _CACHE[key] = IndexKernel(defn, [np.dtype(d) for d in arg_dtypes], ranks)
    return _CACHE[key]


__all__ = ["IndexKernel", "index_kernel", "source"]
