"""The AD stress programs of tests/ad/test_programs.py, written as decorated Python.

Each function below is the Python spelling of one program there (same name where
possible), in float64: parameters are annotated ``Float64`` / ``Tensor[Float64, ...]``;
literals meet a float64 tensor (so they are float64 too), and where a literal would stand
alone or inside a lambda whose parameters are unannotated it is written ``Float64(...)``.
``relay.grad(f)(x)`` inside decorated code is the text format's ``Grad(@f)(%x)``.

Not here: the REFS program (``Ref``, ``:=``, ``!``) has no Python spelling, since the
frontend has no references (a Python variable is immutable once translated); its
gradient stays covered by tests/ad/test_programs.py.
"""

from collections.abc import Callable

import numpy as np

from relayish import Bool, Float, Float16, Float64, Int, Int64, Tensor, relay

# ---------------------------------------------------------------------------------------
# x^3 and its derivatives by nesting relay.grad through globals.
# f = x^3, f' = 3x^2, f'' = 6x, f''' = 6, f'''' = 0.


@relay
def cube(x: Float64) -> Float64:
    return x * x * x


@relay
def cube_d1(x: Float64) -> Float64:
    return relay.grad(cube)(x)[1][0]


@relay
def cube_d2(x: Float64) -> Float64:
    return relay.grad(cube_d1)(x)[1][0]


@relay
def cube_d3(x: Float64) -> Float64:
    return relay.grad(cube_d2)(x)[1][0]


# ---------------------------------------------------------------------------------------
# x^5 + 2x: the fourth derivative with relay.grad nested four times in one expression, and
# the derivatives through a chain of globals.
# f = x^5 + 2x, f' = 5x^4 + 2, f'' = 20x^3, f''' = 60x^2, f'''' = 120x, f''''' = 120.


@relay
def quint(x: Float64) -> Float64:
    return x * x * x * x * x + 2.0 * x


@relay
def quint_d4(x: Float64) -> Float64:
    return relay.grad(
        lambda x3: relay.grad(
            lambda x2: relay.grad(
                lambda x1: relay.grad(quint)(x1)[1][0]
            )(x2)[1][0]
        )(x3)[1][0]
    )(x)[1][0]  # fmt: skip


@relay
def quint_d4_defs(x: Float64) -> Float64:
    """The same as ``quint_d4``, with annotated nested defs instead of lambdas."""

    def d1(x1: Float64) -> Float64:
        return relay.grad(quint)(x1)[1][0]

    def d2(x2: Float64) -> Float64:
        return relay.grad(d1)(x2)[1][0]

    def d3(x3: Float64) -> Float64:
        return relay.grad(d2)(x3)[1][0]

    return relay.grad(d3)(x)[1][0]


@relay
def quint_d1(x: Float64) -> Float64:
    return relay.grad(quint)(x)[1][0]


@relay
def quint_d2(x: Float64) -> Float64:
    return relay.grad(quint_d1)(x)[1][0]


@relay
def quint_d3(x: Float64) -> Float64:
    return relay.grad(quint_d2)(x)[1][0]


# ---------------------------------------------------------------------------------------
# g = x^2 for x < 0, else x^3: g' = 2x or 3x^2, g'' = 2 or 6x.


@relay
def branch(x: Float64) -> Float64:
    if x < 0.0:
        return x * x
    return x * x * x


@relay
def branch_d1(x: Float64) -> Float64:
    return relay.grad(branch)(x)[1][0]


# The same g as a conditional expression and as an if statement that assigns.
@relay
def branch_expr(x: Float64) -> Float64:
    return x * x if x < 0.0 else x * x * x


@relay
def branch_assign(x: Float64) -> Float64:
    if x < 0.0:
        y = x * x
    else:
        y = x * x * x
    return y


# ---------------------------------------------------------------------------------------
# f(a) = (fn (b) { fn (c) { b } })(a)(1.0) = a: f' = 1.


@relay
def captured(a: Float64) -> Float64:
    return (lambda b: lambda c: b)(a)(Float64(1.0))


# ---------------------------------------------------------------------------------------
# a = x^2, b = x + 5; a + b (x < 0) or a * b (x >= 0), as closures chosen by an if and then
# called. x < 0: f' = 2x + 1. x >= 0: f = x^3 + 5x^2, f' = 3x^2 + 10x.


@relay
def closures(x: Float64) -> Float64:
    a = x * x
    b = x + 5.0

    def plus() -> Float64:
        return a + b

    def times() -> Float64:
        return a * b

    chosen = plus if x < 0.0 else times
    return chosen()


@relay
def closures_lambdas(x: Float64) -> Float64:
    a = x * x
    b = x + 5.0
    if x < 0.0:
        chosen = lambda: a + b
    else:
        chosen = lambda: a * b
    return chosen()


# ---------------------------------------------------------------------------------------
# Perturbation confusion: the inner gradient of x * y in y is x, so the outer function is
# x * x and its derivative 2x (1x or 3x if the levels are confused).


@relay
def confusion(x: Float64) -> Float64:
    def times_x(y: Float64) -> Float64:
        return x * y

    return x * relay.grad(times_x)(Float64(2.0))[1][0]


@relay
def confusion_inline(x0: Float64) -> tuple[Float64, tuple[Float64]]:
    def outer(x: Float64) -> Float64:
        def inner(y: Float64) -> Float64:
            return x * y

        return x * relay.grad(inner)(Float64(2.0))[1][0]

    return relay.grad(outer)(x0)


# The same with lambdas, as the frontend's documentation allows (relay.grad(g)(x) with g a
# lambda); the parameter y has no annotation, so its type comes from the argument.
@relay
def confusion_lambda(x: Float64) -> Float64:
    return x * relay.grad(lambda y: x * y)(Float64(2.0))[1][0]


@relay
def confusion_inline_lambda(x0: Float64) -> tuple[Float64, tuple[Float64]]:
    return relay.grad(lambda x: x * relay.grad(lambda y: x * y)(Float64(2.0))[1][0])(x0)


# ---------------------------------------------------------------------------------------
# power(x, n) = x^n by recursion on the int32 n: d/dx = n x^(n-1); d/dn is an int32 zero.


@relay
def power(x: Float64, n: Int) -> Float64:
    if n == 0:
        return 1.0
    return x * power(x, n - 1)


# ---------------------------------------------------------------------------------------
# r = x; while r < 100: r = r * r. With k squarings: x^(2^k), derivative 2^k x^(2^k - 1).


@relay
def loop(x: Float64) -> Float64:
    r = x
    while r < 100.0:
        r = r * r
    return r


@relay
def loop_recursive(x: Float64) -> Float64:
    """The program's own spelling: a local recursive function."""

    def again(r: Float64) -> Float64:
        if r < 100.0:
            return again(r * r)
        return r

    return again(x)


# ---------------------------------------------------------------------------------------
# A higher-order global applied to a closure over b, on a tuple argument (a, b):
# loss = (a^2 + 10a) b^2 + b^4 + 10 b^3; d/da = (2a + 10) b^2; d/db = 2b (a^2 + 10a) + 4b^3 + 30b^2.


@relay
def apply_twice(g: Callable[[Float64], Float64], x: Float64) -> Float64:
    return g(x) * g(x + 10.0)


@relay
def ho_loss(p: tuple[Float64, Float64]) -> Float64:
    a, b = p
    g = lambda x: x * b
    return apply_twice(g, a) + apply_twice(g, b)


# ---------------------------------------------------------------------------------------
# sum(x + y) with x (3, 4, 1) and y (1, 5) broadcast to (3, 4, 5): each x element is used
# 5 times, each y element 12 times.


@relay
def bsum(x: Tensor[Float64, (3, 4, 1)], y: Tensor[Float64, (1, 5)]) -> Float64:
    return relay.sum(x + y)


# ---------------------------------------------------------------------------------------
# Nested tuple argument p = (a, (v, c)), an int32 k, an int64 vector m and a bool flag:
#   base = a * sum(v * v) * c;  f = base + k a + sum(m) c   if flag,   base   otherwise.


@relay
def mixed(p: tuple[Float64, tuple[Tensor[Float64, 3], Float64]], k: Int, m: Tensor[Int64, 2], flag: Bool) -> Float64:
    a = p[0]
    v = p[1][0]
    c = p[1][1]
    base = a * relay.sum(v * v) * c
    if flag:
        return base + Float64(k) * a + relay.cast(relay.sum(m), dtype=Float64) * c
    return base


# ---------------------------------------------------------------------------------------
# A tuple built and taken apart inside: f = x^3 + x^2, f' = 3x^2 + 2x.


@relay
def inner_tuple(x: Float64) -> Float64:
    t = (x * x, x + 1.0)
    return t[0] * t[1]


# ---------------------------------------------------------------------------------------
# sum(tanh(A B)): dA = (1 - tanh^2(A B)) B^T, dB = A^T (1 - tanh^2(A B)).


@relay
def mm(a: Tensor[Float64, (2, 3)], b: Tensor[Float64, (3, 4)]) -> Float64:
    return relay.sum(relay.tanh(a @ b))


# ---------------------------------------------------------------------------------------
# A tuple output used by a loss: pair(x) = (2x, sum(x^2)); loss = sum(C pair[0]) + S pair[1]
# with the constants C, S: gradient 2C + 2Sx (the vjp cases of test_programs.py).

PAIR_C = np.array([0.5, 1.0, -1.0, 2.0])
PAIR_S = 3.0


@relay
def pair(x: Tensor[Float64, 4]) -> tuple[Tensor[Float64, 4], Float64]:
    return (x * 2.0, relay.sum(x * x))


@relay
def pair_loss(x: Tensor[Float64, 4]) -> Float64:
    y, s = pair(x)
    return relay.sum(PAIR_C * y) + PAIR_S * s


# ---------------------------------------------------------------------------------------
# Every float width: f(x) = sum(tanh(x) x) + 0.5 sum(x), f' = tanh(x) + x (1 - tanh^2 x) + 0.5.


@relay
def widths64(x: Tensor[Float64, 4]) -> Float64:
    return relay.sum(relay.tanh(x) * x) + 0.5 * relay.sum(x)


@relay
def widths32(x: Tensor[Float, 4]) -> Float:
    return relay.sum(relay.tanh(x) * x) + 0.5 * relay.sum(x)


@relay
def widths16(x: Tensor[Float16, 4]) -> Float16:
    return relay.sum(relay.tanh(x) * x) + 0.5 * relay.sum(x)
