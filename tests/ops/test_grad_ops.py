"""The gradient operators (relayish/ops/grad_ops.py), each against two independent oracles.

1. The adjoint (dot-product) identity: for ``y = forward(x)``, ``sum(y * g) == sum(x * dx)``
   with ``dx = backward(g)``, on random float64 arrays. The forward operators are the library's,
   themselves checked against loops in test_nn.py and test_shape.py. Tolerance: 1e-12 times
   the sum of the magnitudes of the terms that were accumulated.
2. A direct definition written here with explicit Python loops over the forward result's
   positions: each element of g is sent back through its window, kernel taps, slice or index,
   in float64 (int64 for integers). Tolerances are those of helpers.py; integers are exact.

Type relations: small modules in the text format, parsed and checked, with the inferred result
type and the exact error message written out by hand.
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np
import pytest
from hypothesis import assume, given
from hypothesis import strategies as st

import relayish
from relayish.ops import get_op

from .helpers import FLOATS, I32, NUMBERS, arrays, assert_close, conv_taps, out_size, pool_windows, shapes

pairs = st.tuples(st.integers(1, 3), st.integers(1, 3))
paddings = st.tuples(st.integers(0, 2), st.integers(0, 2))
dilations = st.tuples(st.integers(1, 2), st.integers(1, 2))
seeds = st.integers(0, 2**32 - 1)


def wide(x: np.ndarray) -> np.ndarray:
    """x in float64, or int64 for integers (where the loop oracles accumulate)."""
    return x.astype(np.float64 if x.dtype.kind == "f" else np.int64)


def assert_adjoint(forward_terms: np.ndarray, backward_terms: np.ndarray, scale: float) -> None:
    """``sum(y * g)`` and ``sum(x * dx)`` agree to 1e-12 of ``scale``."""
    lhs, rhs = np.sum(forward_terms), np.sum(backward_terms)
    assert abs(lhs - rhs) <= 1e-12 * scale, f"sum(y * g) = {lhs!r} but sum(x * dx) = {rhs!r}"


# reshape_like ----------------------------------------------------------------------------


@given(x=arrays(np.float32, shapes(max_dims=3)), data=st.data())
def test_reshape_like(x: np.ndarray, data: st.DataObject) -> None:
    sizes = [k for k in range(1, x.size + 1) if x.size % k == 0]
    first = data.draw(st.sampled_from(sizes), label="first dimension")
    target = data.draw(st.sampled_from([(first, x.size // first), (x.size // first, 1, first), (x.size,)]))
    like = np.zeros(target, dtype=bool)  # only like's shape counts
    result = get_op("reshape_like")(x, like)
    assert_close(result, np.reshape(x, target), np.float32)
    # reshaping is its own adjoint: reshape the gradient back to x's shape
    g = np.random.default_rng(x.size).standard_normal(target)
    back = get_op("reshape_like")(g, x)
    assert_adjoint(result.astype(np.float64) * g, x.astype(np.float64) * back, np.sum(np.abs(x) * np.abs(back)))


def test_reshape_like_needs_the_same_number_of_elements() -> None:
    with pytest.raises(ValueError, match=r"reshape_like: cannot reshape \(2, 3\) \(6 elements\) to \(4,\) \(4 elements\)"):
        get_op("reshape_like")(np.ones((2, 3)), np.ones(4))


# conv2d_backward_input and conv2d_backward_weight ---------------------------------------


@st.composite
def conv_cases(draw: Any) -> tuple[tuple[int, ...], tuple[int, ...], dict[str, Any]]:
    """x's shape, w's shape and attributes for which conv2d has an output along each axis."""
    kernel, strides, padding, dilation = draw(pairs), draw(pairs), draw(paddings), draw(dilations)
    image = draw(st.tuples(st.integers(1, 6), st.integers(1, 6)))
    assume(all(out_size(*axis) >= 1 for axis in zip(image, kernel, strides, padding, dilation)))
    n, c, o = (draw(st.integers(1, 2)) for _ in range(3))
    return (n, c, *image), (o, c, *kernel), {"strides": strides, "padding": padding, "dilation": dilation}


def conv_out_shape(x_shape: tuple[int, ...], w_shape: tuple[int, ...], attrs: dict[str, Any]) -> tuple[int, ...]:
    spatial = zip(x_shape[2:], w_shape[2:], attrs["strides"], attrs["padding"], attrs["dilation"])
    return (x_shape[0], w_shape[0], *(out_size(*axis) for axis in spatial))


@given(case=conv_cases(), seed=seeds)
def test_conv2d_backward_ops_are_adjoints_of_conv2d(case: Any, seed: int) -> None:
    x_shape, w_shape, attrs = case
    rng = np.random.default_rng(seed)
    x, w = rng.standard_normal(x_shape), rng.standard_normal(w_shape)
    y = get_op("conv2d")(x, w, **attrs)
    g = rng.standard_normal(y.shape)
    scale = np.sum(np.abs(g) * get_op("conv2d")(np.abs(x), np.abs(w), **attrs))
    dx = get_op("conv2d_backward_input")(g, w, x, **attrs)
    assert_adjoint(y * g, x * dx, scale)
    dw = get_op("conv2d_backward_weight")(g, x, w, **attrs)
    assert_adjoint(y * g, w * dw, scale)


@given(case=conv_cases(), dtype=st.sampled_from(NUMBERS), data=st.data())
def test_conv2d_backward_ops_match_loops(case: Any, dtype: np.dtype, data: st.DataObject) -> None:
    """Every kernel tap that read x[input] into y[output] with weight w[tap] sends g[output]
    back: g * w to the input's gradient and g * x to the weight's."""
    x_shape, w_shape, attrs = case
    x = data.draw(arrays(dtype, x_shape), label="x")
    w = data.draw(arrays(dtype, w_shape), label="w")
    g = data.draw(arrays(dtype, conv_out_shape(x_shape, w_shape, attrs)), label="g")
    dx, dw = np.zeros(x_shape, wide(x).dtype), np.zeros(w_shape, wide(x).dtype)
    dx_scale, dw_scale = np.zeros(x_shape), np.zeros(w_shape)
    for out, tap, inp in conv_taps(x_shape, w_shape, attrs["strides"], attrs["padding"], attrs["dilation"]):
        dx[inp] += wide(g[out]) * wide(w[tap])
        dw[tap] += wide(g[out]) * wide(x[inp])
        dx_scale[inp] += abs(float(g[out]) * float(w[tap]))
        dw_scale[tap] += abs(float(g[out]) * float(x[inp]))
    # like supplies the shape only: a boolean array of the right shape will do
    like_x, like_w = np.zeros(x_shape, dtype=bool), np.zeros(w_shape, dtype=bool)
    assert_close(get_op("conv2d_backward_input")(g, w, like_x, **attrs), dx, dtype, scale=dx_scale)
    assert_close(get_op("conv2d_backward_weight")(g, x, like_w, **attrs), dw, dtype, scale=dw_scale)


def test_conv2d_backward_input_of_a_single_tap_kernel_scatters_g() -> None:
    """A 1x1 kernel of weight 2 with stride 2: each g lands, doubled, on every other pixel."""
    g = np.arange(1, 5, dtype=np.float32).reshape(1, 1, 2, 2)
    w = np.full((1, 1, 1, 1), 2, dtype=np.float32)
    expected = np.array([[2, 0, 4], [0, 0, 0], [6, 0, 8]], dtype=np.float32).reshape(1, 1, 3, 3)
    assert_close(get_op("conv2d_backward_input")(g, w, np.zeros((1, 1, 3, 3)), strides=2), expected, np.float32)


# max_pool2d_backward and avg_pool2d_backward --------------------------------------------


@st.composite
def pool_cases(draw: Any) -> tuple[tuple[int, ...], dict[str, Any]]:
    """x's shape and attributes for which the pool has an output along each axis."""
    pool, padding = draw(pairs), draw(paddings)
    strides = draw(st.none() | pairs)
    image = draw(st.tuples(st.integers(1, 6), st.integers(1, 6)))
    assume(all(out_size(*axis) >= 1 for axis in zip(image, pool, strides or pool, padding)))
    shape = (draw(st.integers(1, 2)), draw(st.integers(1, 2)), *image)
    return shape, {"pool_size": pool, "strides": strides, "padding": padding}


def pool_out_shape(shape: tuple[int, ...], attrs: dict[str, Any]) -> tuple[int, ...]:
    strides = attrs["strides"] or attrs["pool_size"]
    spatial = zip(shape[2:], attrs["pool_size"], strides, attrs["padding"])
    return (*shape[:2], *(out_size(*axis) for axis in spatial))


@pytest.mark.parametrize("name", ["max_pool2d", "avg_pool2d", "avg_pool2d exclude pad"])
@given(case=pool_cases(), seed=seeds)
def test_pool_backward_ops_are_adjoints_of_the_pools(name: str, case: Any, seed: int) -> None:
    """Max pooling is linear around x (it picks elements of x), so the identity holds for its
    gradient too. Windows wholly in the padding (output -inf or nan) are left out."""
    shape, attrs = case
    name, *exclude = name.split()
    if exclude:
        attrs["count_include_pad"] = False
    rng = np.random.default_rng(seed)
    x = rng.standard_normal(shape)
    y = get_op(name)(x, **attrs)
    inside = np.isfinite(y)
    g = np.where(inside, rng.standard_normal(y.shape), 0.0)
    dx = get_op(name + "_backward")(g, x, **attrs)
    scale = np.sum(np.abs(g) * np.where(inside, get_op(name)(np.abs(x), **attrs), 0.0))
    assert_adjoint(np.where(inside, y, 0.0) * g, x * dx, scale)


@given(case=pool_cases(), dtype=st.sampled_from(NUMBERS), data=st.data())
def test_max_pool2d_backward_matches_loops(case: Any, dtype: np.dtype, data: st.DataObject) -> None:
    """Each window's g goes to its first largest in-image element in row-major order. Values
    in -2 .. 2 make ties common."""
    shape, attrs = case
    x = data.draw(arrays(dtype, shape, -2, 2), label="x")
    g = data.draw(arrays(dtype, pool_out_shape(shape, attrs)), label="g")
    expected, scale = np.zeros(shape, wide(g).dtype), np.zeros(shape)
    for out, window in pool_windows(shape, attrs["pool_size"], attrs["strides"] or attrs["pool_size"], attrs["padding"]):
        if not window:
            continue  # wholly in the padding: the gradient is dropped
        best = window[0]
        for index in window[1:]:
            if x[index] > x[best]:
                best = index
        expected[best] += wide(g[out])
        scale[best] += abs(float(g[out]))
    assert_close(get_op("max_pool2d_backward")(g, x, **attrs), expected, dtype, scale=scale)


@given(case=pool_cases(), dtype=st.sampled_from(FLOATS), count_include_pad=st.booleans(), data=st.data())
def test_avg_pool2d_backward_matches_loops(
    case: Any, dtype: np.dtype, count_include_pad: bool, data: st.DataObject
) -> None:
    """Each window's g, divided by the window's size (or its in-image count), goes to every
    in-image element of the window."""
    shape, attrs = case
    x = data.draw(arrays(dtype, shape), label="x")
    g = data.draw(arrays(dtype, pool_out_shape(shape, attrs)), label="g")
    expected = np.zeros(shape)
    pool = attrs["pool_size"]
    for out, window in pool_windows(shape, pool, attrs["strides"] or pool, attrs["padding"]):
        count = pool[0] * pool[1] if count_include_pad else len(window)
        for index in window:
            expected[index] += float(g[out]) / count
    result = get_op("avg_pool2d_backward")(g, x, count_include_pad=count_include_pad, **attrs)
    assert_close(result, expected, dtype, scale=np.abs(expected))


def test_max_pool2d_backward_padding_never_wins() -> None:
    """An image of -inf padded with -inf: each window's gradient still goes to an in-image
    element, its first one; 2x2 windows with stride 1 over a 2x2 image padded by 1."""
    x = np.full((1, 1, 2, 2), -np.inf, dtype=np.float32)
    g = np.ones((1, 1, 3, 3), dtype=np.float32)
    expected = np.array([[4, 2], [2, 1]], dtype=np.float32).reshape(1, 1, 2, 2)
    assert_close(get_op("max_pool2d_backward")(g, x, pool_size=2, strides=1, padding=1), expected, np.float32)


def test_max_pool2d_backward_drops_windows_wholly_in_the_padding() -> None:
    x = np.full((1, 1, 1, 1), 5, dtype=np.int32)
    g = np.arange(1, 10, dtype=np.int32).reshape(1, 1, 3, 3)
    result = get_op("max_pool2d_backward")(g, x, pool_size=1, padding=1)
    assert_close(result, np.full((1, 1, 1, 1), 5, dtype=np.int32), np.int32)  # only the centre window's g


@pytest.mark.parametrize(
    ("window", "expected"),
    [([[1.0, 1.0], [1.0, 1.0]], [[1, 0], [0, 0]]),  # a tie: the first in row-major order
     ([[1.0, np.nan], [np.nan, 2.0]], [[0, 1], [0, 0]])],  # a NaN is the maximum, the first NaN wins
)
def test_max_pool2d_backward_picks_the_first_maximum(window: list, expected: list) -> None:
    x = np.array(window, dtype=np.float64).reshape(1, 1, 2, 2)
    result = get_op("max_pool2d_backward")(np.ones((1, 1, 1, 1)), x, pool_size=2)
    assert_close(result, np.array(expected, dtype=np.float64).reshape(1, 1, 2, 2), np.float64)


@given(case=pool_cases(), seed=seeds, nan=st.booleans())
def test_max_pool2d_gather_is_the_transpose_of_max_pool2d_backward(case: Any, seed: int, nan: bool) -> None:
    """``sum(max_pool2d_backward(g, x) * h) == sum(g * max_pool2d_gather(h, x))`` for every g and
    h: both send each window through the same first maximum. x holds small integers (ties are
    common) and, sometimes, NaNs; g is random on every window, those wholly in the padding too."""
    shape, attrs = case
    rng = np.random.default_rng(seed)
    x = rng.integers(-2, 3, shape).astype(np.float64)
    if nan:
        x[rng.random(shape) < 0.2] = np.nan
    g, h = rng.standard_normal(pool_out_shape(shape, attrs)), rng.standard_normal(shape)
    back = get_op("max_pool2d_backward")(g, x, **attrs)
    gathered = get_op("max_pool2d_gather")(h, x, **attrs)
    scale = np.sum(np.abs(g) * get_op("max_pool2d_gather")(np.abs(h), x, **attrs))
    lhs, rhs = np.sum(back * h), np.sum(g * gathered)
    assert abs(lhs - rhs) <= 1e-12 * scale, f"sum(dx * h) = {lhs!r} but sum(g * gather(h)) = {rhs!r}"


@given(case=pool_cases(), dtype=st.sampled_from(NUMBERS), nan=st.booleans(), data=st.data())
def test_max_pool2d_gather_matches_loops(case: Any, dtype: np.dtype, nan: bool, data: st.DataObject) -> None:
    """Each window takes h at its first largest in-image element of x in row-major order, the
    first NaN if it has one; a window wholly in the padding gives 0. Values of x in -2 .. 2
    make ties common."""
    shape, attrs = case
    x = data.draw(arrays(dtype, shape, -2, 2), label="x")
    if nan and dtype.kind == "f":
        x = np.where(data.draw(arrays(np.bool_, shape), label="nan at"), np.nan, x).astype(dtype)
    h = data.draw(arrays(dtype, shape), label="h")
    expected = np.zeros(pool_out_shape(shape, attrs), dtype)
    for out, window in pool_windows(shape, attrs["pool_size"], attrs["strides"] or attrs["pool_size"], attrs["padding"]):
        if not window:
            continue  # wholly in the padding: 0
        best = window[0]
        for index in window[1:]:
            if np.isnan(x[best]):
                break
            if np.isnan(x[index]) or x[index] > x[best]:
                best = index
        expected[out] = h[best]
    assert_close(get_op("max_pool2d_gather")(h, x, **attrs), expected, dtype)


def test_max_pool2d_gather_padding_never_wins() -> None:
    """An image of -inf padded with -inf: each window still picks its first in-image element;
    2x2 windows with stride 1 over a 2x2 image padded by 1."""
    x = np.full((1, 1, 2, 2), -np.inf, dtype=np.float32)
    h = np.array([[1, 2], [3, 4]], dtype=np.float32).reshape(1, 1, 2, 2)
    expected = np.array([[1, 1, 2], [1, 1, 2], [3, 3, 4]], dtype=np.float32).reshape(1, 1, 3, 3)
    assert_close(get_op("max_pool2d_gather")(h, x, pool_size=2, strides=1, padding=1), expected, np.float32)


# strided_slice_backward -----------------------------------------------------------------


@st.composite
def slice_cases(draw: Any) -> tuple[tuple[int, ...], dict[str, Any], list[range]]:
    """like's shape, strided_slice attributes, and the positions read along each axis."""
    shape = draw(shapes(max_dims=3, max_side=5))
    rank = len(shape)
    if rank and draw(st.booleans()):
        axes = draw(st.lists(st.integers(0, rank - 1), unique=True))
        axes = [draw(st.sampled_from([a, a - rank])) for a in axes]
    else:
        axes = list(range(draw(st.integers(0, rank))))
    count = len(axes)
    bounds = st.lists(st.integers(-7, 7), min_size=count, max_size=count)
    begin, end = draw(bounds), draw(bounds)
    steps = draw(st.none() | st.lists(st.integers(-3, 3).filter(bool), min_size=count, max_size=count))
    read = [range(n) for n in shape]
    for k, axis in enumerate(axes):
        read[axis] = range(shape[axis])[begin[k]:end[k]:(1 if steps is None else steps[k])]
    attrs = {"begin": begin, "end": end, "strides": steps, "axes": None if axes == list(range(count)) else axes}
    return shape, attrs, read


@given(case=slice_cases(), seed=seeds)
def test_strided_slice_backward_is_the_adjoint_of_strided_slice(case: Any, seed: int) -> None:
    shape, attrs, _ = case
    rng = np.random.default_rng(seed)
    x = rng.standard_normal(shape)
    y = get_op("strided_slice")(x, **attrs)
    g = rng.standard_normal(y.shape)
    dx = get_op("strided_slice_backward")(g, x, **attrs)
    assert_adjoint(y * g, x * dx, np.sum(np.abs(y * g)))


@given(case=slice_cases(), dtype=st.sampled_from(NUMBERS + (np.dtype(bool),)), data=st.data())
def test_strided_slice_backward_matches_loops(case: Any, dtype: np.dtype, data: st.DataObject) -> None:
    """Element ``pos`` of the slice was read from ``(read[0][pos[0]], read[1][pos[1]], ...)``."""
    shape, attrs, read = case
    g = data.draw(arrays(dtype, tuple(len(r) for r in read)), label="g")
    expected = np.zeros(shape, dtype=dtype)
    for pos in np.ndindex(g.shape):
        expected[tuple(r[k] for r, k in zip(read, pos))] = g[pos]
    assert_close(get_op("strided_slice_backward")(g, np.zeros(shape, np.int8), **attrs), expected, dtype)


# take_backward --------------------------------------------------------------------------


@st.composite
def take_cases(draw: Any) -> tuple[tuple[int, ...], np.ndarray, int | None]:
    """like's shape, indices in range (small sizes: repeats are common) and the axis."""
    shape = draw(shapes(max_dims=3, max_side=3))
    axis = draw(st.none() | st.integers(-len(shape), len(shape) - 1) if shape else st.none())
    size = math.prod(shape) if axis is None else shape[axis]
    indices = draw(arrays(I32, shapes(max_dims=2, min_side=0, max_side=4), 0, size - 1))
    return shape, indices, axis


def take_out_shape(shape: tuple[int, ...], indices: np.ndarray, axis: int | None) -> tuple[int, ...]:
    if axis is None:
        return indices.shape
    axis %= len(shape)
    return shape[:axis] + indices.shape + shape[axis + 1:]


@given(case=take_cases(), seed=seeds)
def test_take_backward_is_the_adjoint_of_take(case: Any, seed: int) -> None:
    shape, indices, axis = case
    rng = np.random.default_rng(seed)
    x = rng.standard_normal(shape)
    y = get_op("take")(x, indices, axis=axis)
    g = rng.standard_normal(y.shape)
    dx = get_op("take_backward")(g, indices, x, axis=axis)
    assert_adjoint(y * g, x * dx, np.sum(np.abs(y * g)))


def take_sources(shape: tuple[int, ...], indices: np.ndarray, axis: int | None) -> Any:
    """(pos, source) for each element ``pos`` of take's result: the index of data it was read
    from, which its indices entry names."""
    for pos in np.ndindex(take_out_shape(shape, indices, axis)):
        if axis is None:
            yield pos, np.unravel_index(int(indices[pos]), shape)
        else:
            a, k = axis % len(shape), indices.ndim
            yield pos, pos[:a] + (int(indices[pos[a:a + k]]),) + pos[a + k:]


def added_back(start: np.ndarray, values: np.ndarray, indices: np.ndarray, axis: int | None) -> tuple[np.ndarray, np.ndarray]:
    """``start`` (widened) with each element of values added where take read it, and the sum of
    the magnitudes added at each place (start's included): the loop oracle of take's adjoints."""
    total, scale = wide(start), np.asarray(np.abs(start.astype(np.float64)))
    for pos, source in take_sources(start.shape, indices, axis):
        total[source] += wide(values[pos])
        scale[source] += abs(float(values[pos]))
    return total, scale


@given(case=take_cases(), dtype=st.sampled_from(NUMBERS), data=st.data())
def test_take_backward_matches_loops(case: Any, dtype: np.dtype, data: st.DataObject) -> None:
    """Repeated indices add up."""
    shape, indices, axis = case
    g = data.draw(arrays(dtype, take_out_shape(shape, indices, axis)), label="g")
    expected, scale = added_back(np.zeros(shape, dtype), g, indices, axis)
    like = np.zeros(shape, dtype=np.float16)
    assert_close(get_op("take_backward")(g, indices, like, axis=axis), expected, dtype, scale=scale)


OUT_OF_RANGE = [(3, 0), (-1, 0), (6, None), (-7, None), (2, -1)]


@pytest.mark.parametrize(("index", "axis"), OUT_OF_RANGE)
def test_take_backward_out_of_range_raises(index: int, axis: int | None) -> None:
    indices = np.array([0, index], dtype=np.int32)
    g = np.ones(take_out_shape((3, 2), indices, axis))
    with pytest.raises(IndexError, match=f"take_backward: index {index} is out of range"):
        get_op("take_backward")(g, indices, np.zeros((3, 2)), axis=axis)


# scatter_add ----------------------------------------------------------------------------


@given(case=take_cases(), dtype=st.sampled_from(NUMBERS), data=st.data())
def test_scatter_add_matches_loops(case: Any, dtype: np.dtype, data: st.DataObject) -> None:
    """data, then each update added where take would read it; data itself is left alone."""
    shape, indices, axis = case
    x = data.draw(arrays(dtype, shape), label="data")
    updates = data.draw(arrays(dtype, take_out_shape(shape, indices, axis)), label="updates")
    before = x.copy()
    expected, scale = added_back(x, updates, indices, axis)
    assert_close(get_op("scatter_add")(x, indices, updates, axis=axis), expected, dtype, scale=scale)
    np.testing.assert_array_equal(x, before)


@given(case=take_cases(), data=st.data())
def test_scatter_add_is_data_plus_take_backward(case: Any, data: st.DataObject) -> None:
    """Its definition, exact in integers (where the order of the additions does not matter)."""
    shape, indices, axis = case
    x = data.draw(arrays(I32, shape), label="data")
    updates = data.draw(arrays(I32, take_out_shape(shape, indices, axis)), label="updates")
    expected = x + get_op("take_backward")(updates, indices, x, axis=axis)
    assert_close(get_op("scatter_add")(x, indices, updates, axis=axis), expected, I32)


@given(case=take_cases(), seed=seeds)
def test_scatter_add_adds_repeated_indices_in_order(case: Any, seed: int) -> None:
    """Float additions in the order np.add.at makes them: each place gets data, then its updates
    in the order of the indices (a float32 sum depends on that order)."""
    shape, indices, axis = case
    rng = np.random.default_rng(seed)
    x = np.asarray(rng.standard_normal(shape) * 1e4, np.float32)
    updates = np.asarray(rng.standard_normal(take_out_shape(shape, indices, axis)), np.float32)
    expected = x.copy()
    for pos, source in take_sources(shape, indices, axis):
        expected[source] = np.float32(expected[source] + updates[pos])
    np.testing.assert_array_equal(get_op("scatter_add")(x, indices, updates, axis=axis), expected)


@pytest.mark.parametrize(("index", "axis"), OUT_OF_RANGE)
def test_scatter_add_out_of_range_raises(index: int, axis: int | None) -> None:
    indices = np.array([0, index], dtype=np.int32)
    updates = np.ones(take_out_shape((3, 2), indices, axis))
    with pytest.raises(IndexError, match=f"scatter_add: index {index} is out of range"):
        get_op("scatter_add")(np.zeros((3, 2)), indices, updates, axis=axis)


# concatenate_backward -------------------------------------------------------------------


@st.composite
def concat_cases(draw: Any) -> tuple[list[tuple[int, ...]], int, int]:
    """The parts' shapes (equal but along the axis, where sizes may be 0), a signed axis and an index."""
    shape = draw(shapes(min_dims=1, max_dims=3))
    axis = draw(st.integers(0, len(shape) - 1))
    sizes = draw(st.lists(st.integers(0, 3), min_size=1, max_size=4))
    parts = [shape[:axis] + (size,) + shape[axis + 1:] for size in sizes]
    signed = draw(st.sampled_from([axis, axis - len(shape)]))
    return parts, signed, draw(st.integers(0, len(parts) - 1))


@given(case=concat_cases(), seed=seeds)
def test_concatenate_backward_is_the_adjoint_of_concatenate(case: Any, seed: int) -> None:
    """``sum(y * g)`` against the sum over the parts of ``sum(x_i * dx_i)``."""
    part_shapes, axis, _ = case
    rng = np.random.default_rng(seed)
    parts = [rng.standard_normal(shape) for shape in part_shapes]
    y = get_op("concatenate")(*parts, axis=axis)
    g = rng.standard_normal(y.shape)
    terms = [x * get_op("concatenate_backward")(g, *parts, axis=axis, index=i) for i, x in enumerate(parts)]
    assert_adjoint(y * g, np.concatenate([t.ravel() for t in terms]), np.sum(np.abs(y * g)))


@given(case=concat_cases(), dtype=st.sampled_from(NUMBERS + (np.dtype(bool),)), data=st.data())
def test_concatenate_backward_matches_loops(case: Any, dtype: np.dtype, data: st.DataObject) -> None:
    """Element ``pos`` of the concatenation came from the part whose span along the axis holds
    ``pos[axis]``, at that position less the sizes of the parts before it."""
    part_shapes, axis, index = case
    a = axis % len(part_shapes[0])
    joined = list(part_shapes[0])
    joined[a] = sum(shape[a] for shape in part_shapes)
    g = data.draw(arrays(dtype, tuple(joined)), label="g")
    expected = np.zeros(part_shapes[index], dtype)
    for pos in np.ndindex(g.shape):
        part, offset = 0, pos[a]
        while offset >= part_shapes[part][a]:
            offset -= part_shapes[part][a]
            part += 1
        if part == index:
            expected[pos[:a] + (offset,) + pos[a + 1:]] = g[pos]
    parts = [np.zeros(shape, np.int8) for shape in part_shapes]  # the parts give the shapes only
    assert_close(get_op("concatenate_backward")(g, *parts, axis=axis, index=index), expected, dtype)


@pytest.mark.parametrize("index", [2, -1])
def test_concatenate_backward_index_out_of_range_raises(index: int) -> None:
    with pytest.raises(ValueError, match=f"concatenate_backward: index {index} is out of range for 2 parts"):
        get_op("concatenate_backward")(np.zeros((5, 3)), np.zeros((2, 3)), np.zeros((3, 3)), index=index)


# pad_backward ---------------------------------------------------------------------------


@st.composite
def pad_cases(draw: Any) -> tuple[tuple[int, ...], tuple[int, ...]]:
    """x's shape (sizes may be 0) and a (before, after) pair of widths for each axis."""
    shape = draw(shapes(max_dims=3, min_side=0))
    return shape, tuple(draw(st.integers(0, 2)) for _ in range(2 * len(shape)))


@given(case=pad_cases(), seed=seeds)
def test_pad_backward_is_the_adjoint_of_pad(case: Any, seed: int) -> None:
    """With pad_value 0 (the default), padding is linear in x."""
    shape, pad_width = case
    rng = np.random.default_rng(seed)
    x = rng.standard_normal(shape)
    y = get_op("pad")(x, pad_width=pad_width)
    g = rng.standard_normal(y.shape)
    dx = get_op("pad_backward")(g, x, pad_width=pad_width)
    assert_adjoint(y * g, x * dx, np.sum(np.abs(y * g)))


@given(case=pad_cases(), dtype=st.sampled_from(NUMBERS + (np.dtype(bool),)), data=st.data())
def test_pad_backward_matches_loops(case: Any, dtype: np.dtype, data: st.DataObject) -> None:
    """Element ``pos`` of the padded result came from x at ``pos`` less the widths before, when
    that is inside x; the rest is padding, whose gradient is dropped."""
    shape, pad_width = case
    before = pad_width[::2]
    padded = tuple(n + pad_width[2 * i] + pad_width[2 * i + 1] for i, n in enumerate(shape))
    g = data.draw(arrays(dtype, padded), label="g")
    expected = np.zeros(shape, dtype)
    for pos in np.ndindex(padded):
        source = tuple(p - b for p, b in zip(pos, before))
        if all(0 <= s < n for s, n in zip(source, shape)):
            expected[source] = g[pos]
    x = np.zeros(shape, np.float16)  # x gives the shape only
    assert_close(get_op("pad_backward")(g, x, pad_width=pad_width), expected, dtype)


def test_pad_backward_needs_two_widths_per_axis() -> None:
    with pytest.raises(ValueError, match="pad_backward: pad_width needs 4 numbers for rank 2, not 2"):
        get_op("pad_backward")(np.zeros((4, 3)), np.zeros((2, 3)), pad_width=(1, 1))


# errors ---------------------------------------------------------------------------------

IMAGE, KERNEL = np.zeros((1, 2, 5, 5)), np.zeros((3, 2, 3, 3))
WRONG_GRADIENT = [
    ("reshape_like", lambda: get_op("reshape_like")(np.ones(5), np.ones(4)), "cannot reshape"),
    ("conv2d_backward_input", lambda: get_op("conv2d_backward_input")(np.zeros((1, 3, 3, 2)), KERNEL, IMAGE),
     r"the gradient has shape \(1, 3, 3, 2\), but the conv2d result has shape \(1, 3, 3, 3\)"),
    ("conv2d_backward_weight", lambda: get_op("conv2d_backward_weight")(np.zeros((1, 2, 3, 3)), IMAGE, KERNEL),
     r"the gradient has shape \(1, 2, 3, 3\), but the conv2d result has shape \(1, 3, 3, 3\)"),
    ("max_pool2d_backward", lambda: get_op("max_pool2d_backward")(np.zeros((1, 2, 3, 3)), IMAGE, pool_size=2),
     r"the gradient has shape \(1, 2, 3, 3\), but the max_pool2d result has shape \(1, 2, 2, 2\)"),
    ("avg_pool2d_backward", lambda: get_op("avg_pool2d_backward")(np.zeros((1, 2, 3, 3)), IMAGE, pool_size=2),
     r"the gradient has shape \(1, 2, 3, 3\), but the avg_pool2d result has shape \(1, 2, 2, 2\)"),
    ("strided_slice_backward",
     lambda: get_op("strided_slice_backward")(np.zeros(3), np.zeros(10), begin=(2,), end=(8,), strides=(3,)),
     r"the gradient has shape \(3,\), but the strided_slice result has shape \(2,\)"),
    ("take_backward", lambda: get_op("take_backward")(np.zeros(3), np.zeros(2, np.int32), np.zeros(4)),
     r"the gradient has shape \(3,\), but the take result has shape \(2,\)"),
    ("scatter_add", lambda: get_op("scatter_add")(np.zeros((4, 2)), np.zeros(3, np.int32), np.zeros((4, 2)), axis=0),
     r"updates has shape \(4, 2\), but the take result has shape \(3, 2\)"),
    ("concatenate_backward",
     lambda: get_op("concatenate_backward")(np.zeros((6, 3)), np.zeros((2, 3)), np.zeros((3, 3)), index=0),
     r"the gradient has shape \(6, 3\), but the concatenate result has shape \(5, 3\)"),
    ("pad_backward", lambda: get_op("pad_backward")(np.zeros((3, 4)), np.zeros((2, 3)), pad_width=(1, 1, 0, 0)),
     r"the gradient has shape \(3, 4\), but the pad result has shape \(4, 3\)"),
]


@pytest.mark.parametrize(("name", "call", "message"), WRONG_GRADIENT, ids=[case[0] for case in WRONG_GRADIENT])
def test_a_gradient_of_the_wrong_shape_is_refused(name: str, call: Any, message: str) -> None:
    with pytest.raises(ValueError, match=f"{name}: {message}"):
        call()


def test_max_pool2d_gather_needs_h_of_x_shape() -> None:
    h = np.zeros((1, 2, 5, 4))
    message = r"max_pool2d_gather: h has shape \(1, 2, 5, 4\), but x has shape \(1, 2, 5, 5\); they must be equal"
    with pytest.raises(ValueError, match=message):
        get_op("max_pool2d_gather")(h, IMAGE, pool_size=2)


@pytest.mark.parametrize(
    ("name", "args", "attrs"),
    [
        ("conv2d_backward_input", [np.zeros((1, 3, 3, 3), bool), KERNEL, IMAGE], {}),
        ("max_pool2d_backward", [np.zeros((1, 2, 2, 2), bool), IMAGE.astype(bool)], {"pool_size": 2}),
        ("max_pool2d_gather", [IMAGE.astype(bool), IMAGE.astype(bool)], {"pool_size": 2}),
        ("avg_pool2d_backward", [np.zeros((1, 2, 2, 2), np.int32), IMAGE.astype(np.int32)], {"pool_size": 2}),
        ("take_backward", [np.zeros(2, bool), np.zeros(2, np.int32), np.zeros(4)], {}),
        ("take_backward", [np.zeros(2), np.zeros(2), np.zeros(4)], {}),
        ("scatter_add", [np.zeros(4, bool), np.zeros(2, np.int32), np.zeros(2, bool)], {}),
        ("scatter_add", [np.zeros(4), np.zeros(2), np.zeros(2)], {}),
        ("scatter_add", [np.zeros(4, np.float32), np.zeros(2, np.int32), np.zeros(2)], {}),
    ],
)
def test_unsupported_dtypes_are_refused(name: str, args: list[np.ndarray], attrs: dict) -> None:
    with pytest.raises(TypeError, match=name):
        get_op(name)(*args, **attrs)


# type relations, through the text format ------------------------------------------------


def F(*dims: Any) -> str:
    return f"Tensor(FloatType(32), Shape({', '.join(map(str, dims))}))"


def I(*dims: Any) -> str:  # noqa: E743
    return f"Tensor(IntType(32), Shape({', '.join(map(str, dims))}))"


def module(params: str, call: str) -> relayish.Module:
    return relayish.parse(f"def @f[n: Dim]({params}) {{\n  {call}\n}}", "t.rly")


WELL_TYPED = [
    ("reshape_like", f"%x: {F('n', 6)}, %like: {I(3, 'n', 2)}", "@reshape_like(%x, %like)", F(3, "n", 2)),
    # (7 - 3) // 2 + 1 = 3 and (8 - 3) // 2 + 1 = 3 outputs
    ("conv2d_backward_input", f"%g: {F('n', 4, 3, 3)}, %w: {F(4, 2, 3, 3)}, %x: {F('n', 2, 7, 8)}",
     "@conv2d_backward_input(%g, %w, %x, strides=(2, 2))", F("n", 2, 7, 8)),
    # dilated span 2 * (2 - 1) + 1 = 3: (5 + 2 - 3) // 1 + 1 = 5 outputs
    ("conv2d_backward_weight", f"%g: {F(2, 4, 5, 5)}, %x: {F(2, 3, 5, 5)}, %w: {I(4, 3, 2, 2)}",
     "@conv2d_backward_weight(%g, %x, %w, padding=(1, 1), dilation=(2, 2))", F(4, 3, 2, 2)),
    ("max_pool2d_backward", f"%g: {F('n', 3, 4, 4)}, %x: {F('n', 3, 8, 8)}",
     "@max_pool2d_backward(%g, %x, pool_size=(2, 2))", F("n", 3, 8, 8)),
    ("avg_pool2d_backward", f"%g: {F(1, 1, 4, 5)}, %x: {F(1, 1, 4, 5)}",
     "@avg_pool2d_backward(%g, %x, pool_size=(3, 3), strides=(1, 1), padding=(1, 1), count_include_pad=false)",
     F(1, 1, 4, 5)),
    ("strided_slice_backward", f"%g: {I(3, 'n')}, %x: {F(10, 'n')}",
     "@strided_slice_backward(%g, %x, begin=(2,), end=(8,), strides=(2,))", I(10, "n")),
    ("take_backward", f"%g: {F(4, 2, 'n')}, %i: {I(2, 'n')}, %x: {F(4, 5)}",
     "@take_backward(%g, %i, %x, axis=1)", F(4, 5)),
    ("scatter_add", f"%x: {F(4, 'n', 5)}, %i: {I(2, 3)}, %u: {F(4, 2, 3, 5)}",
     "@scatter_add(%x, %i, %u, axis=-2)", F(4, "n", 5)),
    ("concatenate_backward", f"%g: {F('n', 5)}, %a: {I('n', 2)}, %b: {I('n', 3)}",
     "@concatenate_backward(%g, %a, %b, axis=-1, index=1)", F("n", 3)),
    ("pad_backward", f"%g: {F('n + 3', 4)}, %x: {F('n', 3)}", "@pad_backward(%g, %x, pad_width=(1, 2, 0, 1))",
     F("n", 3)),
    ("max_pool2d_gather", f"%h: {F('n', 3, 8, 8)}, %x: {F('n', 3, 8, 8)}",
     "@max_pool2d_gather(%h, %x, pool_size=(2, 2))", F("n", 3, 4, 4)),
]


@pytest.mark.parametrize(("name", "params", "call", "expected"), WELL_TYPED, ids=[case[0] for case in WELL_TYPED])
def test_well_typed_calls(name: str, params: str, call: str, expected: str) -> None:
    typed = relayish.infer_types(module(params, call))
    assert str(typed["f"].ret_type) == expected


ILL_TYPED = [
    ("reshape_like", f"%x: {F(2, 'n')}, %like: {F('n', 3)}", "@reshape_like(%x, %like)",
     "cannot reshape Shape(2, n) (2*n elements) to the shape of argument 2, Shape(n, 3) (3*n elements)"),
    ("conv2d_backward_input", f"%g: {F('n', 4, 3, 2)}, %w: {F(4, 2, 3, 3)}, %x: {F('n', 2, 7, 8)}",
     "@conv2d_backward_input(%g, %w, %x, strides=(2, 2))",
     "argument 1 Shape(n, 4, 3, 2) differs from the conv2d result Shape(n, 4, 3, 3) in dimension 3: 2 vs 3"),
    ("conv2d_backward_weight", f"%g: {F(2, 4, 5, 5)}, %x: {F(2, 2, 5, 5)}, %w: {F(4, 3, 2, 2)}",
     "@conv2d_backward_weight(%g, %x, %w, padding=(1, 1), dilation=(2, 2))",
     "conv2d expects 3 input channels (weight Shape(4, 3, 2, 2)) but the input has 2 (Shape(2, 2, 5, 5))"),
    ("max_pool2d_backward", f"%g: {F('n', 3, 4, 5)}, %x: {F('n', 3, 8, 8)}",
     "@max_pool2d_backward(%g, %x, pool_size=(2, 2))",
     "argument 1 Shape(n, 3, 4, 5) differs from the max_pool2d result Shape(n, 3, 4, 4) in dimension 3: 5 vs 4"),
    ("avg_pool2d_backward", f"%g: {I(1, 1, 2, 2)}, %x: {I(1, 1, 4, 4)}",
     "@avg_pool2d_backward(%g, %x, pool_size=(2, 2))",
     "argument 1 must have a floating-point dtype, not IntType(32)"),
    ("strided_slice_backward", f"%g: {F(2, 'n')}, %x: {F(10, 'n')}",
     "@strided_slice_backward(%g, %x, begin=(2,), end=(8,), strides=(2,))",
     "argument 1 Shape(2, n) differs from the strided_slice result Shape(3, n) in dimension 0: 2 vs 3"),
    ("take_backward", f"%g: {F(4, 2, 'n')}, %i: {F(2, 'n')}, %x: {F(4, 5)}",
     "@take_backward(%g, %i, %x, axis=1)", "argument 2 must have an integer dtype, not FloatType(32)"),
    ("scatter_add", f"%x: {F(4, 5)}, %i: {I('n')}, %u: {F(4, 'n + 1')}", "@scatter_add(%x, %i, %u, axis=1)",
     "argument 3 Shape(4, n + 1) differs from the take result Shape(4, n) in dimension 1: n + 1 vs n"),
    ("concatenate_backward", f"%g: {F('n', 5)}, %a: {F('n', 2)}, %b: {F('n', 3)}",
     "@concatenate_backward(%g, %a, %b, axis=-1, index=2)", "index 2 is out of range for 2 parts"),
    ("pad_backward", f"%g: {F('n + 3', 5)}, %x: {F('n', 3)}", "@pad_backward(%g, %x, pad_width=(1, 2, 0, 1))",
     "argument 1 Shape(n + 3, 5) differs from the pad result Shape(n + 3, 4) in dimension 1: 5 vs 4"),
    ("max_pool2d_gather", f"%h: {I('n', 3, 8, 8)}, %x: {F('n', 3, 8, 8)}",
     "@max_pool2d_gather(%h, %x, pool_size=(2, 2))", "dtypes differ: IntType(32) vs FloatType(32)"),
]


@pytest.mark.parametrize(("name", "params", "call", "message"), ILL_TYPED, ids=[case[0] for case in ILL_TYPED])
def test_ill_typed_calls(name: str, params: str, call: str, message: str) -> None:
    with pytest.raises(relayish.RelayTypeError) as info:
        relayish.infer_types(module(params, call))
    assert info.value.message == f"@{name}: {message}"
    assert (info.value.span.line, info.value.span.col) == (2, 3)


def test_concatenate_backward_parts_must_concatenate() -> None:
    g = np.zeros((2, 7))
    with pytest.raises(ValueError, match=r"part 2 \(3, 4\) does not concatenate with part 1 \(2, 3\) along axis 1"):
        get_op("concatenate_backward")(g, np.zeros((2, 3)), np.zeros((3, 4)), axis=1, index=1)
    with pytest.raises(ValueError, match="axis 2 is out of range"):
        get_op("concatenate_backward")(g, np.zeros((2, 3)), np.zeros((2, 4)), axis=2, index=1)


def test_pad_backward_rejects_negative_widths() -> None:
    with pytest.raises(ValueError, match="has a negative number"):
        get_op("pad_backward")(np.zeros(3), np.zeros(4), pad_width=(-1, 0))


def test_max_pool_gradients_of_an_empty_batch() -> None:
    x = np.zeros((0, 2, 4, 4), np.float32)
    assert get_op("max_pool2d_backward")(np.zeros((0, 2, 2, 2), np.float32), x, pool_size=2).shape == (0, 2, 4, 4)
    assert get_op("max_pool2d_gather")(x, x, pool_size=2).shape == (0, 2, 2, 2)
