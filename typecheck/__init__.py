"""Kinding, type inference with symbolic shapes, and type errors (docs/design.md).

``typecheck.infer(module)`` returns the module with every binding and every function's
result annotated (re-exported as ``relayish.infer_types``); ``typecheck.expr_types(module)``
gives every expression's type (for transforms such as AD), ``typecheck.type_arguments(module)``
what each use of a polymorphic global instantiates it with (for inlining); ``typecheck.check_kinds(module)``,
``typecheck.kind_of`` and ``typecheck.check_type`` check kinds.
"""

from .inference import expr_types, infer, type_arguments
from .kinds import check_kinds, check_type, kind_of

__all__ = ["infer", "expr_types", "type_arguments", "check_kinds", "kind_of", "check_type"]
