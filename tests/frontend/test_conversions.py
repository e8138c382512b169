"""Python values become typed arguments only when they fit the parameter's dtype exactly
(frontend/arguments.py): at a call of a @relay function (both backends), of its gradient,
of a model, and for update_model_params's learning rate and create_model's sigma
(``relayish run``'s literals: tests/interp/test_cli_run.py). Weak literals inside a
function take the dtype of the tensor they meet, so ``a + 1`` on float32 ``a`` is fine."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

from frontend.arguments import Misfit, exact_array
from relayish import Bool, Dim, Float, Float16, Float64, Int, RelayRuntimeError, Tensor, UInt8, relay, relay_model

N = Dim("N")


@relay
def twice(n: Int) -> Int:
    return n * 2


@relay
def half(x: Float) -> Float:
    return x / 2.0


@relay
def small(x: Float16) -> Float16:
    return x


@relay
def byte(b: UInt8) -> UInt8:
    return b


@relay
def negate(b: Bool) -> Bool:
    return not b


@relay
def total(x: Tensor[Float64, 3]) -> Float64:
    return relay.sum(x)


@relay
def plus_int_literal(a: Float) -> Float:
    return a + 1


@relay
def scaled(x: Float, n: Int) -> Float:
    return x * x * relay.cast(n, dtype=Float)


@relay_model
def tiny(x: Tensor[Float, (N, 2)]) -> Tensor[Float, (N, 1)]:
    return relay.linear(x, num_hidden=1)


@relay
def tiny_loss(x: Tensor[Float, (N, 2)]) -> Float:
    return relay.sum(tiny(x))


def misfit(fn, *args) -> str:
    with pytest.raises(RelayRuntimeError) as info:
        fn(*args)
    return info.value.message


@pytest.mark.parametrize("backend", ["interp", "jit"])
def test_a_float_for_an_int_parameter_is_an_error_not_a_rounding(backend):
    fn = relay(backend=backend)(twice.python_function)
    assert misfit(fn, 2.5) == ("argument n of twice: expected Int (an int32 scalar), got the float 2.5: int32 "
                               "parameters take ints, and relayish turns no float into an int: round it first, "
                               "e.g. round(x)")
    # a whole float too: relayish turns no float into an int, as no float literal meets an int tensor
    assert misfit(fn, 2.0).endswith("got the float 2.0: int32 parameters take ints, and relayish turns no float "
                                    "into an int: write 2")
    assert misfit(fn, [2.0]).startswith("argument n of twice: expected Int (an int32 scalar), got [2.0]: int32")


@pytest.mark.parametrize("backend", ["interp", "jit"])
def test_an_int_beyond_the_dtype_is_an_error_not_a_wraparound(backend):
    fn = relay(backend=backend)(twice.python_function)
    assert misfit(fn, 99999999999).endswith("got the int 99999999999, which does not fit in int32 "
                                            "(-2147483648 to 2147483647)")
    assert misfit(byte, 256).endswith("got the int 256, which does not fit in uint8 (0 to 255)")
    assert misfit(byte, -1).endswith("got the int -1, which does not fit in uint8 (0 to 255)")
    assert fn(2**30 - 1) == np.int32(2**31 - 2) and fn(-(2**30)) == np.int32(-(2**31))
    assert byte(255) == np.uint8(255)


def test_the_error_points_at_the_parameter_in_the_users_def():
    with pytest.raises(RelayRuntimeError) as info:
        twice(2.5)
    span = info.value.span
    assert span.file == __file__ and span.line == twice.python_function.__code__.co_firstlineno + 1
    assert "def twice(n: Int) -> Int:" in str(info.value)


def test_values_that_fit_convert_to_the_parameters_dtype():
    assert half(3) == np.float32(1.5) and half(3).dtype == np.float32  # an int for a float parameter
    assert half(0.1).dtype == np.float32  # floats round to the nearest float32, as floats do
    assert total([1, 2, 3.5]) == 6.5 and total([1, 2, 3.5]).dtype == np.float64
    assert negate(True) == np.False_
    assert half(float("inf")) == np.inf  # inf is a float value, not an overflow


def test_bools_and_numbers_do_not_mix():
    assert misfit(twice, True).endswith("got the bool True: a bool is not a number here: write 1 or 0")
    assert misfit(half, False).endswith("got the bool False: a bool is not a number here: write 1 or 0")
    assert misfit(negate, 1).endswith("got the int 1: bool parameters take True or False")


def test_floats_too_large_for_the_dtype_are_errors_not_infinities():
    assert misfit(half, 1e300).endswith("got the float 1e+300, which is too large for float32 (largest 3.40282e+38)")
    assert misfit(small, 70000).endswith("got the int 70000, which is too large for float16 (largest 65504)")
    assert misfit(total, [1.0, 10**400, 2.0]).endswith("which is too large for float64 (largest 1.79769e+308)")


def test_values_that_are_not_numbers():
    assert misfit(half, "0.1").endswith("got the str '0.1', which is not a number")
    assert misfit(half, None).endswith("got None, which is not a number")
    assert misfit(total, [[1.0], [2.0, 3.0]]).endswith("whose rows have different lengths: pass a rectangular list")


@given(st.integers(-(2**40), 2**40))
def test_exact_ints_agree_with_numpy_where_they_fit(value):
    fits = -(2**31) <= value < 2**31
    try:
        converted = exact_array(value, np.dtype(np.int32))
    except Misfit:
        assert not fits
    else:
        assert fits and converted == np.int32(value) and converted.dtype == np.int32


@given(st.floats(allow_nan=False))
def test_exact_floats_agree_with_numpy_where_they_fit(value):
    with np.errstate(over="ignore"):
        expected = np.float32(value)
    try:
        converted = exact_array(value, np.dtype(np.float32))
    except Misfit:
        assert np.isinf(expected) and not np.isinf(value)
    else:
        assert converted == expected and converted.dtype == np.float32


def test_the_gradient_converts_as_the_function_does():
    value, (dx, dn) = relay.grad(scaled)(3, 2)
    assert (value, dx, dn) == (18.0, 12.0, 0)
    assert misfit(relay.grad(scaled), 3.0, 2.5).startswith("argument n of the gradient of `scaled`: expected Int")


def test_a_learning_rate_must_be_a_number_of_the_parameters_dtype():
    model = relay.create_model(tiny, seed=0)
    before = {k: v.copy() for k, v in model.params.items()}
    grads = relay.grad(model, tiny_loss, (np.ones((2, 2), np.float32),))
    for lr, phrase in [("0.1", "got the str '0.1', which is not a number"),
                       (True, "got the bool True: a bool is not a number here"),
                       (1e300, "got the float 1e+300, which is too large for float32"),
                       ([0.1, 0.2], "got [0.1, 0.2]: pass one number")]:
        with pytest.raises(RelayRuntimeError) as info:
            relay.update_model_params(model, grads, lr=lr)
        assert info.value.message.startswith(f"relay.update_model_params: lr: expected a float32 number, {phrase}")
        assert all(np.array_equal(model.params[k], before[k]) for k in before)  # nothing changed
    relay.update_model_params(model, grads, lr=1)  # an int converts
    np.testing.assert_allclose(model.params["linear1_weight"], before["linear1_weight"] - grads.grads["linear1_weight"])
    with pytest.raises(RelayRuntimeError, match=r"relay.create_model: sigma: expected a float64 number, got the str"):
        relay.create_model(tiny, sigma="big")


def test_a_model_call_converts_and_names_the_model():
    predict = relay.export_model(relay.create_model(tiny, seed=0))
    assert predict([[1, 2]]).shape == (1, 1)
    assert misfit(predict, np.ones((1, 2))).startswith("argument x of tiny: expected Tensor[Float, (N, 2)] (a float32 "
                                                       "tensor of shape (N, 2)), got a float64 array of shape (1, 2)")


def test_an_int_literal_on_a_float_tensor_takes_the_tensors_dtype():
    """Not an error: a Python number is weak (docs/frontend.md), so ``a + 1`` is ``a + 1.0``."""
    result = plus_int_literal(np.float32(2.5))
    assert result == np.float32(3.5) and result.dtype == np.float32
    assert "%a + 1.0\n" in plus_int_literal.astext()  # a float32 constant: 1.0f64 would be float64
