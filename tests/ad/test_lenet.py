"""Gradients of a small LeNet-like loss, in float64, against finite differences and NumPy.

Sizes (batch n = 2, one 12x12 channel):
  x (n, 1, 12, 12) -> conv2d k1 (4, 1, 3, 3) + c1, tanh -> (n, 4, 10, 10) -> max_pool 2 -> (n, 4, 5, 5)
  -> conv2d k2 (6, 4, 2, 2) + c2, tanh -> (n, 6, 4, 4) -> max_pool 2 -> (n, 6, 2, 2) -> flatten (n, 24)
  -> dense w3 (16, 24) + b3, relu -> (n, 16) -> dense w4 (10, 16) + b4 -> logits (n, 10)
  -> softmax_cross_entropy against one-hot labels y (n, 10).

``check_grad`` compares every parameter's gradient with central differences (its defaults:
eps 1e-6, rtol 1e-5, atol 1e-7; parameters of more than 64 elements along 8 random unit
directions). Max pooling and relu are not differentiable at ties and at 0, so a test first
checks, with the NumPy forward pass written here, that the chosen inputs are at least 1e-4
away from every tie and every relu kink (a step of 1e-6 along a unit direction moves no
pre-activation by more than about 1e-5 here). The last two layers' gradients are also
compared with their closed forms in NumPy (rtol 1e-9).
"""

from __future__ import annotations

import numpy as np
from numpy.lib.stride_tricks import sliding_window_view

import relayish
from relayish.testing import check_grad

from .support import assert_same, load, run_grad

LENET = """
def @lenet_loss[n: Dim](%x: Tensor(FloatType(64), Shape(n, 1, 12, 12)),
                        %k1: Tensor(FloatType(64), Shape(4, 1, 3, 3)), %c1: Tensor(FloatType(64), Shape(4, 1, 1)),
                        %k2: Tensor(FloatType(64), Shape(6, 4, 2, 2)), %c2: Tensor(FloatType(64), Shape(6, 1, 1)),
                        %w3: Tensor(FloatType(64), Shape(16, 24)), %b3: Tensor(FloatType(64), Shape(16)),
                        %w4: Tensor(FloatType(64), Shape(10, 16)), %b4: Tensor(FloatType(64), Shape(10)),
                        %y: Tensor(FloatType(64), Shape(n, 10))) -> $F {
  let %a1 = @max_pool2d(@tanh(@conv2d(%x, %k1) + %c1), pool_size=2) in
  let %a2 = @max_pool2d(@tanh(@conv2d(%a1, %k2) + %c2), pool_size=2) in
  let %flat = @flatten(%a2) in
  let %hidden = @relu(@dense(%flat, %w3, %b3)) in
  @softmax_cross_entropy(@dense(%hidden, %w4, %b4), %y, axis=1)
}
"""

BATCH = 2
SEED = 7
MARGIN = 1e-4
PARAMS = ("x", "k1", "c1", "k2", "c2", "w3", "b3", "w4", "b4", "y")


def lenet_inputs(seed: int = SEED) -> tuple[np.ndarray, ...]:
    rng = np.random.default_rng(seed)
    x = rng.uniform(-1.0, 1.0, (BATCH, 1, 12, 12))
    k1 = rng.normal(0.0, 0.5, (4, 1, 3, 3))
    c1 = rng.normal(0.0, 0.1, (4, 1, 1))
    k2 = rng.normal(0.0, 0.5, (6, 4, 2, 2))
    c2 = rng.normal(0.0, 0.1, (6, 1, 1))
    w3 = rng.normal(0.0, 0.4, (16, 24))
    b3 = rng.normal(0.0, 0.1, (16,))
    w4 = rng.normal(0.0, 0.4, (10, 16))
    b4 = rng.normal(0.0, 0.1, (10,))
    y = np.eye(10)[rng.integers(0, 10, BATCH)]
    return x, k1, c1, k2, c2, w3, b3, w4, b4, y


# -- the NumPy oracle (written here; never relayish's operators) ----------------------------


def np_conv2d(x: np.ndarray, w: np.ndarray) -> np.ndarray:
    """Cross-correlation of NCHW x with OIHW w, stride 1, no padding."""
    windows = sliding_window_view(x, w.shape[2:], axis=(2, 3))  # n, c, h', w', kh, kw
    return np.einsum("nchwij,ocij->nohw", windows, w)


def np_pool_windows(x: np.ndarray) -> np.ndarray:
    """The 2x2 windows (stride 2) of NCHW x, as a last axis of 4."""
    n, c, h, w = x.shape
    return x.reshape(n, c, h // 2, 2, w // 2, 2).transpose(0, 1, 2, 4, 3, 5).reshape(n, c, h // 2, w // 2, 4)


def forward(x, k1, c1, k2, c2, w3, b3, w4, b4, y) -> dict[str, np.ndarray]:
    t1 = np.tanh(np_conv2d(x, k1) + c1)
    a1 = np_pool_windows(t1).max(axis=-1)
    t2 = np.tanh(np_conv2d(a1, k2) + c2)
    a2 = np_pool_windows(t2).max(axis=-1)
    flat = a2.reshape(a2.shape[0], -1)
    pre3 = flat @ w3.T + b3
    hidden = np.maximum(pre3, 0.0)
    z = hidden @ w4.T + b4
    m = z.max(axis=1, keepdims=True)
    lse = (m + np.log(np.exp(z - m).sum(axis=1, keepdims=True)))[:, 0]
    loss = np.mean(lse - (y * z).sum(axis=1))
    return {"t1": t1, "t2": t2, "flat": flat, "pre3": pre3, "hidden": hidden, "z": z, "loss": np.asarray(loss)}


def top_two_gap(t: np.ndarray) -> float:
    """The smallest difference between the largest and second largest value of any window."""
    windows = np.sort(np_pool_windows(t), axis=-1)
    return float((windows[..., -1] - windows[..., -2]).min())


# -- tests ------------------------------------------------------------------------------------


def module() -> relayish.Module:
    return load(LENET, filename="lenet.rly")


def test_lenet_loss_matches_numpy():
    args = lenet_inputs()
    assert_same(relayish.evaluate(module(), "lenet_loss", *args), forward(*args)["loss"], rtol=1e-12)


def test_inputs_are_away_from_ties_and_kinks():
    """Finite differences are only valid away from max-pool ties and relu's kink."""
    f = forward(*lenet_inputs())
    assert top_two_gap(f["t1"]) > MARGIN
    assert top_two_gap(f["t2"]) > MARGIN
    assert np.abs(f["pre3"]).min() > MARGIN
    assert 0 < (f["pre3"] > 0).sum() < f["pre3"].size  # relu both passes and blocks


def test_every_parameter_against_finite_differences():
    check_grad(module(), lenet_inputs(), name="lenet_loss")


def test_last_layers_against_their_closed_form():
    """dL/dz = (softmax(z) - y) / n; then w4, b4, the relu layer's w3, b3, and y itself.

    dL/dw4 = dz^T hidden, dL/db4 = sum_n dz; dh = dz w4, dpre3 = dh [pre3 > 0];
    dL/dw3 = dpre3^T flat, dL/db3 = sum_n dpre3; dL/dy = -z / n.
    """
    args = lenet_inputs()
    f = forward(*args)
    w4, y = args[7], args[9]
    z = f["z"]
    p = np.exp(z - z.max(axis=1, keepdims=True))
    p /= p.sum(axis=1, keepdims=True)
    dz = (p - y) / BATCH
    dpre3 = (dz @ w4) * (f["pre3"] > 0)
    value, grads = run_grad(module(), "lenet_loss", *args)
    assert_same(value, f["loss"], rtol=1e-12)
    got = dict(zip(PARAMS, grads))
    assert_same(got["w4"], dz.T @ f["hidden"])
    assert_same(got["b4"], dz.sum(axis=0))
    assert_same(got["w3"], dpre3.T @ f["flat"])
    assert_same(got["b3"], dpre3.sum(axis=0))
    assert_same(got["y"], -z / BATCH)
    for name, x in zip(PARAMS, args):
        assert got[name].shape == x.shape and got[name].dtype == np.float64, name
