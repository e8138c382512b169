"""CPU kernels of index-expression operators (relayish/ix), generated from their definitions.

A definition ``out[I] = body(I)`` becomes a loop nest over the output's indices with the body
written out as statements: each reduction is a loop (its float sum adds with ``_lane_add``, so
LLVM may add in vector lanes, jit/kernels/vectorize.py), a ``where`` an ``if`` that evaluates only
the branch it chooses. Reads are checked once per call where that is exact (an index variable
alone; outside a ``where``, an affine index, whose range over its variables' box is computed from
the sizes) and otherwise where they happen. A read outside its input sets a flag instead
of touching memory; the operator's NumPy semantics then run on the same arguments and raise
their error, which names the input and the output element. Values are converted to each node's
dtype as the semantics convert them (relayish/ix/relation.py), so the kernel computes what they
compute, with the reductions' additions in another order.

The outermost output index is split into chunks run on every core (jit/threads.py) when the
output is large enough: gathers never write one element twice. A float sum of a product whose
factors split the output's indices runs as matrix products instead (jit/kernels/contraction.py).
An adjoint (a sum of scatters) runs serially over each scatter's grid, adding in float64 and
skipping positions outside its result, as the semantics do; one that scatters at distinct index
variables alone runs as the definition gathering the same sums (``gathered``). Where a gradient
adds an adjoint into what it accumulated, the JIT calls ``IndexKernel.accumulate``, which adds
the scatters into that array in place (jit/lower.py, ``scatter_addend``).

The statements are written by ``Writer`` in a ``Dialect``: this module's is the CPU's; the CUDA
kernels (jit/cuda/index_expr.py) write the same statements in theirs.

A kernel is generated per definition and argument dtypes and ranks; the registry caches it by
its source, in memory and on disk.
"""

from __future__ import annotations

from typing import Any, Callable

import attrs
import numpy as np

from relayish.dims import UNKNOWN, Dim, FloorDiv, dim_source
from relayish.ix.language import (
    COMPARISONS, Bin, Cast, Definition, Lit, Node, Read, Reduce, Size, Unary, Var, Where, children, free_variables, post_order,
)  # fmt: skip
from relayish.ix.relation import DType, _combine, dtypes, output_dtype, realized
from relayish.ix.semantics import evaluate

from .contraction import contraction, contraction_source
from .elementwise import _HEADER
from .registry import kernel_from_source
from .vectorize import SOURCE as VECTORIZE

# what a kernel returns besides its result: 0; 1 when a check before the loops failed (nothing was
# written); WRITTEN when a read in the loops was outside its input (the call runs the semantics instead)
WRITTEN = 2
JIT = '@numba.njit(cache=True, nogil=True, error_model="numpy")\n'
_FUNCTIONS = {"exp": "np.exp", "log": "np.log", "tanh": "np.tanh", "sqrt": "np.sqrt", "abs": "np.abs",
              "sin": "np.sin", "cos": "np.cos"}


class IndexKernel:
    """The compiled operator for arguments of given dtypes and ranks: ``kernel(*arrays) -> array``."""

    def __init__(self, defn: Definition, arg_dtypes: list[np.dtype], ranks: list[int]):
        self.defn = defn
        self.run = kernel_from_source("ix", source(defn, arg_dtypes, ranks))
        gather = gathered(defn, arg_dtypes)
        self.gather = None if gather is None else IndexKernel(gather, arg_dtypes, ranks)

    def __call__(self, *arrays: np.ndarray) -> np.ndarray:
        if self.gather is not None:
            out = self.gather(*arrays)
            if out.shape == arrays[self.defn.target].shape:  # else sizes a ``?`` hid disagree: the scatters
                return out
        out, bad = self.run(*arrays)
        if bad:  # a read outside an input, or sizes a ``?`` hid from the checker: the semantics say what
            return evaluate(self.defn, *arrays)
        return out

    def accumulate(self, data: np.ndarray, *arrays: np.ndarray) -> np.ndarray:
        """``data + self(*arrays)`` for an adjoint, its scatters added into ``data`` (C-contiguous, owned
        by the caller) in place where it has the target's shape and dtype: work of the scatters'
        grids, not of the target's size (a loop reading one element per step stays linear)."""
        target = arrays[self.defn.target]
        if data.shape != target.shape or data.dtype != target.dtype:
            return np.add(data, self(*arrays))
        if self.gather is not None:
            return np.add(data, self(*arrays), out=data)  # the grid covers the target: a dense sum costs no more
        bad = self.run.__globals__["_scatter"](*arrays, data)  # the module of an adjoint's kernel
        if not bad:
            return data
        if bad == WRITTEN:  # a read outside an input after some additions: the semantics raise
            evaluate(self.defn, *arrays)
            raise AssertionError(f"@{self.defn.name}: a kernel read outside an input that its semantics do not read")
        return np.add(data, self(*arrays))  # a check before the loops failed: nothing was added

    def added(self, data: np.ndarray, *arrays: np.ndarray) -> np.ndarray:
        """``accumulate`` into a copy of ``data`` (which others share): the same values."""
        return self.accumulate(np.array(data, order="C"), *arrays)


def source(defn: Definition, arg_dtypes: list[np.dtype], ranks: list[int]) -> str:
    """The kernel module of ``defn`` for arguments of ``arg_dtypes`` and ``ranks``."""
    writer = Writer(dtypes(defn, arg_dtypes), defn, arg_dtypes)
    params = ", ".join(f"a{k}" for k in range(len(arg_dtypes)))
    sizes = "".join(f"    S{k}_{a} = a{k}.shape[{a}]\n" for k, rank in enumerate(ranks) for a in range(rank))
    head = f"{_HEADER}from jit import threads\n{VECTORIZE}\n\n{JIT}"
    if defn.target is not None:
        loops = _scatters(writer)
        return head + f"def _scatter({params}, out):\n{sizes}{_checks(writer)}    bad = 0\n{loops}    return bad\n\n\n" \
            f"def kernel({params}):\n    out = np.zeros(a{defn.target}.shape, np.float64)\n" \
            f"    bad = _scatter({params}, out)\n    return out.astype(a{defn.target}.dtype), bad\n"
    out_dtype = output_dtype(defn, writer.found[id(defn.body)])
    plan = contraction(defn, writer.found, out_dtype)
    if plan is not None:
        return _HEADER + contraction_source(writer, plan, out_dtype, params, sizes, JIT)
    shape = [writer.dim(v.extent) for v in defn.indices]
    loops = _gather(writer, out_dtype)
    run = (f"    bounds = threads.chunk_bounds(out.shape[0], {' * '.join(shape[1:]) or '1'} * {writer.reduction_steps()})\n"
           f"    if bounds is None:\n        return out, _part({params}, out, 0, out.shape[0])\n"
           f"    return out, max(threads.run_chunks(_part, ({params}, out), bounds))\n"
           if shape else f"    return out, _part({params}, out, 0, 1)\n")
    return head + f"def _part({params}, out, lo, hi):\n{sizes}{_checks(writer)}    bad = 0\n{loops}    return bad\n\n\n" \
        f"def kernel({params}):\n{sizes}    out = np.empty(({''.join(f'{d}, ' for d in shape)}), np.{out_dtype.name})\n{run}"


def gathered(defn: Definition, arg_dtypes: list[np.dtype]) -> Definition | None:
    """An adjoint whose one scatter adds at distinct index variables alone (matmul's
    ``dA[i, k] += g[i, j] * B[k, j]`` over (i, j, k); a convolution's weight gradient), as the
    definition that gathers the same sums (``dA[i, k] = sum_j g[i, j] * B[k, j]``), in the target's
    dtype: its kernel runs in parallel, or as a matrix product. None for any other definition.
    The gathered result has the target's shape wherever the sizes agree, as the checker makes them."""
    if defn.target is None or len(defn.scatters) != 1:
        return None
    part = defn.scatters[0]
    places = part.targets
    space = {id(v) for v in part.space}
    if not all(isinstance(t, Var) and id(t) in space for t in places) or len({id(t) for t in places}) != len(places):
        return None
    rest = tuple(v for v in part.space if all(v is not t for t in places))
    body = Reduce("sum", rest, part.value) if rest else part.value
    return Definition(f"{defn.name}_gathered", defn.inputs, defn.ranks, defn.shape_axes, places, body,  # type: ignore[arg-type]
                      np.dtype(arg_dtypes[defn.target]).name, defn.where)


def kernel_plan(defn: Definition, arg_dtypes: list[np.dtype]) -> str:
    """How the CPU kernel of ``defn`` computes, in words (``explain()``)."""
    gather = gathered(defn, arg_dtypes)
    if gather is not None:
        return f"the adjoint of input {defn.target}, gathered: {kernel_plan(gather, arg_dtypes)}"
    if defn.target is not None:
        return (f"the adjoint of input {defn.target}: {len(defn.scatters)} scatter(s), serial, adding in float64 "
                "(into the gradient in place where the program adds it to one)")
    found = dtypes(defn, arg_dtypes)
    out_dtype = output_dtype(defn, found[id(defn.body)])
    plan = contraction(defn, found, out_dtype)
    if plan is not None:
        each = f" per position of ({', '.join(v.name for v in plan.outer)})" if plan.outer else ""
        return f"a matrix product{each} (BLAS gemm), summing over ({', '.join(v.name for v in plan.inner)})"
    rows = "rows split over the cores when large"
    if _sums_rows(defn, found, out_dtype):
        return f"loops over the output, its last index innermost inside the sum; {rows}"
    return f"loops over the output{', the reductions inside' if any(isinstance(n, Reduce) for n in post_order(defn.body)) else ''}; {rows}"


def checks_source(writer: Writer, params: str, sizes: str) -> str:
    """A host function ``checks(*arrays)``: whether the conditions checked once per call hold."""
    return f"def checks({params}):\n{sizes}    return {' and '.join(dict.fromkeys(writer.checks)) or 'True'}\n"


def _checks(writer: Writer) -> str:
    """The conditions checked once per call: when one fails, the call runs the semantics instead."""
    checks = list(dict.fromkeys(writer.checks))
    return f"    if not ({' and '.join(checks)}):\n        return 1\n" if checks else ""


def _gather(writer: Writer, out_dtype: np.dtype) -> str:
    """The loops of a definition over rows ``lo .. hi`` of its output. A body that is a sum whose
    dtype is the output's runs the output's last index innermost, inside the summed axes, adding
    into the output (``out[i, j] += A[i, k] * B[k, j]``): the same additions in the same order
    per element, and an inner loop over contiguous elements that LLVM vectorizes (``_sum_rows``)."""
    defn, lines = writer.defn, []
    body, indices = defn.body, list(defn.indices)
    names = [writer.name(v) for v in indices]
    loops = [(n, writer.dim(v.extent)) for n, v in zip(names, indices)]
    if loops:
        loops[0] = (names[0], "lo, hi")
    at = ", ".join(names) if names else "()"
    cast = _cast(out_dtype)
    if _sums_rows(defn, writer.found, out_dtype):
        return _sum_rows(writer, body, loops, at, cast)
    depth = writer.loops(lines, 1, loops)
    value = writer.expression(lines, depth, body)
    lines.append(f"{'    ' * depth}out[{at}] = {cast}({value})\n")
    return "".join(lines)


def _sums_rows(defn: Definition, found: dict[int, DType], out_dtype: np.dtype) -> bool:
    """Whether the loops run the output's last index innermost, inside the summed axes (``_sum_rows``):
    a body that is a sum in the output's dtype."""
    body = defn.body
    return bool(defn.indices) and isinstance(body, Reduce) and body.kind == "sum" and realized(found[id(body)]) == out_dtype


UNROLL = 4  # steps of the last summed axis per pass over an output row


def _sum_rows(writer: Writer, body: Reduce, loops: list[tuple[str, str]], at: str, cast: str) -> str:
    """The loops of a sum body, the output's last index innermost. The parts of the summed
    expression that do not depend on that index (``A[i, k]``) are computed before its loop, and
    the last summed axis takes ``UNROLL`` steps per pass, so that each pass loads and stores the
    row of the output once for several products (the additions stay in order)."""
    writer.reductions.append(body)
    lines: list[str] = []
    depth = writer.loops(lines, 1, loops[:-1])
    last = loops[-1]
    lines.append(f"{'    ' * depth}for {last[0]} in range({last[1]}):\n{'    ' * (depth + 1)}out[{at}] = {cast}(0)\n")
    *outer_axes, axis = body.axes
    depth = writer.loops(lines, depth, [(writer.name(v), writer.dim(v.extent)) for v in outer_axes])
    outside = {id(v) for v in (*writer.defn.indices[:-1], *body.axes)}
    k, extent = writer.name(axis), writer.dim(axis.extent)
    pad = "    " * depth
    base = writer.fresh("q")
    split = f"{extent} - {extent} % {UNROLL}"
    for start, stop, step in (("0", split, UNROLL), (split, extent, 1)):
        lines.append(f"{pad}for {base} in range({start}, {stop}, {step}):\n")
        before, inner, total = [], [], writer.fresh("t")
        inner.append(f"{pad}        {total} = out[{at}]\n")
        for u in range(step):
            writer.names[id(axis)] = f"{k}_{u}"
            before.append(f"{pad}    {k}_{u} = {base} + {u}\n")
            value = writer.expression(inner, depth + 2, body.body, writer.hoisted(before, depth + 1, body.body, outside))
            inner.append(f"{pad}        {total} = {cast}({total} + {cast}({value}))\n")
        lines += [*before, f"{pad}    for {last[0]} in range({last[1]}):\n", *inner, f"{pad}        out[{at}] = {total}\n"]
    writer.names[id(axis)] = k
    return "".join(lines)


def _scatters(writer: Writer) -> str:
    """The loops adding an adjoint's scatters into ``out``, skipping positions outside it (their
    values are not computed: the semantics do not read them either)."""
    lines: list[str] = []
    target = writer.defn.target
    for part in writer.defn.scatters:
        depth = writer.loops(lines, 1, [(writer.name(v), writer.dim(v.extent)) for v in part.space])
        places = [writer.expression(lines, depth, t) for t in part.targets]
        pad = "    " * depth
        inside = " and ".join(f"0 <= {p} < S{target}_{a}" for a, p in enumerate(places)) or "True"
        lines.append(f"{pad}if {inside}:\n")
        value = writer.expression(lines, depth + 1, part.value)
        lines.append(f"{pad}    out[{', '.join(places) or '()'}] += np.float64({value})\n")
    return "".join(lines)


def _cast(dtype: np.dtype) -> str:
    return f"np.{np.dtype(dtype).name}"


class Dialect:
    """How the CPU kernels write the operations whose source differs between targets
    (the CUDA kernels' dialect: jit/cuda/index_expr.py)."""

    def binary(self, op: str, x: str, y: str, dtype: str) -> str:
        return f"np.{op}({x}, {y})" if op in ("maximum", "minimum") else f"{x} {op} {y}"

    def function(self, op: str, x: str, dtype: str) -> str:
        if op == "sigmoid":
            return f"{dtype}(1) / ({dtype}(1) + np.exp(-{x}))"
        return f"{_FUNCTIONS[op]}({x})"

    def sum_step(self, total: str, x: str, dtype: str) -> str:
        """One addition of a sum's loop: floats in vector lanes (jit/kernels/vectorize.py)."""
        return f"_lane_add({total}, {x})" if "float" in dtype else f"{total} + {x}"


class Writer:
    """Statements computing expressions, written iteratively into ``lines`` at a given depth."""

    def __init__(self, found: dict[int, DType], defn: Definition, arg_dtypes: list[np.dtype], dialect: Dialect = Dialect()):
        self.found, self.defn, self.arg_dtypes, self.dialect = found, defn, arg_dtypes, dialect
        self.names: dict[int, str] = {}
        self.count = 0
        self.reductions: list[Reduce] = []
        self.checks: list[str] = []  # conditions checked once per call, before the loops
        self.bound: dict[int, str] = {}  # nodes computed before, by the expression being written

    def fresh(self, prefix: str) -> str:
        self.count += 1
        return f"{prefix}{self.count}"

    def name(self, v: Var) -> str:
        if id(v) not in self.names:
            self.names[id(v)] = self.fresh("i" if not v.reduction else "r")
        return self.names[id(v)]

    def dim(self, d: Dim) -> str:
        return dim_source(d, lambda atom: f"S{atom.input}_{atom.axis}")  # type: ignore[return-value]

    def loops(self, lines: list[str], depth: int, loops: list[tuple[str, str]]) -> int:
        for var, bound in loops:
            lines.append(f"{'    ' * depth}for {var} in range({bound}):\n")
            depth += 1
        return depth

    def reduction_steps(self) -> str:
        return " * ".join(self.dim(v.extent) for r in dict.fromkeys(self.reductions) for v in r.axes) or "1"

    def expression(self, lines: list[str], depth: int, root: Node, bound: dict[int, str] | None = None) -> str:
        """Append the statements computing ``root`` at ``depth``; the name holding its value. Nodes
        in ``bound`` were computed before, into the names it gives."""
        self.bound = bound or {}
        result = self.fresh("v")
        tasks: list[tuple] = [("node", root, result, depth, False)]
        while tasks:
            task = tasks.pop()
            if task[0] == "line":
                lines.append(task[1])
                continue
            _, n, target, level, guarded = task
            tasks.extend(reversed([t if t[0] == "line" or len(t) == 5 else (*t, guarded)
                                   for t in self.node(n, target, level, guarded)]))
        return result

    def hoisted(self, lines: list[str], depth: int, root: Node, outside: set[int]) -> dict[int, str]:
        """Compute at ``depth`` the largest parts of ``root`` whose index variables are all in
        ``outside`` (not inside a ``where``'s branch, which may not be evaluated); their names."""
        free = free_variables(root)
        bound: dict[int, str] = {}
        stack = [root]
        while stack:
            n = stack.pop()
            if id(n) in bound or isinstance(n, (Var, Lit, Size)):
                continue
            if free[id(n)] <= outside:
                bound[id(n)] = self.expression(lines, depth, n, bound)
            else:
                stack.extend([n.cond] if isinstance(n, Where) else children(n))
        return bound

    def node(self, n: Node, target: str, level: int, guarded: bool) -> list[tuple]:
        """The tasks computing ``n`` into ``target``: lines, and nodes written before them (inside a
        ``where``'s branch when ``guarded``)."""
        pad = "    " * level
        dtype = _cast(realized(self.found[id(n)]))
        if id(n) in self.bound:
            return [("line", f"{pad}{target} = {self.bound[id(n)]}\n")]
        if isinstance(n, Var):
            return [("line", f"{pad}{target} = {self.name(n)}\n")]
        if isinstance(n, Lit):
            return [("line", f"{pad}{target} = {dtype}({n.value!r})\n")]
        if isinstance(n, Size):
            return [("line", f"{pad}{target} = {dtype}({self.dim(n.dim)})\n")]
        if isinstance(n, Read):
            return self.read(n, target, level, guarded)
        if isinstance(n, Bin):
            a, b = self.fresh("v"), self.fresh("v")
            common = _cast(realized(_combine(self.found[id(n.a)], self.found[id(n.b)]))) if n.op in COMPARISONS else dtype
            expr = self.dialect.binary(n.op, f"{common}({a})", f"{common}({b})", common)
            return [("node", n.a, a, level), ("node", n.b, b, level), ("line", f"{pad}{target} = {dtype}({expr})\n")]
        if isinstance(n, Unary):
            a = self.fresh("v")
            x = f"{dtype}({a})"
            expr = {"-": f"-{x}", "~": f"not {x}" if dtype == "np.bool_" else f"~{x}"}.get(n.op) \
                or self.dialect.function(n.op, x, dtype)
            return [("node", n.a, a, level), ("line", f"{pad}{target} = {dtype}({expr})\n")]
        if isinstance(n, Where):
            c = self.fresh("v")
            return [("node", n.cond, c, level), ("line", f"{pad}if {c}:\n"), ("node", n.a, target, level + 1, True),
                    ("line", f"{pad}    {target} = {dtype}({target})\n{pad}else:\n"), ("node", n.b, target, level + 1, True),
                    ("line", f"{pad}    {target} = {dtype}({target})\n")]
        if isinstance(n, Cast):
            a = self.fresh("v")
            return [("node", n.a, a, level), ("line", f"{pad}{target} = {dtype}({a})\n")]
        assert isinstance(n, Reduce)
        self.reductions.append(n)
        b = self.fresh("v")
        start = {"sum": f"{dtype}(0)", "prod": f"{dtype}(1)"}.get(n.kind) or _extreme(n.kind, realized(self.found[id(n)]))
        inner = level + len(n.axes)
        if n.kind in ("max", "min"):
            step = self.dialect.binary("maximum" if n.kind == "max" else "minimum", target, b, dtype)
        else:
            step = self.dialect.sum_step(target, f"{dtype}({b})", dtype) if n.kind == "sum" else f"{target} * {dtype}({b})"
        heads = [("line", f"{'    ' * (level + k)}for {self.name(v)} in range({self.dim(v.extent)}):\n")
                 for k, v in enumerate(n.axes)]
        return [("line", f"{pad}{target} = {start}\n"), *heads, ("node", n.body, b, inner),
                ("line", f"{'    ' * inner}{target} = {dtype}({step})\n")]

    def read(self, n: Read, target: str, level: int, guarded: bool) -> list[tuple]:
        """A read; its indices checked where it happens, or once per call (``checks``): an index
        variable alone, and outside a ``where`` an affine index, whose range over its variables' box
        is exact, so that a call whose range leaves the input has a read outside it."""
        pad = "    " * level
        places = [self.fresh("x") for _ in n.indices]
        tasks: list[tuple] = [("node", i, p, level) for i, p in zip(n.indices, places)]
        checks = []
        for a, (p, i) in enumerate(zip(places, n.indices)):
            size = f"S{n.input}_{a}"
            once = self.range_check(i, size) if isinstance(i, Var) or not guarded else None
            if once is None:
                checks.append(f"0 <= {p} < {size}")
            else:
                self.checks.append(once)
        at = ", ".join(places) if places else "()"
        if not checks:
            return [*tasks, ("line", f"{pad}{target} = a{n.input}[{at}]\n")]
        zero = f"{_cast(self.arg_dtypes[n.input])}(0)"
        return [*tasks, ("line", f"{pad}if {' and '.join(checks)}:\n{pad}    {target} = a{n.input}[{at}]\n"
                                 f"{pad}else:\n{pad}    bad = {WRITTEN}\n{pad}    {target} = {zero}\n")]

    def range_check(self, index: Node, size: str) -> str | None:
        """Code saying that affine ``index`` stays in ``0 .. size - 1`` over its variables' ranges
        (or one of them is empty: no read); None for an index that is not affine."""
        poly = _affine(index)
        if poly is None:
            return None
        low, high, empty = [], [], []
        for mono, coeff in poly.terms.items():
            variables = [a for a, _ in mono if isinstance(a, _Index)]
            factor = self.dim(Dim({frozenset((a, k) for a, k in mono if not isinstance(a, _Index)): coeff}))
            if not variables:
                low.append(factor)
                high.append(factor)
                continue
            span = f"{factor} * ({self.dim(variables[0].var.extent)} - 1)"
            empty.append(f"{self.dim(variables[0].var.extent)} == 0")
            (high if coeff > 0 else low).append(span)
        bounds = f"0 <= {' + '.join(low) or '0'} and {' + '.join(high) or '0'} < {size}"
        return f"({' or '.join([*empty, f'({bounds})'])})"


@attrs.frozen
class _Index:
    """An index variable as the atom of an affine index's polynomial (variables compare by identity)."""

    var: Var = attrs.field(eq=False)
    key: int


def _affine(index: Node) -> Dim | None:
    """``index`` as a polynomial in index variables (each monomial of degree at most one in them,
    with a constant or input-size coefficient), or None."""
    found: dict[int, Dim | None] = {}
    for n in post_order(index):
        if isinstance(n, Var):
            found[id(n)] = Dim.atom(_Index(n, id(n)))
        elif isinstance(n, Lit):
            found[id(n)] = Dim.const(n.value) if type(n.value) is int else None
        elif isinstance(n, Size):
            found[id(n)] = n.dim
        elif isinstance(n, Unary) and n.op == "-" and found[id(n.a)] is not None:
            found[id(n)] = -found[id(n.a)]  # type: ignore[operator]
        elif isinstance(n, Bin) and n.op in "+-*" and None not in (found[id(n.a)], found[id(n.b)]):
            a, b = found[id(n.a)], found[id(n.b)]
            found[id(n)] = a + b if n.op == "+" else a - b if n.op == "-" else a * b  # type: ignore[operator]
        else:
            found[id(n)] = None
    poly = found[id(index)]
    if poly is None or any(isinstance(a, FloorDiv) or a is UNKNOWN for a in poly.atoms()):
        return None
    for mono in poly.terms:
        if sum(k for a, k in mono if isinstance(a, _Index)) > 1:
            return None
    return poly


def _extreme(kind: str, dtype: np.dtype) -> str:
    """The start of a max or min: the semantics' identity."""
    if dtype.kind == "f":
        return f"np.{dtype.name}({'-' if kind == 'max' else ''}np.inf)"
    if dtype.kind == "b":
        return repr(kind == "min")
    info = np.iinfo(dtype)
    return f"np.{dtype.name}({info.min if kind == 'max' else info.max})"


def made_once(make: Callable[[Definition, list[np.dtype], list[int]], Any]) -> Callable[..., Any]:
    """``make(defn, arg_dtypes, ranks)`` called once per definition (by identity: the cache keeps it
    alive, so its id is never reused), argument dtypes and ranks in this process."""
    cache: dict[tuple, Any] = {}

    def kernel(defn: Definition, arg_dtypes: list[Any], ranks: list[int]) -> Any:
        """The kernel of ``defn`` for these argument dtypes and ranks."""
        key = (defn, tuple(np.dtype(d).name for d in arg_dtypes), tuple(ranks))
        if key not in cache:
            cache[key] = make(defn, [np.dtype(d) for d in arg_dtypes], ranks)
        return cache[key]

    return kernel


index_kernel = made_once(IndexKernel)


__all__ = ["IndexKernel", "index_kernel", "kernel_plan", "made_once", "source"]
