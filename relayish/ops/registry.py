"""The operator registry: every standard operator's record (``OpDef``, ``record.py``) by name.

Each family module (elementwise, broadcast, reduce, shape, nn, grad_ops, arithmetic, composite) lists its records in
``OPS``; this module only checks that the names are unique and looks them up.
"""

from __future__ import annotations

from . import arithmetic, broadcast, composite, elementwise, grad_ops, nn, reduce, shape
from .record import OpDef


def _table(*families: tuple[OpDef, ...]) -> dict[str, OpDef]:
    table: dict[str, OpDef] = {}
    for op in (op for family in families for op in family):
        if op.name in table:
            raise ValueError(f"operator {op.name} is defined twice")
        table[op.name] = op
    return table


_REGISTRY = _table(elementwise.OPS, broadcast.OPS, nn.OPS, shape.OPS, grad_ops.OPS, reduce.OPS, arithmetic.OPS,
                   composite.OPS)


def get_op(name: str) -> OpDef:
    try:
        return _REGISTRY[name]
    except KeyError:
        raise KeyError(f"unknown operator {name!r}") from None


def lookup_op(name: str) -> OpDef | None:
    found = _REGISTRY.get(name)
    if found is not None or not _USER:
        return found
    found = _USER.get(name)
    for derive in DERIVED:
        found = found or derive(name)
    return found


# Functions making the record of a name no record has yet, or None: an index-expression operator's
# adjoint (``@op__d0``) is derived when first named, by AD or by a program optimized in another process
DERIVED: list = []


# Operators registered from Python (relayish/ops/user.py): looked up like the standard ones, but not
# among ``all_ops`` (the records every standard operator completes: kernels, docs, generator rules).
_USER: dict[str, OpDef] = {}


def register_user_op(op: OpDef) -> None:
    _USER[op.name] = op


def unregister_user_op(name: str) -> None:
    _USER.pop(name, None)


def user_op_names() -> list[str]:
    return list(_USER)


def is_user_op(name: str) -> bool:
    return name in _USER and name not in _REGISTRY


def all_ops() -> dict[str, OpDef]:
    return dict(_REGISTRY)
