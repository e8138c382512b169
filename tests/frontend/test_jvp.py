"""``relay.jvp``: forward mode on decorated functions, called from Python and inside ``@relay``,
against hand-derived derivatives and central differences."""

from __future__ import annotations

import numpy as np
import pytest

from relayish import Dim, Float64, FrontendError, Tensor, relay

N = Dim("n")


@relay
def wave(x: Tensor[Float64, N], y: Float64) -> Tensor[Float64, N]:
    if relay.sum(x) > y:
        return relay.sin(x) * y
    return relay.exp(x) - y


@relay
def loss(x: Tensor[Float64, N]) -> Float64:
    return relay.sum(relay.sin(x) * x)


@relay
def gradient(x: Tensor[Float64, N]) -> Tensor[Float64, N]:
    return relay.grad(loss)(x)[1][0]


@relay
def hvp(x: Tensor[Float64, N], v: Tensor[Float64, N]) -> Tensor[Float64, N]:
    return relay.jvp(gradient)(x, v)[1]


def test_relay_jvp_of_sin_at_one_half_is_cos():
    @relay
    def sine(x: Float64) -> Float64:
        return relay.sin(x)

    value, tangent = relay.jvp(sine)(0.5, 1.0)
    assert value == np.sin(0.5) and tangent == np.cos(0.5)


@pytest.mark.parametrize("shift", [-10.0, 10.0])  # both branches of the if
def test_relay_jvp_matches_central_differences(shift):
    rng = np.random.default_rng(0)
    x, tx = rng.uniform(-1, 1, 6), rng.standard_normal(6)
    y, ty = np.float64(shift), np.float64(0.3)
    value, tangent = relay.jvp(wave)(x, y, tx, ty)
    eps = 1e-6
    fd = (wave(x + eps * tx, y + eps * ty) - wave(x - eps * tx, y - eps * ty)) / (2 * eps)
    np.testing.assert_allclose(value, wave(x, y), rtol=1e-15)
    np.testing.assert_allclose(tangent, fd, rtol=1e-6, atol=1e-9)


def test_forward_over_reverse_hessian_vector_product_inside_relay():
    rng = np.random.default_rng(1)
    x, v = rng.uniform(-2, 2, 7), rng.standard_normal(7)
    np.testing.assert_allclose(hvp(x, v), (2 * np.cos(x) - x * np.sin(x)) * v, rtol=1e-12)


def test_relay_jvp_needs_a_decorated_function_and_one_argument_inside_relay():
    with pytest.raises(TypeError, match="relay.jvp takes a @relay function"):
        relay.jvp(np.sin)

    @relay
    def bad(x: Float64) -> Float64:
        return relay.jvp(loss, 2)(x, x)[1]

    with pytest.raises(FrontendError, match=r"relay.jvp\(f\) takes one function"):
        bad(1.0)
