"""Gradients of the operators of relayish/ops/arithmetic.py against central finite differences.

``relayish.testing.check_grad`` (float64 central differences, its default tolerances: eps 1e-6,
rtol 1e-5, atol 1e-7) is the oracle: it never looks at the gradient rules. Each operator is
checked inside ``sum(op(x) * w)`` with random weights ``w``, so that every element's adjoint
counts; the smooth ones also to second order, through ``sum(Grad(@f)(x, w)[1][0] * v)``. Points
are drawn inside each function's domain and away from its poles; for the piecewise constant
operators (rounding, sign, floor division) away from the steps, where their derivative is 0 and
AD treats them as constants; ``floor_mod`` (a - floor(a / b) * b) away from its jumps.
"""

from __future__ import annotations

import numpy as np
import pytest

import relayish
from relayish.testing import check_grad

V = "Tensor(FloatType(64), Shape(2, 3))"
S = "Tensor(FloatType(64), Shape())"

# name -> the interval its arguments are drawn from
SMOOTH = {
    "erf": (-2.0, 2.0),
    "tan": (-1.2, 1.2),
    "atan": (-3.0, 3.0),
    "asin": (-0.9, 0.9),
    "acos": (-0.9, 0.9),
    "sinh": (-2.0, 2.0),
    "cosh": (-2.0, 2.0),
    "rsqrt": (0.3, 3.0),
    "log1p": (-0.7, 3.0),
    "expm1": (-2.0, 2.0),
}
STEPS = ["ceil", "floor", "trunc", "round", "sign"]


def program(op: str) -> relayish.Module:
    return relayish.parse(f"""
    def @f(%x: {V}, %w: {V}) -> {S} {{ @sum(@{op}(%x) * %w) }}
    def @g(%x: {V}, %w: {V}, %v: {V}) -> {S} {{ @sum(Grad(@f)(%x, %w)[1][0] * %v) }}
    """)


@pytest.mark.parametrize("name", sorted(SMOOTH))
@pytest.mark.parametrize("seed", [0, 1])
def test_first_and_second_derivatives_of_smooth_functions(name: str, seed: int) -> None:
    rng = np.random.default_rng(seed)
    x = rng.uniform(*SMOOTH[name], size=(2, 3))
    w, v = rng.uniform(-1, 1, size=(2, 3)), rng.uniform(-1, 1, size=(2, 3))
    module = program(name)
    check_grad(module, [x, w], name="f")
    check_grad(module, [x, w, v], name="g")


def test_the_gradients_have_the_documented_closed_forms() -> None:
    """d/dx at chosen points, worked out by hand (float64, to 1e-12)."""
    cases = {
        "erf": (0.0, 2 / np.sqrt(np.pi)),  # 2/sqrt(pi) exp(-0)
        "tan": (np.pi / 4, 2.0),  # 1 + tan^2
        "atan": (1.0, 0.5),  # 1 / (1 + 1)
        "asin": (0.6, 1.25),  # 1 / sqrt(1 - 0.36) = 1 / 0.8
        "acos": (0.6, -1.25),
        "sinh": (0.0, 1.0),  # cosh 0
        "cosh": (0.0, 0.0),  # sinh 0
        "rsqrt": (4.0, -1 / 16),  # -0.5 * 4^-1.5
        "log1p": (1.0, 0.5),  # 1 / (1 + 1)
        "expm1": (0.0, 1.0),  # e^0
    }
    for name, (x, expected) in cases.items():
        module = relayish.parse(f"def @f(%x: {S}) -> {S} {{ @{name}(%x) }}\ndef @main(%x: {S}) {{ Grad(@f)(%x) }}")
        _, (gradient,) = relayish.evaluate(module, "main", np.float64(x))
        np.testing.assert_allclose(gradient, expected, rtol=1e-12, atol=1e-15, err_msg=name)


def test_the_rsqrt_gradient_is_finite_where_rsqrt_is() -> None:
    """-0.5 x^-1.5 also for tiny and huge x and at +inf (where rsqrt is 0), without overflow on the way."""
    module = relayish.parse(f"def @f(%x: {S}) -> {S} {{ @rsqrt(%x) }}\ndef @main(%x: {S}) {{ Grad(@f)(%x) }}")
    for x, expected in ((1e-100, -0.5e150), (1e300, -0.5e-450), (np.inf, 0.0)):
        _, (gradient,) = relayish.evaluate(module, "main", np.float64(x))
        np.testing.assert_allclose(gradient, expected, rtol=1e-12, atol=1e-320, err_msg=str(x))


def _away_from_steps(rng: np.random.Generator, shape: tuple[int, ...]) -> np.ndarray:
    """Values whose fractional part is in [0.1, 0.4] or [0.6, 0.9]: no integer and no half within eps."""
    whole = rng.integers(-3, 4, size=shape)
    frac = rng.uniform(0.1, 0.4, size=shape) + rng.integers(0, 2, size=shape) * 0.5
    return whole + frac


@pytest.mark.parametrize("name", STEPS)
def test_steps_are_constants_for_ad(name: str) -> None:
    """sum(op(x) * x * w): op's derivative is 0 away from its steps, so the gradient is op(x) * w."""
    rng = np.random.default_rng(3)
    x, w = _away_from_steps(rng, (2, 3)), rng.uniform(-1, 1, size=(2, 3))
    module = relayish.parse(f"def @f(%x: {V}, %w: {V}) -> {S} {{ @sum(@{name}(%x) * %x * %w) }}")
    check_grad(module, [x, w], name="f")


FLOOR_MOD = f"""
def @f(%a: {V}, %b: Tensor(FloatType(64), Shape(3)), %w: {V}) -> {S} {{ @sum(@floor_mod(%a, %b) * %w) }}
def @q(%a: {V}, %b: Tensor(FloatType(64), Shape(3)), %w: {V}) -> {S} {{ @sum(@floor_divide(%a, %b) * %a * %w) }}
"""


def _off_the_jumps(rng: np.random.Generator) -> tuple[np.ndarray, np.ndarray]:
    """a, b with a / b at least 0.1 from an integer (b broadcast along the rows), b of either sign."""
    b = rng.uniform(0.5, 2.0, size=3) * rng.choice([-1.0, 1.0], size=3)
    quotient = rng.integers(-3, 4, size=(2, 3)) + rng.uniform(0.1, 0.9, size=(2, 3))
    return quotient * b, b


@pytest.mark.parametrize("seed", [0, 1, 2])
def test_floor_mod_and_floor_divide_gradients_with_broadcasting(seed: int) -> None:
    rng = np.random.default_rng(seed)
    a, b = _off_the_jumps(rng)
    w = rng.uniform(-1, 1, size=(2, 3))
    module = relayish.parse(FLOOR_MOD)
    check_grad(module, [a, b, w], name="f")  # d/da = 1, d/db = -floor(a / b), summed over the rows
    check_grad(module, [a, b, w], name="q")  # floor_divide is a constant: d/da = floor(a / b) * w, d/db = 0


def test_floor_mod_gradient_by_hand() -> None:
    """a % b = a - floor(a / b) * b: at a = 7.5, b = -2 (quotient -3.75, floor -4) d/da = 1, d/db = 4."""
    module = relayish.parse(f"def @f(%a: {S}, %b: {S}) -> {S} {{ @floor_mod(%a, %b) }}\n"
                            f"def @main(%a: {S}, %b: {S}) {{ Grad(@f)(%a, %b) }}")
    value, (da, db) = relayish.evaluate(module, "main", np.float64(7.5), np.float64(-2.0))
    assert (float(value), float(da), float(db)) == (-0.5, 1.0, 4.0)
