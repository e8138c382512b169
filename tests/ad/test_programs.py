"""Reverse-mode AD on small programs, with expected numbers derived by hand.

Each case names a global ``@f`` of a program below, its arguments, the value ``f(args)``
and the gradient (one entry per argument, as ``Grad(@f)`` returns it), and says how the
numbers were derived. Every case is checked three ways:

- ``test_value``: ``@f`` alone in the evaluator gives the value (this runs without AD for
  the programs that contain no ``Grad`` of their own);
- ``test_grad``: ``Grad(@f)(args)`` gives ``(value, gradients)``;
- ``test_grad_agrees_with_finite_differences``: ``relayish.testing.check_grad`` (float64
  central differences, its default tolerances) on the same arguments.

Float64 throughout unless a test says otherwise; numbers compare with relative tolerance
1e-9 (``support.RTOL64``), integers and bools exactly, dtypes and shapes exactly.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np
import pytest

import ad
import relayish
from relayish.testing import check_grad

from .support import (
    assert_same,
    boolean,
    contains_grad,
    f64,
    i32,
    load,
    run_grad,
    with_grad_wrapper,
)

# ---------------------------------------------------------------------------------------
# Programs

# Derivatives of x^3 by nesting Grad through globals.
# f = x^3, f' = 3x^2, f'' = 6x, f''' = 6, f'''' = 0.
CUBE = """
def @cube(%x: $F) -> $F { %x * %x * %x }
def @cube_d1(%x: $F) -> $F { Grad(@cube)(%x)[1][0] }
def @cube_d2(%x: $F) -> $F { Grad(@cube_d1)(%x)[1][0] }
def @cube_d3(%x: $F) -> $F { Grad(@cube_d2)(%x)[1][0] }
"""

# x^5 + 2x: its fourth derivative with Grad nested four times inside one expression
# (QUINTIC_NESTED), and the derivatives through a chain of globals (QUINTIC). Two programs,
# because evaluation expands every Grad of the module, and high orders expand large.
# f = x^5 + 2x, f' = 5x^4 + 2, f'' = 20x^3, f''' = 60x^2, f'''' = 120x, f''''' = 120.
QUINTIC_NESTED = """
def @quint(%x: $F) -> $F { %x * %x * %x * %x * %x + 2.0f64 * %x }
def @quint_d4(%x: $F) -> $F {
  Grad(fn (%x3: $F) -> $F {
    Grad(fn (%x2: $F) -> $F {
      Grad(fn (%x1: $F) -> $F {
        Grad(@quint)(%x1)[1][0]
      })(%x2)[1][0]
    })(%x3)[1][0]
  })(%x)[1][0]
}
"""
QUINTIC = """
def @quint(%x: $F) -> $F { %x * %x * %x * %x * %x + 2.0f64 * %x }
def @quint_d1(%x: $F) -> $F { Grad(@quint)(%x)[1][0] }
def @quint_d2(%x: $F) -> $F { Grad(@quint_d1)(%x)[1][0] }
def @quint_d3(%x: $F) -> $F { Grad(@quint_d2)(%x)[1][0] }
"""

# g = x^2 for x < 0, else x^3: g' = 2x or 3x^2, g'' = 2 or 6x.
BRANCH = """
def @branch(%x: $F) -> $F { if %x < 0.0f64 then %x * %x else %x * %x * %x }
def @branch_d1(%x: $F) -> $F { Grad(@branch)(%x)[1][0] }
"""

# f(a) = (fn (b) { fn (c) { b } })(a)(1.0) = a: f' = 1.
CAPTURED = """
def @captured(%a: $F) -> $F {
  (fn (%b: $F) -> ($F) -> $F { fn (%c: $F) -> $F { %b } })(%a)(1.0f64)
}
"""

# a = x^2, b = x + 5; a + b (x < 0) or a * b (x >= 0), as closures over a and b chosen by an
# if and then called. x < 0: f = x^2 + x + 5, f' = 2x + 1. x >= 0: f = x^2 (x + 5) =
# x^3 + 5x^2, f' = 3x^2 + 10x.
CLOSURES = """
def @closures(%x: $F) -> $F {
  let %a = %x * %x in
  let %b = %x + 5.0f64 in
  let %plus = fn () -> $F { %a + %b } in
  let %times = fn () -> $F { %a * %b } in
  let %chosen = if %x < 0.0f64 then %plus else %times in
  %chosen()
}
"""

# Perturbation confusion (Siskind and Pearlmutter): the inner Grad differentiates x * y in
# y, which is x (x is a constant at that level), so the outer function is x * x and its
# derivative 2x. Mixing up the two levels' perturbations gives 1x or 3x instead.
CONFUSION = """
def @confusion(%x: $F) -> $F {
  %x * Grad(fn (%y: $F) -> $F { %x * %y })(2.0f64)[1][0]
}
def @confusion_inline(%x0: $F) {
  Grad(fn (%x: $F) -> $F { %x * Grad(fn (%y: $F) -> $F { %x * %y })(2.0f64)[1][0] })(%x0)
}
"""

# power(x, n) = x^n by recursion on the int32 n (named @power: @pow is the standard
# operator and cannot be redefined): d/dx = n x^(n-1); d/dn is an int32 zero.
POWER = """
def @power(%x: $F, %n: $I) -> $F {
  if %n == 0 then 1.0f64 else %x * @power(%x, %n - 1)
}
"""

# r = x; while r < 100: r = r * r -- as a local recursive function. With k squarings the
# result is x^(2^k) and its derivative 2^k x^(2^k - 1).
LOOP = """
def @loop(%x: $F) -> $F {
  let %while = fn (%r: $F) -> $F {
    if %r < 100.0f64 then %while(%r * %r) else %r
  } in
  %while(%x)
}
"""

# A higher-order global applied to a closure over b, on a tuple argument (a, b):
# g(x) = x b; f(g, x) = g(x) g(x + 10) = x (x + 10) b^2;
# loss = f(g, a) + f(g, b) = (a^2 + 10a) b^2 + b^4 + 10 b^3;
# d/da = (2a + 10) b^2;  d/db = 2b (a^2 + 10a) + 4b^3 + 30b^2.
# At (4, 5): loss = 56 * 25 + 625 + 1250 = 1400 + 1875 = 3275;
#            d/da = 18 * 25 = 450;  d/db = 10 * 56 + 500 + 750 = 1810.
HIGHER_ORDER = """
def @apply_twice(%g: ($F) -> $F, %x: $F) -> $F { %g(%x) * %g(%x + 10.0f64) }
def @ho_loss(%p: ($F, $F)) -> $F {
  let %a = %p[0] in
  let %b = %p[1] in
  let %g = fn (%x: $F) -> $F { %x * %b } in
  @apply_twice(%g, %a) + @apply_twice(%g, %b)
}
"""

# A reference in user code: r holds x, then x + x; the loss is sum(2x), its gradient 2.
REFS = """
def @refs(%x: Tensor(FloatType(64), Shape(10, 10))) -> $F {
  let %r = Ref(%x) in
  let %u = %r := !%r + !%r in
  @sum(!%r)
}
def @refs_tensor(%x: Tensor(FloatType(64), Shape(10, 10))) -> Tensor(FloatType(64), Shape(10, 10)) {
  let %r = Ref(%x) in
  let %u = %r := !%r + !%r in
  !%r
}
"""

# sum(x + y) with x (3, 4, 1) and y (1, 5) broadcast to (3, 4, 5): each x element is used 5
# times and each y element 12 times.
BROADCAST = """
def @bsum(%x: Tensor(FloatType(64), Shape(3, 4, 1)), %y: Tensor(FloatType(64), Shape(1, 5))) -> $F {
  @sum(%x + %y)
}
"""

# Nested tuple argument p = (a, (v, c)), an int32 k, an int64 vector m and a bool flag:
#   base = a * sum(v * v) * c;  f = base + k a + sum(m) c   if flag,   base   otherwise.
# d/da = sum(v^2) c (+ k);  d/dv = 2 a c v;  d/dc = a sum(v^2) (+ sum(m));
# k, m and flag get zeros of their own dtype and shape.
MIXED = """
def @mixed(%p: ($F, (Tensor(FloatType(64), Shape(3)), $F)), %k: $I,
           %m: Tensor(IntType(64), Shape(2)), %flag: $B) -> $F {
  let %a = %p[0] in
  let %v = %p[1][0] in
  let %c = %p[1][1] in
  let %base = %a * @sum(%v * %v) * %c in
  if %flag
  then %base + @cast(%k, dtype=FloatType(64)) * %a + @cast(@sum(%m), dtype=FloatType(64)) * %c
  else %base
}
"""

# A tuple built and taken apart inside: t = (x^2, x + 1); f = t[0] t[1] = x^3 + x^2,
# f' = 3x^2 + 2x.
INNER_TUPLE = """
def @inner_tuple(%x: $F) -> $F {
  let %t = (%x * %x, %x + 1.0f64) in
  %t[0] * %t[1]
}
"""

# sum(tanh(A B)): dA = (1 - tanh^2(A B)) B^T, dB = A^T (1 - tanh^2(A B)) (NumPy below).
MATMUL = """
def @mm(%a: Tensor(FloatType(64), Shape(2, 3)), %b: Tensor(FloatType(64), Shape(3, 4))) -> $F {
  @sum(@tanh(@matmul(%a, %b)))
}
"""

# ---------------------------------------------------------------------------------------
# Cases


@dataclass
class Case:
    label: str
    program: str
    name: str
    args: tuple
    value: Any
    grads: tuple
    fd: bool = True  # whether test_grad_agrees_with_finite_differences runs it


CASES: list[Case] = []


def case(label: str, program: str, name: str, args: tuple, value: Any, grads: tuple, *, fd: bool = True) -> None:
    CASES.append(Case(label, program, name, args, value, grads, fd))


# x^3 at 2: 8, 12, 12, 6, 0 (f, f', f'', f''', f''''). f'(2) = f''(2) = 12, so x = 3 too:
# 27, 27, 18, 6.
case("cube at 2", CUBE, "cube", (f64(2.0),), f64(8.0), (f64(12.0),))
case("second derivative of x^3 at 2 is 12", CUBE, "cube_d1", (f64(2.0),), f64(12.0), (f64(12.0),))
case("x^3: d2 at 2 (value f'' = 12, gradient f''' = 6)", CUBE, "cube_d2", (f64(2.0),), f64(12.0), (f64(6.0),))
case("x^3: d3 at 2 (value f''' = 6, gradient f'''' = 0)", CUBE, "cube_d3", (f64(2.0),), f64(6.0), (f64(0.0),))
case("x^3: d1 at 3 (27, 18)", CUBE, "cube_d1", (f64(3.0),), f64(27.0), (f64(18.0),))
case("x^3: d2 at 3 (18, 6)", CUBE, "cube_d2", (f64(3.0),), f64(18.0), (f64(6.0),))

# x^5 + 2x at -3: f = -243 - 6 = -249, f' = 405 + 2 = 407, f'' = 20 * -27 = -540,
# f''' = 60 * 9 = 540, f'''' = 120 * -3 = -360, f''''' = 120.
case("x^5 + 2x at -3", QUINTIC, "quint", (f64(-3.0),), f64(-249.0), (f64(407.0),))
case("fourth derivative of x^5 + 2x at -3 is -360 (Grad nested four times)", QUINTIC_NESTED, "quint_d4",
     (f64(-3.0),), f64(-360.0), (f64(120.0),), fd=False)  # a fifth order: exact numbers suffice
case("x^5 + 2x: d1 at -3", QUINTIC, "quint_d1", (f64(-3.0),), f64(407.0), (f64(-540.0),))
case("x^5 + 2x: d2 at -3", QUINTIC, "quint_d2", (f64(-3.0),), f64(-540.0), (f64(540.0),))
case("x^5 + 2x: d3 at -3, gradient the fourth derivative -360", QUINTIC, "quint_d3",
     (f64(-3.0),), f64(540.0), (f64(-360.0),))

# if: at -1, g = 1, g' = -2, g'' = 2; at 1, g = 1, g' = 3, g'' = 6.
case("if: g at -1", BRANCH, "branch", (f64(-1.0),), f64(1.0), (f64(-2.0),))
case("if: g at 1", BRANCH, "branch", (f64(1.0),), f64(1.0), (f64(3.0),))
case("if: second derivative at -1 is 2", BRANCH, "branch_d1", (f64(-1.0),), f64(-2.0), (f64(2.0),))
case("if: second derivative at 1 is 6", BRANCH, "branch_d1", (f64(1.0),), f64(3.0), (f64(6.0),))

case("closure-captured variable: gradient 1", CAPTURED, "captured", (f64(3.0),), f64(3.0), (f64(1.0),))

# 4.5: f = 20.25 * 9.5 = 192.375, f' = 3 * 20.25 + 45 = 105.75.
# -7.9: f = 62.41 - 7.9 + 5 = 59.51, f' = -15.8 + 1 = -14.8.
case("branch-selected closures at 4.5", CLOSURES, "closures", (f64(4.5),), f64(192.375), (f64(105.75),))
case("branch-selected closures at -7.9", CLOSURES, "closures", (f64(-7.9),), f64(59.51), (f64(-14.8),))

# x * x: at 1, value 1 and gradient 2; at 3, 9 and 6.
case("perturbation confusion at 1", CONFUSION, "confusion", (f64(1.0),), f64(1.0), (f64(2.0),))
case("perturbation confusion at 3", CONFUSION, "confusion", (f64(3.0),), f64(9.0), (f64(6.0),))

# 3^4 = 81, 4 * 3^3 = 108; 2^10 = 1024, 10 * 2^9 = 5120; x^0 = 1, derivative 0.
case("recursion: power(3, 4)", POWER, "power", (f64(3.0), i32(4)), f64(81.0), (f64(108.0), i32(0)))
case("recursion: power(2, 10)", POWER, "power", (f64(2.0), i32(10)), f64(1024.0), (f64(5120.0), i32(0)))
case("recursion: power(7, 0)", POWER, "power", (f64(7.0), i32(0)), f64(1.0), (f64(0.0), i32(0)))

# 4 -> 16 -> 256: x^4, 4x^3 = 256. 3 -> 9 -> 81 -> 6561: x^8, 8 * 3^7 = 17496.
# 11 -> 121: x^2, 2x = 22. 150 is not squared: x, 1.
case("loop at 4", LOOP, "loop", (f64(4.0),), f64(256.0), (f64(256.0),))
case("loop at 3 (three squarings)", LOOP, "loop", (f64(3.0),), f64(6561.0), (f64(17496.0),))
case("loop at 11 (one squaring)", LOOP, "loop", (f64(11.0),), f64(121.0), (f64(22.0),))
case("loop at 150 (no squaring)", LOOP, "loop", (f64(150.0),), f64(150.0), (f64(1.0),))

# (4, 5): 3275, (450, 1810) (see HIGHER_ORDER). (1, 2): (1 + 10) 4 + 16 + 80 = 140;
# d/da = 12 * 4 = 48; d/db = 4 * 11 + 32 + 120 = 196.
case("higher-order over a tuple at (4, 5)", HIGHER_ORDER, "ho_loss", ((f64(4.0), f64(5.0)),), f64(3275.0),
     ((f64(450.0), f64(1810.0)),))
case("higher-order over a tuple at (1, 2)", HIGHER_ORDER, "ho_loss", ((f64(1.0), f64(2.0)),), f64(140.0),
     ((f64(48.0), f64(196.0)),))

X10 = np.arange(100, dtype=np.float64).reshape(10, 10) / 10 - 3.0
case("refs in user code", REFS, "refs", (X10,), f64(np.sum(2 * X10)), (np.full((10, 10), 2.0),))

BX = np.arange(12, dtype=np.float64).reshape(3, 4, 1) * 0.5
BY = np.array([[1.0, -2.0, 0.25, 3.0, -0.5]])
case("broadcasting undone in the adjoint", BROADCAST, "bsum", (BX, BY), f64(5 * BX.sum() + 12 * BY.sum()),
     (np.full((3, 4, 1), 5.0), np.full((1, 5), 12.0)))

# a = 2, v = (1, 2, 3), c = 0.5, k = 3, m = (4, -1), sum(v^2) = 14, base = 2 * 14 * 0.5 = 14.
# flag: f = 14 + 3 * 2 + 3 * 0.5 = 21.5; d/da = 7 + 3 = 10; d/dv = 2v; d/dc = 28 + 3 = 31.
# no flag: f = 14; d/da = 7; d/dv = 2v; d/dc = 28.
MIXED_P = (f64(2.0), (f64([1.0, 2.0, 3.0]), f64(0.5)))
MIXED_INTS = (i32(3), np.array([4, -1], np.int64))
ZERO_INTS = (i32(0), np.zeros(2, np.int64))
case("tuple, int and bool arguments, flag set", MIXED, "mixed", (MIXED_P, *MIXED_INTS, boolean(True)), f64(21.5),
     ((f64(10.0), (f64([2.0, 4.0, 6.0]), f64(31.0))), *ZERO_INTS, boolean(False)))
case("tuple, int and bool arguments, flag clear", MIXED, "mixed", (MIXED_P, *MIXED_INTS, boolean(False)), f64(14.0),
     ((f64(7.0), (f64([2.0, 4.0, 6.0]), f64(28.0))), *ZERO_INTS, boolean(False)))

# 2: 8 + 4 = 12, 12 + 4 = 16.
case("a tuple built and taken apart inside", INNER_TUPLE, "inner_tuple", (f64(2.0),), f64(12.0), (f64(16.0),))

MA = np.array([[0.5, -0.25, 1.0], [0.75, 0.1, -0.6]])
MB = np.array([[0.2, -0.4, 0.6, 0.1], [0.3, 0.9, -0.7, 0.5], [-0.1, 0.2, 0.4, -0.8]])
MT = np.tanh(MA @ MB)
case("matmul and tanh against NumPy", MATMUL, "mm", (MA, MB), f64(MT.sum()),
     ((1 - MT**2) @ MB.T, MA.T @ (1 - MT**2)))

# Every point above is away from a branch switch by far more than the finite-difference step
# (the if at -1 and 1, the closures at 4.5 and -7.9, the loop at 3, 4, 11 and 150).


def ids(cases: list[Case]) -> list[str]:
    return [c.label for c in cases]


def module_of(c: Case) -> relayish.Module:
    return load(c.program, filename=f"{c.name}.rly")


# ---------------------------------------------------------------------------------------
# The table, three ways


PROGRAMS = {
    "cube": CUBE, "quintic": QUINTIC, "quintic_nested": QUINTIC_NESTED, "branch": BRANCH, "captured": CAPTURED,
    "closures": CLOSURES, "confusion": CONFUSION, "power": POWER, "loop": LOOP, "higher_order": HIGHER_ORDER, "refs": REFS,
    "broadcast": BROADCAST, "mixed": MIXED, "inner_tuple": INNER_TUPLE, "matmul": MATMUL,
}


def test_every_case_uses_a_listed_program():
    assert {c.program for c in CASES} <= set(PROGRAMS.values())


@pytest.mark.parametrize("program", list(PROGRAMS), ids=list(PROGRAMS))
def test_program_type_checks(program):
    """Every program parses and type-checks (Grad's type is known to the checker)."""
    relayish.infer_types(load(PROGRAMS[program]))


@pytest.mark.parametrize("c", CASES, ids=ids(CASES))
def test_value(c: Case):
    assert_same(relayish.evaluate(module_of(c), c.name, *c.args), c.value)


@pytest.mark.parametrize("c", CASES, ids=ids(CASES))
def test_grad(c: Case):
    assert_same(run_grad(module_of(c), c.name, *c.args), (c.value, c.grads))


@pytest.mark.parametrize("c", [c for c in CASES if c.fd], ids=ids([c for c in CASES if c.fd]))
def test_grad_agrees_with_finite_differences(c: Case):
    check_grad(module_of(c), c.args, name=c.name)


def test_perturbation_confusion_inline():
    """``Grad(fn (x) { x * Grad(fn (y) { x * y })(2.0)[1][0] })`` at 1.0: value 1, gradient 2."""
    result = relayish.evaluate(load(CONFUSION), "confusion_inline", f64(1.0))
    assert_same(result, (f64(1.0), (f64(2.0),)))


def test_recursion_gradient_for_the_count_is_an_int32_zero():
    value, (dx, dn) = run_grad(load(POWER), "power", f64(3.0), i32(4))
    assert dn.dtype == np.int32 and dn.shape == () and dn == 0
    assert_same((value, dx), (f64(81.0), f64(108.0)))


# ---------------------------------------------------------------------------------------
# Every float width: f(x) = sum(tanh(x) x) + 0.5 sum(x), f' = tanh(x) + x (1 - tanh^2 x) + 0.5,
# at x = (0.5, 1, 1.5, 2). Expected values in float64 NumPy, cast to the width.
# Tolerances (relative): float64 1e-12, float32 1e-5, float16 1e-2 (float16 has an 11-bit
# significand, about 5e-4 per rounding; a handful of roundings plus the sum stay under 1e-2).

WIDTHS = """
def @widths(%x: Tensor(FloatType($W), Shape(4))) -> Tensor(FloatType($W), Shape()) {
  @sum(@tanh(%x) * %x) + 0.5f$W * @sum(%x)
}
"""
WIDTH_RTOL = {16: 1e-2, 32: 1e-5, 64: 1e-12}


@pytest.mark.parametrize("bits", [16, 32, 64])
def test_every_float_width(bits):
    dtype = np.dtype(f"float{bits}")
    x = np.array([0.5, 1.0, 1.5, 2.0])
    t = np.tanh(x)
    value = np.sum(t * x) + 0.5 * np.sum(x)
    grad = t + x * (1 - t**2) + 0.5
    module = load(WIDTHS, W=str(bits))
    result = run_grad(module, "widths", x.astype(dtype))
    assert_same(result, (np.asarray(value, dtype), (grad.astype(dtype),)), rtol=WIDTH_RTOL[bits])


# ---------------------------------------------------------------------------------------
# relayish.vjp: non-scalar and tuple outputs with a given cotangent.

# f(x) = (2x, sum(x^2)); with cotangent (c, s): gradient 2c + 2 s x.
PAIR = """
def @pair(%x: Tensor(FloatType(64), Shape(4))) -> (Tensor(FloatType(64), Shape(4)), $F) {
  (%x * 2.0f64, @sum(%x * %x))
}
"""

# f(a, b) = a b with cotangent C: (C b^T, a^T C).
PRODUCT = """
def @product(%a: Tensor(FloatType(64), Shape(2, 3)), %b: Tensor(FloatType(64), Shape(3, 4))) -> Tensor(FloatType(64), Shape(2, 4)) {
  @matmul(%a, %b)
}
"""


def run_vjp(program: str, name: str, *args: Any) -> Any:
    module = relayish.vjp(load(program), name)
    assert f"{name}_vjp" in module
    return relayish.evaluate(module, f"{name}_vjp", *args)


def test_vjp_of_a_tuple_output_with_ones():
    x = np.array([1.0, -2.0, 0.5, 3.0])
    result = run_vjp(PAIR, "pair", x, (np.ones(4), f64(1.0)))
    assert_same(result, ((2 * x, f64(np.sum(x * x))), (2 + 2 * x,)))


def test_vjp_of_a_tuple_output_with_another_cotangent():
    x = np.array([1.0, -2.0, 0.5, 3.0])
    c = np.array([0.5, 1.0, -1.0, 2.0])
    result = run_vjp(PAIR, "pair", x, (c, f64(3.0)))
    assert_same(result, ((2 * x, f64(np.sum(x * x))), (2 * c + 6 * x,)))


def test_vjp_of_a_matrix_output():
    c = np.arange(8, dtype=np.float64).reshape(2, 4) - 3.5
    result = run_vjp(PRODUCT, "product", MA, MB, c)
    assert_same(result, (MA @ MB, (c @ MB.T, MA.T @ c)))


def test_vjp_of_refs_in_user_code():
    """The tensor-valued refs program: value 2x; with cotangent c the gradient is 2c."""
    c = np.linspace(-1.0, 1.0, 100).reshape(10, 10)
    value, grads = run_vjp(REFS, "refs_tensor", X10, c)
    assert_same(value, 2 * X10)
    assert_same(grads, (2 * c,))


# ---------------------------------------------------------------------------------------
# ad.grad: the expanded transform as an ordinary program.

EXPANDED = [c for c in CASES if c.label in (
    "recursion: power(3, 4)",
    "higher-order over a tuple at (4, 5)",
    "refs in user code",
    "branch-selected closures at 4.5",
    "tuple, int and bool arguments, flag set",
)]  # fmt: skip


@pytest.mark.parametrize("c", EXPANDED, ids=ids(EXPANDED))
def test_ad_grad_output_is_an_ordinary_program(c: Case):
    module = module_of(c)
    out = ad.grad(module, c.name)
    new_name = f"{c.name}_grad"
    assert isinstance(out, relayish.Module) and new_name in out
    for name in module.functions:  # what was there stays
        assert name in out
    for name, fn in out.functions.items():
        if name not in module.functions:
            assert not contains_grad(fn), f"@{name} still contains Grad: the transform should expand it"
    typed = relayish.infer_types(out)
    assert relayish.alpha_equal(relayish.parse(relayish.astext(out)), out)
    assert relayish.alpha_equal(relayish.parse(relayish.astext(typed)), typed)
    expanded = relayish.evaluate(out, new_name, *c.args)
    assert_same(expanded, (c.value, c.grads))
    assert_same(expanded, run_grad(module, c.name, *c.args))


def test_ad_grad_of_typed_and_untyped_modules_agree():
    module = load(HIGHER_ORDER)
    args = ((f64(4.0), f64(5.0)),)
    from_untyped = relayish.evaluate(ad.grad(module, "ho_loss"), "ho_loss_grad", *args)
    from_typed = relayish.evaluate(ad.grad(relayish.infer_types(module), "ho_loss"), "ho_loss_grad", *args)
    assert_same(from_untyped, (f64(3275.0), ((f64(450.0), f64(1810.0)),)))
    assert_same(from_typed, from_untyped)


def test_ad_grad_of_a_function_with_nested_grad():
    """@cube_d1 contains Grad(@cube): its own gradient is the second derivative, 6x."""
    module = load(CUBE)
    out = ad.grad(module, "cube_d1")
    relayish.infer_types(out)
    assert relayish.alpha_equal(relayish.parse(relayish.astext(out)), out)
    assert_same(relayish.evaluate(out, "cube_d1_grad", f64(2.0)), (f64(12.0), (f64(12.0),)))
    assert_same(relayish.evaluate(out, "cube_d1_grad", f64(3.0)), (f64(27.0), (f64(18.0),)))


# ---------------------------------------------------------------------------------------
# Errors: Grad of what is not a function returning a floating scalar is a type error at the
# Grad, located file:line:col.

GRAD_OF_VECTOR = """def @vec(%x: Tensor(FloatType(64), Shape(3))) -> Tensor(FloatType(64), Shape(3)) { %x * %x }
def @main(%x: Tensor(FloatType(64), Shape(3))) {
  Grad(@vec)(%x)
}
"""

GRAD_OF_INT = """def @count(%x: Tensor(FloatType(64), Shape())) -> Tensor(IntType(32), Shape()) {
  @cast(%x, dtype=IntType(32))
}
def @main(%x: Tensor(FloatType(64), Shape())) {
  let %g = Grad(@count) in
  %g(%x)
}
"""

GRAD_OF_CONSTANT = """def @main() {
  let %one = 1.0 in
  (Grad(1.0), %one)
}
"""

ERRORS = [
    ("Grad of a function returning a vector", GRAD_OF_VECTOR, 3, 3, "Tensor(FloatType(64), Shape(3))",
     (f64([1.0, 2.0, 3.0]),)),
    ("Grad of a function returning an int scalar", GRAD_OF_INT, 5, 12, "Tensor(IntType(32), Shape())", (f64(1.0),)),
    ("Grad of a non-function", GRAD_OF_CONSTANT, 3, 4, "Tensor(FloatType(32), Shape())", ()),
]


@pytest.mark.parametrize("label, text, line, col, culprit, args", ERRORS, ids=[e[0] for e in ERRORS])
def test_grad_type_errors_point_at_the_grad(label, text, line, col, culprit, args):
    with pytest.raises(relayish.RelayTypeError) as info:
        relayish.infer_types(relayish.parse(text, filename="t.rly"))
    err = info.value
    assert (err.span.file, err.span.line, err.span.col) == ("t.rly", line, col)
    assert str(err).startswith(f"t.rly:{line}:{col}: ")
    assert "Grad" in err.message and culprit in err.message
    assert "^" in str(err)  # the line is quoted with a caret


@pytest.mark.parametrize("label, text, line, col, culprit, args", ERRORS, ids=[e[0] for e in ERRORS])
def test_grad_type_errors_also_stop_evaluation(label, text, line, col, culprit, args):
    with pytest.raises(relayish.RelayTypeError) as info:
        relayish.evaluate(relayish.parse(text, filename="t.rly"), "main", *args)
    assert (info.value.span.line, info.value.span.col) == (line, col)


def test_the_helper_wrapper_is_what_grad_means():
    """``run_grad``'s wrapper is ``Grad(@f)(params...)`` with @f's own parameter types."""
    module, wrapper = with_grad_wrapper(load(POWER), "power")
    text = relayish.astext(relayish.infer_types(module))
    assert f"def @{wrapper}(%x: Tensor(FloatType(64), Shape()), %n: Tensor(IntType(32), Shape()))" in text
    assert "Grad(@power)(%x, %n)" in text


def test_a_dead_binding_adds_nothing_to_the_gradient():
    """A result nobody reads (directly, or through other such results) has a zero adjoint, so it gets no backpropagator link: the
    gradient is exactly that of the live code (2x here), even where the dead code's
    derivative is infinite (log 0), which multiplied by the zero adjoint would give NaN."""
    module = relayish.parse("""
    def @f(%x: Tensor(FloatType(64), Shape(2))) -> Tensor(FloatType(64), Shape()) {
      let %dead = @log(%x - %x) in
      let %deader = @exp(%dead) in
      @sum(%x * %x)
    }
    def @main(%x: Tensor(FloatType(64), Shape(2))) { Grad(@f)(%x) }""")
    value, (grad,) = relayish.evaluate(module, "main", np.array([1.5, -2.0]))
    assert value == 6.25
    np.testing.assert_array_equal(grad, [3.0, -4.0])
    text = relayish.astext(ad.expand(module))
    assert text.count(":= fn") == 2  # the product and the sum; none for x - x, the log or the exp
