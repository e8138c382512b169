"""Calls of one operator drawn by its generator rule, for the tests that run every operator.

The generator's rule (its record's ``rule``) draws argument types and attributes for a result
type its ``hint`` suggests, independently of the type relation. Tests then build programs
around the call: the call alone (lowering vs compute) or ``sum(op(args...) * w)`` with random
weights ``w`` (gradient vs finite differences: no symmetry hides a wrong gradient).
"""

from __future__ import annotations

from typing import Any

import attrs
import numpy as np

from relayish.dims import Dim
from relayish.expr import Call, Expr, Function, Op, Var
from relayish.module import Module
from relayish.ops import get_op
from relayish.ops.generation import Hint, Indices, Plan, Sizes
from relayish.testing.choices import Stream
from relayish.testing.strategies import Features, _Generator, planned_call
from relayish.types import BaseType, Kind, Shape, TensorType, Type, TypeVar

N = TypeVar("n", Kind.DIM)  # the dimension variable in scope of a symbolic draw


@attrs.frozen
class DrawnCall:
    """``op(params...)`` with the result type ``target``; ``N`` in scope when ``symbolic``."""

    name: str
    plan: Plan
    params: tuple[Var, ...]
    target: TensorType
    symbolic: bool

    @property
    def call(self) -> Expr:
        """The call (its field ``plan.field`` for a tuple result)."""
        return planned_call(self.name, self.params, self.plan)

    def module(self, body: Expr | None = None, extra: tuple[Var, ...] = (), ret: Type | None = None) -> Module:
        """``@main(params..., extra...) = body`` (the call by default)."""
        body = self.call if body is None else body
        ret = self.target if ret is None else ret
        return Module({"main": Function([*self.params, *extra], body, ret, (N,) if self.symbolic else ())})

    def weighted_loss(self) -> Module:
        """``@main(params..., w) = sum(op(params...) * w)``, the result's dtype a scalar."""
        weights = Var("w", self.target)
        loss = Call(Op("sum"), [Call(Op("mul"), [self.call, weights])])
        return self.module(loss, (weights,), TensorType(self.target.dtype, Shape()))

    def sizes(self, rng: np.random.Generator) -> dict[TypeVar, Dim]:
        """A size for ``N``, 1 to 3 (the generator keeps every dimension at least 1)."""
        return {N: Dim.const(int(rng.integers(1, 4)))}

    def shapes(self, sizes: dict[TypeVar, Dim]) -> list[tuple[int, ...]]:
        """The parameters' concrete shapes with ``sizes``."""
        return [tuple(d.substitute(sizes).value for d in p.type_annotation.shape.dims) for p in self.params]

    def arguments(self, sizes: dict[TypeVar, Dim], rng: np.random.Generator, positive: bool = False) -> list[np.ndarray]:
        """Arguments for the parameters: indices in range, sizes as the plan says, integers 1 to 3,
        floats in [-2, 2] (``positive``: [0.5, 2], inside every domain and off the poles)."""
        args = []
        for arg in self.plan.args:
            shape = tuple(d.substitute(sizes).value for d in arg.type.shape.dims)
            dtype = arg.type.dtype.to_numpy()
            if isinstance(arg, Indices):
                args.append(rng.integers(0, arg.size, size=shape).astype(dtype))
            elif isinstance(arg, Sizes):
                args.append(arg.value(sizes))
            elif dtype.kind == "b":
                args.append(rng.random(shape) < 0.5)
            elif dtype.kind in "iu":
                args.append(rng.integers(1, 4, size=shape).astype(dtype))
            else:
                args.append(rng.uniform(0.5 if positive else -2.0, 2.0, size=shape).astype(dtype))
        return args

    def out_shape(self, sizes: dict[TypeVar, Dim]) -> tuple[int, ...]:
        return tuple(d.substitute(sizes).value for d in self.target.shape.dims)


def draw_call(name: str, data: bytes, symbolic: bool, dtypes: tuple[BaseType, ...] = (),
              hint: Hint | None = None) -> DrawnCall | None:
    """The call of ``name`` drawn from the bytes ``data`` (of the given dtypes, else any), for a
    result type of ``hint`` (the record's by default); None where the rule draws none."""
    op = get_op(name)
    features: Any = Features(dtypes=dtypes, ops=(name,)) if dtypes else Features()
    gen = _Generator(Stream(data), features)
    gen.scope_dims = (N,) if symbolic else ()
    target = gen.hinted_type(op.hint if hint is None else hint)
    plan = op.rule(gen, target) if target is not None else None
    if plan is None:
        return None
    params = tuple(Var(f"a{i}", arg.type) for i, arg in enumerate(plan.args))
    return DrawnCall(name, plan, params, target, symbolic)
