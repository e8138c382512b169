"""Forward mode (``Jvp``): against hand-derived derivatives, central differences (``check_jvp``)
and reverse mode (``<J t, c> = <t, J^T c>`` with ``Grad``'s vector-Jacobian product), through
closures, ``if``, recursion, tuples, references and data types, and composed with ``Grad`` in
every order."""

from __future__ import annotations

import numpy as np
import pytest

import ad
import relayish
from interp import evaluate
from relayish.testing import check_jvp
from relayish.testing.inputs import leaves, map_leaves

F = "Tensor(FloatType(64), Shape())"
V = "Tensor(FloatType(64), Shape(5))"


def _module(src: str) -> relayish.Module:
    return relayish.parse(src.replace("$F", F).replace("$V", V), prelude=True)


def test_jvp_of_sin_at_one_half_is_cos():
    m = _module("""
    def @f(%x: $F) -> $F { @sin(%x) }
    def @main(%x: $F, %t: $F) -> ($F, $F) { Jvp(@f)(%x, %t) }
    """)
    value, tangent = evaluate(m, "main", np.float64(0.5), np.float64(1.0))
    assert value == np.sin(0.5) and tangent == np.cos(0.5)
    value, tangent = evaluate(ad.jvp(m, "f"), "f_jvp", np.float64(0.5), np.float64(1.0))
    assert value == np.sin(0.5) and tangent == np.cos(0.5)


# f(x) = sum(sin(x) * x): gradient cos(x) * x + sin(x), Hessian diag(2 cos(x) - x sin(x)).
HVP = """
def @f(%x: $V) -> $F { @sum(@sin(%x) * %x) }
def @g(%x: $V) -> $V { Grad(@f)(%x)[1][0] }
def @hvp_fwd_rev(%x: $V, %v: $V) -> $V { Jvp(@g)(%x, %v)[1] }
def @hvp_rev_rev(%x: $V, %v: $V) -> $V {
  Grad(fn (%y: $V) -> $F { @sum(@g(%y) * %v) })(%x)[1][0]
}
"""


def test_hessian_vector_product_forward_over_reverse_matches_reverse_over_reverse_and_the_formula():
    m = _module(HVP)
    rng = np.random.default_rng(0)
    x, v = rng.uniform(-2, 2, 5), rng.standard_normal(5)
    expected = (2 * np.cos(x) - x * np.sin(x)) * v
    forward = evaluate(m, "hvp_fwd_rev", x, v)
    reverse = evaluate(m, "hvp_rev_rev", x, v)
    np.testing.assert_allclose(forward, expected, rtol=1e-12)
    np.testing.assert_allclose(reverse, expected, rtol=1e-12)
    check_jvp(m, [x], [v], name="g")  # and the Hessian-vector product against differences of the gradient


# Each program's @f: closures, if, recursion through a global, tuples, references, data types.
PROGRAMS = {
    "closure": """
    def @f(%x: $V, %y: $F) -> $V {
      let %scale = fn (%z: $V) -> $V { %z * %y + @exp(%z) } in
      %scale(@sin(%x)) * %y
    }""",
    "if": """
    def @f(%x: $V, %y: $F) -> $V {
      if @sum(%x) > %y then @tanh(%x) * %y else @log(%x * %x + 1.0f64) - %y
    }""",
    "recursion": """
    def @pow_n(%x: $V, %n: Tensor(IntType(32), Shape())) -> $V {
      if %n <= 0 then @ones_like(%x) else %x * @pow_n(%x, %n - 1)
    }
    def @f(%x: $V, %y: $F) -> $V { @pow_n(%x, 3) + @pow_n(%x * %y, 2) }""",
    "tuples": """
    def @pair(%x: $V, %y: $F) -> ($V, $F) { (%x * %y, @sum(%x) * %y) }
    def @f(%x: $V, %y: $F) -> ($V, $F) { let %p = @pair(@sin(%x), %y) in (%p[0] + %x, %p[1] * %p[1]) }""",
    "references": """
    def @f(%x: $V, %y: $F) -> $V {
      let %r = Ref(%x) in
      let %u = %r := !%r * %y in
      let %u2 = %r := @sin(!%r) + %x in
      !%r
    }""",
    "data types": """
    def @total(%l: List[$V]) -> $V {
      match (%l) { Cons(%h, %t) => %h * %h + @total(%t), Nil => Zero($V) }
    }
    def @f(%x: $V, %y: $F) -> $V { @total(Cons(%x, Cons(@exp(%x) * %y, Nil))) }""",
}


@pytest.mark.parametrize("name", sorted(PROGRAMS))
def test_jvp_matches_finite_differences(name):
    rng = np.random.default_rng(1)
    x, y = rng.uniform(0.2, 1.5, 5), np.float64(0.7)
    check_jvp(_module(PROGRAMS[name]), [x, y], name="f")


@pytest.mark.parametrize("name", sorted(PROGRAMS))
def test_jvp_agrees_with_grads_vector_jacobian_product(name):
    """<J t, c> from forward mode equals <t, J^T c> from ``ad.vjp`` (reverse mode)."""
    m = ad.vjp(ad.jvp(_module(PROGRAMS[name]), "f"), "f")
    rng = np.random.default_rng(2)
    x, y = rng.uniform(0.2, 1.5, 5), np.float64(0.7)
    tx, ty = rng.standard_normal(5), np.float64(rng.standard_normal())
    value, tangent = evaluate(m, "f_jvp", x, y, tx, ty)
    cotangent = map_leaves(value, lambda path, leaf: rng.standard_normal(np.shape(leaf)))
    _, (gx, gy) = evaluate(m, "f_vjp", x, y, cotangent)
    forward = sum(float(np.sum(t * c)) for (_, t), (_, c) in zip(leaves(tangent), leaves(cotangent)))
    np.testing.assert_allclose(forward, float(np.sum(gx * tx) + gy * ty), rtol=1e-10)


CUBE = """
def @cube(%x: $F) -> $F { %x * %x * %x }
def @d1_fwd(%x: $F) -> $F { Jvp(@cube)(%x, 1.0f64)[1] }
def @d1_rev(%x: $F) -> $F { Grad(@cube)(%x)[1][0] }
def @fwd_fwd(%x: $F) -> $F { Jvp(@d1_fwd)(%x, 1.0f64)[1] }
def @fwd_rev(%x: $F) -> $F { Jvp(@d1_rev)(%x, 1.0f64)[1] }
def @rev_fwd(%x: $F) -> $F { Grad(@d1_fwd)(%x)[1][0] }
def @fwd_fwd_fwd(%x: $F) -> $F { Jvp(@fwd_fwd)(%x, 1.0f64)[1] }
def @nested(%x: $F) -> $F { Jvp(fn (%y: $F) -> $F { Grad(fn (%z: $F) -> $F { %z * %z * %y })(%y)[1][0] })(%x, 1.0f64)[1] }
"""


@pytest.mark.parametrize("name, derivative", [
    ("d1_fwd", lambda x: 3 * x**2), ("fwd_fwd", lambda x: 6 * x), ("fwd_rev", lambda x: 6 * x),
    ("rev_fwd", lambda x: 6 * x), ("fwd_fwd_fwd", lambda x: 6.0), ("nested", lambda x: 4 * x),
])
def test_jvp_composes_with_grad_in_every_order(name, derivative):
    """x^3's derivatives (3x^2, 6x, 6) by every nesting of Jvp and Grad; ``nested``: d/dx of
    d/dz (z^2 y) at z = y = x, i.e. d/dx 2x^2 = 4x, with Grad inside a closure inside Jvp."""
    x = np.float64(1.3)
    np.testing.assert_allclose(evaluate(_module(CUBE), name, x), derivative(x), rtol=1e-12)


def test_jvp_rejects_functions_it_cannot_give_tangents_for():
    m = _module("""
    def @f(%x: $F) -> ($F) -> $F { fn (%y: $F) -> $F { %x * %y } }
    def @main(%x: $F) { Jvp(@f)(%x, %x) }
    """)
    with pytest.raises(relayish.RelayTypeError, match="Jvp: the differentiated function returns"):
        relayish.infer_types(ad.expand(m))


def test_jvp_prints_and_parses_back():
    m = _module(CUBE)
    text = relayish.astext(m)
    assert "Jvp(@cube)" in text
    assert relayish.alpha_equal(relayish.parse(text), m)
