"""The relayish programs of the benchmark workloads W1-W7 (docs/workloads.md), in the
text format, parsed once by ``module()``. W8, the LeNet demo's training step, has no text
program: it runs as the demo's decorated Python (bench/workloads.py's relayish-relay column).

Each benchmark row runs one global; its arguments are the workload's inputs in the order
``ENTRIES`` lists them (data first, then parameters, as drawn), and its result is the
value, or ``(value, (gradient per parameter...))`` for a value+grad row. Gradients are
taken with respect to the parameters only: each ``*_vg`` global applies ``Grad`` to a
closure over the data (free variables of a differentiated function are constants), so no
gradient of the data is computed.

* W1: ``@w1_loss`` = sum(tanh(x * w + b)^2); ``@w1_vg`` its value and gradients in w, b.
* W2: ``@w2_loss``, the MLP's mean softmax cross-entropy (``X @ W1`` is ``@matmul``, W1 of
  shape (784, 256) as drawn); ``@w2_vg``. ``@w2_pex``: per-example values and gradients, ``Vmap``
  over the examples of ``Grad`` of ``@w2_example`` (the loss of one example).
* W3: ``@w3_loss``, the LeNet-5-style CNN (``conv2d`` valid stride 1, biases of shape (20,)
  and (50,) reshaped to (C, 1, 1) inside so their gradients have the drawn shapes,
  ``max_pool2d`` 2x2, ``flatten`` row-major); ``@w3_vg``.
* W4: ``@w4_loss``, the tanh RNN as a local tail-recursive loop over the step index
  (``@take(%xs, %t, axis=0)`` reads xs[t]); ``@w4_vg``.
* W5: ``@w5_gradgrad`` = Grad of a global that calls Grad (f(x) = sum(x^3));
  ``@w5_hvp`` = forward-over-reverse: Jvp of grad(f2) along v (f2(x) = sum(sin(x) * x)).
* W6: ``@w6_fib(n, a, b)`` native recursion on an int32 ``n``; ``@w6_loop(x0, steps)`` a
  tail-recursive loop (``x * 0.999 + 0.001``, ``steps`` = 10000).
* W7 runs ``W2_TEXT`` alone (``@w2_loss`` and ``@w2_vg``) in a fresh process.
"""

from __future__ import annotations

from functools import cache

F32 = "FloatType(32)"


def T(*dims: int) -> str:
    """The text of a float32 tensor type."""
    return f"Tensor({F32}, Shape({', '.join(str(d) for d in dims)}))"


SCALAR = T()
I32 = "Tensor(IntType(32), Shape())"

W1_TEXT = f"""
def @w1_loss(%x: {T(1_000_000)}, %w: {T(1_000_000)}, %b: {T(1_000_000)}) -> {SCALAR} {{
  let %t = @tanh(%x * %w + %b) in
  @sum(%t * %t)
}}

def @w1_vg(%x: {T(1_000_000)}, %w: {T(1_000_000)}, %b: {T(1_000_000)}) {{
  Grad(fn (%w_: {T(1_000_000)}, %b_: {T(1_000_000)}) -> {SCALAR} {{ @w1_loss(%x, %w_, %b_) }})(%w, %b)
}}
"""

W2_TEXT = f"""
def @w2_loss(%X: {T(64, 784)}, %Y: {T(64, 10)},
             %W1: {T(784, 256)}, %b1: {T(256)}, %W2: {T(256, 10)}, %b2: {T(10)}) -> {SCALAR} {{
  let %H = @tanh(@matmul(%X, %W1) + %b1) in
  let %Z = @matmul(%H, %W2) + %b2 in
  @softmax_cross_entropy(%Z, %Y, axis=1)
}}

def @w2_vg(%X: {T(64, 784)}, %Y: {T(64, 10)},
           %W1: {T(784, 256)}, %b1: {T(256)}, %W2: {T(256, 10)}, %b2: {T(10)}) {{
  Grad(fn (%w1: {T(784, 256)}, %c1: {T(256)}, %w2: {T(256, 10)}, %c2: {T(10)}) -> {SCALAR} {{
    @w2_loss(%X, %Y, %w1, %c1, %w2, %c2)
  }})(%W1, %b1, %W2, %b2)
}}
"""

W2_PEX_TEXT = f"""
def @w2_example(%x: {T(784)}, %y: {T(10)},
                %W1: {T(784, 256)}, %b1: {T(256)}, %W2: {T(256, 10)}, %b2: {T(10)}) -> {SCALAR} {{
  let %H = @tanh(@matmul(@expand_dims(%x, axis=0), %W1) + %b1) in
  let %Z = @matmul(%H, %W2) + %b2 in
  @softmax_cross_entropy(%Z, @expand_dims(%y, axis=0), axis=1)
}}

def @w2_pex(%X: {T(64, 784)}, %Y: {T(64, 10)},
            %W1: {T(784, 256)}, %b1: {T(256)}, %W2: {T(256, 10)}, %b2: {T(10)}) {{
  Vmap(fn (%x: {T(784)}, %y: {T(10)}, %V1: {T(784, 256)}, %d1: {T(256)}, %V2: {T(256, 10)}, %d2: {T(10)}) {{
    Grad(fn (%w1: {T(784, 256)}, %c1: {T(256)}, %w2: {T(256, 10)}, %c2: {T(10)}) -> {SCALAR} {{
      @w2_example(%x, %y, %w1, %c1, %w2, %c2)
    }})(%V1, %d1, %V2, %d2)
  }}, in_axes=(0, 0, none, none, none, none))(%X, %Y, %W1, %b1, %W2, %b2)
}}
"""

W3_PARAMS = (("K1", (20, 1, 5, 5)), ("c1", (20,)), ("K2", (50, 20, 5, 5)), ("c2", (50,)),
             ("W3", (800, 500)), ("b3", (500,)), ("W4", (500, 10)), ("b4", (10,)))


def _params(suffix: str = "") -> str:
    return ", ".join(f"%{name}{suffix}: {T(*shape)}" for name, shape in W3_PARAMS)


W3_TEXT = f"""
def @w3_loss(%X: {T(16, 1, 28, 28)}, %Y: {T(16, 10)}, {_params()}) -> {SCALAR} {{
  let %A1 = @max_pool2d(@tanh(@conv2d(%X, %K1) + @reshape(%c1, newshape=(20, 1, 1))), pool_size=2) in
  let %A2 = @max_pool2d(@tanh(@conv2d(%A1, %K2) + @reshape(%c2, newshape=(50, 1, 1))), pool_size=2) in
  let %F = @flatten(%A2) in
  let %H = @tanh(@matmul(%F, %W3) + %b3) in
  let %Z = @matmul(%H, %W4) + %b4 in
  @softmax_cross_entropy(%Z, %Y, axis=1)
}}

def @w3_vg(%X: {T(16, 1, 28, 28)}, %Y: {T(16, 10)}, {_params()}) {{
  Grad(fn ({_params("_")}) -> {SCALAR} {{
    @w3_loss(%X, %Y, {", ".join(f"%{name}_" for name, _ in W3_PARAMS)})
  }})({", ".join(f"%{name}" for name, _ in W3_PARAMS)})
}}
"""

W4_TEXT = f"""
def @w4_loss(%xs: {T(50, 32, 64)}, %h0: {T(32, 128)},
             %Wx: {T(64, 128)}, %Wh: {T(128, 128)}, %b: {T(128)}) -> {SCALAR} {{
  let %steps = fn (%t: {I32}, %h: {T(32, 128)}) -> {T(32, 128)} {{
    if %t == 50 then %h
    else %steps(%t + 1, @tanh(@matmul(@take(%xs, %t, axis=0), %Wx) + @matmul(%h, %Wh) + %b))
  }} in
  let %h50 = %steps(0, %h0) in
  @sum(%h50 * %h50)
}}

def @w4_vg(%xs: {T(50, 32, 64)}, %h0: {T(32, 128)},
           %Wx: {T(64, 128)}, %Wh: {T(128, 128)}, %b: {T(128)}) {{
  Grad(fn (%wx: {T(64, 128)}, %wh: {T(128, 128)}, %c: {T(128)}) -> {SCALAR} {{
    @w4_loss(%xs, %h0, %wx, %wh, %c)
  }})(%Wx, %Wh, %b)
}}
"""

N5 = 100_000
W5_TEXT = f"""
def @w5_f(%x: {T(N5)}) -> {SCALAR} {{
  @sum(%x * %x * %x)
}}

def @w5_sum_grad_f(%x: {T(N5)}) -> {SCALAR} {{
  @sum(Grad(@w5_f)(%x)[1][0])
}}

def @w5_gradgrad(%x: {T(N5)}) -> {T(N5)} {{
  Grad(@w5_sum_grad_f)(%x)[1][0]
}}

def @w5_f2(%x: {T(N5)}) -> {SCALAR} {{
  @sum(@sin(%x) * %x)
}}

def @w5_grad_f2(%x: {T(N5)}) -> {T(N5)} {{
  Grad(@w5_f2)(%x)[1][0]
}}

def @w5_hvp(%x: {T(N5)}, %v: {T(N5)}) -> {T(N5)} {{
  Jvp(@w5_grad_f2)(%x, %v)[1]
}}
"""

W6_TEXT = f"""
def @w6_fib(%n: {I32}, %a: {SCALAR}, %b: {SCALAR}) -> {SCALAR} {{
  if %n == 0 then %a
  else if %n == 1 then %b
  else @w6_fib(%n - 1, %a, %b) + @w6_fib(%n - 2, %a, %b)
}}

def @w6_loop(%x0: {SCALAR}, %steps: {I32}) -> {SCALAR} {{
  let %loop = fn (%k: {I32}, %x: {SCALAR}) -> {SCALAR} {{
    if %k == %steps then %x else %loop(%k + 1, %x * 0.999 + 0.001)
  }} in
  %loop(0, %x0)
}}
"""

TEXT = W1_TEXT + W2_TEXT + W2_PEX_TEXT + W3_TEXT + W4_TEXT + W5_TEXT + W6_TEXT

# benchmark row -> (global, what its arguments are, in order)
ENTRIES = {
    "W1.fwd": ("w1_loss", ("x", "w", "b")),
    "W1.vg": ("w1_vg", ("x", "w", "b")),
    "W2.vg": ("w2_vg", ("X", "Y", "W1", "b1", "W2", "b2")),
    "W2.pex": ("w2_pex", ("X", "Y", "W1", "b1", "W2", "b2")),
    "W3.vg": ("w3_vg", ("X", "Y") + tuple(name for name, _ in W3_PARAMS)),
    "W4.vg": ("w4_vg", ("xs", "h0", "Wx", "Wh", "b")),
    "W5.gradgrad": ("w5_gradgrad", ("x",)),
    "W5.hvp": ("w5_hvp", ("x", "v")),
    "W6.fib": ("w6_fib", ("n", "a", "b")),
    "W6.loop": ("w6_loop", ("x0", "steps")),
}


@cache
def module():
    """All the workloads' globals in one parsed module."""
    import relayish

    return relayish.parse(TEXT, filename="bench/programs.py")
