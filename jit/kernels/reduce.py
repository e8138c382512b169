"""Kernel generators for the reductions (sum, prod, mean, max, min, argmax), cumsum and the
softmax family (softmax, log_softmax, softmax_cross_entropy).

Order of operations. Float sums are rounded as NumPy rounds them, so for C-contiguous input a
kernel's sum or mean is bitwise NumPy's: NumPy's reduction iterator drops size-1 axes, merges
neighbouring axes of one kind (reduced or kept), and then either folds the innermost run with
its pairwise sum (8 accumulators, blocks of 128, halves split at multiples of 8) when that run
is reduced, or adds whole rows elementwise in C order when it is kept; each result starts from
0. ``_reduce`` does the same at run time (which axes have size 1 is known only then). Other
layouts are copied to C order first, so their float sums may differ from NumPy's (which follows
memory order) by reordering: the tests allow ``rtol * sum(|x|)`` with rtol 1e-5 (float32) and
1e-12 (float64). Integer sums and products wrap in the argument's dtype (exact in any order); max,
min and argmax are exact (NaN wins; argmax gives the first maximum, or the first NaN; over several
axes, the index in their row-major flattening). A float product multiplies element by element in
the dtype, on from the accumulator, in C order, as NumPy's multiply.reduce does: bitwise NumPy's
for C-contiguous input (other layouts, copied to C order, may round differently where NumPy
follows memory order). cumsum adds each element to the previous sum in the dtype, as NumPy's
add.accumulate does: bitwise NumPy's in any layout.

The softmax family follows the reference step by step (max, shift, exp, sum along the axis in
NumPy's order, divide or log), so its only difference from NumPy is exp and log: on a buffer
(the shifted tensor for exp, the sums for log) of ``_UFUNC_MIN`` elements or more they are
NumPy's own vectorized ufuncs, called through ``numba.objmode`` (so a large softmax is bitwise
the reference's), and on smaller buffers a scalar loop calling libm, which rounds differently in
the last bits (the tests allow rtol 1e-5 for float32 and 1e-12 for float64, with an absolute
term of that size times the magnitudes involved).

Design choices, measured on the 2-core development machine (shared with other jobs, so each
number is the minimum over repeats; float32; NumPy 2.4, Numba 0.68):

- Loops read slices from index 0 (``w = g[k:k + 8]``, then ``w[0]`` ... ``w[7]``): indexing
  ``g[k + 1]`` made Numba wrap negative indices and LLVM kept the pairwise sum's 8 accumulators
  scalar (1e6 elements: 370 us; with slices 190 us; NumPy 154 us).
- Float max and min fold each tile of 64 or 256 elements into a row of accumulators with the
  branch-free, NaN-absorbing ``a if (a > b) | (a != a) else b``, an elementwise loop that LLVM
  vectorizes (1e6 elements: 80 us, NumPy 50 us); 16 scalar accumulators stayed scalar (230 us)
  and ``if v > m or v != v`` branches (1900 us). Integer folds vectorize as plain loops.
- argmax finds the maximum first, then the first block of 256 that holds it, then its place in
  the block (1e6 elements: 86 us, NumPy 67 us; comparing each element with the best so far:
  4800 us). Rows of 1000 cost 0.5 us each (NumPy 0.09 us).
- exp and log: NumPy's ufunc takes ~1 ns per float32 element, a Numba loop calling exp ~5 ns
  (these Numba wheels have no SVML) and the objmode call ~5 us, hence ``_UFUNC_MIN``. objmode
  blocks are cached with the kernel as long as they name no Python function of the module.
- Non-C-contiguous arguments are copied to C order first (a transposed 1000x1000 sum: 0.71 ms,
  NumPy 0.17 ms, which reduces in memory order without copying).
- Each kernel module is self-contained (no helper imported from elsewhere), so the source hash the
  registry names it by covers all the code it runs. Compiling one costs 1-3 s of CPU (softmax
  family ~3 s); each further layout (C, F, A) of an argument recompiles ``kernel`` (~0.4 s).

Kernel vs NumPy (the same computation written directly in NumPy), microseconds:
sum 1e6 192 vs 154; sum (1000, 1000) axis 0: 58 vs 101, axis 1: 191 vs 168; int32 sum 1e6: 44
vs 44; mean (64, 10): 0.95 vs 4.7; max 1e6: 80 vs 50; argmax (64, 10) axis 1: 2.3 vs 2.0;
softmax (64, 10): 4.0 vs 9.6; log_softmax (64, 10): 4.2 vs 11.4; softmax_cross_entropy (64, 10):
5.3 vs 23.4 (the relayish reference: 31.6); softmax (256, 1000): 287 vs 311;
softmax_cross_entropy (256, 1000): 412 vs 400.

float16 has no kernel: Numba has no float16 arrays.
"""

from __future__ import annotations

import math
from typing import Any, Callable, Iterable, Sequence

import numpy as np
from numpy.lib.array_utils import normalize_axis_index, normalize_axis_tuple

from relayish.ops.reduce import reduced_axes
from relayish.types import BaseType

from .registry import ArgType, generator, shared

HEADER = "import numpy as np\nimport numba\n\n\n"
JIT = "@numba.njit(cache=True)"
# Float division by zero gives inf or nan, as in NumPy (Numba's default raises ZeroDivisionError).
JIT_IEEE = '@numba.njit(cache=True, error_model="numpy")'
_UFUNC_MIN = 2048  # from this many elements on, exp and log run as NumPy ufuncs (see the docstring)


# --- source-text helpers shared with shape.py ---------------------------------------------------


def numpy_type(dtype: str) -> str:
    """The source text naming NumPy scalar type ``dtype``."""
    return "np.bool_" if dtype == "bool" else f"np.{dtype}"


def literal(value: Any, dtype: str) -> str:
    """Source text of the scalar ``value`` (already of ``dtype``) that reproduces it exactly."""
    if dtype == "bool":
        return repr(bool(value))
    if np.dtype(dtype).kind == "f":
        v = float(value)
        text = "np.nan" if math.isnan(v) else ("np.inf" if v > 0 else "-np.inf") if math.isinf(v) else repr(v)
    else:
        text = str(int(value))
    return f"{numpy_type(dtype)}({text})"


def check_dtypes(op: str, dtypes: Iterable[str]) -> None:
    """NotImplementedError for a dtype Numba cannot compile (float16)."""
    for dtype in dtypes:
        if dtype == "float16":
            raise NotImplementedError(f"{op}: Numba has no float16 arrays, so float16 has no kernel")


def is_float(dtype: str) -> bool:
    return np.dtype(dtype).kind == "f"


def product(terms: Sequence[str]) -> str:
    """Source of the product of ``terms`` (``1`` when there are none)."""
    return " * ".join(terms) or "1"


def shape_tuple(terms: Sequence[str]) -> str:
    """Source of a tuple of ``terms``."""
    return f"({', '.join(terms)}{',' if len(terms) == 1 else ''})"


def raising(op: str, count: int, error: Exception) -> str:
    """A kernel of ``count`` arguments raising ``error``'s class with its message: what the
    reference does for these attributes and ranks, at the time the reference would."""
    name = "np.exceptions.AxisError" if isinstance(error, np.exceptions.AxisError) else type(error).__name__
    params = ", ".join(f"a{i}" for i in range(count))
    message = str(error) if str(error).startswith(f"{op}:") else f"{op}: {error}"
    return f"{HEADER}{JIT}\ndef kernel({params}):\n    raise {name}({message!r})\n"


def static_errors(op: str) -> Callable[[Callable[..., str]], Callable[..., str]]:
    """Decorate a generator so that the ValueError or IndexError (AxisError included) it raises
    while checking attributes against ranks becomes a kernel raising it (see ``raising``)."""

    def wrap(fn: Callable[..., str]) -> Callable[..., str]:
        def generate(attrs: dict, args: Sequence[ArgType]) -> str:
            try:
                return fn(attrs, args)
            except (ValueError, IndexError) as error:
                return raising(op, len(args), error)

        generate.__doc__, generate.__name__ = fn.__doc__, fn.__name__
        return generate

    return wrap


def sizes_source(var: str, array: str, rank: int) -> str:
    """Source lines (in a kernel body) setting the int64 array ``var`` to ``array``'s shape."""
    return f"    {var} = np.empty({rank}, np.int64)\n" + "".join(
        f"    {var}[{i}] = {array}.shape[{i}]\n" for i in range(rank))


# --- folds: sum (bools: logical or), max, min ---------------------------------------------------


def combine(op: str, dtype: str, a: str, b: str) -> str:
    """Expression combining the names ``a`` (the accumulator) and ``b``. Float max and min are
    branch-free and NaN-absorbing: a NaN accumulator stays, a NaN element replaces it."""
    if op == "sum":
        return f"{a} | {b}" if dtype == "bool" else f"{a} + {b}"
    if op == "prod":
        return f"{a} * {b}"
    cmp = ">" if op == "max" else "<"
    return f"{a} if ({a} {cmp} {b}) | ({a} != {a}) else {b}" if is_float(dtype) else f"{a} if {a} {cmp} {b} else {b}"


def initial(op: str, dtype: str) -> str:
    """Source of the value a fold starts from: NumPy's identity for sum, for max and min the
    value that every element (NaN included) replaces."""
    if op in ("sum", "prod"):
        return literal(int(op == "prod"), dtype)
    if is_float(dtype):
        return literal(-np.inf if op == "max" else np.inf, dtype)
    info = np.iinfo(dtype)
    return literal(info.min if op == "max" else info.max, dtype)


def block_source(op: str, dtype: str, name: str) -> str:
    """Source of ``name(g)``: the fold of the non-empty contiguous 1-D ``g`` (the loops are
    shaped as the module docstring says, so that LLVM vectorizes them); for prod ``name(g, acc)``,
    the accumulator ``acc`` times each element in turn."""
    lanes = [f"r{k}" for k in range(8)]
    if op == "sum" and is_float(dtype):
        steps = "".join(f"            r{k} += w[{k}]\n" for k in range(8))
        body = f"""\
    # NumPy's pairwise summation (numpy/_core/src/umath/loops_utils.h.src), in its order.
    n = g.size
    if n < 8:
        res = {literal(0, dtype)}
        for i in range(n):
            res += g[i]
        return res
    if n <= 128:
        {", ".join(lanes)} = {", ".join(f"g[{k}]" for k in range(8))}
        m = n - n % 8
        for k in range(8, m, 8):
            w = g[k:k + 8]
{steps}\
        res = ((r0 + r1) + (r2 + r3)) + ((r4 + r5) + (r6 + r7))
        for i in range(m, n):
            res += g[i]
        return res
    n2 = n // 2
    n2 -= n2 % 8
    return {name}(g[:n2]) + {name}(g[n2:])
"""
    elif op == "prod":
        # NumPy's multiply.reduce (numpy/_core/src/umath/loops_arithm_fp.dispatch.c.src) multiplies on
        # from the accumulator in order: floats in the dtype; integers wrap, so in 64 bits (truncated
        # when stored) in any order.
        wide = numpy_type(dtype) if is_float(dtype) else "np.uint64" if np.dtype(dtype).kind == "u" else "np.int64"
        return f"""\
{JIT}
def {name}(g, acc):
    r = {wide}(acc)
    for i in range(g.size):
        r = r * g[i]
    return r


"""
    elif op == "sum" or not is_float(dtype):
        # Integers wrap, so any order gives NumPy's result: sums accumulate in 64 bits (truncated
        # when stored); integer max and min vectorize as they are.
        start = ("False" if dtype == "bool" else "np.uint64(0)" if np.dtype(dtype).kind == "u" else "np.int64(0)"
                 ) if op == "sum" else initial(op, dtype)
        body = f"""\
    acc = {start}
    for i in range(g.size):
        acc = {combine(op, dtype, "acc", "g[i]")}
    return acc
"""
    else:
        # Float max and min: a row of t accumulators folded elementwise with each t-element tile
        # of g (an elementwise loop, which LLVM vectorizes), then folded itself.
        body = f"""\
    n = g.size
    r = {initial(op, dtype)}
    m = 0
    if n >= 128:
        t = 256 if n >= 16384 else 64
        acc = np.full(t, r, {numpy_type(dtype)})
        m = n - n % t
        for k in range(0, m, t):
            w = g[k:k + t]
            for j in range(t):
                a = acc[j]
                v = w[j]
                acc[j] = {combine(op, dtype, "a", "v")}
        for j in range(t):
            v = acc[j]
            r = {combine(op, dtype, "r", "v")}
    for i in range(m, n):
        v = g[i]
        r = {combine(op, dtype, "r", "v")}
    return r
"""
    return f"{JIT}\ndef {name}(g):\n{body}\n\n"


def _fold_run(op: str, dtype: str, block: str, target: str, run: str, indent: str) -> str:
    """Source lines folding the contiguous ``run`` into ``target`` with ``block``: the run's fold
    combined with the target (NumPy's pairwise sum adds a run's sum), or for prod the target
    multiplied on by each element (NumPy's multiply.reduce)."""
    if op == "prod":
        return f"{indent}{target} = {block}({run}, {target})\n"
    return (f"{indent}v = {block}({run})\n{indent}a = {target}\n"
            f"{indent}{target} = {combine(op, dtype, 'a', 'v')}\n")


def engine_source(op: str, dtype: str, name: str, block: str) -> str:
    """Source of ``name(f, sizes, flags, out)``: fold the C-ordered flat ``f`` of shape ``sizes``
    into the flat, initialized ``out`` over the axes where ``flags`` is true, in NumPy's order
    (see the module docstring), folding reduced innermost runs with ``block``."""
    return f"""\
{JIT}
def {name}(f, sizes, flags, out):
    # Runs of axes as NumPy's iterator coalesces them: size-1 axes dropped, neighbours merged.
    rank = sizes.size
    rs = np.empty(rank, np.int64)
    rk = np.empty(rank, np.bool_)
    m = 0
    for i in range(rank):
        d = sizes[i]
        if d == 0:
            return
        if d != 1:
            if m > 0 and rk[m - 1] == flags[i]:
                rs[m - 1] *= d
            else:
                rs[m] = d
                rk[m] = flags[i]
                m += 1
    if m == 0:
{_fold_run(op, dtype, block, "out[0]", "f[:1]", "        ")}\
        return
    ins = np.empty(m, np.int64)
    outs = np.empty(m, np.int64)
    si = 1
    so = 1
    for k in range(m - 1, -1, -1):
        ins[k] = si
        si *= rs[k]
        if rk[k]:
            outs[k] = 0
        else:
            outs[k] = so
            so *= rs[k]
    n = rs[m - 1]
    idx = np.zeros(m, np.int64)
    ib = 0
    ob = 0
    for _ in range(si // n):
        if rk[m - 1]:
{_fold_run(op, dtype, block, "out[ob]", "f[ib:ib + n]", "            ")}\
        else:
            o = out[ob:ob + n]
            g = f[ib:ib + n]
            for j in range(n):
                a = o[j]
                b = g[j]
                o[j] = {combine(op, dtype, "a", "b")}
        k = m - 2
        while k >= 0:
            idx[k] += 1
            ib += ins[k]
            ob += outs[k]
            if idx[k] < rs[k]:
                break
            ib -= ins[k] * rs[k]
            ob -= outs[k] * rs[k]
            idx[k] = 0
            k -= 1


"""


def reduce_source(op: str, dtype: str) -> str:
    """The line importing ``_reduce(f, sizes, flags, out)`` for ``op`` over ``dtype`` from its shared
    module (with ``_block``; registry.shared)."""
    source = HEADER + block_source(op, dtype, "_block") + engine_source(op, dtype, "_reduce", "_block")
    return shared(source, f"reduce_{op}_{dtype}", ("_reduce",))


# --- sum, mean, max, min ------------------------------------------------------------------------


def _reduced_axes(op: str, axis: Any, rank: int) -> tuple[int, ...]:
    """The normalized reduced axes, with NumPy's errors (AxisError; ValueError for a repeat).

    As in NumPy's reductions, an int axis 0 or -1 of a 0-d tensor reduces nothing (mean counts
    its items with normalize_axis_index, which rejects it).
    """
    if axis is None:
        return tuple(range(rank))
    if rank == 0 and isinstance(axis, int) and axis in (0, -1) and op != "mean":
        return ()
    return normalize_axis_tuple(axis, rank)


def _reduction(op: str, attrs: dict, args: Sequence[ArgType]) -> str:
    """A fold over ``axis`` in NumPy's order; mean divides the sum as NumPy does (in float64, by
    the item count, then rounded to the dtype)."""
    (x,) = args
    check_dtypes(op, [x.dtype])
    axes = _reduced_axes(op, attrs["axis"], x.rank)
    fold = "sum" if op == "mean" else op
    kept = [f"a.shape[{i}]" for i in range(x.rank) if i not in axes]
    shape = [("1" if i in axes else f"a.shape[{i}]") for i in range(x.rank)] if attrs["keepdims"] else kept
    count = product([f"a.shape[{i}]" for i in axes])
    lines = [
        "    a = np.ascontiguousarray(x)\n",
        sizes_source("sizes", "a", x.rank),
        f"    flags = np.zeros({x.rank}, np.bool_)\n",
        *(f"    flags[{i}] = True\n" for i in axes),
    ]
    if op in ("max", "min"):
        lines.append(
            f"    if {count} == 0:\n"
            f'        raise ValueError("{op}: zero-size array to reduction operation '
            f'{"maximum" if op == "max" else "minimum"} which has no identity")\n'
        )
    lines += [
        f"    out = np.full({product(kept)}, {initial(fold, x.dtype)}, {numpy_type(x.dtype)})\n",
        "    _reduce(a.reshape(-1), sizes, flags, out)\n",
    ]
    if op == "mean":
        lines.append(
            f"    count = np.float64({count})\n"
            "    for i in range(out.size):\n"
            "        out[i] = np.float64(out[i]) / count\n"
        )
    lines.append(f"    return out.reshape({shape_tuple(shape)})\n")
    return HEADER + reduce_source(fold, x.dtype) + f"{JIT_IEEE}\ndef kernel(x):\n" + "".join(lines)


def _reduction_generator(op: str) -> Callable[[dict, Sequence[ArgType]], str]:
    @static_errors(op)
    def generate(attrs: dict, args: Sequence[ArgType]) -> str:
        return _reduction(op, attrs, args)

    return generate


for _op in ("sum", "prod", "mean", "max", "min"):
    generator(_op)(_reduction_generator(_op))


# --- argmax -------------------------------------------------------------------------------------


@generator("argmax")
@static_errors("argmax")
def argmax(attrs: dict, args: Sequence[ArgType]) -> str:
    """The int32 index of the first maximum (a NaN counts as the maximum) along axis, in the
    flattened tensor for axis None, and over several axes (or with exclude the others) in their
    row-major flattening: they are moved last (a strided view, copied to C order) and merged."""
    (x,) = args
    check_dtypes("argmax", [x.dtype])
    keepdims = attrs["keepdims"]
    if x.rank == 0 and attrs["axis"] in (0, -1) and not attrs["exclude"]:
        axes: tuple[int, ...] = ()  # as NumPy's argmax, axis 0 or -1 of a 0-d tensor
    else:
        axes = reduced_axes("argmax", attrs["axis"], attrs["exclude"], x.rank)
    better = "(v > b) | ((v != v) & (b == b))" if is_float(x.dtype) else "v > b"
    found = "(v == m) | (nan & (v != v))" if is_float(x.dtype) else "v == m"
    empty = '        raise ValueError("argmax: attempt to get argmax of an empty sequence")\n'
    # The maximum first (vectorized), then the first block of 256 holding it (a vectorized
    # any), then its place in that block: 1e6 float32 in 82 us, where a loop comparing each
    # element with the best so far took 4800 us (NumPy: 67 us).
    helper = block_source("max", x.dtype, "_peak") + f"""\
{JIT}
def _first_max(g):
    # The index of the first maximum of the non-empty g (of its first NaN if it has one).
    m = _peak(g)
    nan = m != m
    for s in range(0, g.size, 256):
        w = g[s:s + 256]
        hit = False
        for j in range(w.size):
            v = w[j]
            hit |= {found}
        if hit:
            for j in range(w.size):
                v = w[j]
                if {found}:
                    return s + j
    return 0


"""
    if len(axes) == x.rank:
        shape = ["1"] * x.rank if keepdims else []
        body = f"""\
    f = np.ascontiguousarray(x).reshape(-1)
    if f.size == 0:
{empty}\
    out = np.empty(1, np.int32)
    out[0] = _first_max(f)
    return out.reshape({shape_tuple(shape)})
"""
    elif len(axes) != 1:
        kept = [i for i in range(x.rank) if i not in axes]
        order = kept + list(axes)
        view = "x" if order == sorted(order) else (
            f"np.lib.stride_tricks.as_strided(x, shape={shape_tuple([f'x.shape[{i}]' for i in order])}, "
            f"strides={shape_tuple([f'x.strides[{i}]' for i in order])})")
        shape = [("1" if i in axes else f"x.shape[{i}]") for i in range(x.rank) if keepdims or i not in axes]
        body = f"""\
    f = np.ascontiguousarray({view}).reshape(-1)
    n = {product([f"x.shape[{i}]" for i in axes])}
    if n == 0:
{empty}\
    out = np.empty(f.size // n, np.int32)
    for o in range(out.size):
        out[o] = _first_max(f[o * n:(o + 1) * n])
    return out.reshape({shape_tuple(shape)})
"""
    else:
        axis = axes[0]
        dims = [f"a.shape[{i}]" for i in range(x.rank)]
        shape = [("1" if i == axis else d) for i, d in enumerate(dims) if keepdims or i != axis]
        body = f"""\
    a = np.ascontiguousarray(x)
    outer = {product(dims[:axis])}
    n = a.shape[{axis}]
    inner = {product(dims[axis + 1:])}
    if n == 0:
{empty}\
    f = a.reshape(-1)
    out = np.zeros(outer * inner, np.int32)
    if inner == 1:
        for o in range(outer):
            out[o] = _first_max(f[o * n:(o + 1) * n])
    else:
        best = np.empty(inner, {numpy_type(x.dtype)})
        for o in range(outer):
            g = f[o * n * inner:(o + 1) * n * inner]
            r = out[o * inner:(o + 1) * inner]
            for j in range(inner):
                best[j] = g[j]
            for i in range(1, n):
                row = g[i * inner:(i + 1) * inner]
                for j in range(inner):
                    v = row[j]
                    b = best[j]
                    take = {better}
                    best[j] = v if take else b
                    r[j] = i if take else r[j]
    return out.reshape({shape_tuple(shape)})
"""
    return HEADER + helper + f"{JIT}\ndef kernel(x):\n{body}"


# --- cumsum -------------------------------------------------------------------------------------


@generator("cumsum")
@static_errors("cumsum")
def cumsum(attrs: dict, args: Sequence[ArgType]) -> str:
    """The running sums along axis in x's dtype, each row of them the previous row plus the next
    row of x (the element before it when exclusive, whose first row is 0), as NumPy's
    add.accumulate adds them. axis None and another dtype have no kernel: cumsum's lowering turns
    them into a reshape to a vector and a cast."""
    (x,) = args
    check_dtypes("cumsum", [x.dtype])
    if attrs["axis"] is None or attrs["dtype"] not in (None, BaseType.from_numpy(np.dtype(x.dtype))):
        raise NotImplementedError("cumsum: axis None and a dtype other than the data's have no kernel (the "
                                  "operator's lowering makes them a reshape and a cast)")
    axis = normalize_axis_index(attrs["axis"], x.rank)
    dims = [f"a.shape[{i}]" for i in range(x.rank)]
    exclusive = attrs["exclusive"]
    first = literal(0, x.dtype) if exclusive else "g[j]"
    return HEADER + f"""\
{JIT}
def kernel(x):
    a = np.ascontiguousarray(x)
    f = a.reshape(-1)
    outer = {product(dims[:axis])}
    n = a.shape[{axis}]
    inner = {product(dims[axis + 1:])}
    out = np.empty(f.size, {numpy_type(x.dtype)})
    for o in range(outer):
        g = f[o * n * inner:(o + 1) * n * inner]
        d = out[o * n * inner:(o + 1) * n * inner]
        if n:
            for j in range(inner):
                d[j] = {first}
        for i in range(1, n):
            prev = d[(i - 1) * inner:i * inner]
            row = d[i * inner:(i + 1) * inner]
            add = g[(i - {int(exclusive)}) * inner:(i - {int(exclusive)} + 1) * inner]
            for j in range(inner):
                row[j] = prev[j] + add[j]
    return out.reshape({shape_tuple(dims)})
"""


# --- softmax, log_softmax, softmax_cross_entropy ------------------------------------------------


def _softmax_helpers(dtype: str, along: str = "") -> str:
    """The steps the softmax family shares, each over a C-ordered flat tensor viewed as (outer, n,
    inner) with the softmax axis in the middle: the line importing them from their shared module
    (registry.shared); with ``along`` an operator (``/`` or ``-``), also the source of ``_along(e,
    total, outer, n, inner)``: e = e along total, in place."""
    t = numpy_type(dtype)
    # The ufunc call cannot sit in np.errstate (Numba lifts no nested with-block) but raises no
    # warning either: exp gets x - max <= 0 (or NaN), log sums >= 1 (or NaN).
    ufuncs = "".join(f"""\
{JIT}
def _{fn}(buf):
    # buf = {fn}(buf) in place: NumPy's vectorized ufunc on large buffers, a scalar loop on small.
    if buf.size >= {_UFUNC_MIN}:
        with numba.objmode():
            np.{fn}(buf, out=buf)
    else:
        for i in range(buf.size):
            buf[i] = np.{fn}(buf[i])


""" for fn in ("exp", "log"))
    apply = f"""\
{JIT}
def _along(e, total, outer, n, inner):
    for o in range(outer):
        g = e[o * n * inner:(o + 1) * n * inner]
        if inner == 1:
            c = total[o]
            for i in range(n):
                g[i] = g[i] {along} c
        else:
            c = total[o * inner:(o + 1) * inner]
            for i in range(n):
                row = g[i * inner:(i + 1) * inner]
                for j in range(inner):
                    row[j] = row[j] {along} c[j]


""" if along else ""
    common = HEADER + block_source("sum", dtype, "_pairwise") + block_source("max", dtype, "_peak") + ufuncs + f"""\
{JIT}
def _shifted(f, outer, n, inner):
    # (f - max along the axis, that max); a NaN is the max.
    peak = np.empty(outer * inner, {t})
    s = np.empty(f.size, {t})
    for o in range(outer):
        g = f[o * n * inner:(o + 1) * n * inner]
        d = s[o * n * inner:(o + 1) * n * inner]
        if inner == 1:
            m = _peak(g)
            peak[o] = m
            for i in range(n):
                d[i] = g[i] - m
            continue
        p = peak[o * inner:(o + 1) * inner]
        for j in range(inner):
            p[j] = g[j]
        for i in range(1, n):
            row = g[i * inner:(i + 1) * inner]
            for j in range(inner):
                a = p[j]
                b = row[j]
                p[j] = {combine("max", dtype, "a", "b")}
        for i in range(n):
            row = g[i * inner:(i + 1) * inner]
            srow = d[i * inner:(i + 1) * inner]
            for j in range(inner):
                srow[j] = row[j] - p[j]
    return s, peak


{JIT}
def _axis_sums(e, outer, n, inner):
    # np.sum(e, axis) in NumPy's order: 0 + the pairwise sum of a contiguous row (inner == 1),
    # else 0 + the rows added elementwise one after another.
    out = np.zeros(outer * inner, {t})
    for o in range(outer):
        g = e[o * n * inner:(o + 1) * n * inner]
        if inner == 1:
            out[o] += _pairwise(g)
        else:
            r = out[o * inner:(o + 1) * inner]
            for i in range(n):
                row = g[i * inner:(i + 1) * inner]
                for j in range(inner):
                    r[j] += row[j]
    return out


"""
    names = ("_pairwise", "_exp", "_log", "_shifted", "_axis_sums")
    return shared(common, f"softmax_{dtype}", names) + "\n\n" + apply


def _softmax_preamble(op: str, rank: int, axis: int, x: str) -> str:
    """Kernel lines: ``a`` the C-ordered ``x``, ``f`` flat, ``outer, n, inner`` around the axis;
    the reference's max raises ValueError on an empty axis."""
    dims = [f"{x}.shape[{i}]" for i in range(rank)]
    return f"""\
    a = np.ascontiguousarray({x})
    f = a.reshape(-1)
    outer = {product(dims[:axis])}
    n = {dims[axis] if rank else "1"}
    inner = {product(dims[axis + 1:])}
    if n == 0:
        raise ValueError("{op}: zero-size array to reduction operation maximum which has no identity")
"""


def _x_shape(rank: int) -> str:
    """Source of x's shape as a tuple (``np.ascontiguousarray`` makes a 0-d array 1-d)."""
    return shape_tuple([f"x.shape[{i}]" for i in range(rank)])


def _softmax_axis(attrs: dict, rank: int) -> int:
    """The normalized axis; a 0-d tensor takes axis 0 or -1 (as NumPy's max does) as axis 0."""
    axis = attrs["axis"]
    return 0 if rank == 0 and axis in (0, -1) else normalize_axis_index(axis, rank)


@generator("softmax")
@static_errors("softmax")
def softmax(attrs: dict, args: Sequence[ArgType]) -> str:
    """exp(x - max) / sum(exp(x - max)) along axis, step by step as the reference computes it."""
    (x,) = args
    check_dtypes("softmax", [x.dtype])
    axis = _softmax_axis(attrs, x.rank)
    return HEADER + _softmax_helpers(x.dtype, "/") + f"{JIT_IEEE}\ndef kernel(x):\n" + _softmax_preamble(
        "softmax", x.rank, axis, "x") + f"""\
    e, peak = _shifted(f, outer, n, inner)
    _exp(e)
    total = _axis_sums(e, outer, n, inner)
    _along(e, total, outer, n, inner)
    return e.reshape({_x_shape(x.rank)})
"""


@generator("log_softmax")
@static_errors("log_softmax")
def log_softmax(attrs: dict, args: Sequence[ArgType]) -> str:
    """(x - max) - log(sum(exp(x - max))) along axis, step by step as the reference computes it."""
    (x,) = args
    check_dtypes("log_softmax", [x.dtype])
    axis = _softmax_axis(attrs, x.rank)
    return HEADER + _softmax_helpers(x.dtype, "-") + f"{JIT_IEEE}\ndef kernel(x):\n" + _softmax_preamble(
        "log_softmax", x.rank, axis, "x") + f"""\
    s, peak = _shifted(f, outer, n, inner)
    e = s.copy()
    _exp(e)
    total = _axis_sums(e, outer, n, inner)
    _log(total)
    _along(s, total, outer, n, inner)
    return s.reshape({_x_shape(x.rank)})
"""


@generator("softmax_cross_entropy")
@static_errors("softmax_cross_entropy")
def softmax_cross_entropy(attrs: dict, args: Sequence[ArgType]) -> str:
    """The mean over the positions off the axis of ``log(sum(exp(s))) - sum(y * s) + m * (1 -
    sum(y))`` with ``s = z - m`` and m the max along the axis, as the reference computes it."""
    z, y = args
    check_dtypes("softmax_cross_entropy", [z.dtype, y.dtype])
    axis = _softmax_axis(attrs, z.rank)
    t = numpy_type(z.dtype)
    return HEADER + _softmax_helpers(z.dtype) + f"{JIT_IEEE}\ndef kernel(z, y):\n" + """\
    if z.shape != y.shape:
        raise ValueError("softmax_cross_entropy: logits and labels differ in shape")
    labels = np.ascontiguousarray(y).reshape(-1)
""" + _softmax_preamble("softmax_cross_entropy", z.rank, axis, "z") + f"""\
    s, peak = _shifted(f, outer, n, inner)
    e = s.copy()
    _exp(e)
    log_sum = _axis_sums(e, outer, n, inner)
    _log(log_sum)
    mass = _axis_sums(labels, outer, n, inner)
    for q in range(s.size):
        e[q] = labels[q] * s[q]
    ys = _axis_sums(e, outer, n, inner)
    loss = np.empty(outer * inner, {t})
    for p in range(loss.size):
        loss[p] = (log_sum[p] - ys[p]) + peak[p] * ({t}(1) - mass[p])
    out = np.zeros(1, {t})
    if loss.size:
        out[0] += _pairwise(loss)
    out[0] = np.float64(out[0]) / np.float64(loss.size)
    return out.reshape(())
"""
