"""Constant folding and propagation.

- an operator call whose arguments are all constants (or variables bound to them) becomes the constant the evaluator
  computes (``runtime.operators.run_op``, the reference semantics), when the result has at
  most ``MAX_FOLDED_ELEMENTS`` elements (larger constants would bloat the program), written
  as a ``full`` when its elements are all one value (and a ``full`` is not folded); a call
  that raises is left alone, so the error still happens when the program runs, and so is one
  whose type has ``?`` (``dyn_reshape``), whose sizes its type does not know;
- ``if`` on a constant condition becomes the branch taken;
- a projection of a tuple literal becomes the field when the other fields can be dropped
  (``util.removable_nodes``), and a projection of a variable bound to a tuple literal whose
  field is an atom becomes that atom;
- ``let x = a`` where ``a`` is a variable, a global of no type parameters or a constant of
  at most ``MAX_SUBSTITUTED_ELEMENTS`` elements is dropped and ``a`` put in ``x``'s place.

One top-down pass in evaluation order, so what a fold exposes folds on (``let a = 1f in
let b = a + 2f in b * b`` becomes ``9f``).
"""

from __future__ import annotations

import numpy as np

from relayish.errors import RelayError, RelayRuntimeError
from relayish.expr import Call, Constant, Expr, GlobalVar, If, Let, Op, Proj, Tuple, Var
from relayish.module import Module
from relayish.ops.registry import OpDef, lookup_op
from relayish.types import BaseType, Shape, TensorType, has_unknown_dim
from runtime.operators import run_op

from .util import ScopedRewriter, is_removable

MAX_FOLDED_ELEMENTS = 1024
MAX_SUBSTITUTED_ELEMENTS = 16


def fold_constants(module: Module) -> Module:
    """``module`` with constant operator calls computed, constant ``if``s decided, projections
    of tuple literals resolved and bindings of atoms substituted."""
    monomorphic = {name for name, fn in module.functions.items() if not fn.type_params}
    return module.with_functions({name: _Fold(monomorphic, name).rewrite_function(fn)
                                  for name, fn in module.functions.items()})


class _Fold(ScopedRewriter):
    def __init__(self, monomorphic: set[str], global_name: str) -> None:
        super().__init__()
        self.monomorphic = monomorphic
        self.global_name = global_name
        self.tuples: dict[int, Tuple] = {}  # id(var) -> the tuple literal it is bound to
        self.constants: dict[int, Constant] = {}  # id(var) -> the constant too large to substitute it is bound to

    def bind(self, let: Let, value: Expr) -> Expr | None:
        if self.substitutable(value):
            self.subst[id(let.var)] = value
            return None
        if isinstance(value, Tuple):
            self.tuples[id(let.var)] = value
        if isinstance(value, Constant):
            self.constants[id(let.var)] = value
        if isinstance(value, Call) and not value.args:  # a fill: kept, it reads better than its elements
            folded = self.computed(value)
            if folded is not None:
                self.constants[id(let.var)] = folded
        return value

    def substitutable(self, value: Expr) -> bool:
        if isinstance(value, Constant):
            return value.value.size <= MAX_SUBSTITUTED_ELEMENTS
        if isinstance(value, GlobalVar):
            return value.name in self.monomorphic  # a polymorphic one is instantiated where it is used
        return isinstance(value, Var)

    def rebuild(self, old: Expr, new: Expr) -> Expr:
        if isinstance(new, Call):
            return self.call(new)
        if isinstance(new, If) and isinstance(new.cond, Constant):
            return new.then_branch if bool(new.cond.value) else new.else_branch
        if isinstance(new, Proj):
            return self.proj(new)
        return new

    def call(self, e: Call) -> Expr:
        if not e.args:
            return e  # a fill (``full``) is as cheap as its constant and reads better
        folded = self.folded(e)
        return e if folded is None else folded

    def computed(self, e: Call) -> Constant | None:
        """The constant ``e`` computes, if its arguments are constants (or variables bound to them)."""
        args = [self.constants.get(id(a)) or (self.computed(a) if isinstance(a, Call) and not a.args else a)
                for a in e.args]  # through variables bound to constants, and fills
        if not (isinstance(e.callee, Op) and all(isinstance(a, Constant) for a in args)):
            return None
        op = lookup_op(e.callee.name)
        if op is None or self.less_precise(op, e, args):
            return None
        try:
            value = run_op(op, e.callee.name, [a.value for a in args], e.attrs, e.span, self.global_name)
        except (RelayRuntimeError, TypeError):  # raises at run time, or a dtype no constant can hold
            return None
        if isinstance(value, tuple):  # a tuple result (split's parts): no one constant holds it
            return None
        if value.size > MAX_FOLDED_ELEMENTS:
            return None
        return Constant(value, span=e.span)

    @staticmethod
    def less_precise(op: OpDef, e: Call, args: list[Constant]) -> bool:
        """Whether the call's type has ``?`` though its arguments are constants (dyn_reshape: the
        sizes are in newshape's values): its constant would make the program's types more precise
        than those it was checked with, and an ascription that checks the value when the program
        runs would become a type error (or one that a relation refuses: left to fail when it runs)."""
        types = [TensorType(a.dtype, Shape(*a.value.shape)) for a in args]
        try:
            return has_unknown_dim(op.type_relation(types, op.full_attrs(e.attrs)))
        except (RelayError, TypeError, ValueError):
            return True

    def folded(self, e: Call) -> Expr | None:
        """What ``e`` folds to: its constant, written as a ``full`` when every element is one value."""
        constant = self.computed(e)
        if constant is None or constant.value.size <= 1:
            return constant
        first = constant.value.flat[0]
        # compared as Python numbers, exactly: NumPy would compare an int64 with a float in float64,
        # where 2**63 - 1 equals the float 2**63 (which the int64 fill then wraps to -2**63)
        if not np.all(constant.value == first) or float(first.item()) != first.item() or np.isnan(first):
            return constant
        attrs = {"shape": constant.value.shape, "fill_value": float(first), "dtype": BaseType.from_numpy(constant.value.dtype)}
        return Call(Op("full"), [], attrs, span=e.span)

    def proj(self, e: Proj) -> Expr:
        tup = e.tuple_value
        if isinstance(tup, Var) and id(tup) in self.tuples:
            field = self.tuples[id(tup)].fields[e.index]
            return field if self.substitutable(field) else e
        if isinstance(tup, Tuple):
            others = [f for i, f in enumerate(tup.fields) if i != e.index]
            if all(is_removable(f) for f in others):
                return tup.fields[e.index]
        return e
