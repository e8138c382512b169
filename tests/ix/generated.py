"""Random index-expression operators, drawn by hypothesis: every argument of one shape (n, m),
the output too, bodies of reads (at the output's indices, transposed, shifted under a guard, or
reduced along an axis), arithmetic, scalar functions, where and the four reductions."""

from __future__ import annotations

from typing import Any, Callable

from hypothesis import strategies as st

from relayish import ix

SMOOTH_FUNCTIONS = ("exp_tanh", "tanh", "sin", "cos", "sigmoid", "log1p_sq")
ROUGH_FUNCTIONS = ("abs",)


def _function(name: str, x: Any) -> Any:
    if name == "exp_tanh":
        return ix.exp(ix.tanh(x))
    if name == "log1p_sq":
        return ix.log(1.0 + x * x)
    return getattr(ix, name)(x)


@st.composite
def bodies(draw: Callable, smooth: bool, depth: int = 3) -> Callable:
    """A function ``(inputs, i, j) -> node`` building one body (the inputs have the output's shape)."""
    kind = draw(st.sampled_from(["read", "read", "shift", "reduce", "binary", "function", "where"]
                                if depth > 0 else ["read", "shift", "reduce"]))
    k = draw(st.integers(0, 1))
    if kind == "read":
        return lambda xs, i, j: xs[k][i, j]
    if kind == "shift":
        d = draw(st.sampled_from([-2, -1, 1, 2]))
        fill = draw(st.sampled_from([0.0, 1.5]))
        return lambda xs, i, j: ix.where((i + d >= 0) & (i + d < xs[k].shape[0]), xs[k][i + d, j], fill)
    if kind == "reduce":
        fold = draw(st.sampled_from(["sum", "prod"] if smooth else ["sum", "prod", "max", "min"]))
        rows = draw(st.booleans())

        def reduce(xs, i, j):
            x = xs[k]
            r = ix.axis(x.shape[0] if rows else x.shape[1])
            return getattr(ix, fold)(ix.tanh(x[r, j] if rows else x[i, r]), r)
        return reduce
    if kind == "binary":
        op = draw(st.sampled_from(["+", "-", "*", "/"] if smooth else ["+", "-", "*", "/", "maximum", "minimum"]))
        a, b = draw(bodies(smooth, depth - 1)), draw(bodies(smooth, depth - 1))

        def binary(xs, i, j):
            x, y = a(xs, i, j), b(xs, i, j)
            if op == "/":
                return x / (1.0 + y * y)
            if op in ("maximum", "minimum"):
                return getattr(ix, op)(x, y)
            return {"+": x + y, "-": x - y, "*": x * y}[op]
        return binary
    if kind == "function":
        name = draw(st.sampled_from(SMOOTH_FUNCTIONS if smooth else SMOOTH_FUNCTIONS + ROUGH_FUNCTIONS))
        a = draw(bodies(smooth, depth - 1))
        return lambda xs, i, j: _function(name, a(xs, i, j))
    a, b = draw(bodies(smooth, depth - 1)), draw(bodies(smooth, depth - 1))
    if smooth:  # a condition on the indices alone: no kink in the values
        return lambda xs, i, j: ix.where(i <= j, a(xs, i, j), b(xs, i, j))
    return lambda xs, i, j: ix.where(xs[0][i, j] > xs[1][i, j], a(xs, i, j), b(xs, i, j))


def definition(body: Callable) -> Callable:
    """The operator function of ``body`` over two inputs ``x0``, ``x1`` of the output's shape."""
    def generated(x0, x1):
        return ix.tensor((x0.shape[0], x0.shape[1]), lambda i, j: body((x0, x1), i, j))

    return generated
