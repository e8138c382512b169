"""CUDA kernels of the shape operators: reshape, transpose, expand_dims, squeeze, broadcast_to,
broadcast_to_like, sum_to, concatenate, stack, take, gather, gather_backward, strided_slice, reverse, pad,
flatten, full, one_hot, reshape_like.

Each is one thread per output element that finds the argument element it copies (a gather):
the reshapes (reshape, flatten, reshape_like) through the element's C-order position, the others
through index arithmetic on the output indices. Every result is a new array (never a view).
All are exact except sum_to's float sums, which add in float64 and round once (NumPy sums in the
dtype, over the leading axes first, then over the stretched ones): within ``rtol * sum(|x|)``,
rtol 1e-5 for float32 and 1e-12 for float64, as ``reduce.py`` states for sum; integer sums wrap as
NumPy's, bool sums are logical or.

Conversions as the reference's: pad's pad_value as ``np.asarray(pad_value).astype(dtype)``, full's
fill_value as ``np.full`` converts (both computed when the kernel is generated, so a NaN or inf
into an integer dtype gives NumPy's value). one_hot gives a row of 0 for an index outside 0 ..
depth - 1. take reports an index outside 0 .. size - 1 of its axis (of the flattened data for
axis None; negative ones included) as IndexError, as the reference raises; an unsigned index is
read as int64, so uint64 indices of 2**63 and more count as negative (out of range). When take's
result is empty (another axis of data has size 0) no thread runs and the launcher asks the
reference, which raises for a bad index as on the CPU. gather and gather_backward report indices
as take does; gather_backward is written as a gather too: each element adds, in index order and in
the dtype (integers wrap), the g values whose index points at it, so it is exact.

Shapes are the type relation's: errors about shapes (reshape to another size, concatenate of
mismatched tensors, squeezing an axis of size 2, ...) are the type checker's, raised before a
kernel runs; attributes out of range raise when the kernel is generated. squeeze with axis None
has no kernel (lowering names the axes of size 1; the result's rank must be static).
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
from numpy.lib.array_utils import normalize_axis_index, normalize_axis_tuple

from relayish.ops.relations import resolve_newshape
from relayish.ops.shape import _slice_index, value_error

from ..kernels.registry import ArgType, generator
from ..kernels.shape import permutation
from .launch import broadcast_index, element_body, kernel_module, read
from .nn import _sum_type
from .reduce import fail_if, literal, stored, sum_lines

OUT_OF_RANGE = {1: ("IndexError", "take: an index is out of range")}
_LIMIT = 2**62  # slice starts beyond any size are clamped to this (keeps them int64)


def _outs(start: int, stop: int) -> list[str]:
    """The output indices ``o{start} .. o{stop - 1}``."""
    return [f"o{k}" for k in range(start, stop)]


def _gather(args: Sequence[ArgType], out_rank: int, lines: Sequence[str], value: str,
            errors: dict | None = None) -> str:
    """The module of one body storing ``value`` (after ``lines``) into each output element."""
    return kernel_module([element_body("body", args, out_rank, lines, value)], ["body"], errors=errors)


def _position(out_rank: int) -> list[str]:
    """Lines setting ``f`` to the output element's C-order position."""
    return ["f = o0" if out_rank else "f = 0"] + [f"f = f * out.shape[{k}] + o{k}" for k in range(1, out_rank)]


def _unravel(j: int, rank: int, flat: str) -> tuple[list[str], list[str]]:
    """(lines, index): the index ``u0, u1, ...`` into argument ``j`` of C-order position ``flat``."""
    lines = [f"g = {flat}"]
    for k in reversed(range(1, rank)):
        lines += [f"u{k} = g % x{j}.shape[{k}]", f"g = g // x{j}.shape[{k}]"]
    if rank:
        lines.append("u0 = g")
    return lines, [f"u{k}" for k in range(rank)]


def _copy_in_order(args: Sequence[ArgType], out_rank: int) -> str:
    """Element k of the output (in C order) is element k of argument 0: the reshapes."""
    lines, index = _unravel(0, args[0].rank, "f")
    return _gather(args, out_rank, _position(out_rank) + lines, read(0, args[0], index))


@generator("reshape", target="cuda")
def generate_reshape(attrs: dict, args: Sequence[ArgType]) -> str:
    """C-order copy into the shape newshape resolves to (the type relation resolves its codes; the
    kernel needs only the result's rank)."""
    return _copy_in_order(args, len(resolve_newshape(attrs["newshape"], args[0].rank, value_error("reshape"))))


@generator("flatten", target="cuda")
def generate_flatten(attrs: dict, args: Sequence[ArgType]) -> str:
    """C-order copy into (d0, d1 * ... * dn)."""
    if args[0].rank == 0:
        raise ValueError("flatten: needs a tensor of rank >= 1")
    return _copy_in_order(args, 2)


@generator("reshape_like", target="cuda")
def generate_reshape_like(attrs: dict, args: Sequence[ArgType]) -> str:
    """C-order copy into like's shape."""
    return _copy_in_order(args, args[1].rank)


@generator("transpose", target="cuda")
def generate_transpose(attrs: dict, args: Sequence[ArgType]) -> str:
    """Output axis k is x's axis ``axes[k]`` (reversed order for axes None)."""
    (x,) = args
    axes = permutation(attrs["axes"], x.rank)
    index = [""] * x.rank
    for k, a in enumerate(axes):
        index[a] = f"o{k}"
    return _gather(args, x.rank, [], read(0, x, index))


@generator("expand_dims", target="cuda")
def generate_expand_dims(attrs: dict, args: Sequence[ArgType]) -> str:
    """x's index skips the num_newaxis new output axes at the axis position."""
    (x,) = args
    count = attrs["num_newaxis"]
    if count < 0:
        raise ValueError(f"expand_dims: num_newaxis must be >= 0, not {count}")
    at = normalize_axis_index(attrs["axis"], x.rank + 1)
    return _gather(args, x.rank + count, [], read(0, x, _outs(0, at) + _outs(at + count, x.rank + count)))


@generator("squeeze", target="cuda")
def generate_squeeze(attrs: dict, args: Sequence[ArgType]) -> str:
    """x's index is 0 along each squeezed axis (of size 1: the type relation checks)."""
    (x,) = args
    if attrs["axis"] is None:
        raise NotImplementedError("squeeze: a CUDA kernel needs the axes to squeeze (the result's rank must be "
                                  "static; lowering names the axes of size 1)")
    axes = normalize_axis_tuple(attrs["axis"], x.rank)
    index, k = [], 0
    for a in range(x.rank):
        index.append("0" if a in axes else f"o{k}")
        k += a not in axes
    return _gather(args, x.rank - len(axes), [], read(0, x, index))


def _broadcast(args: Sequence[ArgType], out_rank: int) -> str:
    return _gather(args, out_rank, [], read(0, args[0], broadcast_index(0, args[0], out_rank)))


@generator("broadcast_to", target="cuda")
def generate_broadcast_to(attrs: dict, args: Sequence[ArgType]) -> str:
    """NumPy broadcasting: x's size-1 axes read index 0."""
    return _broadcast(args, len(attrs["shape"]))


@generator("broadcast_to_like", target="cuda")
def generate_broadcast_to_like(attrs: dict, args: Sequence[ArgType]) -> str:
    """broadcast_to with like's shape."""
    return _broadcast(args, args[1].rank)


@generator("sum_to", target="cuda")
def generate_sum_to(attrs: dict, args: Sequence[ArgType]) -> str:
    """Each output element sums x over the leading extra axes and over each axis where like has
    size 1 (a loop of 1 where x's size is 1 too, or where like's size is x's)."""
    x, like = args
    extra = x.rank - like.rank
    if extra < 0:
        raise ValueError(f"sum_to: cannot sum a tensor of rank {x.rank} to the larger rank {like.rank}")
    loops = [(f"r{a}", f"x0.shape[{a}]") for a in range(extra)]
    loops += [(f"r{extra + k}", f"(x0.shape[{extra + k}] if x1.shape[{k}] == 1 else 1)") for k in range(like.rank)]
    index = [f"r{a}" for a in range(extra)] + [f"o{k} + r{extra + k}" for k in range(like.rank)]
    return _gather(args, like.rank, sum_lines(x.dtype, read(0, x, index), loops), stored(x.dtype, "acc"))


def _pick(args: Sequence[ArgType], conditions: Sequence[str], index: Sequence[str], after: str = "") -> list[str]:
    """Lines setting ``v`` to argument j at ``index`` for the j whose condition holds (at most one
    does; ``v`` starts as a zero of the dtype so that every path defines it), each test followed by
    ``after`` (formatted with j)."""
    lines = [f"v = {literal(0, args[0].dtype)}"]
    for j, (arg, condition) in enumerate(zip(args, conditions)):
        lines += [f"if {condition}:", f"    v = {read(j, arg, index)}"] + ([after.format(j=j)] if after else [])
    return lines


@generator("concatenate", target="cuda")
def generate_concatenate(attrs: dict, args: Sequence[ArgType]) -> str:
    """Along axis, output position p belongs to the argument whose span holds it; ``k`` runs
    p minus the sizes of the arguments before."""
    rank = args[0].rank
    if rank == 0:
        raise ValueError("concatenate: zero-dimensional arrays cannot be concatenated")
    axis = normalize_axis_index(attrs["axis"], rank)
    index = _outs(0, axis) + ["k"] + _outs(axis + 1, rank)
    lines = [f"k = o{axis}"] + _pick(args, [f"0 <= k < x{j}.shape[{axis}]" for j in range(len(args))], index,
                                     after=f"k = k - x{{j}}.shape[{axis}]")
    return _gather(args, rank, lines, "v")


@generator("stack", target="cuda")
def generate_stack(attrs: dict, args: Sequence[ArgType]) -> str:
    """Output position j along the new axis is argument j."""
    rank = args[0].rank
    axis = normalize_axis_index(attrs["axis"], rank + 1)
    index = _outs(0, axis) + _outs(axis + 1, rank + 1)
    lines = _pick(args, [f"o{axis} == {j}" for j in range(len(args))], index)
    return _gather(args, rank + 1, lines, "v")


@generator("take", target="cuda")
def generate_take(attrs: dict, args: Sequence[ArgType]) -> str:
    """data at the index read from indices (along axis; None: in the flattened data); an index
    outside 0 .. size - 1 is reported (IndexError)."""
    data, indices = args
    axis = attrs["axis"]
    if axis is None:
        out_rank = indices.rank
        size = "1" if data.rank == 0 else "x0.size"
        lines = [f"t = np.int64({read(1, indices, _outs(0, out_rank))})", *fail_if(f"t < 0 or t >= {size}")]
        unravel, index = _unravel(0, data.rank, "t")
        return _gather(args, out_rank, lines + unravel, read(0, data, index), OUT_OF_RANGE)
    axis = normalize_axis_index(axis, data.rank)
    out_rank = data.rank - 1 + indices.rank
    lines = [f"t = np.int64({read(1, indices, _outs(axis, axis + indices.rank))})",
             *fail_if(f"t < 0 or t >= x0.shape[{axis}]")]
    index = _outs(0, axis) + ["t"] + _outs(axis + indices.rank, out_rank)
    return _gather(args, out_rank, lines, read(0, data, index), OUT_OF_RANGE)


def _gather_axis(op: str, data: ArgType, indices: ArgType, axis: int) -> int:
    """gather's axis, normalized; a ValueError unless the indices have data's rank (the relation's rule)."""
    if indices.rank != data.rank:
        raise ValueError(f"{op}: the indices must have the data's rank {data.rank}, not {indices.rank}")
    return normalize_axis_index(axis, data.rank)


@generator("gather", target="cuda")
def generate_gather(attrs: dict, args: Sequence[ArgType]) -> str:
    """data at the index read from indices (at the output position) along axis, at the output
    position along the others; an index outside 0 .. size - 1 is reported (IndexError)."""
    data, indices = args
    axis = _gather_axis("gather", data, indices, attrs["axis"])
    at = _outs(0, data.rank)
    lines = [f"t = np.int64({read(1, indices, at)})", *fail_if(f"t < 0 or t >= x0.shape[{axis}]")]
    at[axis] = "t"
    return _gather(args, data.rank, lines, read(0, data, at), {1: ("IndexError", "gather: an index is out of range")})


@generator("gather_backward", target="cuda")
def generate_gather_backward(attrs: dict, args: Sequence[ArgType]) -> str:
    """Element o of like's shape adds, in index order, g at every index along axis (at o's position
    along the others) that equals o's place, from zero in the dtype (the reference's order and
    roundings: exact); 0 where o lies beyond the indices along another axis. An index outside
    0 .. size - 1 is reported (IndexError)."""
    g, indices, like = args
    axis = _gather_axis("gather_backward", like, indices, attrs["axis"])
    at = _outs(0, like.rank)
    at[axis] = "j"
    covered = " and ".join(f"o{d} < x1.shape[{d}]" for d in range(like.rank) if d != axis) or "True"
    total = _sum_type(g.dtype)
    lines = [f"acc = {total}(0)", f"if {covered}:", f"    for j in range(x1.shape[{axis}]):",
             f"        t = np.int64({read(1, indices, at)})",
             *("        " + line for line in fail_if(f"t < 0 or t >= x2.shape[{axis}]")),
             f"        if t == o{axis}:", f"            acc += {total}({read(0, g, at)})"]
    return _gather(args, like.rank, lines, stored(g.dtype, "acc"),
                   {1: ("IndexError", "gather_backward: an index is out of range")})


def _slice_start(axis: int, part: slice) -> str:
    """Source of ``part``'s first position along ``axis`` of x0, clamped as Python's slices do."""
    step = 1 if part.step is None else part.step
    n = f"x0.shape[{axis}]"
    if part.start is None:
        return "0" if step > 0 else f"{n} - 1"
    start = max(-_LIMIT, min(_LIMIT, part.start))
    if start >= 0:
        return f"min({start}, {n})" if step > 0 else f"min({start}, {n} - 1)"
    return f"max({start} + {n}, 0)" if step > 0 else f"max({start} + {n}, -1)"


@generator("strided_slice", target="cuda")
def generate_strided_slice(attrs: dict, args: Sequence[ArgType]) -> str:
    """Output position p along a sliced axis reads start + p * stride (Python slicing: the
    result's length comes from the type relation, the start is clamped here)."""
    (x,) = args
    parts = _slice_index("strided_slice", x.rank, attrs["begin"], attrs["end"], attrs["strides"], attrs["axes"])
    index = []
    for a, part in enumerate(parts):
        step = 1 if part.step is None else part.step
        index.append(f"o{a}" if part == slice(None) else f"{_slice_start(a, part)} + o{a} * {step}")
    return _gather(args, x.rank, [], read(0, x, index))


@generator("reverse", target="cuda")
def generate_reverse(attrs: dict, args: Sequence[ArgType]) -> str:
    """Output position p along axis reads x's position n - 1 - p there."""
    (x,) = args
    axis = normalize_axis_index(attrs["axis"], x.rank)
    index = [f"x0.shape[{a}] - 1 - o{a}" if a == axis else f"o{a}" for a in range(x.rank)]
    return _gather(args, x.rank, [], read(0, x, index))


@generator("pad", target="cuda")
def generate_pad(attrs: dict, args: Sequence[ArgType]) -> str:
    """x's element where the output position minus the leading pad is inside x, else pad_value."""
    (x,) = args
    widths = attrs["pad_width"]
    if len(widths) != 2 * x.rank:
        raise ValueError(f"pad: pad_width needs {2 * x.rank} numbers for rank {x.rank}, not {len(widths)}")
    if any(p < 0 for p in widths):
        raise ValueError(f"pad: pad_width {widths} has a negative number")
    with np.errstate(all="ignore"):  # inf or nan into an integer dtype converts as the reference's astype
        value = np.asarray(attrs["pad_value"]).astype(x.dtype)[()]
    index = [f"o{a} - {widths[2 * a]}" for a in range(x.rank)]
    inside = " and ".join(f"0 <= {i} < x0.shape[{a}]" for a, i in enumerate(index)) or "True"
    return _gather(args, x.rank, [], f"{read(0, x, index)} if {inside} else {literal(value, x.dtype)}")


@generator("full", target="cuda")
def generate_full(attrs: dict, args: Sequence[ArgType]) -> str:
    """fill_value converted as ``np.full`` converts it, in every element."""
    dtype = attrs["dtype"].to_numpy().name
    if any(d < 0 for d in attrs["shape"]):
        raise ValueError("full: negative dimensions are not allowed")
    with np.errstate(all="ignore"):  # inf or nan into an integer dtype converts as np.full does
        value = np.full((), attrs["fill_value"], dtype=dtype)[()]
    return _gather(args, len(attrs["shape"]), [], literal(value, dtype))


@generator("one_hot", target="cuda")
def generate_one_hot(attrs: dict, args: Sequence[ArgType]) -> str:
    """1 where the last output index equals the index read (as int64), else 0."""
    (indices,) = args
    dtype, depth = attrs["dtype"].to_numpy().name, attrs["depth"]
    if depth < 0:
        raise ValueError(f"one_hot: depth must be >= 0, not {depth}")
    rank = indices.rank
    lines = [f"t = np.int64({read(0, indices, _outs(0, rank))})"]
    return _gather(args, rank + 1, lines, f"{literal(1, dtype)} if t == o{rank} else {literal(0, dtype)}")
