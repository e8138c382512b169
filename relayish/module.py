"""The module: mutually recursive global functions and operator declarations."""

from __future__ import annotations

import re
from types import MappingProxyType
from typing import Mapping, Union

import attrs

from .expr import Function
from .ops.user import RELATIONS
from .types import Type

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


OpDecl = Union[Type, RelationDecl]


class Module:
    """Global definitions by name (in definition order) and operator declarations.

    Globals refer to each other through ``GlobalVar(name)``, so definitions may be mutually
    recursive. Operators registered in the standard library need no declaration;
    ``op_decls`` holds the types (or relations) of extra operators a user declares
    (``operator @f : T``, ``operator @f : relation broadcast``).
    Modules are immutable: ``with_function`` returns a new module.
    """

    __slots__ = ("_functions", "_op_decls")

    def __init__(self, functions: Mapping[str, Function] | None = None, op_decls: Mapping[str, OpDecl] | None = None):
        functions = dict(functions or {})
        op_decls = dict(op_decls or {})
        for name, fn in functions.items():
            check_global_name(name)
            if not isinstance(fn, Function):
                raise TypeError(f"global @{name} must be a Function, not {type(fn).__name__}")
        for name, ty in op_decls.items():
            check_global_name(name)
            if name in functions:
                raise ValueError(f"@{name} is both a global function and a declared operator")
            if not isinstance(ty, (Type, RelationDecl)):
                raise TypeError(f"operator @{name} must be declared with a Type or a RelationDecl, not {type(ty).__name__}")
        self._functions = MappingProxyType(functions)
        self._op_decls = MappingProxyType(op_decls)

    @property
    def functions(self) -> Mapping[str, Function]:
        return self._functions

    @property
    def op_decls(self) -> Mapping[str, OpDecl]:
        return self._op_decls

    def __getitem__(self, name: str) -> Function:
        try:
            return self._functions[name]
        except KeyError:
            raise KeyError(f"module has no global @{name}") from None

    def __contains__(self, name: object) -> bool:
        return name in self._functions

    def with_function(self, name: str, fn: Function) -> Module:
        """A new module with ``@name`` defined (or redefined) as ``fn``."""
        return Module({**self._functions, name: fn}, self._op_decls)

    def __repr__(self) -> str:
        from .printer import astext

        return astext(self)

    __str__ = __repr__
