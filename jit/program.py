"""Lowering a whole program: the globals its entry reaches, the native scalar functions among
them, and the generated source. One function, used by the compiled function itself and by the
second process that compiles its kernels ahead (jit/precompile.py). A program counting its
calls (``max_calls``) has no native functions: the count is kept in the generated Python."""

from __future__ import annotations

from typing import Any

from relayish.module import Module
from relayish.traverse import globals_reached
from typecheck import expr_types

from .lower import CallBudget, Lowering
from .native import native_functions


def lower_program(module: Module, name: str, target: str,
                  budget: CallBudget | None = None) -> tuple[Lowering, dict[str, Any], str]:
    """``@name`` of a typed, optimized ``module`` lowered for ``target``, counting its calls in
    ``budget`` if given: the lowering (its namespace, kernel calls and flags), the native
    functions and the source."""
    roots = sorted(globals_reached(module, module[name]) | {name})
    lowering = Lowering(module, expr_types(module), target, budget)
    native = {} if budget is not None else native_functions(module, lowering.types, roots)
    return lowering, native, lowering.program(roots, native)
