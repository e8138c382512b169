"""check_equivalent, check_grad and to_float64, against hand-written expectations."""

from __future__ import annotations

import numpy as np
import pytest

import relayish
from relayish.testing.checks import EquivalenceError, GradientError, check_equivalent, check_grad
from relayish.testing.promote import to_float64

F32 = "Tensor(FloatType(32), Shape(2, 3))"


def sub_module(body: str, a: str = "a", b: str = "b") -> relayish.Module:
    return relayish.parse(f"def @main(%{a}: {F32}, %{b}: {F32}) {{ {body} }}")


# -- check_equivalent ---------------------------------------------------------------------------


def test_alpha_different_modules_are_equivalent():
    a = sub_module("let %d = %a - %b in (%d, @sum(%d))")
    b = sub_module("let %t = %p - %q in (%t, @sum(%t))", "p", "q")
    result = check_equivalent(a, b)
    assert isinstance(result, tuple) and result[0].shape == (2, 3) and result[0].dtype == np.float32


def test_different_results_report_the_leaf_the_inputs_and_both_programs():
    x = np.float32([[1, 2, 3], [4, 5, 6]])
    y = np.float32([[1, 2, 0], [4, 5, 6]])
    a, b = sub_module("(%a, %a - %b)"), sub_module("(%a, %b - %a)")
    with pytest.raises(EquivalenceError) as caught:
        check_equivalent(a, b, inputs=(x, y))
    message = str(caught.value)
    assert "result[1]: 1 of 6 elements differ; first at index [0, 2]: actual 3.0, expected -3.0" in message
    assert "argument 1 (%a): float32 (2, 3) [[1., 2., 3.], [4., 5., 6.]]" in message
    assert "argument 2 (%b): float32 (2, 3) [[1., 2., 0.], [4., 5., 6.]]" in message
    assert "%a - %b" in message and "%b - %a" in message
    assert isinstance(caught.value, AssertionError)


def test_default_inputs_are_drawn_when_none_are_given():
    with pytest.raises(EquivalenceError, match=r"result: \d+ of 6 elements differ"):
        check_equivalent(sub_module("%a - %b"), sub_module("%b - %a"))


def test_a_runtime_error_on_one_side_only_is_a_difference():
    ints = "Tensor(IntType(32), Shape())"
    safe = relayish.parse(f"def @main(%n: {ints}) {{ %n }}")
    failing = relayish.parse(f"def @main(%n: {ints}) {{ %n / (%n - %n) }}")
    with pytest.raises(EquivalenceError) as caught:
        check_equivalent(safe, failing, inputs=(np.int32(3),))
    message = str(caught.value)
    assert "only module_b raised" in message and "module_b raised RelayRuntimeError" in message
    assert "module_a returned:" in message and "result: int32 () 3" in message
    assert isinstance(caught.value.__cause__, relayish.RelayRuntimeError)


def test_runtime_errors_on_both_sides_agree():
    failing = relayish.parse("def @main(%n: Tensor(IntType(32), Shape())) { %n / (%n - %n) }")
    assert check_equivalent(failing, failing, inputs=(np.int32(3),)) is None


def test_custom_backends_are_called_with_copies_of_the_inputs():
    calls = []

    def mutating(module, name, x, y):
        calls.append((module, name))
        x[...] = 0  # must not reach the other backend
        return (x + y,)

    def honest(module, name, x, y):
        calls.append((module, name))
        return (x + y,)

    a, b = sub_module("(%a + %b,)"), sub_module("(%b + %a,)")
    x, y = np.ones((2, 3), np.float32), np.full((2, 3), 2, np.float32)
    with pytest.raises(EquivalenceError, match=r"result\[0\]: 6 of 6 elements differ; first at index \[0, 0\]: actual 2.0, expected 3.0"):
        check_equivalent(a, b, inputs=(x, y), backend_a=mutating, backend_b=honest)
    assert calls == [(a, "main"), (b, "main")]
    assert np.all(x == 1)
    assert check_equivalent(a, b, inputs=(x, y), backend_a=honest, backend_b=relayish.evaluate)[0][0, 0] == 3.0


# -- check_grad with Python callables -----------------------------------------------------------


def sin_x(x):
    return np.asarray(np.sum(np.sin(x) * x))


def sin_x_grad(x):
    return sin_x(x), (np.cos(x) * x + np.sin(x),)


@pytest.mark.parametrize("shape", [(3, 4), (20, 20)])  # per element, and by projections
def test_a_correct_gradient_passes(shape):
    x = np.random.default_rng(1).uniform(-2, 2, size=shape).astype(np.float32)
    check_grad(sin_x, (x,), grad=sin_x_grad)


@pytest.mark.parametrize("shape, where", [((3, 4), "at element [1, 2]"), ((20, 20), "along random direction 1 of 8")])
def test_a_gradient_wrong_in_one_element_fails(shape, where):
    def wrong(x):
        value, (g,) = sin_x_grad(x)
        g[1, 2] *= 2
        return value, (g,)

    x = np.random.default_rng(2).uniform(0.5, 2, size=shape).astype(np.float32)
    with pytest.raises(GradientError) as caught:
        check_grad(sin_x, (x,), grad=wrong)
    message = str(caught.value)
    assert f"gradient of argument 1 {where}" in message and "eps=1e-06" in message
    assert "finite difference" in message and "backend" in message


def test_the_inputs_reach_the_callables_as_float64():
    seen = []

    def f(x):
        seen.append(x.dtype)
        return np.asarray(np.sum(x))

    check_grad(f, (np.ones(2, np.float16),), grad=lambda x: (f(x), (np.ones_like(x),)))
    assert set(seen) == {np.dtype(np.float64)}


def tuple_fn(pair, k):
    a, (b,) = pair
    return np.asarray(np.sum(a * a) * b * k)


def tuple_grad(pair, k):
    a, (b,) = pair
    return tuple_fn(pair, k), ((2 * a * b * k, (np.sum(a * a) * k,)), np.zeros_like(k))


def tuple_inputs():
    return ((np.float32([1.0, 2.0]), (np.float64(0.5),)), np.int32(3))


def test_tuple_and_integer_arguments():
    check_grad(tuple_fn, tuple_inputs(), grad=tuple_grad)


def test_a_wrong_gradient_inside_a_tuple_names_the_path():
    def wrong(pair, k):
        value, ((ga, (gb,)), gk) = tuple_grad(pair, k)
        return value, ((ga, (gb + 1,)), gk)

    with pytest.raises(GradientError, match=r"gradient of argument 1\[1\]\[0\] at element \[\]"):
        check_grad(tuple_fn, tuple_inputs(), grad=wrong)


def test_an_integer_argument_needs_zeros_of_its_dtype():
    def nonzero(pair, k):
        value, (g_pair, _) = tuple_grad(pair, k)
        return value, (g_pair, np.ones_like(k))

    def wrong_dtype(pair, k):
        value, (g_pair, _) = tuple_grad(pair, k)
        return value, (g_pair, np.zeros(k.shape, np.float64))

    with pytest.raises(GradientError, match=r"argument 2 \(int32, not differentiable\) must be zeros, but element \[\] is 1"):
        check_grad(tuple_fn, tuple_inputs(), grad=nonzero)
    with pytest.raises(GradientError, match=r"gradient of argument 2 is not shaped as the \(float64\) input: dtype differs: actual float64, expected int32"):
        check_grad(tuple_fn, tuple_inputs(), grad=wrong_dtype)


def test_a_gradient_of_the_wrong_structure_fails():
    with pytest.raises(GradientError, match=r"one gradient per argument"):
        check_grad(tuple_fn, tuple_inputs(), grad=lambda pair, k: (tuple_fn(pair, k), (pair,)))
    with pytest.raises(GradientError, match=r"gradient of argument 1 is not shaped as the \(float64\) input: tuple length differs: actual has 1 fields, expected 2"):
        check_grad(tuple_fn, tuple_inputs(), grad=lambda pair, k: (tuple_fn(pair, k), ((pair[0],), k)))


def test_a_wrong_value_fails():
    with pytest.raises(GradientError, match="value"):
        check_grad(sin_x, (np.ones(3, np.float32),), grad=lambda x: (sin_x(x) + 1, sin_x_grad(x)[1]))


def test_a_callable_needs_an_explicit_grad():
    with pytest.raises(ValueError, match="grad="):
        check_grad(sin_x, (np.ones(3, np.float32),))


# -- check_grad with modules ---------------------------------------------------------------------

SQUARES = "def @main(%x: Tensor(FloatType(32), Shape(3))) -> Tensor(FloatType(32), Shape()) { @sum(%x * %x) }"


def test_a_module_with_an_explicit_grad_runs_in_float64():
    seen = []

    def grad(x):
        seen.append(x.dtype)
        return np.asarray(np.sum(x * x)), (2 * x,)

    check_grad(relayish.parse(SQUARES), (np.float32([0.5, 1.0, 1.5]),), grad=grad)
    assert seen == [np.dtype(np.float64)]
    with pytest.raises(GradientError, match=r"argument 1 \(%x\) at element \[0\]"):
        check_grad(relayish.parse(SQUARES), (np.float32([0.5, 1.0, 1.5]),), grad=lambda x: (np.sum(x * x), (3 * x,)))


@pytest.mark.parametrize(
    "source",
    [SQUARES, "def @main[n: Dim](%x: Tensor(FloatType(32), Shape(n))) -> Tensor(FloatType(32), Shape()) { @sum(%x * %x) }"],
)
def test_the_default_grad_is_grad_in_the_evaluator(source):
    """With no grad=, a module's gradient is Grad(@main) in the evaluator (promoted to float64)."""
    check_grad(relayish.parse(source), (np.float32([0.5, 1.0, 1.5]),))


# -- check_grad over data values -------------------------------------------------------------------

V64 = "Tensor(FloatType(64), Shape(3))"
FOLD = f"""
def @main(%l: List[{V64}], %w: {V64}) -> Tensor(FloatType(64), Shape()) {{
  @sum(@foldl(fn (%h: {V64}, %x: {V64}) {{ @tanh(%h * %w + %x) }}, @zeros_like(%w), %l))
}}
def @vg(%l: List[{V64}], %w: {V64}) {{ Grad(@main)(%l, %w) }}
"""


def a_list(items: list) -> relayish.DataValue:
    """The Prelude's ``Cons(items[0], Cons(..., Nil))``."""
    value = relayish.DataValue("Nil")
    for item in reversed(items):
        value = relayish.DataValue("Cons", (item, value))
    return value


def fold_inputs() -> tuple:
    rng = np.random.default_rng(4)
    return a_list(list(rng.uniform(-1, 1, size=(3, 3)))), rng.uniform(-1, 1, size=3)


def fold_grad_with(change):
    """The evaluator's gradient of FOLD, with ``change(list gradient)`` in place of the list's."""
    module = relayish.parse(FOLD, prelude=True)

    def grad(l, w):
        value, (gl, gw) = relayish.evaluate(module, "vg", l, w)
        return value, (change(gl), gw)

    return module, grad


def test_a_list_argument_is_checked_element_by_element():
    module = relayish.parse(FOLD, prelude=True)
    check_grad(module, fold_inputs())  # Grad in the evaluator


def test_a_wrong_gradient_inside_a_list_names_its_element():
    def nudged(gl):
        first, rest = gl.fields
        second = rest.fields[0].copy()
        second[2] += 1e-3
        return a_list([first, second, rest.fields[1].fields[0]])

    module, grad = fold_grad_with(nudged)
    with pytest.raises(GradientError, match=r"gradient of argument 1 \(%l\)\.Cons\[1\]\.Cons\[0\] at element \[2\]: finite"):
        check_grad(module, fold_inputs(), grad=grad)


def test_a_list_gradient_of_another_length_fails():
    module, grad = fold_grad_with(lambda gl: a_list([gl.fields[0]]))
    with pytest.raises(GradientError, match=r"gradient of argument 1 \(%l\)\.Cons\[1\] is not shaped as the \(float64\) "
                                            r"input: constructor differs: actual is Nil of 0 fields, expected Cons of 2 fields"):
        check_grad(module, fold_inputs(), grad=grad)


# -- to_float64 --------------------------------------------------------------------------------

MIXED_PRECISION = """
def @main(%x: Tensor(FloatType(32), Shape(3)), %i: Tensor(IntType(32), Shape(3))) -> Tensor(FloatType(32), Shape(3)) {
  let %y: Tensor(FloatType(32), Shape(3)) = %x * 0.1 in
  let %h = fn (%z: Tensor(FloatType(16), Shape(3))) -> Tensor(FloatType(16), Shape(3)) { %z } in
  (Tensor(FloatType(32), Shape(3))) (%y + @cast(%i, dtype=FloatType(32)) / 3.0 + Zero(Tensor(FloatType(32), Shape(3))))
}
"""


def test_to_float64_promotes_every_float_type():
    promoted = to_float64(relayish.parse(MIXED_PRECISION))
    text = relayish.astext(promoted)
    assert "FloatType(32)" not in text and "FloatType(16)" not in text
    assert "@cast(%i, dtype=FloatType(64))" in text and "Zero(Tensor(FloatType(64), Shape(3)))" in text
    assert "IntType(32)" in text
    x, i = np.float64([0.3, 1.7, 2.9]), np.int32([1, 2, 7])
    result = relayish.evaluate(promoted, "main", x, i)
    assert result.dtype == np.float64
    tenth = np.float64(np.float32(0.1))  # the float32 literal, widened exactly
    expected = x * tenth + i.astype(np.float64) / 3.0  # float64 throughout: float32 would be off by ~1e-8
    np.testing.assert_allclose(result, expected, rtol=1e-15)
    with pytest.raises(relayish.RelayRuntimeError):
        relayish.evaluate(promoted, "main", x.astype(np.float32), i)


def test_to_float64_keeps_variables_shared_and_type_params():
    source = "def @main[t: BaseType, n: Dim](%x: Tensor(t, Shape(n)), %y: Tensor(FloatType(32), Shape(n))) { let %s = %y in (%x, %s, %s) }"
    module = relayish.parse(source)
    promoted = to_float64(module)
    fn = promoted["main"]
    assert fn.type_params == module["main"].type_params
    assert str(fn.params[0].type_annotation) == "Tensor(t, Shape(n))"
    assert str(fn.params[1].type_annotation) == "Tensor(FloatType(64), Shape(n))"
    let = fn.body
    assert let.value is fn.params[1]  # the use is the new binder itself
    assert all(field is let.var for field in let.body.fields[1:])
    assert relayish.astext(module).replace("FloatType(32)", "FloatType(64)") == relayish.astext(promoted)
