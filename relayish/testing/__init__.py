"""Differential testing, as a product feature (docs/difftest.md).

- ``relayish.testing.strategies``: hypothesis strategies for well-typed programs
  (``modules``, ``programs``, ``Features``) and ``inputs`` for a function's parameters;
- ``check_equivalent``: two modules or backends on the same inputs, compared structurally;
- ``check_grad``: a gradient against central finite differences in float64; ``check_jvp``
  forward mode (``Jvp``) against them; ``check_vmap``: a batched function (``Vmap``) against the
  loop over its examples;
- ``assert_pass_preserves``: an IR-to-IR pass keeps programs well typed and their results;
- ``relayish difftest``: generated programs through several backends, from the shell.

Names load lazily, so importing ``relayish.testing`` costs nothing until one is used.
"""

from __future__ import annotations

import importlib
from typing import Any

_EXPORTS = {
    "check_equivalent": "checks",
    "check_grad": "checks",
    "check_jvp": "checks",
    "check_vmap": "checks",
    "check_pass": "checks",
    "assert_pass_preserves": "checks",
    "EquivalenceError": "checks",
    "GradientError": "checks",
    "PassError": "checks",
    "difference": "compare",
    "assert_same": "compare",
    "inputs": "inputs",
    "example_inputs": "inputs",
    "to_float64": "promote",
    "Features": "strategies",
    "Program": "strategies",
    "modules": "strategies",
    "programs": "strategies",
}

__all__ = sorted(_EXPORTS)


def __getattr__(name: str) -> Any:
    if name not in _EXPORTS:
        raise AttributeError(f"module 'relayish.testing' has no attribute {name!r}")
    value = getattr(importlib.import_module(f"{__name__}.{_EXPORTS[name]}"), name)
    globals()[name] = value
    return value


def __dir__() -> list[str]:
    return __all__
