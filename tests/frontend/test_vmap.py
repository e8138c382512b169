"""``relay.vmap``: decorated functions mapped over a batch, called from Python and inside ``@relay``,
against the loop over examples (each example run alone by the same decorated function)."""

from __future__ import annotations

import numpy as np
import pytest

from relayish import Dim, Float64, Int32, RelayError, Tensor, relay

N = Dim("n")


@relay
def steps(x: Tensor[Float64, 3], n: Int32) -> Float64:
    """A data-dependent if and a data-dependent loop: each example its own branch and trip count."""
    s = relay.sum(x)
    if s > 1.5:
        for _ in range(n):
            s = relay.sin(s) + s * 0.5
    else:
        s = -s * 2.0
    return s


@relay
def loss(W1: Tensor[Float64, (784, 256)], b1: Tensor[Float64, 256], W2: Tensor[Float64, (256, 10)],
         b2: Tensor[Float64, 10], x: Tensor[Float64, 784], y: Tensor[Float64, 10]) -> Float64:
    """W2's MLP on one example."""
    h = relay.tanh(relay.matmul(relay.expand_dims(x, axis=0), W1) + b1)
    z = relay.matmul(h, W2) + b2
    return relay.logsumexp(z) - relay.sum(z * y)


@relay
def per_example_gradients(W1: Tensor[Float64, (784, 256)], b1: Tensor[Float64, 256], W2: Tensor[Float64, (256, 10)],
                          b2: Tensor[Float64, 10], X: Tensor[Float64, (N, 784)], Y: Tensor[Float64, (N, 10)]):
    return relay.vmap(relay.grad(loss), in_axes=(None, None, None, None, 0, 0))(W1, b1, W2, b2, X, Y)


@relay
def steps_inside(xs: Tensor[Float64, (N, 3)], ns: Tensor[Int32, N]) -> Tensor[Float64, N]:
    return relay.vmap(steps)(xs, ns)


def test_vmap_of_a_data_dependent_if_and_loop_over_64_examples_equals_the_loop():
    rng = np.random.default_rng(0)
    xs, ns = rng.uniform(0, 1, (64, 3)), rng.integers(0, 6, 64).astype(np.int32)
    expected = np.array([steps(xs[i], ns[i]) for i in range(64)])
    np.testing.assert_array_equal(relay.vmap(steps)(xs, ns), expected)
    np.testing.assert_array_equal(steps_inside(xs, ns), expected)


def test_per_example_gradients_of_the_w2_mlp_equal_64_separate_gradients():
    rng = np.random.default_rng(2)
    X, Y = rng.standard_normal((64, 784)), np.eye(10)[rng.integers(0, 10, 64)]
    W1, b1 = rng.standard_normal((784, 256)) / 28, 0.1 * rng.standard_normal(256)
    W2, b2 = rng.standard_normal((256, 10)) / 16, 0.1 * rng.standard_normal(10)
    values, gradients = per_example_gradients(W1, b1, W2, b2, X, Y)
    from_python = relay.vmap(relay.grad(loss), in_axes=(None, None, None, None, 0, 0))(W1, b1, W2, b2, X, Y)
    np.testing.assert_array_equal(from_python[0], values)
    for a, b in zip(from_python[1], gradients):
        np.testing.assert_array_equal(a, b)
    one = relay.grad(loss)
    for i in range(64):
        value, expected = one(W1, b1, W2, b2, X[i], Y[i])
        np.testing.assert_allclose(values[i], value, rtol=1e-13)
        for got, want in zip(gradients, expected):
            # one matrix product for the batch sums in another order than one per example
            np.testing.assert_allclose(got[i], want, rtol=1e-12, atol=1e-12 * np.abs(want).max())


def test_one_axis_for_all_none_for_shared_arguments_and_other_axes():
    @relay
    def scaled(x: Tensor[Float64, 3], w: Float64) -> Tensor[Float64, 3]:
        return x * w + relay.sum(x)

    rng = np.random.default_rng(3)
    xs, w = rng.standard_normal((5, 3)), np.float64(1.5)
    expected = np.stack([scaled(x, w) for x in xs])
    np.testing.assert_allclose(relay.vmap(scaled, in_axes=(0, None))(xs, w), expected, rtol=1e-15)
    np.testing.assert_allclose(relay.vmap(scaled, in_axes=(1, None))(xs.T.copy(), w), expected, rtol=1e-15)
    ws = rng.standard_normal(5)
    np.testing.assert_allclose(relay.vmap(scaled, in_axes=0)(xs, ws), np.stack([scaled(x, v) for x, v in zip(xs, ws)]),
                               rtol=1e-15)


def test_transforms_compose_from_python():
    """relay.jvp of relay.grad (a Hessian-vector product) and relay.vmap of it, per example."""
    @relay
    def cubic(x: Tensor[Float64, 3]) -> Float64:
        return relay.sum(x * x * x)

    rng = np.random.default_rng(4)
    xs, vs = rng.standard_normal((5, 3)), rng.standard_normal((5, 3))
    hvp = relay.jvp(relay.grad(cubic))
    _, (hessian_times_v,) = hvp(xs[0], vs[0])[1]  # the tangent of (value, (gradient,))
    np.testing.assert_allclose(hessian_times_v, 6 * xs[0] * vs[0], rtol=1e-14)
    batched = relay.vmap(hvp)(xs, vs)
    np.testing.assert_allclose(batched[1][1][0], 6 * xs * vs, rtol=1e-14)


def test_vmap_takes_axes_and_a_relay_function():
    with pytest.raises(TypeError, match="in_axes"):
        relay.vmap(steps, in_axes=(0, -1))
    with pytest.raises(TypeError, match="@relay function"):
        relay.vmap(np.sin)


def test_a_wrong_in_axes_inside_relay_points_at_the_call():
    @relay
    def bad(xs: Tensor[Float64, (N, 3)], ns: Tensor[Int32, N]) -> Tensor[Float64, N]:
        return relay.vmap(steps, in_axes=(0,))(xs, ns)

    with pytest.raises(RelayError, match="Vmap: in_axes has 1 entries, but the function takes 2 parameters") as err:
        bad(np.zeros((2, 3)), np.zeros(2, np.int32))
    assert "test_vmap.py" in str(err.value)
