"""Deep programs shared by the depth tests and the benchmarks."""

from __future__ import annotations

from .. import ir
from ..parser import parse

I32 = "Tensor(IntType(32), Shape())"

LOOPS = parse(f"""
def @count(%i: {I32}, %n: {I32}) -> {I32} {{
  if %i == %n then %i else @count(%i + 1, %n)
}}
def @even(%n: {I32}) -> Tensor(BoolType, Shape()) {{ if %n == 0 then true else @odd(%n - 1) }}
def @odd(%n: {I32}) -> Tensor(BoolType, Shape()) {{ if %n == 0 then false else @even(%n - 1) }}
def @total(%n: {I32}) -> {I32} {{ if %n == 0 then 0 else %n + @total(%n - 1) }}
""", filename="deep_programs.py")
"""``@count`` (a tail-recursive loop), ``@even``/``@odd`` (mutual tail recursion) and
``@total`` (recursion that is not a tail call: the machine's stack grows)."""


def let_chain(length: int, width: int = 8) -> ir.Module:
    """``@chain(%x)``: ``%v_i = %v_{i-1} * 0.5 + 1.0`` for i < length over a float32 vector."""
    x = ir.Var("x", ir.TensorType(ir.FloatType(32), ir.Shape(width)))
    names = [ir.Var(f"v{i}") for i in range(length)]
    body: ir.Expr = names[-1]
    for i in range(length - 1, -1, -1):
        prev = names[i - 1] if i else x
        value = ir.Call(ir.Op("add"), [ir.Call(ir.Op("mul"), [prev, ir.Constant(0.5)]), ir.Constant(1.0)])
        body = ir.Let(names[i], value, body)
    return ir.Module({"chain": ir.Function([x], body)})
