"""Kinding, type inference with symbolic shapes, and type errors (DESIGN.md section 4).

``typecheck.infer(module)`` returns the module with every binding and every function's
result annotated (re-exported as ``relayish.infer_types``); ``typecheck.expr_types(module)``
gives every expression's type (for transforms such as AD); ``typecheck.check_kinds(module)``,
``typecheck.kind_of`` and ``typecheck.check_type`` check kinds.
"""

from .inference import expr_types, infer
from .kinds import check_kinds, check_type, kind_of

__all__ = ["infer", "expr_types", "check_kinds", "kind_of", "check_type"]
