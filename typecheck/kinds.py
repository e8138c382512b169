"""Kind checking (the Relay paper's Figure 5, plus the Dim kind).

Base types have kind BaseType, shapes kind Shape, dimension variables kind Dim, and
tensors, products, functions, references and foralls kind Type. A term of the wrong kind
in some position (a shape where a type belongs, ...) is a ``KindError`` naming the
position, the expected kind and the actual one.
"""

from __future__ import annotations

from typing import Any, Callable, Collection, Iterator, Mapping

from relayish.errors import KindError, Span
from relayish.expr import Ascribe, Expr, Function, Let, Op, Var, Zero
from relayish.module import IndexDecl, Module, RelationDecl, TypeDef
from relayish.traverse import post_order, trampoline
from relayish.types import (
    BaseType, DataType, ForallType, FuncType, Kind, RefType, Shape, TensorType, TupleType, Type, TypeVar,
)  # fmt: skip


TypeDefs = Mapping[str, TypeDef]


def kind_of(ty: Type, bound: Collection[TypeVar] | None = None, span: Span | None = None,
            type_defs: TypeDefs | None = None) -> Kind:
    """The kind of ``ty``; with ``bound``, every type variable must be one of them (or a forall's).
    A data type must be one of ``type_defs``, applied to arguments of its parameters' kinds."""
    checker = _KindChecker(None if bound is None else set(bound), span, type_defs or {})
    return trampoline(checker.kind(ty))


def check_type(ty: Type, bound: Collection[TypeVar] | None = None, span: Span | None = None, what: str = "type",
               type_defs: TypeDefs | None = None) -> None:
    """Raise ``KindError`` unless ``ty`` is a well-kinded type of kind Type."""
    kind = kind_of(ty, bound, span, type_defs)
    if kind is not Kind.TYPE:
        raise KindError(f"kind error: the {what} must be of kind Type, but {ty} is of kind {kind.value}", span)


class _KindChecker:
    def __init__(self, bound: set[TypeVar] | None, span: Span | None, type_defs: TypeDefs):
        self.bound = bound
        self.span = span
        self.type_defs = type_defs

    def expect(self, ty: Any, kind: Kind, where: str) -> Iterator[Any]:
        if not isinstance(ty, Type):
            raise KindError(f"kind error: {where} must be a type-level term, not {ty!r}", self.span)
        actual = yield self.kind(ty)
        if actual is not kind:
            raise KindError(f"kind error: {where} must be of kind {kind.value}, but {ty} is of kind {actual.value}", self.span)

    def kind(self, ty: Type) -> Iterator[Any]:
        if isinstance(ty, BaseType):
            return Kind.BASE_TYPE
        if isinstance(ty, TypeVar):
            if not isinstance(ty.kind, Kind):
                raise KindError(f"kind error: {ty.name} has unknown kind {ty.kind!r} (kinds: Type, Shape, BaseType, Dim)", self.span)
            if self.bound is not None and ty not in self.bound:
                raise KindError(f"kind error: type variable {ty.name} is not bound here", self.span)
            return ty.kind
        if isinstance(ty, Shape):
            for dim in ty.dims:
                if dim.value is not None and dim.value < 0:
                    raise KindError(f"kind error: a dimension is a size, at least 0, not {dim.value} (in {ty})", self.span)
                for var in dim.free_vars():
                    yield self.expect(var, Kind.DIM, f"dimension variable {getattr(var, 'name', var)} in {ty}")
            return Kind.SHAPE
        if isinstance(ty, TensorType):
            yield self.expect(ty.dtype, Kind.BASE_TYPE, "the element type of a tensor")
            yield self.expect(ty.shape, Kind.SHAPE, "the shape of a tensor")
        elif isinstance(ty, TupleType):
            for i, field in enumerate(ty.fields):
                yield self.expect(field, Kind.TYPE, f"field {i} of a tuple type")
        elif isinstance(ty, FuncType):
            for i, param in enumerate(ty.params):
                yield self.expect(param, Kind.TYPE, f"parameter {i} of a function type")
            yield self.expect(ty.ret, Kind.TYPE, "the result of a function type")
        elif isinstance(ty, RefType):
            yield self.expect(ty.value, Kind.TYPE, "the content of a reference type")
        elif isinstance(ty, DataType):
            definition = self.type_defs.get(ty.name)
            if definition is None:
                known = ", ".join(self.type_defs) or "none"
                raise KindError(f"kind error: unknown data type {ty.name} (the module defines: {known})", self.span)
            if len(ty.args) != len(definition.params):
                raise KindError(f"kind error: {ty.name} takes {len(definition.params)} type argument"
                                f"{'s' * (len(definition.params) != 1)}, not {len(ty.args)} ({ty})", self.span)
            for i, (arg, param) in enumerate(zip(ty.args, definition.params)):
                yield self.expect(arg, param.kind, f"type argument {i} of {ty.name}")
        elif isinstance(ty, ForallType):
            for tv in ty.params:
                if not isinstance(tv.kind, Kind):
                    raise KindError(f"kind error: forall over unknown kind {tv.kind!r} (kinds: Type, Shape, BaseType, Dim)", self.span)
            if self.bound is not None:
                self.bound |= set(ty.params)
            yield self.expect(ty.body, Kind.TYPE, "the body of a forall")
        else:
            raise KindError(f"kind error: {type(ty).__name__} is not a type former", self.span)
        return Kind.TYPE


def check_signature(fn: Function, scope: Collection[TypeVar] = (), type_defs: TypeDefs | None = None) -> None:
    """Kind-check what ``fn`` declares (its parameters' types and its result type), with its
    type parameters and ``scope`` bound."""
    bound = set(scope) | set(fn.type_params)
    for p in fn.params:
        if p.type_annotation is not None:
            check_type(p.type_annotation, bound, p.span, f"annotation of parameter %{p.name_hint}", type_defs)
    if fn.ret_type is not None:
        check_type(fn.ret_type, bound, fn.span, "return type", type_defs)


def check_type_def(module: Module, name: str) -> None:
    """Kind-check data type ``name``: each constructor's fields are types over its parameters
    and the module's data types. Definitions keep no position, so errors have none."""
    definition = module.type_defs[name]
    for ctor in definition.ctors:
        for i, field in enumerate(ctor.fields):
            where = f"field {i} of constructor {ctor.name} of type {name}"
            try:
                check_type(field, set(definition.params), None, where, module.type_defs)
            except KindError as err:
                raise KindError(err.message if where in err.message else f"{where}: {err.message}") from None


def check_operator(module: Module, name: str) -> None:
    """Kind-check the declaration of operator ``@name``. Declarations keep no position, so
    an error points at the operator's first use (and has none when it is never used)."""
    declared = module.op_decls[name]
    if isinstance(declared, (RelationDecl, IndexDecl)):
        return  # a relation of the library's, or a definition checked when parsed: no type written to check
    try:
        check_type(declared, set(), None, f"declared type of operator @{name}")
    except KindError as err:
        uses = (node.span for fn in module.functions.values() for node in post_order(fn) if isinstance(node, Op) and node.name == name)
        raise KindError(err.message, next(uses, None)) from None


def interface_kind_errors(module: Module) -> list[KindError]:
    """The kind errors in what globals see of each other: operator declarations and the
    declared types of globals (one error per declaration). The type checker reports these
    first, so that no ill-kinded type reaches the checking of another global."""
    errors = [err for name in module.type_defs for err in _caught(check_type_def, module, name)]
    errors += [err for name in module.op_decls for err in _caught(check_operator, module, name)]
    return errors + [err for fn in module.functions.values()
                     for err in _caught(check_signature, fn, (), module.type_defs)]


def _caught(check: Callable[..., None], *args: Any) -> list[KindError]:
    try:
        check(*args)
    except KindError as err:
        return [err]
    return []


def check_kinds(module: Module) -> None:
    """Kind-check every type written in ``module``, each in the scope of its type parameters.

    Raises ``KindError`` with the span of the first ill-kinded annotation.
    """
    for name in module.type_defs:
        check_type_def(module, name)
    for name in module.op_decls:
        check_operator(module, name)
    defs = module.type_defs
    for fn in module.functions.values():
        stack: list[tuple[Expr, frozenset]] = [(fn, frozenset())]
        while stack:
            node, scope = stack.pop()
            if isinstance(node, Function):
                check_signature(node, scope, defs)
                stack.append((node.body, scope | set(node.type_params)))
                continue
            if isinstance(node, Let) and node.var.type_annotation is not None:
                check_type(node.var.type_annotation, scope, node.var.span, f"annotation of %{node.var.name_hint}", defs)
            elif isinstance(node, (Ascribe, Zero)):
                check_type(node.type, scope, node.span, f"type of {type(node).__name__}", defs)
            stack.extend((child, scope) for child in node.children() if not isinstance(child, Var))
