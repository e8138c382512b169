"""The CUDA kernels of jit/cuda/nn.py against the reference semantics (``get_op(name)(*arrays, **attrs)``).

Shapes, dtypes, attributes and values are drawn by hypothesis, small (the simulator interprets every
thread, and the products loop inside each thread); ranks, axes and dtypes are parametrized, so each
is covered whatever hypothesis draws. Results must have the reference's dtype and shape and equal its
values exactly (NaN where NaN), except the float products and avg_pool2d, held to
``|cuda - reference| <= rtol * magnitude`` with magnitude the operator on the arguments' absolute
values, rtol 1e-5 (float32) or 1e-12 (float64), with NaN and infinities where the reference computed
in long double (without BLAS) has them: NumPy's BLAS dot of a 1-element operand uses axpy, which skips
the products when that element is 0, so ``0 * NaN`` gives 0 there; the kernels follow IEEE.

Where the reference raises, the CUDA kernel raises too: the type relation's RelayTypeError for shapes
and attributes (the launcher checks them before any launch), IndexError for take_backward's and
scatter_add's indices.
The cases avoid two places where the relation is stricter or checks in another order than the
reference: dense's bias must be (units,) (the reference broadcasts one of 1 or 2 elements to 0 or 1
units), and take_backward's g shape (scatter_add's updates shape) is checked before the indices.

Under the simulator the kernels' scalar arithmetic is NumPy's, which warns where the GPU silently
wraps integers or follows IEEE (inf - inf, 0 * inf): those warnings are ignored here.
"""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest
from hypothesis import HealthCheck, assume, given, settings
from hypothesis import strategies as st

from jit.cuda import nn
from jit.kernels.registry import load_generators
from relayish.errors import RelayTypeError
from tests.cuda.support import reference, run_cuda
from tests.jit.test_nn_kernels import (  # shared with the CPU kernels' tests
    STATIC_ERRORS, assert_within, compared_exactly, f32, image, values,
)

pytestmark = [
    pytest.mark.filterwarnings("ignore:overflow encountered:RuntimeWarning"),
    pytest.mark.filterwarnings("ignore:invalid value encountered:RuntimeWarning"),
    pytest.mark.filterwarnings("ignore:divide by zero encountered:RuntimeWarning"),
]

# the whole file takes about 20 s on a 2-core machine under the simulator
FEW = settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.too_slow])
SOME = settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow])
RTOL = {"float32": 1e-5, "float64": 1e-12}

OPERATORS = ["matmul", "dense", "conv2d", "conv2d_backward_input", "conv2d_backward_weight", "max_pool2d",
             "avg_pool2d", "max_pool2d_backward", "max_pool2d_gather", "avg_pool2d_backward",
             "strided_slice_backward", "take_backward", "scatter_add", "concatenate_backward", "pad_backward"]

seeds = st.integers(0, 2**32 - 1)


def check(name: str, arrays: list[np.ndarray], attrs: dict, rtol: dict | None = None) -> None:
    """The CUDA kernel gives the reference's result (within ``rtol[dtype]`` of the magnitude when given),
    or raises where the reference raises; either way its arguments are unchanged."""
    before = [a.copy() for a in arrays]
    try:
        expected = reference(name, arrays, **attrs)
    except IndexError:
        with pytest.raises(IndexError):
            run_cuda(name, arrays, **attrs)
        return
    except ValueError:
        with pytest.raises(RelayTypeError):
            run_cuda(name, arrays, **attrs)
        return
    got = run_cuda(name, arrays, **attrs)
    if compared_exactly(got, expected, arrays, before, rtol):
        return
    # NaN and infinities where IEEE arithmetic puts them: the reference in long double, which NumPy
    # computes without BLAS (whose dot of a 1-element 0 and a NaN row skips the product: 0, not NaN)
    ieee = reference(name, [a.astype(np.longdouble) if a.dtype.kind == "f" else a for a in arrays], **attrs)
    finite = np.isfinite(ieee)
    np.testing.assert_array_equal(got[~finite], ieee[~finite].astype(expected.dtype))
    assert_within(name, got, expected, finite, reference(name, [np.abs(a) for a in arrays], **attrs), rtol)


def extent(data: Any, high: int, low: int = 1) -> int:
    """A size in low .. high, or about once in eight draws 0: empty arrays, without most cases empty."""
    return 0 if data.draw(st.integers(0, 7)) == 0 else data.draw(st.integers(low, high))


def sometimes_off(data: Any, shape: list[int], chance: int = 10) -> tuple[int, ...]:
    """``shape``, or about once in ``chance`` draws one of its dimensions one larger (a shape error)."""
    shape = list(shape)
    if shape and data.draw(st.integers(0, chance - 1)) == 0:
        shape[data.draw(st.integers(0, len(shape) - 1))] += 1
    return tuple(shape)


def test_every_operator_has_a_cuda_generator() -> None:
    generators = load_generators("cuda")
    assert [name for name in OPERATORS if name not in generators] == []
    assert sorted(nn.OPERATORS) == sorted(OPERATORS)  # the family's own list is this one


# matmul and dense --------------------------------------------------------------------------------


@pytest.mark.parametrize("rank_a, rank_b", [(2, 2), (3, 2), (2, 3), (3, 3), (4, 3)])
@FEW
@given(st.sampled_from(["float32", "float64", "int32", "uint8", "int64"]), st.data(), seeds)
def test_matmul(rank_a: int, rank_b: int, dtype: str, data: Any, seed: int) -> None:
    rng = np.random.default_rng(seed)
    m, k, n = (extent(data, 4) for _ in range(3))
    sizes = [extent(data, 2, low=2) for _ in range(max(rank_a, rank_b) - 2)]  # 2, broadcast against 1, or 0
    # each operand's batch axes are the common sizes or 1 (broadcast)
    batch_a = [s if data.draw(st.booleans()) else 1 for s in sizes][len(sizes) - (rank_a - 2):]
    batch_b = [s if data.draw(st.booleans()) else 1 for s in sizes][len(sizes) - (rank_b - 2):]
    ties = data.draw(st.booleans())
    a = values(rng, (*batch_a, m, k), dtype, ties)
    b = values(rng, sometimes_off(data, [*batch_b, k, n]), dtype, ties)
    check("matmul", [a, b], {}, RTOL)


@SOME
@given(st.sampled_from(["float32", "float64", "int32", "uint8"]), st.data(), seeds)
def test_dense(dtype: str, data: Any, seed: int) -> None:
    rng = np.random.default_rng(seed)
    rows = [extent(data, 3) for _ in range(data.draw(st.integers(0, 2)))]
    units, features = extent(data, 4), extent(data, 4)
    ties = data.draw(st.booleans())
    x = values(rng, (*rows, features), dtype, ties)
    arrays = [x, values(rng, sometimes_off(data, [units, features]), dtype, ties)]
    if data.draw(st.booleans()):  # the reference broadcasts a bias of 1 or 2 for 0 or 1 units; the relation does not
        units = arrays[1].shape[0]
        arrays.append(values(rng, sometimes_off(data, [units]) if units > 1 else (units,), dtype, ties))
    check("dense", arrays, {}, RTOL)


# conv2d and its gradients ------------------------------------------------------------------------


CONV_DTYPES = ["float32", "float64", "int32", "uint8"]


def conv_case(data: Any, seed: int, dtype: str) -> tuple[list[np.ndarray], dict]:
    """x, w, a gradient g of conv2d(x, w)'s shape (sometimes one dimension off), and drawn attributes;
    the input is mostly large enough for the (dilated, padded) kernel, sometimes not."""
    rng = np.random.default_rng(seed)
    strides = (data.draw(st.integers(1, 2)), data.draw(st.integers(1, 2)))
    padding = (data.draw(st.integers(0, 1)), data.draw(st.integers(0, 1)))
    dilation = (data.draw(st.integers(1, 2)), data.draw(st.integers(1, 2)))
    n, c, o = extent(data, 2), data.draw(st.integers(1, 3)), data.draw(st.integers(1, 3))
    kernel = (data.draw(st.integers(1, 3)), data.draw(st.integers(1, 3)))
    spatial = []
    for k, p, d in zip(kernel, padding, dilation):
        fits = max(d * (k - 1) + 1 - 2 * p, 1)
        too_small = fits > 1 and data.draw(st.integers(0, 9)) == 0
        spatial.append(fits - 1 if too_small else data.draw(st.integers(fits, max(fits + 2, 6))))
    ties = data.draw(st.booleans())
    x, w = values(rng, (n, c, *spatial), dtype, ties), values(rng, (o, c, *kernel), dtype, ties)
    geometry = zip(spatial, kernel, strides, padding, dilation)
    out = [(size + 2 * p - d * (k - 1) - 1) // s + 1 for size, k, s, p, d in geometry]
    g = values(rng, sometimes_off(data, [n, o, *(max(v, 0) for v in out)]), dtype, ties)
    return [x, w, g], {"strides": strides, "padding": padding, "dilation": dilation}


@pytest.mark.parametrize("dtype", CONV_DTYPES)
@FEW
@given(st.data(), seeds)
def test_conv2d(dtype: str, data: Any, seed: int) -> None:
    (x, w, _), attrs = conv_case(data, seed, dtype)
    check("conv2d", [x, w], attrs, RTOL)


@pytest.mark.parametrize("dtype", CONV_DTYPES)
@FEW
@given(st.data(), seeds)
def test_conv2d_backward_input(dtype: str, data: Any, seed: int) -> None:
    (x, w, g), attrs = conv_case(data, seed, dtype)
    check("conv2d_backward_input", [g, w, x.astype(bool)], attrs, RTOL)  # like gives only the shape


@pytest.mark.parametrize("dtype", CONV_DTYPES)
@FEW
@given(st.data(), seeds)
def test_conv2d_backward_weight(dtype: str, data: Any, seed: int) -> None:
    (x, w, g), attrs = conv_case(data, seed, dtype)
    check("conv2d_backward_weight", [g, x, w.astype(np.float32)], attrs, RTOL)


def test_conv_padding_is_read_as_zeros() -> None:
    """The padding times an infinite weight (conv2d) or gradient (conv2d_backward_weight) is NaN, as in
    the reference, which multiplies the zero-padded windows; the input's gradient drops the padding."""
    x = np.ones((1, 1, 2, 2), np.float32)
    w = np.ones((1, 1, 3, 3), np.float32)
    w[0, 0, 0, 0] = np.inf
    attrs = {"padding": (1, 1)}
    assert np.isnan(reference("conv2d", [x, w], **attrs)).sum() == 3  # the windows whose first tap is padding
    check("conv2d", [x, w], attrs, RTOL)
    g = np.ones((1, 1, 2, 2), np.float32)
    g[0, 0, 1, 1] = np.inf
    assert np.isnan(reference("conv2d_backward_weight", [g, x, w], **attrs)).sum() == 5
    check("conv2d_backward_weight", [g, x, w], attrs, RTOL)
    assert np.isfinite(reference("conv2d_backward_input", [np.ones_like(g), w, x], **attrs)).sum() == 3
    check("conv2d_backward_input", [np.ones_like(g), w, x], attrs, RTOL)


# pooling -----------------------------------------------------------------------------------------


def pool_case(data: Any, seed: int, dtype: str, avg: bool = False) -> tuple[np.ndarray, np.ndarray, dict]:
    """x with ties and special values (small integers, NaN, infinities, -0.0, integer extremes), g of
    the pooled shape (sometimes one dimension off), and drawn attributes; padding up to 2 gives windows
    wholly in the padding."""
    rng = np.random.default_rng(seed)
    pool = (data.draw(st.integers(1, 3)), data.draw(st.integers(1, 3)))
    strides = data.draw(st.sampled_from([None, (1, 1), (2, 1), (1, 3), (2, 2)]))
    padding = (data.draw(st.integers(0, 2)), data.draw(st.integers(0, 2)))
    spatial = []
    for k, p in zip(pool, padding):  # large enough for the padded window, about once in ten not
        fits = max(k - 2 * p, 1)
        too_small = fits > 1 and data.draw(st.integers(0, 9)) == 0
        spatial.append(fits - 1 if too_small else data.draw(st.integers(fits, 6)))
    shape = (extent(data, 2), data.draw(st.integers(1, 3)), *spatial)
    attrs: dict = {"pool_size": pool, "strides": strides, "padding": padding}
    if avg:
        attrs["count_include_pad"] = data.draw(st.booleans())
    ties = not avg or data.draw(st.booleans())  # averages: sometimes sums that round
    x = values(rng, shape, dtype, ties)
    try:
        window = {k: attrs[k] for k in ("pool_size", "strides", "padding")}
        pooled = list(reference("max_pool2d", [x.astype(np.float64)], **window).shape)
    except ValueError:
        pooled = [shape[0], shape[1], 1, 1]
    g_ties = not avg and data.draw(st.booleans())  # values that round when added, or ties and specials
    return x, values(rng, sometimes_off(data, pooled), dtype, ties=g_ties), attrs


@pytest.mark.parametrize("dtype", ["float32", "float64", "int32", "uint8", "int64"])
@FEW
@given(st.data(), seeds)
def test_max_pool2d(dtype: str, data: Any, seed: int) -> None:
    x, _, attrs = pool_case(data, seed, dtype)
    check("max_pool2d", [x], attrs)


@pytest.mark.parametrize("dtype", ["float32", "float64"])
@FEW
@given(st.data(), seeds)
def test_avg_pool2d(dtype: str, data: Any, seed: int) -> None:
    x, _, attrs = pool_case(data, seed, dtype, avg=True)
    check("avg_pool2d", [x], attrs, RTOL)


@pytest.mark.parametrize("dtype", ["float32", "float64", "int32", "uint8"])
@FEW
@given(st.data(), seeds)
def test_max_pool2d_backward(dtype: str, data: Any, seed: int) -> None:
    x, g, attrs = pool_case(data, seed, dtype)
    check("max_pool2d_backward", [g, x], attrs)


@pytest.mark.parametrize("dtype", ["float32", "float64", "int32", "uint8"])
@FEW
@given(st.data(), seeds)
def test_max_pool2d_gather(dtype: str, data: Any, seed: int) -> None:
    x, _, attrs = pool_case(data, seed, dtype)
    h = values(np.random.default_rng(seed + 1), sometimes_off(data, list(x.shape)), x.dtype.name)
    check("max_pool2d_gather", [h, x], attrs)


@pytest.mark.parametrize("dtype", ["float32", "float64"])
@FEW
@given(st.data(), seeds)
def test_avg_pool2d_backward(dtype: str, data: Any, seed: int) -> None:
    x, g, attrs = pool_case(data, seed, dtype, avg=True)
    check("avg_pool2d_backward", [g, x], attrs)  # exact: divided and added as the reference does


def test_pool_windows_wholly_in_the_padding_and_ties() -> None:
    """Windows that see only padding (max_pool2d gives -inf, avg_pool2d without the padding's count NaN,
    the gradients pass nothing on) and the first of equal maxima (-0.0 == 0.0, -inf beside the -inf
    padding, the first of two NaNs) taking the gradient."""
    x = np.array([[[[-np.inf, -np.inf, 0.0], [-0.0, 0.0, np.nan], [np.nan, 1.0, 1.0]]]])
    attrs = {"pool_size": (3, 2), "strides": (1, 2), "padding": (1, 2)}
    g = np.arange(1.0, 10.0).reshape(1, 1, 3, 3)
    expected = reference("max_pool2d_backward", [g, x], **attrs)
    # -0.0 before 0.0 wins window (0, 1); the windows of column 0 see only padding and pass nothing on
    assert expected[0, 0, 1, 0] == 2 and expected[0, 0, 1, 1] == 0 and expected.sum() == g[..., 1:].sum()
    check("max_pool2d", [x], attrs)
    check("max_pool2d_backward", [g, x], attrs)
    check("max_pool2d_gather", [x + 1, x], attrs)
    x = np.nan_to_num(x, nan=0.5, posinf=3.0, neginf=-3.0)
    avg_attrs = {"pool_size": (2, 3), "strides": (3, 1), "padding": (2, 2), "count_include_pad": False}
    assert np.isnan(reference("avg_pool2d", [x], **avg_attrs)).any()
    check("avg_pool2d", [x], avg_attrs)
    check("avg_pool2d_backward", [np.ones((1, 1, 2, 5)), x], avg_attrs)


# gradients of shape operators --------------------------------------------------------------------


def slice_bounds(data: Any, n: int, step: int) -> tuple[int, int]:
    """Begin and end of a slice of an axis of n: mostly a non-empty run in the step's direction, each
    bound written as a position, as a negative position, or (at the axis's edge) beyond the axis,
    which Python's slicing clamps; else anything."""
    if data.draw(st.integers(0, 4)) == 0:
        bound = st.sampled_from([-(2**40), -7, -3, -1, 0, 1, 2, 5, 2**40])
        return data.draw(bound), data.draw(bound)
    a = data.draw(st.integers(0, max(n - 1, 0)))
    b = min(a + data.draw(st.integers(1, 5)), n)

    def written(position: int, edge: int, beyond: tuple[int, ...]) -> int:
        options = [position, position - n] if 0 <= position < n else []
        return data.draw(st.sampled_from(options + list(beyond) if position == edge else options))

    far = 2**40
    if step > 0:
        return written(a, 0, (-(n + 2), -far)), written(b, n, (n, n + 2, far))
    return written(b - 1, n - 1, (n + 2, far)), written(a - 1, -1, (-(n + 1), -far))


@pytest.mark.parametrize("rank", [0, 1, 2, 3])
@SOME
@given(st.sampled_from(["float32", "bool", "int64", "uint8"]), st.data(), seeds)
def test_strided_slice_backward(rank: int, dtype: str, data: Any, seed: int) -> None:
    rng = np.random.default_rng(seed)
    like = np.zeros([extent(data, 5) for _ in range(rank)], np.float64)
    axes = st.lists(st.integers(0, rank - 1), unique=True, min_size=1, max_size=rank)
    sliced = data.draw(axes) if rank else []
    leading = sliced == list(range(len(sliced))) and data.draw(st.booleans())  # attributes strides, axes None
    steps = [1 if leading else data.draw(st.sampled_from([1, 2, 3, -1, -2])) for _ in sliced]
    begin, end = [], []
    for axis, step in zip(sliced, steps):
        first, last = slice_bounds(data, like.shape[axis], step)
        begin.append(first)
        end.append(last)
    attrs: dict = {"begin": tuple(begin), "end": tuple(end)}
    if not leading:
        attrs["strides"] = tuple(steps)
        attrs["axes"] = tuple(a - rank if data.draw(st.booleans()) else a for a in sliced)
    shape = list(reference("strided_slice", [like], **attrs).shape)
    g = values(rng, sometimes_off(data, shape), dtype)
    check("strided_slice_backward", [g, like], attrs)


TAKE_AXES = [(0, None), (2, None), (1, 0), (2, 1), (3, -2), (3, 0)]
TAKE_DTYPES = (st.sampled_from(["float32", "float64", "int32", "uint8"]), st.sampled_from(["int32", "uint8", "int64"]))


def take_case(data: Any, rng: np.random.Generator, rank: int, axis: int | None, dtype: str,
              index_dtype: str) -> tuple[tuple[int, ...], np.ndarray, np.ndarray]:
    """The shape of take's data, indices into it (about once in ten draws some out of range) and
    values of take's result shape (with indices in range, sometimes of a wrong shape: the relation
    checks that shape first, the reference the indices)."""
    shape = tuple(extent(data, 3) for _ in range(rank))
    size = int(np.prod(shape)) if axis is None else shape[axis]
    index_shape = [extent(data, 3) for _ in range(data.draw(st.integers(0, 2)))]
    if 0 in shape:  # no thread runs, so no index could be reported: draw none
        assume(index_shape)
        index_shape[0] = 0
    low, high = 0, size
    out_of_range = data.draw(st.integers(0, 9)) == 0
    if out_of_range:
        low, high = (-2 if index_dtype != "uint8" else size), size + 2
    indices = rng.integers(low, max(high, low + 1), index_shape).astype(index_dtype)
    if axis is None:
        taken = list(indices.shape)
    else:
        taken = [*shape[:axis % rank], *indices.shape, *shape[axis % rank + 1:]]
    ties = data.draw(st.booleans())  # small integers, or values whose sums depend on their order
    return shape, indices, values(rng, taken if out_of_range else sometimes_off(data, taken), dtype, ties)


TAKE_ADJOINTS = ["take_backward", "scatter_add"]


def adjoint_args(name: str, added: np.ndarray, indices: np.ndarray, into: np.ndarray) -> list[np.ndarray]:
    """The arguments of take's adjoint ``name`` adding ``added`` at the indices into ``into``'s
    shape (take_backward: into zeros, so into gives only the shape)."""
    return [added, indices, into] if name == "take_backward" else [into, indices, added]


@pytest.mark.parametrize("name", TAKE_ADJOINTS)
@pytest.mark.parametrize("rank, axis", TAKE_AXES)
@FEW
@given(*TAKE_DTYPES, st.data(), seeds)
def test_take_adjoints(name: str, rank: int, axis: int | None, dtype: str, index_dtype: str, data: Any,
                       seed: int) -> None:
    """Exact: repeated indices add in index order, scatter_add's onto data (ties draw values whose
    float sums show the order)."""
    rng = np.random.default_rng(seed)
    shape, indices, added = take_case(data, rng, rank, axis, dtype, index_dtype)
    into = np.zeros(shape, np.int8) if name == "take_backward" else values(rng, shape, dtype, data.draw(st.booleans()))
    check(name, adjoint_args(name, added, indices, into), {"axis": axis})


@SOME
@given(st.sampled_from(["float32", "bool", "int32", "uint8"]), st.data(), seeds)
def test_concatenate_backward(dtype: str, data: Any, seed: int) -> None:
    rng = np.random.default_rng(seed)
    rank, count = data.draw(st.integers(1, 3)), data.draw(st.integers(1, 3))
    axis, index = data.draw(st.integers(-rank, rank - 1)), data.draw(st.integers(0, count - 1))
    shape = [extent(data, 3) for _ in range(rank)]
    parts = []
    for _ in range(count):
        piece = list(shape)
        piece[axis] = extent(data, 3)
        parts.append(np.zeros(piece, np.float32))
    joined = list(np.concatenate(parts, axis=axis).shape)
    g = values(rng, sometimes_off(data, joined), dtype)
    check("concatenate_backward", [g, *parts], {"axis": axis, "index": index})


@SOME
@given(st.sampled_from(["float32", "bool", "int64", "uint8"]), st.data(), seeds)
def test_pad_backward(dtype: str, data: Any, seed: int) -> None:
    rng = np.random.default_rng(seed)
    rank = data.draw(st.integers(0, 3))
    x = np.zeros([extent(data, 3) for _ in range(rank)], np.float32)
    widths = tuple(data.draw(st.integers(0, 2)) for _ in range(2 * rank))
    shape = [n + widths[2 * i] + widths[2 * i + 1] for i, n in enumerate(x.shape)]
    g = values(rng, sometimes_off(data, shape), dtype)
    check("pad_backward", [g, x], {"pad_width": widths})


# errors ------------------------------------------------------------------------------------------

@pytest.mark.parametrize("name, arrays, attrs", STATIC_ERRORS + [
    ("conv2d_backward_input", [image, image, image], {"dilation": (1, 0)}),
    ("max_pool2d_backward", [image, image], {"pool_size": 5}),
    ("max_pool2d_gather", [image, image], {"pool_size": (2, 0)}),
    ("avg_pool2d", [image[0]], {"pool_size": 2}),
    ("concatenate_backward", [f32, f32], {"index": 0, "axis": 2}),
])
def test_attributes_and_ranks_the_reference_rejects(name: str, arrays: list[np.ndarray], attrs: dict) -> None:
    """The generator still gives a module; the type relation rejects the call before any launch."""
    with pytest.raises(ValueError):
        reference(name, arrays, **attrs)
    with pytest.raises(RelayTypeError):
        run_cuda(name, arrays, **attrs)


@pytest.mark.parametrize("name", TAKE_ADJOINTS)
@pytest.mark.parametrize("index, axis", [(-1, None), (4, None), (2, 0), (-3, -1), (200, 1)])
def test_an_index_out_of_range(name: str, index: int, axis: int | None) -> None:
    like = np.zeros((2, 2), np.float32)
    indices = np.array([[0, 1], [index, 0]], np.int64)
    args = adjoint_args(name, np.ones(indices.shape if axis is None else (2, 2, 2), np.float32), indices, like)
    with pytest.raises(IndexError):
        reference(name, args, axis=axis)
    with pytest.raises(IndexError, match=f"{name}: an index is out of range"):
        run_cuda(name, args, axis=axis)


@pytest.mark.parametrize("name", TAKE_ADJOINTS)
def test_an_out_of_range_index_beside_an_empty_result_raises_as_the_reference(name: str) -> None:
    """No thread runs for an empty result; the launcher asks the reference, which raises."""
    args = adjoint_args(name, np.ones((1, 2), np.float32), np.array([5], np.int64), np.zeros((0, 2), np.float32))
    with pytest.raises(IndexError, match="out of range"):
        reference(name, args, axis=0)
    with pytest.raises(IndexError, match="out of range"):
        run_cuda(name, args, axis=0)
