"""The operator registry and the standard operator library."""

from .registry import AttrSpec, OpDef, Pattern, all_ops, get_op, lookup_op, register

__all__ = ["AttrSpec", "OpDef", "Pattern", "all_ops", "get_op", "lookup_op", "register"]
