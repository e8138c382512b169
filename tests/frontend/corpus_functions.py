"""A corpus of @relay functions, each also runnable undecorated (``f.python(...)``).

The frontend reads each function's source with ``inspect``, so they live in this file.
Every function is written so that its undecorated Python (``relay.*`` as NumPy) computes
exactly what the decorated program computes: dtypes follow NumPy's weak-scalar rules,
``/`` is only used on floats, and loop counters are converted with ``Float(i)`` before
they meet float tensors. test_corpus.py runs both and compares.
"""

from collections.abc import Callable

import numpy as np

from relayish import Bool, Dim, Float, Float64, Int, Tensor, relay

N = Dim("N")

# Module-level constants captured by the decorated code.
W34 = np.arange(12, dtype=np.float32).reshape(3, 4) / np.float32(10)
BIAS4 = np.array([0.5, -1.0, 2.0, 0.25], dtype=np.float32)
IDX = np.array([0, 2, 5], dtype=np.int32)
W64 = np.array([1.5, -2.0, 0.125], dtype=np.float64)
NEG_ONE = np.array(-1, dtype=np.int32)
SCALE = 0.5
OFFSET = 3
STEPS = 4
LIMIT = 50


# --------------------------------------------------------------------------- arithmetic
@relay
def poly(x: Tensor[Float, (2, 3)], y: Tensor[Float, (2, 3)]) -> Tensor[Float, (2, 3)]:
    return (x * y - x / (y * y + 1.0)) ** 2 + -x * 0.5


@relay
def int_arith(a: Tensor[Int, 4], b: Tensor[Int, 4]) -> Tensor[Int, 4]:
    return (a * b + 7) // (relay.abs(b) + 1) - -a * 3


@relay
def scalar_mix(x: Float, n: Int) -> Float:
    return x * Float(n) + SCALE - OFFSET


@relay
def f64_poly(x: Tensor[Float64, 3]) -> Tensor[Float64, 3]:
    return relay.exp(-x * x) * 3.0 + relay.sqrt(x * x + 1.0) - W64 / 7.0


@relay
def augmented(x: Tensor[Float, 4]) -> Tensor[Float, 4]:
    # y must not alias x: undecorated, y += ... on an ndarray is in place (x would change).
    y = x + 0.0
    y += 1.0
    y *= x
    y -= 0.5
    y /= 2.0
    y **= 2
    return y


@relay
def module_consts(x: Tensor[Float, (3, 4)]) -> Tensor[Float, (3, 4)]:
    return x * W34 + BIAS4 * SCALE + OFFSET


@relay
def matmul_ops(a: Tensor[Float, (2, 3)], b: Tensor[Float, (3, 4)]) -> Tensor[Float, (2, 4)]:
    c = a @ b
    return relay.maximum(c, relay.sigmoid(c)) - relay.minimum(c, c * 0.5)


# ----------------------------------------------------------------------------- branches
@relay
def relu_scalar(x: Float) -> Float:
    if x > 0.0:
        return x
    return x * 0.1


@relay
def sign_elif(x: Float) -> Int:
    if x > 0.0:
        return 1
    elif x < 0.0:
        return -1
    else:
        return 0


@relay
def grade(score: Int) -> Int:
    if score >= 90:
        g = 4
    elif score >= 80:
        g = 3
    elif score >= 65:
        g = 2
    elif score >= 50:
        g = 1
    else:
        g = 0
    return g * 10 + score // 10


@relay
def join_two(x: Float, y: Float) -> tuple[Float, Float]:
    if x > y:
        big = x
        small = y
        gap = x - y
    else:
        big = y
        small = x
        gap = y - x
    return big * 2.0 - small, gap + 1.0


@relay
def if_no_else(x: Tensor[Float, 3], flag: Bool) -> Tensor[Float, 3]:
    y = x
    if flag:
        y = y * 2.0
    return y + 1.0


@relay
def nested_returns(x: Float, y: Float) -> Float:
    r = x
    if x > 0.0:
        if y > 0.0:
            return x + y
        r = x * 2.0
    elif y < -1.0:
        return y
    else:
        r = r - 1.0
    r = r + 10.0
    return r * 3.0


@relay
def deep_returns(n: Int) -> Int:
    acc = n
    if n > 0:
        if n > 10:
            if n > 100:
                return n - 100
            acc = acc * 2
        else:
            acc = acc + 1
        acc = acc + 3
    if acc > LIMIT:
        return acc - LIMIT
    return acc * 2


@relay
def chained_cmp(x: Float, lo: Float, hi: Float) -> Float:
    if lo <= x < hi:
        return x - lo
    if hi <= x <= hi * 2.0 < 100.0:
        return (x - hi) * 3.0
    return hi - x


@relay
def cond_expr(a: Float, b: Float) -> Float:
    m = a if a > b else b
    n = a if a < b else b
    return m * 2.0 - n if m > 0.0 else n - 1.0


@relay
def bool_logic(p: Bool, q: Bool, x: Float) -> Bool:
    return (p and not q) or (x > 1.0 and p)


@relay
def tensor_branch(x: Tensor[Float, (2, 3)]) -> Tensor[Float, (2, 3)]:
    total = relay.sum(x)
    if total > 0.0:
        y = relay.relu(x)
        z = relay.exp(x * -1.0)
    elif total < -5.0:
        y = -x
        z = x
    else:
        y = x * x
        z = relay.zeros_like(x)
    return y + z


# ------------------------------------------------------------------------------ closures
@relay
def closure_basic(x: Tensor[Float, 3], s: Float) -> Tensor[Float, 3]:
    def scale(v):
        return v * s

    def shift(v):
        return scale(v) + x

    return shift(scale(x))


@relay
def closure_nested3(x: Float) -> Float:
    def outer(a):
        def middle(b):
            def inner(c):
                return a * b + c + x

            return inner(b + 1.0)

        return middle(a * 2.0)

    return outer(x) + outer(x * 0.5)


@relay
def closure_returned(x: Float) -> Float:
    def make_adder(k):
        return lambda v: v + k

    add3 = make_adder(x * 3.0)
    add_one = make_adder(1.0)
    return add3(x) + add_one(add3(2.0))


@relay
def closure_loop(x: Float, n: Int) -> Float:
    acc = x
    total = x * 0.0
    for i in range(n):
        bump = lambda v: v + acc * 0.5 + Float(i)  # noqa: E731 - a lambda is what is tested
        total = total + bump(total)
        acc = bump(acc)
    return acc + total


@relay
def closure_while(x: Tensor[Float, 3], n: Int) -> Tensor[Float, 3]:
    acc = x
    k = 0
    while k < n:
        def step(v):
            return v * 0.5 + acc

        acc = step(x)
        k += 1
    return acc


# ------------------------------------------------------------------------------- lambdas
@relay
def lambdas(x: Tensor[Float, 4]) -> Tensor[Float, 4]:
    sq = lambda v: v * v  # noqa: E731
    add = lambda a, b: a + b  # noqa: E731
    return add(sq(x), relay.tanh(x))


@relay
def higher_order_local(x: Float) -> Float:
    def twice(f, v):
        return f(f(v))

    k = x + 0.5
    return twice(lambda t: t * 2.0 + k, x) + twice(lambda t: relay.sin(t), x)


@relay
def compose_lambdas(x: Tensor[Float, 3]) -> Tensor[Float, 3]:
    compose = lambda f, g: lambda v: f(g(v))  # noqa: E731
    h = compose(lambda v: v + 1.0, lambda v: v * 3.0)
    return h(h(x))


@relay
def apply_callable(f: Callable[[Float], Float], x: Float) -> Float:
    return f(f(x)) + f(x)


@relay
def use_callable(x: Float) -> Float:
    k = x + 1.0
    return apply_callable(lambda v: v * k - 0.25, x)


@relay
def use_callable_def(x: Float) -> Float:
    def halve(v: Float) -> Float:
        return v * 0.5

    return apply_callable(halve, x) + apply_callable(f=lambda v: relay.tanh(v), x=x)


# ----------------------------------------------------------------------------- recursion
@relay
def fib(n: Int) -> Int:
    if n < 2:
        return n
    return fib(n - 1) + fib(n - 2)


@relay
def fact(n: Int) -> Int:
    if n <= 1:
        return 1
    return n * fact(n - 1)


@relay
def gcd(a: Int, b: Int) -> Int:
    if b == 0:
        return a
    return gcd(b, a - (a // b) * b)


@relay
def power_rec(x: Float64, n: Int) -> Float64:
    if n == 0:
        return Float64(1.0)
    half = power_rec(x, n // 2)
    if n - (n // 2) * 2 == 1:
        return half * half * x
    return half * half


@relay
def sum_acc(k: Int, acc: Int) -> Int:
    if k == 0:
        return acc
    return sum_acc(acc=acc + k, k=k - 1)


@relay
def sum_keywords(n: Int) -> Int:
    return sum_acc(n, acc=0) + sum_acc(acc=n, k=3)


@relay
def search(n: Int) -> Bool:
    return n >= 0 and (n == 7 or search(n - 1))


@relay
def all_positive(x: Tensor[Float, 6], i: Int) -> Bool:
    return i >= 6 or (relay.take(x, i) > 0.0 and all_positive(x, i + 1))


@relay
def nested_rec(x: Float, n: Int) -> Float:
    def go(k: Int, acc: Float) -> Float:
        if k <= 0:
            return acc
        return go(k - 1, acc * x + 1.0)

    return go(n, x)


@relay
def nested_rec_untyped(n: Int) -> Int:
    def tri(k):
        return k if k <= 0 else k + tri(k - 1)

    return tri(n) + tri(n // 2)


# ---------------------------------------------------------------------- mutual recursion
@relay
def is_even(n: Int) -> Bool:
    if n == 0:
        return True
    return is_odd(n - 1)


@relay
def is_odd(n: Int) -> Bool:
    if n == 0:
        return False
    return is_even(n - 1)


@relay
def hof_f(n: Int) -> Int:
    if n == 0:
        return 1
    return n - hof_m(hof_f(n - 1))


@relay
def hof_m(n: Int) -> Int:
    if n == 0:
        return 0
    return n - hof_f(hof_m(n - 1))


@relay
def ping(x: Tensor[Float, 2], n: Int) -> Tensor[Float, 2]:
    if n <= 0:
        return x
    return pong(x * 0.5 + 1.0, n - 1)


@relay
def pong(x: Tensor[Float, 2], n: Int) -> Tensor[Float, 2]:
    if n <= 0:
        return -x
    return ping(relay.tanh(x) * 2.0, n - 1)


# --------------------------------------------------------------------------------- loops
@relay
def while_fib(n: Int) -> tuple[Int, Int, Int]:
    a, b, i = 0, 1, 0
    while i < n:
        a, b = b, a + b
        i += 1
    return a, b, i


@relay
def collatz(n: Int) -> tuple[Int, Int, Int]:
    x = n
    steps = 0
    peak = n
    while x != 1:
        if x - (x // 2) * 2 == 0:
            x = x // 2
        else:
            x = 3 * x + 1
        steps += 1
        peak = peak if peak > x else x
    return steps, peak, x


@relay
def while_four(x: Tensor[Float, 3], n: Int) -> tuple[Tensor[Float, 3], Tensor[Float, 3], Int, Float]:
    s = x * 0.0
    p = x
    count = 0
    norm = relay.sum(x * x)
    while count < n and norm < 1000.0:
        s = s + p
        p = p * 1.5
        count += 1
        norm = relay.sum(p * p)
    return s, p, count, norm


@relay
def for_neg_step(n: Int) -> Int:
    acc = 0
    for i in range(n, 0, -1):
        acc = acc * 3 + i
    return acc


@relay
def for_neg_step2(x: Tensor[Float, 4]) -> Tensor[Float, 4]:
    y = x
    for i in range(10, -3, -4):
        y = y * 0.5 + Float(i)
    return y


@relay
def range_step(x: Tensor[Float, 4]) -> Tensor[Float, 4]:
    y = x
    for i in range(2, 11, 3):
        y = y * 0.5 + Float(i)
    return y


@relay
def nested_loops(n: Int, m: Int) -> Int:
    total = 0
    for i in range(n):
        for j in range(i, m):
            total = total + i * j - 1
    return total


@relay
def for_carried(x: Tensor[Float, 3], n: Int) -> tuple[Tensor[Float, 3], Tensor[Float, 3], Int]:
    s = x * 0.0
    p = x
    c = 0
    for i in range(n):
        s = s + p
        p = p * 0.5
        c += i
    return s, p, c


@relay
def for_module_steps(x: Float) -> Float:
    acc = x
    for i in range(STEPS):
        acc = acc * acc * 0.5 + SCALE
    return acc


@relay
def loop_unpack_call(n: Int) -> tuple[Int, Int]:
    def step(a, b):
        return b, a + b

    a = 0
    b = 1
    for i in range(n):
        a, b = step(a, b)
    return a, b


@relay
def newton_sqrt(x: Float64) -> tuple[Float64, Int]:
    g = x
    k = 0
    while relay.abs(g * g - x) > 1e-12 and k < 60:
        g = (g + x / g) * 0.5
        k += 1
    return g, k


@relay
def while_tuple_state(x: Float, n: Int) -> Float:
    state = (x, x * 2.0)
    i = 0
    while i < n:
        state = (state[1], state[0] + state[1])
        i = i + 1
    return state[0]


@relay
def for_tuple_state(x: Float, n: Int) -> tuple[Float, Float]:
    state = (x, x * 0.5)
    for i in range(n):
        a, b = state
        state = (b, a - b)
    return state


# ---------------------------------------------------------------------------------- tuples
@relay
def minmax(x: Tensor[Float, 5]) -> tuple[Float, Float]:
    return relay.min(x), relay.max(x)


@relay
def nested_tuple(x: Float, y: Float) -> tuple[tuple[Float, Float], Float]:
    inner = (x + y, x - y)
    return (inner, inner[0] * inner[1])


@relay
def unpack_call(x: Tensor[Float, 5]) -> Float:
    lo, hi = minmax(x)
    (a, b), c = nested_tuple(lo, hi)
    t = nested_tuple(a, c)
    return a * b + c + t[0][1] - t[1]


@relay
def tuple_swap(a: Int, b: Int) -> tuple[Int, Int, tuple[Int, Int]]:
    a, b = b, a
    pair = (a * 2, b - 1)
    return a, b, pair


@relay
def join_tuple_value(x: Float) -> Float:
    p = (x, x)
    if x > 0.0:
        if x > 5.0:
            return x
        p = (x * 2.0, x)
    return p[0] + p[1]


@relay
def literal_tuple_return_f64(x: Float64) -> tuple[Float64, Float64]:
    if x > 0.0:
        return x, 0.0
    return 1.0, x


@relay
def literal_ifexp_return_f64(c: Bool) -> Float64:
    return 1.0 if c else 2.5


# --------------------------------------------------------------------- operators, dtypes
@relay
def softmax_dense(x: Tensor[Float, (2, 4)]) -> tuple[Tensor[Float, (2, 3)], Tensor[Float, (2, 3)]]:
    h = relay.dense(x, W34)
    return relay.softmax(h, axis=-1), relay.log_softmax(h, axis=1)


@relay
def reductions(x: Tensor[Float, (2, 3, 4)]) -> tuple[Tensor[Float, (2, 4)], Tensor[Float, (2, 1, 4)], Float]:
    return relay.sum(x, axis=1), relay.mean(x, axis=1, keepdims=True), relay.max(relay.sum(x, axis=(0, 2)))


@relay
def shape_ops(x: Tensor[Float, (2, 3)]) -> Tensor[Float, (3, 4)]:
    t = relay.transpose(x)
    both = relay.concatenate(t, t * 2.0, axis=1)
    flat = relay.reshape(both, newshape=(4, 3))
    return relay.transpose(flat, axes=(1, 0))


@relay
def cast_f64(x: Tensor[Float, 3]) -> Tensor[Float64, 3]:
    y = relay.cast(x, dtype=Float64)
    return y * 2.0 + W64


@relay
def convert_f64(x: Tensor[Float, 3], n: Int) -> Tensor[Float64, 3]:
    y = Float64(x)
    return y * Float64(n) + Float64(0.1)


@relay
def int_tensor(a: Tensor[Int, (2, 3)]) -> Tensor[Int, 2]:
    return relay.sum(a * a - a, axis=1) + relay.argmax(a, axis=1)


@relay
def bool_tensor(a: Tensor[Bool, 4], b: Tensor[Bool, 4]) -> Tensor[Bool, 4]:
    return relay.logical_or(relay.logical_and(a, relay.logical_not(b)), relay.logical_not(a))


@relay
def compare_tensor(x: Tensor[Float, 4], y: Tensor[Float, 4]) -> tuple[Tensor[Bool, 4], Tensor[Int, 4]]:
    mask = relay.logical_and(x > y, x != 0.0)
    return mask, relay.where(mask, relay.cast(x * 10.0, dtype="int32"), NEG_ONE)


@relay
def conv_pool(x: Tensor[Float, (1, 2, 8, 8)], w: Tensor[Float, (3, 2, 3, 3)]) -> Tensor[Float, (1, 3, 2, 2)]:
    y = relay.conv2d(x, w, strides=2, padding=1)
    return relay.max_pool2d(relay.relu(y), pool_size=2)


# ------------------------------------------------------------------------ symbolic batch
@relay
def mlp(x: Tensor[Float, (N, 4)], w: Tensor[Float, (3, 4)], b: Tensor[Float, 3]) -> Tensor[Float, (N, 3)]:
    h = relay.tanh(relay.dense(x, w, b))
    return relay.softmax(h * 2.0 + 1.0, axis=1)


@relay
def batch_stats(x: Tensor[Float, (N, 5)]) -> tuple[Tensor[Float, N], Float, Tensor[Float, 5]]:
    return relay.sum(x, axis=1), relay.mean(x), relay.max(x, axis=0)


@relay
def batch_conv(x: Tensor[Float, (N, 2, 8, 8)], w: Tensor[Float, (3, 2, 3, 3)]) -> Tensor[Float, (N, 12)]:
    y = relay.conv2d(x, w, strides=2, padding=1)
    p = relay.max_pool2d(y, pool_size=2)
    return relay.reshape(p, newshape=(0, -1))


@relay
def batch_where_take(x: Tensor[Float, (N, 6)]) -> Tensor[Float, (N, 3)]:
    y = relay.where(x > 0.0, x, x * 0.1)
    return relay.take(y, IDX, axis=1)


@relay
def batch_concat(x: Tensor[Float, (N, 2)], y: Tensor[Float, (N, 3)]) -> Tensor[Float, (5, N)]:
    z = relay.concatenate(x, y, axis=1)
    return relay.transpose(z, axes=(1, 0))


@relay
def batch_f64(x: Tensor[Float, (N, 3)]) -> Tensor[Float64, N]:
    return relay.sum(relay.cast(x, dtype=Float64) * W64, axis=1)


@relay
def batch_int(a: Tensor[Int, (N, 3)]) -> tuple[Tensor[Int, N], Tensor[Int, N]]:
    return relay.max(a, axis=1) - relay.min(a, axis=1), relay.argmax(a * -1, axis=1)


@relay
def batch_loop(x: Tensor[Float, (N, 3)], n: Int) -> Tensor[Float, (N, 3)]:
    y = x
    for i in range(n):
        y = relay.tanh(y) + x * 0.5
    return y


@relay
def batch_matmul(x: Tensor[Float, (N, 3)], y: Tensor[Float, (3, N)]) -> Tensor[Float, (N, N)]:
    p = x @ y
    return p + relay.transpose(p, axes=(1, 0)) * 0.5
