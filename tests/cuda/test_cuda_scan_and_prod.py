"""CUDA kernels of prod, cumsum, reverse and argmax over several axes against the NumPy reference,
on the simulator.

Hypothesis draws small shapes (every dimension 0..4), the dtype, the attributes and the values
(NaN, inf and -0.0 sprinkled in; small integers for ties), with the helpers of
``test_cuda_reduce.py``. Every result is exact, as the module docstring of ``jit/cuda/reduce.py``
states: floats multiply and add in their dtype in the reference's order (the arrays here are
C-contiguous), integers wrap as NumPy's do; where the reference raises, the kernel raises the same
class.
"""

from __future__ import annotations

import attrs
import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from jit.kernels.registry import ArgType, kernel, load_generators
from relayish.testing import check_equivalent
from relayish.testing.difftest import default_features
from relayish.testing.strategies import programs
from relayish.types import IntType
from tests.cuda.support import run_cuda
from tests.cuda.test_cuda_programs import cuda_run
from tests.cuda.test_cuda_reduce import (
    ALL, NUMBER_DTYPES, SETTINGS, arrays, outcome, reduce_axes, shapes, signed_axis,
)  # fmt: skip


@SETTINGS
@given(data=st.data())
def test_prod_matches_reference(data: st.DataObject) -> None:
    x = data.draw(arrays(data.draw(NUMBER_DTYPES), data.draw(shapes())))
    got, expected = outcome("prod", [x], axis=data.draw(reduce_axes(x.ndim)), keepdims=data.draw(st.booleans()))
    np.testing.assert_array_equal(got, expected, strict=True)


def test_prod_wraps_integers_and_multiplies_floats_in_their_dtype() -> None:
    np.testing.assert_array_equal(run_cuda("prod", [np.array([100, 3], np.int8)]), np.int8(44), strict=True)
    big = np.array([3e38, 10.0, 1e-10], np.float32)  # float32 overflows to inf on the way, as NumPy's does
    np.testing.assert_array_equal(run_cuda("prod", [big]), np.float32(np.inf), strict=True)
    np.testing.assert_array_equal(run_cuda("prod", [np.zeros((2, 0), np.float64)], axis=1), np.ones(2), strict=True)


@SETTINGS
@given(data=st.data())
def test_cumsum_matches_reference(data: st.DataObject) -> None:
    x = data.draw(arrays(data.draw(NUMBER_DTYPES), data.draw(shapes(min_rank=1))))
    axis = signed_axis(data.draw, data.draw(st.integers(0, x.ndim - 1)), x.ndim)
    got, expected = outcome("cumsum", [x], axis=axis, exclusive=data.draw(st.booleans()))
    np.testing.assert_array_equal(got, expected, strict=True)


def test_cumsum_has_kernels_for_its_primitive_form_only() -> None:
    """axis None and another dtype are lowered (to a reshape and a cast) before kernels."""
    with pytest.raises(NotImplementedError, match="lowering"):
        kernel("cumsum", {"axis": None, "dtype": None, "exclusive": False}, [ArgType("float32", 2)], "cuda")
    with pytest.raises(NotImplementedError, match="lowering"):
        kernel("cumsum", {"axis": 0, "dtype": IntType(32), "exclusive": False}, [ArgType("float32", 2)], "cuda")


@SETTINGS
@given(data=st.data())
def test_argmax_over_several_axes_matches_reference(data: st.DataObject) -> None:
    x = data.draw(arrays(data.draw(NUMBER_DTYPES), data.draw(shapes())))
    axis = data.draw(reduce_axes(x.ndim))
    exclude = axis is not None and data.draw(st.booleans())
    got, expected = outcome("argmax", [x], axis=axis, keepdims=data.draw(st.booleans()), exclude=exclude)
    if got is not None:
        np.testing.assert_array_equal(got, expected, strict=True)


def test_argmax_over_merged_axes_counts_in_row_major_order() -> None:
    x = np.array([[[0, 5], [7, 1]], [[7, 2], [3, 9]]], np.int32)
    np.testing.assert_array_equal(run_cuda("argmax", [x], axis=(2, 0)), np.array([2, 3], np.int32), strict=True)
    np.testing.assert_array_equal(run_cuda("argmax", [x], axis=1, exclude=True, keepdims=True),
                                  np.array([[[2], [3]]], np.int32), strict=True)


@SETTINGS
@given(data=st.data())
def test_reverse_matches_reference(data: st.DataObject) -> None:
    x = data.draw(arrays(data.draw(st.sampled_from(ALL)), data.draw(shapes(min_rank=1))))
    got, expected = outcome("reverse", [x], axis=signed_axis(data.draw, data.draw(st.integers(0, x.ndim - 1)), x.ndim))
    np.testing.assert_array_equal(got, expected, strict=True)


SCAN_OPS = ("prod", "cumsum", "reverse", "argmax", "argmin", "add", "mul")


@settings(max_examples=15, suppress_health_check=list(HealthCheck), deadline=None)
@given(program=programs(attrs.evolve(default_features(["cuda"]), ops=SCAN_OPS), max_nodes=20))
def test_generated_programs_with_grad_on_cuda(program) -> None:
    """Programs calling these operators (lowered forms included: cumsum's reshape and cast,
    argmin's argmax), and their gradients."""
    check_equivalent(program.module, program.module, program.entry, program.args, backend_b=cuda_run)


def test_every_operator_has_a_cuda_generator() -> None:
    generators = load_generators("cuda")
    assert {"prod", "cumsum", "reverse", "argmax"} <= set(generators)
