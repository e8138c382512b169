"""dyn_reshape compiled for CUDA against the evaluator: newshape's values read off the device, the
data viewed on it (or moved across where a side is a rank-0 scalar, which stays on the host), the
same errors at the call, and the gradient through a shape computed when the program runs."""

from __future__ import annotations

import numpy as np
import pytest

import relayish
from tests.ops.test_dyn_reshape import BAD, COMPUTED, RELAY_EXAMPLES, leaves, reshaper


def cuda_run(module: relayish.Module, name: str, *args):
    return relayish.compile(module, name, target="cuda")(*args)


@pytest.mark.parametrize("data_shape, newshape, expected", RELAY_EXAMPLES)
def test_values_as_the_evaluator_gives_them(data_shape, newshape, expected) -> None:
    module = reshaper(data_shape, len(newshape), "IntType(32)")
    x = np.arange(np.prod(data_shape), dtype=np.float32).reshape(data_shape)
    s = np.array(newshape, np.int32)
    result = cuda_run(module, "main", x, s)
    want = relayish.evaluate(module, "main", x, s)
    assert np.shape(result) == np.shape(want) == expected and np.asarray(result).dtype == want.dtype
    np.testing.assert_array_equal(result, want)


@pytest.mark.parametrize("data_shape, newshape, message", BAD)
def test_bad_values_are_the_evaluators_error(data_shape, newshape, message) -> None:
    module = reshaper(data_shape, len(newshape))
    x, s = np.zeros(data_shape, np.float32), np.array(newshape, np.int64)
    with pytest.raises(relayish.RelayRuntimeError) as expected:
        relayish.evaluate(module, "main", x, s)
    with pytest.raises(relayish.RelayRuntimeError) as err:
        cuda_run(module, "main", x, s)
    assert message in str(err.value)
    assert str(err.value).splitlines()[0] == str(expected.value).splitlines()[0]


def test_a_shape_computed_at_run_time_and_its_gradient() -> None:
    module = relayish.parse(COMPUTED)
    rng = np.random.default_rng(0)
    x, w = rng.uniform(-1, 1, (2, 6)), rng.uniform(-1, 1, (6, 2))
    for name in ("f", "vf", "g", "vg"):
        got, want = leaves(cuda_run(module, name, x, w)), leaves(relayish.evaluate(module, name, x, w))
        for actual, expected in zip(got, want, strict=True):
            np.testing.assert_allclose(actual, expected, rtol=1e-12)
