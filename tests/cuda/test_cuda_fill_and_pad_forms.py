"""Relay's forms of pad (edge, reflect), one_hot (on_value, off_value, axis) and the tensor fill
value of full and full_like, compiled for the CUDA target (on the simulator): their lowerings
run on the CUDA kernels of take, where, transpose, cast and broadcast_to, and must give exactly
what the evaluator gives on tests/ops/test_fill_and_pad_forms.py's programs."""

from __future__ import annotations

import numpy as np
import pytest

import relayish
from tests.ops.test_fill_and_pad_forms import PROGRAMS


@pytest.mark.parametrize("name", sorted(PROGRAMS))
def test_cuda_programs_agree_with_the_evaluator(name: str) -> None:
    src, args = PROGRAMS[name]
    module = relayish.parse(src)
    expected = relayish.evaluate(module, "main", *args)
    actual = relayish.compile(module, "main", target="cuda")(*args)
    assert len(actual) == len(expected)
    for got, want in zip(actual, expected):
        assert got.dtype == want.dtype and got.shape == want.shape
        np.testing.assert_array_equal(got, want)
