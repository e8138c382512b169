"""Functions for tests/frontend/test_translation.py (a file of their own: @relay reads source)."""

from __future__ import annotations

from relayish import Dim, Float, Float64, Int, Tensor, relay


@relay
def power(x: Float64, n: Int) -> Float64:
    acc = x * 0 + 1
    for i in range(n):
        acc = acc * x
    return acc


@relay
def lambda_literal(x: Tensor[Float64, 3]) -> Tensor[Float64, 3]:
    scale = lambda v: v * 3.0 + 1  # noqa: E731 - the literals meet a parameter of unknown dtype
    return scale(x)


@relay
def literal_chain(x: Tensor[Float, (Dim("N"),)]):
    g = lambda y: (((((((y * 1.5 + 1) * 1.5 + 2) * 1.5 + 3) * 1.5 + 4) * 1.5 + 5) * 1.5 + 6) * 1.5 + 7)  # noqa: E731
    return g(relay.tanh(x))


@relay
def split_part(x: Tensor[Float, (Dim("N"), 6)]):
    return relay.split(x, sections=2, axis=1)[1] * 2.0 + 1


@relay
def keywords(a: Float, b: Float, c: Int) -> Float:
    return a - b * relay.cast(c, dtype=Float)


@relay
def casts(x: Tensor[Float, 3]) -> Tensor[Float64, 3]:
    return relay.cast(x, dtype=Float64) * 2
