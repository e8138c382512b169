"""Automatic batching (``Vmap``) against the loop over examples it replaces: the function run on each
example alone by the evaluator, an oracle that never batches. Through data-dependent ``if`` and
recursion (the examples finish at different depths), closures, references, tuples, other axes,
nesting and composition with ``Grad`` and ``Jvp``; on the evaluator and the JIT."""

from __future__ import annotations

import numpy as np
import pytest

import ad
import relayish
from interp import evaluate
from relayish.errors import RelayTypeError
from relayish.expr import Function, RefNew, RefRead, RefWrite
from relayish.testing import check_grad, check_vmap, difference
from relayish.traverse import post_order

F = "Tensor(FloatType(64), Shape())"
I = "Tensor(IntType(32), Shape())"
V = "Tensor(FloatType(64), Shape(3))"
B = 64


def _module(src: str) -> relayish.Module:
    return relayish.parse(src.replace("$F", F).replace("$I", I).replace("$V", V))


# A data-dependent if (on the example's sum) and a data-dependent loop (recursion whose depth is the
# example's n): each example takes its own branch and stops at its own depth.
IF_AND_LOOP = """
def @loop(%x: $F, %n: $I) -> $F {
  if %n > 0 then @loop(@sin(%x) + %x * 0.5f64, %n - 1) else %x
}
def @f(%x: $V, %n: $I) -> $F {
  let %s = @sum(%x) in
  if %s > 1.5f64 then @loop(%s, %n) else %s * 2.0f64 - @loop(-%s, %n * 2)
}
def @main(%xs: Tensor(FloatType(64), Shape(64, 3)), %ns: Tensor(IntType(32), Shape(64))) -> Tensor(FloatType(64), Shape(64)) {
  Vmap(@f, in_axes=(0, 0))(%xs, %ns)
}
"""


def test_vmap_of_a_data_dependent_if_and_loop_over_64_examples_equals_the_loop():
    m = _module(IF_AND_LOOP)
    rng = np.random.default_rng(0)
    xs, ns = rng.uniform(0, 1, (B, 3)), rng.integers(0, 8, B).astype(np.int32)
    expected = check_vmap(m, [xs, ns], (0, 0), name="f", rtol=0.0)  # Vmap(@f) exactly the loop over examples
    assert len({bool(s > 1.5) for s in xs.sum(axis=1)}) == 2 and len(set(ns)) > 4  # both branches, many depths
    np.testing.assert_array_equal(evaluate(m, "main", xs, ns), expected)
    np.testing.assert_allclose(relayish.compile(m, "main")(xs, ns), expected, rtol=1e-13)


def test_recursion_stops_for_each_example_and_frozen_examples_run_no_further():
    """An example whose loop is done is outside the mask: were it run on, ``n == 0`` would never
    hold again (n goes negative) and the recursion would not end."""
    m = _module("""
    def @count(%x: $F, %n: $I) -> $F { if %n == 0 then %x else @count(%x + 1.0f64, %n - 1) }
    def @main(%xs: Tensor(FloatType(64), Shape(5)), %ns: Tensor(IntType(32), Shape(5))) -> Tensor(FloatType(64), Shape(5)) {
      Vmap(@count, in_axes=(0, 0))(%xs, %ns)
    }
    """)
    xs, ns = np.arange(5.0), np.array([0, 3, 1, 7, 2], np.int32)
    np.testing.assert_array_equal(evaluate(m, "main", xs, ns, max_calls=100), xs + ns)


# Closures (captured values, a local recursive function, a function chosen per example), references
# written under per-example control, tuples in and out.
PROGRAMS = {
    "closure": """
    def @apply(%g: ($F) -> $F, %x: $F) -> $F { %g(%g(%x)) }
    def @f(%x: $F, %w: $F) -> $F {
      let %scale = fn (%y: $F) -> $F { %y * %w + @cos(%x) } in @apply(%scale, %x)
    }
    """,
    "local_recursion": """
    def @f(%x: $F, %w: $F) -> $F {
      let %go = fn (%y: $F, %k: $I) -> $F { if %y > %w then %y else %go(@abs(%y) * 2.0f64 + 0.1f64, %k + 1) } in %go(%x, 0)
    }
    """,
    "chosen_function": """
    def @f(%x: $F, %w: $F) -> $F {
      let %g = if %x > 0.0f64 then fn (%y: $F) -> $F { %y * %w } else fn (%y: $F) -> $F { %y - %w } in %g(%x) + %g(1.0f64)
    }
    """,
    "reference": """
    def @f(%x: $F, %w: $F) -> $F {
      let %r = Ref(0.0f64) in
      let %go = fn (%k: $I) -> () { if %k > 0 then let %u = %r := !%r + %x * %w in %go(%k - 1) else () } in
      let %u = %go(@cast(@abs(%x) * 4.0f64, dtype=IntType(32))) in
      let %v = if %x > 0.0f64 then %r := !%r * 10.0f64 else () in
      !%r
    }
    """,
    "chosen_reference": """
    def @f(%x: $F, %w: $F) -> $F {
      let %a = Ref(%w) in let %b = Ref(%x) in
      let %c = if %x > 0.0f64 then %a else %b in
      let %u = %c := !%c * 3.0f64 + 1.0f64 in
      !%a - !%b * 2.0f64
    }
    """,
    "tuples": """
    def @f(%p: ($F, $F), %w: $F) -> ($F, ($F, $F)) {
      let %s = %p[0] + %p[1] * %w in (%s, (%p[1], if %s > 0.0f64 then %s else %w))
    }
    """,
}


@pytest.mark.parametrize("name", sorted(PROGRAMS))
def test_programs_batched_equal_the_loop_on_the_evaluator_and_the_jit(name):
    src = PROGRAMS[name]
    m = _module(src)
    rng = np.random.default_rng(1)
    xs, w = rng.uniform(-1.5, 1.5, 16), np.float64(0.7)
    inputs = (xs, rng.uniform(-1, 1, 16)) if name == "tuples" else xs  # a pair: both parts hold the examples
    expected = check_vmap(m, [inputs, w], (0, None), name="f", rtol=0.0)  # exactly the loop over examples
    compiled = relayish.compile(ad.vmap(m, "f", (0, None)), "f_vmap")(inputs, w)
    assert difference(compiled, expected, rtol=1e-13) is None


def test_a_mapped_axis_other_than_the_first_and_a_batch_of_batches():
    m = _module("""
    def @f(%x: $V, %y: $F) -> $F { @sum(%x * %x) * %y }
    def @rows(%m: Tensor(FloatType(64), Shape(3, 4)), %ys: Tensor(FloatType(64), Shape(4))) -> Tensor(FloatType(64), Shape(4)) {
      Vmap(@f, in_axes=(1, 0))(%m, %ys)
    }
    def @grid(%t: Tensor(FloatType(64), Shape(2, 4, 3)), %ys: Tensor(FloatType(64), Shape(4))) -> Tensor(FloatType(64), Shape(2, 4)) {
      Vmap(fn (%m: Tensor(FloatType(64), Shape(4, 3))) { Vmap(@f, in_axes=(0, 0))(%m, %ys) }, in_axes=(0,))(%t)
    }
    """)
    rng = np.random.default_rng(2)
    mat, ys, t = rng.standard_normal((3, 4)), rng.standard_normal(4), rng.standard_normal((2, 4, 3))
    np.testing.assert_allclose(evaluate(m, "rows", mat, ys), (mat * mat).sum(axis=0) * ys, rtol=1e-14)
    np.testing.assert_allclose(evaluate(m, "grid", t, ys), (t * t).sum(axis=2) * ys, rtol=1e-14)


def test_vmap_composes_with_grad_and_jvp():
    """Per-example gradients and tangents (Vmap outside), and the gradient of a batched loss (Grad
    outside) against finite differences."""
    m = _module("""
    def @loss(%x: $V, %w: $V) -> $F { let %s = @sum(%x * %w) in if %s > 0.0f64 then @tanh(%s) else %s * %s }
    def @per_example(%xs: Tensor(FloatType(64), Shape(8, 3)), %w: $V) {
      Vmap(fn (%x: $V, %w1: $V) { Grad(@loss)(%x, %w1) }, in_axes=(0, none))(%xs, %w)
    }
    def @tangents(%xs: Tensor(FloatType(64), Shape(8, 3)), %w: $V, %t: $V) {
      Vmap(fn (%x: $V) { Jvp(@loss)(%x, %w, @zeros_like(%x), %t)[1] }, in_axes=(0,))(%xs)
    }
    def @total(%xs: Tensor(FloatType(64), Shape(8, 3)), %w: $V) -> $F { @sum(Vmap(@loss, in_axes=(0, none))(%xs, %w)) }
    """)
    rng = np.random.default_rng(3)
    xs, w, t = rng.standard_normal((8, 3)), rng.standard_normal(3), rng.standard_normal(3)
    values, (gx, gw) = evaluate(m, "per_example", xs, w)
    for i in range(8):
        value, (ex, ew) = evaluate(ad.grad(m, "loss"), "loss_grad", xs[i], w)
        assert values[i] == value
        np.testing.assert_allclose(gx[i], ex, rtol=1e-14)
        np.testing.assert_allclose(gw[i], ew, rtol=1e-14)
        np.testing.assert_allclose(evaluate(m, "tangents", xs, w, t)[i], ew @ t, rtol=1e-12)
    check_grad(m, [xs, w], name="total")


def test_the_optimizer_removes_the_masks_references_and_closures_of_per_example_gradients():
    m = _module("""
    def @loss(%x: $V, %w: Tensor(FloatType(64), Shape(3, 2))) -> $F {
      @sum(@tanh(@matmul(@expand_dims(%x, axis=0), %w)))
    }
    def @main(%xs: Tensor(FloatType(64), Shape(8, 3)), %w: Tensor(FloatType(64), Shape(3, 2))) {
      Vmap(fn (%x: $V, %w1: Tensor(FloatType(64), Shape(3, 2))) { Grad(@loss)(%x, %w1) }, in_axes=(0, none))(%xs, %w)
    }
    """)
    compiled = relayish.compile(m, "main")
    program = compiled.module
    nodes = [n for fn in program.functions.values() for n in post_order(fn)]
    assert not any(isinstance(n, (RefNew, RefRead, RefWrite)) for n in nodes)
    assert all(n.primitive for n in nodes if isinstance(n, Function) and n not in program.functions.values())
    assert "where" not in compiled.explain()  # the mask of every example is known to be all true
    rng = np.random.default_rng(4)
    xs, w = rng.standard_normal((8, 3)), rng.standard_normal((3, 2))
    _, (gx, gw) = compiled(xs, w)
    for i in range(8):
        _, (ex, ew) = evaluate(ad.grad(m, "loss"), "loss_grad", xs[i], w)
        # one matrix product for the batch sums in another order than one per example
        np.testing.assert_allclose(gw[i], ew, rtol=1e-12, atol=1e-12 * np.abs(ew).max())
        np.testing.assert_allclose(gx[i], ex, rtol=1e-12, atol=1e-12 * np.abs(ex).max())


def test_vmap_prints_and_parses_back():
    m = _module(IF_AND_LOOP)
    text = relayish.astext(m)
    assert "Vmap(@f, in_axes=(0, 0))" in text
    again = relayish.parse(text)
    assert relayish.astext(again) == text
    assert "Vmap(@f, in_axes=(none, 1))" in relayish.astext(_module("""
    def @f(%x: $F, %y: $V) -> $V { %x * %y }
    def @main(%x: $F, %ys: Tensor(FloatType(64), Shape(3, 5))) { Vmap(@f, in_axes=(none, 1))(%x, %ys) }
    """))


@pytest.mark.parametrize("src, message", [
    ("Vmap(@g, in_axes=(0,))(%xs, %xs)", "in_axes has 1 entries, but the function takes 2 parameters"),
    ("Vmap(@g, in_axes=(none, none))(%xs, %xs)", "every entry of in_axes is none"),
    ("Vmap(@g, in_axes=(2, 0))(%xs, %xs)", "cannot be mapped over axis 2"),
    ("Vmap(@r, in_axes=(0,))(%xs)", "cannot batch code using data types yet"),
    ("Vmap(@d, in_axes=(0,))(%xs)", "has no batching rule"),
])
def test_errors_point_at_the_vmap(src, message):
    m = _module(f"""
    def @g(%x: $F, %y: $F) -> $F {{ %x + %y }}
    type Box {{ Box(Tensor(FloatType(64), Shape())) }}
    def @r(%x: $F) -> $F {{ match Box(%x) {{ Box(%y) => %y }} }}
    def @d(%x: $F) -> Tensor(FloatType(64), Shape(?)) {{ @dyn_reshape(%x, @full(shape=(1,), fill_value=1.0, dtype=IntType(64))) }}
    def @main(%xs: Tensor(FloatType(64), Shape(4))) {{ {src} }}
    """)
    with pytest.raises(RelayTypeError, match="Vmap") as err:
        ad.expand(m)
    assert message in str(err.value)
