"""The call site a gradient rule differentiates, and the builder of its operator calls.

An operator's ``gradient`` (``OpDef.gradient``) gets a ``Site``: the call's primal arguments
and their types, its result, its attributes and the adjoint ``g`` of its result, all as
variables. It returns one expression per argument: the contribution to that argument's
adjoint, or None where the argument gets nothing (an integer argument, a shape-only
argument). The expressions are ordinary operator calls built with ``Site.op``, so a gradient
is again a program and can itself be differentiated (gradients of gradients); broadcasting is
undone with ``sum_to``. The records never import this module or the expression classes.
"""

from __future__ import annotations

from typing import Any

import attrs
import numpy as np

from ..expr import Call, Constant, Expr, Op, Proj, Tuple
from ..types import TensorType


@attrs.frozen
class Site:
    """One operator call being differentiated, or lowered (``relayish.ops.expand``: then
    ``out`` and ``g`` are None and the rule returns the expression the call stands for)."""

    name: str
    args: tuple[Expr, ...]  # primal arguments
    types: tuple[TensorType, ...]
    out: Expr | None  # primal result (None for a lowering)
    out_type: TensorType
    attrs: dict[str, Any]  # every attribute, defaults filled in
    g: Expr | None  # the adjoint of the result (None for a lowering)

    def op(self, name: str, *args: Expr, **attrs_: Any) -> Call:
        """A call of operator ``name``."""
        return Call(Op(name), args, attrs_)

    def tuple(self, *fields: Expr) -> Tuple:
        """A tuple of ``fields`` (the lowering of an operator with a tuple result, such as ``split``)."""
        return Tuple(fields)

    def field(self, e: Expr, index: int) -> Proj:
        """Field ``index`` of the tuple ``e`` (a user operator's vjp returns one per argument)."""
        return Proj(e, index)

    def const(self, value: float, like: TensorType | None = None) -> Constant:
        """A scalar of ``like``'s dtype (the result's by default)."""
        dtype = (like or self.out_type).dtype.to_numpy()
        return Constant(np.array(value, dtype=dtype))

    def constant(self, value: Any) -> Constant:
        """A constant of an array (or NumPy scalar) as it is, its dtype included."""
        return Constant(value)

    def zeros(self, e: Expr) -> Call:
        return self.op("zeros_like", e)

    def masked(self, cond: Expr, g: Expr) -> Call:
        """``g`` where ``cond``, else 0."""
        return self.op("where", cond, g, self.zeros(g))

    def rank(self, position: int) -> int:
        return self.types[position].shape.rank

    def pick(self, *keys: str) -> dict[str, Any]:
        """The attributes ``keys``, to pass on to the operators of the gradient."""
        return {k: self.attrs[k] for k in keys}
