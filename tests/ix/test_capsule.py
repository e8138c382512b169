"""An operator no library has, NeoFlow's capsule convolution, written as an index expression and
trained: a few SGD steps on its weights with the derived gradient (none written by hand) lower
the loss, and the gradient matches central differences."""

from __future__ import annotations

import numpy as np
import pytest

import relayish
from relayish import Dim, Float, Tensor, ix, relay
from relayish.ops.registry import unregister_user_op, user_op_names
from relayish.testing import check_grad

B = Dim("B")


def capsule_conv2d(X, W):
    """X (n, h, w, ci, 4, 4) pose matrices, W (kh, kw, ci, co, 4, 4): each output capsule is the sum
    over the window and the input capsules of the 4 x 4 matrix products X[...] @ W[...] (stride 1)."""
    rh, rw, ci, k = ix.axis(W.shape[0], "rh"), ix.axis(W.shape[1], "rw"), ix.axis(X.shape[3], "ci"), ix.axis(4, "k")
    shape = (X.shape[0], X.shape[1] - W.shape[0] + 1, X.shape[2] - W.shape[1] + 1, W.shape[3], 4, 4)
    return ix.tensor(shape, lambda n, y, x, co, i, j: ix.sum(X[n, y + rh, x + rw, ci, i, k] * W[rh, rw, ci, co, k, j],
                                                              rh, rw, ci, k))


@pytest.fixture(scope="module")
def capsule():
    op = ix.operator(capsule_conv2d, name="ix_capsule_conv2d")
    yield op
    for name in user_op_names():
        if name.startswith("ix_capsule_conv2d"):
            unregister_user_op(name)


@relay
def capsule_loss(x: Tensor[Float, (B, 5, 5, 2, 4, 4)], w: Tensor[Float, (3, 3, 2, 3, 4, 4)],
                 target: Tensor[Float, (B, 3, 3, 3, 4, 4)]) -> Float:
    y = relay.ix_capsule_conv2d(x, w)
    return relay.mean((relay.tanh(y) - target) * (relay.tanh(y) - target))


@relay
def capsule_step(x: Tensor[Float, (B, 5, 5, 2, 4, 4)], w: Tensor[Float, (3, 3, 2, 3, 4, 4)],
                 target: Tensor[Float, (B, 3, 3, 3, 4, 4)]):
    return relay.grad(lambda w: capsule_loss(x, w, target))(w)


def test_the_capsule_convolution_is_its_definition_in_numpy(capsule):
    rng = np.random.default_rng(0)
    x, w = rng.standard_normal((2, 5, 5, 2, 4, 4)), rng.standard_normal((3, 3, 2, 3, 4, 4))
    expected = np.zeros((2, 3, 3, 3, 4, 4))
    for y in range(3):
        for xx in range(3):
            window = x[:, y:y + 3, xx:xx + 3]  # (n, 3, 3, ci, 4, 4)
            expected[:, y, xx] = np.einsum("nabcik,abcdkj->ndij", window, w)
    np.testing.assert_allclose(capsule.compute(x, w), expected, rtol=1e-10, atol=1e-10)


def test_its_derived_gradient_matches_finite_differences(capsule):
    rng = np.random.default_rng(1)
    x, w = rng.standard_normal((1, 4, 4, 1, 4, 4)), rng.standard_normal((2, 2, 1, 2, 4, 4))
    v = rng.standard_normal((1, 3, 3, 2, 4, 4))
    t = "Tensor(FloatType(64), Shape({}))"
    module = relayish.parse(f"""def @f(%x: {t.format('1, 4, 4, 1, 4, 4')}, %w: {t.format('2, 2, 1, 2, 4, 4')},
                                      %v: {t.format('1, 3, 3, 2, 4, 4')}) {{
      @sum(@tanh(@ix_capsule_conv2d(%x, %w)) * %v) }}""")
    check_grad(module, [x, w, v], name="f")


def test_a_few_sgd_steps_lower_the_loss(capsule):
    rng = np.random.default_rng(2)
    x = rng.standard_normal((4, 5, 5, 2, 4, 4)).astype(np.float32) * 0.5
    w = rng.standard_normal((3, 3, 2, 3, 4, 4)).astype(np.float32) * 0.1
    target = np.tanh(capsule.compute(x, rng.standard_normal(w.shape).astype(np.float32) * 0.1))
    step = relayish.compile(capsule_step.ir, capsule_step.global_name, tiered=False)
    losses = []
    for _ in range(6):
        loss, (dw,) = step(x, w, target)
        losses.append(float(loss))
        w = w - np.float32(2.0) * dw
    assert all(b < a for a, b in zip(losses, losses[1:])), losses
    assert losses[-1] < 0.8 * losses[0], losses
