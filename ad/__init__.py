"""Higher-order reverse-mode AD through backpropagator closures and references, and forward mode
through (value, tangent) pairs (docs/design.md).

- ``expand(module)``: every ``Grad`` and ``Jvp`` node replaced by its expansion (what the evaluator runs);
- ``grad(module, name)``: the module with ``@<name>_grad``, the expanded ``Grad(@name)``,
  an ordinary program to print, parse and inspect;
- ``vjp(module, name)``: the module with ``@<name>_vjp(params..., cotangent)`` returning
  ``(value, gradients)``, for results that are not a floating scalar (re-exported as
  ``relayish.vjp``);
- ``jvp(module, name)``: the module with ``@<name>_jvp(params..., tangents...)`` returning
  ``(value, tangent)``, the expanded ``Jvp(@name)`` (results: tensors, tuples of them);
- ``vmap(module, name, in_axes)``: the module with ``@<name>_vmap``, the expanded
  ``Vmap(@name, in_axes)``: ``@name`` mapped over a batch (``ad.batching``);
- ``lowered(module)``: calls of operators defined by others (a record's ``lowering``) replaced
  by what they stand for, as AD differentiates them and the compiler compiles them.

An operator's gradient rule is its record's ``gradient`` (``relayish.ops``), which gets the
call's ``Site`` (``relayish.ops.sites``); its forward rule is derived from it (``ad.tangents``).
"""

from __future__ import annotations

from relayish.errors import RelayTypeError
from relayish.module import Module
from relayish.types import FloatType, Shape, TensorType, Type, is_first_order
from typecheck import infer

from .transform import FORWARD, dual_type, expand, lowered, with_transform, with_vmap

__all__ = ["dual_type", "expand", "grad", "jvp", "lowered", "vjp", "vmap"]


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


def jvp(module: Module, name: str) -> Module:
    """``module`` with ``@<name>_jvp(params..., tangents...)`` = the expansion of ``Jvp(@name)``: the
    value of ``@name`` and its directional derivative along the tangents (one per parameter, of its type)."""
    if name not in module:
        raise KeyError(f"module has no global @{name}")
    return with_transform(module, name, f"{name}_jvp", mode=FORWARD)


def vmap(module: Module, name: str, in_axes: tuple[int | None, ...] | None = None) -> Module:
    """``module`` with ``@<name>_vmap`` = the expansion of ``Vmap(@name, in_axes)``: ``@name`` on a
    batch, parameter i taken apart along axis ``in_axes[i]`` (None: one value for all examples;
    ``in_axes`` None: axis 0 of every parameter), the result with the batch in front."""
    if name not in module:
        raise KeyError(f"module has no global @{name}")
    if in_axes is None:
        in_axes = (0,) * len(module[name].params)
    return with_vmap(module, name, f"{name}_vmap", tuple(in_axes))


def _result_type(module: Module, name: str) -> Type:
    if name not in module:
        raise KeyError(f"module has no global @{name}")
    return infer(module)[name].ret_type
