"""The operator records (``record.py``), the standard operators' records by family, and their registry."""

from .record import AttrSpec, OpDef, Pattern, Raises
from .registry import all_ops, get_op, lookup_op

__all__ = ["AttrSpec", "OpDef", "Pattern", "Raises", "all_ops", "get_op", "lookup_op"]
