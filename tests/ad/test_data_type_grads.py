"""Gradients through algebraic data types: a recursive tree of tanh cells over a tree built at
run time, and the Prelude's map/foldl over a list with closures, in the evaluator and the JIT,
each against finite differences (float64) and a NumPy computation of the value."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

import relayish
from relayish.testing import check_grad

F = "Tensor(FloatType(64), Shape())"
I = "Tensor(IntType(32), Shape())"
V = "Tensor(FloatType(64), Shape(4))"

TREE = f"""
def @build(%xs: Tensor(FloatType(64), Shape(6, 4)), %lo: {I}, %n: {I}) -> Tree[{V}] {{
  if %n == 1 then Leaf(@take(%xs, %lo, axis=0))
  else let %h = @floor_divide(%n, 2) in Node(@build(%xs, %lo, %h), @build(%xs, %lo + %h, %n - %h))
}}

def @cell(%t: Tree[{V}], %w: {V}, %u: {V}) -> {V} {{
  match %t {{
    Leaf(%x) => @tanh(%x * %u),
    Node(%l, %r) => @tanh(@cell(%l, %w, %u) * %w + @cell(%r, %w, %u)),
  }}
}}

def @main(%xs: Tensor(FloatType(64), Shape(6, 4)), %n: {I}, %w: {V}, %u: {V}) -> {F} {{
  @sum(@cell(@build(%xs, 0, %n), %w, %u))
}}

def @vg(%xs: Tensor(FloatType(64), Shape(6, 4)), %n: {I}, %w: {V}, %u: {V}) {{
  Grad(@main)(%xs, %n, %w, %u)
}}
"""


def tree_value(xs: np.ndarray, lo: int, n: int, w: np.ndarray, u: np.ndarray) -> np.ndarray:
    """The same tree, in NumPy (the oracle for the value)."""
    if n == 1:
        return np.tanh(xs[lo] * u)
    h = n // 2
    return np.tanh(tree_value(xs, lo, h, w, u) * w + tree_value(xs, lo + h, n - h, w, u))


def inputs(seed: int, n: int) -> list:
    rng = np.random.default_rng(seed)
    return [rng.normal(size=(6, 4)), np.int32(n), rng.normal(size=4), rng.normal(size=4)]


@pytest.mark.parametrize("n", [1, 3, 6])
def test_a_tree_of_tanh_cells_built_at_run_time(n: int) -> None:
    module = relayish.parse(TREE, prelude=True)
    args = inputs(n, n)
    expected = tree_value(args[0], 0, n, args[2], args[3]).sum()
    assert np.isclose(relayish.evaluate(module, "main", *args), expected, rtol=1e-12)
    check_grad(module, args)  # the evaluator's Grad against finite differences
    vg = relayish.compile(module, "vg", tiered=False)
    check_grad(module, args, grad=lambda *a: vg(*a))  # the JIT's
    value, grads = vg(*args)
    assert np.isclose(value, expected, rtol=1e-12)
    used = np.zeros((6, 4))
    used[:n] = 1
    assert np.all(grads[0][used == 0] == 0)  # rows not in the tree get no gradient


LIST = f"""
def @rows(%xs: Tensor(FloatType(64), Shape(5, 3)), %i: {I}) -> List[Tensor(FloatType(64), Shape(3))] {{
  if %i == 5 then Nil else Cons(@take(%xs, %i, axis=0), @rows(%xs, %i + 1))
}}

def @main(%xs: Tensor(FloatType(64), Shape(5, 3)), %w: Tensor(FloatType(64), Shape(3))) -> {F} {{
  let %l = @map(fn (%r: Tensor(FloatType(64), Shape(3))) {{ @tanh(%r * %w) }}, @rows(%xs, 0)) in
  let %step = fn (%acc: Tensor(FloatType(64), Shape(3)), %r: Tensor(FloatType(64), Shape(3))) {{ %acc * 0.5f64 + %r * %w }} in
  @sum(@foldl(%step, @zeros_like(%w), %l))
}}

def @vg(%xs: Tensor(FloatType(64), Shape(5, 3)), %w: Tensor(FloatType(64), Shape(3))) {{
  Grad(@main)(%xs, %w)
}}
"""


def test_prelude_map_and_foldl_with_closures() -> None:
    module = relayish.parse(LIST, prelude=True)
    rng = np.random.default_rng(3)
    xs, w = rng.normal(size=(5, 3)), rng.normal(size=3)
    acc = np.zeros(3)
    for row in np.tanh(xs * w):
        acc = acc * 0.5 + row * w
    assert np.isclose(relayish.evaluate(module, "main", xs, w), acc.sum(), rtol=1e-12)
    check_grad(module, [xs, w])
    for opt_level in (0, 3):
        vg = relayish.compile(module, "vg", opt_level=opt_level, tiered=False)
        check_grad(module, [xs, w], grad=lambda *a: vg(*a))


def test_the_gradient_with_respect_to_a_list_is_a_list_of_gradients() -> None:
    src = f"""
def @total(%l: List[{F}]) -> {F} {{
  @foldl(fn (%acc: {F}, %x: {F}) {{ %acc * 0.5f64 + @sin(%x) }}, 0f64, %l)
}}
def @g(%l: List[{F}]) {{ Grad(@total)(%l) }}
"""
    module = relayish.parse(src, prelude=True)
    xs = np.random.default_rng(5).normal(size=4)
    data = relayish.DataValue("Nil")
    for x in reversed(xs):
        data = relayish.DataValue("Cons", (np.float64(x), data))
    weights = 0.5 ** np.arange(len(xs) - 1, -1, -1)  # x_i is halved once per later element
    for run in (lambda *a: relayish.evaluate(module, "g", *a), relayish.compile(module, "g", tiered=False)):
        value, (grad,) = run(data)
        assert np.isclose(value, (weights * np.sin(xs)).sum(), rtol=1e-12)
        got = []
        while grad.ctor == "Cons":
            got.append(grad.fields[0])
            grad = grad.fields[1]
        np.testing.assert_allclose(got, weights * np.cos(xs), rtol=1e-12)


def test_grad_refuses_a_function_inside_a_data_type() -> None:
    src = f"""
type Box {{ MkBox(({F}) -> {F}) }}
def @apply(%b: Box, %x: {F}) -> {F} {{ match %b {{ MkBox(%f) => %f(%x) }} }}
def @g(%b: Box, %x: {F}) {{ Grad(@apply)(%b, %x) }}
"""
    with pytest.raises(relayish.RelayTypeError, match="MkBox holds"):
        relayish.evaluate(relayish.parse(src, prelude=True), "g", None, np.float64(1))


def test_the_prelude_example_of_the_docs() -> None:
    """docs/text-format.md's Prelude example: its value, and its gradient in the JIT against the evaluator's."""
    doc = (Path(__file__).resolve().parents[2] / "docs" / "text-format.md").read_text()
    example = doc.split("### The Prelude", 1)[1].split("```\n", 1)[1].split("```", 1)[0]
    example += "def @g(%xs: Tensor(FloatType(64), Shape(3, 4)), %w: Tensor(FloatType(64), Shape(4))) { Grad(@main)(%xs, %w) }\n"
    module = relayish.parse(example, prelude=True)
    xs, w = np.random.default_rng(2).normal(size=(3, 4)), np.random.default_rng(3).normal(size=4)
    assert np.isclose(relayish.evaluate(module, "main", xs, w), np.tanh(xs[:2] * w).sum(), rtol=1e-12)
    check_grad(module, [xs, w], name="main", grad=relayish.compile(module, "g", tiered=False))


def test_a_polymorphic_global_instantiated_at_two_types_and_nested_lists() -> None:
    """foldl over a list of lists calls foldl at two types: two instances, each recursing into itself."""
    src = f"""
def @total(%ls: List[List[{F}]]) -> {F} {{
  @foldl(fn (%a: {F}, %l: List[{F}]) {{ %a + @foldl(fn (%b: {F}, %x: {F}) {{ %b + @sin(%x) }}, 0f64, %l) }}, 0f64, %ls)
}}
def @g(%ls: List[List[{F}]]) {{ Grad(@total)(%ls) }}
"""
    module = relayish.parse(src, prelude=True)
    DV = relayish.DataValue
    rows = [[0.5, 1.5], [], [-2.0]]
    data = DV("Nil")
    for row in reversed(rows):
        inner = DV("Nil")
        for x in reversed(row):
            inner = DV("Cons", (np.float64(x), inner))
        data = DV("Cons", (inner, data))
    for run in (lambda *a: relayish.evaluate(module, "g", *a), relayish.compile(module, "g", tiered=False)):
        value, (grad,) = run(data)
        assert np.isclose(value, sum(np.sin(x) for row in rows for x in row), rtol=1e-12)
        got = []
        while grad.ctor == "Cons":
            inner, grad = grad.fields
            got.append([])
            while inner.ctor == "Cons":
                got[-1].append(float(inner.fields[0]))
                inner = inner.fields[1]
        assert got == [[pytest.approx(np.cos(x), rel=1e-12) for x in row] for row in rows]


def test_a_prelude_function_called_at_a_type_with_the_callers_dimension() -> None:
    """@rev at List[Tensor(.., Shape(n))] inside a global polymorphic over n: its instance is polymorphic over n."""
    src = """
def @f[n: Dim](%x: Tensor(FloatType(64), Shape(n))) -> Tensor(FloatType(64), Shape()) {
  match @rev(Cons(%x, Cons(%x * %x, Nil))) { Cons(%h, _) => @sum(%h), Nil => 0f64 }
}
def @g(%x: Tensor(FloatType(64), Shape(3))) { Grad(@f)(%x) }
"""
    module = relayish.parse(src, prelude=True)
    x = np.array([0.5, -1.0, 2.0])
    for run in (lambda *a: relayish.evaluate(module, "g", *a), relayish.compile(module, "g", tiered=False)):
        value, (grad,) = run(x)
        assert np.isclose(value, (x * x).sum()) and np.allclose(grad, 2 * x)


def test_a_constructor_test_whose_fields_are_differentiated_runs_its_dual_once() -> None:
    """``Is[Some](Some(@sin(%x)))``: the dual of ``@sin`` links a backpropagator step. Lifting the
    boolean result copied the expression, so the step was linked twice with the same variables and
    the second link called itself: the backward pass never ended (difftest --backend jit, seed 700)."""
    module = relayish.parse(f"""
def @main(%x: {F}) -> {F} {{ if Is[Some](Some(@sin(%x))) then %x * 3f64 else %x }}
def @vg(%x: {F}) {{ Grad(@main)(%x) }}
""", prelude=True)
    for run in (lambda *a: relayish.evaluate(module, "vg", *a, max_calls=1000), relayish.compile(module, "vg", tiered=False)):
        value, (gradient,) = run(np.float64(0.5))
        assert value == 1.5 and gradient == 3.0
