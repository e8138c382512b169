"""Gradients of index-expression operators, derived (relayish/ix/derive.py): first and second
derivatives against central differences, and the adjoints' cost (scatters over the forward grid)."""

from __future__ import annotations

import numpy as np
import pytest

import relayish
from relayish import Dim, Float, Tensor, ix, relay
from relayish.ix.derive import adjoint
from relayish.testing import check_grad
from tests.ix.definitions import CASES, arguments, tensor

N = Dim("N")

@pytest.mark.parametrize("name", sorted(CASES))
def test_derived_gradients_match_finite_differences(ops, name):
    """f = sum(tanh(op(args)) * w); g = sum(d f / d args[0] * v): g's gradient is f's second derivative."""
    rng = np.random.default_rng(7)
    args = arguments(name, rng)
    out = ops[name].compute(*args).shape
    params = [f"%a{k}: {tensor(a.shape, 'IntType(64)' if a.dtype.kind == 'i' else 'FloatType(64)')}"
              for k, a in enumerate(args)]
    names = ", ".join(f"%a{k}" for k in range(len(args)))
    module = relayish.parse(f"""
    def @f({", ".join(params)}, %w: {tensor(out)}) {{ @sum(@tanh(@{name}({names})) * %w) }}
    def @g({", ".join(params)}, %w: {tensor(out)}, %v: {tensor(args[0].shape)}) {{
      @sum(Grad(@f)({names}, %w)[1][0] * %v)
    }}""")
    w, v = rng.standard_normal(out), rng.standard_normal(args[0].shape)
    check_grad(module, [*args, w], name="f")
    if CASES[name][1]:
        check_grad(module, [*args, w, v], name="g")


def test_the_adjoint_of_an_indexing_operator_scatters_over_the_forward_grid(ops):
    """The cheap-gradient principle: diag's adjoint adds n values (not an n x n dense product), the
    stencil's three reads give three scatters over its n positions, and matmul's adjoint of A
    runs over the forward's (i, j, k) grid."""
    diag = adjoint(ops["ix_diag"].definition, 0)
    assert [len(s.space) for s in diag.scatters] == [1]
    stencil = adjoint(ops["ix_stencil"].definition, 0)
    assert [len(s.space) for s in stencil.scatters] == [1, 1, 1]
    matmul = adjoint(ops["ix_matmul"].definition, 0)
    assert [[v.name for v in s.space] for s in matmul.scatters] == [["i", "j", "k"]]
    x = np.arange(16.0).reshape(4, 4)
    np.testing.assert_array_equal(ix.evaluate(diag, x, np.array([1.0, 2, 3, 4])), np.diag([1.0, 2, 3, 4]))


def test_max_reductions_pass_the_adjoint_to_the_first_maximum(ops):
    x = np.array([[[[1.0, 5.0, 5.0, 0.0], [5.0, 2.0, 3.0, 3.0]]]])  # ties in both windows
    d = ix.evaluate(adjoint(ops["ix_max_pool2d"].definition, 0), x, np.array([[[[10.0, 20.0]]]]))
    np.testing.assert_array_equal(d, [[[[0, 10, 20, 0], [0, 0, 0, 0]]]])


@relay
def ix_loss(x: Tensor[Float, (N, 4)], w: Tensor[Float, (4, 3)]) -> Float:
    return relay.sum(relay.tanh(relay.ix_matmul(x, w)))


@relay
def ix_loss_grad(x: Tensor[Float, (N, 4)], w: Tensor[Float, (4, 3)]):
    return relay.grad(ix_loss)(x, w)


def test_a_relay_function_differentiates_through_an_index_operator(ops):
    """relay.grad in decorated code with a Dim batch (the evaluator here), and compiled."""
    rng = np.random.default_rng(4)
    x, w = rng.standard_normal((5, 4)).astype(np.float32), rng.standard_normal((4, 3)).astype(np.float32)
    t = np.tanh(x.astype(np.float64) @ w)
    compiled = relayish.compile(ix_loss_grad.ir, ix_loss_grad.global_name, tiered=False)
    for value, (dx, dw) in (ix_loss_grad(x, w), compiled(x, w)):
        np.testing.assert_allclose(value, np.sum(t), rtol=1e-5)
        np.testing.assert_allclose(dx, (1 - t * t) @ w.T, rtol=1e-5, atol=1e-5)
        np.testing.assert_allclose(dw, x.T @ (1 - t * t), rtol=1e-5, atol=1e-5)


def test_an_adjoint_named_before_ad_asked_for_it_is_derived_when_looked_up(ops):
    """A program optimized in another process (the JIT's program cache) names ``@op__dK``
    before this process ran AD on ``@op``: the name derives and registers the adjoint."""
    from relayish.ops.registry import lookup_op, unregister_user_op, user_op_names

    unregister_user_op("ix_stencil__d0")
    assert "ix_stencil__d0" not in user_op_names()
    module = relayish.parse(f"def @main(%x: {tensor((7,))}, %g: {tensor((7,))}) {{ @ix_stencil__d0(%x, %g) }}")
    x, g = np.zeros(7), np.arange(7.0)
    expected = 0.5 * g + 0.25 * np.concatenate([g[1:], [0]]) + 0.25 * np.concatenate([[0], g[:-1]])
    np.testing.assert_allclose(relayish.evaluate(module, "main", x, g), expected)
    assert lookup_op("ix_stencil__d0").definition.target == 0
    assert lookup_op("ix_stencil__d1") is None and lookup_op("ix_nothing__d0") is None  # stencil has one input
