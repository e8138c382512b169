"""Gradients of the composite operators (relayish/ops/composite.py) against central finite differences.

The composite operators have no gradient rule: AD differentiates their lowerings
(``ad.lowered``). Each case is ``sum(op(args...) * w)`` with random weights ``w`` (so that no
symmetry hides a wrong gradient: a normalization's outputs sum to a constant) and
``relayish.testing.check_grad`` compares ``Grad`` in the evaluator with central differences in
float64 (its defaults: eps 1e-6, rtol 1e-5, atol 1e-7), an oracle that never looks at the
lowerings. Inputs keep away from kinks (clip's bounds, leaky_relu's 0, ties of a maximum).
A second test draws calls with the generator's rules, as tests/ad/test_rules.py does for the
operators with gradient rules.
"""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import relayish
from relayish.expr import Call, Function, Op, Var
from relayish.module import Module
from relayish.ops import get_op
from relayish.testing import check_grad
from tests.ops.drawn import draw_call
from relayish.types import FloatType, Shape, TensorType
from tests.ad.support import directional_gradient

F64 = FloatType(64)
RNG = np.random.default_rng(7)
X = RNG.normal(size=(3, 4))
IMAGES = RNG.normal(size=(2, 3, 3, 4))
C3, C4, C5 = (RNG.uniform(0.5, 2.0, size=k) for k in (3, 4, 5))


def loss_module(name: str, args: list[np.ndarray], attrs: dict[str, Any]) -> tuple[Module, list[np.ndarray]]:
    """``@main(args..., w) = sum(op(args...) * w)`` and its arguments (w random)."""
    params = [Var(f"a{i}", TensorType(F64, Shape(*a.shape))) for i, a in enumerate(args)]
    out = get_op(name)(*args, **attrs)
    weights = Var("w", TensorType(F64, Shape(*out.shape)))
    body = Call(Op("sum"), [Call(Op("mul"), [Call(Op(name), params, attrs), weights])])
    module = Module({"main": Function([*params, weights], body, TensorType(F64, Shape()))})
    return module, [*args, RNG.uniform(-1, 1, size=out.shape)]


CASES = [
    ("clip", [np.array([[-2.0, -0.3, 0.4, 1.7], [0.9, -0.95, 3.0, 0.0]])], {"a_min": -1, "a_max": 1}),
    ("leaky_relu", [np.array([[-2.0, -0.3, 0.4, 1.7]])], {"alpha": 0.2}),
    ("bias_add", [IMAGES, C3], {}),
    ("bias_add", [X, C4], {"axis": -1}),
    ("variance", [X], {"axis": 1}),
    ("variance", [IMAGES], {"axis": 1, "exclude": True, "unbiased": True, "keepdims": True}),
    ("variance", [X], {}),
    ("std", [X], {"axis": 0, "unbiased": True}),
    ("std", [IMAGES], {"axis": (2, 3)}),
    ("logsumexp", [X], {"axis": 1}),
    ("logsumexp", [X], {}),
    ("logsumexp", [X * 30], {"axis": 0, "keepdims": True}),
    ("logsumexp", [np.array([[-np.inf, 0.5, 2.0], [1.0, -1.0, 0.0]])], {"axis": 1}),
    ("global_avg_pool2d", [IMAGES], {}),
    ("global_max_pool2d", [IMAGES], {}),
    ("layer_norm", [X, C4, C4[::-1].copy()], {}),
    ("layer_norm", [IMAGES, C3, C3], {"axis": 1, "center": False, "epsilon": 0.1}),
    ("layer_norm", [X, C3, C3], {"axis": 0, "scale": False}),
    ("batch_norm", [IMAGES, C3, C3[::-1].copy(), RNG.normal(size=3), C3], {}),
    ("batch_norm", [IMAGES, C3, C3[::-1].copy(), RNG.normal(size=3), C3], {"training": True}),
    ("batch_norm", [X, C4, C4, C4, C4], {"axis": -1, "training": True, "center": False}),
    ("batch_norm", [X, C3, C3, C3, C3], {"axis": 0, "scale": False, "epsilon": 0.5}),
    ("full_like", [X], {"fill_value": 2.0}),
    ("tile", [X], {"reps": (2, 1, 3)}),
    ("repeat", [X], {"repeats": 2, "axis": 0}),
]

DIFFERENTIABLE = {case[0] for case in CASES}


def test_every_differentiable_composite_operator_has_a_case() -> None:
    wanted = {"clip", "leaky_relu", "bias_add", "variance", "std", "logsumexp", "global_avg_pool2d",
              "global_max_pool2d", "layer_norm", "batch_norm"}
    assert wanted <= DIFFERENTIABLE
    assert all(get_op(name).differentiable for name in wanted)
    assert all(get_op(name).gradient is None and get_op(name).lowering is not None for name in DIFFERENTIABLE)


@pytest.mark.parametrize("case", CASES, ids=lambda case: case[0])
def test_gradient_matches_finite_differences(case: tuple) -> None:
    name, args, attrs = case
    module, inputs = loss_module(name, args, attrs)
    check_grad(module, inputs)


@pytest.mark.parametrize("case", [c for c in CASES if c[0] != "full_like"], ids=lambda case: case[0])
def test_second_derivatives_match_finite_differences(case: tuple) -> None:
    """``@main(args..., w, v) = sum(d/d a0 (sum(op(args...) * w)) * v)``: its gradient holds the
    second derivatives (a Hessian-vector product in a0, and the mixed ones), the gradient of the
    expanded lowering's gradient, against finite differences of that first gradient."""
    name, args, attrs = case
    first, inputs = loss_module(name, args, attrs)
    check_grad(directional_gradient(first), [*inputs, RNG.uniform(-1, 1, size=args[0].shape)])


def test_batch_norm_inference_ignores_nothing_and_training_ignores_the_moving_statistics() -> None:
    """Training normalizes with the batch's statistics: the moving ones get zero gradients."""
    args = [IMAGES, C3, C3, RNG.normal(size=3), C3]
    module, inputs = loss_module("batch_norm", args, {"training": True})
    extended = module.with_function("g", Function(
        list(module["main"].params), Call(relayish.ir.Grad(relayish.ir.GlobalVar("main")), list(module["main"].params))))
    _, grads = relayish.evaluate(extended, "g", *inputs)
    assert not grads[3].any() and not grads[4].any()
    assert grads[0].any() and grads[1].any() and grads[2].any()


@pytest.mark.parametrize("name", sorted(DIFFERENTIABLE - {"full_like"}))
@settings(max_examples=10)
@given(data=st.binary(min_size=64, max_size=64), symbolic=st.booleans(), seed=st.integers(0, 2**32 - 1))
def test_gradient_of_drawn_calls_matches_finite_differences(name: str, data: bytes, symbolic: bool, seed: int) -> None:
    op = get_op(name)
    drawn = draw_call(name, data, symbolic, (F64,))
    if drawn is None:
        return
    plan = drawn.plan
    rng = np.random.default_rng(seed)
    shapes = drawn.shapes(drawn.sizes(rng))
    # normal values: ties and kinks have probability 0; positive variances for batch_norm
    args = [rng.uniform(0.5, 2.0, size=shape) if name == "batch_norm" and i == 4 else rng.normal(size=shape)
            for i, shape in enumerate(shapes)]
    result = op(*args, **plan.attrs)
    if not np.all(np.isfinite(result)):
        return  # an unbiased variance of one element: nan, no derivative
    if name == "std" and np.any(get_op("variance")(args[0], **plan.attrs) < 1e-6):
        return  # the std of one element: sqrt at 0, no derivative
    check_grad(drawn.weighted_loss(), [*args, rng.uniform(-1, 1, size=result.shape)], rtol=1e-5, atol=1e-7)
