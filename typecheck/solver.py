"""Unification over types and symbolic dimensions.

Unknown types are ``Hole``s (flexible variables of some kind); bound type variables stay
rigid. A dimension equation is solved when it is linear in one hole with coefficient +-1
(``n + ?a == n + 2`` gives ``?a = 2``); otherwise it waits until more is known. The unknown
dimension ``?`` is consistent with every dimension: it binds a lone hole and satisfies any
other equation (the checker then checks the value at run time where ``?`` meets a known size). A failed
equation raises ``Mismatch`` with the exact conflicting piece ("dimension 1: 784 vs 800");
the caller turns it into a type error at the user's code.
"""

from __future__ import annotations

from typing import Any, Callable

import attrs

from relayish.alpha import alpha_equal
from relayish.dims import Dim, as_dim, dim_text
from relayish.traverse import trampoline
from relayish.types import (
    BaseType, DataType, ForallType, FuncType, Kind, RefType, Shape, TensorType, TupleType, Type, TypeVar,
)  # fmt: skip

@attrs.define(frozen=True, slots=True, eq=False, repr=False)
class Hole(TypeVar):
    """An unknown the solver may bind; prints as ``_`` (``_1``, ...) in messages."""

    @staticmethod
    def fresh(kind: Kind = Kind.TYPE) -> Hole:
        return Hole("_", kind)  # unknowns print as _, _1, ... in messages


class Mismatch(Exception):
    """Two types cannot be made equal; ``detail`` names the exact conflicting piece."""

    def __init__(self, detail: str):
        super().__init__(detail)
        self.detail = detail


class Solver:
    def __init__(self) -> None:
        self.solution: dict[Hole, Any] = {}  # Hole -> Type, or Dim for holes of kind Dim
        self.pending_dims: list[tuple[Dim, Dim, str]] = []
        self.met_unknown = False  # whether ? met another dimension: then flows may need run-time checks

    # resolution ------------------------------------------------------------------------
    def shallow(self, ty: Type) -> Type:
        while isinstance(ty, Hole) and ty in self.solution:
            ty = self.solution[ty]
        return ty

    def dim(self, d: Dim) -> Dim:
        if d.is_const:
            return d
        holes = {v: self.solution[v] for v in d.free_vars() if isinstance(v, Hole) and v in self.solution}
        while holes:
            d = d.substitute(holes)
            holes = {v: self.solution[v] for v in d.free_vars() if isinstance(v, Hole) and v in self.solution}
        return d

    def resolve(self, ty: Type) -> Type:
        """``ty`` with every solved hole replaced, all the way down."""
        return map_type(ty, lambda v: self.solution.get(v, v), self.dim)

    def holes_in(self, ty: Type) -> bool:
        """Whether any unsolved hole remains in ``ty`` (dimensions included)."""
        if _concrete_tensor(ty):
            return False
        stack = [ty]
        while stack:
            t = self.shallow(stack.pop())
            if isinstance(t, Hole):
                return True
            if isinstance(t, Shape):
                if any(isinstance(v, Hole) for d in t.dims for v in self.dim(d).free_vars()):
                    return True
            elif not isinstance(t, TypeVar):
                stack.extend(v for v in t._items() if isinstance(v, Type))
        return False

    # unification -----------------------------------------------------------------------
    def unify(self, a: Type, b: Type) -> None:
        """Make ``a`` and ``b`` equal or raise ``Mismatch``."""
        stack = [(a, b)]
        while stack:
            x, y = (self.shallow(t) for t in stack.pop())
            if x is y:
                continue
            if isinstance(x, Hole) or isinstance(y, Hole):
                hole, other = (x, y) if isinstance(x, Hole) else (y, x)
                self.bind(hole, other)
            elif isinstance(x, TensorType) and isinstance(y, TensorType):
                stack += [(x.shape, y.shape), (x.dtype, y.dtype)]
            elif isinstance(x, Shape) and isinstance(y, Shape):
                if x.rank != y.rank:
                    raise Mismatch(f"rank {x.rank} vs {y.rank}")
                for i, (dx, dy) in enumerate(zip(x.dims, y.dims)):
                    self.unify_dim(dx, dy, f"dimension {i}")
            elif isinstance(x, TupleType) and isinstance(y, TupleType):
                if len(x.fields) != len(y.fields):
                    raise Mismatch(f"a tuple of {len(x.fields)} vs a tuple of {len(y.fields)}")
                stack += list(zip(x.fields, y.fields))
            elif isinstance(x, FuncType) and isinstance(y, FuncType):
                if len(x.params) != len(y.params):
                    raise Mismatch(f"a function of {len(x.params)} parameters vs one of {len(y.params)}")
                stack += [(x.ret, y.ret), *zip(x.params, y.params)]
            elif isinstance(x, RefType) and isinstance(y, RefType):
                stack.append((x.value, y.value))
            elif isinstance(x, DataType) and isinstance(y, DataType):
                if x.name != y.name or len(x.args) != len(y.args):
                    raise Mismatch(f"{self.resolve(x)} vs {self.resolve(y)}")
                stack += list(zip(x.args, y.args))
            elif isinstance(x, ForallType) and isinstance(y, ForallType):
                if not alpha_equal(self.resolve(x), self.resolve(y)):
                    raise Mismatch(f"{self.resolve(x)} vs {self.resolve(y)}")
            elif not (isinstance(x, BaseType) and x == y):
                raise Mismatch(f"{self.resolve(x)} vs {self.resolve(y)}")

    def bind(self, hole: Hole, ty: Type) -> None:
        if self.occurs(hole, ty):
            raise Mismatch(f"{hole.name} would have to contain itself ({self.resolve(ty)})")
        self.solution[hole] = ty

    def occurs(self, hole: Hole, ty: Type) -> bool:
        stack = [ty]
        while stack:
            t = self.shallow(stack.pop())
            if t is hole:
                return True
            if not isinstance(t, (Hole, Shape)) and isinstance(t, Type):
                stack.extend(v for v in t._items() if isinstance(v, Type))
        return False

    def unify_dim(self, a: Dim, b: Dim, where: str) -> None:
        a, b = self.dim(as_dim(a)), self.dim(as_dim(b))
        if a == b:
            return
        if a.is_unknown or b.is_unknown:  # ? is consistent with every dimension (checked at run time)
            self.met_unknown = True
            known = b if a.is_unknown else a
            hole = known.lone_atom()
            if isinstance(hole, Hole):
                self.solution[hole] = Dim.unknown()
            return
        solved = self._solve_linear(a - b)
        if solved is None:
            if any(isinstance(v, Hole) for v in (a - b).free_vars()):
                self.pending_dims.append((a, b, where))  # not linear yet: try again later
                return
            raise Mismatch(f"{where}: {dim_text(a)} vs {dim_text(b)}")
        hole, value = solved
        self.solution[hole] = value

    @staticmethod
    def _solve_linear(diff: Dim) -> tuple[Hole, Dim] | None:
        """``(h, value)`` when ``diff == 0`` says ``h == value`` for a single hole ``h``."""
        for mono, coeff in diff.terms.items():
            if len(mono) == 1 and abs(coeff) == 1:
                ((atom, power),) = mono
                if isinstance(atom, Hole) and power == 1:
                    rest = diff - Dim({mono: coeff})
                    if atom not in rest.free_vars():
                        return atom, rest * (-coeff)
        return None

    def retry_pending(self) -> bool:
        """Re-run postponed dimension equations; True when any was settled."""
        pending, self.pending_dims = self.pending_dims, []
        for a, b, where in pending:
            self.unify_dim(a, b, where)
        return len(self.pending_dims) < len(pending)

    def instantiate(self, ty: Type) -> Type:
        """A forall's body with its variables replaced by fresh holes."""
        if not isinstance(ty, ForallType):
            return ty
        mapping = {tv: Hole.fresh(tv.kind) for tv in ty.params}
        # resolved first: a function literal's result may still be a hole that stands for a
        # type in its own variables (``fn [n: Dim](%x: Tensor(.., Shape(n))) { %x + %x }``)
        return substitute(self.resolve(ty.body), mapping)


def substitute(ty: Type, mapping: dict[TypeVar, Any]) -> Type:
    """Replace type variables (in dimensions too) by types or dimensions."""
    dim_mapping = {tv: as_dim(v) for tv, v in mapping.items() if tv.kind is Kind.DIM}
    return map_type(ty, lambda v: mapping.get(v, v), lambda d: d.substitute(dim_mapping))


def map_type(ty: Type, var: Callable[[TypeVar], Any], dim: Callable[[Dim], Dim]) -> Type:
    """Rebuild ``ty`` with each type variable ``v`` replaced by ``var(v)`` (itself mapped
    again, so chains of solved holes resolve) and each dimension ``d`` by ``dim(d)``.
    Parts that do not change are returned as they are, not copied."""
    if _concrete_tensor(ty):  # most types met while checking: nothing to replace
        return ty

    def rebuild(t: Type):
        if isinstance(t, TypeVar):
            replaced = var(t)
            return replaced if replaced is t else (yield rebuild(replaced))
        if isinstance(t, Shape):
            dims = tuple(dim(d) for d in t.dims)
            return t if all(a is b for a, b in zip(dims, t.dims)) else Shape(*dims)
        if isinstance(t, (TensorType, TupleType, FuncType, RefType, ForallType, DataType)):
            old = [v for v in t._items() if isinstance(v, Type)]
            new = []
            for item in old:
                new.append((yield rebuild(item)))
            if all(a is b for a, b in zip(new, old)):
                return t
            return _with_parts(t, new)
        return t

    return trampoline(rebuild(ty))


def _concrete_tensor(t: Type) -> bool:
    """A tensor type of a known dtype and static shape: no variable anywhere in it."""
    return isinstance(t, TensorType) and isinstance(t.dtype, BaseType) and isinstance(t.shape, Shape) \
        and all(d.is_const for d in t.shape.dims)


def _with_parts(t: Type, parts: list[Type]) -> Type:
    """``t`` rebuilt from its type-valued parts, in field order."""
    if isinstance(t, TensorType):
        return TensorType(*parts)
    if isinstance(t, TupleType):
        return TupleType(parts)
    if isinstance(t, FuncType):
        return FuncType(parts[:-1], parts[-1])
    if isinstance(t, RefType):
        return RefType(parts[0])
    if isinstance(t, DataType):
        return DataType(t.name, parts)
    return ForallType(t.params, parts[-1])  # its params are binders, kept as they are
