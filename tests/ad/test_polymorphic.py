"""Grad of globals that are polymorphic over dimensions: examples/mlp.rly's ``@mlp_loss[n]``.

The example's own ``@mlp_grad_w1`` is ``Grad(@mlp_loss)(...)[1][1]``; ``ad.grad`` and
``relayish.vjp`` of a polymorphic global give a polymorphic ``@<name>_grad``/``_vjp``; and a
monomorphic caller may take ``Grad`` of a polymorphic global (the checker instantiates it).

The MLP's gradients in closed form (NumPy, float64 from the float32 inputs):
  h = tanh(x w1 + b1), z = h w2 + b2, loss = 0.5 mean_i(logsumexp(z_i) - y_i . z_i);
  dz = 0.5 (softmax(z) - y) / n; dw2 = h^T dz; db2 = sum_i dz; dpre = (dz w2^T)(1 - h^2);
  dw1 = x^T dpre; db1 = sum_i dpre; dx = dpre w1^T; dy = -0.5 z / n.
Results are float32: rtol 1e-4 with atol 1e-7 (sums of 784 float32 products).
"""

from __future__ import annotations

from pathlib import Path

import numpy as np

import ad
import relayish

from .support import assert_same, f64, load

MLP = Path(__file__).resolve().parents[2] / "examples" / "mlp.rly"
BATCH = 3
RTOL32, ATOL32 = 1e-4, 1e-7


def mlp_module() -> relayish.Module:
    return relayish.parse(MLP.read_text(), filename=str(MLP))


def mlp_inputs() -> tuple[np.ndarray, ...]:
    rng = np.random.default_rng(3)

    def f32(*shape: int, scale: float) -> np.ndarray:
        return (rng.standard_normal(shape) * scale).astype(np.float32)

    y = np.eye(10, dtype=np.float32)[rng.integers(0, 10, BATCH)]
    return f32(BATCH, 784, scale=1.0), f32(784, 256, scale=0.04), f32(256, scale=0.1), f32(256, 10, scale=0.06), \
        f32(10, scale=0.1), y


def mlp_closed_form(x, w1, b1, w2, b2, y) -> tuple[np.ndarray, tuple[np.ndarray, ...]]:
    x, w1, b1, w2, b2, y = (np.asarray(a, np.float64) for a in (x, w1, b1, w2, b2, y))
    n = x.shape[0]
    h = np.tanh(x @ w1 + b1)
    z = h @ w2 + b2
    m = z.max(axis=1, keepdims=True)
    e = np.exp(z - m)
    lse = (m + np.log(e.sum(axis=1, keepdims=True)))[:, 0]
    loss = 0.5 * np.mean(lse - (y * z).sum(axis=1))
    dz = 0.5 * (e / e.sum(axis=1, keepdims=True) - y) / n
    dpre = (dz @ w2.T) * (1 - h**2)
    grads = (dpre @ w1.T, x.T @ dpre, dpre.sum(axis=0), h.T @ dz, dz.sum(axis=0), -0.5 * z / n)
    as32 = lambda a: np.asarray(a, np.float32)
    return as32(loss), tuple(as32(g) for g in grads)


def test_the_mlp_loss_itself_matches_numpy():
    args = mlp_inputs()
    value, _ = mlp_closed_form(*args)
    assert_same(relayish.evaluate(mlp_module(), "mlp_loss", *args), value, rtol=RTOL32, atol=ATOL32)


def test_the_example_mlp_grad_w1():
    args = mlp_inputs()
    _, grads = mlp_closed_form(*args)
    result = relayish.evaluate(mlp_module(), "mlp_grad_w1", *args)
    assert_same(result, grads[1], rtol=RTOL32, atol=ATOL32)


def test_ad_grad_of_the_polymorphic_mlp_loss():
    args = mlp_inputs()
    out = ad.grad(mlp_module(), "mlp_loss")
    relayish.infer_types(out)
    assert relayish.alpha_equal(relayish.parse(relayish.astext(out)), out)
    assert_same(relayish.evaluate(out, "mlp_loss_grad", *args), mlp_closed_form(*args), rtol=RTOL32, atol=ATOL32)


def test_ad_grad_of_the_polymorphic_mlp_loss_at_another_batch():
    """The same @mlp_loss_grad at batch 1 (n is bound per call)."""
    args = tuple(a[:1] if k in (0, 5) else a for k, a in enumerate(mlp_inputs()))
    out = ad.grad(mlp_module(), "mlp_loss")
    assert_same(relayish.evaluate(out, "mlp_loss_grad", *args), mlp_closed_form(*args), rtol=RTOL32, atol=ATOL32)


# sum(x * x) over a vector of any length n: gradient 2x. @square is x * x: its vjp with
# cotangent c is 2 c x.
POLY = """
def @sumsq[n: Dim](%x: Tensor(FloatType(64), Shape(n))) -> $F { @sum(%x * %x) }
def @square[n: Dim](%x: Tensor(FloatType(64), Shape(n))) -> Tensor(FloatType(64), Shape(n)) { %x * %x }
def @sumsq_via_square[n: Dim](%x: Tensor(FloatType(64), Shape(n))) -> $F { @sum(@square(%x)) }
def @main(%x: Tensor(FloatType(64), Shape(3))) {
  (Grad(@sumsq)(%x), Grad(@sumsq_via_square)(%x))
}
"""

X3 = f64([1.0, -2.0, 0.5])


def test_a_monomorphic_caller_takes_grad_of_polymorphic_globals():
    """x = (1, -2, 0.5): sum(x^2) = 5.25, gradient (2, -4, 1), for both globals."""
    expected = (f64(5.25), (f64([2.0, -4.0, 1.0]),))
    assert_same(relayish.evaluate(load(POLY), "main", X3), (expected, expected))


def test_ad_grad_of_a_polymorphic_global_calling_another():
    out = ad.grad(load(POLY), "sumsq_via_square")
    relayish.infer_types(out)
    assert_same(relayish.evaluate(out, "sumsq_via_square_grad", X3), (f64(5.25), (f64([2.0, -4.0, 1.0]),)))
    x5 = f64([1.0, 2.0, 3.0, 4.0, 5.0])
    assert_same(relayish.evaluate(out, "sumsq_via_square_grad", x5), (f64(55.0), (2 * x5,)))


def test_vjp_of_a_polymorphic_global():
    c = f64([0.5, 1.0, -1.0])
    out = relayish.vjp(load(POLY), "square")
    assert_same(relayish.evaluate(out, "square_vjp", X3, c), (X3 * X3, (2 * c * X3,)))
