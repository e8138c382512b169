"""Alpha-equivalence and structural hashing.

Both come from one canonical walk that turns a module, expression or type into a stream
of tokens in which every bound variable (local, type-level or dimension) is replaced by the
position of its binder. Two terms are alpha-equivalent exactly when their streams are
equal, and the structural hash is the hash of the stream, so equal terms hash equal.
Spans and variable names do not take part; free variables compare by identity and globals,
operators, data types and constructors by name. A ``match`` clause binds its pattern's
variables, in pattern order, before its body; patterns carry no types, so the annotation of
a variable a pattern binds takes no part either (the text format cannot show it).
"""

from __future__ import annotations

from itertools import zip_longest
from typing import Any, Iterator

import attrs
import numpy as np

from .dims import Dim, FloorDiv
from .expr import (
    Call, Constant, Expr, Function, GlobalVar, Let, Match, Op, Pattern, PatternCtor, PatternTuple,
    PatternVar, Var,
)  # fmt: skip
from .module import IndexDecl, Module, RelationDecl
from .types import ForallType, Shape, Type, TypeVar

Term = Module | Expr | Type


class _ConstKey:
    """Constant payload compared as values: NaNs equal each other, -0.0 differs from 0.0."""

    __slots__ = ("array",)

    def __init__(self, array: np.ndarray):
        self.array = array

    def _canonical(self) -> bytes:
        a = self.array
        if a.dtype.kind == "f":
            a = np.where(np.isnan(a), np.array(np.nan, a.dtype), a)
        return a.tobytes()

    def __eq__(self, other: object) -> bool:
        return isinstance(other, _ConstKey) and self._canonical() == other._canonical()

    def __hash__(self) -> int:
        return hash(self._canonical())


class _Walk:
    def __init__(self) -> None:
        self.binders: dict[int, int] = {}  # id(bound var) -> position of its (latest) binder
        self.count = 0  # binders seen: an object bound again (a type parameter two globals share) gets a new position
        self.keep_alive: list[object] = []  # ids stay valid while the walk runs

    def bind(self, var: object) -> None:
        self.keep_alive.append(var)
        self.binders[id(var)] = self.count
        self.count += 1

    def var_token(self, var: object) -> tuple:
        position = self.binders.get(id(var))
        return ("bound", position) if position is not None else ("free", id(var))

    def dim_tokens(self, dim: Dim) -> tuple:
        terms = []
        for mono, coeff in dim.terms.items():
            factors = sorted((self.atom_token(atom), power) for atom, power in mono)
            terms.append((tuple(factors), coeff))
        return ("dim", tuple(sorted(terms)))

    def atom_token(self, atom: object) -> tuple:
        if isinstance(atom, FloorDiv):
            return ("//", self.dim_tokens(atom.num), self.dim_tokens(atom.den))
        return self.var_token(atom)

    def tokens(self, root: Term) -> Iterator[Any]:
        stack: list[Any] = [root]
        while stack:
            item = stack.pop()
            if isinstance(item, Module):
                yield ("module", len(item.type_defs), len(item.op_decls), len(item.functions))
                for name in sorted(item.type_defs):
                    type_def = item.type_defs[name]
                    yield ("type", name, len(type_def.params), len(type_def.ctors))
                    for tv in type_def.params:
                        self.bind(tv)
                        yield tv.kind
                    for ctor in type_def.ctors:  # in definition order: it numbers them
                        yield ("ctor", ctor.name, len(ctor.fields))
                        for field in ctor.fields:
                            yield from self.tokens(field)
                for name in sorted(item.op_decls):
                    yield ("operator", name)
                    declared = item.op_decls[name]
                    if isinstance(declared, RelationDecl):
                        yield ("relation", declared.relation)
                    elif isinstance(declared, IndexDecl):
                        yield ("index expression", declared.text)
                    else:
                        yield from self.tokens(declared)
                for name in sorted(item.functions):
                    yield ("def", name)
                    yield from self.tokens(item.functions[name])
            elif isinstance(item, Expr):
                yield from self.expr_tokens(item, stack)
            elif isinstance(item, Type):
                yield from self.type_tokens(item, stack)
            elif isinstance(item, Dim):
                yield self.dim_tokens(item)
            elif isinstance(item, Pattern):
                yield from self.pattern_tokens(item, stack)
            else:
                yield item

    def expr_tokens(self, node: Expr, stack: list[Any]) -> Iterator[Any]:
        yield type(node).__name__
        if isinstance(node, Var):
            yield self.var_token(node)
        elif isinstance(node, (GlobalVar, Op)):
            yield node.name
        elif isinstance(node, Constant):
            yield (str(node.value.dtype), node.value.shape, _ConstKey(node.value))
        elif isinstance(node, Call):
            yield tuple((name, _attr_key(value)) for name, value in node.attrs)
            stack.extend(reversed([node.callee, len(node.args), *node.args]))
        elif isinstance(node, Let):
            self.bind(node.var)
            stack.extend(reversed([node.var.type_annotation, node.value, node.body]))
        elif isinstance(node, Function):
            yield node.primitive
            for tv in node.type_params:
                self.bind(tv)
                yield tv.kind
            for param in node.params:
                self.bind(param)
            annotations = [p.type_annotation for p in node.params]
            stack.extend(reversed([len(node.params), *annotations, node.ret_type, node.body]))
        elif isinstance(node, Match):
            clauses: list[Any] = [node.value, len(node.patterns)]
            for pattern, body in zip(node.patterns, node.bodies):
                clauses += [pattern, body]  # the pattern binds its variables before its body is walked
            stack.extend(reversed(clauses))
        else:
            stack.extend(reversed(_flat_fields(node)))

    def pattern_tokens(self, pattern: Pattern, stack: list[Any]) -> Iterator[Any]:
        yield type(pattern).__name__
        if isinstance(pattern, PatternVar):
            self.bind(pattern.var)
        elif isinstance(pattern, PatternCtor):
            yield (pattern.ctor, len(pattern.patterns))
            stack.extend(reversed(pattern.patterns))
        elif isinstance(pattern, PatternTuple):
            yield len(pattern.patterns)
            stack.extend(reversed(pattern.patterns))

    def type_tokens(self, ty: Type, stack: list[Any]) -> Iterator[Any]:
        yield type(ty).__name__
        if isinstance(ty, TypeVar):
            yield ty.kind
            yield self.var_token(ty)
        elif isinstance(ty, ForallType):
            for tv in ty.params:
                self.bind(tv)
                yield tv.kind
            stack.append(ty.body)
        elif isinstance(ty, Shape):
            yield len(ty.dims)
            stack.extend(reversed(ty.dims))
        else:
            stack.extend(reversed(list(ty._items())))


def _attr_key(value: Any) -> Any:
    """Attribute values compared as written: NaN equals NaN, -0.0 differs from 0.0."""
    if isinstance(value, float):
        return ("float", value.hex())
    if isinstance(value, tuple):
        return tuple(_attr_key(v) for v in value)
    return (type(value).__name__, value)


def _flat_fields(node: Expr) -> list[Any]:
    values: list[Any] = []
    for field in attrs.fields(type(node)):
        if field.name == "span":
            continue
        value = getattr(node, field.name)
        if isinstance(value, tuple):
            values.append(len(value))
            values.extend(value)
        else:
            values.append(value)
    return values


def alpha_equal(a: Term, b: Term) -> bool:
    """Whether two modules, expressions or types are equal up to renaming bound variables."""
    missing = object()
    left, right = _Walk(), _Walk()
    for x, y in zip_longest(left.tokens(a), right.tokens(b), fillvalue=missing):
        if type(x) is not type(y) or x != y:
            return False
    return True


def structural_hash(term: Term) -> int:
    """A hash that agrees with ``alpha_equal``: alpha-equivalent terms hash the same."""
    return hash(tuple(_Walk().tokens(term)))
