"""Lowering a whole program: the globals its entry reaches, the native scalar functions among
them, and the generated source. One function, used by the compiled function itself and by the
second process that compiles its kernels ahead (jit/precompile.py)."""

from __future__ import annotations

from typing import Any

from relayish.module import Module
from relayish.traverse import globals_reached
from typecheck import expr_types

from .lower import Lowering
from .native import native_functions


def lower_program(module: Module, name: str, target: str) -> tuple[Lowering, dict[str, Any], str]:
    """``@name`` of a typed, optimized ``module`` lowered for ``target``: the lowering (its
    namespace, kernel calls and flags), the native functions and the source."""
    roots = sorted(globals_reached(module, module[name]) | {name})
    lowering = Lowering(module, expr_types(module), target)
    native = native_functions(module, lowering.types, roots)
    return lowering, native, lowering.program(roots, native)
