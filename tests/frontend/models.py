"""Models for tests/frontend/test_models.py (in a file of their own: @relay reads source)."""

from __future__ import annotations

from relayish import Dim, Float, Float64, Tensor, relay, relay_model

N = Dim("N")


@relay_model
def small(x: Tensor[Float64, (N, 1, 8, 8)]) -> Tensor[Float64, (N, 3)]:
    conv = relay.conv2d(x, num_filter=2, ksize=3)
    pooled = relay.max_pool(relay.tanh(conv), ksize=[1, 2, 2, 1], strides=[1, 2, 2, 1])
    hidden = relay.tanh(relay.linear(relay.flatten_layer(pooled), num_hidden=5))
    return relay.linear(hidden, num_hidden=3, no_bias=True)


@relay
def small_loss(x: Tensor[Float64, (N, 1, 8, 8)], y: Tensor[Float64, (N, 3)]) -> Float64:
    return relay.softmax_cross_entropy(small(x), y)


@relay
def small_loss_twice(x: Tensor[Float64, (N, 1, 8, 8)], y: Tensor[Float64, (N, 3)]) -> Float64:
    """Reaches the model through another function: the parameters are threaded twice."""
    return small_loss(x, y) + small_loss(x * 0.5, y)


@relay_model
def strided(x: Tensor[Float, (N, 3, 9, 9)]) -> Tensor[Float, (N, 4, 4, 4)]:
    return relay.conv2d(x, num_filter=4, ksize=(3, 3), strides=2, padding=0)


@relay_model
def layer_in_branch(x: Tensor[Float, (N, 4)]) -> Tensor[Float, (N, 2)]:
    if relay.sum(x) > 0:
        return relay.linear(x, num_hidden=2)
    return relay.linear(x * 2, num_hidden=2)


C = Dim("C")


@relay_model
def symbolic_features(x: Tensor[Float, (N, C)]) -> Tensor[Float, (N, 2)]:
    return relay.linear(x, num_hidden=2)


@relay
def plain_layer(x: Tensor[Float, (N, 4)]) -> Tensor[Float, (N, 2)]:
    return relay.linear(x, num_hidden=2)
