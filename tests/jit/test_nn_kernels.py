"""The kernels of jit/kernels/nn.py against the reference semantics (``get_op(name)(*arrays, **attrs)``).

Shapes, values and error cases are drawn by hypothesis; each test draws its dtypes, attributes and memory
layouts from a few fixed combinations, so the number of Numba compilations (about a second each) stays
small. Results must equal the reference exactly (dtype, shape, values; NaN where NaN), except the float
products (matmul, dense, conv2d and its gradients), which BLAS sums in its own order: there
``|kernel - reference| <= rtol * magnitude`` with magnitude the reference on the arguments' absolute
values (the sum of the terms' sizes) and rtol 1e-5 (float32) or 1e-12 (float64); and avg_pool2d, held to
1e-6 / 1e-15 of its window magnitudes although it reproduces NumPy 2's summation order bit for bit.
"""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from jit.kernels.registry import ArgType, kernel, load, load_generators
from relayish.ops import get_op

SETTINGS = settings(max_examples=20, deadline=None, suppress_health_check=[HealthCheck.too_slow])
PRODUCT_RTOL = {"float32": 1e-5, "float64": 1e-12}
AVG_RTOL = {"float32": 1e-6, "float64": 1e-15}


def run(name: str, arrays: list[np.ndarray], attrs: dict) -> np.ndarray:
    """The kernel for these full attributes and argument types, called on arrays."""
    op = get_op(name)
    full = op.full_attrs(op.normalize_attrs(attrs))
    return kernel(name, full, [ArgType(a.dtype.name, a.ndim) for a in arrays])(*arrays)


def error_class(err: Exception) -> type:
    """The class a kernel must raise for the reference's error (NumPy's AxisError is a ValueError)."""
    return next(c for c in (ValueError, IndexError, ZeroDivisionError) if isinstance(err, c))


def check(name: str, arrays: list[np.ndarray], attrs: dict, rtol: dict | None = None) -> None:
    """The kernel gives the reference's result (within ``rtol[dtype]`` of the magnitude when given), or
    raises the reference's error class; either way its arguments are unchanged."""
    before = [a.copy() for a in arrays]
    try:
        expected = get_op(name)(*arrays, **attrs)
    except (ValueError, IndexError, ZeroDivisionError) as err:
        with pytest.raises(error_class(err)):
            run(name, arrays, attrs)
        return
    got = run(name, arrays, attrs)
    if compared_exactly(got, expected, arrays, before, rtol):
        return
    finite = np.isfinite(expected)
    np.testing.assert_array_equal(got[~finite], expected[~finite])
    assert_within(name, got, expected, finite, get_op(name)(*[np.abs(a) for a in arrays], **attrs), rtol)


def compared_exactly(got: Any, expected: np.ndarray, arrays: list[np.ndarray], before: list[np.ndarray],
                     rtol: dict | None) -> bool:
    """What every kernel result is checked for (CPU and CUDA): the arguments unchanged, an array of the
    reference's dtype and shape, equal to it when no tolerance applies (then True: nothing left to check)."""
    for array, original in zip(arrays, before):
        np.testing.assert_array_equal(array, original)
    assert isinstance(got, np.ndarray)
    assert (got.dtype, got.shape) == (expected.dtype, expected.shape)
    if rtol is None or expected.dtype.kind != "f":
        np.testing.assert_array_equal(got, expected)
        return True
    return False


def assert_within(name: str, got: np.ndarray, expected: np.ndarray, finite: np.ndarray, magnitude: np.ndarray,
                  rtol: dict) -> None:
    """Where the result is finite, within ``rtol[dtype]`` times the operator's value on the absolute values."""
    error = np.abs(got[finite].astype(np.float64) - expected[finite])
    bound = rtol[expected.dtype.name] * magnitude[finite].astype(np.float64)
    assert np.all(error <= bound), f"{name}: error {np.max(error - bound)} above the bound"


def values(rng: np.random.Generator, shape: tuple[int, ...], dtype: str, ties: bool = False) -> np.ndarray:
    """Random values: normal floats, or (ties) small integers with some NaN, inf, -inf and -0.0; integers
    over the dtype's whole range (products wrap), or (ties) small ones with the extremes."""
    kind = np.dtype(dtype).kind
    if kind == "b":
        return rng.random(shape) < 0.5
    if kind == "f":
        if not ties:
            return rng.standard_normal(shape).astype(dtype)
        a = rng.integers(-3, 4, shape).astype(dtype)
        special = rng.random(shape) < 0.1
        a[special] = rng.choice(np.array([np.nan, np.inf, -np.inf, -0.0], dtype), special.sum())
        return a
    info = np.iinfo(dtype)
    if not ties:
        return rng.integers(info.min, info.max, shape, dtype=dtype, endpoint=True)
    a = rng.integers(max(info.min, -3), min(info.max, 3), shape, endpoint=True).astype(dtype)
    extreme = rng.random(shape) < 0.1
    a[extreme] = rng.choice(np.array([info.min, info.max], dtype), extreme.sum())
    return a


def laid_out(a: np.ndarray, layout: str) -> np.ndarray:
    """a as C-contiguous ("C"), Fortran-ordered ("F") or a view of every other element along its longest
    axis ("A"; NumPy calls it contiguous when no axis is longer than 1)."""
    if layout == "F":
        return np.asfortranarray(a)
    if layout == "A" and a.ndim:
        axis = int(np.argmax(a.shape))
        wide = np.zeros(a.shape[:axis] + (2 * a.shape[axis] + 1,) + a.shape[axis + 1:], a.dtype)
        every_other = (slice(None),) * axis + (slice(1, None, 2),)
        wide[every_other] = a
        return wide[every_other]
    return a


seeds = st.integers(0, 2**32 - 1)


# matmul and dense -----------------------------------------------------------------------------


@SETTINGS
@given(
    st.sampled_from([("float32", 2, 2, "C"), ("float64", 3, 2, "A"), ("int32", 3, 4, "C"), ("uint8", 2, 3, "F")]),
    st.data(),
    seeds,
)
def test_matmul(combo: tuple, data: Any, seed: int) -> None:
    dtype, rank_a, rank_b, layout = combo
    rng = np.random.default_rng(seed)
    dim = st.integers(0 if layout == "C" else 1, 4)  # NumPy calls empty arrays contiguous: one compilation less
    m, k, n = data.draw(dim), data.draw(dim), data.draw(dim)
    k_b = data.draw(st.sampled_from([k] * 9 + [k + 1]))  # sometimes the inner dimensions differ
    batch = max(rank_a, rank_b) - 2
    sizes = [data.draw(st.integers(0, 3)) for _ in range(batch)]
    # each operand's batch axis is the common size or 1 (broadcast)
    batch_a = [s if data.draw(st.booleans()) else 1 for s in sizes][batch - (rank_a - 2):]
    batch_b = [s if data.draw(st.booleans()) else 1 for s in sizes][batch - (rank_b - 2):]
    ties = data.draw(st.booleans())  # small integers with NaN and infinities, or normal values
    a = laid_out(values(rng, (*batch_a, m, k), dtype, ties), layout)
    b = laid_out(values(rng, (*batch_b, k_b, n), dtype, ties), layout)
    check("matmul", [a, b], {}, PRODUCT_RTOL)


@SETTINGS
@given(
    st.sampled_from([("float32", 2, 1, "C"), ("float64", 1, None, "A"), ("int32", 2, 1, "C"), ("int64", 3, 1, "F")]),
    st.data(),
    seeds,
)
def test_dense(combo: tuple, data: Any, seed: int) -> None:
    dtype, rank_x, rank_b, layout = combo
    rng = np.random.default_rng(seed)
    dim = st.integers(0 if layout == "C" else 1, 4)
    rows = [data.draw(dim) for _ in range(rank_x - 1)]
    units, features = data.draw(dim), data.draw(dim)
    ties = data.draw(st.booleans())
    x = laid_out(values(rng, (*rows, features), dtype, ties), layout)
    w = laid_out(values(rng, (units, data.draw(st.sampled_from([features] * 9 + [features + 1]))), dtype, ties), layout)
    arrays = [x, w]
    if rank_b is not None:
        arrays.append(laid_out(values(rng, (data.draw(st.sampled_from([units, 1])),), dtype, ties), layout))
    check("dense", arrays, {}, PRODUCT_RTOL)


@pytest.mark.parametrize("dtype", ["float32", "int32"])
def test_dense_at_a_realistic_size(dtype: str) -> None:
    rng = np.random.default_rng(0)
    check("dense", [values(rng, (64, 784), dtype), values(rng, (256, 784), dtype), values(rng, (256,), dtype)], {},
          PRODUCT_RTOL)


# conv2d and its gradients ---------------------------------------------------------------------

CONV_COMBOS = [
    ("float32", {}, "C"),
    ("float64", {"strides": 2, "padding": 1, "dilation": (1, 2)}, "A"),
    ("int32", {"strides": (1, 2), "padding": (2, 0), "dilation": 2}, "C"),
]


def conv_case(data: Any, seed: int, combo: tuple) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """x, w and a gradient g of conv2d(x, w)'s shape (sometimes one dimension off, or a window too large);
    no empty batch unless C-contiguous."""
    dtype, attrs, layout = combo
    rng = np.random.default_rng(seed)
    n, c, o = data.draw(st.integers(layout != "C", 2)), data.draw(st.integers(1, 3)), data.draw(st.integers(1, 3))
    kh, kw = data.draw(st.integers(1, 3)), data.draw(st.integers(1, 3))
    h, w = data.draw(st.integers(1, 9)), data.draw(st.integers(1, 9))
    ties = data.draw(st.booleans())
    x, weight = values(rng, (n, c, h, w), dtype, ties), values(rng, (o, c, kh, kw), dtype, ties)
    op = get_op("conv2d")
    full = op.full_attrs(op.normalize_attrs(attrs))
    (sh, sw), (ph, pw), (dh, dw) = full["strides"], full["padding"], full["dilation"]
    oh, ow = max((h + 2 * ph - dh * (kh - 1) - 1) // sh + 1, 0), max((w + 2 * pw - dw * (kw - 1) - 1) // sw + 1, 0)
    shape = [n, o, oh, ow]
    if data.draw(st.integers(0, 9)) == 0:
        shape[data.draw(st.integers(0, 3))] += 1
    return x, weight, values(rng, tuple(shape), dtype, ties)


@SETTINGS
@given(st.sampled_from(CONV_COMBOS), st.data(), seeds)
def test_conv2d(combo: tuple, data: Any, seed: int) -> None:
    _, attrs, layout = combo
    x, w, _ = conv_case(data, seed, combo)
    check("conv2d", [laid_out(x, layout), laid_out(w, layout)], attrs, PRODUCT_RTOL)


@SETTINGS
@given(st.sampled_from(CONV_COMBOS), st.data(), seeds)
def test_conv2d_backward_input(combo: tuple, data: Any, seed: int) -> None:
    _, attrs, layout = combo
    x, w, g = conv_case(data, seed, combo)
    like = x.astype(bool)  # like supplies only the shape
    check("conv2d_backward_input", [laid_out(g, layout), laid_out(w, layout), like], attrs, PRODUCT_RTOL)


@SETTINGS
@given(st.sampled_from(CONV_COMBOS), st.data(), seeds)
def test_conv2d_backward_weight(combo: tuple, data: Any, seed: int) -> None:
    dtype, attrs, layout = combo
    x, w, g = conv_case(data, seed, combo)
    check("conv2d_backward_weight", [laid_out(g, layout), laid_out(x, layout), w], attrs, PRODUCT_RTOL)


@pytest.mark.parametrize("sizes", [((16, 1, 28, 28), (20, 1, 5, 5), (16, 20, 24, 24)),
                                   ((16, 20, 12, 12), (50, 20, 5, 5), (16, 50, 8, 8))])
@pytest.mark.parametrize("name", ["conv2d", "conv2d_backward_input", "conv2d_backward_weight"])
def test_conv_at_lenet_sizes(name: str, sizes: tuple) -> None:
    rng = np.random.default_rng(1)
    x, w, g = (values(rng, shape, "float32") for shape in sizes)
    arrays = {"conv2d": [x, w], "conv2d_backward_input": [g, w, x.astype(bool)], "conv2d_backward_weight": [g, x, w]}
    check(name, arrays[name], {}, PRODUCT_RTOL)


# pooling --------------------------------------------------------------------------------------


def pool_case(data: Any, seed: int, combo: tuple, name: str, batch: int = 0) -> tuple[np.ndarray, np.ndarray]:
    """x (at least ``batch`` images, one unless C-contiguous) with ties and special values, and g of the
    pooled shape (sometimes one dimension off)."""
    dtype, attrs, layout = combo
    batch = max(batch, layout != "C")
    rng = np.random.default_rng(seed)
    shape = (data.draw(st.integers(int(batch), 2)), data.draw(st.integers(1, 2)), data.draw(st.integers(1, 8)),
             data.draw(st.integers(1, 8)))
    x = values(rng, shape, dtype, ties=True)
    try:
        pooled = list(get_op(name)(x, **attrs).shape)
    except ValueError:
        pooled = [shape[0], shape[1], 1, 1]
    if data.draw(st.integers(0, 9)) == 0:
        pooled[data.draw(st.integers(0, 3))] += 1
    return x, values(rng, tuple(pooled), dtype, ties=True)


MAX_POOL_COMBOS = [
    ("float32", {"pool_size": 2}, "C"),
    ("float64", {"pool_size": (3, 2), "strides": (1, 2), "padding": (1, 2)}, "A"),  # some windows only see padding
    ("int32", {"pool_size": 3, "strides": 2, "padding": (1, 0)}, "A"),
    ("uint8", {"pool_size": (2, 3), "strides": 1, "padding": (0, 1)}, "C"),
]
AVG_POOL_COMBOS = [
    ("float32", {"pool_size": 2}, "C"),
    ("float64", {"pool_size": (2, 9), "strides": (3, 1), "padding": (2, 4), "count_include_pad": False}, "A"),
    ("float32", {"pool_size": 3, "strides": 1, "padding": 1, "count_include_pad": False}, "A"),
]


@SETTINGS
@given(st.sampled_from(MAX_POOL_COMBOS), st.data(), seeds)
def test_max_pool2d(combo: tuple, data: Any, seed: int) -> None:
    _, attrs, layout = combo
    x, _ = pool_case(data, seed, combo, "max_pool2d")
    check("max_pool2d", [laid_out(x, layout)], attrs)


@SETTINGS
@given(st.sampled_from(AVG_POOL_COMBOS), st.data(), seeds)
def test_avg_pool2d(combo: tuple, data: Any, seed: int) -> None:
    dtype, attrs, layout = combo
    rng = np.random.default_rng(seed)
    x, _ = pool_case(data, seed, combo, "avg_pool2d")
    if data.draw(st.booleans()):  # sums that round
        x = values(rng, x.shape, dtype)
    check("avg_pool2d", [laid_out(x, layout)], attrs, AVG_RTOL)


@SETTINGS
@given(st.sampled_from(MAX_POOL_COMBOS[:3]), st.data(), seeds)
def test_max_pool2d_backward(combo: tuple, data: Any, seed: int) -> None:
    _, attrs, layout = combo
    x, g = pool_case(data, seed, combo, "max_pool2d", batch=1)  # the reference fails on N = 0
    check("max_pool2d_backward", [laid_out(g, layout), laid_out(x, layout)], attrs)


@SETTINGS
@given(st.sampled_from(MAX_POOL_COMBOS[1:]), st.data(), seeds)
def test_max_pool2d_gather(combo: tuple, data: Any, seed: int) -> None:
    dtype, attrs, layout = combo
    x, _ = pool_case(data, seed, combo, "max_pool2d", batch=1)  # the reference fails on N = 0
    h = values(np.random.default_rng(seed + 1), x.shape, dtype)
    if data.draw(st.integers(0, 9)) == 0:
        h = h[:, :, :-1]  # not x's shape
    check("max_pool2d_gather", [laid_out(h, layout), laid_out(x, layout)], attrs)


@SETTINGS
@given(st.sampled_from(AVG_POOL_COMBOS[:2]), st.data(), seeds)
def test_avg_pool2d_backward(combo: tuple, data: Any, seed: int) -> None:
    dtype, attrs, layout = combo
    x, g = pool_case(data, seed, combo, "avg_pool2d")
    g = values(np.random.default_rng(seed), g.shape, dtype)
    check("avg_pool2d_backward", [laid_out(g, layout), laid_out(x, layout)], attrs)


def test_max_pool_gradients_of_no_images() -> None:
    """N = 0, where the reference's reshape fails (relayish/ops/grad_ops.py _first_maxima)."""
    x = np.zeros((0, 2, 4, 4), np.float32)
    attrs = {"pool_size": 2}
    got = run("max_pool2d_backward", [np.zeros((0, 2, 2, 2), np.float32), x], attrs)
    assert (got.dtype, got.shape) == (np.float32, (0, 2, 4, 4))
    got = run("max_pool2d_gather", [x, x], attrs)
    assert (got.dtype, got.shape) == (np.float32, (0, 2, 2, 2))


@pytest.mark.parametrize("dtype", ["float32", "float64", "int32"])
def test_max_pool_gradients_at_the_lenet_size(dtype: str) -> None:
    """Rows long enough for the vectorized maxima loop (int32 indices) to run, with ties and special values:
    with NaNs (floats: the loop that meets one runs again exactly) and without."""
    rng = np.random.default_rng(2)
    x, g, h = (values(rng, shape, dtype, ties=True) for shape in [(16, 20, 24, 24), (16, 20, 12, 12), (16, 20, 24, 24)])
    for image in (x, np.where(x != x, np.inf, x)):
        check("max_pool2d_backward", [g, image], {"pool_size": 2})
        check("max_pool2d_gather", [h, image], {"pool_size": 2})


def test_pool_windows_wholly_in_the_padding_and_ties() -> None:
    """Windows that see only padding (max_pool2d gives -inf, avg_pool2d without the padding's count NaN, the
    gradients pass nothing on) and the first of equal maxima (-0.0 == 0.0, -inf beside the -inf padding,
    the first NaN) taking the gradient."""
    x = np.array([[[[-np.inf, -np.inf, 0.0], [-0.0, 0.0, np.nan], [np.nan, 1.0, 1.0]]]])
    max_attrs, avg_attrs = MAX_POOL_COMBOS[1][1], AVG_POOL_COMBOS[1][1]
    g = np.arange(1.0, 10.0).reshape(1, 1, 3, 3)
    check("max_pool2d", [laid_out(x, "A")], max_attrs)
    check("max_pool2d_backward", [laid_out(g, "A"), laid_out(x, "A")], max_attrs)
    check("max_pool2d_gather", [laid_out(x + 1, "A"), laid_out(x, "A")], max_attrs)
    x = np.nan_to_num(x, nan=0.5, posinf=3.0, neginf=-3.0)
    check("avg_pool2d", [laid_out(x, "A")], avg_attrs)
    check("avg_pool2d_backward", [laid_out(g[:, :, :2], "A"), laid_out(x, "A")], avg_attrs)


# gradients of shape operators -----------------------------------------------------------------

SLICE_COMBOS = [
    ("float32", 2, {"begin": (1,), "end": (-1,)}),
    ("float64", 0, {"begin": (), "end": ()}),
    ("bool", 3, {"begin": (5, -1), "end": (-100, 0), "strides": (-2, -1), "axes": (2, 0)}),
    ("int64", 1, {"begin": (-(2**40),), "end": (2**40,), "strides": (3,)}),
]


@SETTINGS
@given(st.sampled_from(SLICE_COMBOS), st.data(), seeds)
def test_strided_slice_backward(combo: tuple, data: Any, seed: int) -> None:
    dtype, rank, attrs = combo
    rng = np.random.default_rng(seed)
    like = np.zeros([data.draw(st.integers(0, 6)) for _ in range(rank)], np.float32)
    shape = list(get_op("strided_slice")(like, **attrs).shape)
    if data.draw(st.integers(0, 9)) == 0:
        shape = [n + 1 for n in shape] if rank else [1]
    g = values(rng, tuple(shape), dtype)
    check("strided_slice_backward", [laid_out(g, "A"), like], attrs)


TAKE_COMBOS = [
    ("float32", "int32", 2, 2, None),
    ("int64", "uint8", 1, 3, 1),
    ("float64", "int64", 0, 1, -1),
]


def take_case(data: Any, rng: np.random.Generator, combo: tuple) -> tuple[tuple[int, ...], np.ndarray, tuple[int, ...]]:
    """A drawn shape of take's data, indices into it (sometimes one out of range; small sizes, so
    repeats are common) and the shape take's result has."""
    _, index_dtype, index_rank, rank, axis = combo
    shape = tuple(data.draw(st.integers(0, 4)) for _ in range(rank))
    size = int(np.prod(shape)) if axis is None else shape[axis]
    high = size + (data.draw(st.integers(0, 9)) == 0)  # sometimes an index out of range
    index_shape = [data.draw(st.integers(0, 4)) for _ in range(index_rank)]
    indices = rng.integers(0, max(high, 1), index_shape).astype(index_dtype)
    if axis is None:
        return shape, indices, indices.shape
    return shape, indices, shape[:axis % rank] + indices.shape + shape[axis % rank + 1:]


@SETTINGS
@given(st.sampled_from(TAKE_COMBOS), st.data(), seeds)
def test_take_backward(combo: tuple, data: Any, seed: int) -> None:
    rng = np.random.default_rng(seed)
    shape, indices, taken = take_case(data, rng, combo)
    g = values(rng, taken, combo[0], ties=True)
    check("take_backward", [laid_out(g, "A"), indices, np.zeros(shape, np.int8)], {"axis": combo[-1]})


SCATTER_COMBOS = TAKE_COMBOS + [("uint8", "int64", 2, 2, 0), ("float32", "uint64", 1, 0, None)]


@SETTINGS
@given(st.sampled_from(SCATTER_COMBOS), st.sampled_from(["C", "F", "A"]), st.data(), seeds)
def test_scatter_add(combo: tuple, layout: str, data: Any, seed: int) -> None:
    """Sometimes updates of a wrong shape; data of any layout (the result is a C-contiguous copy)."""
    rng = np.random.default_rng(seed)
    shape, indices, taken = take_case(data, rng, combo)
    if taken and data.draw(st.integers(0, 9)) == 0:
        taken = (taken[0] + 1,) + taken[1:]
    x = laid_out(values(rng, shape, combo[0], ties=True), layout)
    updates = laid_out(values(rng, taken, combo[0], ties=True), "A")
    check("scatter_add", [x, indices, updates], {"axis": combo[-1]})
    try:
        assert run("scatter_add", [x, indices, updates], {"axis": combo[-1]}).flags.c_contiguous
    except (ValueError, IndexError):
        pass


def scatter_module(arrays: list[np.ndarray], axis: int | None) -> Any:
    """The generated module of scatter_add for these arrays' types (``accumulate`` and ``kernel``)."""
    source = load_generators()["scatter_add"]({"axis": axis}, [ArgType(a.dtype.name, a.ndim) for a in arrays])
    return load(source, "scatter_add")


@SETTINGS
@given(st.sampled_from(SCATTER_COMBOS), st.data(), seeds)
def test_scatter_add_accumulate_adds_in_place(combo: tuple, data: Any, seed: int) -> None:
    """accumulate writes the reference's result into data itself and returns it, and leaves data
    alone when it raises (every check comes before the first write); kernel never writes into data."""
    rng = np.random.default_rng(seed)
    shape, indices, taken = take_case(data, rng, combo)
    x = values(rng, shape, combo[0], ties=True)
    updates = values(rng, taken, combo[0], ties=True)
    module = scatter_module([x, indices, updates], combo[-1])
    before = x.copy()
    try:
        expected = get_op("scatter_add")(x, indices, updates, axis=combo[-1])
    except IndexError:
        with pytest.raises(IndexError):
            module.accumulate(x, indices, updates)
        np.testing.assert_array_equal(x, before)
        return
    np.testing.assert_array_equal(module.kernel(x, indices, updates), expected)
    np.testing.assert_array_equal(x, before)
    result = module.accumulate(x, indices, updates)
    assert result.ctypes.data == x.ctypes.data and result.shape == x.shape
    np.testing.assert_array_equal(x, expected)


CONCAT_COMBOS = [("float32", 2, 0, 1), ("bool", 3, -1, 0), ("int32", 1, 1, 0)]


@SETTINGS
@given(st.sampled_from(CONCAT_COMBOS), st.data(), seeds)
def test_concatenate_backward(combo: tuple, data: Any, seed: int) -> None:
    dtype, parts, axis, index = combo
    rng = np.random.default_rng(seed)
    shape = [data.draw(st.integers(0, 3)) for _ in range(2)]
    pieces = []
    for _ in range(parts):
        piece = list(shape)
        piece[axis] = data.draw(st.integers(0, 3))
        if data.draw(st.integers(0, 19)) == 0:
            piece[axis - 1] += 1  # does not concatenate
        pieces.append(np.zeros(piece, np.float64))
    try:
        joined = list(np.concatenate(pieces, axis=axis).shape)
    except ValueError:
        joined = shape
    g = values(rng, tuple(joined), dtype)
    check("concatenate_backward", [laid_out(g, "A"), *pieces], {"axis": axis, "index": index})


PAD_COMBOS = [("float32", (1, 2, 0, 3)), ("bool", (0, 0)), ("int64", ()), ("uint8", (2, 0, 0, 1, 3, 3))]


@SETTINGS
@given(st.sampled_from(PAD_COMBOS), st.data(), seeds)
def test_pad_backward(combo: tuple, data: Any, seed: int) -> None:
    dtype, widths = combo
    rng = np.random.default_rng(seed)
    rank = len(widths) // 2
    x = np.zeros([data.draw(st.integers(0, 3)) for _ in range(rank)], np.float32)
    shape = [n + widths[2 * i] + widths[2 * i + 1] for i, n in enumerate(x.shape)]
    if rank and data.draw(st.integers(0, 9)) == 0:
        shape[0] += 1
    g = values(rng, tuple(shape), dtype)
    check("pad_backward", [laid_out(g, "A"), x], {"pad_width": widths})


# errors fixed by the attributes or the ranks --------------------------------------------------

f32 = np.ones((2, 2), np.float32)
image = np.ones((1, 1, 4, 4), np.float32)


# calls whose attributes or ranks the reference rejects (tests/cuda extends the table)
STATIC_ERRORS = [
    ("matmul", [np.ones(2, np.float32), f32], {}),
    ("dense", [f32, np.ones((2, 2, 2), np.float32)], {}),
    ("conv2d", [image, image], {"strides": 0}),
    ("conv2d_backward_weight", [image, f32, image], {}),
    ("max_pool2d", [image], {"pool_size": 2, "padding": -1}),
    ("avg_pool2d_backward", [image, image], {"pool_size": 0}),
    ("strided_slice_backward", [f32, f32], {"begin": (0, 0), "end": (1, 1), "axes": (1, -1)}),
    ("strided_slice_backward", [f32, f32], {"begin": (0,), "end": (1,), "strides": (0,)}),
    ("take_backward", [f32, np.zeros(2, np.int32), f32], {"axis": 2}),
    ("scatter_add", [f32, np.zeros(2, np.int32), f32], {"axis": -3}),
    ("concatenate_backward", [f32, f32], {"index": 1}),
    ("pad_backward", [f32, f32], {"pad_width": (1, 1)}),
    ("pad_backward", [f32, f32], {"pad_width": (1, 1, -1, 0)}),
]


@pytest.mark.parametrize("name, arrays, attrs", STATIC_ERRORS)
def test_static_errors(name: str, arrays: list[np.ndarray], attrs: dict) -> None:
    check(name, arrays, attrs)


@pytest.mark.parametrize("index, axis", [(3, 0), (-1, 1), (6, None), (2**63, None)])
def test_scatter_add_accumulate_checks_every_index_before_writing(index: int, axis: int | None) -> None:
    """In range indices before the bad one, and updates of a wrong shape: the IndexError comes
    first (as in the reference) and data is untouched."""
    x = np.arange(6, dtype=np.float64).reshape(3, 2)
    indices = np.array([0, 1, index], np.uint64 if index >= 2**63 else np.int64)
    updates = np.ones(indices.shape if axis is None else (4, 4))
    module = scatter_module([x, indices, updates], axis)
    with pytest.raises(IndexError, match="scatter_add: index .* is out of range"):
        get_op("scatter_add")(x, indices, updates, axis=axis)
    with pytest.raises(IndexError, match=f"scatter_add: index {index} is out of range"):
        module.accumulate(x, indices, updates)
    np.testing.assert_array_equal(x, np.arange(6.0).reshape(3, 2))


def test_scatter_add_of_mixed_dtypes_has_no_kernel() -> None:
    """The type checker rejects the call, and so does the generator (as the reference does)."""
    args = [f32, np.zeros(2, np.int32), np.ones((2, 2), np.float64)]
    with pytest.raises(TypeError, match="scatter_add"):
        get_op("scatter_add")(*args)
    with pytest.raises(TypeError, match="scatter_add"):
        run("scatter_add", args, {})


def test_float16_has_no_kernel() -> None:
    with pytest.raises(NotImplementedError):
        run("matmul", [f32.astype(np.float16)] * 2, {})
