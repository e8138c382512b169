"""CUDA kernels of the linear-algebra, convolution and pooling operators and of their gradient operators.

Every kernel is one thread per output element (``launch.py``); the attributes (strides, padding,
dilation, pool sizes, slice bounds, axes) are literals of the source, the sizes are read from the
arrays. Scatter-style gradients are written as gathers, so no thread writes another's element and
no atomics are needed: the thread of an input-gradient element visits the window taps that read
it, in the order the reference adds them (tap-major, ``_readers``).

Semantics and tolerances (against ``relayish.ops.get_op(name)``):

- Products (matmul, dense, conv2d, conv2d_backward_input, conv2d_backward_weight) loop over the
  contracted dimension per output element. Floats accumulate in float64 and are rounded once on the
  store, so they differ from the reference's BLAS / tensordot order by at most ``rtol * (the same
  operator on the arguments' absolute values)``, rtol 1e-5 for float32 and 1e-12 for float64;
  NaN and infinities come out where IEEE arithmetic puts them (conv2d and conv2d_backward_weight
  read the zero padding as zeros, so ``0 * inf`` is NaN there, as in the reference). The reference
  agrees except where NumPy's BLAS dot has an operand of one element: it calls axpy, which skips the
  products when that element is 0, so ``0 * NaN`` is 0 there (conv2d and its gradients, through
  tensordot). Integers accumulate in int64 / uint64 and the store truncates: exact, wrapping as NumPy does.
- avg_pool2d sums each window in float64 and divides once: the same tolerances (of the mean of the
  window's absolute values). A window wholly in the padding without ``count_include_pad`` is NaN.
- Exact (bit for bit up to the sign of a zero): max_pool2d (NaN wins), max_pool2d_gather,
  max_pool2d_backward (each window's g goes to its first maximum in row-major order, a NaN being the
  maximum, padding never winning: ``first_max``), avg_pool2d_backward (each window's g divided in
  the dtype as the reference divides, added in the dtype in the reference's order), and the
  gradients of shape operators (strided_slice_backward, take_backward with repeated indices added
  in index order, concatenate_backward, pad_backward) and scatter_add (data, then the updates in
  index order).

Errors: shapes, dtypes and attributes are checked by the operator's type relation before any launch
(``Launcher``), so a bad shape raises ``RelayTypeError`` where the reference raises ValueError; a
generator given attributes or ranks the relation rejects still returns a module, whose kernel
reports a ValueError. The only error found on the device is take_backward's and scatter_add's index
out of range (IndexError), reported by any thread that sees one; for an empty result, where no thread runs, the
launcher asks the reference, which raises it too. Float16 is not a CUDA dtype here.
"""

from __future__ import annotations

from typing import NamedTuple, Sequence

import numpy as np

from ..kernels.registry import ArgType, generator
from .launch import broadcast_index, element_body, kernel_module, read

OPERATORS = ("matmul", "dense", "conv2d", "conv2d_backward_input", "conv2d_backward_weight", "max_pool2d",
             "avg_pool2d", "max_pool2d_backward", "max_pool2d_gather", "avg_pool2d_backward",
             "strided_slice_backward", "take_backward", "scatter_add", "concatenate_backward", "pad_backward")

_LIMIT = 2**62  # slice bounds beyond any array size clamp to this (keeps them int64 literals)


# Source fragments --------------------------------------------------------------------------------


def _np(dtype: str) -> str:
    """The NumPy scalar type of a dtype name, as source (it converts, and truncates integers)."""
    return "np.bool_" if dtype == "bool" else f"np.{dtype}"


def _zero(dtype: str) -> str:
    """Zero of the dtype, as source (a bare 0 would make a float32 expression an integer or float64 one)."""
    return "False" if dtype == "bool" else f"np.{dtype}(0)"


def _wide(dtype: str, floats: str) -> str:
    """An accumulator type: ``floats`` for float dtypes, int64 / uint64 for integers (wrapping, exact mod 2**bits)."""
    kind = np.dtype(dtype).kind
    return floats if kind == "f" else ("np.uint64" if kind == "u" else "np.int64")


def _product_type(dtype: str) -> str:
    """Products accumulate floats in float64: one rounding, on the store."""
    return _wide(dtype, "np.float64")


def _sum_type(dtype: str) -> str:
    """Sums the reference adds in a known order accumulate floats in the dtype: the same roundings."""
    return _wide(dtype, _np(dtype))


def _indent(lines: Sequence[str], depth: int = 1) -> list[str]:
    """Lines indented ``depth`` levels (kernel bodies are built as lists of lines)."""
    return ["    " * depth + line for line in lines]


def _nest(*levels: Sequence[str]) -> list[str]:
    """``levels[0]``, with ``levels[1]`` indented under its last line (a ``for`` or ``if``), and so on."""
    lines = list(levels[-1])
    for level in reversed(levels[:-1]):
        lines = list(level) + _indent(lines)
    return lines


def _single(args: Sequence[ArgType], out_rank: int, lines: Sequence[str], value: str, helpers: str = "",
            errors: dict | None = None) -> str:
    """The module of one kernel storing ``value`` into an ``out_rank`` result after ``lines``."""
    return kernel_module([element_body("body", args, out_rank, lines, value)], ["body"], helpers, errors)


def _rejecting(args: Sequence[ArgType], message: str) -> str:
    """A module whose kernel reports a ValueError: for attributes or ranks the type relation rejects
    (so it is never launched), that generating never fails on."""
    params = ", ".join([f"x{j}" for j in range(len(args))] + ["out", "err"])
    body = f"@cuda.jit\ndef body({params}):\n    if cuda.grid(1) == 0:\n        err[0] = 1\n"
    return kernel_module([body], ["body"], errors={1: ("ValueError", message)})


def _pair_error(name: str, values: Sequence[int], low: int) -> str | None:
    """What is wrong with a pair attribute that must be >= low, or None."""
    if len(values) != 2 or min(values) < low:
        return f"{name} {tuple(values)} must be two numbers >= {low}"
    return None


# Windows of convolutions and pools ---------------------------------------------------------------


class Window(NamedTuple):
    """A sliding window over the last two axes of an NCHW input: its size (source expressions),
    strides, padding and dilation. Output (i, j) reads input row ``i * sh + p * dh - ph`` and column
    ``j * sw + q * dw - pw`` at tap (p, q); rows and columns outside 0 .. H - 1, 0 .. W - 1 are padding."""

    kh: str
    kw: str
    strides: tuple[int, int]
    padding: tuple[int, int]
    dilation: tuple[int, int] = (1, 1)

    def row(self, i: str, p: str) -> str:
        return f"{i} * {self.strides[0]} + {p} * {self.dilation[0]} - {self.padding[0]}"

    def col(self, j: str, q: str) -> str:
        return f"{j} * {self.strides[1]} + {q} * {self.dilation[1]} - {self.padding[1]}"

    def count(self, i: str, j: str) -> str:
        """How many input elements (not padding) window (i, j) covers (dilation 1)."""
        (sh, sw), (ph, pw) = self.strides, self.padding
        rows = f"max(min({i} * {sh} - {ph} + {self.kh}, H) - max({i} * {sh} - {ph}, 0), 0)"
        cols = f"max(min({j} * {sw} - {pw} + {self.kw}, W) - max({j} * {sw} - {pw}, 0), 0)"
        return f"{rows} * {cols}"


INSIDE = "0 <= r < H and 0 <= s < W"  # whether the (r, s) of ``_reads`` is in the input, not padding


def _reads(win: Window, i: str, j: str, p: str, q: str, loops: tuple[tuple[str, str], tuple[str, str]],
           body: Sequence[str], clip: bool) -> list[str]:
    """``body`` for each (row, column) of ``loops`` ((variable, count) per axis: two of i, j, p, q;
    the other two are given), with (r, s) the input position output (i, j) reads at tap (p, q):
    only inside the input when ``clip``, else every position (the body tests ``INSIDE``)."""
    (a, rows), (b, cols) = loops
    row, col = [f"r = {win.row(i, p)}"], [f"s = {win.col(j, q)}"]
    if clip:
        return _nest([f"for {a} in range({rows}):"], row + ["if 0 <= r < H:"], [f"for {b} in range({cols}):"],
                     col + ["if 0 <= s < W:"], body)
    return _nest([f"for {a} in range({rows}):"], row + [f"for {b} in range({cols}):"], col + list(body))


def _taps(win: Window, i: str, j: str, body: Sequence[str], clip: bool) -> list[str]:
    """``body`` for each tap (p, q) of window (i, j), with the position (r, s) it reads."""
    return _reads(win, i, j, "p", "q", (("p", win.kh), ("q", win.kw)), body, clip)


def _readers(win: Window, h: str, w: str, body: Sequence[str]) -> list[str]:
    """``body`` for each tap (p, q), in row-major order, whose window (i, j) reads input (h, w): the
    gather form of adding each window's taps back (the reference adds them tap by tap in this order)."""
    (sh, sw), (ph, pw), (dh, dw) = win.strides, win.padding, win.dilation
    return _nest(
        [f"for p in range({win.kh}):"],
        [f"d = {h} + {ph} - p * {dh}", f"if d >= 0 and d % {sh} == 0 and d // {sh} < OH:"],
        [f"i = d // {sh}", f"for q in range({win.kw}):"],
        [f"e = {w} + {pw} - q * {dw}", f"if e >= 0 and e % {sw} == 0 and e // {sw} < OW:"],
        [f"j = e // {sw}", *body],
    )


def _sizes(x: str, g: str | None = None) -> list[str]:
    """H, W of the NCHW input ``x``, and OH, OW of the windowed result ``g``."""
    lines = [f"H = {x}.shape[2]", f"W = {x}.shape[3]"]
    return lines + ([f"OH = {g}.shape[2]", f"OW = {g}.shape[3]"] if g else [])


# Matrix products ---------------------------------------------------------------------------------


@generator("matmul", target="cuda")
def generate_matmul(attrs: dict, args: list[ArgType]) -> str:
    """Row o[-2] of a against column o[-1] of b; the batch axes broadcast (launch.broadcast_index,
    which also gives a's row and b's column, as the result has those sizes)."""
    a, b = args
    if min(a.rank, b.rank) < 2:
        return _rejecting(args, f"matmul: both operands need rank >= 2, not {a.rank} and {b.rank}")
    out_rank = max(a.rank, b.rank)
    ia, ib = broadcast_index(0, a, out_rank), broadcast_index(1, b, out_rank)
    ia[-1] = ib[-2] = "p"
    acc = _product_type(a.dtype)
    lines = [f"acc = {acc}(0)", f"for p in range(x0.shape[{a.rank - 1}]):",
             f"    acc += {acc}({read(0, a, ia)}) * {acc}({read(1, b, ib)})"]
    return _single(args, out_rank, lines, f"{_np(a.dtype)}(acc)")


@generator("dense", target="cuda")
def generate_dense(attrs: dict, args: list[ArgType]) -> str:
    """x's row o[:-1] against w's row o[-1], plus b[o[-1]]."""
    x, w = args[0], args[1]
    if x.rank < 1 or w.rank != 2 or (len(args) == 3 and args[2].rank != 1):
        return _rejecting(args, "dense: x (..., in_features), w (units, in_features) and b (units,) needed")
    rows = [f"o{k}" for k in range(x.rank - 1)]
    unit = f"o{x.rank - 1}"
    acc = _product_type(x.dtype)
    lines = [f"acc = {acc}(0)", "for p in range(x1.shape[1]):",
             f"    acc += {acc}({read(0, x, rows + ['p'])}) * {acc}(x1[{unit}, p])"]
    if len(args) == 3:
        lines.append(f"acc += {acc}(x2[{unit}])")
    return _single(args, x.rank, lines, f"{_np(x.dtype)}(acc)")


# Convolution -------------------------------------------------------------------------------------


def _conv(op: str, attrs: dict, args: Sequence[ArgType], lines: list[str]) -> str:
    """A conv2d-family kernel over an NCHW result (o0, o1, o2, o3); ``lines`` leave the sum in ``acc``."""
    problem = (_pair_error("strides", attrs["strides"], 1) or _pair_error("dilation", attrs["dilation"], 1)
               or _pair_error("padding", attrs["padding"], 0))
    if problem or any(a.rank != 4 for a in args):
        return _rejecting(args, f"{op}: {problem or 'every argument must have rank 4 (NCHW, OIHW)'}")
    acc = _product_type(args[0].dtype)
    return _single(args, 4, [f"acc = {acc}(0)", *lines], f"{_np(args[0].dtype)}(acc)")


def _conv_window(attrs: dict, weight: str) -> Window:
    return Window(f"{weight}.shape[2]", f"{weight}.shape[3]", attrs["strides"], attrs["padding"], attrs["dilation"])


@generator("conv2d", target="cuda")
def generate_conv2d(attrs: dict, args: list[ArgType]) -> str:
    """out[n, o, i, j]: window (i, j) of x[n] (zero padding) against w[o], over channels and taps."""
    acc = _product_type(args[0].dtype)
    win = _conv_window(attrs, "x1")
    body = [f"v = x0[o0, c, r, s] if {INSIDE} else {_zero(args[0].dtype)}", f"acc += {acc}(v) * {acc}(x1[o1, c, p, q])"]
    lines = _sizes("x0") + ["for c in range(x0.shape[1]):", *_indent(_taps(win, "o2", "o3", body, clip=False))]
    return _conv("conv2d", attrs, args, lines)


@generator("conv2d_backward_input", target="cuda")
def generate_conv2d_backward_input(attrs: dict, args: list[ArgType]) -> str:
    """dx[n, c, h, w] (g, w[, like]): over the taps (p, q) whose window (i, j) reads (h, w), and the
    output channels o, g[n, o, i, j] * w[o, c, p, q]. H and W are the result's (like's, or the
    output_padding form's, from the type relation)."""
    acc = _product_type(args[0].dtype)
    win = _conv_window(attrs, "x1")
    body = ["for o in range(x1.shape[0]):", f"    acc += {acc}(x0[o0, o, i, j]) * {acc}(x1[o, o1, p, q])"]
    return _conv("conv2d_backward_input", attrs, args, _sizes("out", "x0") + _readers(win, "o2", "o3", body))


@generator("conv2d_backward_weight", target="cuda")
def generate_conv2d_backward_weight(attrs: dict, args: list[ArgType]) -> str:
    """dw[o, c, p, q] (g, x, like): over images n and outputs (i, j), g[n, o, i, j] times what tap
    (p, q) of window (i, j) reads from x[n, c] (zero padding)."""
    acc = _product_type(args[0].dtype)
    win = _conv_window(attrs, "x2")
    body = [f"v = x1[n, o1, r, s] if {INSIDE} else {_zero(args[1].dtype)}", f"acc += {acc}(x0[n, o0, i, j]) * {acc}(v)"]
    loops = _reads(win, "i", "j", "o2", "o3", (("i", "OH"), ("j", "OW")), body, clip=False)
    lines = _sizes("x1", "x0") + ["for n in range(x1.shape[0]):", *_indent(loops)]
    return _conv("conv2d_backward_weight", attrs, args, lines)


# Pooling -----------------------------------------------------------------------------------------


def _pool_window(op: str, attrs: dict, args: Sequence[ArgType]) -> Window | str:
    """The pool's window, or (attributes or ranks the type relation rejects) a module reporting them."""
    pool, padding = attrs["pool_size"], attrs["padding"]
    strides = attrs["strides"] or pool
    problem = (_pair_error("pool_size", pool, 1) or _pair_error("strides", strides, 1)
               or _pair_error("padding", padding, 0))
    if problem or any(a.rank != 4 for a in args):
        return _rejecting(args, f"{op}: {problem or 'every argument must be an NCHW tensor of rank 4'}")
    return Window(str(pool[0]), str(pool[1]), tuple(strides), tuple(padding))


def _first_max(win: Window, dtype: str) -> str:
    """Device function ``first_max(x, n, c, i, j)``: the (row, column) of window (i, j)'s first maximum of
    x[n, c] in row-major order, a NaN being the maximum, padding never winning; (-1, -1) for a window
    wholly in the padding. ``not (v <= m) and m == m`` is "v beats m" with NaNs (the reference's
    ``values == peak | both NaN``, first hit)."""
    scan = ["v = x[n, c, r, s]", "if a < 0 or ((not (v <= m)) and m == m):", "    m = v", "    a = r", "    b = s"]
    lines = [*_sizes("x"), "a = -1", "b = -1", f"m = {_zero(dtype)}", *_taps(win, "i", "j", scan, clip=True),
             "return a, b"]
    return "@cuda.jit(device=True)\ndef first_max(x, n, c, i, j):\n" + "\n".join(_indent(lines)) + "\n"


def _lowest(dtype: str) -> str:
    """What max pooling pads with: -inf, or the smallest integer."""
    if np.dtype(dtype).kind == "f":
        return f"np.{dtype}(-math.inf)"
    low = int(np.iinfo(dtype).min)
    return f"np.{dtype}({low + 1} - 1)"  # int64's minimum is no int64 literal


@generator("max_pool2d", target="cuda")
def generate_max_pool2d(attrs: dict, args: list[ArgType]) -> str:
    """The maximum over window (o2, o3) of x[o0, o1] padded with the lowest value; NaN wins."""
    win = _pool_window("max_pool2d", attrs, args)
    if isinstance(win, str):
        return win
    body = ["v = x0[o0, o1, r, s]", "m = v if (v > m) or (v != v) else m"]
    lines = [*_sizes("x0"), f"m = {_lowest(args[0].dtype)}", *_taps(win, "o2", "o3", body, clip=True)]
    return _single(args, 4, lines, "m")


@generator("avg_pool2d", target="cuda")
def generate_avg_pool2d(attrs: dict, args: list[ArgType]) -> str:
    """The window's sum (zero padding) in float64 over the window size, or over its in-input count
    (NaN for none) without ``count_include_pad``."""
    win = _pool_window("avg_pool2d", attrs, args)
    if isinstance(win, str):
        return win
    divisor = f"{win.kh} * {win.kw}" if attrs["count_include_pad"] else win.count("o2", "o3")
    lines = [*_sizes("x0"), "total = np.float64(0)",
             *_taps(win, "o2", "o3", ["total += np.float64(x0[o0, o1, r, s])"], clip=True), f"count = {divisor}"]
    return _single(args, 4, lines, f"{_np(args[0].dtype)}(total / count if count > 0 else math.nan)")


@generator("max_pool2d_backward", target="cuda")
def generate_max_pool2d_backward(attrs: dict, args: list[ArgType]) -> str:
    """dx[n, c, h, w] (g, x): the sum, in the reference's order, of g over the windows reading (h, w)
    whose first maximum it is."""
    win = _pool_window("max_pool2d_backward", attrs, args)
    if isinstance(win, str):
        return win
    dtype = args[0].dtype
    total = _sum_type(dtype)
    body = ["a, b = first_max(x1, o0, o1, i, j)", "if a == o2 and b == o3:", f"    acc += {total}(x0[o0, o1, i, j])"]
    lines = [*_sizes("x1", "x0"), f"acc = {total}(0)", *_readers(win, "o2", "o3", body)]
    return _single(args, 4, lines, f"{_np(dtype)}(acc)", helpers=_first_max(win, args[1].dtype))


@generator("max_pool2d_gather", target="cuda")
def generate_max_pool2d_gather(attrs: dict, args: list[ArgType]) -> str:
    """h (x's shape) at window (o2, o3)'s first maximum of x; 0 for a window wholly in the padding."""
    win = _pool_window("max_pool2d_gather", attrs, args)
    if isinstance(win, str):
        return win
    value = f"x0[o0, o1, a, b] if a >= 0 else {_zero(args[0].dtype)}"
    return _single(args, 4, ["a, b = first_max(x1, o0, o1, o2, o3)"], value, helpers=_first_max(win, args[1].dtype))


@generator("avg_pool2d_backward", target="cuda")
def generate_avg_pool2d_backward(attrs: dict, args: list[ArgType]) -> str:
    """dx[n, c, h, w] (g, x): over the windows reading (h, w), in the reference's order, g divided in the
    dtype by what the forward mean divides by."""
    win = _pool_window("avg_pool2d_backward", attrs, args)
    if isinstance(win, str):
        return win
    dtype = _np(args[0].dtype)
    divisor = f"{win.kh} * {win.kw}" if attrs["count_include_pad"] else win.count("i", "j")
    body = [f"acc += x0[o0, o1, i, j] / {dtype}({divisor})"]
    lines = [*_sizes("x1", "x0"), f"acc = {dtype}(0)", *_readers(win, "o2", "o3", body)]
    return _single(args, 4, lines, "acc")


# Gradients of shape operators --------------------------------------------------------------------


def _clamp(bound: int) -> int:
    return max(-_LIMIT, min(_LIMIT, bound))


def _slice_member(axis: int, start: int, stop: int, step: int) -> tuple[list[str], str, str]:
    """For output axis ``axis`` sliced ``start:stop:step`` (Python's clamping, as ``slice.indices``):
    lines computing the bounds, the condition that o{axis} is read by the slice, and g's index there."""
    n, o = f"out.shape[{axis}]", f"o{axis}"
    low, high = ("0", n) if step > 0 else ("-1", f"{n} - 1")

    def bound(value: int) -> str:
        value = _clamp(value)
        return f"min(max({value} + {n}, {low}), {high})" if value < 0 else f"min({value}, {high})"

    lines = [f"b{axis} = {bound(start)}", f"e{axis} = {bound(stop)}"]
    if step > 0:
        member = f"b{axis} <= {o} < e{axis} and ({o} - b{axis}) % {step} == 0"
        return lines, member, f"({o} - b{axis}) // {step}"
    member = f"e{axis} < {o} <= b{axis} and (b{axis} - {o}) % {-step} == 0"
    return lines, member, f"(b{axis} - {o}) // {-step}"


@generator("strided_slice_backward", target="cuda")
def generate_strided_slice_backward(attrs: dict, args: list[ArgType]) -> str:
    """Zeros of like's shape with g where the slice reads: out[o] is g at o's place in the slice."""
    g, like = args
    begin, end = attrs["begin"], attrs["end"]
    strides = (1,) * len(begin) if attrs["strides"] is None else attrs["strides"]
    axes = tuple(range(len(begin))) if attrs["axes"] is None else attrs["axes"]
    normal = [a % like.rank for a in axes if -like.rank <= a < like.rank]
    if (not len(begin) == len(end) == len(strides) == len(axes) or len(set(normal)) != len(axes)
            or 0 in strides or g.rank != like.rank):
        return _rejecting(args, "strided_slice_backward: the attributes do not slice like, or g is not the slice")
    index = [f"o{k}" for k in range(like.rank)]
    lines, members = [], []
    for axis, start, stop, step in zip(normal, begin, end, strides):
        bounds, member, index[axis] = _slice_member(axis, start, stop, step)
        lines += bounds
        members.append(member)
    value = read(0, g, index)
    if members:
        value = f"{value} if {' and '.join(f'({m})' for m in members)} else {_zero(g.dtype)}"
    return _single(args, like.rank, lines, value)


def _take_adjoint(op: str, attrs: dict, args: list[ArgType], values: int, shaped: int, start: str) -> str:
    """Take's adjoint ``op`` as a gather: out[o], of argument ``shaped``'s shape and argument ``values``'
    dtype, is ``start`` plus argument ``values`` (take's result shape) added, in index order, at every
    index equal to o's place along the axis (its flat place for axis None); an index out of range is
    an IndexError. Argument 1 is the indices."""
    indices, like, dtype = args[1], args[shaped], args[values].dtype
    axis = attrs["axis"]
    if axis is not None and not -like.rank <= axis < like.rank:
        return _rejecting(args, f"{op}: axis {axis} is out of range for rank {like.rank}")
    t = [f"t{k}" for k in range(indices.rank)]
    if axis is None:
        size = " * ".join(f"x{shaped}.shape[{k}]" for k in range(like.rank)) or "1"
        place = "0"
        for k in range(like.rank):
            place = f"o{k}" if k == 0 else f"({place}) * x{shaped}.shape[{k}] + o{k}"
        at = t
    else:
        axis %= like.rank
        size, place = f"x{shaped}.shape[{axis}]", f"o{axis}"
        at = [f"o{k}" for k in range(axis)] + t + [f"o{k}" for k in range(axis + 1, like.rank)]
    total = _sum_type(dtype)
    body = [f"k = np.int64({read(1, indices, t)})", "if k < 0 or k >= size:", "    err[0] = 1", "    return",
            "if k == place:", f"    acc += {total}({read(values, args[values], at)})"]
    loops = [[f"for t{k} in range(x1.shape[{k}]):"] for k in range(indices.rank)]
    lines = [f"size = {size}", f"place = {place}", f"acc = {start}", *_nest(*loops, body)]
    errors = {1: ("IndexError", f"{op}: an index is out of range for the axis it takes from")}
    return _single(args, like.rank, lines, f"{_np(dtype)}(acc)", errors=errors)


@generator("take_backward", target="cuda")
def generate_take_backward(attrs: dict, args: list[ArgType]) -> str:
    """out[o]: g added at every index equal to o's place, from zero."""
    return _take_adjoint("take_backward", attrs, args, values=0, shaped=2, start=f"{_sum_type(args[0].dtype)}(0)")


@generator("scatter_add", target="cuda")
def generate_scatter_add(attrs: dict, args: list[ArgType]) -> str:
    """out[o]: updates added at every index equal to o's place, onto data[o] (the reference's order:
    data first, then each update in index order)."""
    data = args[0]
    start = f"{_sum_type(data.dtype)}({read(0, data, [f'o{k}' for k in range(data.rank)])})"
    return _take_adjoint("scatter_add", attrs, args, values=2, shaped=0, start=start)


@generator("concatenate_backward", target="cuda")
def generate_concatenate_backward(attrs: dict, args: list[ArgType]) -> str:
    """Part ``index``'s piece of g: g shifted along axis by the sizes of the parts before it."""
    g, parts = args[0], args[1:]
    axis, index = attrs["axis"], attrs["index"]
    if not (0 <= index < len(parts) and -g.rank <= axis < g.rank and all(p.rank == g.rank for p in parts)):
        return _rejecting(args, "concatenate_backward: index, axis or the parts' ranks do not fit g")
    axis %= g.rank
    before = " + ".join(f"x{k}.shape[{axis}]" for k in range(1, index + 1)) or "0"
    at = [f"o{k}" for k in range(g.rank)]
    at[axis] = f"{before} + o{axis}"
    return _single(args, g.rank, [], read(0, g, at))


@generator("pad_backward", target="cuda")
def generate_pad_backward(attrs: dict, args: list[ArgType]) -> str:
    """g without the padding: out[o] is g at o shifted by the widths before."""
    g, x = args
    widths = attrs["pad_width"]
    if len(widths) != 2 * x.rank or any(w < 0 for w in widths) or g.rank != x.rank:
        return _rejecting(args, f"pad_backward: pad_width {tuple(widths)} does not pad rank {x.rank} to g")
    return _single(args, x.rank, [], read(0, g, [f"o{k} + {widths[2 * k]}" for k in range(x.rank)]))
