"""relayish: a differentiable, statically typed functional IR for tensor programs.

The public API is loaded lazily (PEP 562) so that ``import relayish`` stays cheap and no
layer is imported before it is used.
"""

from __future__ import annotations

import importlib
import typing

_EXPORTS = {
    "parse": ("relayish.parser", "parse"),
    "prelude": ("relayish.parser", "prelude_module"),
    "DataValue": ("runtime.values", "DataValue"),
    "astext": ("relayish.printer", "astext"),
    "alpha_equal": ("relayish.alpha", "alpha_equal"),
    "structural_hash": ("relayish.alpha", "structural_hash"),
    "free_vars": ("relayish.traverse", "free_vars"),
    "infer_types": ("typecheck", "infer"),
    "RelayError": ("relayish.errors", "RelayError"),
    "ParseError": ("relayish.errors", "ParseError"),
    "AttributeSchemaError": ("relayish.errors", "AttributeSchemaError"),
    "RelayTypeError": ("relayish.errors", "RelayTypeError"),
    "KindError": ("relayish.errors", "KindError"),
    "RelayRuntimeError": ("relayish.errors", "RelayRuntimeError"),
    "StepLimitError": ("relayish.errors", "StepLimitError"),
    "FrontendError": ("relayish.errors", "FrontendError"),
    "relay": ("frontend", "relay"),
    "relay_model": ("frontend", "relay_model"),
    "Tensor": ("frontend", "Tensor"),
    "Dim": ("frontend", "Dim"),
    "Any": ("relayish.dims", "UNKNOWN_DIM"),
    "Float": ("frontend", "Float"),
    "Float16": ("frontend", "Float16"),
    "Float32": ("frontend", "Float32"),
    "Float64": ("frontend", "Float64"),
    "Int": ("frontend", "Int"),
    "Int8": ("frontend", "Int8"),
    "Int16": ("frontend", "Int16"),
    "Int32": ("frontend", "Int32"),
    "Int64": ("frontend", "Int64"),
    "UInt8": ("frontend", "UInt8"),
    "Bool": ("frontend", "Bool"),
    "data": ("frontend", "data"),
    "List": ("frontend.prelude", "List"),
    "Cons": ("frontend.prelude", "Cons"),
    "Nil": ("frontend.prelude", "Nil"),
    "Option": ("frontend.prelude", "Option"),
    "Some": ("frontend.prelude", "Some"),
    "Nothing": ("frontend.prelude", "Nothing"),
    "Tree": ("frontend.prelude", "Tree"),
    "Leaf": ("frontend.prelude", "Leaf"),
    "Node": ("frontend.prelude", "Node"),
    "evaluate": ("interp", "evaluate"),
    "register_operator": ("relayish.ops.user", "register_operator"),
    "unregister_operator": ("relayish.ops.user", "unregister_operator"),
    "vjp": ("ad", "vjp"),
    "Span": ("relayish.errors", "Span"),
    "Module": ("relayish.module", "Module"),
    "ir": ("relayish.ir", None),
    "ops": ("relayish.ops", None),
}

__all__ = sorted([*_EXPORTS, "compile"])


def compile(module: typing.Any, name: str, *args: typing.Any, **options: typing.Any) -> typing.Any:  # noqa: A001 - the public name
    """``jit.compile(module, name, target="cpu", opt_level=3, max_calls=None, tiered=None)``, with
    the evaluator as the first tier of straight-line programs (jit/tiers.py): the JIT and the
    evaluator are sibling layers that never import each other, so this layer, above both, joins
    them (docs/design.md)."""
    import interp  # imported at the first call, as every export here (PEP 562): importing relayish stays cheap
    import jit

    return jit.compile(module, name, *args, first_tier=interp.run_prepared, **options)


def __getattr__(name: str) -> typing.Any:
    try:
        module_name, attr = _EXPORTS[name]
    except KeyError:
        raise AttributeError(f"module 'relayish' has no attribute {name!r}") from None
    module = importlib.import_module(module_name)
    value = module if attr is None else getattr(module, attr)
    globals()[name] = value
    return value


def __dir__() -> list[str]:
    return __all__
