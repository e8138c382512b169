"""Relay's forms of reshape, strided_slice and take on the CUDA target (simulator): the reshape
kernel with the codes -2, -3 and -4 against the reference, and a program of every form compiled
for CUDA (strided_slice's and take's lowerings expanded) against the evaluator."""

from __future__ import annotations

import numpy as np
import pytest

import relayish
from tests.cuda.test_cuda_shape import check
from tests.ops.test_shape_forms import COMPILED, RESHAPES


@pytest.mark.parametrize("shape, newshape, target", RESHAPES, ids=str)
@pytest.mark.parametrize("dtype", ["float32", "int8", "bool"])
def test_reshape_codes(shape: tuple, newshape: tuple, target: tuple, dtype: str) -> None:
    x = (np.arange(int(np.prod(shape))) % 7).astype(dtype).reshape(shape)
    check("reshape", [x], newshape=newshape)


@pytest.mark.parametrize("batch", [1, 2])
def test_compiled_forms_agree_with_the_evaluator(batch: int) -> None:
    module = relayish.parse(COMPILED)
    rng = np.random.default_rng(batch)
    x = rng.normal(size=(batch, 6, 4)).astype(np.float32)
    i = np.array([[-100, 0], [5, 127], [-1, 7]], np.int8)
    u = np.array([0, 9, 2**63 + 5, 2**64 - 1], np.uint64)
    expected = relayish.evaluate(module, "main", x, i, u)
    actual = relayish.compile(module, "main", target="cuda")(x, i, u)
    assert len(actual) == len(expected)
    for got, want in zip(actual, expected):
        np.testing.assert_array_equal(np.asarray(got), want, strict=True)
