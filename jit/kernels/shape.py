"""Kernel generators for the shape operators: reshape, transpose, expand_dims, squeeze,
broadcast_to, broadcast_to_like, sum_to, concatenate, stack, take, gather, gather_backward, strided_slice,
reverse, pad, flatten, full, one_hot, reshape_like.

Views where NumPy returns views: transpose, expand_dims, squeeze, strided_slice, reverse,
broadcast_to(_like) always, reshape, flatten and reshape_like when the argument is C-contiguous
(otherwise a C-ordered copy, as NumPy copies). The others build a new C-ordered array with flat row copies (slicing a row
first lets LLVM turn the copy loops into vector moves). Everything is exact; sum_to sums as NumPy's
two ``np.sum`` calls do (leading axes first, then the stretched ones), through the reduction engine
of ``reduce.py``, so its float results are bitwise the reference's for C-contiguous input (else
within the tolerance stated there). gather and gather_backward read their arguments in place (any
layout); gather_backward adds in C order of the indices, the reference's np.add.at order.

Kernel vs NumPy, microseconds (2-core development machine, minimum over repeats, float32): the
transpose (a view) and reshape (a copy) of a (16, 50, 4, 4) tensor to (16, 800): 5.0 vs 5.7;
views alone (reshape, transpose, expand_dims, strided_slice): 0.6 vs 0.2-0.5 (Numba's call
overhead); sum_to (64, 100) -> (100,): 1.9 vs 3.7; sum_to (16, 20, 24, 24) -> (20, 1, 1): 19
vs 39; concatenate two (64, 100) on axis 1: 1.9 vs 2.7; take 640 rows of a (10000, 64) table:
5.0 vs 5.0; pad (16, 1, 28, 28) by 2 spatially: 3.1 vs 28; one_hot of 64 labels, depth 10: 0.7
vs 3.0; broadcast_to (100,) -> (64, 100): 0.6 vs 2.6. transpose uses ``as_strided``, which
compiles in 0.2 s where ``np.transpose`` took 3.5 s.

Attributes are checked against ranks when the kernel is generated; where the reference raises for
them, the kernel raises the same exception class (see ``reduce.static_errors``); errors that
depend on sizes are raised by the kernel with constant messages. ``squeeze`` with axis None has no
kernel: its result's rank depends on which sizes are 1, which only the type checker knows (a
lowering pass names those axes); Numba kernels need a static result rank.
"""

from __future__ import annotations

from typing import Sequence

import numpy as np
from numpy.lib.array_utils import normalize_axis_index, normalize_axis_tuple

from relayish.ops.relations import resolve_newshape
from relayish.ops.shape import _slice_index, value_error

from .reduce import (
    HEADER,
    JIT,
    check_dtypes,
    initial,
    literal,
    numpy_type,
    product,
    reduce_source,
    shape_tuple,
    sizes_source,
    static_errors,
)
from .registry import ArgType, generator

_LIMIT = 2**62  # slice bounds beyond any array size are clamped to this (keeps them int64)

# Copy the row f[0:w] of each of ``outer`` blocks into out at offset ``off`` of rows of length ``row``.
_COPY_ROWS = f"""\
{JIT}
def _copy_rows(out, f, outer, row, off, w):
    for o in range(outer):
        d = out[o * row + off:o * row + off + w]
        s = f[o * w:(o + 1) * w]
        for j in range(w):
            d[j] = s[j]


"""


def _dims(name: str, rank: int) -> list[str]:
    return [f"{name}.shape[{i}]" for i in range(rank)]


def _kernel(params: str, body: str, helpers: str = "") -> str:
    return f"{HEADER}{helpers}{JIT}\ndef kernel({params}):\n{body}"


def _view_kernel(params: str, body: str) -> str:
    """A kernel returning a view of its argument: Numba compiles it per layout of the argument
    (``PER_LAYOUT``, registry.import_file), so a strided input gives a view too, not a copy's."""
    return _kernel(params, body, "PER_LAYOUT = True\n")


@generator("reshape")
@static_errors("reshape")
def reshape(attrs: dict, args: Sequence[ArgType]) -> str:
    """The shape newshape resolves to (``resolve_newshape``, as the reference resolves it), from x's
    shape at run time, with the reference's checks: each -4 splits exactly, the element count
    stays (a -1 inferred by exact division)."""
    (x,) = args
    check_dtypes("reshape", [x.dtype])
    newshape = attrs["newshape"]
    resolved = resolve_newshape(newshape, x.rank, value_error("reshape"))
    dims: list[str] = []
    splits: dict[int, str] = {}  # input dimension -> the condition that its split is not exact
    for d in resolved:
        if d.kind == "size":
            dims.append(str(d.size))
        elif d.kind == "copy":
            dims.append(product([f"x.shape[{i}]" for i in d.inputs]))
        elif d.kind == "split":
            whole = f"x.shape[{d.inputs[0]}]"
            part = f"({whole} // {d.other})" if d.size == -1 else str(d.size)
            other = f"({whole} // {d.size})" if d.other == -1 else str(d.other)
            splits[d.inputs[0]] = f"{part} * {other} != {whole}"
            dims.append(part)
        else:
            dims.append("size // known")
    known = product([dim for dim, d in zip(dims, resolved) if d.kind != "infer"])
    counted = ["known == 0", "size % known != 0"] if "size // known" in dims else [f"{known} != size"]
    return _kernel("x", f"""\
    size = {product(_dims("x", x.rank))}
    known = {known}
    if {" or ".join([*splits.values(), *counted])}:
        raise ValueError("reshape: cannot reshape the array into shape {newshape}")
    return np.ascontiguousarray(x).reshape({shape_tuple(dims)})
""")


def permutation(axes: Sequence[int] | None, rank: int) -> tuple[int, ...]:
    """transpose's ``axes`` as a permutation of ``range(rank)`` (reversed for None)."""
    if axes is None:
        return tuple(reversed(range(rank)))
    if len(axes) != rank:
        raise ValueError("axes don't match array")
    return normalize_axis_tuple(axes, rank)


@generator("transpose")
@static_errors("transpose")
def transpose(attrs: dict, args: Sequence[ArgType]) -> str:
    """A view with the axes permuted (reversed for axes None)."""
    (x,) = args
    check_dtypes("transpose", [x.dtype])
    axes = permutation(attrs["axes"], x.rank)
    if x.rank < 2:
        return _view_kernel("x", "    return x\n")
    shape = shape_tuple([f"x.shape[{a}]" for a in axes])
    strides = shape_tuple([f"x.strides[{a}]" for a in axes])
    return _view_kernel("x", f"    return np.lib.stride_tricks.as_strided(x, shape={shape}, strides={strides})\n")


@generator("expand_dims")
@static_errors("expand_dims")
def expand_dims(attrs: dict, args: Sequence[ArgType]) -> str:
    """A view with num_newaxis axes of size 1 inserted at axis."""
    (x,) = args
    check_dtypes("expand_dims", [x.dtype])
    if attrs["num_newaxis"] < 0:
        raise ValueError(f"num_newaxis must be >= 0, not {attrs['num_newaxis']}")
    position = normalize_axis_index(attrs["axis"], x.rank + 1)
    if attrs["num_newaxis"] == 0:
        return _view_kernel("x", "    return x\n")
    index = [":"] * position + ["None"] * attrs["num_newaxis"] + [":"] * (x.rank - position)
    return _view_kernel("x", f"    return x[{', '.join(index)}]\n")


@generator("squeeze")
@static_errors("squeeze")
def squeeze(attrs: dict, args: Sequence[ArgType]) -> str:
    """A view without the named size-1 axes (ValueError when one of them has another size)."""
    (x,) = args
    check_dtypes("squeeze", [x.dtype])
    if attrs["axis"] is None:
        raise NotImplementedError(
            "squeeze: a kernel needs the axes to squeeze (with axis None the result's rank depends on the "
            "sizes; the type checker knows which dimensions are 1, so lowering should name them)")
    axes = normalize_axis_tuple(attrs["axis"], x.rank)
    if not axes:
        return _view_kernel("x", "    return x\n")
    checks = " or ".join(f"x.shape[{i}] != 1" for i in axes)
    if len(axes) == x.rank:
        result = "np.ascontiguousarray(x).reshape(())"
    else:
        result = f"x[{', '.join('0' if i in axes else ':' for i in range(x.rank))}]"
    return _view_kernel("x", f"""\
    if {checks}:
        raise ValueError("squeeze: cannot select an axis to squeeze out which has size not equal to one")
    return {result}
""")


def _broadcast_body(rank: int, target: list[str]) -> str:
    """Kernel lines returning a stride-0 view of x (rank ``rank``) broadcast to the dims ``target``
    (source expressions), with NumPy's ValueError when a dimension is neither equal nor 1."""
    lead = len(target) - rank
    lines = [f"    t = {shape_tuple(target)}\n"] if target else []
    conditions = [f"(x.shape[{i}] != t[{lead + i}] and x.shape[{i}] != 1)" for i in range(rank)]
    if conditions:
        lines.append(
            f"    if {' or '.join(conditions)}:\n"
            '        raise ValueError("broadcast_to: operands could not be broadcast together with the shape")\n'
        )
    strides = ["0"] * lead + [f"(0 if x.shape[{i}] != t[{lead + i}] else x.strides[{i}])" for i in range(rank)]
    shape = [f"t[{k}]" for k in range(len(target))]
    lines.append(f"    return np.lib.stride_tricks.as_strided(x, shape={shape_tuple(shape)}, "
                 f"strides={shape_tuple(strides)})\n")
    return "".join(lines)


@generator("broadcast_to")
@static_errors("broadcast_to")
def broadcast_to(attrs: dict, args: Sequence[ArgType]) -> str:
    """A stride-0 view of x broadcast to shape by NumPy's rules."""
    (x,) = args
    check_dtypes("broadcast_to", [x.dtype])
    shape = attrs["shape"]
    if len(shape) < x.rank:
        raise ValueError("input operand has more dimensions than allowed by the axis remapping")
    if any(d < 0 for d in shape):
        raise ValueError("all elements of broadcast shape must be non-negative")
    return _view_kernel("x", _broadcast_body(x.rank, [str(d) for d in shape]))


@generator("broadcast_to_like")
@static_errors("broadcast_to_like")
def broadcast_to_like(attrs: dict, args: Sequence[ArgType]) -> str:
    """A stride-0 view of x broadcast to like's shape."""
    x, like = args
    check_dtypes("broadcast_to_like", [x.dtype, like.dtype])
    if like.rank < x.rank:
        raise ValueError("input operand has more dimensions than allowed by the axis remapping")
    return _view_kernel("x, like", _broadcast_body(x.rank, _dims("like", like.rank)))


@generator("sum_to")
@static_errors("sum_to")
def sum_to(attrs: dict, args: Sequence[ArgType]) -> str:
    """x summed to like's shape as the reference does: first over the leading extra axes, then
    (keeping them) over the axes where like has 1 and x not; bools sum as logical or."""
    x, like = args
    check_dtypes("sum_to", [x.dtype, like.dtype])
    extra = x.rank - like.rank
    if extra < 0:
        raise ValueError(f"cannot sum a tensor of rank {x.rank} to the larger rank {like.rank}")
    t, zero = numpy_type(x.dtype), initial("sum", x.dtype)
    rest = [f"x.shape[{extra + i}]" for i in range(like.rank)]
    like_dims = _dims("like", like.rank)
    mismatch = " or ".join(f"(x.shape[{extra + i}] != like.shape[{i}] and like.shape[{i}] != 1)"
                           for i in range(like.rank)) or "False"
    stretched = "".join(f"    flags[{i}] = like.shape[{i}] == 1 and x.shape[{extra + i}] != 1\n"
                        for i in range(like.rank))
    body = f"""\
    if {mismatch}:
        raise ValueError("sum_to: like's shape does not broadcast to x's shape")
    f = np.ascontiguousarray(x).reshape(-1)
{sizes_source("sizes", "x", x.rank)}\
    flags = np.zeros({like.rank}, np.bool_)
{stretched}\
"""
    if extra:
        # np.sum over the leading axes first; then over the stretched ones if there are any.
        leading = "".join(f"    flags1[{i}] = True\n" for i in range(extra))
        body += f"""\
    flags1 = np.zeros({x.rank}, np.bool_)
{leading}\
    mid = np.full({product(rest)}, {zero}, {t})
    _reduce(f, sizes, flags1, mid)
    if not flags.any():
        return mid.reshape({shape_tuple(like_dims)})
    f = mid
    sizes = sizes[{extra}:].copy()
"""
    # Without leading axes the reference's first sum only adds 0 to each element; the second
    # (which starts from 0, and with no stretched axes copies) gives the same values.
    body += f"""\
    out = np.full({product(like_dims)}, {zero}, {t})
    _reduce(f, sizes, flags, out)
    return out.reshape({shape_tuple(like_dims)})
"""
    return _kernel("x, like", body, reduce_source("sum", x.dtype))


@generator("concatenate")
@static_errors("concatenate")
def concatenate(attrs: dict, args: Sequence[ArgType]) -> str:
    """The arguments joined along an existing axis (a new C-ordered array)."""
    check_dtypes("concatenate", [a.dtype for a in args])
    rank = args[0].rank
    if rank == 0:
        raise ValueError("zero-dimensional arrays cannot be concatenated")
    axis = normalize_axis_index(attrs["axis"], rank)
    names = [f"x{k}" for k in range(len(args))]
    dims = _dims("x0", rank)
    mismatch = " or ".join(f"{n}.shape[{i}] != x0.shape[{i}]" for n in names[1:] for i in range(rank) if i != axis)
    total = " + ".join(f"{n}.shape[{axis}]" for n in names)
    lines = []
    if mismatch:
        lines.append(f"    if {mismatch}:\n        raise ValueError(\"concatenate: all the input array dimensions "
                     "except for the concatenation axis must match exactly\")\n")
    lines += [
        f"    outer = {product(dims[:axis])}\n",
        f"    inner = {product(dims[axis + 1:])}\n",
        f"    total = {total}\n",
        f"    out = np.empty(outer * total * inner, {numpy_type(args[0].dtype)})\n",
        "    off = 0\n",
    ]
    for n in names:
        lines.append(f"    w = {n}.shape[{axis}] * inner\n"
                     f"    _copy_rows(out, np.ascontiguousarray({n}).reshape(-1), outer, total * inner, off, w)\n"
                     "    off += w\n")
    shape = [("total" if i == axis else d) for i, d in enumerate(dims)]
    lines.append(f"    return out.reshape({shape_tuple(shape)})\n")
    return _kernel(", ".join(names), "".join(lines), _COPY_ROWS)


@generator("stack")
@static_errors("stack")
def stack(attrs: dict, args: Sequence[ArgType]) -> str:
    """The equally shaped arguments joined along a new axis (a new C-ordered array)."""
    check_dtypes("stack", [a.dtype for a in args])
    rank = args[0].rank
    axis = normalize_axis_index(attrs["axis"], rank + 1)
    names = [f"x{k}" for k in range(len(args))]
    dims = _dims("x0", rank)
    mismatch = " or ".join(f"{n}.shape[{i}] != x0.shape[{i}]" for n in names[1:] for i in range(rank))
    lines = []
    if mismatch:
        lines.append(f"    if {mismatch}:\n"
                     "        raise ValueError(\"stack: all input arrays must have the same shape\")\n")
    lines += [
        f"    outer = {product(dims[:axis])}\n",
        f"    inner = {product(dims[axis:])}\n",
        f"    out = np.empty(outer * {len(names)} * inner, {numpy_type(args[0].dtype)})\n",
    ]
    for k, n in enumerate(names):
        lines.append(f"    _copy_rows(out, np.ascontiguousarray({n}).reshape(-1), outer, "
                     f"{len(names)} * inner, {k} * inner, inner)\n")
    shape = dims[:axis] + [str(len(names))] + dims[axis:]
    lines.append(f"    return out.reshape({shape_tuple(shape)})\n")
    return _kernel(", ".join(names), "".join(lines), _COPY_ROWS)


def _out_of_range(dtype: str, value: str, size: str) -> str:
    """Source of the condition "``value`` (of integer ``dtype``) is outside 0 .. size - 1"."""
    kind = np.dtype(dtype).kind
    if kind == "u":
        # Compare unsigned values as unsigned (uint64 against int64 would compare as floats).
        return f"{value} >= np.uint64({size})" if dtype == "uint64" else f"{value} >= {size}"
    return f"{value} < 0 or {value} >= {size}"


@generator("take")
@static_errors("take")
def take(attrs: dict, args: Sequence[ArgType]) -> str:
    """data's elements at indices along axis (None: of the flattened data); IndexError when an
    index is outside 0 .. size - 1, checked for all indices before anything is gathered."""
    data, indices = args
    check_dtypes("take", [data.dtype])
    axis = attrs["axis"]
    t = numpy_type(data.dtype)
    idx_dims = _dims("indices", indices.rank)
    if axis is None:
        where, size = "the flattened data", "f.size"
        gather = f"""\
    out = np.empty(idx.size, {t})
    for k in range(idx.size):
        out[k] = f[idx[k]]
"""
        shape = idx_dims
    else:
        axis = normalize_axis_index(axis, data.rank)
        dims = _dims("data", data.rank)
        where, size = f"axis {axis}", "n"
        gather = f"""\
    outer = {product(dims[:axis])}
    inner = {product(dims[axis + 1:])}
    m = idx.size
    out = np.empty(outer * m * inner, {t})
    for o in range(outer):
        for k in range(m):
            s = f[(o * n + idx[k]) * inner:(o * n + idx[k] + 1) * inner]
            d = out[(o * m + k) * inner:(o * m + k + 1) * inner]
            for j in range(inner):
                d[j] = s[j]
"""
        shape = dims[:axis] + idx_dims + dims[axis + 1:]
    return _kernel("data, indices", f"""\
    f = np.ascontiguousarray(data).reshape(-1)
    idx = np.ascontiguousarray(indices).reshape(-1)
    n = {"f.size" if axis is None else f"data.shape[{axis}]"}
    for k in range(idx.size):
        v = idx[k]
        if {_out_of_range(indices.dtype, "v", size)}:
            raise IndexError("take: an index is out of range for {where}")
{gather}\
    return out.reshape({shape_tuple(shape)})
""")


def _gather_axis(op: str, data: ArgType, indices: ArgType, axis: int) -> int:
    """gather's axis, normalized; TypeError for indices that are not integers, ValueError unless they
    have data's rank (as the reference checks them)."""
    if np.dtype(indices.dtype).kind not in "iu":
        raise TypeError(f"{op}: the indices must have an integer dtype, not {indices.dtype}")
    if indices.rank != data.rank:
        raise ValueError(f"the indices must have the data's rank {data.rank}, not {indices.rank}")
    return normalize_axis_index(axis, data.rank)


def _gathering(op: str, data: str, rank: int, axis: int, step: str) -> str:
    """Kernel lines: ValueError where ``indices`` is longer than the array ``data`` along an axis but
    ``axis``; then each index in C order, IndexError unless it is in 0 .. size - 1, and ``step``
    (formatted with ``t``, the index's position, and ``at``, where gather reads ``data``)."""
    longer = " or ".join(f"indices.shape[{d}] > {data}.shape[{d}]" for d in range(rank) if d != axis) or "False"
    t = [f"t{d}" for d in range(rank)]
    at = t[:axis] + ["k"] + t[axis + 1:]
    loops = "".join(f"{'    ' * (d + 1)}for t{d} in range(indices.shape[{d}]):\n" for d in range(rank))
    pad = "    " * (rank + 1)
    return f"""\
    if {longer}:
        raise ValueError("{op}: the indices are longer than the data along an axis but {axis}")
    n = {data}.shape[{axis}]
{loops}\
{pad}k = np.int64(indices[{', '.join(t)}])
{pad}if k < 0 or k >= n:
{pad}    raise IndexError("{op}: an index is out of range for axis {axis}")
{pad}{step.format(t=', '.join(t), at=', '.join(at))}
"""


@generator("gather")
@static_errors("gather")
def gather(attrs: dict, args: Sequence[ArgType]) -> str:
    """data at each index along axis and at the index's own position along the other axes (plain
    indexing, any layout); the reference's errors for indices longer than data or out of range."""
    data, indices = args
    check_dtypes("gather", [data.dtype])
    axis = _gather_axis("gather", data, indices, attrs["axis"])
    return _kernel("data, indices", f"""\
    out = np.empty(indices.shape, {numpy_type(data.dtype)})
{_gathering("gather", "data", data.rank, axis, "out[{t}] = data[{at}]")}\
    return out
""")


@generator("gather_backward")
@static_errors("gather_backward")
def gather_backward(attrs: dict, args: Sequence[ArgType]) -> str:
    """Zeros of like's shape with g added where gather reads, in C order of the indices: the
    reference's np.add.at order, so float sums are exact and integer ones wrap as NumPy's."""
    g, indices, like = args
    check_dtypes("gather_backward", [g.dtype])
    if np.dtype(g.dtype).kind not in "iuf":
        raise TypeError(f"gather_backward: the gradient must have a numeric dtype, not {g.dtype}")
    if g.rank != indices.rank:
        raise ValueError("the gradient does not have the shape of the gather result")
    axis = _gather_axis("gather_backward", like, indices, attrs["axis"])
    return _kernel("g, indices, like", f"""\
    if g.shape != indices.shape:
        raise ValueError("gather_backward: the gradient does not have the shape of the gather result")
    out = np.zeros(like.shape, {numpy_type(g.dtype)})
{_gathering("gather_backward", "like", like.rank, axis, "out[{at}] += g[{t}]")}\
    return out
""")


@generator("strided_slice")
@static_errors("strided_slice")
def strided_slice(attrs: dict, args: Sequence[ArgType]) -> str:
    """A view ``x[begin:end:stride]`` along each of axes, Python slicing with its clamping."""
    (x,) = args
    check_dtypes("strided_slice", [x.dtype])
    index = _slice_index("strided_slice", x.rank, attrs["begin"], attrs["end"], attrs["strides"], attrs["axes"])

    def bound(value: int | None) -> str:
        return "" if value is None else str(max(-_LIMIT, min(_LIMIT, value)))

    parts = [f"{bound(s.start)}:{bound(s.stop)}:{bound(s.step)}" for s in index]
    if all(p == "::" for p in parts):
        return _view_kernel("x", "    return x\n")
    return _view_kernel("x", f"    return x[{', '.join(parts)}]\n")


@generator("reverse")
@static_errors("reverse")
def reverse(attrs: dict, args: Sequence[ArgType]) -> str:
    """A view of x with a step of -1 along axis."""
    (x,) = args
    check_dtypes("reverse", [x.dtype])
    axis = normalize_axis_index(attrs["axis"], x.rank)
    return _view_kernel("x", f"    return x[{', '.join(['::-1' if i == axis else ':' for i in range(x.rank)])}]\n")


@generator("pad")
@static_errors("pad")
def pad(attrs: dict, args: Sequence[ArgType]) -> str:
    """x inside a new array of pad_value (converted to x's dtype as cast converts)."""
    (x,) = args
    check_dtypes("pad", [x.dtype])
    widths = attrs["pad_width"]
    if len(widths) != 2 * x.rank:
        raise ValueError(f"pad_width needs {2 * x.rank} numbers for rank {x.rank}, not {len(widths)}")
    if any(p < 0 for p in widths):
        raise ValueError(f"pad_width {widths} has a negative number")
    if x.rank == 0:
        return _kernel("x", "    return x.copy()\n")
    with np.errstate(all="ignore"):  # inf or nan into an integer dtype converts as cast does
        value = np.asarray(attrs["pad_value"]).astype(x.dtype)[()]
    dims = _dims("x", x.rank)
    before = widths[0::2]
    padded = [f"({d} + {widths[2 * i] + widths[2 * i + 1]})" for i, d in enumerate(dims)]
    # One loop per leading axis; each innermost row of x is copied into its place in out.
    loops = "".join(f"{'    ' * (i + 1)}for i{i} in range({dims[i]}):\n" for i in range(x.rank - 1))
    src = dst = ""
    for i in range(x.rank - 1):
        src = f"({src}) * {dims[i]} + i{i}" if src else f"i{i}"
        dst = f"({dst}) * {padded[i]} + i{i} + {before[i]}" if dst else f"i{i} + {before[i]}"
    pad = "    " * x.rank
    return _kernel("x", f"""\
    f = np.ascontiguousarray(x).reshape(-1)
    out = np.full({product(padded)}, {literal(value, x.dtype)}, {numpy_type(x.dtype)})
    w = {dims[-1]}
{loops}\
{pad}s = {f"({src}) * w" if src else "0"}
{pad}d = {f"({dst}) * {padded[-1]} + {before[-1]}" if dst else before[-1]}
{pad}row = out[d:d + w]
{pad}part = f[s:s + w]
{pad}for j in range(w):
{pad}    row[j] = part[j]
    return out.reshape({shape_tuple(padded)})
""")


@generator("flatten")
@static_errors("flatten")
def flatten(attrs: dict, args: Sequence[ArgType]) -> str:
    """x reshaped to (d0, d1 * ... * dn): a view of C-contiguous x, else a copy."""
    (x,) = args
    check_dtypes("flatten", [x.dtype])
    if x.rank == 0:
        raise ValueError("needs a tensor of rank >= 1")
    dims = _dims("x", x.rank)
    return _kernel("x", f"    return np.ascontiguousarray(x).reshape(({dims[0]}, {product(dims[1:])}))\n")


@generator("full")
@static_errors("full")
def full(attrs: dict, args: Sequence[ArgType]) -> str:
    """A new array of shape and dtype filled with fill_value (converted as np.full converts)."""
    dtype = attrs["dtype"].to_numpy().name
    check_dtypes("full", [dtype])
    shape = attrs["shape"]
    if any(d < 0 for d in shape):
        raise ValueError("negative dimensions are not allowed")
    with np.errstate(all="ignore"):  # inf or nan into an integer dtype converts as np.full does
        value = np.full((), attrs["fill_value"], dtype=dtype)[()]
    return _kernel("", f"    return np.full({shape_tuple([str(d) for d in shape])}, {literal(value, dtype)}, "
                       f"{numpy_type(dtype)})\n")


@generator("one_hot")
@static_errors("one_hot")
def one_hot(attrs: dict, args: Sequence[ArgType]) -> str:
    """indices.shape + (depth,): 1 at each index, 0 elsewhere (a row of 0 for an index outside
    0 .. depth - 1)."""
    (indices,) = args
    depth = attrs["depth"]
    dtype = attrs["dtype"].to_numpy().name
    check_dtypes("one_hot", [dtype])
    if depth < 0:
        raise ValueError(f"depth must be >= 0, not {depth}")
    shape = _dims("indices", indices.rank) + [str(depth)]
    return _kernel("indices", f"""\
    idx = np.ascontiguousarray(indices).reshape(-1)
    out = np.zeros(idx.size * {depth}, {numpy_type(dtype)})
    for k in range(idx.size):
        v = idx[k]
        if not ({_out_of_range(indices.dtype, "v", str(depth))}):
            out[k * {depth} + v] = {literal(1, dtype)}
    return out.reshape({shape_tuple(shape)})
""")


@generator("reshape_like")
@static_errors("reshape_like")
def reshape_like(attrs: dict, args: Sequence[ArgType]) -> str:
    """x reshaped (C order) to like's shape: a view of C-contiguous x, else a copy."""
    x, like = args
    check_dtypes("reshape_like", [x.dtype, like.dtype])
    return _kernel("x, like", f"""\
    if {product(_dims("x", x.rank))} != {product(_dims("like", like.rank))}:
        raise ValueError("reshape_like: x and like have different numbers of elements")
    return np.ascontiguousarray(x).reshape({shape_tuple(_dims("like", like.rank))})
""")
