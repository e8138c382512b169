"""conv2d's groups and out_dtype and conv2d_transpose on the CUDA target (simulator): the kernel of
conv2d_backward_input without like (conv2d_transpose's lowering) against the reference, and the
programs of tests/ops/test_conv_forms.py (every form, and a gradient through both operators)
compiled for CUDA against the evaluator."""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import relayish
from tests.cuda.test_cuda_nn import RTOL, check
from tests.jit.test_nn_kernels import values
from tests.ops.test_conv_forms import GRADIENT, PROGRAM, assert_same_results, program_args

pytestmark = [
    pytest.mark.filterwarnings("ignore:overflow encountered:RuntimeWarning"),
    pytest.mark.filterwarnings("ignore:invalid value encountered:RuntimeWarning"),
]


@settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.sampled_from([("float32", {}), ("float64", {"strides": 2, "padding": 1, "output_padding": (1, 0)}),
                        ("int32", {"strides": (3, 2), "dilation": 2, "output_padding": (2, 1)})]),
       st.data(), st.integers(0, 2**32 - 1))
def test_conv2d_backward_input_without_like(combo: tuple, data: Any, seed: int) -> None:
    """Empty images and paddings that leave a negative size: the relation's RelayTypeError."""
    dtype, attrs = combo
    rng = np.random.default_rng(seed)
    batch, o, c = (data.draw(st.integers(1, 2)) for _ in range(3))
    image = tuple(data.draw(st.integers(0, 3)) for _ in range(2))
    kernel_size = tuple(data.draw(st.integers(1, 3)) for _ in range(2))
    check("conv2d_backward_input", [values(rng, (batch, o, *image), dtype), values(rng, (o, c, *kernel_size), dtype)],
          attrs, RTOL)


def test_compiled_forms_agree_with_the_evaluator() -> None:
    module = relayish.parse(PROGRAM)
    args = program_args(1)
    assert_same_results(relayish.compile(module, "main", target="cuda")(*args),
                        relayish.evaluate(module, "main", *args))


def test_compiled_gradient_agrees_with_the_evaluator() -> None:
    module = relayish.parse(GRADIENT)
    rng = np.random.default_rng(3)
    args = [rng.normal(size=(1, 4, 5, 4)), rng.normal(size=(4, 2, 3, 3)), rng.normal(size=(4, 1, 2, 3))]
    value, grads = relayish.compile(module, "main", target="cuda")(*args)
    want, wanted = relayish.evaluate(module, "main", *args)
    assert np.allclose(value, want, rtol=1e-12)
    for got, expected in zip(grads, wanted):
        assert np.allclose(np.asarray(got), expected, rtol=1e-10, atol=1e-10)
