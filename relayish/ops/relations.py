"""Type relations: an operator's result type from its argument types.

Each operator's record names its relation (``OpDef.type_relation``), built here. A relation
is ``relation(arg_types, attrs) -> Type``. The argument types are fully known but may hold
rigid type variables: a dtype of kind BaseType, a shape of kind Shape, symbolic
dimensions. ``attrs`` has every attribute, defaults filled in, in canonical form. A relation
returns the result type or raises ``RelayTypeError`` with a message that names the argument,
the expected and actual types and the conflicting dimension; the checker adds the call's span
and ``@opname: ``. Shapes are computed with ``Dim`` arithmetic, so symbolic results are
canonical (``(n + 2*p - k) // s + 1``).

Arguments are numbered from 1 in messages; dimensions and axes from 0.
"""

from __future__ import annotations

import functools
import math
import operator
import re
from typing import Any, Callable, Iterable, NamedTuple, NoReturn, Sequence

from ..dims import Dim, as_dim, dim_text
from ..errors import RelayTypeError
from ..types import BaseType, Shape, TensorType, TupleType, Type

Relation = Callable[[list[Type], dict[str, Any]], Type]
Dims = tuple[Dim, ...]

# Allowed dtype kinds, as NumPy kind letters (those of relayish.ops.elementwise); None: any.
FLOAT, INT, NUMBER, BOOL = "f", "iu", "iuf", "b"
_KIND_NAMES = {FLOAT: "a floating-point", INT: "an integer", NUMBER: "a numeric", BOOL: "a boolean"}


MAX_RANK = 64  # NumPy's limit on the number of axes

def fail(message: str) -> NoReturn:
    raise RelayTypeError(message)


Fail = Callable[[str], NoReturn]  # raises its message: ``fail``, or a ValueError at run time (``shape.value_error``)


# arguments ------------------------------------------------------------------------------


def check_dtype(dtype: Type, position: int, kinds: str | None) -> None:
    """Reject a concrete dtype outside ``kinds``; a dtype variable is accepted."""
    if kinds is not None and isinstance(dtype, BaseType) and dtype.numpy_kind not in kinds:
        fail(f"argument {position} must have {_KIND_NAMES[kinds]} dtype, not {dtype}")


def tensors(args: Sequence[Type], kinds: str | None = None) -> list[TensorType]:
    """The arguments, each of which must be a tensor with a dtype of ``kinds``."""
    for position, ty in enumerate(args, 1):
        if not isinstance(ty, TensorType):
            fail(f"argument {position} must be a tensor, not {ty}")
        check_dtype(ty.dtype, position, kinds)
    return list(args)


def same_dtype(ts: Sequence[TensorType]) -> Type:
    """The common dtype of ``ts``."""
    first = ts[0].dtype
    for t in ts[1:]:
        if t.dtype != first:
            fail(f"dtypes differ: {first} vs {t.dtype}")
    return first


def dims_of(t: TensorType, position: int) -> Dims:
    """The dimensions of argument ``position``, whose rank must be known."""
    if not isinstance(t.shape, Shape):
        fail(f"argument {position} needs a shape of known rank, not the shape variable {t.shape}")
    return t.shape.dims


def ranked_dims(t: TensorType, position: int, rank: int, at_least: bool = False, layout: str = "") -> Dims:
    """The dimensions of argument ``position``, checking its rank is ``rank`` (or more)."""
    dims = dims_of(t, position)
    if len(dims) < rank or (not at_least and len(dims) != rank):
        need = f">= {rank}" if at_least else f"{rank}" + (f" ({layout})" if layout else "")
        fail(f"argument {position} must have rank {need}, not {len(dims)} ({t.shape})")
    return dims


def differ(x: Dim, y: Dim) -> bool:
    """Whether two dimensions are known to differ: ``?`` differs from none (it is checked when the
    operator runs, on the actual sizes)."""
    return x != y and not x.is_unknown and not y.is_unknown


def consistent(a: Type, b: Type) -> bool:
    """Whether two shapes may be equal: equal, or of one rank with no dimension known to differ."""
    return a == b or isinstance(a, Shape) and isinstance(b, Shape) and a.rank == b.rank \
        and not any(differ(x, y) for x, y in zip(a.dims, b.dims))


def check_same_dims(t: TensorType, position: int, ref: TensorType, skip: int | None = None) -> None:
    """Require argument ``position`` to have the dimensions of argument 1 (``ref``) except ``skip``."""
    if not (isinstance(t.shape, Shape) and isinstance(ref.shape, Shape)):
        fail(f"argument {position} has shape {t.shape}, but argument 1 has shape {ref.shape}")
    dims, ref_dims = t.shape.dims, ref.shape.dims
    if len(dims) != len(ref_dims):
        fail(f"argument {position} has rank {len(dims)} ({t.shape}), but argument 1 has rank {len(ref_dims)} ({ref.shape})")
    for i, (d, r) in enumerate(zip(dims, ref_dims)):
        if i != skip and differ(d, r):
            fail(f"argument {position} {t.shape} differs from argument 1 {ref.shape} in dimension {i}: {dim_text(d)} vs {dim_text(r)}")


def normalize_axis(axis: int, rank: int, where: str | None = None, fail: Fail = fail) -> int:
    """``axis`` in 0 .. rank - 1 (negative counts from the end)."""
    if not -rank <= axis < rank:
        fail(f"axis {axis} is out of range for {where or f'a tensor of rank {rank}'}")
    return axis % rank


def normalize_axes(axes: Sequence[int], rank: int, fail: Fail = fail) -> list[int]:
    """Distinct axes in 0 .. rank - 1, in the order given."""
    result: list[int] = []
    for axis in axes:
        normal = normalize_axis(axis, rank, fail=fail)
        if normal in result:
            fail(f"axes {tuple(axes)} name axis {normal} twice")
        result.append(normal)
    return result


def product(dims: Iterable[Dim]) -> Dim:
    return functools.reduce(operator.mul, dims, Dim.const(1))


def static_shape(values: Sequence[int], name: str) -> Shape:
    """A shape attribute as a Shape; its sizes must not be negative."""
    if any(v < 0 for v in values):
        fail(f"{name} {tuple(values)} has a negative dimension")
    return Shape(*values)


# broadcasting ---------------------------------------------------------------------------


def _is_scalar(shape: Type) -> bool:
    return isinstance(shape, Shape) and shape.rank == 0


def broadcast(a: Type, b: Type) -> Type:
    """NumPy broadcasting of two shapes; a shape variable broadcasts only with itself (or a scalar)."""
    if a == b or _is_scalar(b):
        return a
    if _is_scalar(a):
        return b
    if not (isinstance(a, Shape) and isinstance(b, Shape)):
        fail(f"cannot broadcast {a} with {b}: a shape variable broadcasts only with itself")
    rank = max(a.rank, b.rank)
    one = (Dim.const(1),)
    result = []
    pairs = zip(one * (rank - a.rank) + a.dims, one * (rank - b.rank) + b.dims)
    for i, (x, y) in enumerate(pairs):
        if differ(x, y) and x != 1 and y != 1:
            fail(f"cannot broadcast {a} with {b}: dimension {i}: {dim_text(x)} vs {dim_text(y)}")
        result.append(_broadcast_dim(x, y))
    return Shape(*result)


def _broadcast_dim(x: Dim, y: Dim) -> Dim:
    """One dimension of a broadcast. With ``?`` on one side the result is the other side only
    where that is a size other than 1 (``?`` must then be 1 or equal to it); else ``?``."""
    if x.is_unknown or y.is_unknown:
        known = y if x.is_unknown else x
        return known if known.value is not None and known.value != 1 else Dim.unknown()
    return y if x == 1 else x


def check_broadcasts_to(src: Type, dst: Type, what: str) -> None:
    """Require ``src`` to broadcast to exactly ``dst``; ``what`` opens the error message."""
    if src == dst or _is_scalar(src):
        return
    if not (isinstance(src, Shape) and isinstance(dst, Shape)):
        fail(f"{what}: a shape variable broadcasts only with itself")
    if src.rank > dst.rank:
        fail(f"{what}: rank {src.rank} is larger than {dst.rank}")
    offset = dst.rank - src.rank
    for i, (x, y) in enumerate(zip(src.dims, dst.dims[offset:]), offset):
        if differ(x, y) and x != 1:
            fail(f"{what}: dimension {i}: {dim_text(x)} vs {dim_text(y)}")


# elementwise and broadcasting operators -------------------------------------------------


def unary(kinds: str | None) -> Relation:
    """The argument's own type, its dtype of ``kinds``."""

    def relation(args: list[Type], attrs: dict[str, Any]) -> Type:
        return tensors(args, kinds)[0]

    return relation


def cast(args: list[Type], attrs: dict[str, Any]) -> Type:
    (x,) = tensors(args)
    return TensorType(attrs["dtype"], x.shape)


def cast_like(args: list[Type], attrs: dict[str, Any]) -> Type:
    x, like = tensors(args)
    return TensorType(like.dtype, x.shape)


def broadcasting(kinds: str | None, result: BaseType | None = None) -> Relation:
    """Arguments of one dtype of ``kinds``; the broadcast shape, of ``result`` or that dtype."""

    def relation(args: list[Type], attrs: dict[str, Any]) -> Type:
        ts = tensors(args, kinds)
        dtype = same_dtype(ts)
        return TensorType(result or dtype, functools.reduce(broadcast, [t.shape for t in ts]))

    return relation


def where(args: list[Type], attrs: dict[str, Any]) -> Type:
    cond, a, b = tensors(args)
    check_dtype(cond.dtype, 1, BOOL)
    return TensorType(same_dtype([a, b]), broadcast(broadcast(cond.shape, a.shape), b.shape))


# reductions -----------------------------------------------------------------------------


def reduced_shape(x: TensorType, axis: int | tuple[int, ...] | None, keepdims: bool) -> Shape:
    """The shape left after reducing ``x`` over ``axis`` (None: all axes)."""
    if axis is None and not keepdims:
        return Shape()
    dims = dims_of(x, 1)
    if axis is None:
        axes = range(len(dims))
    else:
        axes = normalize_axes((axis,) if isinstance(axis, int) else axis, len(dims))
    if keepdims:
        return Shape(*(1 if i in axes else d for i, d in enumerate(dims)))
    return Shape(*(d for i, d in enumerate(dims) if i not in axes))


def reduction(kinds: str, result: BaseType | None = None) -> Relation:
    """A reduction of a tensor of ``kinds``; its dtype, or ``result``. An operator with an
    ``exclude`` attribute (argmax, argmin) reduces, when it is set, the axes ``axis`` does not name."""

    def relation(args: list[Type], attrs: dict[str, Any]) -> Type:
        (x,) = tensors(args, kinds)
        axis = excluded_axes(x, attrs["axis"], attrs.get("exclude", False))
        return TensorType(result or x.dtype, reduced_shape(x, axis, attrs["keepdims"]))

    return relation


def ndarray_size(args: list[Type], attrs: dict[str, Any]) -> Type:
    """A scalar of ``dtype`` whatever ``x`` holds; the axes must be distinct axes of ``x``."""
    (x,) = tensors(args)
    reduced_shape(x, attrs["axis"], keepdims=False)
    if attrs["dtype"].numpy_kind not in NUMBER:
        fail(f"dtype must be a numeric type, not {attrs['dtype']}")
    return TensorType(attrs["dtype"], Shape())


def cumsum(args: list[Type], attrs: dict[str, Any]) -> Type:
    """The data's shape (flattened to a vector for axis None) in ``dtype`` (None: the data's),
    which must be numeric: a bool tensor needs a numeric ``dtype``."""
    (x,) = tensors(args)
    dtype = attrs["dtype"] or x.dtype
    if isinstance(dtype, BaseType) and dtype.numpy_kind not in NUMBER:
        fail(f"the sums need a numeric dtype, not {dtype} (give a numeric dtype to count the trues of a bool tensor)")
    dims = dims_of(x, 1)
    if attrs["axis"] is None:
        return TensorType(dtype, Shape(product(dims)))
    normalize_axis(attrs["axis"], len(dims))
    return TensorType(dtype, x.shape)


# shape operators ------------------------------------------------------------------------


class NewDim(NamedTuple):
    """One dimension of reshape's result, as newshape makes it from an input of some rank: ``kind``
    "size" (``size``, written in newshape), "copy" (the product of the input dimensions ``inputs``:
    one for 0 and -2, two for -3), "split" (one of the two parts -4 splits input dimension
    ``inputs[0]`` into: ``size``, the other part ``other``, either -1 for the one inferred from the
    other) or "infer" (-1: the element count over the other dimensions')."""

    kind: str
    size: int = 0
    inputs: tuple[int, ...] = ()
    other: int = 0


def resolve_newshape(newshape: Sequence[int], rank: int, fail: Fail) -> list[NewDim]:
    """newshape read as TVM Relay reads it against an input of ``rank``: each code stands at the
    input dimension after those the codes before it used (a size, 0, -1 and -4 use one, -3 two,
    -2 all that are left); checks the codes and the input dimensions they use."""
    out: list[NewDim] = []
    used = 0  # input dimensions used so far
    position = 0

    def use(count: int, what: str) -> tuple[int, ...]:
        if used + count > rank:
            fail(f"newshape[{position}] is {newshape[position]}, which {what} input dimension"
                 f"{'s' * (count > 1)} {' and '.join(map(str, range(used, used + count)))}, but the input has rank {rank}")
        return tuple(range(used, used + count))

    while position < len(newshape):
        value = newshape[position]
        width = 1  # input dimensions this code uses
        if value > 0:
            out.append(NewDim("size", value))
        elif value == 0:
            out.append(NewDim("copy", inputs=use(1, "copies")))
        elif value == -1:
            if any(d.kind == "infer" for d in out):
                fail(f"newshape {tuple(newshape)} has more than one -1")
            out.append(NewDim("infer"))
        elif value == -2:
            out += [NewDim("copy", inputs=(i,)) for i in range(used, rank)]
            width = max(rank - used, 0)
        elif value == -3:
            out.append(NewDim("copy", inputs=use(2, "merges")))
            width = 2
        elif value == -4:
            parts = tuple(newshape[position + 1:position + 3])
            if len(parts) < 2 or not all(p == -1 or p > 0 for p in parts) or parts == (-1, -1):
                fail(f"newshape[{position}] is -4, which must be followed by the two sizes it splits an input "
                     f"dimension into (one of them may be -1), not {parts}")
            inputs = use(1, "splits")
            out += [NewDim("split", parts[0], inputs, parts[1]), NewDim("split", parts[1], inputs, parts[0])]
            position += 2
        else:
            fail(f"newshape {tuple(newshape)} has {value}, which is neither a size nor one of the codes 0, -1, -2, "
                 "-3 and -4")
        used += width
        position += 1
    return out


def reshaped(newshape: Sequence[int], dims: Sequence[Dim | int], fail: Fail) -> list[Dim | int]:
    """The dimensions of reshape's result for input dimensions ``dims`` (Dims, symbolic or not,
    or ints: the same arithmetic), checked: each -4 splits its input dimension exactly, a -1 is
    inferred by exact division and the element count is kept."""
    out: list[Dim | int | None] = []
    for d in resolve_newshape(newshape, len(dims), fail):
        if d.kind == "size":
            out.append(d.size)
        elif d.kind == "copy":
            out.append(functools.reduce(operator.mul, (dims[i] for i in d.inputs)))
        elif d.kind == "split":
            whole = dims[d.inputs[0]]
            part = whole // d.other if d.size == -1 else d.size
            other = whole // d.size if d.other == -1 else d.other
            if differ(as_dim(part * other), as_dim(whole)):
                fail(f"-4 cannot split dimension {d.inputs[0]} ({dim_text(as_dim(whole))}) of {Shape(*dims)} into "
                     f"({d.size}, {d.other})")
            out.append(part)
        else:
            out.append(None)
    total = functools.reduce(operator.mul, dims, 1)
    known = functools.reduce(operator.mul, (d for d in out if d is not None), 1)
    if any(d is None for d in out):
        if known == 0:
            fail(f"cannot infer the -1 in newshape {tuple(newshape)} for {Shape(*dims)}: the other dimensions hold 0 "
                 "elements")
        inferred = total // known
        if differ(as_dim(inferred * known), as_dim(total)):
            total_text, known_text = dim_text(as_dim(total)), dim_text(as_dim(known))
            fail(f"cannot reshape {Shape(*dims)} ({total_text} elements) to {tuple(newshape)}: "
                 f"{total_text} is not a multiple of {known_text}")
        return [inferred if d is None else d for d in out]
    if differ(as_dim(known), as_dim(total)):
        fail(f"cannot reshape {Shape(*dims)} ({dim_text(as_dim(total))} elements) to {Shape(*out)} "
             f"({dim_text(as_dim(known))} elements)")
    return out


def reshape(args: list[Type], attrs: dict[str, Any]) -> Type:
    """newshape's sizes and codes (``resolve_newshape``); symbolic dimensions are copied, merged
    (a product) and split (by exact division)."""
    (x,) = tensors(args)
    return TensorType(x.dtype, Shape(*reshaped(attrs["newshape"], dims_of(x, 1), fail)))


def dyn_reshape(args: list[Type], attrs: dict[str, Any]) -> Type:
    """Data's dtype, of rank newshape's length (which must be static); every dimension is ``?``,
    since only newshape's values say it, except the one of a rank-1 result: data's element count,
    the only size a reshape to one dimension can give."""
    data, newshape = tensors(args)
    check_dtype(newshape.dtype, 2, INT)
    (length,) = ranked_dims(newshape, 2, 1, layout="a vector of sizes")
    rank = length.value
    if rank is None:
        fail(f"argument 2 (newshape) needs a static length, the result's rank, not {dim_text(length)}")
    if rank > MAX_RANK:
        fail(f"argument 2 (newshape) has {rank} elements, but tensors have at most {MAX_RANK} axes")
    if rank == 1 and isinstance(data.shape, Shape):
        return TensorType(data.dtype, Shape(product(data.shape.dims)))
    return TensorType(data.dtype, Shape(*[Dim.unknown()] * rank))


def flatten(args: list[Type], attrs: dict[str, Any]) -> Type:
    (x,) = tensors(args)
    dims = ranked_dims(x, 1, 1, at_least=True)
    return TensorType(x.dtype, Shape(dims[0], product(dims[1:])))


def transpose(args: list[Type], attrs: dict[str, Any]) -> Type:
    (x,) = tensors(args)
    dims = dims_of(x, 1)
    axes = attrs["axes"]
    if axes is None:
        order = list(reversed(range(len(dims))))
    elif len(axes) != len(dims):
        fail(f"axes {axes} is not a permutation of the {len(dims)} axes of {x.shape}")
    else:
        order = normalize_axes(axes, len(dims))
    return TensorType(x.dtype, Shape(*(dims[i] for i in order)))


def expand_dims(args: list[Type], attrs: dict[str, Any]) -> Type:
    (x,) = tensors(args)
    dims = dims_of(x, 1)
    count = attrs["num_newaxis"]
    if not 0 <= count <= MAX_RANK - len(dims):
        fail(f"num_newaxis must be between 0 and {MAX_RANK - len(dims)} (tensors have at most {MAX_RANK} axes), not {count}")
    at = normalize_axis(attrs["axis"], len(dims) + 1, f"a new axis in a tensor of rank {len(dims)}")
    return TensorType(x.dtype, Shape(*dims[:at], *(1,) * count, *dims[at:]))


def squeeze(args: list[Type], attrs: dict[str, Any]) -> Type:
    """Only dimensions known to be 1 are squeezed; without axes every dimension must be static."""
    (x,) = tensors(args)
    dims = dims_of(x, 1)
    axis = attrs["axis"]
    if axis is None:
        for i, d in enumerate(dims):
            if d.value is None:
                fail(f"squeeze without axis needs static dimensions, but dimension {i} of {x.shape} is "
                     f"{dim_text(d)}: name the axes to squeeze")
        axes = [i for i, d in enumerate(dims) if d == 1]
    else:
        axes = normalize_axes((axis,) if isinstance(axis, int) else axis, len(dims))
        for i in axes:
            if dims[i] != 1:
                fail(f"cannot squeeze dimension {i} of {x.shape}: its size is {dim_text(dims[i])}, not 1")
    return TensorType(x.dtype, Shape(*(d for i, d in enumerate(dims) if i not in axes)))


def broadcast_to(args: list[Type], attrs: dict[str, Any]) -> Type:
    (x,) = tensors(args)
    target = static_shape(attrs["shape"], "shape")
    check_broadcasts_to(x.shape, target, f"cannot broadcast {x.shape} to {target}")
    return TensorType(x.dtype, target)


def broadcast_to_like(args: list[Type], attrs: dict[str, Any]) -> Type:
    x, like = tensors(args)
    check_broadcasts_to(x.shape, like.shape, f"cannot broadcast {x.shape} to {like.shape}")
    return TensorType(x.dtype, like.shape)


def sum_to(args: list[Type], attrs: dict[str, Any]) -> Type:
    """``like``'s shape, which must broadcast to x's; the dtype stays x's (like's, when equal)."""
    x, like = tensors(args)
    check_broadcasts_to(like.shape, x.shape, f"cannot sum {x.shape} to {like.shape}, which does not broadcast to it")
    return TensorType(x.dtype, like.shape)


def concatenate(args: list[Type], attrs: dict[str, Any]) -> Type:
    ts = tensors(args)
    dtype = same_dtype(ts)
    dims = dims_of(ts[0], 1)
    axis = normalize_axis(attrs["axis"], len(dims))
    for position, t in enumerate(ts[1:], 2):
        check_same_dims(t, position, ts[0], skip=axis)
    joined = sum((t.shape.dims[axis] for t in ts[1:]), dims[axis])
    return TensorType(dtype, Shape(*dims[:axis], joined, *dims[axis + 1:]))


def stack(args: list[Type], attrs: dict[str, Any]) -> Type:
    ts = tensors(args)
    dtype = same_dtype(ts)
    dims = dims_of(ts[0], 1)
    for position, t in enumerate(ts[1:], 2):
        check_same_dims(t, position, ts[0])
    at = normalize_axis(attrs["axis"], len(dims) + 1, f"a new axis in a tensor of rank {len(dims)}")
    return TensorType(dtype, Shape(*dims[:at], len(ts), *dims[at:]))


def taken_shape(data: TensorType, data_position: int, indices: TensorType, axis: int | None) -> Type:
    """The shape of ``take(data, indices, axis)``; the indices are argument 2 and integers."""
    check_dtype(indices.dtype, 2, INT)
    if axis is None:
        return indices.shape
    dims = dims_of(data, data_position)
    axis = normalize_axis(axis, len(dims))
    return Shape(*dims[:axis], *dims_of(indices, 2), *dims[axis + 1:])


TAKE_MODES = ("raise", "clip", "wrap")


def check_take_mode(mode: str, fail: Fail) -> None:
    """take's mode: raise, clip or wrap (TVM Relay's, whose default is clip)."""
    if mode not in TAKE_MODES:
        fail(f"mode must be one of {', '.join(map(repr, TAKE_MODES))}, not {mode!r}")


def take(args: list[Type], attrs: dict[str, Any]) -> Type:
    data, indices = tensors(args)
    check_take_mode(attrs["mode"], fail)
    return TensorType(data.dtype, taken_shape(data, 1, indices, attrs["axis"]))


def check_gathered(data: TensorType, data_position: int, indices: TensorType, axis: int) -> None:
    """``gather``'s rule: integer indices (argument 2) of data's rank, and along every axis but
    ``axis`` an index dimension at most data's (equal, or both static): TVM's docs ask for equal
    ones, its kernel reads the leading part of a larger data dimension, as torch.gather does."""
    check_dtype(indices.dtype, 2, INT)
    dims, index_dims = dims_of(data, data_position), dims_of(indices, 2)
    if len(index_dims) != len(dims):
        fail(f"argument 2 {indices.shape} must have the rank {len(dims)} of argument {data_position} "
             f"{data.shape}, not {len(index_dims)}")
    axis = normalize_axis(axis, len(dims))
    for i, (k, n) in enumerate(zip(index_dims, dims)):
        if i != axis and k != n and not (k.value is not None and n.value is not None and k.value <= n.value):
            fail(f"dimension {i} of argument 2 {indices.shape} must be at most argument {data_position}'s "
                 f"{dim_text(n)} (only along axis {axis} may it be larger), not {dim_text(k)}")


def gather(args: list[Type], attrs: dict[str, Any]) -> Type:
    """data's dtype, the indices' shape."""
    data, indices = tensors(args)
    check_gathered(data, 1, indices, attrs["axis"])
    return TensorType(data.dtype, indices.shape)


def split_problem(size: int, sections: int | None, indices: tuple[int, ...] | None) -> str | None:
    """Why ``split`` cannot cut an axis of ``size`` into ``sections`` equal parts or at the points
    ``indices``, or None. As in Relay, the sections must divide the size, and the points must
    rise strictly from above 0 to below the size (no part is empty, none reaches past the end)."""
    if (sections is None) == (indices is None):
        return "give exactly one of the attributes sections and indices"
    if sections is not None:
        if sections < 1:
            return f"sections must be >= 1, not {sections}"
        return None if size % sections == 0 else f"{sections} sections do not divide the size {size}"
    edges = (0, *indices, size)
    if any(a >= b for a, b in zip(edges, edges[1:])):
        return f"the points {indices} must rise strictly from above 0 to below the size {size} (no part empty)"
    return None


def split_edges(size: int, sections: int | None, indices: tuple[int, ...] | None) -> list[int]:
    """Where each of ``split``'s parts begins, then ``size`` (``split_problem`` found nothing)."""
    if sections is not None:
        return [size // sections * k for k in range(sections + 1)]
    return [0, *indices, size]


def split(args: list[Type], attrs: dict[str, Any]) -> Type:
    """A tuple of the parts of x along ``axis``, whose size must be static."""
    (x,) = tensors(args)
    dims = dims_of(x, 1)
    axis = normalize_axis(attrs["axis"], len(dims))
    size = dims[axis].value
    if size is None:
        fail(f"split dimension {axis} of {x.shape} must have a static size, not {dim_text(dims[axis])}")
    problem = split_problem(size, attrs["sections"], attrs["indices"])
    if problem:
        fail(f"dimension {axis} of {x.shape}: {problem}")
    edges = split_edges(size, attrs["sections"], attrs["indices"])
    return TupleType([TensorType(x.dtype, Shape(*dims[:axis], b - a, *dims[axis + 1:]))
                      for a, b in zip(edges, edges[1:])])


def _slice_length(bounds: tuple[int, int, int]) -> int:
    """``len(range(*bounds))`` without building a range (sizes may exceed a machine word)."""
    start, stop, step = bounds
    if step > 0:
        return max(0, (stop - start + step - 1) // step)
    return max(0, (start - stop - step - 1) // -step)


SLICE_MODES = ("end", "size")
SliceColumn = tuple[int, "int | None", "int | None", int]  # (axis, begin, end, stride); None: Python's default


def slice_columns(begin: Sequence[int], end: Sequence[int], strides: Sequence[int] | None,
                  axes: Sequence[int] | None, rank: int, fail: Fail) -> list[SliceColumn]:
    """strided_slice's lists as one column per sliced axis: the axes ``axes`` names (None: the
    leading ones, as many as the longest list has entries); where a shorter list has no entry,
    begin and end are None (Python's: from the start, to the end, in the stride's direction) and
    the stride 1. Checks the axes and that no stride is 0."""
    strides = () if strides is None else strides
    longest = max(len(begin), len(end), len(strides))
    if axes is None:
        if longest > rank:
            fail(f"begin, end and strides have up to {longest} entries, more than the {rank} axes of the tensor")
        axes = tuple(range(longest))
    elif longest > len(axes):
        fail(f"begin, end and strides have lengths {len(begin)}, {len(end)} and {len(strides)}: more entries "
             f"than axes {tuple(axes)} names")
    columns: list[SliceColumn] = []
    for k, axis in enumerate(normalize_axes(axes, rank, fail)):
        step = strides[k] if k < len(strides) else 1
        if step == 0:
            fail(f"the stride of axis {axis} is 0")
        columns.append((axis, begin[k] if k < len(begin) else None, end[k] if k < len(end) else None, step))
    return columns


def size_bounds(begin: int | None, size: int | None, n: int) -> tuple[int, int]:
    """(start, stop) of a slice in size mode along an axis of ``n``: from ``begin`` (counted from
    the end when negative, then clamped into the axis, as Python clamps) ``size`` elements, all
    the rest for a negative size (or none given)."""
    start = 0 if begin is None else min(max(begin + n if begin < 0 else begin, 0), n)
    return start, n if size is None or size < 0 else min(start + size, n)


def whole_axis(column: SliceColumn, size_mode: bool) -> bool:
    """Whether a column slices its axis whole, in order: no begin (or 0), no end (in size mode a
    negative size), stride 1. Such an axis may have a symbolic size."""
    _, start, stop, step = column
    if size_mode:
        return start in (None, 0) and (stop is None or stop < 0)
    return start in (None, 0) and stop is None and step == 1


def sliced_shape(x: TensorType, position: int, attrs: dict[str, Any], size_mode: bool = False) -> Shape:
    """Python slicing (with its clamping), or size mode's (strides ignored), on each sliced axis,
    which must have a static size unless it is sliced whole."""
    dims = list(dims_of(x, position))
    strides = None if size_mode else attrs["strides"]
    for column in slice_columns(attrs["begin"], attrs["end"], strides, attrs["axes"], len(dims), fail):
        if whole_axis(column, size_mode):
            continue
        axis, start, stop, step = column
        size = dims[axis].value
        if size is None:
            fail(f"sliced dimension {axis} of {x.shape} must have a static size, not {dim_text(dims[axis])}")
        if size_mode:
            start, stop = size_bounds(start, stop, size)
        dims[axis] = Dim.const(_slice_length(slice(start, stop, step).indices(size)))
    return Shape(*dims)


def check_slice_mode(mode: str, fail: Fail) -> None:
    """strided_slice's slice_mode: end (Python's slices) or size (TVM Relay's)."""
    if mode not in SLICE_MODES:
        fail(f"slice_mode must be one of {', '.join(map(repr, SLICE_MODES))}, not {mode!r}")


def strided_slice(args: list[Type], attrs: dict[str, Any]) -> Type:
    (x,) = tensors(args)
    check_slice_mode(attrs["slice_mode"], fail)
    return TensorType(x.dtype, sliced_shape(x, 1, attrs, attrs["slice_mode"] == "size"))


def reverse(args: list[Type], attrs: dict[str, Any]) -> Type:
    """x's type; ``axis`` an axis of x (rank >= 1)."""
    (x,) = tensors(args)
    normalize_axis(attrs["axis"], len(dims_of(x, 1)))
    return x


PAD_MODES = ("constant", "edge", "reflect")


def padded_dims(dims: Sequence[Dim], widths: Sequence[int], mode: str, fail: Fail) -> list[Dim]:
    """pad's result dimensions for input dimensions ``dims``, checked: 2 * rank widths, none
    negative; edge padding repeats the end elements of an axis (which must not be empty),
    reflect mirrors the axis about them without repeating them (each width below its size, as
    Relay), and both need a static size on each axis they pad; constant padding takes any."""
    if mode not in PAD_MODES:
        fail(f"pad_mode must be one of {', '.join(map(repr, PAD_MODES))}, not {mode!r}")
    if len(widths) != 2 * len(dims):
        fail(f"pad_width needs {2 * len(dims)} numbers for rank {len(dims)}, not {len(widths)}")
    if any(w < 0 for w in widths):
        fail(f"pad_width {tuple(widths)} has a negative number")
    out = []
    for i, d in enumerate(dims):
        before, after = widths[2 * i], widths[2 * i + 1]
        if mode != "constant" and (before or after):
            where = f"{mode} padding of dimension {i} of {Shape(*dims)} by ({before}, {after})"
            if d.value is None:
                fail(f"{where} needs a static size, not {dim_text(d)}")
            if mode == "edge" and d.value == 0:
                fail(f"{where} repeats the end elements of the dimension, which is empty")
            if mode == "reflect" and max(before, after) >= d.value:
                fail(f"{where} needs each width below the size {d.value}")
        out.append(d + before + after)
    return out


def pad(args: list[Type], attrs: dict[str, Any]) -> Type:
    (x,) = tensors(args)
    return TensorType(x.dtype, Shape(*padded_dims(dims_of(x, 1), attrs["pad_width"], attrs["pad_mode"], fail)))


def shaped(args: list[Type], attrs: dict[str, Any]) -> Type:
    """A tensor of the static ``shape`` and ``dtype`` (zeros, ones)."""
    return TensorType(attrs["dtype"], static_shape(attrs["shape"], "shape"))


def check_fill(fill_shapes: Sequence[Type], position: int, fill_value: float | None, required: bool,
               fail: Fail = fail) -> None:
    """The fill value given once: as argument ``position`` (``fill_shapes`` has its shape), a
    scalar of rank 0 of any dtype, or as the attribute ``fill_value`` (full, full_like)."""
    if fill_shapes:
        if fill_value is not None:
            fail(f"the fill value is given twice: as argument {position} and as the attribute fill_value "
                 f"{fill_value}; give one")
        if not _is_scalar(fill_shapes[0]):
            fail(f"argument {position} (the fill value) must be a scalar of rank 0, not of shape {fill_shapes[0]}")
    elif required and fill_value is None:
        fail(f"needs a fill value: the attribute fill_value or a scalar tensor as argument {position}")


def full(args: list[Type], attrs: dict[str, Any]) -> Type:
    check_fill([t.shape for t in tensors(args)], 1, attrs["fill_value"], required=False)
    return shaped(args, attrs)


def full_like(args: list[Type], attrs: dict[str, Any]) -> Type:
    x, *fills = tensors(args)
    check_fill([t.shape for t in fills], 2, attrs["fill_value"], required=True)
    return x


def one_hot(args: list[Type], attrs: dict[str, Any]) -> Type:
    """indices' dimensions with the depth inserted at ``axis`` (-1: last)."""
    (indices,) = tensors(args, INT)
    depth = attrs["depth"]
    if depth < 0:
        fail(f"depth must be >= 0, not {depth}")
    dims = dims_of(indices, 1)
    at = normalize_axis(attrs["axis"], len(dims) + 1, f"the depth axis of a result of rank {len(dims) + 1}")
    return TensorType(attrs["dtype"], Shape(*dims[:at], depth, *dims[at:]))


# linear algebra and neural networks -----------------------------------------------------


def matmul(args: list[Type], attrs: dict[str, Any]) -> Type:
    """Matrix product of the last two axes; the leading (batch) axes broadcast."""
    a, b = tensors(args, NUMBER)
    dtype = same_dtype([a, b])
    da = ranked_dims(a, 1, 2, at_least=True)
    db = ranked_dims(b, 2, 2, at_least=True)
    if differ(da[-1], db[-2]):
        fail(f"inner dimensions differ: {dim_text(da[-1])} vs {dim_text(db[-2])} ({a.shape} @ {b.shape})")
    try:
        batch = broadcast(Shape(*da[:-2]), Shape(*db[:-2]))
    except RelayTypeError as err:
        fail(f"batch dimensions: {err.message}")
    return TensorType(dtype, Shape(*batch.dims, da[-2], db[-1]))


def dense(args: list[Type], attrs: dict[str, Any]) -> Type:
    """x (..., in) with weight (units, in) and optional bias (units,) gives (..., units)."""
    ts = tensors(args, NUMBER)
    dtype = same_dtype(ts)
    x, w = ts[0], ts[1]
    dx = ranked_dims(x, 1, 1, at_least=True)
    units, features = ranked_dims(w, 2, 2)
    if differ(dx[-1], features):
        fail(f"dense expects {dim_text(features)} input features (weight {w.shape}) "
             f"but the input has {dim_text(dx[-1])} ({x.shape})")
    if len(ts) == 3 and not consistent(ts[2].shape, Shape(units)):
        fail(f"the bias must have shape {Shape(units)} for {dim_text(units)} units (weight {w.shape}), not {ts[2].shape}")
    return TensorType(dtype, Shape(*dx[:-1], units))


def check_at_least(name: str, values: Sequence[int], low: int) -> None:
    if min(values) < low:
        fail(f"{name} {tuple(values)} must be >= {low}")


def windows(
    x: TensorType, kernel: Sequence[Dim | int], strides: Sequence[int], padding: Sequence[int],
    dilation: Sequence[int], word: str,
) -> tuple[Dim, Dim]:
    """Output height and width of sliding a ``kernel`` window over NCHW ``x``; ``padding`` is
    (height, width), or (top, left, bottom, right)."""
    check_at_least("strides", strides, 1)
    check_at_least("padding", padding, 0)
    check_at_least("dilation", dilation, 1)
    sides = padding if len(padding) == 4 else (*padding, *padding)
    out = []
    for axis, size, k, s, before, after, d in zip((2, 3), x.shape.dims[2:], kernel, strides, sides[:2], sides[2:], dilation):
        padded = size + before + after
        span = d * (as_dim(k) - 1) + 1
        if padded.value is not None and span.value is not None and span.value > padded.value:
            fail(f"{word} {dim_text(span)} is larger than the padded input {dim_text(padded)} in dimension {axis}")
        out.append((padded - span) // s + 1)
    return out[0], out[1]


def conv_shape(x: TensorType, x_position: int, w: TensorType, w_position: int, attrs: dict[str, Any],
               groups: int = 1) -> Shape:
    """NCHW x with OIHW w gives (N, O, OH, OW); with groups, w is (O, C / groups, KH, KW)."""
    n, channels, _, _ = ranked_dims(x, x_position, 4, layout="NCHW")
    out_channels, in_channels, kh, kw = ranked_dims(w, w_position, 4, layout="OIHW")
    grouped_weight(groups, w, w_position, "output")
    if differ(channels, in_channels * groups):
        grouping = f", groups {groups}" if groups != 1 else ""
        fail(f"conv2d expects {dim_text(in_channels * groups)} input channels (weight {w.shape}{grouping}) "
             f"but the input has {dim_text(channels)} ({x.shape})")
    spatial = windows(x, (kh, kw), attrs["strides"], attrs["padding"], attrs["dilation"], "kernel")
    return Shape(n, out_channels, *spatial)


def grouped_weight(groups: int, w: TensorType, position: int, split: str) -> None:
    """groups >= 1; beyond 1 the weight's channel counts (its dimensions 0 and 1) must be static
    (the lowering takes each group's channels) and groups must divide dimension 0, its ``split``
    channels."""
    if groups < 1:
        fail(f"groups must be >= 1, not {groups}")
    if groups == 1:
        return
    counts = [d.value for d in w.shape.dims[:2]]
    if None in counts:
        fail(f"argument {position} {w.shape} needs static channel counts (dimensions 0 and 1) with groups {groups}")
    if counts[0] % groups:
        fail(f"groups {groups} must divide the {counts[0]} {split} channels of argument {position} {w.shape}")


def conv_dtype(x: TensorType, w: TensorType, attrs: dict[str, Any]) -> Type:
    """The result's dtype: out_dtype (numeric; the inputs are converted to it, so theirs may
    differ), else the common dtype of x and w."""
    out_dtype = attrs["out_dtype"]
    if out_dtype is None:
        return same_dtype([x, w])
    if out_dtype.numpy_kind not in NUMBER:
        fail(f"out_dtype must be a numeric type, not {out_dtype}")
    return out_dtype


def conv2d(args: list[Type], attrs: dict[str, Any]) -> Type:
    x, w = tensors(args, NUMBER)
    return TensorType(conv_dtype(x, w, attrs), conv_shape(x, 1, w, 2, attrs, attrs["groups"]))


def transposed_shape(g: TensorType, g_position: int, w: TensorType, w_position: int, attrs: dict[str, Any]) -> Shape:
    """The (N, C, H, W) that scattering NCHW g (N, O, OH, OW) through each tap of w (O, C, KH, KW)
    fills: ``(oh - 1) * s - 2p + d * (k - 1) + output_padding + 1`` along each axis, output_padding
    (>= 0, below the stride) picking one of the input sizes that conv2d maps to OH. An empty g image
    has none (conv2d gives no empty image)."""
    n, channels, _, _ = dims = ranked_dims(g, g_position, 4, layout="NCHW")
    w_channels, out_channels, kh, kw = ranked_dims(w, w_position, 4)
    if differ(channels, w_channels):
        fail(f"argument {g_position} has {dim_text(channels)} channels ({g.shape}), but dimension 0 of argument "
             f"{w_position} {w.shape} is {dim_text(w_channels)}")
    strides, padding, dilation, extra = (attrs[k] for k in ("strides", "padding", "dilation", "output_padding"))
    if any(k.value is not None and k.value < 1 for k in (kh, kw)):
        fail(f"the kernel {dim_text(kh)} x {dim_text(kw)} must be at least 1 x 1")
    check_at_least("strides", strides, 1)
    check_at_least("padding", padding, 0)
    check_at_least("dilation", dilation, 1)
    if not all(0 <= o < s for o, s in zip(extra, strides)):
        fail(f"output_padding {tuple(extra)} must be >= 0 and below the strides {tuple(strides)}")
    sizes = []
    for axis, size, k, s, p, d, o in zip((2, 3), dims[2:], (kh, kw), strides, padding, dilation, extra):
        if size.value == 0:
            fail(f"argument {g_position} {g.shape} has an empty image (dimension {axis})")
        out = (size - 1) * s - 2 * p + d * (as_dim(k) - 1) + o + 1
        if out.value is not None and out.value < 0:
            fail(f"padding {tuple(padding)} leaves a negative output size {dim_text(out)} in dimension {axis}")
        sizes.append(out)
    return Shape(n, out_channels, *sizes)


def conv2d_transpose(args: list[Type], attrs: dict[str, Any]) -> Type:
    """x (N, C, H, W) and w (C, O / groups, KH, KW) give (N, O, ...) of ``transposed_shape``."""
    x, w = tensors(args, NUMBER)
    dtype = conv_dtype(x, w, attrs)
    n, channels, h, width = transposed_shape(x, 1, w, 2, attrs).dims
    grouped_weight(attrs["groups"], w, 2, "input")
    return TensorType(dtype, Shape(n, channels * attrs["groups"], h, width))


def pooled_shape(x: TensorType, position: int, attrs: dict[str, Any]) -> Shape:
    """Pooling of NCHW x over pool_size windows (strides None: pool_size)."""
    n, c, _, _ = ranked_dims(x, position, 4, layout="NCHW")
    size = attrs["pool_size"]
    check_at_least("pool_size", size, 1)
    spatial = windows(x, size, attrs["strides"] or size, attrs["padding"], (1, 1), "window")
    return Shape(n, c, *spatial)


def pool(kinds: str) -> Relation:
    def relation(args: list[Type], attrs: dict[str, Any]) -> Type:
        (x,) = tensors(args, kinds)
        return TensorType(x.dtype, pooled_shape(x, 1, attrs))

    return relation


def softmax(args: list[Type], attrs: dict[str, Any]) -> Type:
    (x,) = tensors(args, FLOAT)
    normalize_axis(attrs["axis"], len(dims_of(x, 1)))
    return x


def softmax_cross_entropy(args: list[Type], attrs: dict[str, Any]) -> Type:
    logits, labels = tensors(args, FLOAT)
    dtype = same_dtype([logits, labels])
    if labels.shape != logits.shape:
        check_same_dims(labels, 2, logits)
    normalize_axis(attrs["axis"], len(dims_of(logits, 1)))
    return TensorType(dtype, Shape())


# gradient operators ---------------------------------------------------------------------
# Each takes the gradient g (argument 1) of a forward operator's result; g must have exactly the
# shape that operator gives. A ``like`` argument supplies a shape only: its dtype is free.


def check_gradient_shape(g: TensorType, expected: Type, forward: str, position: int = 1) -> None:
    """Require argument ``position`` (the gradient) to have the ``forward`` result's shape ``expected``."""
    if g.shape == expected:
        return
    if not (isinstance(g.shape, Shape) and isinstance(expected, Shape)):
        fail(f"argument {position} has shape {g.shape}, but the {forward} result has shape {expected}")
    if g.shape.rank != expected.rank:
        fail(f"argument {position} has rank {g.shape.rank} ({g.shape}), but the {forward} result has rank "
             f"{expected.rank} ({expected})")
    for i, (d, e) in enumerate(zip(g.shape.dims, expected.dims)):
        if differ(d, e):
            fail(f"argument {position} {g.shape} differs from the {forward} result {expected} in dimension {i}: "
                 f"{dim_text(d)} vs {dim_text(e)}")


def reshape_like(args: list[Type], attrs: dict[str, Any]) -> Type:
    """x's dtype and like's shape; both shapes must hold the same number of elements."""
    x, like = tensors(args)
    if x.shape != like.shape:
        total, target = product(dims_of(x, 1)), product(dims_of(like, 2))
        if differ(total, target):
            fail(f"cannot reshape {x.shape} ({dim_text(total)} elements) to the shape of argument 2, "
                 f"{like.shape} ({dim_text(target)} elements)")
    return TensorType(x.dtype, like.shape)


def conv_backward(operand_is_weight: bool) -> Relation:
    """g (N, O, OH, OW), conv2d's other operand (argument 2) and like (argument 3), whose shape the
    result has: the input's gradient (N, C, H, W) when argument 2 is the weight (O, C, KH, KW),
    the weight's when argument 2 is the input. The input's gradient may leave out like: then its
    shape is ``transposed_shape``'s."""

    def relation(args: list[Type], attrs: dict[str, Any]) -> Type:
        g, operand, *likes = tensors(args)
        check_dtype(g.dtype, 1, NUMBER)
        check_dtype(operand.dtype, 2, NUMBER)
        dtype = same_dtype([g, operand])
        if not likes:  # conv2d_backward_input without like: conv2d_transpose's shape
            return TensorType(dtype, transposed_shape(g, 1, operand, 2, attrs))
        if operand_is_weight and attrs["output_padding"] != (0, 0):
            fail(f"output_padding {attrs['output_padding']} is for the form without like (argument 3 gives the shape)")
        (like,) = likes
        sides = (like, 3, operand, 2) if operand_is_weight else (operand, 2, like, 3)
        check_gradient_shape(g, conv_shape(*sides, attrs), "conv2d")
        return TensorType(dtype, like.shape)

    return relation


def pool_backward(kinds: str, forward: str) -> Relation:
    """g of the pooled shape and the pool's input x (argument 2) give x's type."""

    def relation(args: list[Type], attrs: dict[str, Any]) -> Type:
        g, x = tensors(args, kinds)
        same_dtype([g, x])
        check_gradient_shape(g, pooled_shape(x, 2, attrs), forward)
        return x

    return relation


def shifted(relation: Relation, args: list[Type], attrs: dict[str, Any]) -> Type:
    """``relation`` on arguments 2, 3, ... of a call, its messages numbering them so."""
    try:
        return relation(args, attrs)
    except RelayTypeError as err:
        fail(re.sub(r"argument (\d+)", lambda m: f"argument {int(m.group(1)) + 1}", err.message))


def concatenate_backward(args: list[Type], attrs: dict[str, Any]) -> Type:
    """g of the joined shape of the parts (arguments 2, 3, ...) gives part ``index``'s shape."""
    g, *parts = tensors(args)
    if not 0 <= attrs["index"] < len(parts):
        fail(f"index {attrs['index']} is out of range for {len(parts)} parts")
    joined = shifted(concatenate, parts, attrs)
    check_gradient_shape(g, joined.shape, "concatenate")
    return TensorType(g.dtype, parts[attrs["index"]].shape)


def pad_backward(args: list[Type], attrs: dict[str, Any]) -> Type:
    g, x = tensors(args)
    padded = shifted(pad, [x], {**attrs, "pad_value": 0.0, "pad_mode": "constant"})
    check_gradient_shape(g, padded.shape, "pad")
    return TensorType(g.dtype, x.shape)


def max_pool2d_gather(args: list[Type], attrs: dict[str, Any]) -> Type:
    """h and x of one shape give the pooled shape of x, in h's dtype."""
    h, x = tensors(args, NUMBER)
    same_dtype([h, x])
    if not consistent(h.shape, x.shape):
        fail(f"argument 1 {h.shape} and argument 2 {x.shape} must have the same shape")
    return TensorType(h.dtype, pooled_shape(x, 2, attrs))


def check_one_length(attrs: dict[str, Any], fail: Fail) -> None:
    """strided_slice_backward's begin, end, strides and axes have one length (None: begin's): the
    form strided_slice's lowering writes, which its gradient sees."""
    begin, end, strides, axes = (attrs[k] for k in ("begin", "end", "strides", "axes"))
    lengths = [len(begin), len(end), len(begin if strides is None else strides), len(begin if axes is None else axes)]
    if len(set(lengths)) != 1:
        fail(f"begin, end, strides and axes have lengths {', '.join(map(str, lengths[:3]))} and {lengths[3]}; "
             "they must be equal")


def strided_slice_backward(args: list[Type], attrs: dict[str, Any]) -> Type:
    g, like = tensors(args)
    check_one_length(attrs, fail)
    check_gradient_shape(g, sliced_shape(like, 2, attrs), "strided_slice")
    return TensorType(g.dtype, like.shape)


def take_backward(args: list[Type], attrs: dict[str, Any]) -> Type:
    g, indices, like = tensors(args)
    check_dtype(g.dtype, 1, NUMBER)
    check_gradient_shape(g, taken_shape(like, 3, indices, attrs["axis"]), "take")
    return TensorType(g.dtype, like.shape)


def scatter_add(args: list[Type], attrs: dict[str, Any]) -> Type:
    """data's type; updates (argument 3, data's dtype) has the shape take(data, indices) has."""
    data, indices, updates = tensors(args)
    check_dtype(data.dtype, 1, NUMBER)
    check_dtype(updates.dtype, 3, NUMBER)
    same_dtype([data, updates])
    check_gradient_shape(updates, taken_shape(data, 1, indices, attrs["axis"]), "take", position=3)
    return data


def gather_backward(args: list[Type], attrs: dict[str, Any]) -> Type:
    """g (numeric, the indices' shape) and indices that gather from like (argument 3): like's
    shape in g's dtype."""
    g, indices, like = tensors(args)
    check_dtype(g.dtype, 1, NUMBER)
    check_gathered(like, 3, indices, attrs["axis"])
    check_gradient_shape(g, indices.shape, "gather")
    return TensorType(g.dtype, like.shape)


# composite operators (relayish/ops/composite.py) ------------------------------------------


def excluded_axes(x: TensorType, axis: int | tuple[int, ...] | None, exclude: bool) -> int | tuple[int, ...] | None:
    """The axes a reduction with ``exclude`` reduces, as an ``axis`` attribute without it:
    every axis of ``x`` that ``axis`` does not name (``axis`` must name some: None is refused)."""
    if not exclude:
        return axis
    if axis is None:
        fail("exclude needs axis: it reduces the axes that axis does not name")
    rank = len(dims_of(x, 1))
    named = normalize_axes((axis,) if isinstance(axis, int) else axis, rank)
    return tuple(a for a in range(rank) if a not in named)


def moments(args: list[Type], attrs: dict[str, Any]) -> Type:
    """variance and std: a float reduction over ``axis`` (with ``exclude``, over the other axes)."""
    (x,) = tensors(args, FLOAT)
    axis = excluded_axes(x, attrs["axis"], attrs["exclude"])
    return TensorType(x.dtype, reduced_shape(x, axis, attrs["keepdims"]))


def channel_vector(t: TensorType, position: int, data: TensorType, axis: int) -> None:
    """Require argument ``position`` to be a vector as long as axis ``axis`` of argument 1 (``data``)."""
    size = data.shape.dims[axis]
    if not consistent(t.shape, Shape(size)):
        fail(f"argument {position} must have shape {Shape(size)}, the size of axis {axis} of argument 1 "
             f"{data.shape}, not {t.shape}")


def bias_add(args: list[Type], attrs: dict[str, Any]) -> Type:
    """data of rank >= 1 and a bias (argument 2) of data's dtype as long as data's ``axis``: data's type."""
    data, bias = tensors(args, NUMBER)
    dtype = same_dtype([data, bias])
    dims = ranked_dims(data, 1, 1, at_least=True)
    channel_vector(bias, 2, data, normalize_axis(attrs["axis"], len(dims)))
    return TensorType(dtype, data.shape)


def normalization(args: list[Type], attrs: dict[str, Any]) -> Type:
    """layer_norm and batch_norm: float data of rank >= 1 and vectors (gamma, beta and for
    batch_norm the moving mean and variance) of its dtype as long as its ``axis``: data's type."""
    ts = tensors(args, FLOAT)
    dtype = same_dtype(ts)
    data = ts[0]
    dims = ranked_dims(data, 1, 1, at_least=True)
    axis = normalize_axis(attrs["axis"], len(dims))
    for position, t in enumerate(ts[1:], 2):
        channel_vector(t, position, data, axis)
    return TensorType(dtype, data.shape)


def global_pool(kinds: str) -> Relation:
    """An NCHW tensor of ``kinds`` pooled over its whole image: (N, C, 1, 1)."""

    def relation(args: list[Type], attrs: dict[str, Any]) -> Type:
        (x,) = tensors(args, kinds)
        n, c, _, _ = ranked_dims(x, 1, 4, layout="NCHW")
        return TensorType(x.dtype, Shape(n, c, 1, 1))

    return relation


def arange_length(start: float, stop: float, step: float) -> int:
    """How many values NumPy's ``arange(start, stop, step)`` has: ceil((stop - start) / step), at
    least 0 (a quotient that underflows to 0 counts 1 when it is positive, as NumPy counts it)."""
    quotient = (stop - start) / step
    if quotient == 0.0 and stop != start:
        return 0 if math.copysign(1.0, quotient) < 0 else 1
    if math.isinf(quotient):  # the distance over the step overflows: NumPy refuses it whatever the sign
        raise RelayTypeError(f"arange from {start} to {stop} by {step}: (stop - start) / step overflows a float")
    return max(0, math.ceil(quotient))


def arange(args: list[Type], attrs: dict[str, Any]) -> Type:
    """A vector of the ``arange`` length, of the numeric ``dtype``; the bounds finite, the step not 0."""
    tensors(args)
    dtype = attrs["dtype"]
    if dtype.numpy_kind not in NUMBER:
        fail(f"dtype must be a numeric type, not {dtype}")
    start, stop, step = attrs["start"], attrs["stop"], attrs["step"]
    for name, value in (("start", start), ("stop", stop), ("step", step)):
        if not math.isfinite(value):
            fail(f"{name} must be finite, not {value}")
    if step == 0:
        fail("step must not be 0")
    return TensorType(dtype, Shape(arange_length(start, stop, step)))


def tile(args: list[Type], attrs: dict[str, Any]) -> Type:
    """NumPy's tile: x's dimensions and ``reps`` aligned at the end (the shorter padded with 1s in
    front) and multiplied; a dimension tiled more than once must have a static size."""
    (x,) = tensors(args)
    dims = dims_of(x, 1)
    reps = attrs["reps"]
    if any(r < 0 for r in reps):
        fail(f"reps {reps} has a negative number")
    rank = max(len(dims), len(reps))
    if rank > MAX_RANK:
        fail(f"reps {reps} gives rank {rank}, but tensors have at most {MAX_RANK} axes")
    new = rank - len(dims)
    reps = (1,) * (rank - len(reps)) + reps
    out = [Dim.const(r) for r in reps[:new]]
    for i, (d, r) in enumerate(zip(dims, reps[new:])):
        if r > 1 and d.value is None:
            fail(f"tiled dimension {i} of {x.shape} must have a static size, not {dim_text(d)}")
        out.append(d * r)
    return TensorType(x.dtype, Shape(*out))


def repeat(args: list[Type], attrs: dict[str, Any]) -> Type:
    """NumPy's repeat along ``axis``: that dimension times ``repeats`` (static unless repeats is 0 or 1)."""
    (x,) = tensors(args)
    dims = list(dims_of(x, 1))
    axis = normalize_axis(attrs["axis"], len(dims))
    repeats = attrs["repeats"]
    if repeats < 0:
        fail(f"repeats must be >= 0, not {repeats}")
    if repeats > 1 and dims[axis].value is None:
        fail(f"repeated dimension {axis} of {x.shape} must have a static size, not {dim_text(dims[axis])}")
    dims[axis] = dims[axis] * repeats
    return TensorType(x.dtype, Shape(*dims))
