"""Functions for tests/frontend/test_translation.py (a file of their own: @relay reads source)."""

from __future__ import annotations

from relayish import Float, Float64, Int, Tensor, relay


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
def keywords(a: Float, b: Float, c: Int) -> Float:
    return a - b * relay.cast(c, dtype=Float)


@relay
def casts(x: Tensor[Float, 3]) -> Tensor[Float64, 3]:
    return relay.cast(x, dtype=Float64) * 2
