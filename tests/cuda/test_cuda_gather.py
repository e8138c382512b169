"""CUDA kernels of gather and gather_backward against the NumPy reference, on the simulator; and
programs with gather and split (which is lowered to strided slices) compiled for CUDA against
the evaluator.

Hypothesis draws shapes (every dimension 0..4), every CUDA dtype, negative axes, indices of every
integer dtype shorter than the data along the other axes, and now and then an index out of range
(IndexError, as the reference raises) or indices longer than the data (the type relation's error,
before any launch). Both kernels are exact: gather copies, and gather_backward adds in the
reference's order in the dtype (integers wrap), as ``jit/cuda/shape.py`` states.
"""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import relayish
from relayish.testing import check_equivalent
from relayish.testing.strategies import Features, programs
from relayish.types import FloatType
from tests.cuda.support import reference, run_cuda
from tests.cuda.test_cuda_reduce import INTS, NUMBERS, signed_axis
from tests.cuda.test_cuda_shape import check, tensors

SETTINGS = settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow])


@st.composite
def indices_for(draw: st.DrawFn, shape: tuple[int, ...], axis: int) -> np.ndarray:
    """Indices of the rank of ``shape``: along ``axis`` 0..3 long, along the others at most as long as
    ``shape`` (one longer, now and then); in range, except now and then one."""
    index_shape = [draw(st.integers(0, 3)) if d == axis else draw(st.integers(0, k)) for d, k in enumerate(shape)]
    if len(shape) > 1 and draw(st.integers(0, 7)) == 0:
        index_shape[(axis + 1) % len(shape)] = shape[(axis + 1) % len(shape)] + 1
    size = shape[axis]
    rng = np.random.default_rng(draw(st.integers(0, 2**32 - 1)))
    low, high = (-2, size + 2) if draw(st.integers(0, 4)) == 0 else (0, max(size, 1))
    # negative indices wrap into large ones for unsigned dtypes: out of range either way
    return np.asarray(rng.integers(low, high, index_shape)).astype(draw(st.sampled_from(INTS)))


@SETTINGS
@given(data=st.data())
def test_gather(data: st.DataObject) -> None:
    x = data.draw(tensors(min_rank=1, max_rank=3))
    axis = data.draw(st.integers(0, x.ndim - 1))
    indices = data.draw(indices_for(x.shape, axis))
    check("gather", [x, indices], axis=signed_axis(data.draw, axis, x.ndim))


@SETTINGS
@given(data=st.data())
def test_gather_backward(data: st.DataObject) -> None:
    like = data.draw(tensors(min_rank=1, max_rank=3))
    axis = data.draw(st.integers(0, like.ndim - 1))
    indices = data.draw(indices_for(like.shape, axis))
    g = data.draw(tensors(dtypes=NUMBERS, shape=indices.shape))
    check("gather_backward", [g, indices, like], axis=signed_axis(data.draw, axis, like.ndim))


def test_gather_backward_adds_repeated_indices_in_order() -> None:
    g = np.array([[1e8, 1.0, -1e8, 1.0], [3.0, 2.0, 1.0, 0.5]], np.float32)
    indices = np.array([[1, 1, 1, 1], [0, 2, 0, 0]], np.int64)
    like = np.zeros((2, 3), np.float32)
    expected = reference("gather_backward", [g, indices, like], axis=1)
    np.testing.assert_array_equal(run_cuda("gather_backward", [g, indices, like], axis=1), expected, strict=True)
    assert expected[0, 1] == np.float32(1.0)  # float32 sums in order: (1e8 + 1) - 1e8 + 1


def test_out_of_range_raises() -> None:
    data = np.arange(6, dtype=np.float32).reshape(2, 3)
    for indices, axis in ((np.array([[0, 3]], np.int32), 1), (np.array([[-1, 0, 0]], np.int64), 0),
                          (np.array([[2**64 - 1]], np.uint64), -1)):
        for name, args in (("gather", [data, indices]), ("gather_backward", [indices.astype(np.float32), indices, data])):
            with pytest.raises(IndexError):
                reference(name, args, axis=axis)
            with pytest.raises(IndexError, match=f"{name}: an index is out of range"):
                run_cuda(name, args, axis=axis)


def cuda_run(module: relayish.Module, name: str, *args):
    return relayish.compile(module, name, target="cuda")(*args)


GENERATED = Features(ops=("gather", "gather_backward", "split", "add", "mul", "sum", "tanh", "cast"), grad=True,
                     max_nodes=20, dtypes=(FloatType(32), FloatType(64)))


@settings(max_examples=8, deadline=None, suppress_health_check=list(HealthCheck))
@given(program=programs(GENERATED))
def test_generated_programs_on_cuda(program) -> None:
    check_equivalent(program.module, program.module, program.entry, program.args, backend_b=cuda_run)
