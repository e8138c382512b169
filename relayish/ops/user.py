"""Operators a user adds from Python: a NumPy implementation, a type relation chosen from the
library's (or a function of one's own), and optionally a vector-Jacobian product for gradients.

``register_operator("hypot", np.hypot, relation="broadcast", vjp=hypot_vjp)`` makes ``@hypot``
an operator like the standard ones: the parser reads ``@hypot(%a, %b)``, the checker runs the
relation, the evaluator and the CPU JIT call the implementation (on the host), AD calls the
vjp. The implementation must be pure (the optimizer may compute a call on constants once, or
drop an unused one); its results are checked against the relation's type at every call. A text
module may declare such an operator by its relation (``operator @hypot : relation broadcast``,
docs/text-format.md) to type-check without the implementation.
"""

from __future__ import annotations

from typing import Any, Callable

from ..errors import RelayError
from ..types import BoolType, TensorType, TupleType, Type
from . import registry
from .record import OpDef, Pattern, Raises
from .relations import Relation, broadcasting, tensors, unary
from .sites import Site

# the relations a declaration can name, with the number of arguments each takes
RELATIONS: dict[str, tuple[Relation, int]] = {
    "elementwise": (unary(None), 1),  # the argument's own type
    "broadcast": (broadcasting(None), 2),  # NumPy broadcasting of one dtype
    "compare": (broadcasting(None, BoolType()), 2),  # the same, giving booleans
}


def register_operator(
    name: str,
    compute: Callable[..., Any],
    *,
    relation: str | Relation,
    num_args: int | None = None,
    vjp: Callable[..., tuple[Any, ...]] | None = None,
    doc: str = "",
) -> OpDef:
    """Add operator ``@name`` implemented by ``compute(*arrays) -> array``.

    ``relation`` names one of ``RELATIONS`` or is a function ``(arg_types, attrs) -> Type``
    (then ``num_args`` is required). ``vjp(g, *arrays)`` returns one adjoint per argument in that
    argument's dtype: for a named relation of the result's shape (as NumPy computes it; it is
    summed down where the argument was broadcast), for one's own relation of the argument's shape.
    Without a vjp, ``Grad`` through the operator is a type error.
    Registering a name again replaces the earlier operator (``unregister_operator`` removes it).
    """
    if not (isinstance(name, str) and name.isidentifier()):
        raise RelayError(f"an operator name must be an identifier, not {name!r}")
    if name in registry.all_ops():
        raise RelayError(f"@{name} is a standard operator and cannot be registered again")
    if not callable(compute):
        raise RelayError(f"the implementation of @{name} must be callable, not {compute!r}")
    type_relation, arity = _relation(name, relation, num_args)
    unregister_operator(name)  # an earlier registration's vjp must not outlive it
    gradient = None
    if vjp is not None:
        broadcast = isinstance(relation, str)
        registry.register_user_op(OpDef(f"{name}_vjp", vjp, Pattern.OPAQUE, arity + 1, _adjoint_types(broadcast),
                                        raises=Raises.MAYBE, doc=f"the vector-Jacobian product of @{name}"))
        gradient = _gradient(f"{name}_vjp", arity, broadcast)
    op = OpDef(name, compute, Pattern.OPAQUE, arity, type_relation, gradient=gradient, raises=Raises.MAYBE, doc=doc)
    registry.register_user_op(op)
    return op


def unregister_operator(name: str) -> None:
    """Remove a registered operator (and its vjp)."""
    registry.unregister_user_op(name)
    registry.unregister_user_op(f"{name}_vjp")


def _relation(name: str, relation: str | Relation, num_args: int | None) -> tuple[Relation, int]:
    if isinstance(relation, str):
        if relation not in RELATIONS:
            raise RelayError(f"@{name}: unknown relation {relation!r} (the relations: {', '.join(RELATIONS)})")
        found, arity = RELATIONS[relation]
        if num_args not in (None, arity):
            raise RelayError(f"@{name}: relation {relation!r} takes {arity} arguments, not {num_args}")
        return found, arity
    if not callable(relation) or not isinstance(num_args, int) or num_args < 0:
        raise RelayError(f"@{name}: a relation of one's own must be callable and come with num_args")
    return relation, num_args


def _adjoint_types(broadcast: bool) -> Relation:
    """A vjp's result relation (argument 1 is the adjoint g): a tuple of the primal arguments' types,
    or with ``broadcast`` of their dtypes in g's shape."""

    def relation(args: list[Type], attrs: dict[str, Any]) -> Type:
        g, *primals = tensors(args)
        return TupleType([TensorType(p.dtype, g.shape) if broadcast else p for p in primals])

    return relation


def _gradient(vjp_name: str, arity: int, broadcast: bool) -> Callable[[Site], list[Any]]:
    def gradient(s: Site) -> list[Any]:
        adjoints = s.op(vjp_name, s.g, *s.args)
        parts = [s.field(adjoints, i) for i in range(arity)]
        return [s.op("sum_to", part, arg) for part, arg in zip(parts, s.args)] if broadcast else parts

    return gradient


__all__ = ["RELATIONS", "register_operator", "unregister_operator"]
