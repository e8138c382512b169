"""Programs with ``?`` dimensions compiled for CUDA against the evaluator: the run-time checks
(an operator's relation on actual shapes, an ascription's sizes) see device arrays, and fail as
they do on the CPU; the growing loop of tests/typecheck/test_dynamic_dims.py and its gradient."""

from __future__ import annotations

import numpy as np
import pytest

import relayish
from tests.typecheck.test_dynamic_dims import CHECKS, GROW


def cuda_run(module: relayish.Module, name: str, *args):
    return relayish.compile(module, name, target="cuda")(*args)


@pytest.mark.parametrize("name, shapes", [("f", [(2, 3)]), ("f", [(3, 3)]), ("plus", [(1, 3), (3, 3)]),
                                          ("plus", [(2, 3), (3, 3)]), ("loop", [(), (3, 3)])])
def test_checks_on_device_arrays(name: str, shapes: list[tuple[int, ...]]) -> None:
    module = relayish.parse(CHECKS, "c.rly")
    args = [np.int32(3) if not shape else np.ones(shape) for shape in shapes]
    try:
        expected = relayish.evaluate(module, name, *args)
    except relayish.RelayRuntimeError as err:
        with pytest.raises(relayish.RelayRuntimeError) as cuda_err:
            cuda_run(module, name, *args)
        assert str(cuda_err.value).splitlines()[0] == str(err).splitlines()[0]
        return
    np.testing.assert_allclose(cuda_run(module, name, *args), expected, rtol=1e-12)


def test_the_growing_loop_and_its_gradient() -> None:
    module = relayish.parse(GROW)
    x, w = np.full((1, 3), 0.3), np.linspace(-1, 1, 12).reshape(4, 3)
    value, grads = cuda_run(module, "vg", x, w, np.int32(3))
    expected_value, expected_grads = relayish.evaluate(module, "vg", x, w, np.int32(3))
    np.testing.assert_allclose(value, expected_value, rtol=1e-12)
    for got, want in zip(grads, expected_grads, strict=True):
        np.testing.assert_allclose(got, want, rtol=1e-12)
