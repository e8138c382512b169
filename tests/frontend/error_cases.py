"""Decorated functions that the frontend must reject, kept in a real file so that positions
are stable. Each function uses exactly one unsupported construct (or has one type error);
tests/frontend/test_errors.py locates the construct by searching this file's text for a
substring that is unique inside the function, so editing this file needs no test change
as long as those substrings stay.

Nothing here is translated at import: @relay translates lazily, at the first call or
``.ir``. Every function is syntactically valid Python, and most run undecorated.
"""

# ruff: noqa: F401, F821, F841

import math

import numpy as np

from relayish import Dim, Float, Float64, Int, Tensor, relay

N = Dim("N")

# ---------------------------------------------------------------------------------------
# Unsupported statements


@relay
def uses_try(x: Float64) -> Float64:
    try:
        y = x * 2.0
    except Exception:
        y = x
    return y


class _Resource:
    def __enter__(self):
        return self

    def __exit__(self, *exc):
        return False


@relay
def uses_with(x: Float64) -> Float64:
    with _Resource():
        y = x + 1.0
    return y


@relay
def uses_yield(x: Float64) -> Float64:
    yield x


@relay
def uses_yield_value(x: Float64) -> Float64:
    y = yield x
    return y


COUNTER = 0.0


@relay
def uses_global(x: Float64) -> Float64:
    global COUNTER
    return x


@relay
def uses_nonlocal(x: Float64) -> Float64:
    y = x

    def bump(v: Float64) -> Float64:
        nonlocal y
        return v

    return bump(y)


@relay
def uses_break(x: Float64) -> Float64:
    r = x
    while r < 100.0:
        r = r * r
        if r > 50.0:
            break
    return r


@relay
def uses_continue(x: Float64, n: Int) -> Float64:
    acc = x * 0.0
    for i in range(n):
        if i == 2:
            continue
        acc = acc + x
    return acc


@relay
def uses_return_in_loop(x: Float64, n: Int) -> Float64:
    acc = x
    for i in range(n):
        acc = acc * x
        if acc > 10.0:
            return acc
    return acc


@relay
def uses_assert(x: Float64) -> Float64:
    assert x > 0.0
    return x


@relay
def uses_del(x: Float64) -> Float64:
    y = x * 2.0
    del y
    return x


@relay
def uses_raise(x: Float64) -> Float64:
    if x < 0.0:
        raise ValueError("negative")
    return x


@relay
def uses_import(x: Float64) -> Float64:
    import os
    return x


@relay
def uses_import_from(x: Float64) -> Float64:
    from math import pi
    return x


@relay
def uses_subscript_assignment(x: Tensor[Float64, 3]) -> Tensor[Float64, 3]:
    x[0] = 1.0
    return x


@relay
def uses_expression_statement(x: Float64) -> Float64:
    relay.tanh(x)
    return x


@relay
def uses_loop_else(x: Float64) -> Float64:
    r = x
    while r < 100.0:
        r = r * r
    else:
        r = r + 1.0
    return r


# ---------------------------------------------------------------------------------------
# Unsupported expressions


@relay
def uses_list_comprehension(x: Float64) -> Float64:
    ys = [x * k for k in range(3)]
    return x


@relay
def uses_generator(x: Float64) -> Float64:
    y = sum(x * k for k in range(3))
    return y


@relay
def uses_list_literal(x: Float64) -> Float64:
    ys = [x, x]
    return x


@relay
def uses_dict_literal(x: Float64) -> Float64:
    d = {"a": x}
    return x


@relay
def uses_set_literal(x: Float64) -> Float64:
    s = {x, x}
    return x


@relay
def uses_slice(x: Tensor[Float64, 5]) -> Tensor[Float64, 2]:
    return x[1:3]


@relay
def uses_tensor_index(x: Tensor[Float64, 5], i: Int) -> Float64:
    return x[i]


@relay
def uses_attribute(x: Tensor[Float64, (2, 3)]) -> Float64:
    n = x.shape
    return relay.sum(x)


@relay
def uses_transpose_attribute(x: Tensor[Float64, (2, 3)]) -> Tensor[Float64, (3, 2)]:
    return x.T


@relay
def uses_string_constant(x: Float64) -> Float64:
    name = "weights"
    return x


@relay
def uses_none(x: Float64) -> Float64:
    y = None
    return x


@relay
def uses_shift(n: Int) -> Int:
    return n << 2


@relay
def uses_invert(n: Int) -> Int:
    return ~n


@relay
def uses_is(x: Float64, y: Float64) -> Float64:
    if x is y:
        return x
    return y


@relay
def uses_in(x: Float64, y: Float64) -> Float64:
    if x in (y, y):
        return x
    return y


@relay
def uses_walrus(x: Float64) -> Float64:
    z = (y := x * 2.0) + 1.0
    return z


@relay
def uses_fstring(x: Float64) -> Float64:
    label = f"x={x}"
    return x


@relay
def uses_starred_call(x: Float64, y: Float64) -> Float64:
    t = (x, y)
    return relay.add(*t)


@relay
def uses_starred_unpack(x: Float64, y: Float64) -> Float64:
    a, *rest = (x, y, x)
    return a


# ---------------------------------------------------------------------------------------
# Calls of Python functions and of operators that do not exist


@relay
def calls_print(x: Float64) -> Float64:
    y = print(x)
    return x


@relay
def calls_print_statement(x: Float64) -> Float64:
    print(x)
    return x


@relay
def calls_abs(x: Float64) -> Float64:
    return abs(x)


@relay
def calls_numpy(x: Float64) -> Float64:
    return np.tanh(x)


@relay
def calls_math(x: Float64) -> Float64:
    return math.exp(x)


def _helper(v):
    return v * 2.0


@relay
def calls_undecorated_helper(x: Float64) -> Float64:
    return _helper(x)


@relay
def calls_range_outside_for(n: Int) -> Int:
    r = range(n)
    return n


@relay
def calls_missing_op(x: Float64) -> Float64:
    return relay.nonexistent_op(x)


@relay
def calls_misspelled_op(x: Float64) -> Float64:
    return relay.tahn(x)


@relay
def names_misspelled_op(x: Float64) -> Float64:
    f = relay.sigmiod
    return f(x)


@relay
def calls_layer_outside_model(x: Tensor[Float, (2, 4)]) -> Tensor[Float, (2, 3)]:
    return relay.linear(x, num_hidden=3)


@relay
def calls_conv_layer_outside_model(x: Tensor[Float, (1, 1, 8, 8)]) -> Tensor[Float, (1, 2, 4, 4)]:
    return relay.conv2d(x, num_filter=2, ksize=5)


@relay
def bad_attribute_value(x: Tensor[Float64, (2, 3)]) -> Tensor[Float64, 2]:
    return relay.sum(x, axis="a")


@relay
def bad_attribute_name(x: Tensor[Float64, (2, 3)]) -> Tensor[Float64, 2]:
    return relay.sum(x, axes=1)


@relay
def computed_attribute(x: Tensor[Float64, (2, 3)], k: Int) -> Tensor[Float64, 2]:
    return relay.sum(x, axis=k)


@relay
def undefined_name(x: Float64) -> Float64:
    return x + not_defined_anywhere


SCALE = 2.0


@relay
def misspelled_name(x: Float64) -> Float64:
    return x * SCAEL


# ---------------------------------------------------------------------------------------
# Loops and control flow that Python allows and relayish does not


@relay
def for_over_tensor(x: Tensor[Float64, 3]) -> Float64:
    acc = Float64(0.0)
    for v in x:
        acc = acc + v
    return acc


@relay
def for_over_tuple(x: Float64, y: Float64) -> Float64:
    acc = x * 0.0
    for v in (x, y):
        acc = acc + v
    return acc


@relay
def range_with_computed_step(n: Int, s: Int) -> Int:
    acc = n * 0
    for i in range(0, n, s):
        acc = acc + i
    return acc


@relay
def falls_off_the_end(x: Float64) -> Float64:
    if x > 0.0:
        return x


@relay
def nested_def_falls_off_the_end(x: Float64) -> Float64:
    def half(v: Float64) -> Float64:
        if v > 0.0:
            return v * 0.5

    return half(x)


@relay
def bare_return(x: Float64) -> Float64:
    return


@relay
def uses_loop_only_variable(x: Float64, n: Int) -> Float64:
    for i in range(n):
        last = x * 2.0
    return last


@relay
def uses_loop_counter_after_loop(x: Float64, n: Int) -> Int:
    for i in range(n):
        x = x + 1.0
    return i


@relay
def uses_name_before_assignment(x: Float64) -> Float64:
    y = z + x
    z = x
    return y


# ---------------------------------------------------------------------------------------
# Parameters and annotations


@relay
def lambda_with_default(x: Float64) -> Float64:
    f = lambda v, k=2.0: v * k
    return f(x, x)


@relay
def def_with_default(x: Float64) -> Float64:
    def scale(v: Float64, k: Float64 = 2.0) -> Float64:
        return v * k

    return scale(x, x)


@relay
def star_args(*args: Float64) -> Float64:
    return args[0]


@relay
def star_kwargs(x: Float64, **options: Float64) -> Float64:
    return x


@relay
def keyword_only(x: Float64, *, y: Float64) -> Float64:
    return x + y


@relay
def missing_annotation(x: Float64, y) -> Float64:
    return x + y


@relay
def int_annotation(x: int) -> Float64:
    return Float64(1.0)


@relay
def numpy_annotation(x: np.ndarray) -> Float64:
    return Float64(1.0)


@relay
def open_tuple_annotation(x: tuple[Float64, ...]) -> Float64:
    return Float64(1.0)


@relay
def string_bad_tensor_annotation(x: "Tensor[float, 3]") -> Float64:
    return Float64(1.0)


@relay
def undefined_annotation(x: "NoSuchType") -> Float64:
    return Float64(1.0)


@relay
def bad_local_annotation(x: Float64) -> Float64:
    y: list = x
    return y


@relay
def bad_return_annotation(x: Float64) -> dict:
    return x


# ---------------------------------------------------------------------------------------
# The error is not in the function called: a callee, an indented definition


@relay
def broken_callee(x: Float64) -> Float64:
    with _Resource():
        y = x
    return y


@relay
def calls_broken_callee(x: Float64) -> Float64:
    return broken_callee(x) * 2.0


def make_indented():
    @relay
    def indented(x: Float64) -> Float64:
        y = x
        try:
            y = x * 2.0
        finally:
            y = x
        return y

    return indented


indented = make_indented()


class Holder:
    @staticmethod
    def method_like(x: Float64) -> Float64:
        z = [x]
        return x


method_like = relay(Holder.method_like)


@relay
def error_in_lambda(x: Float64) -> Float64:
    f = lambda v: v.real
    return f(x)


@relay
def error_in_nested_def(x: Float64) -> Float64:
    def inner(v: Float64) -> Float64:
        w = {v: v}
        return v

    return inner(x)


# ---------------------------------------------------------------------------------------
# Type errors: the checker's message names the Python line


@relay
def shape_mismatch(x: Tensor[Float, 3], y: Tensor[Float, 4]) -> Float:
    z = x + y
    return relay.sum(z)


@relay
def dtype_mismatch(x: Float, y: Float64) -> Float64:
    z = x * y
    return z


@relay
def two_params(a: Float64, b: Float64) -> Float64:
    return a * b


@relay
def wrong_arity_global(x: Float64) -> Float64:
    return two_params(x) + x


@relay
def wrong_arity_local(x: Float64) -> Float64:
    def twice(v: Float64, w: Float64) -> Float64:
        return v + w

    return twice(x) * 2.0


@relay
def wrong_return_type(x: Tensor[Float64, 3]) -> Float64:
    y = x * 2.0
    return y


@relay
def wrong_return_dtype(x: Float64) -> Float:
    y = x + 1.0
    return y


@relay
def float_literal_meets_int(n: Int) -> Int:
    m = n * 2.5
    return m


@relay
def type_error_in_callee_caller(x: Tensor[Float64, 3]) -> Float64:
    return relay.sum(type_error_callee(x))


@relay
def type_error_callee(x: Tensor[Float64, 3]) -> Tensor[Float64, 3]:
    w = relay.dense(x, x)
    return x


@relay
def closure_late_binding(x: Float64) -> Float64:
    # Python closures see a variable's value at call time, relayish closures at creation:
    # using f after k is reassigned would differ, so it is an error at the use.
    k = x
    f = lambda v: v + k  # noqa: E731
    k = x * 2.0
    return f(x)


@relay
def closure_late_binding_loop(x: Float64, n: Int) -> Float64:
    k = x
    f = lambda v: v * k  # noqa: E731
    for i in range(n):
        k = k + 1.0
    return f(x)


# ---------------------------------------------------------------------------------------
# Arguments that do not fit the annotations (tests/frontend/test_errors.py calls them with
# a float64 array, a misspelled size, ...): the error names the parameter here


@relay
def takes_vector(x: Tensor[Float, 3]) -> Float:
    return relay.sum(x)


@relay
def takes_two_of_one_length(x: Tensor[Float, (N,)], y: Tensor[Float, (N,)]) -> Float:
    return relay.sum(x * y)


@relay
def takes_a_pair(t: tuple[Float, Int]) -> Float:
    return t[0]


@relay
def divides_in_its_gradient(x: Float, n: Int) -> Float:
    k = n // (n - n)
    return x * x


# ---------------------------------------------------------------------------------------
# Correct functions: after any error above, these still work


@relay
def still_fine(x: Float64, y: Float64) -> Float64:
    return x * y + 1.0


@relay
def still_fine_loop(x: Float64, n: Int) -> Float64:
    acc = x * 0.0
    for i in range(n):
        acc = acc + x
    return acc
