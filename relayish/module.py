"""The module: mutually recursive global functions and operator declarations."""

from __future__ import annotations

import re
from types import MappingProxyType
from typing import Mapping, Union

import attrs

from .expr import Function
from .names import NOT_DATA_NAMES
from .ops.user import RELATIONS
from .types import DataType, Kind, Type, TypeVar

_NAME = re.compile(r"[A-Za-z_][A-Za-z0-9_]*\Z")


def check_global_name(name: str) -> str:
    if not isinstance(name, str) or not _NAME.match(name):
        raise ValueError(f"global name must be an identifier ([A-Za-z_][A-Za-z0-9_]*), not {name!r}")
    return name


@attrs.frozen
class RelationDecl:
    """An operator declared by the type relation it has (``operator @f : relation broadcast``),
    one of ``relayish.ops.user.RELATIONS``; its implementation is registered from Python."""

    relation: str

    def __attrs_post_init__(self) -> None:
        if self.relation not in RELATIONS:
            raise ValueError(f"unknown relation {self.relation!r} (the relations: {', '.join(RELATIONS)})")


@attrs.frozen
class IndexDecl:
    """An operator defined in the text by an index expression (``operator @f(%A) = compute(...)
    fn (%i) { ... }``, docs/index-expressions.md): parsing registers it; ``text`` is the definition
    after ``operator @f`` as the printer writes it."""

    text: str


OpDecl = Union[Type, RelationDecl, IndexDecl]


def check_data_name(name: str) -> str:
    """A data type's or constructor's name: an identifier that is not a word of the text format."""
    check_global_name(name)
    if name in NOT_DATA_NAMES:
        raise ValueError(f"{name!r} is a word of the text format: it cannot name a data type or constructor")
    return name


@attrs.frozen
class CtorDef:
    """One constructor of a data type: its name and its fields' types (over the type's parameters)."""

    name: str = attrs.field(validator=lambda _i, _a, v: check_data_name(v))
    fields: tuple[Type, ...] = attrs.field(default=(), converter=tuple)


@attrs.frozen
class TypeDef:
    """``type Name[params] { Ctor(fields), ... }``: an algebraic data type, recursive if its
    fields mention it."""

    name: str = attrs.field(validator=lambda _i, _a, v: check_data_name(v))
    params: tuple[TypeVar, ...] = attrs.field(converter=tuple)
    ctors: tuple[CtorDef, ...] = attrs.field(converter=tuple)

    def __attrs_post_init__(self) -> None:
        if not self.ctors:
            raise ValueError(f"type {self.name} needs at least one constructor")
        names = [c.name for c in self.ctors]
        if len(set(names)) != len(names):
            raise ValueError(f"type {self.name} names a constructor twice")
        for tv in self.params:
            if not isinstance(tv, TypeVar) or tv.kind is not Kind.TYPE:
                raise ValueError(f"the parameters of type {self.name} must be type variables of kind Type, not {tv!r}")

    def applied(self, args: tuple[Type, ...] | None = None) -> DataType:
        """The type of this definition's values, for ``args`` (default: its own parameters)."""
        return DataType(self.name, self.params if args is None else args)


class Module:
    """Global definitions by name (in definition order), operator declarations and data types.

    Globals refer to each other through ``GlobalVar(name)``, so definitions may be mutually
    recursive. Operators registered in the standard library need no declaration;
    ``op_decls`` holds the types (or relations) of extra operators a user declares
    (``operator @f : T``, ``operator @f : relation broadcast``); ``type_defs`` its algebraic
    data types, whose constructors share one namespace (``ctor`` finds one).
    Modules are immutable: ``with_function`` returns a new module.
    """

    __slots__ = ("_functions", "_op_decls", "_type_defs", "_ctors")

    def __init__(self, functions: Mapping[str, Function] | None = None, op_decls: Mapping[str, OpDecl] | None = None,
                 type_defs: Mapping[str, TypeDef] | None = None):
        functions = dict(functions or {})
        op_decls = dict(op_decls or {})
        type_defs = dict(type_defs or {})
        ctors: dict[str, tuple[TypeDef, int]] = {}
        for name, td in type_defs.items():
            if not isinstance(td, TypeDef) or td.name != name:
                raise TypeError(f"type {name} must be a TypeDef named {name}")
            for index, c in enumerate(td.ctors):
                if c.name in ctors:
                    raise ValueError(f"constructor {c.name} is defined by both {ctors[c.name][0].name} and {name}")
                ctors[c.name] = (td, index)
        for name, fn in functions.items():
            check_global_name(name)
            if not isinstance(fn, Function):
                raise TypeError(f"global @{name} must be a Function, not {type(fn).__name__}")
        for name, ty in op_decls.items():
            check_global_name(name)
            if name in functions:
                raise ValueError(f"@{name} is both a global function and a declared operator")
            if not isinstance(ty, (Type, RelationDecl, IndexDecl)):
                raise TypeError(f"operator @{name} must be declared with a Type or a RelationDecl, not {type(ty).__name__}")
        self._functions = MappingProxyType(functions)
        self._op_decls = MappingProxyType(op_decls)
        self._type_defs = MappingProxyType(type_defs)
        self._ctors = MappingProxyType(ctors)

    @property
    def functions(self) -> Mapping[str, Function]:
        return self._functions

    @property
    def op_decls(self) -> Mapping[str, OpDecl]:
        return self._op_decls

    @property
    def type_defs(self) -> Mapping[str, TypeDef]:
        return self._type_defs

    def ctor(self, name: str) -> tuple[TypeDef, int] | None:
        """The data type constructor ``name`` belongs to and its position there, or None."""
        return self._ctors.get(name)

    def __getitem__(self, name: str) -> Function:
        try:
            return self._functions[name]
        except KeyError:
            raise KeyError(f"module has no global @{name}") from None

    def __contains__(self, name: object) -> bool:
        return name in self._functions

    def with_function(self, name: str, fn: Function) -> Module:
        """A new module with ``@name`` defined (or redefined) as ``fn``."""
        return self.with_functions({**self._functions, name: fn})

    def with_functions(self, functions: Mapping[str, Function]) -> Module:
        """A new module with these globals instead, keeping the declared operators and data types."""
        return Module(functions, self._op_decls, self._type_defs)

    def __repr__(self) -> str:
        from .printer import astext

        return astext(self)

    __str__ = __repr__
