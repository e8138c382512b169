"""Random index-expression operators (relayish/ix), and programs calling them, for tests and for
``relayish difftest --index-expressions``.

An operator takes two inputs of one shape (n, m) and has that shape; its body is drawn from reads
(at the output's indices, shifted under a guard, or reduced along an axis), arithmetic, scalar
functions, ``where`` and the four reductions, decoded from one byte string (``choices``: zero
bytes give the simplest body, so failures shrink). ``smooth`` bodies have no kinks (no max, min,
abs, or ``where`` on values), for finite-difference checks of their gradients.
"""

from __future__ import annotations

import itertools
from typing import Any, Callable, Iterator

import numpy as np

from .. import ix
from ..ix.text import definition_text
from ..parser import parse
from .choices import Chooser, Stream, decoded
from .strategies import Program

SMOOTH_FUNCTIONS = ("exp_tanh", "tanh", "sin", "cos", "sigmoid", "log1p_sq")
ROUGH_FUNCTIONS = ("abs",)
Body = Callable[[tuple, Any, Any], Any]  # (inputs, i, j) -> an index expression
STREAM_BYTES = 64


def _function(name: str, x: Any) -> Any:
    if name == "exp_tanh":
        return ix.exp(ix.tanh(x))
    if name == "log1p_sq":
        return ix.log(1.0 + x * x)
    return getattr(ix, name)(x)


class BodyGenerator(Chooser):
    """Bodies of operators decoded from a ``Stream``."""

    def __init__(self, src: Stream, smooth: bool):
        super().__init__(src)
        self.smooth = smooth

    def body(self, depth: int = 3) -> Body:
        kinds = ["read", "read", "shift", "reduce", "binary", "function", "where"] if depth > 0 else ["read", "shift", "reduce"]
        kind = self.one_of(kinds)
        k = self.integer(0, 1)
        if kind == "read":
            return lambda xs, i, j: xs[k][i, j]
        if kind == "shift":
            d, fill = self.one_of([-2, -1, 1, 2]), self.one_of([0.0, 1.5])
            return lambda xs, i, j: ix.where((i + d >= 0) & (i + d < xs[k].shape[0]), xs[k][i + d, j], fill)
        if kind == "reduce":
            fold = self.one_of(["sum", "prod"] if self.smooth else ["sum", "prod", "max", "min"])
            rows = self.flag()

            def reduce(xs: tuple, i: Any, j: Any) -> Any:
                x = xs[k]
                r = ix.axis(x.shape[0] if rows else x.shape[1])
                return getattr(ix, fold)(ix.tanh(x[r, j] if rows else x[i, r]), r)
            return reduce
        if kind == "binary":
            op = self.one_of(["+", "-", "*", "/"] if self.smooth else ["+", "-", "*", "/", "maximum", "minimum"])
            a, b = self.body(depth - 1), self.body(depth - 1)

            def binary(xs: tuple, i: Any, j: Any) -> Any:
                x, y = a(xs, i, j), b(xs, i, j)
                if op == "/":
                    return x / (1.0 + y * y)
                if op in ("maximum", "minimum"):
                    return getattr(ix, op)(x, y)
                return {"+": x + y, "-": x - y, "*": x * y}[op]
            return binary
        if kind == "function":
            name = self.one_of(SMOOTH_FUNCTIONS if self.smooth else SMOOTH_FUNCTIONS + ROUGH_FUNCTIONS)
            a = self.body(depth - 1)
            return lambda xs, i, j: _function(name, a(xs, i, j))
        a, b = self.body(depth - 1), self.body(depth - 1)
        if self.smooth:  # a condition on the indices alone: no kink in the values
            return lambda xs, i, j: ix.where(i <= j, a(xs, i, j), b(xs, i, j))
        return lambda xs, i, j: ix.where(xs[0][i, j] > xs[1][i, j], a(xs, i, j), b(xs, i, j))


def bodies(smooth: bool) -> Any:
    """The hypothesis strategy of bodies (one byte string each)."""
    return decoded(lambda src: BodyGenerator(src, smooth).body(), STREAM_BYTES)


def definition(body: Body) -> Callable:
    """The operator function of ``body`` over two inputs ``x0``, ``x1`` of the output's shape."""
    def generated(x0, x1):  # noqa: ANN001, ANN202 - placeholders, traced by ix.operator
        return ix.tensor((x0.shape[0], x0.shape[1]), lambda i, j: body((x0, x1), i, j))

    return generated


_count = itertools.count()


def index_programs(seed: int) -> Iterator[Program]:
    """An endless stream of programs, each defining a random operator in its text
    (``operator @ixgen_...``; parsing registers it) and returning the operator's value on two
    float32 (n, m) arguments and the gradient of ``sum(op(a, b) * w)`` in both; the same seed
    gives the same programs in any process."""
    rng = np.random.default_rng(seed)
    while True:
        body = BodyGenerator(Stream(rng.bytes(STREAM_BYTES)), smooth=False).body()
        n, m = (int(v) for v in rng.integers(1, 6, 2))
        name = f"ixgen_{seed}_{next(_count)}"
        defn = ix.trace(definition(body), name)
        ty = f"Tensor(FloatType(32), Shape({n}, {m}))"
        module = parse(f"operator @{name}{definition_text(defn)}\n"
                       f"def @main(%a: {ty}, %b: {ty}, %w: {ty}) {{\n"
                       f"  (@{name}(%a, %b), Grad(fn (%p: {ty}, %q: {ty}) {{ @sum(@{name}(%p, %q) * %w) }})(%a, %b))\n}}\n",
                       filename=f"<{name}>")
        args = tuple(rng.standard_normal((n, m)).astype(np.float32) for _ in range(3))
        yield Program(module, "main", args)
