"""Backward operator rules: from the type a call must have to its arguments and attributes.

The well-typed generator (``relayish/testing/strategies.py``) works from types down: to make
an expression of type ``Tensor(d, s)`` with an operator, it asks that operator's rule (its
record's ``rule``) for argument types and attributes that give exactly ``Tensor(d, s)``.
Each rule is written here from the operator's documented semantics (``docs/operators.md``),
independently of the type relations in ``relayish/ops/relations.py``: the generator is an
oracle for the checker, so it must not ask the checker. Rules also keep evaluation free of
runtime errors by construction: integer divisors and exponents are guarded (``Arg.guard``),
``take`` indices are in range (``Indices``), windows fit, reductions never see an empty axis
(every dimension is at least 1: static sizes are drawn from 1 up, and the inputs strategy
binds dimension variables to at least 1).

A rule is ``rule(draw, out) -> Plan | None``: None when the operator cannot produce ``out``
(wrong dtype, rank or a dimension it cannot make); ``draw`` supplies the random choices
(``Draws``). A record's ``hint`` (a ``Hint``) says what a natural result of the operator
looks like, so the generator can also start from an operator ("op-first") and reach every
one of them.
"""

from __future__ import annotations

import math
from typing import Any, Callable, Mapping, Protocol, Sequence

import attrs
import numpy as np

from ..dims import Dim
from ..types import BaseType, BoolType, IntType, Shape, TensorType, TypeVar

Dims = tuple[Dim, ...]

# dtype kinds as NumPy kind letters; None: any dtype
FLOAT, INT, NUMBER, BOOL = "f", "iu", "iuf", "b"
INT32 = IntType(32)
PADDING_VALUES = (0.0, 1.0, -1.0, 2.5, math.inf, -math.inf, math.nan)


class Draws(Protocol):
    """The random choices a rule may make (implemented by the generator)."""

    def integer(self, lo: int, hi: int) -> int: ...
    def flag(self, one_in: int = 2) -> bool: ...
    def one_of(self, items: Sequence[Any]) -> Any: ...
    def dtype(self, kinds: str | None) -> BaseType | None: ...
    def dim(self, static: bool = False) -> Dim: ...


@attrs.frozen
class Arg:
    """An argument of this type; ``guard`` makes an integer argument safe for ``div``/``pow``."""

    type: TensorType
    guard: str | None = None  # "nonzero" (an integer divisor) or "nonnegative" (an integer exponent)


@attrs.frozen
class Indices:
    """Integer indices of this type, each in 0 .. size - 1 (``take``)."""

    type: TensorType
    size: int


@attrs.frozen
class Sizes:
    """A vector of the integer ``type`` whose elements are ``values`` when the program runs
    (dyn_reshape's newshape): an int is a constant (a size or a code), a Dim a size read off a
    tensor of that size, so a symbolic one is known only then."""

    type: TensorType
    values: tuple[int | Dim, ...]

    def value(self, sizes: Mapping[TypeVar, Dim]) -> np.ndarray:
        """The vector where the dimension variables have ``sizes``."""
        return np.array([v if isinstance(v, int) else v.substitute(sizes).value for v in self.values],
                        dtype=self.type.dtype.to_numpy())


@attrs.frozen
class Plan:
    args: tuple[Arg | Indices | Sizes, ...]
    attrs: dict[str, Any] = attrs.field(factory=dict)
    field: int | None = None  # an operator with a tuple result (split): the field that has the wanted type
    widened: bool = False  # the call's own type has ? where the wanted one has sizes (dyn_reshape): ascribe it that


@attrs.frozen
class Hint:
    """What a natural result of an operator looks like: dtype kinds (or one dtype) and rank."""

    kinds: str | None | BaseType
    min_rank: int = 0
    max_rank: int = 3
    static: bool = False
    ones: tuple[int, ...] = ()  # axes of size 1 (a global pool's (N, C, 1, 1))


Rule = Callable[[Draws, TensorType], "Plan | None"]


# helpers ------------------------------------------------------------------------------------


def kind_ok(dtype: BaseType, kinds: str | None) -> bool:
    return kinds is None or dtype.numpy_kind in kinds


def dims_of(t: TensorType) -> Dims:
    return t.shape.dims


def tensor(dtype: BaseType, dims: Sequence[Dim | int]) -> TensorType:
    return TensorType(dtype, Shape(*dims))


def is_one(d: Dim) -> bool:
    return d.value == 1


def static_value(d: Dim) -> int | None:
    return d.value


def signed_axis(draw: Draws, axis: int, rank: int) -> int:
    """``axis`` as written: itself, or counted from the end."""
    return axis - rank if draw.flag(3) else axis


def permutation(draw: Draws, n: int) -> list[int]:
    items = list(range(n))
    for i in range(n - 1, 0, -1):
        j = draw.integer(0, i)
        items[i], items[j] = items[j], items[i]
    return items


def positions(draw: Draws, count: int, total: int) -> list[int]:
    """``count`` distinct sorted positions in 0 .. total - 1."""
    return sorted(permutation(draw, total)[:count])


def factors(draw: Draws, value: int, most: int = 3) -> list[int]:
    """A random factorization of ``value`` (>= 1) into 1 .. most factors, 1s allowed."""
    result = []
    for _ in range(draw.integer(0, most - 1)):
        divisors = [k for k in range(1, value + 1) if value % k == 0]
        k = draw.one_of(divisors)
        result.append(k)
        value //= k
    result.append(value)
    return permutation_of(draw, result)


def permutation_of(draw: Draws, items: list[Any]) -> list[Any]:
    return [items[i] for i in permutation(draw, len(items))]


def axes_attr(draw: Draws, axes: list[int], rank: int) -> int | tuple[int, ...]:
    """Reduction or squeeze axes as written: one int, or a tuple in any order."""
    written = [signed_axis(draw, a, rank) for a in axes]
    if len(written) == 1 and draw.flag():
        return written[0]
    return tuple(permutation_of(draw, written))


def broadcast_sources(draw: Draws, dims: Dims, count: int) -> list[Dims]:
    """``count`` shapes that broadcast together to exactly ``dims`` (NumPy rules).

    Every position that is not 1 is kept by at least one source; the others have 1 there,
    and a source may drop the leading positions where it has 1, except one source that
    keeps the full rank (the result has the rank of the longest source).
    """
    sources: list[list[Dim]] = [[] for _ in range(count)]
    for d in dims:
        owners = set(range(count)) if is_one(d) or draw.flag(3) else {draw.integer(0, count - 1)}
        for k in range(count):
            sources[k].append(d if k in owners else Dim.const(1))
    full_rank = draw.integer(0, count - 1)
    result = []
    for k, src in enumerate(sources):
        leading_ones = 0 if k == full_rank else next((i for i, d in enumerate(src) if not is_one(d)), len(src))
        result.append(tuple(src[draw.integer(0, leading_ones):]))
    return result


def split_dim(draw: Draws, d: Dim, most: int) -> list[Dim] | None:
    """Positive parts summing to ``d``: a static size split, or ``n + c`` as ``n`` and ``c``."""
    value = d.value
    if value is not None:
        count = draw.integer(1, min(most, value))
        cuts = positions(draw, count - 1, value - 1)
        edges = [0] + [c + 1 for c in cuts] + [value]
        return [Dim.const(b - a) for a, b in zip(edges, edges[1:])]
    constant = d.terms.get(frozenset(), 0)
    if constant >= 1:
        return [d - constant, Dim.const(constant)]
    return None


# elementwise, broadcasting and comparisons --------------------------------------------------


def unary(kinds: str | None) -> Rule:
    def rule(draw: Draws, out: TensorType) -> Plan | None:
        return Plan((Arg(out),)) if kind_ok(out.dtype, kinds) else None

    return rule


def cast(draw: Draws, out: TensorType) -> Plan | None:
    source = draw.dtype(None)
    return Plan((Arg(TensorType(source, out.shape)),), {"dtype": out.dtype})


def cast_like(draw: Draws, out: TensorType) -> Plan | None:
    like = tensor(out.dtype, [draw.dim() for _ in range(draw.integer(0, 2))])
    return Plan((Arg(TensorType(draw.dtype(None), out.shape)), Arg(like)))


def binary(kinds: str | None, guard: str | None = None) -> Rule:
    """Two arguments of the result's dtype whose shapes broadcast to the result's."""

    def rule(draw: Draws, out: TensorType) -> Plan | None:
        if not kind_ok(out.dtype, kinds):
            return None
        a, b = broadcast_sources(draw, dims_of(out), 2)
        needs_guard = guard == "nonzero" and out.dtype.numpy_kind in INT
        needs_guard |= guard == "nonnegative" and out.dtype.numpy_kind == "i"
        return Plan((Arg(tensor(out.dtype, a)), Arg(tensor(out.dtype, b), guard if needs_guard else None)))

    return rule


def comparison(draw: Draws, out: TensorType) -> Plan | None:
    if out.dtype != BoolType():
        return None
    operand = draw.dtype(None)
    a, b = broadcast_sources(draw, dims_of(out), 2)
    return Plan((Arg(tensor(operand, a)), Arg(tensor(operand, b))))


def where(draw: Draws, out: TensorType) -> Plan | None:
    c, a, b = broadcast_sources(draw, dims_of(out), 3)
    return Plan((Arg(tensor(BoolType(), c)), Arg(tensor(out.dtype, a)), Arg(tensor(out.dtype, b))))


# reductions ---------------------------------------------------------------------------------


def _reduced_input(draw: Draws, out: TensorType, single_axis: bool) -> tuple[Dims, dict[str, Any]] | None:
    """An input shape and ``axis``/``keepdims`` attributes reducing to ``out``'s shape."""
    dims = dims_of(out)
    rank = len(dims)
    ones = [i for i, d in enumerate(dims) if is_one(d)]
    mode = draw.integer(0, 2)
    if mode == 1 and ones:  # keepdims: reduced axes stay as 1s
        chosen = [draw.one_of(ones)] if single_axis else [i for i in ones if draw.flag()] or [ones[0]]
        source = tuple(draw.dim() if i in chosen else d for i, d in enumerate(dims))
        axis = signed_axis(draw, chosen[0], rank) if single_axis else axes_attr(draw, chosen, rank)
        return source, {"axis": axis, "keepdims": True}
    if mode == 2 and rank == 0:  # every axis
        return tuple(draw.dim() for _ in range(draw.integer(0 if single_axis else 1, 3))), {"axis": None}
    count = 1 if single_axis or rank >= 3 else draw.integer(1, 2)
    new_rank = rank + count
    chosen = positions(draw, count, new_rank)
    rest = iter(dims)
    source = tuple(draw.dim() if i in chosen else next(rest) for i in range(new_rank))
    axis = signed_axis(draw, chosen[0], new_rank) if single_axis else axes_attr(draw, chosen, new_rank)
    return source, {"axis": axis}


def reduction(kinds: str) -> Rule:
    def rule(draw: Draws, out: TensorType) -> Plan | None:
        if not kind_ok(out.dtype, kinds):
            return None
        source, attrs_ = _reduced_input(draw, out, single_axis=False)
        return Plan((Arg(tensor(out.dtype, source)),), attrs_)

    return rule


def _excluding(draw: Draws, attrs_: dict[str, Any], rank: int) -> None:
    """At times, the reduced axes of ``attrs_`` named instead by the others, with ``exclude``
    (all of them: ``()``); axis None stays."""
    axis = attrs_["axis"]
    if axis is not None and draw.flag(3):
        reduced = {a % rank for a in ((axis,) if isinstance(axis, int) else axis)}
        attrs_["axis"] = axes_attr(draw, [a for a in range(rank) if a not in reduced], rank)
        attrs_["exclude"] = True


def argmax(draw: Draws, out: TensorType) -> Plan | None:
    """argmax and argmin: over one axis, all, several (the index in their row-major flattening), or
    the axes named by the others with ``exclude``."""
    operand = draw.dtype(NUMBER)
    if out.dtype != INT32 or operand is None:
        return None
    source, attrs_ = _reduced_input(draw, out, single_axis=draw.flag())
    _excluding(draw, attrs_, len(source))
    return Plan((Arg(tensor(operand, source)),), attrs_)


def _with_length(draw: Draws, d: Dim) -> Dims:
    """A shape of ``d`` elements: a static ``d`` factored (for 1 at times a 0-d shape), a symbolic
    one with axes of size 1 beside it."""
    if d.value is None or d.value == 0:
        ones = draw.integer(0, 2)
        at = draw.integer(0, ones)
        return (Dim.const(1),) * at + (d,) + (Dim.const(1),) * (ones - at)
    if d.value == 1 and draw.flag(3):
        return ()
    return tuple(Dim.const(k) for k in factors(draw, d.value))


def cumsum(draw: Draws, out: TensorType) -> Plan | None:
    """Along a drawn axis of data of ``out``'s shape, or (axis None, a vector ``out``) of data of any
    shape with as many elements; the data in ``out``'s dtype or, with ``dtype``, in any (bool
    included); exclusive at times."""
    dims = dims_of(out)
    if not dims or not kind_ok(out.dtype, NUMBER):
        return None
    attrs_: dict[str, Any] = {}
    if len(dims) == 1 and draw.flag(3):
        source = _with_length(draw, dims[0])
    else:
        source = dims
        attrs_["axis"] = signed_axis(draw, draw.integer(0, len(dims) - 1), len(dims))
    data = out.dtype
    if draw.flag(3):
        data = draw.dtype(None) or out.dtype
        attrs_["dtype"] = out.dtype
    if draw.flag():
        attrs_["exclusive"] = True
    return Plan((Arg(tensor(data, source)),), attrs_)


def ndarray_size(draw: Draws, out: TensorType) -> Plan | None:
    """Any tensor, counted over all its axes or a subset (given with negative numbers at times),
    or over the others with ``exclude``; the count in ``out``'s numeric dtype."""
    operand = draw.dtype(None)
    if out.shape != Shape() or not kind_ok(out.dtype, NUMBER) or operand is None:
        return None
    rank = draw.integer(0, 3)
    attrs_: dict[str, Any] = {"dtype": out.dtype}
    if draw.flag(3):
        attrs_["axis"] = tuple(a - rank if draw.flag() else a for a in range(rank) if draw.flag())
    if draw.flag():
        attrs_["exclude"] = True
    return Plan((Arg(tensor(operand, [draw.dim() for _ in range(rank)])),), attrs_)


# shape operators ----------------------------------------------------------------------------


def merged(draw: Draws, d: Dim) -> list[Dim]:
    """Two input dimensions that -3 merges into ``d``: a static size's factors, or a symbolic one and 1."""
    if d.value is None:
        return permutation_of(draw, [d, Dim.const(1)])
    k = draw.one_of([k for k in range(1, d.value + 1) if d.value % k == 0])
    return [Dim.const(k), Dim.const(d.value // k)]


def reshape(draw: Draws, out: TensorType) -> Plan | None:
    """The result's dimensions made left to right by Relay's codes from input dimensions drawn
    for them, each code standing at the next input dimension: 0 copies one (symbolic too), a run
    of static sizes is written over as many input dimensions with the same product, -3 merges
    two (a static size's factors, or a symbolic one and 1), -4 splits one into the next two (a
    symbolic part written -1, at times a static one), -2 copies all the input dimensions left
    (the result's trailing 1s written after it); one 0 or size may become -1 where the quotient
    is static or the divisor is (the dimension algebra divides exactly only so)."""
    dims = dims_of(out)
    source: list[Dim] = []
    newshape: list[int] = []
    inferable: list[tuple[int, int]] = []  # (position in newshape, result dimension) of the 0s and sizes
    i = 0
    while i < len(dims):
        d = dims[i]
        pair = dims[i:i + 2]
        ways = ["copy", "merge", "rest"] + (["sizes"] if d.value is not None else [])
        ways += ["split"] if len(pair) == 2 and any(e.value is not None for e in pair) else []
        way = draw.one_of(ways)
        if way == "rest":
            j = draw.one_of([j for j in range(i, len(dims) + 1) if all(map(is_one, dims[j:]))])
            source += dims[i:j]
            newshape += [-2] + [1] * (len(dims) - j)
            break
        if way == "split":
            written = [-1 if e.value is None else e.value for e in pair]
            if -1 not in written and draw.flag():
                written[draw.integer(0, 1)] = -1
            source.append(pair[0] * pair[1])
            newshape += [-4, *written]
            i += 2
            continue
        if way == "merge":
            source += merged(draw, d)
            newshape.append(-3)
        elif way == "sizes":
            j = draw.integer(i + 1, next((k for k in range(i, len(dims)) if dims[k].value is None), len(dims)))
            values = [e.value for e in dims[i:j]]
            parts = factors(draw, math.prod(values), most=j - i)
            source += [Dim.const(k) for k in permutation_of(draw, parts + [1] * (j - i - len(parts)))]
            inferable += [(len(newshape) + k, i + k) for k in range(j - i)]
            newshape += values
            i = j
            continue
        else:
            source.append(d)
            inferable.append((len(newshape), i))
            newshape.append(0)
        i += 1
    else:
        source += [Dim.const(1)] * draw.integer(0, 1)  # an input dimension no code stands at
    inferable = [(p, k) for p, k in inferable if dims[k].value is not None
                 or all(e.value is not None for e in dims[:k] + dims[k + 1:])]
    if inferable and draw.flag():
        newshape[draw.one_of(inferable)[0]] = -1
    return Plan((Arg(tensor(out.dtype, source)),), {"newshape": tuple(newshape)})


def dyn_reshape(draw: Draws, out: TensorType) -> Plan | None:
    """The result's dimensions made left to right from input dimensions drawn for them, each value
    of newshape standing at the next input dimension, as in ``reshape``, with the codes Relay's
    dyn.reshape takes: 0 copies one, -3 merges two (a static size's factors, or a symbolic one and
    1), and a run of sizes stands over as many input dimensions of the same product (the run's
    symbolic dimensions and a factorization of its static ones, shuffled), each size a constant
    or (a symbolic one always) read when the program runs. One 0 or size may become -1: the
    actual sizes infer it exactly. newshape is int32 or int64; the call's type has ``?`` for the
    sizes its values give."""
    dims = dims_of(out)
    source: list[Dim] = []
    values: list[int | Dim] = []
    i = 0
    while i < len(dims):
        d = dims[i]
        way = draw.one_of(("copy", "merge", "sizes"))
        if way == "sizes":
            j = draw.integer(i + 1, len(dims))
            static = [e.value for e in dims[i:j] if e.value is not None]
            parts = factors(draw, math.prod(static), most=len(static)) if static else []
            parts += [1] * (len(static) - len(parts))
            source += permutation_of(draw, [e for e in dims[i:j] if e.value is None] + [Dim.const(k) for k in parts])
            values += [e.value if e.value is not None and draw.flag() else e for e in dims[i:j]]
            i = j
            continue
        if way == "merge":
            source += merged(draw, d)
            values.append(-3)
        else:
            source.append(d)
            values.append(0)
        i += 1
    source += [Dim.const(1)] * draw.integer(0, 1)  # an input dimension no value stands at
    single = [k for k, v in enumerate(values) if not (isinstance(v, int) and v == -3)]  # each uses one input dimension
    if single and draw.flag():
        values[draw.one_of(single)] = -1
    newshape = tensor(draw.one_of((INT32, IntType(64))), [len(values)])
    return Plan((Arg(tensor(out.dtype, source)), Sizes(newshape, tuple(values))), widened=True)


def transpose(draw: Draws, out: TensorType) -> Plan | None:
    dims = dims_of(out)
    if draw.flag(4):
        return Plan((Arg(tensor(out.dtype, dims[::-1])),), {})
    perm = permutation(draw, len(dims))
    source = [Dim.const(0)] * len(dims)
    for i, p in enumerate(perm):
        source[p] = dims[i]
    return Plan((Arg(tensor(out.dtype, source)),), {"axes": tuple(perm)})


def expand_dims(draw: Draws, out: TensorType) -> Plan | None:
    dims = dims_of(out)
    runs = [(a, c) for a in range(len(dims)) for c in range(1, len(dims) - a + 1) if all(map(is_one, dims[a:a + c]))]
    at, count = draw.one_of(runs) if runs and not draw.flag(5) else (draw.integer(0, len(dims)), 0)
    source = dims[:at] + dims[at + count:]
    attrs_ = {"axis": signed_axis(draw, at, len(source) + 1), "num_newaxis": count}
    return Plan((Arg(tensor(out.dtype, source)),), attrs_)


def squeeze(draw: Draws, out: TensorType) -> Plan | None:
    dims = dims_of(out)
    count = draw.integer(1, 2)
    chosen = positions(draw, count, len(dims) + count)
    rest = iter(dims)
    source = [Dim.const(1) if i in chosen else next(rest) for i in range(len(dims) + count)]
    all_static_no_ones = all(d.value is not None and not is_one(d) for d in dims)
    axis = None if all_static_no_ones and draw.flag() else axes_attr(draw, chosen, len(source))
    return Plan((Arg(tensor(out.dtype, source)),), {"axis": axis})


def broadcast_to(draw: Draws, out: TensorType) -> Plan | None:
    dims = dims_of(out)
    if any(d.value is None for d in dims):
        return None
    return Plan((Arg(tensor(out.dtype, _shrunk(draw, dims))),), {"shape": tuple(d.value for d in dims)})


def _shrunk(draw: Draws, dims: Dims) -> Dims:
    """A shape that broadcasts to ``dims``: some positions set to 1, some leading ones dropped."""
    ones = tuple(Dim.const(1) if draw.flag() else d for d in dims)
    return ones[draw.integer(0, len(ones)):]


def broadcast_to_like(draw: Draws, out: TensorType) -> Plan | None:
    like = TensorType(draw.dtype(None), out.shape)
    return Plan((Arg(tensor(out.dtype, _shrunk(draw, dims_of(out)))), Arg(like)))


def sum_to(draw: Draws, out: TensorType) -> Plan | None:
    leading = tuple(draw.dim() for _ in range(draw.integer(0, 2)))
    big = leading + tuple(draw.dim() if is_one(d) and draw.flag() else d for d in dims_of(out))
    return Plan((Arg(tensor(out.dtype, big)), Arg(TensorType(draw.dtype(None), out.shape))))


def concatenate(draw: Draws, out: TensorType) -> Plan | None:
    dims = dims_of(out)
    if not dims:
        return None
    axis = draw.integer(0, len(dims) - 1)
    parts = split_dim(draw, dims[axis], 3)
    if parts is None:
        return None
    args = tuple(Arg(tensor(out.dtype, dims[:axis] + (p,) + dims[axis + 1:])) for p in parts)
    return Plan(args, {"axis": signed_axis(draw, axis, len(dims))})


def stack(draw: Draws, out: TensorType) -> Plan | None:
    dims = dims_of(out)
    candidates = [i for i, d in enumerate(dims) if d.value is not None and d.value <= 3]
    if not candidates:
        return None
    axis = draw.one_of(candidates)
    item = tensor(out.dtype, dims[:axis] + dims[axis + 1:])
    return Plan(tuple(Arg(item) for _ in range(dims[axis].value)), {"axis": signed_axis(draw, axis, len(dims))})


def take(draw: Draws, out: TensorType) -> Plan | None:
    """Mode raise (the default, written at times): indices in range of a static axis (or of the
    whole static data for axis None); clip and wrap: any integers, into data of any sizes,
    symbolic too (every size is at least 1, so no axis is empty)."""
    dims = dims_of(out)
    index_dtype = _index_dtype(draw)
    mode = draw.one_of(("raise", "raise", "clip", "wrap"))
    attrs_: dict[str, Any] = {"mode": mode} if mode != "raise" or draw.flag() else {}

    def indices(shape: Dims, size: int | None) -> Arg | Indices:
        index_type = tensor(index_dtype, shape)
        return Indices(index_type, size) if mode == "raise" else Arg(index_type)

    def size() -> Dim:
        return Dim.const(draw.integer(1, 4)) if mode == "raise" else draw.dim()

    if draw.flag(4):  # axis None: indices into the flattened data
        data = tuple(size() for _ in range(draw.integer(0, 2)))
        count = math.prod(d.value for d in data) if mode == "raise" else None
        return Plan((Arg(tensor(out.dtype, data)), indices(dims, count)), {"axis": None, **attrs_})
    axis = draw.integer(0, len(dims))
    index_rank = draw.integer(0, len(dims) - axis)
    taken = size()
    data = dims[:axis] + (taken,) + dims[axis + index_rank:]
    attrs_["axis"] = signed_axis(draw, axis, len(data))
    return Plan((Arg(tensor(out.dtype, data)), indices(dims[axis:axis + index_rank], taken.value)), attrs_)


def _index_dtype(draw: Draws) -> BaseType:
    """An integer dtype of the features', else int32."""
    return draw.one_of([t for t in (draw.dtype(INT), INT32) if t is not None])


def gather(draw: Draws, out: TensorType) -> Plan | None:
    """Indices of out's shape into data of its rank: along the axis a static size they index,
    along the others out's dimension or (a static one) a larger one."""
    dims = dims_of(out)
    if not dims:
        return None
    axis = draw.integer(0, len(dims) - 1)
    size = draw.integer(1, 4)
    data = [Dim.const(size) if i == axis else d + draw.integer(1, 2) if d.value is not None and draw.flag(3) else d
            for i, d in enumerate(dims)]
    indices = Indices(tensor(_index_dtype(draw), dims), size)
    return Plan((Arg(tensor(out.dtype, data)), indices), {"axis": signed_axis(draw, axis, len(dims))})


def split(draw: Draws, out: TensorType) -> Plan | None:
    """``out`` is one part of data split along an axis where out has a static size: one of 1 to 3
    equal sections, or the part between points around parts of drawn sizes (none empty)."""
    dims = dims_of(out)
    axes = [i for i, d in enumerate(dims) if d.value]
    if not axes:
        return None
    axis = draw.one_of(axes)
    length = dims[axis].value
    if draw.flag():
        count = draw.integer(1, 3)
        field, size, chosen = draw.integer(0, count - 1), length * count, {"sections": count}
    else:
        lengths = [draw.integer(1, 3) for _ in range(draw.integer(0, 2))]
        field = draw.integer(0, len(lengths))
        lengths.insert(field, length)
        points = tuple(sum(lengths[:k]) for k in range(1, len(lengths)))
        size, chosen = sum(lengths), {"indices": points}
    data = tensor(out.dtype, dims[:axis] + (Dim.const(size),) + dims[axis + 1:])
    return Plan((Arg(data),), {**chosen, "axis": signed_axis(draw, axis, len(dims))}, field)


def _slice_bounds(draw: Draws, length: int) -> tuple[int, int, int, int]:
    """(size, begin, end, step) whose Python slice has exactly ``length`` elements."""
    step = draw.one_of((1, 1, 2, 3, -1, -2))
    span = (length - 1) * abs(step) + 1
    offset = draw.integer(0, 2)
    size = span + offset + draw.integer(0, 2)
    if step > 0:
        begin, end = offset, offset + span
        if draw.flag(3):
            begin -= size  # the same start, counted from the end
    else:
        begin = offset + span - 1
        end = offset - 1 if offset >= 1 else -(size + 1)  # -1 would mean the last element
    _check_slice_length(size, begin, end, step, length)
    return size, begin, end, step


def _check_slice_length(size: int, begin: int, end: int, step: int, length: int) -> None:
    if len(range(*slice(begin, end, step).indices(size))) != length:
        raise AssertionError(f"slice bounds {begin}:{end}:{step} of {size} do not give {length}")


SliceBounds = Callable[[Draws, int], tuple[int, int, int, int]]


def _slicing(draw: Draws, out: TensorType, bounds: SliceBounds) -> tuple[Dims, dict[str, Any]] | None:
    """Slice some of ``out``'s static axes: ``bounds(draw, size)`` gives (the size on the other
    side of the slice, begin, end, step) for each; the other side's shape and the attributes
    as written (strides left out when all 1, axes when they are the leading ones)."""
    dims = list(dims_of(out))
    static = [i for i, d in enumerate(dims) if d.value is not None]
    if not static:
        return None
    axes = permutation_of(draw, static)[: draw.integer(1, len(static))]
    columns = []
    for axis in axes:
        other, *column = bounds(draw, dims[axis].value)
        dims[axis] = Dim.const(other)
        columns.append(column)
    begin, end, strides = zip(*columns)
    attrs_: dict[str, Any] = {"begin": tuple(begin), "end": tuple(end)}
    if any(s != 1 for s in strides) or draw.flag():
        attrs_["strides"] = tuple(strides)
    leading = axes == list(range(len(axes)))
    attrs_["axes"] = None if leading and draw.flag() else tuple(signed_axis(draw, a, len(dims)) for a in axes)
    return tuple(dims), attrs_


def _size_bounds(draw: Draws, length: int) -> tuple[int, int, int, int]:
    """(size, begin, slice size, 1): a slice of ``length`` elements in size mode; its start written
    as itself, from the end, or (at 0) before the axis (clamped); its size the length, or where it
    runs to the end -1 or more than is left."""
    size = length + draw.integer(0, 2)
    start = draw.integer(0, size - length)
    begin = start - size if draw.flag(3) else start
    if start == 0 and draw.flag(4):
        begin = -size - draw.integer(1, 2)
    count = length
    if start + length == size and draw.flag():
        count = draw.one_of((-1, length + draw.integer(1, 2)))
    return size, begin, count, 1


def _is_default(key: str, value: int, size: int, step: int, size_mode: bool, begin: int) -> bool:
    """Whether a slice's ``key`` entry (of begin, end, strides) may be left out: it slices an axis
    of ``size`` as the missing entry does (begin: from the start, end: to the end, in the step's
    direction; a stride 1, or any in size mode, which ignores strides)."""
    if key == "strides":
        return size_mode or value == 1
    if key == "begin":
        return value == 0 or value <= -size if size_mode or step > 0 else value >= size - 1
    if size_mode:
        return value < 0 or min(max(begin + size if begin < 0 else begin, 0), size) + value >= size
    return value >= size if step > 0 else value < -size


def strided_slice(draw: Draws, out: TensorType) -> Plan | None:
    """Some static axes sliced (``_slicing``) in end mode or, at times, size mode (with strides,
    which it ignores, drawn now and then); at times an axis of any size sliced whole after them,
    named in axes where the lists do not reach; trailing entries of the lists left out at times
    where they are the defaults."""
    dims = dims_of(out)
    size_mode = draw.flag(3)
    found = _slicing(draw, out, _size_bounds if size_mode else _slice_bounds)
    source, attrs_ = found if found is not None else (dims, {"begin": (), "end": (), "axes": ()})
    sliced = list(range(len(attrs_["begin"]))) if attrs_["axes"] is None else [a % len(dims) for a in attrs_["axes"]]
    rest = [a for a in range(len(dims)) if a not in sliced]
    if rest and (found is None or draw.flag(4)):
        attrs_["axes"] = tuple(attrs_["axes"] or sliced) + (signed_axis(draw, draw.one_of(rest), len(dims)),)
    elif found is None:
        return None
    if size_mode:
        attrs_["slice_mode"] = "size"
        if draw.flag(4):
            attrs_["strides"] = tuple(draw.one_of((1, 2, -1)) for _ in sliced)
    steps, begin = attrs_.get("strides") or (1,) * len(sliced), attrs_["begin"]
    for key in ("begin", "end", "strides"):
        values = list(attrs_.get(key) or ())
        while values and draw.flag():
            k = len(values) - 1
            if not _is_default(key, values[k], source[sliced[k]].value, steps[k], size_mode, begin[k]):
                break
            values.pop()
        if key in attrs_:
            attrs_[key] = tuple(values)
    return Plan((Arg(tensor(out.dtype, source)),), attrs_)


def reverse(draw: Draws, out: TensorType) -> Plan | None:
    dims = dims_of(out)
    if not dims:
        return None
    return Plan((Arg(out),), {"axis": signed_axis(draw, draw.integer(0, len(dims) - 1), len(dims))})


def pad(draw: Draws, out: TensorType) -> Plan | None:
    """Static axes padded at times (symbolic ones never), leaving at least one element of x:
    constant padding with a drawn value, edge padding, or reflect padding with each width
    below the size of x's axis."""
    mode = draw.one_of(("constant", "edge", "reflect"))
    widths: list[int] = []
    source = []
    for d in dims_of(out):
        before = after = 0
        if d.value is not None and d.value >= 2 and draw.flag():
            if mode == "reflect":  # x's size s, the rest (at most 2 * (s - 1)) split in widths below s
                size = draw.integer((d.value + 4) // 3, d.value)
                rest = d.value - size
                before = draw.integer(max(0, rest - size + 1), min(rest, size - 1))
                after = rest - before
            else:
                before = draw.integer(0, d.value - 1)
                after = draw.integer(0, d.value - 1 - before)
        widths += [before, after]
        source.append(d - before - after)
    attrs_: dict[str, Any] = {"pad_width": tuple(widths)}
    if mode == "constant":
        attrs_["pad_value"] = draw.one_of(PADDING_VALUES if out.dtype.numpy_kind == FLOAT else PADDING_VALUES[:3])
    else:
        attrs_["pad_mode"] = mode
    return Plan((Arg(tensor(out.dtype, source)),), attrs_)


def flatten(draw: Draws, out: TensorType) -> Plan | None:
    dims = dims_of(out)
    if len(dims) != 2:
        return None
    rest = dims[1].value
    tail = [Dim.const(k) for k in factors(draw, rest)] if rest is not None else permutation_of(
        draw, [dims[1]] + [Dim.const(1)] * draw.integer(0, 1)
    )
    return Plan((Arg(tensor(out.dtype, (dims[0], *tail))),), {})


def fill_tensor(draw: Draws) -> Arg | None:
    """At times Relay's form of a fill value: a scalar tensor of any dtype (converted as cast converts)."""
    dtype = draw.dtype(None) if draw.flag(3) else None
    return None if dtype is None else Arg(tensor(dtype, ()))


def full(draw: Draws, out: TensorType) -> Plan | None:
    """A static shape; the fill value a scalar tensor, the attribute fill_value or left out (0)."""
    dims = dims_of(out)
    if any(d.value is None for d in dims):
        return None
    attrs_: dict[str, Any] = {"shape": tuple(d.value for d in dims), "dtype": out.dtype}
    fill = fill_tensor(draw)
    if fill is not None:
        return Plan((fill,), attrs_)
    if not draw.flag(4):
        attrs_["fill_value"] = draw.one_of(PADDING_VALUES if out.dtype.numpy_kind == FLOAT else (0.0, 1.0, 3.0))
    return Plan((), attrs_)


def one_hot(draw: Draws, out: TensorType) -> Plan | None:
    """The depth axis a static axis of ``out`` (often the last, the default), other on and off
    values at times."""
    dims = dims_of(out)
    index_dtype = draw.dtype(INT)
    static = [i for i, d in enumerate(dims) if d.value is not None]
    if not static or index_dtype is None:
        return None
    last = len(dims) - 1
    at = last if last in static and draw.flag() else draw.one_of(static)
    attrs_: dict[str, Any] = {"depth": dims[at].value, "dtype": out.dtype}
    if at != last or draw.flag(3):
        attrs_["axis"] = signed_axis(draw, at, len(dims))
    if draw.flag(3):
        attrs_["on_value"], attrs_["off_value"] = _fill(draw, out.dtype), _fill(draw, out.dtype)
    return Plan((Arg(tensor(index_dtype, dims[:at] + dims[at + 1:])),), attrs_)


# linear algebra and neural networks ---------------------------------------------------------


def matmul(draw: Draws, out: TensorType) -> Plan | None:
    dims = dims_of(out)
    if len(dims) < 2 or not kind_ok(out.dtype, NUMBER):
        return None
    inner = draw.dim()
    batch_a, batch_b = broadcast_sources(draw, dims[:-2], 2)
    a = tensor(out.dtype, batch_a + (dims[-2], inner))
    b = tensor(out.dtype, batch_b + (inner, dims[-1]))
    return Plan((Arg(a), Arg(b)))


def dense(draw: Draws, out: TensorType) -> Plan | None:
    dims = dims_of(out)
    if not dims or not kind_ok(out.dtype, NUMBER):
        return None
    features = draw.dim()
    args = [Arg(tensor(out.dtype, dims[:-1] + (features,))), Arg(tensor(out.dtype, (dims[-1], features)))]
    if draw.flag():
        args.append(Arg(tensor(out.dtype, (dims[-1],))))
    return Plan(tuple(args))


def _window_input(draw: Draws, size: int, kernel: int, stride: int, dilation: int) -> tuple[int, int]:
    """(input size, padding) for which the window gives ``size`` outputs along one axis."""
    padding = draw.integer(0, 1)
    extra = draw.integer(0, stride - 1)
    for pad_ in (padding, 0):
        length = (size - 1) * stride + dilation * (kernel - 1) + 1 - 2 * pad_ + extra
        if length >= 1:
            return length, pad_
    raise AssertionError("unreachable: without padding the input is at least one window")


def _spatial(draw: Draws, out: TensorType, kinds: str) -> tuple[Dims, tuple[int, int]] | None:
    dims = dims_of(out)
    if len(dims) != 4 or not kind_ok(out.dtype, kinds) or dims[2].value is None or dims[3].value is None:
        return None
    return dims, (dims[2].value, dims[3].value)


def _pair(draw: Draws, values: tuple[int, int]) -> int | tuple[int, int]:
    return values[0] if values[0] == values[1] and draw.flag() else values


def _groups(draw: Draws, channels: Dim) -> int:
    """1, or (one time in three) a divisor of the static ``channels``."""
    if channels.value is None or not draw.flag(3):
        return 1
    return draw.one_of([k for k in range(1, channels.value + 1) if channels.value % k == 0])


def _grouped_channels(draw: Draws, groups: int) -> Dim:
    """The channels of one group: any with one group, a static count with several (their weights
    are sliced by group)."""
    return draw.dim() if groups == 1 else Dim.const(draw.integer(1, 3))


def _conv_forms(draw: Draws, out: TensorType, groups: int) -> tuple[BaseType, BaseType, dict[str, Any]]:
    """The dtypes of x and w and the attributes groups and out_dtype for a convolution giving
    ``out``: out's dtype, or (one time in three) others of its kind converted to it by out_dtype
    (int8 to int32, float16 to float32: an integer's extremes converted to floats would make sums
    whose rounding depends on their order, which the backends do not share)."""
    attrs_: dict[str, Any] = {"groups": groups} if groups > 1 else {}
    if not draw.flag(3):
        return out.dtype, out.dtype, attrs_
    kinds = FLOAT if out.dtype.numpy_kind == "f" else INT
    x_dtype, w_dtype = (draw.dtype(kinds) or out.dtype for _ in range(2))
    return x_dtype, w_dtype, {**attrs_, "out_dtype": out.dtype}


def conv2d(draw: Draws, out: TensorType) -> Plan | None:
    """Windows that give ``out``'s sizes; with groups (dividing its channels) the input has groups
    times the weight's input channels."""
    found = _spatial(draw, out, NUMBER)
    if found is None:
        return None
    dims, sizes = found
    kernel = tuple(draw.integer(1, 3) for _ in sizes)
    strides = tuple(draw.integer(1, 2) for _ in sizes)
    dilation = tuple(draw.integer(1, 2) for _ in sizes)
    spatial, padding = zip(*(_window_input(draw, *axis) for axis in zip(sizes, kernel, strides, dilation)))
    groups = _groups(draw, dims[1])
    channels = _grouped_channels(draw, groups)
    x_dtype, w_dtype, attrs_ = _conv_forms(draw, out, groups)
    x = tensor(x_dtype, (dims[0], channels * groups, *spatial))
    w = tensor(w_dtype, (dims[1], channels, *kernel))
    attrs_.update(strides=_pair(draw, strides), padding=_pair(draw, padding), dilation=_pair(draw, dilation))
    if draw.flag(4):  # Relay's (top, left, bottom, right): the same total padding, split unevenly
        top, left = (draw.integer(0, 2 * p) for p in padding)
        attrs_["padding"] = (top, left, 2 * padding[0] - top, 2 * padding[1] - left)
    return Plan((Arg(x), Arg(w)), attrs_)


def _transposed_axis(draw: Draws, size: int) -> tuple[int, int, int, int, int, int]:
    """(input size, kernel, stride, padding, dilation, output_padding) of a transposed convolution
    with ``size`` (>= 1) outputs along one axis: conv2d of ``size`` with that window gives the
    input size, and output_padding is the rest of the last stride."""
    kernel, stride, padding, dilation, inputs = _window_output(draw, size, True)
    extra = size + 2 * padding - dilation * (kernel - 1) - 1 - (inputs - 1) * stride
    return inputs, kernel, stride, padding, dilation, extra


def _transposed_attrs(draw: Draws, axes: Sequence[tuple[int, ...]]) -> dict[str, Any]:
    """The attributes of ``_transposed_axis``'s two axes."""
    _, _, strides, padding, dilation, extra = zip(*axes)
    return {"strides": _pair(draw, strides), "padding": _pair(draw, padding), "dilation": _pair(draw, dilation),
            "output_padding": _pair(draw, extra)}


def conv2d_transpose(draw: Draws, out: TensorType) -> Plan | None:
    """x (N, C, h, w) and w (C, O / groups, KH, KW) whose transposed windows give ``out``'s sizes;
    groups divides O, and C is groups times a static count."""
    found = _spatial(draw, out, NUMBER)
    if found is None:
        return None
    dims, sizes = found
    axes = [_transposed_axis(draw, size) for size in sizes]
    groups = _groups(draw, dims[1])
    channels = _grouped_channels(draw, groups)
    x_dtype, w_dtype, attrs_ = _conv_forms(draw, out, groups)
    x = tensor(x_dtype, (dims[0], channels * groups, *(axis[0] for axis in axes)))
    w = tensor(w_dtype, (channels * groups, dims[1] // groups, *(axis[1] for axis in axes)))
    return Plan((Arg(x), Arg(w)), {**attrs_, **_transposed_attrs(draw, axes)})


def pool(kinds: str, averaging: bool) -> Rule:
    def rule(draw: Draws, out: TensorType) -> Plan | None:
        found = _spatial(draw, out, kinds)
        if found is None:
            return None
        dims, sizes = found
        kernel = (draw.integer(1, 3), draw.integer(1, 3))
        strides = (draw.integer(1, 2), draw.integer(1, 2)) if draw.flag() else None
        axes = zip(sizes, kernel, strides or kernel, (1, 1))
        spatial, padding = zip(*(_window_input(draw, *axis) for axis in axes))
        attrs_: dict[str, Any] = {"pool_size": _pair(draw, kernel), "strides": strides, "padding": _pair(draw, padding)}
        if averaging:
            attrs_["count_include_pad"] = draw.flag()
        return Plan((Arg(tensor(out.dtype, (dims[0], dims[1], *spatial))),), attrs_)

    return rule


def softmax(draw: Draws, out: TensorType) -> Plan | None:
    rank = len(dims_of(out))
    if rank == 0 or not kind_ok(out.dtype, FLOAT):
        return None
    return Plan((Arg(out),), {"axis": signed_axis(draw, draw.integer(0, rank - 1), rank)})


def softmax_cross_entropy(draw: Draws, out: TensorType) -> Plan | None:
    if dims_of(out) or not kind_ok(out.dtype, FLOAT):
        return None
    dims = tuple(draw.dim() for _ in range(draw.integer(1, 3)))
    arg = Arg(tensor(out.dtype, dims))
    return Plan((arg, arg), {"axis": signed_axis(draw, draw.integer(0, len(dims) - 1), len(dims))})


# gradient operators -------------------------------------------------------------------------
# Each ``*_backward`` operator's result has the shape of the forward operator's input (``out``):
# the rule picks attributes for which the forward operator accepts that input, and gives the
# gradient argument ``g`` the forward result's shape. ``like`` arguments may have any dtype.


def reshape_like(draw: Draws, out: TensorType) -> Plan | None:
    """x: the symbolic dimensions of ``out`` and a factorization of its static ones, shuffled."""
    dims = dims_of(out)
    symbolic = [d for d in dims if d.value is None]
    count = math.prod(d.value for d in dims if d.value is not None)
    static = [] if count == 1 and draw.flag(3) else [Dim.const(k) for k in factors(draw, count)]
    source = permutation_of(draw, symbolic + static)
    return Plan((Arg(tensor(out.dtype, source)), Arg(TensorType(draw.dtype(None), out.shape))))


def _window_output(draw: Draws, size: int, dilated: bool) -> tuple[int, int, int, int, int]:
    """(kernel, stride, padding, dilation, outputs) of a window that fits in ``size`` (>= 1) padded."""
    padding = draw.integer(0, 1)
    dilation = draw.integer(1, 2) if dilated else 1
    widest = (size + 2 * padding - 1) // dilation + 1  # the largest kernel whose span fits
    kernel = draw.integer(1, min(3, widest))
    stride = draw.integer(1, 2)
    return kernel, stride, padding, dilation, (size + 2 * padding - dilation * (kernel - 1) - 1) // stride + 1


def conv2d_backward_input(draw: Draws, out: TensorType) -> Plan | None:
    """``out`` is the input's (N, C, H, W): a kernel that fits, and g of the convolution's shape;
    like, or (one time in three) the output_padding that picks ``out``'s sizes."""
    found = _spatial(draw, out, NUMBER)
    if found is None:
        return None
    (n, channels, _, _), sizes = found
    axes = [_transposed_axis(draw, size) for size in sizes]
    out_channels = draw.dim()
    g = tensor(out.dtype, (n, out_channels, *(axis[0] for axis in axes)))
    w = tensor(out.dtype, (out_channels, channels, *(axis[1] for axis in axes)))
    attrs_ = _transposed_attrs(draw, axes)
    if draw.flag(3):  # without like: output_padding picks the size
        return Plan((Arg(g), Arg(w)), attrs_)
    del attrs_["output_padding"]
    return Plan((Arg(g), Arg(w), Arg(TensorType(draw.dtype(None), out.shape))), attrs_)


def conv2d_backward_weight(draw: Draws, out: TensorType) -> Plan | None:
    """``out`` is the weight's (O, C, KH, KW): an input that some number of windows fit."""
    found = _spatial(draw, out, NUMBER)
    if found is None:
        return None
    (out_channels, channels, _, _), kernel = found
    strides = tuple(draw.integer(1, 2) for _ in kernel)
    dilation = tuple(draw.integer(1, 2) for _ in kernel)
    spatial = tuple(draw.integer(1, 3) for _ in kernel)
    sizes, padding = zip(*(_window_input(draw, *axis) for axis in zip(spatial, kernel, strides, dilation)))
    n = draw.dim()
    g = tensor(out.dtype, (n, out_channels, *spatial))
    x = tensor(out.dtype, (n, channels, *sizes))
    attrs_ = {"strides": _pair(draw, strides), "padding": _pair(draw, padding), "dilation": _pair(draw, dilation)}
    return Plan((Arg(g), Arg(x), Arg(TensorType(draw.dtype(None), out.shape))), attrs_)


def concatenate_backward(draw: Draws, out: TensorType) -> Plan | None:
    """``out`` is one of the parts; the others differ from it along the axis only."""
    dims = dims_of(out)
    if not dims:
        return None
    axis = draw.integer(0, len(dims) - 1)
    sizes = [draw.dim() for _ in range(draw.integer(0, 2))]
    index = draw.integer(0, len(sizes))
    sizes.insert(index, dims[axis])
    parts = tuple(Arg(tensor(out.dtype, dims[:axis] + (size,) + dims[axis + 1:])) for size in sizes)
    joined = tensor(out.dtype, dims[:axis] + (sum(sizes, Dim.const(0)),) + dims[axis + 1:])
    return Plan((Arg(joined), *parts), {"axis": signed_axis(draw, axis, len(dims)), "index": index})


def pad_backward(draw: Draws, out: TensorType) -> Plan | None:
    """``out`` is the unpadded x; any widths, symbolic dimensions included."""
    widths = [draw.integer(0, 2) for _ in range(2 * len(dims_of(out)))]
    padded = [d + widths[2 * i] + widths[2 * i + 1] for i, d in enumerate(dims_of(out))]
    return Plan((Arg(tensor(out.dtype, padded)), Arg(out)), {"pad_width": tuple(widths)})


def max_pool2d_gather(draw: Draws, out: TensorType) -> Plan | None:
    """The pooled shape ``out`` from max pooling an x; h has x's type."""
    plan = pool(NUMBER, averaging=False)(draw, out)
    return None if plan is None else Plan((plan.args[0], plan.args[0]), plan.attrs)


def pool_backward(kinds: str, averaging: bool) -> Rule:
    """``out`` is the pool's input x: a window that fits, and g of the pooled shape."""

    def rule(draw: Draws, out: TensorType) -> Plan | None:
        found = _spatial(draw, out, kinds)
        if found is None:
            return None
        (n, channels, _, _), sizes = found
        default_strides = draw.flag()  # strides None: the pool size
        kernel, strides, padding, spatial = [], [], [], []
        for size in sizes:
            k, s, p, _, outputs = _window_output(draw, size, dilated=False)
            if default_strides:
                s, outputs = k, (size + 2 * p - k) // k + 1
            kernel.append(k)
            strides.append(s)
            padding.append(p)
            spatial.append(outputs)
        attrs_: dict[str, Any] = {
            "pool_size": _pair(draw, tuple(kernel)),
            "strides": None if default_strides else tuple(strides),
            "padding": _pair(draw, tuple(padding)),
        }
        if averaging:
            attrs_["count_include_pad"] = draw.flag()
        return Plan((Arg(tensor(out.dtype, (n, channels, *spatial))), Arg(out)), attrs_)

    return rule


def _slice_within(draw: Draws, size: int) -> tuple[int, int, int, int]:
    """(length, begin, end, step): a Python slice of 1 or more of ``size`` (>= 1) elements."""
    step = draw.one_of((1, 1, 2, 3, -1, -2))
    start = draw.integer(0, size - 1)
    room = size - 1 - start if step > 0 else start  # elements the slice can pass after its first
    length = draw.integer(1, room // abs(step) + 1)
    last = start + (length - 1) * step
    if step > 0:
        end = last + 1 + draw.integer(0, step - 1)
        if length == room // step + 1 and draw.flag(3):
            end = size + draw.integer(0, 2)  # past the end: clamped
        begin = start - size if draw.flag(3) else start  # the same start, counted from the end
    else:
        end = last - 1 if last >= 1 else -(size + 1 + draw.integer(0, 1))  # -1 would mean the last element
        begin = start
    _check_slice_length(size, begin, end, step, length)
    return length, begin, end, step


def strided_slice_backward(draw: Draws, out: TensorType) -> Plan | None:
    """``out`` is like's shape: some static axes sliced, g of the slice's shape."""
    found = _slicing(draw, out, _slice_within)
    if found is None:
        return None
    sliced, attrs_ = found
    return Plan((Arg(tensor(out.dtype, sliced)), Arg(TensorType(draw.dtype(None), out.shape))), attrs_)


def _take_adjoint(draw: Draws, out: TensorType) -> tuple[TensorType, Indices, dict[str, Any]] | None:
    """For a result of ``out``'s shape into which values are added at indices (take's adjoint): the
    values' type (take's result shape, out's dtype), indices in range of a static axis (or of all of a
    static ``out``) and the axis attribute."""
    if not kind_ok(out.dtype, NUMBER):
        return None
    dims = dims_of(out)
    index_dtype = draw.one_of([t for t in (draw.dtype(INT), INT32) if t is not None])
    index_dims = tuple(draw.dim() for _ in range(draw.integer(0, 2)))
    static = [i for i, d in enumerate(dims) if d.value is not None]
    if len(static) == len(dims) and (not dims or draw.flag(4)):  # axis None: into the flattened result
        indices = Indices(tensor(index_dtype, index_dims), math.prod(d.value for d in dims))
        return tensor(out.dtype, index_dims), indices, {"axis": None}
    if not static:
        return None
    axis = draw.one_of(static)
    values = tensor(out.dtype, dims[:axis] + index_dims + dims[axis + 1:])
    indices = Indices(tensor(index_dtype, index_dims), dims[axis].value)
    return values, indices, {"axis": signed_axis(draw, axis, len(dims))}


def take_backward(draw: Draws, out: TensorType) -> Plan | None:
    """``out`` is like's shape (like of any dtype); g of take's result shape."""
    found = _take_adjoint(draw, out)
    if found is None:
        return None
    g, indices, attrs_ = found
    return Plan((Arg(g), indices, Arg(TensorType(draw.dtype(None), out.shape))), attrs_)


def scatter_add(draw: Draws, out: TensorType) -> Plan | None:
    """``out`` is data's type; updates of take's result shape."""
    found = _take_adjoint(draw, out)
    if found is None:
        return None
    updates, indices, attrs_ = found
    return Plan((Arg(out), indices, Arg(updates)), attrs_)


def gather_backward(draw: Draws, out: TensorType) -> Plan | None:
    """``out`` is like's shape (like of any dtype); g and the indices of one shape: along a static
    axis of out any dimension, along the others out's or (where out's is static) a smaller one."""
    if not kind_ok(out.dtype, NUMBER):
        return None
    dims = dims_of(out)
    static = [i for i, d in enumerate(dims) if d.value]
    if not static:
        return None
    axis = draw.one_of(static)
    index_dims = tuple(
        draw.dim() if i == axis else Dim.const(draw.integer(1, d.value - 1)) if (d.value or 0) >= 2 and draw.flag(3) else d
        for i, d in enumerate(dims))
    indices = Indices(tensor(_index_dtype(draw), index_dims), dims[axis].value)
    like = TensorType(draw.dtype(None), out.shape)
    return Plan((Arg(tensor(out.dtype, index_dims)), indices, Arg(like)), {"axis": signed_axis(draw, axis, len(dims))})


# composite operators (relayish/ops/composite.py) --------------------------------------------


def _bounds(draw: Draws, dtype: BaseType) -> tuple[float, float]:
    """Two attribute values in order, each exactly representable in ``dtype`` once converted:
    infinities for floats, no negative numbers for unsigned integers."""
    kind = dtype.numpy_kind
    values = (-math.inf, -1.0, -0.5, 0.0, 0.5, 1.0, 2.0, math.inf) if kind == FLOAT else (
        (0.0, 1.0, 2.0, 3.0) if kind == "u" else (-2.0, -1.0, 0.0, 1.0, 3.0))
    low, high = sorted((draw.one_of(values), draw.one_of(values)))
    return low, high


def clip(draw: Draws, out: TensorType) -> Plan | None:
    if not kind_ok(out.dtype, NUMBER):
        return None
    low, high = _bounds(draw, out.dtype)
    return Plan((Arg(out),), {"a_min": low, "a_max": high})


def negative_slope(draw: Draws, out: TensorType) -> Plan | None:
    """One float argument and a slope ``alpha`` for its negative part (drawn at times)."""
    if not kind_ok(out.dtype, FLOAT):
        return None
    attrs_ = {"alpha": draw.one_of((0.0, 0.1, 0.5, 2.0))} if draw.flag() else {}
    return Plan((Arg(out),), attrs_)


def bias_add(draw: Draws, out: TensorType) -> Plan | None:
    """``out`` is the data's type; the bias is as long as the chosen axis."""
    dims = dims_of(out)
    if not dims or not kind_ok(out.dtype, NUMBER):
        return None
    axis = draw.integer(0, len(dims) - 1)
    bias = tensor(out.dtype, (dims[axis],))
    return Plan((Arg(out), Arg(bias)), {"axis": signed_axis(draw, axis, len(dims))})


def moments(draw: Draws, out: TensorType) -> Plan | None:
    """variance and std: a float reduction, the reduced axes named directly or (``exclude``) by
    naming the others; biased or unbiased."""
    if not kind_ok(out.dtype, FLOAT):
        return None
    source, attrs_ = _reduced_input(draw, out, single_axis=False)
    _excluding(draw, attrs_, len(source))
    if draw.flag():
        attrs_["unbiased"] = True
    return Plan((Arg(tensor(out.dtype, source)),), attrs_)


def _fill(draw: Draws, dtype: BaseType) -> float:
    """A fill value for ``dtype``: special values for floats, small numbers for integers, 0 or 1 for bools."""
    kind = dtype.numpy_kind
    if kind == FLOAT:
        return draw.one_of(PADDING_VALUES)
    return draw.one_of((0.0, 1.0) if kind == BOOL else (0.0, 1.0, 3.0) if kind == "u" else (0.0, 1.0, -2.0, 3.0))


def full_like(draw: Draws, out: TensorType) -> Plan | None:
    fill = fill_tensor(draw)
    if fill is not None:
        return Plan((Arg(out), fill))
    return Plan((Arg(out),), {"fill_value": _fill(draw, out.dtype)})


def constant_fill(draw: Draws, out: TensorType) -> Plan | None:
    """zeros and ones: a static shape and any dtype."""
    dims = dims_of(out)
    if any(d.value is None for d in dims):
        return None
    return Plan((), {"shape": tuple(d.value for d in dims), "dtype": out.dtype})


def arange(draw: Draws, out: TensorType) -> Plan | None:
    """A numeric vector of static length n: ``stop`` alone (from 0 by 1) or bounds
    ``start + n * step`` apart less a part of a step, so that ceil((stop - start) / step) = n
    exactly: integers for integer dtypes (ascending and from 0 up for unsigned ones), halves of
    a step for floats."""
    dims = dims_of(out)
    if len(dims) != 1 or dims[0].value is None or not kind_ok(out.dtype, NUMBER):
        return None
    n = dims[0].value
    if draw.flag(4):
        return Plan((), {"stop": float(n), "dtype": out.dtype})
    kind = out.dtype.numpy_kind
    if kind == FLOAT:
        start, step = draw.one_of((0.0, -1.5, 2.0)), draw.one_of((1.0, 0.5, -0.25, 2.0))
        stop = start + (n - 0.5) * step
    else:
        unsigned = kind == "u"
        start = draw.integer(0, 3) if unsigned else draw.integer(-3, 3)
        step = draw.one_of((1, 2, 3) if unsigned else (1, 2, 3, -1, -2))
        short = draw.integer(0, abs(step) - 1)  # ceil((n * |step| - short) / |step|) = n
        stop = start + n * step - (short if step > 0 else -short)
    attrs_: dict[str, Any] = {"start": float(start), "stop": float(stop), "dtype": out.dtype}
    if step != 1 or draw.flag():
        attrs_["step"] = float(step)
    return Plan((), attrs_)


def tile(draw: Draws, out: TensorType) -> Plan | None:
    """x and reps whose tiling gives ``out``: leading static dimensions may be new axes (their
    size a rep), a static one is tiled by one of its divisors, a symbolic one once; reps may
    leave out leading 1s where x has the axes."""
    dims = dims_of(out)
    leading_static = next((i for i, d in enumerate(dims) if d.value is None), len(dims))
    new = draw.integer(0, leading_static)  # axes x does not have
    reps = [d.value for d in dims[:new]]
    source = []
    for d in dims[new:]:
        k = 1 if d.value is None else draw.one_of([k for k in range(1, d.value + 1) if d.value % k == 0])
        reps.append(k)
        source.append(Dim.const(d.value // k) if k != 1 else d)
    if new == 0:  # leading reps of 1 may be left out
        ones = next((i for i, r in enumerate(reps) if r != 1), len(reps))
        reps = reps[draw.integer(0, ones):]
    return Plan((Arg(tensor(out.dtype, source)),), {"reps": tuple(reps)})


def repeat(draw: Draws, out: TensorType) -> Plan | None:
    """A static axis repeated by one of its divisors, or any axis once."""
    dims = dims_of(out)
    if not dims:
        return None
    static = [i for i, d in enumerate(dims) if d.value is not None]
    if static and not draw.flag(5):
        axis = draw.one_of(static)
        size = dims[axis].value
        repeats = draw.one_of([k for k in range(1, size + 1) if size % k == 0])
    else:
        axis, repeats = draw.integer(0, len(dims) - 1), 1
    part = Dim.const(dims[axis].value // repeats) if repeats != 1 else dims[axis]
    source = dims[:axis] + (part,) + dims[axis + 1:]
    return Plan((Arg(tensor(out.dtype, source)),), {"repeats": repeats, "axis": signed_axis(draw, axis, len(dims))})


def global_pool(kinds: str) -> Rule:
    """``out`` is (N, C, 1, 1); the image any size (at least 1, as every drawn dimension)."""

    def rule(draw: Draws, out: TensorType) -> Plan | None:
        dims = dims_of(out)
        if len(dims) != 4 or not kind_ok(out.dtype, kinds) or not (is_one(dims[2]) and is_one(dims[3])):
            return None
        return Plan((Arg(tensor(out.dtype, (dims[0], dims[1], draw.dim(), draw.dim()))),))

    return rule


def normalization(vectors: int, training: bool) -> Rule:
    """layer_norm (2 vectors) and batch_norm (4, and ``training``): ``out`` is the data's type; the
    vectors as long as the chosen axis; epsilon, center and scale drawn."""

    def rule(draw: Draws, out: TensorType) -> Plan | None:
        dims = dims_of(out)
        if not dims or not kind_ok(out.dtype, FLOAT):
            return None
        axis = draw.integer(0, len(dims) - 1)
        vector = Arg(tensor(out.dtype, (dims[axis],)))
        attrs_: dict[str, Any] = {"axis": signed_axis(draw, axis, len(dims))}
        if draw.flag():
            attrs_["epsilon"] = draw.one_of((1e-3, 0.5))
        for flag in ("center", "scale") + (("training",) if training else ()):
            if draw.flag(3):
                attrs_[flag] = flag == "training"
        return Plan((Arg(out),) + (vector,) * vectors, attrs_)

    return rule
