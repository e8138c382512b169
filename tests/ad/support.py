"""Shared by the AD acceptance tests: program text, running Grad, comparing results.

Programs are written in the text format as ``string.Template``s, so that the long tensor
types read as short names: ``$F`` is a float64 scalar, ``$I`` an int32 scalar and ``$B`` a
bool scalar (``load`` substitutes them; nothing else in the text format uses ``$``).

Expected values are written in the tests by hand or computed there with NumPy, never with
relayish's own operators or AD. ``assert_same`` compares a result with its expectation
structurally (relayish.testing's comparison, with relative tolerance 1e-9 by default).
"""

from __future__ import annotations

from string import Template
from typing import Any

import numpy as np

import relayish
from relayish import ir
from relayish.testing import compare

TYPES = {
    "F": "Tensor(FloatType(64), Shape())",
    "I": "Tensor(IntType(32), Shape())",
    "B": "Tensor(BoolType, Shape())",
}

RTOL64 = 1e-9  # exact-number checks in float64


def source(template: str, **extra: str) -> str:
    """The program text: ``template`` with ``$F``, ``$I``, ``$B`` (and ``extra``) substituted."""
    return Template(template).substitute({**TYPES, **extra})


def load(template: str, filename: str = "ad.rly", **extra: str) -> relayish.Module:
    return relayish.parse(source(template, **extra), filename=filename)


def f64(value: Any) -> np.ndarray:
    return np.asarray(value, dtype=np.float64)


def i32(value: Any) -> np.ndarray:
    return np.asarray(value, dtype=np.int32)


def boolean(value: Any) -> np.ndarray:
    return np.asarray(value, dtype=np.bool_)


def with_grad_wrapper(module: relayish.Module, name: str) -> tuple[relayish.Module, str]:
    """``module`` with ``@grad_of_<name>(params...) = Grad(@name)(params...)`` added."""
    wrapper = f"grad_of_{name}"
    fn = module[name]
    params = [ir.Var(p.name_hint, p.type_annotation) for p in fn.params]
    body = ir.Call(ir.Grad(ir.GlobalVar(name)), params)
    return module.with_function(wrapper, ir.Function(params, body, type_params=fn.type_params)), wrapper


def run_grad(module: relayish.Module, name: str, *args: Any) -> Any:
    """What ``Grad(@name)(*args)`` evaluates to: ``(value, (gradient per argument...))``."""
    extended, wrapper = with_grad_wrapper(module, name)
    return relayish.evaluate(extended, wrapper, *args)


def assert_same(actual: Any, expected: Any, *, rtol: float = RTOL64, atol: float = 0.0) -> None:
    """Structural comparison (``relayish.testing.assert_same``: tuples by position, arrays by
    dtype, shape and value, integers and bools exactly, floats within
    ``atol + rtol * max(|actual|, |expected|)``), with the float64 tolerance of these tests
    as the default. The message names the first differing leaf."""
    compare.assert_same(actual, expected, rtol=rtol, atol=atol)


def contains_grad(fn: ir.Function) -> bool:
    """Whether a ``Grad`` node occurs anywhere in ``fn``."""
    from relayish.traverse import post_order

    return any(isinstance(node, ir.Grad) for node in post_order(fn))


def directional_gradient(first: ir.Module, position: int = 0) -> ir.Module:
    """``@main(args..., v) = sum(d/d arg_position (first's @main)(args...) * v)``, first's @main
    kept as ``@f``: the gradient of the new @main holds the second derivatives of ``@f`` in that
    argument (a Hessian-vector product) and the mixed ones, for ``check_grad``."""
    params = [ir.Var(p.name_hint, p.type_annotation) for p in first["main"].params]
    direction = ir.Var("v", params[position].type_annotation)
    gradient = ir.Proj(ir.Proj(ir.Call(ir.Grad(ir.GlobalVar("f")), params), 1), position)
    body = ir.Call(ir.Op("sum"), [ir.Call(ir.Op("mul"), [gradient, direction])])
    scalar = ir.TensorType(direction.type_annotation.dtype, ir.Shape())
    return ir.Module({"f": first["main"], "main": ir.Function([*params, direction], body, scalar)})
