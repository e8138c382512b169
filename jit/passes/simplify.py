"""Algebraic simplification of zeros and ones, where the types show it changes nothing.

Rewritten, each only when the result has exactly the type of what replaces it (a
broadcast can change the shape, so ``x + zeros_like(y)`` with a larger ``y`` stays) and
what is dropped has no effect and cannot fail (``util.removable_nodes``); a zero or one
may be written in place or bound to a variable:

- ``x + 0``, ``0 + x``, ``x - 0`` -> ``x``, where 0 is ``zeros_like(_)``, ``Zero(T)`` or a
  constant of zeros (up to the sign of a zero result: ``-0.0 + 0.0`` is ``0.0``);
- ``x * 1``, ``1 * x``, ``x / 1`` -> ``x``, where 1 is ``ones_like(_)`` or a constant of ones;
- ``reshape``, ``broadcast_to``, ``squeeze``, ``cast``, ``sum_to``, ``broadcast_to_like``,
  ``reshape_like`` and ``cast_like`` of ``x`` to its own type -> ``x``;
- ``broadcast_to_like(ones_like(s), y)`` -> ``ones_like(y)`` (zeros alike);
- ``where(c, a, b)`` with ``c`` all true -> ``a``, ``logical_and(c, x)`` -> ``x`` (Vmap's masks of
  every example; a fill seen through ``expand_dims``, and ``where`` of two fills, count as fills);
- ``sum_to(x, y)`` summing x's leading axes, or at equal rank axes where y has size 1 ->
  ``sum(x, axis=..., keepdims=...)``, which fusion joins to the group computing ``x`` (x
  numeric: ``sum_to`` also takes booleans, ``sum`` does not);
- ``zeros_like(x)``, ``ones_like(x)`` of a static type -> ``full(shape=..., fill_value=0 or 1,
  dtype=...)``, and ``ndarray_size(x)`` -> its constant: only ``x``'s type mattered, so what
  computes ``x`` may become dead, and ``fold_constants`` can compute what uses it; of a
  symbolic type (a batch ``Dim``) -> the same call on a parameter of the enclosing global that
  has exactly that type, for the same reason (fusion then reads that parameter's size).

Types are those ``infer`` writes down where it does (a let-bound call has its variable's
type), else from ``typecheck.expr_types``.

IEEE semantics are kept: ``x * 0`` and ``x - x`` stay (NaN and infinities).
"""

from __future__ import annotations

import functools

import numpy as np

from relayish.expr import Call, Constant, Expr, Function, Op, Var, Zero
from relayish.module import Module
from relayish.ops.registry import lookup_op
from relayish.traverse import ExprMutator, post_order
from relayish.types import BaseType, BoolType, Shape, TensorType, Type, has_unknown_dim
from typecheck import expr_types, infer
from typecheck.inference import declared_type

from .util import TypeOf, annotation_types, is_removable, let_values, map_functions

_IDENTITY_ON_SAME_TYPE = frozenset({"reshape", "broadcast_to", "squeeze", "cast"})
_FIRST_ON_SAME_TYPE = frozenset({"sum_to", "broadcast_to_like", "reshape_like", "cast_like"})
_FILLS = {"zeros_like": 0.0, "ones_like": 1.0}
_REWRITTEN = _IDENTITY_ON_SAME_TYPE | _FIRST_ON_SAME_TYPE | _FILLS.keys() | {"add", "sub", "mul", "div", "ndarray_size",
                                                                            "where", "logical_and"}


def simplify_algebra(module: Module) -> Module:
    """``module`` with additions of zeros, products with ones and conversions to the same
    type removed."""
    if not any(_candidate(n) for fn in module.functions.values() for n in post_order(fn)):
        return module  # nothing to simplify: spare the type inference
    if any(declared_type(fn) is None for fn in module.functions.values()):
        module = infer(module)
    types = _Types(module)
    return map_functions(module, lambda fn: _Simplify(fn, types).mutate(fn))


def _candidate(node: Expr) -> bool:
    return isinstance(node, Call) and isinstance(node.callee, Op) and node.callee.name in _REWRITTEN


class _Types:
    """The types of a module's nodes: what ``infer`` wrote down (annotations, constants), else
    ``typecheck.expr_types``, run once and only when an operand's type is not written down."""

    def __init__(self, module: Module) -> None:
        self.module = module
        self.table: dict[int, Type] | None = None

    def of(self, e: Expr, annotated: TypeOf) -> Type | None:
        ty = annotated(e)
        if ty is None:
            if self.table is None:
                self.table = expr_types(self.module)
            ty = self.table.get(id(e))
        return ty


class _Simplify(ExprMutator):
    def __init__(self, fn: Function, types: _Types) -> None:
        super().__init__()
        nodes = list(post_order(fn))
        self.params = {}  # type -> the first parameter of the global of that type: a fill's witness
        for p in fn.params:
            self.params.setdefault(p.type_annotation, p)
        self.param_ids = {id(p) for p in fn.params}
        self.values = let_values(nodes)
        annotated = annotation_types(nodes)
        self.type_of = functools.partial(types.of, annotated=annotated)

    def definition(self, e: Expr) -> Expr:
        """What a variable is bound to, through chains of variables."""
        seen = set()
        while isinstance(e, Var) and id(e) in self.values and id(e) not in seen:
            seen.add(id(e))
            e = self.values[id(e)]
        return e

    def filled(self, e: Expr, value: int) -> bool:
        """Whether ``e`` is a tensor of ``value`` (0 or 1), however it is written."""
        e = self.definition(e)
        if isinstance(e, Constant):
            return bool(np.all(e.value == value))
        if isinstance(e, Zero):
            return value == 0
        if not (isinstance(e, Call) and isinstance(e.callee, Op)):
            return False
        if e.callee.name == "expand_dims":
            return self.filled(e.args[0], value)
        if e.callee.name == "where":
            return self.filled(e.args[1], value) and self.filled(e.args[2], value)
        return e.callee.name == ("zeros_like", "ones_like")[value] or \
            (e.callee.name == "full" and e.attr_dict.get("fill_value", 0.0) == value)

    def keeps(self, old: Call, kept: int, dropped: tuple[int, ...]) -> bool:
        """Whether ``old`` may become its argument ``kept``: the same type, the rest droppable."""
        ty = self.type_of(old)
        return (ty is not None and self.type_of(old.args[kept]) == ty and not has_unknown_dim(ty)
                and all(is_removable(old.args[i], self.type_of) for i in dropped))

    def rewrite(self, old: Expr, new: Expr) -> Expr:
        if not (isinstance(old, Call) and isinstance(old.callee, Op)):
            return new
        name, args = old.callee.name, old.args
        if name in ("add", "sub", "mul", "div"):
            neutral = 0 if name in ("add", "sub") else 1
            if self.filled(args[1], neutral) and self.keeps(old, 0, (1,)):
                return new.args[0]
            if name in ("add", "mul") and self.filled(args[0], neutral) and self.keeps(old, 1, (0,)):
                return new.args[1]
        elif name in _IDENTITY_ON_SAME_TYPE or name in _FIRST_ON_SAME_TYPE:
            if self.keeps(old, 0, tuple(range(1, len(args)))):
                return new.args[0]
            if name == "broadcast_to_like":
                return self.filled_like(old, new)
            if name == "sum_to":
                return self.sum_to_as_sum(old, new)
        elif name in _FILLS or name == "ndarray_size":
            return self.of_type_only(old, new)
        elif name == "where" and self.filled(args[0], 1) and self.keeps(old, 1, (0, 2)):
            return new.args[1]
        elif name == "logical_and":
            for kept in (0, 1):
                if self.filled(args[1 - kept], 1) and self.keeps(old, kept, (1 - kept,)):
                    return new.args[kept]
        return new

    def of_type_only(self, old: Call, new: Call) -> Expr:
        """A fill or a size, which reads only its argument's type: computed here where the type is
        static (a ``full``, a constant), else of a parameter of that type (see the module docstring)."""
        arg = old.args[0]
        if not is_removable(arg, self.type_of) or has_unknown_dim(self.type_of(arg)):
            return new  # with ?, another tensor of the same type may have another size
        ty = self.type_of(old if old.callee.name in _FILLS else arg)
        static = ty.shape.static() if isinstance(ty, TensorType) and isinstance(ty.shape, Shape) else None
        if static is not None and isinstance(ty.dtype, BaseType):
            if old.callee.name == "ndarray_size":
                size = lookup_op("ndarray_size")
                return Constant(size.compute(np.empty(static, np.bool_), **size.full_attrs(old.attrs)), span=old.span)
            attrs = {"shape": static, "fill_value": _FILLS[old.callee.name], "dtype": ty.dtype}
            return Call(Op("full", span=old.callee.span), [], attrs, span=old.span)
        witness = self.params.get(self.type_of(arg))
        if witness is not None and id(arg) not in self.param_ids:
            return Call(old.callee, [witness], old.attrs, span=old.span)
        return new

    def sum_to_as_sum(self, old: Call, new: Call) -> Expr:
        """``sum_to(x, y)`` -> one ``sum`` of ``x``: over its leading axes (``y`` has x's trailing
        dimensions), or at equal rank over the axes where ``y`` has size 1 (summing an axis of size 1
        changes nothing, so it does not matter whether x's is 1). Fusion joins a ``sum`` to the group
        that computes ``x``; a ``sum_to`` is a kernel of its own (W4: 50 of them, one per step)."""
        x, result = self.type_of(old.args[0]), self.type_of(old)
        if not (isinstance(x, TensorType) and isinstance(x.shape, Shape) and isinstance(result, TensorType)
                and isinstance(result.shape, Shape) and is_removable(old.args[1], self.type_of)
                and not isinstance(x.dtype, BoolType)  # sum_to takes booleans, sum does not
                and not has_unknown_dim(x) and not has_unknown_dim(result)):  # with ?, the axes are known at run time
            return new
        dims, kept = x.shape.dims, result.shape.dims
        lead = len(dims) - len(kept)
        if lead > 0 and dims[lead:] == kept:
            axes, keepdims = tuple(range(lead)), False
        elif lead == 0 and all(k == d or (k.is_const and k.value == 1) for d, k in zip(dims, kept)):
            axes, keepdims = tuple(i for i, (d, k) in enumerate(zip(dims, kept)) if k != d), True
        else:
            return new
        attrs = {"axis": axes, "keepdims": keepdims}
        return Call(Op("sum", span=old.callee.span), [new.args[0]], attrs, span=old.span)

    def filled_like(self, old: Call, new: Call) -> Expr:
        """``broadcast_to_like(ones_like(s), y)`` -> ``ones_like(y)``; zeros alike."""
        for name, value in _FILLS.items():
            if self.filled(old.args[0], int(value)) and self.keeps(old, 1, (0,)):
                return Call(Op(name, span=old.callee.span), [new.args[1]], span=old.span)
        return new
