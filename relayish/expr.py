"""Expression nodes (the Relay paper's Figure 3, plus closures and attributes).

Nodes are immutable and compare by identity: a variable is the same variable only if it is
the same object, whatever its name. Structural comparison is ``alpha_equal``. Every node
has an optional ``span`` pointing at the user's source.
"""

from __future__ import annotations

import functools

from typing import Any, Iterable, Mapping

import attrs
import numpy as np

from .errors import Span
from .ops.registry import lookup_op
from .types import BaseType, Type, TypeVar


def _node(cls):
    return attrs.define(frozen=True, slots=True, eq=False, repr=False)(cls)


def _span_field():
    return attrs.field(default=None, kw_only=True)


@functools.cache
def field_names(cls: type) -> tuple[str, ...]:
    return tuple(f.name for f in attrs.fields(cls) if f.name != "span")


class Expr:
    """Base of all expressions."""

    __slots__ = ()

    def children(self) -> tuple[Expr, ...]:
        """Direct sub-expressions in field order (a tuple: every traversal calls this per node)."""
        found: list[Expr] = []
        for name in field_names(type(self)):
            value = getattr(self, name)
            if isinstance(value, Expr):
                found.append(value)
            elif isinstance(value, tuple):
                found.extend(item for item in value if isinstance(item, Expr))
        return tuple(found)

    def __repr__(self) -> str:
        from .printer import astext

        return astext(self)

    __str__ = __repr__


@_node
class Var(Expr):
    """A local variable ``%name``; the optional annotation is its declared type."""

    name_hint: str
    type_annotation: Type | None = None
    span: Span | None = _span_field()


@_node
class GlobalVar(Expr):
    """A reference ``@name`` to a global definition of the module."""

    name: str
    span: Span | None = _span_field()


def _as_constant_array(value: Any) -> np.ndarray:
    array = np.array(value)  # a private copy, so later changes by the caller cannot leak in
    if array.dtype == np.float64 and not isinstance(value, np.ndarray) and not isinstance(value, np.generic):
        array = array.astype(np.float32)  # Python floats are float32 literals, as in the text
    if array.dtype == np.int64 and not isinstance(value, np.ndarray) and not isinstance(value, np.generic):
        array = array.astype(np.int32)
    BaseType.from_numpy(array.dtype)  # raises for dtypes relayish has no type for
    array.flags.writeable = False
    return array


@_node
class Constant(Expr):
    """A scalar or tensor literal. Python ints and floats become int32 and float32."""

    value: np.ndarray = attrs.field(converter=_as_constant_array)
    span: Span | None = _span_field()

    @property
    def dtype(self) -> BaseType:
        return BaseType.from_numpy(self.value.dtype)


@_node
class Tuple(Expr):
    fields: tuple[Expr, ...] = attrs.field(converter=tuple)
    span: Span | None = _span_field()


@_node
class Proj(Expr):
    """``e[index]``: a field of a tuple."""

    tuple_value: Expr
    index: int
    span: Span | None = _span_field()


@_node
class Let(Expr):
    """``let var = value in body``; recursive when ``value`` is a function."""

    var: Var
    value: Expr
    body: Expr
    span: Span | None = _span_field()


@_node
class If(Expr):
    cond: Expr
    then_branch: Expr
    else_branch: Expr
    span: Span | None = _span_field()


@_node
class Op(Expr):
    """A reference to an operator, registered or declared in the module, by name."""

    name: str
    span: Span | None = _span_field()


def _as_attr_pairs(value: Mapping[str, Any] | Iterable[tuple[str, Any]]) -> tuple[tuple[str, Any], ...]:
    items = value.items() if isinstance(value, Mapping) else value
    return tuple((str(k), v) for k, v in items)


@_node
class Call(Expr):
    """``callee(args, name=value, ...)``: attributes only on operator calls.

    Attributes of a registered operator are validated and made canonical (schema order,
    defaults left out) at construction, so a bad attribute fails where it is written.
    """

    callee: Expr
    args: tuple[Expr, ...] = attrs.field(converter=tuple)
    attrs: tuple[tuple[str, Any], ...] = attrs.field(default=(), converter=_as_attr_pairs)
    span: Span | None = _span_field()

    def __attrs_post_init__(self) -> None:
        if isinstance(self.callee, Op):
            op = lookup_op(self.callee.name)
            if op is not None:
                object.__setattr__(self, "attrs", op.normalize_attrs(self.attrs))

    @property
    def attr_dict(self) -> dict[str, Any]:
        return dict(self.attrs)


@_node
class Function(Expr):
    """``fn [type_params](params) -> ret_type { body }``; a closure when nested.

    ``primitive`` marks a literal that the fusion pass made of a group of operator calls
    (``fn primitive (...) { ... }(args)``): the JIT compiles its body into one kernel, while
    the type checker and the evaluator treat it as any other function. Globals are never
    primitive.
    """

    params: tuple[Var, ...] = attrs.field(converter=tuple)
    body: Expr
    ret_type: Type | None = None
    type_params: tuple[TypeVar, ...] = attrs.field(default=(), converter=tuple)
    primitive: bool = attrs.field(default=False, kw_only=True)
    span: Span | None = _span_field()


@_node
class Ascribe(Expr):
    """``(T) e``: asserts that ``e`` has type ``T``."""

    expr: Expr
    type: Type
    span: Span | None = _span_field()


@_node
class Zero(Expr):
    """``Zero(T)``: the zero of a type (zeros for tensors, tuples of zeros)."""

    type: Type
    span: Span | None = _span_field()


@_node
class Grad(Expr):
    """``Grad(f)``: the value-and-gradient function of ``f`` (docs/design.md)."""

    func: Expr
    span: Span | None = _span_field()


@_node
class Jvp(Expr):
    """``Jvp(f)``: forward mode of ``f``; given the arguments and a tangent for each, it returns
    the value and the directional derivative (docs/design.md)."""

    func: Expr
    span: Span | None = _span_field()


def in_axes_of(value: Any) -> tuple[int | None, ...]:
    """``value`` as Vmap's in_axes, a tuple of axes (ints >= 0) or None; a ValueError otherwise."""
    axes = tuple(value)
    if not all(a is None or (isinstance(a, int) and not isinstance(a, bool) and a >= 0) for a in axes):
        raise ValueError(f"Vmap's in_axes are axes (integers >= 0) or None, not {axes!r}")
    return axes


@_node
class Vmap(Expr):
    """``Vmap(f, in_axes=(0, none))``: ``f`` mapped over a batch; parameter ``i`` is taken
    apart along axis ``in_axes[i]`` (None: the same value for every example) and the result
    gains a leading batch dimension (docs/design.md, "Automatic batching")."""

    func: Expr
    in_axes: tuple[int | None, ...] = attrs.field(converter=in_axes_of)
    span: Span | None = _span_field()


@_node
class RefNew(Expr):
    """``Ref(e)``: a new mutable cell holding ``e``."""

    value: Expr
    span: Span | None = _span_field()


@_node
class RefRead(Expr):
    """``!r``: the current content of a cell."""

    ref: Expr
    span: Span | None = _span_field()


@_node
class RefWrite(Expr):
    """``r := e``: stores ``e`` in ``r``; its value is ``()``."""

    ref: Expr
    value: Expr
    span: Span | None = _span_field()


@_node
class Construct(Expr):
    """``Ctor(fields)``: a value of an algebraic data type, built by its constructor ``ctor``."""

    ctor: str
    fields: tuple[Expr, ...] = attrs.field(default=(), converter=tuple)
    span: Span | None = _span_field()


@_node
class IsCtor(Expr):
    """``Is[Ctor](e)``: a bool scalar, whether ``e`` was built by ``ctor``. What ``match``
    lowers to (relayish/matches.py), with ``Unpack``."""

    value: Expr
    ctor: str
    span: Span | None = _span_field()


@_node
class Unpack(Expr):
    """``Unpack[Ctor](e)``: the fields of ``e`` as a tuple; a run-time error if ``e`` was
    built by another constructor (a ``match`` with no clause for it)."""

    value: Expr
    ctor: str
    span: Span | None = _span_field()


class Pattern:
    """Base of the patterns of ``match`` clauses."""

    __slots__ = ()


@_node
class PatternWildcard(Pattern):
    """``_``: matches anything, binds nothing."""

    span: Span | None = _span_field()


@_node
class PatternVar(Pattern):
    """``%x``: matches anything and binds it to ``var``."""

    var: Var
    span: Span | None = _span_field()


@_node
class PatternCtor(Pattern):
    """``Ctor(p, ...)``: a value built by ``ctor`` whose fields match the sub-patterns."""

    ctor: str
    patterns: tuple[Pattern, ...] = attrs.field(default=(), converter=tuple)
    span: Span | None = _span_field()


@_node
class PatternTuple(Pattern):
    """``(p, ...)``: a tuple whose fields match the sub-patterns."""

    patterns: tuple[Pattern, ...] = attrs.field(converter=tuple)
    span: Span | None = _span_field()


def pattern_vars(pattern: Pattern) -> list[Var]:
    """The variables a pattern binds, left to right."""
    found: list[Var] = []
    stack = [pattern]
    while stack:
        p = stack.pop()
        if isinstance(p, PatternVar):
            found.append(p.var)
        elif isinstance(p, (PatternCtor, PatternTuple)):
            stack.extend(reversed(p.patterns))
    return found


@_node
class Match(Expr):
    """``match value { pattern => body, ... }``: the body of the first clause whose pattern
    matches. Clause ``i`` is ``patterns[i] => bodies[i]``; the patterns' variables are bound
    in their body only."""

    value: Expr
    patterns: tuple[Pattern, ...] = attrs.field(converter=tuple)
    bodies: tuple[Expr, ...] = attrs.field(converter=tuple)
    span: Span | None = _span_field()

    def __attrs_post_init__(self) -> None:
        if len(self.patterns) != len(self.bodies) or not self.patterns:
            raise ValueError("a match needs one body per pattern, and at least one clause")

    def children(self) -> tuple[Expr, ...]:
        """The scrutinee, the variables the patterns bind (in clause order; binders, as a ``let``'s
        variable is its child) and the bodies."""
        return (self.value, *self.bound(), *self.bodies)

    def bound(self) -> list[Var]:
        """The variables the patterns bind, clause after clause."""
        return [v for p in self.patterns for v in pattern_vars(p)]

    def with_children(self, children: tuple[Expr, ...]) -> Match:
        """This match over new children (as ``children()`` lists them): the variables are put back
        into the patterns in place of the old ones."""
        old = self.bound()
        renamed = {id(a): b for a, b in zip(old, children[1:1 + len(old)]) if a is not b}
        patterns = [_renamed(p, renamed) for p in self.patterns] if renamed else self.patterns
        return Match(children[0], patterns, children[1 + len(old):], span=self.span)


def _renamed(pattern: Pattern, renamed: dict[int, Var]) -> Pattern:
    """``pattern`` with its variables replaced as ``renamed`` says (by ``id``), rebuilt bottom-up."""
    done: dict[int, Pattern] = {}
    stack: list[tuple[Pattern, bool]] = [(pattern, False)]
    while stack:
        p, ready = stack.pop()
        subs = p.patterns if isinstance(p, (PatternCtor, PatternTuple)) else ()
        if subs and not ready:
            stack.append((p, True))
            stack.extend((q, False) for q in subs)
            continue
        if isinstance(p, PatternVar):
            done[id(p)] = PatternVar(renamed[id(p.var)], span=p.span) if id(p.var) in renamed else p
        elif isinstance(p, PatternCtor):
            done[id(p)] = PatternCtor(p.ctor, [done[id(q)] for q in subs], span=p.span)
        elif isinstance(p, PatternTuple):
            done[id(p)] = PatternTuple([done[id(q)] for q in subs], span=p.span)
        else:
            done[id(p)] = p
    return done[id(pattern)]


def lets(bindings: list[tuple[Var, Expr]], body: Expr) -> Expr:
    """``let v1 = e1 in ... let vn = en in body`` for the (variable, value) pairs in order."""
    for var, value in reversed(bindings):
        body = Let(var, value, body)
    return body


def written_type(node: Expr) -> Type | None:
    """The type written on ``node``, if any: a variable's annotation, a function's result type, the
    type of an ascription or a ``Zero``."""
    if isinstance(node, Var):
        return node.type_annotation
    if isinstance(node, Function):
        return node.ret_type
    return node.type if isinstance(node, (Ascribe, Zero)) else None


EXPR_CLASSES: tuple[type[Expr], ...] = (
    Var, GlobalVar, Constant, Tuple, Proj, Let, If, Op, Call, Function,
    Ascribe, Zero, Grad, Jvp, Vmap, RefNew, RefRead, RefWrite, Construct, IsCtor, Unpack, Match,
)  # fmt: skip
