"""The benchmark workloads W1-W6 as a user writes them: decorated Python (``@relay``,
``relay.grad``), with a ``Dim`` for every batch or length dimension, run through ``@relay``'s
default backend (docs/workloads.md defines the workloads; ``bench/programs.py`` has their
static-shape text twins).

Each ``ENTRIES`` row names the decorated function to call and its arguments, in the order
of ``bench/programs.py``'s ``ENTRIES`` (data first, then parameters, as drawn); it returns
what the text twin returns. Value+grad rows differentiate with respect to the parameters
only, as the workloads define: ``relay.grad`` of a lambda over the data (the data are
constants to it), written inside the decorated function.

* W1: the vector length is ``M``.
* W2, W3: the batch is ``B``; the layer widths are the workloads' constants. W2.pex: ``relay.vmap``
  over the examples of ``relay.grad`` of the loss of one example.
* W4: the batch is ``B``; the 50 steps are the Python ``for`` loop's bound (the time axis of
  ``xs`` is 50 to match), so the loop is unrolled as JAX's ``jit`` unrolls a Python loop.
* W5: the vector length is ``M``; gradgrad differentiates a decorated function that calls
  ``relay.grad``; hvp is ``relay.jvp`` of such a function (forward over reverse).
* W6: ``fib`` recurses on an ``Int`` with two ``Float`` parameters; the loop is a Python
  ``for`` over ``range(steps)``.

W8 (the LeNet demo's training step) is not here: bench/workloads.py runs the demo's own code,
``relayish/examples/lenet.py``'s ``lenet`` and ``loss``.
"""

from __future__ import annotations

from relayish import Dim, Float, Int, Tensor, relay

M = Dim("M")
B = Dim("B")

Vector = Tensor[Float, (M,)]


@relay
def w1_loss(x: Vector, w: Vector, b: Vector) -> Float:
    t = relay.tanh(x * w + b)
    return relay.sum(t * t)


@relay
def w1_vg(x: Vector, w: Vector, b: Vector):
    return relay.grad(lambda w, b: w1_loss(x, w, b))(w, b)


@relay
def w2_loss(X: Tensor[Float, (B, 784)], Y: Tensor[Float, (B, 10)], W1: Tensor[Float, (784, 256)],
            b1: Tensor[Float, (256,)], W2: Tensor[Float, (256, 10)], b2: Tensor[Float, (10,)]) -> Float:
    H = relay.tanh(X @ W1 + b1)
    return relay.softmax_cross_entropy(H @ W2 + b2, Y)


@relay
def w2_vg(X: Tensor[Float, (B, 784)], Y: Tensor[Float, (B, 10)], W1: Tensor[Float, (784, 256)],
          b1: Tensor[Float, (256,)], W2: Tensor[Float, (256, 10)], b2: Tensor[Float, (10,)]):
    return relay.grad(lambda W1, b1, W2, b2: w2_loss(X, Y, W1, b1, W2, b2))(W1, b1, W2, b2)


@relay
def w2_example(x: Tensor[Float, (784,)], y: Tensor[Float, (10,)], W1: Tensor[Float, (784, 256)],
               b1: Tensor[Float, (256,)], W2: Tensor[Float, (256, 10)], b2: Tensor[Float, (10,)]) -> Float:
    H = relay.tanh(relay.expand_dims(x, axis=0) @ W1 + b1)
    return relay.softmax_cross_entropy(H @ W2 + b2, relay.expand_dims(y, axis=0))


@relay
def w2_example_vg(x: Tensor[Float, (784,)], y: Tensor[Float, (10,)], W1: Tensor[Float, (784, 256)],
                  b1: Tensor[Float, (256,)], W2: Tensor[Float, (256, 10)], b2: Tensor[Float, (10,)]):
    return relay.grad(lambda W1, b1, W2, b2: w2_example(x, y, W1, b1, W2, b2))(W1, b1, W2, b2)


@relay
def w2_pex(X: Tensor[Float, (B, 784)], Y: Tensor[Float, (B, 10)], W1: Tensor[Float, (784, 256)],
           b1: Tensor[Float, (256,)], W2: Tensor[Float, (256, 10)], b2: Tensor[Float, (10,)]):
    return relay.vmap(w2_example_vg, in_axes=(0, 0, None, None, None, None))(X, Y, W1, b1, W2, b2)


@relay
def w3_loss(X: Tensor[Float, (B, 1, 28, 28)], Y: Tensor[Float, (B, 10)],
            K1: Tensor[Float, (20, 1, 5, 5)], c1: Tensor[Float, (20,)],
            K2: Tensor[Float, (50, 20, 5, 5)], c2: Tensor[Float, (50,)],
            W3: Tensor[Float, (800, 500)], b3: Tensor[Float, (500,)],
            W4: Tensor[Float, (500, 10)], b4: Tensor[Float, (10,)]) -> Float:
    A1 = relay.max_pool2d(relay.tanh(relay.conv2d(X, K1) + relay.reshape(c1, newshape=(20, 1, 1))), pool_size=2)
    A2 = relay.max_pool2d(relay.tanh(relay.conv2d(A1, K2) + relay.reshape(c2, newshape=(50, 1, 1))), pool_size=2)
    H = relay.tanh(relay.flatten(A2) @ W3 + b3)
    return relay.softmax_cross_entropy(H @ W4 + b4, Y)


@relay
def w3_vg(X: Tensor[Float, (B, 1, 28, 28)], Y: Tensor[Float, (B, 10)],
          K1: Tensor[Float, (20, 1, 5, 5)], c1: Tensor[Float, (20,)],
          K2: Tensor[Float, (50, 20, 5, 5)], c2: Tensor[Float, (50,)],
          W3: Tensor[Float, (800, 500)], b3: Tensor[Float, (500,)],
          W4: Tensor[Float, (500, 10)], b4: Tensor[Float, (10,)]):
    return relay.grad(lambda K1, c1, K2, c2, W3, b3, W4, b4: w3_loss(X, Y, K1, c1, K2, c2, W3, b3, W4, b4))(
        K1, c1, K2, c2, W3, b3, W4, b4)


@relay
def w4_loss(xs: Tensor[Float, (50, B, 64)], h0: Tensor[Float, (B, 128)], Wx: Tensor[Float, (64, 128)],
            Wh: Tensor[Float, (128, 128)], b: Tensor[Float, (128,)]) -> Float:
    h = h0
    for t in range(50):
        h = relay.tanh(relay.take(xs, t, axis=0) @ Wx + h @ Wh + b)
    return relay.sum(h * h)


@relay
def w4_vg(xs: Tensor[Float, (50, B, 64)], h0: Tensor[Float, (B, 128)], Wx: Tensor[Float, (64, 128)],
          Wh: Tensor[Float, (128, 128)], b: Tensor[Float, (128,)]):
    return relay.grad(lambda Wx, Wh, b: w4_loss(xs, h0, Wx, Wh, b))(Wx, Wh, b)


@relay
def w5_f(x: Vector) -> Float:
    return relay.sum(x * x * x)


@relay
def w5_sum_grad_f(x: Vector) -> Float:
    return relay.sum(relay.grad(w5_f)(x)[1][0])


@relay
def w5_gradgrad(x: Vector):
    return relay.grad(w5_sum_grad_f)(x)[1][0]


@relay
def w5_f2(x: Vector) -> Float:
    return relay.sum(relay.sin(x) * x)


@relay
def w5_grad_f2(x: Vector) -> Vector:
    return relay.grad(w5_f2)(x)[1][0]


@relay
def w5_hvp(x: Vector, v: Vector):
    return relay.jvp(w5_grad_f2)(x, v)[1]


@relay
def w6_fib(n: Int, a: Float, b: Float) -> Float:
    if n == 0:
        return a
    if n == 1:
        return b
    return w6_fib(n - 1, a, b) + w6_fib(n - 2, a, b)


@relay
def w6_loop(x0: Float, steps: Int) -> Float:
    x = x0
    for _ in range(steps):
        x = x * 0.999 + 0.001
    return x


# benchmark row -> the decorated function (its arguments: bench/programs.py's ENTRIES)
ENTRIES = {
    "W1.fwd": w1_loss,
    "W1.vg": w1_vg,
    "W2.vg": w2_vg,
    "W2.pex": w2_pex,
    "W3.vg": w3_vg,
    "W4.vg": w4_vg,
    "W5.gradgrad": w5_gradgrad,
    "W5.hvp": w5_hvp,
    "W6.fib": w6_fib,
    "W6.loop": w6_loop,
}
