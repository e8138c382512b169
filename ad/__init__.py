"""Higher-order reverse-mode AD through backpropagator closures and references (docs/design.md).

- ``expand(module)``: every ``Grad`` node replaced by its expansion (what the evaluator runs);
- ``grad(module, name)``: the module with ``@<name>_grad``, the expanded ``Grad(@name)``,
  an ordinary program to print, parse and inspect;
- ``vjp(module, name)``: the module with ``@<name>_vjp(params..., cotangent)`` returning
  ``(value, gradients)``, for results that are not a floating scalar (re-exported as
  ``relayish.vjp``);
- ``lowered(module)``: calls of operators defined by others (a record's ``lowering``) replaced
  by what they stand for, as AD differentiates them and the compiler compiles them.

An operator's gradient rule is its record's ``gradient`` (``relayish.ops``), which gets the
call's ``Site`` (``relayish.ops.sites``).
"""

from __future__ import annotations

from relayish.errors import RelayTypeError
from relayish.module import Module
from relayish.types import FloatType, Shape, TensorType, Type, is_first_order
from typecheck import infer

from .transform import dual_type, expand, lowered, with_transform

__all__ = ["dual_type", "expand", "grad", "lowered", "vjp"]


def grad(module: Module, name: str) -> Module:
    """``module`` with ``@<name>_grad`` = the expansion of ``Grad(@name)``: it returns
    ``(value, (gradient per parameter...))``; ``@name`` must return a floating scalar."""
    ret = _result_type(module, name)
    if not (isinstance(ret, TensorType) and isinstance(ret.dtype, FloatType) and ret.shape == Shape()):
        raise RelayTypeError(f"Grad: @{name} must return a floating-point scalar, but it returns {ret}; "
                             "vjp takes other results", module[name].span)
    return with_transform(module, name, f"{name}_grad", cotangent=False)


def vjp(module: Module, name: str) -> Module:
    """``module`` with ``@<name>_vjp(params..., cotangent)``: the value of ``@name`` and the
    gradient of ``sum(value * cotangent)`` per parameter (results: tensors, tuples of them)."""
    ret = _result_type(module, name)
    if not is_first_order(ret):
        raise RelayTypeError(f"vjp: @{name} must return tensors or tuples of them, not {ret}", module[name].span)
    return with_transform(module, name, f"{name}_vjp", cotangent=True)


def _result_type(module: Module, name: str) -> Type:
    if name not in module:
        raise KeyError(f"module has no global @{name}")
    return infer(module)[name].ret_type
