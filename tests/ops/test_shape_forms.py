"""Relay's forms of reshape, strided_slice and take: reshape's codes -2, -3 and -4 (next to 0 and
-1), strided_slice's shorter lists and slice_mode "size", take's modes "clip" and "wrap".

Oracles, each independent of the code under test: NumPy's reshape to a shape resolved by hand
(or built together with the codes by ``coded``), Python slicing of ``range(n)`` along each axis
(for size mode: the first ``size`` positions from the clamped start, counted by a loop) and
``np.take(mode=...)``. The type relation against hand-written types, symbolic dimensions
included; the clear errors of bad attributes; the JIT (``relayish.compile``, which expands the
lowerings of strided_slice and take) against the evaluator; gradients (first and second order)
against finite differences; the text format's round trip.
"""

from __future__ import annotations

import math
import re
from typing import Any

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import ad
import relayish
from relayish.errors import RelayTypeError
from relayish.expr import Call, Function, Op, Var
from relayish.module import Module
from relayish.ops import get_op
from relayish.testing import check_equivalent, check_grad
from relayish.testing.strategies import Features, programs
from relayish.types import FloatType, IntType, Kind, Shape, TensorType, TypeVar, UIntType
from typecheck import infer
from tests.ad.support import directional_gradient

F32, F64, I32 = FloatType(32), FloatType(64), IntType(32)
n = TypeVar("n", Kind.DIM)
RNG = np.random.default_rng(5)


def T(dtype: Any, *dims: Any) -> TensorType:
    return TensorType(dtype, Shape(*dims))


def result_type(name: str, args: tuple[TensorType, ...], attrs: dict[str, Any]) -> TensorType:
    """The type checker's type of ``@name(args...)`` with ``n`` in scope."""
    params = [Var(f"a{i}", t) for i, t in enumerate(args)]
    fn = Function(params, Call(Op(name), params, attrs), None, (n,))
    return infer(Module({"main": fn}))["main"].ret_type


def small_arrays(shape: tuple[int, ...]) -> np.ndarray:
    return np.arange(math.prod(shape), dtype=np.float32).reshape(shape)


# reshape ---------------------------------------------------------------------------------------------

# (input shape, newshape, the result's shape resolved by hand); the first ones are TVM's documented examples
RESHAPES = [
    ((2, 3, 4), (4, 0, 2), (4, 3, 2)),
    ((2, 3, 4), (2, 0, 0), (2, 3, 4)),
    ((2, 3, 4), (6, 1, -1), (6, 1, 4)),
    ((2, 3, 4), (3, -1, 8), (3, 1, 8)),
    ((2, 3, 4), (-1,), (24,)),
    ((2, 3, 4), (-2,), (2, 3, 4)),
    ((2, 3, 4), (2, -2), (2, 3, 4)),
    ((2, 3, 4), (-2, 1, 1), (2, 3, 4, 1, 1)),
    ((2, 3, 4), (-3, 4), (6, 4)),
    ((2, 3, 4, 5), (-3, -3), (6, 20)),
    ((2, 3, 4), (0, -3), (2, 12)),
    ((2, 3, 4), (-3, -2), (6, 4)),
    ((2, 3, 4), (-4, 1, 2, -2), (1, 2, 3, 4)),
    ((2, 3, 4), (2, -4, -1, 3, -2), (2, 1, 3, 4)),
    ((6, 5), (-4, -1, 2, -1), (3, 2, 5)),  # a -1 inside -4 and one of the whole shape
    ((4, 0, 3), (-3, -4, 1, -1), (0, 1, 3)),
    ((), (1, -2), (1,)),
    ((7,), (-4, 7, 1), (7, 1)),
]


@pytest.mark.parametrize("shape, newshape, target", RESHAPES, ids=str)
def test_reshape_codes_resolve_as_relay_documents(shape: tuple, newshape: tuple, target: tuple) -> None:
    x = small_arrays(shape)
    got = get_op("reshape")(x, newshape=newshape)
    np.testing.assert_array_equal(got, np.reshape(x, target), strict=True)
    assert result_type("reshape", (T(F32, *shape),), {"newshape": newshape}) == T(F32, *target)


@st.composite
def coded(draw: st.DrawFn) -> tuple[tuple[int, ...], tuple[int, ...], tuple[int, ...]]:
    """(input shape, newshape, result shape) built together: walking the input's dimensions, each
    is copied (0), written as its size, merged with the next (-3), split into two factors (-4,
    one written -1 at times) or, with the rest, copied by -2; one written size or 0 may become -1."""
    shape = tuple(draw(st.lists(st.integers(1, 6), max_size=5)))
    newshape: list[int] = []
    target: list[int] = []
    plain: list[int] = []  # positions in newshape of the 0s and sizes, each one result dimension
    i = 0
    while i < len(shape):
        code = draw(st.sampled_from(["copy", "size", "merge", "split", "rest"]))
        if code == "rest":
            newshape.append(-2)
            target += shape[i:]
            break
        if code == "merge" and i + 1 < len(shape):
            newshape.append(-3)
            target.append(shape[i] * shape[i + 1])
            i += 2
            continue
        if code == "split":
            a = draw(st.sampled_from([k for k in range(1, shape[i] + 1) if shape[i] % k == 0]))
            parts = [a, shape[i] // a]
            written = list(parts)
            if draw(st.booleans()):
                written[draw(st.integers(0, 1))] = -1
            newshape += [-4, *written]
            target += parts
        else:
            plain.append(len(newshape))
            newshape.append(0 if code == "copy" else shape[i])
            target.append(shape[i])
        i += 1
    if plain and draw(st.booleans()):
        newshape[draw(st.sampled_from(plain))] = -1
    return shape, tuple(newshape), tuple(target)


@settings(max_examples=60)
@given(case=coded())
def test_reshape_of_coded_shapes_is_numpys(case: tuple) -> None:
    shape, newshape, target = case
    x = RNG.normal(size=shape)
    np.testing.assert_array_equal(get_op("reshape")(x, newshape=newshape), np.reshape(x, target), strict=True)
    assert result_type("reshape", (T(F64, *shape),), {"newshape": newshape}) == T(F64, *target)


@pytest.mark.parametrize("shape, newshape, target", [
    ((n, 3, 4), (-3, -2), (3 * n, 4)),
    ((n, 6), (0, -4, 2, -1), (n, 2, 3)),
    ((2 * n, 5), (-4, 2, -1, -2), (2, n, 5)),
    ((n, 4), (-4, -1, 1, 0), (n, 1, 4)),
    ((3, n, 4), (-2, 1), (3, n, 4, 1)),
    ((n, n + 1), (-3,), (n * (n + 1),)),
    ((n, 2, 3), (0, -1), (n, 6)),
], ids=str)
def test_reshape_types_with_symbolic_dimensions(shape: tuple, newshape: tuple, target: tuple) -> None:
    assert result_type("reshape", (T(F32, *shape),), {"newshape": newshape}) == T(F32, *target)


@pytest.mark.parametrize("shape, newshape, message", [
    ((n, 4), (-4, 2, -1, 0), r"-4 cannot split dimension 0 \(n\) of Shape\(n, 4\) into \(2, -1\)"),
    ((6,), (-4, 4, -1), r"-4 cannot split dimension 0 \(6\) of Shape\(6\) into \(4, -1\)"),
    ((6,), (-4, 2, 2), r"-4 cannot split dimension 0 \(6\) of Shape\(6\) into \(2, 2\)"),
    ((6,), (-4, -1, -1), r"newshape\[0\] is -4, which must be followed by the two sizes .* not \(-1, -1\)"),
    ((6,), (-4, 2), r"newshape\[0\] is -4, which must be followed .* not \(2,\)"),
    ((6,), (-4, 0, 6), r"newshape\[0\] is -4, which must be followed .* not \(0, 6\)"),
    ((2, 3), (0, -3), r"newshape\[1\] is -3, which merges input dimensions 1 and 2, but the input has rank 2"),
    ((2, 3), (-2, 0), r"newshape\[1\] is 0, which copies input dimension 2, but the input has rank 2"),
    ((2, 3), (1, 1, -4, 1, 1), r"newshape\[2\] is -4, which splits input dimension 2, but the input has rank 2"),
    ((2, 3), (-5,), r"newshape \(-5,\) has -5, which is neither a size nor one of the codes"),
    ((2, 3), (-1, -4, -1, 1, 4),
     r"cannot reshape Shape\(2, 3\) \(6 elements\) to \(-1, -4, -1, 1, 4\): 6 is not a multiple of 12"),
    ((2, 3), (-3, 5), r"cannot reshape Shape\(2, 3\) \(6 elements\) to Shape\(6, 5\) \(30 elements\)"),
], ids=str)
def test_bad_reshape_codes_are_clear_errors(shape: tuple, newshape: tuple, message: str) -> None:
    with pytest.raises(RelayTypeError, match=message):
        result_type("reshape", (T(F32, *shape),), {"newshape": newshape})
    if all(isinstance(d, int) for d in shape):
        with pytest.raises(ValueError, match="reshape: " + message):
            get_op("reshape")(small_arrays(shape), newshape=newshape)


# strided_slice --------------------------------------------------------------------------------------


def sliced_by_hand(x: np.ndarray, begin: list, end: list, strides: list | None, axes: list | None,
                   size_mode: bool) -> np.ndarray:
    """The slice as positions along each axis: end mode Python's slicing of range(n) with None where
    a list is short; size mode the first ``size`` positions from the start (negative: counted from
    the end, then clamped), all of them for a negative size."""
    axes = list(range(max(len(begin), len(end), 0 if size_mode else len(strides or ())))) if axes is None else axes
    picks = [list(range(k)) for k in x.shape]
    for j, axis in enumerate(axes):
        size = x.shape[axis]
        start = begin[j] if j < len(begin) else None
        stop = end[j] if j < len(end) else None
        if size_mode:
            first = 0 if start is None else (start + size if start < 0 else start)
            first = min(max(first, 0), size)
            kept = [p for p in range(size) if p >= first]
            picks[axis] = kept if stop is None or stop < 0 else kept[:stop]
        else:
            step = strides[j] if strides is not None and j < len(strides) else 1
            picks[axis] = list(range(size))[start:stop:step]
    return x[np.ix_(*picks)] if x.ndim else x


@st.composite
def slices(draw: st.DrawFn) -> tuple[np.ndarray, dict[str, Any]]:
    """A tensor and strided_slice attributes: lists of independent lengths (at most the number of
    axes sliced), bounds past the ends, strides of either sign, either mode."""
    shape = tuple(draw(st.lists(st.integers(0, 5), min_size=1, max_size=3)))
    x = RNG.normal(size=shape)
    if draw(st.booleans()):
        axes = draw(st.permutations(range(len(shape))))[:draw(st.integers(0, len(shape)))]
        axes = [draw(st.sampled_from([a, a - len(shape)])) for a in axes]
        count = len(axes)
    else:
        axes, count = None, len(shape)
    bounds = st.lists(st.integers(-8, 8), max_size=count)
    attrs: dict[str, Any] = {"begin": draw(bounds), "end": draw(bounds), "axes": axes}
    attrs["strides"] = draw(st.none() | st.lists(st.sampled_from([-3, -2, -1, 1, 2, 3]), max_size=count))
    attrs["slice_mode"] = draw(st.sampled_from(["end", "size"]))
    return x, attrs


@settings(max_examples=150)
@given(case=slices())
def test_strided_slice_forms_are_python_slicing(case: tuple) -> None:
    x, attrs = case
    size_mode = attrs["slice_mode"] == "size"
    expected = sliced_by_hand(x, attrs["begin"], attrs["end"], attrs["strides"], attrs["axes"], size_mode)
    np.testing.assert_array_equal(get_op("strided_slice")(x, **attrs), expected, strict=True)
    assert result_type("strided_slice", (T(F64, *x.shape),), attrs) == T(F64, *expected.shape)


@pytest.mark.parametrize("shape, attrs, target", [
    ((n, 5), {"begin": (1,), "end": (), "axes": (1,)}, (n, 4)),
    ((n, 5), {"begin": (0, 1), "end": ()}, (n, 4)),  # axis 0 sliced whole
    ((n, 5), {"begin": (), "end": (), "strides": (1, -2)}, (n, 3)),
    ((n, 6), {"begin": (-2,), "end": (-1,), "axes": (1,), "slice_mode": "size"}, (n, 2)),
    ((n, 6), {"begin": (-8,), "end": (3,), "axes": (-1,), "slice_mode": "size"}, (n, 3)),
    ((n, 6), {"begin": (0, 5), "end": (-1, 4), "strides": (0, 0), "slice_mode": "size"}, (n, 1)),
    ((4, n), {"begin": (7,), "end": (2,), "slice_mode": "size"}, (0, n)),
], ids=str)
def test_strided_slice_types(shape: tuple, attrs: dict, target: tuple) -> None:
    assert result_type("strided_slice", (T(F32, *shape),), attrs) == T(F32, *target)


@pytest.mark.parametrize("shape, attrs, message", [
    ((2, 3), {"begin": (0, 0, 0), "end": ()}, "begin, end and strides have up to 3 entries, more than the 2 axes"),
    ((2, 3), {"begin": (0, 0), "end": (1,), "axes": (1,)},
     "begin, end and strides have lengths 2, 1 and 0: more entries than axes (1,) names"),
    ((2, 3), {"begin": (0,), "end": (1,), "slice_mode": "start"}, "slice_mode must be one of 'end', 'size', not 'start'"),
    ((2, 3), {"begin": (0,), "end": (), "strides": (1, 0)}, "the stride of axis 1 is 0"),
    ((2, 3), {"begin": (), "end": (), "axes": (1, -1)}, "axes (1, -1) name axis 1 twice"),
    ((2, 3), {"begin": (), "end": (), "axes": (2,)}, "axis 2 is out of range for a tensor of rank 2"),
    ((n, 3), {"begin": (1,), "end": ()}, "sliced dimension 0 of Shape(n, 3) must have a static size, not n"),
    ((n, 3), {"begin": (-1,), "end": (), "slice_mode": "size"}, "sliced dimension 0 of Shape(n, 3) must have"),
], ids=str)
def test_bad_strided_slices_are_clear_errors(shape: tuple, attrs: dict, message: str) -> None:
    with pytest.raises(RelayTypeError, match=re.escape(message)):
        result_type("strided_slice", (T(F32, *shape),), attrs)
    if all(isinstance(d, int) for d in shape):
        with pytest.raises(ValueError, match=re.escape(f"strided_slice: {message}")):
            get_op("strided_slice")(small_arrays(shape), **attrs)


def test_strided_slice_backward_keeps_lists_of_one_length() -> None:
    """The gradient operator takes the form strided_slice's lowering writes, and says so."""
    with pytest.raises(ValueError, match="strided_slice_backward: begin, end, strides and axes have lengths 1, 0"):
        get_op("strided_slice_backward")(np.ones((1, 3)), np.ones((2, 3)), begin=(1,), end=())


def canonical_slices(module: Module) -> list[dict[str, Any]]:
    return [dict(node.attrs) for node in relayish.traverse.post_order(module["main"])
            if isinstance(node, Call) and isinstance(node.callee, Op) and node.callee.name == "strided_slice"]


def test_size_mode_and_short_lists_lower_to_end_mode_lists_of_one_length() -> None:
    """What the kernels and the gradient see: explicit bounds of the static axes, whole axes left
    out; a slice of nothing but whole axes is its argument."""
    src = """
    def @main[n: Dim](%x: Tensor(FloatType(32), Shape(n, 5, 4))) {
      (@strided_slice(%x, begin=(0, -7), end=(-1, 3), slice_mode="size"),
       @strided_slice(%x, begin=(0, 1), end=(), strides=(1, 1, -1)),
       @strided_slice(%x, begin=(), end=(), axes=(0, 2)))
    }
    """
    lowered = ad.lowered(infer(relayish.parse(src)))
    assert canonical_slices(lowered) == [
        {"begin": (0,), "end": (3,), "strides": (1,), "axes": (1,)},
        {"begin": (1, 3), "end": (5, -5), "strides": (1, -1), "axes": (1, 2)},
    ]
    x = RNG.normal(size=(2, 5, 4)).astype(np.float32)
    got = relayish.evaluate(lowered, "main", x)
    np.testing.assert_array_equal(got[0], x[:, :3])
    np.testing.assert_array_equal(got[1], x[:, 1:, ::-1])
    np.testing.assert_array_equal(got[2], x)


# take ------------------------------------------------------------------------------------------------

INDEX_DTYPES = [np.int8, np.int16, np.int32, np.int64, np.uint8, np.uint16, np.uint32, np.uint64]


@settings(max_examples=100)
@given(shape=st.lists(st.integers(1, 4), min_size=1, max_size=3), data=st.data(),
       mode=st.sampled_from(["clip", "wrap"]), dtype=st.sampled_from(INDEX_DTYPES))
def test_take_modes_are_numpys(shape: list, data: st.DataObject, mode: str, dtype: type) -> None:
    """Indices within +-50 (NumPy's wrap mode counts a negative index up one size at a time)."""
    x = RNG.normal(size=shape)
    axis = data.draw(st.none() | st.integers(-len(shape), len(shape) - 1))
    low = 0 if np.iinfo(dtype).min == 0 else -50
    indices = np.array(data.draw(st.lists(st.integers(low, 50), max_size=6)), dtype=dtype)
    expected = np.take(x, indices, axis=axis, mode=mode)
    np.testing.assert_array_equal(get_op("take")(x, indices, axis=axis, mode=mode), expected, strict=True)
    index_type = T(relayish.types.BaseType.from_numpy(np.dtype(dtype)), len(indices))
    assert result_type("take", (T(F64, *shape), index_type), {"axis": axis, "mode": mode}) == T(F64, *expected.shape)


@pytest.mark.parametrize("dtype", INDEX_DTYPES)
@pytest.mark.parametrize("mode", ["clip", "wrap"])
def test_take_modes_of_extreme_indices(dtype: type, mode: str) -> None:
    """The dtype's extremes, with Python's integers as the oracle (NumPy reads uint64 indices as
    int64, so 2**64 - 1 would be -1 to it)."""
    info = np.iinfo(dtype)
    values = [int(info.min), int(info.min) + 1, -1 if info.min else 0, int(info.max) - 1, int(info.max)]
    indices = np.array(values, dtype=dtype)
    x = RNG.normal(size=(2, 5))
    positions = [min(max(v, 0), 4) if mode == "clip" else v % 5 for v in values]
    np.testing.assert_array_equal(get_op("take")(x, indices, axis=1, mode=mode), x[:, positions], strict=True)


@pytest.mark.parametrize("mode", ["clip", "wrap"])
def test_take_modes_from_an_empty_axis(mode: str) -> None:
    """As np.take: an IndexError for indices into an empty axis, an empty result for no indices."""
    data = np.zeros((2, 0), np.float32)
    with pytest.raises(IndexError, match=f"take: mode {mode} has no element to take from axis 1, of size 0"):
        get_op("take")(data, np.array([0, 3], np.int32), axis=1, mode=mode)
    with pytest.raises(IndexError):
        np.take(data, np.array([0, 3]), axis=1, mode=mode)
    assert get_op("take")(data, np.zeros(0, np.int32), axis=1, mode=mode).shape == (2, 0)
    module = relayish.parse(f"""
    def @main(%x: Tensor(FloatType(32), Shape(2, 0)), %i: Tensor(IntType(32), Shape(2))) {{
      @take(%x, %i, axis=1, mode="{mode}")
    }}""")
    indices = np.array([0, 3], np.int32)
    with pytest.raises(relayish.RelayRuntimeError, match=f"take: mode {mode} has no element to take from axis 1"):
        relayish.evaluate(module, "main", data, indices)
    # the JIT runs the lowering: a take in raise mode of the index -1 (clip) or 0 (wrap)
    with pytest.raises(relayish.RelayRuntimeError, match="IndexError: take: an index is out of range for axis 1"):
        relayish.compile(module, "main", tiered=False)(data, indices)


def test_take_mode_errors() -> None:
    with pytest.raises(RelayTypeError, match="mode must be one of 'raise', 'clip', 'wrap', not 'nearest'"):
        result_type("take", (T(F32, 3), T(I32, 2)), {"mode": "nearest"})
    with pytest.raises(ValueError, match="take: mode must be one of"):
        get_op("take")(np.ones(3), np.zeros(2, np.int32), mode="nearest")
    with pytest.raises(IndexError, match="take: index 3 is out of range"):  # raise mode stays the default
        get_op("take")(np.ones(3), np.array([3]))


def test_take_types_with_symbolic_sizes() -> None:
    assert result_type("take", (T(F32, n, 4), T(I32, 2, 3)), {"axis": 0, "mode": "wrap"}) == T(F32, 2, 3, 4)
    assert result_type("take", (T(F32, n, 4), T(UIntType(8), n)), {"mode": "clip"}) == T(F32, n)


# the JIT ---------------------------------------------------------------------------------------------

COMPILED = """
def @main[n: Dim](%x: Tensor(FloatType(32), Shape(n, 6, 4)), %i: Tensor(IntType(8), Shape(3, 2)),
                  %u: Tensor(UIntType(64), Shape(4))) {
  (@reshape(%x, newshape=(-3, -2)), @reshape(%x, newshape=(0, -4, 2, -1, 4)), @reshape(%x, newshape=(-2, 1)),
   @reshape(%x, newshape=(0, -4, -1, 3, 0)), @reshape(%x, newshape=(-1, -4, 2, 3)),
   @strided_slice(%x, begin=(0, -9, 1), end=(-1, 4, -1), slice_mode="size"),
   @strided_slice(%x, begin=(0, 5), end=(), strides=(1, -2)),
   @strided_slice(%x, begin=(2,), end=(1,), strides=(3,), axes=(-1,), slice_mode="size"),
   @strided_slice(%x, begin=(), end=(), axes=(0,)),
   @take(%x, %i, axis=1, mode="clip"), @take(%x, %i, axis=-1, mode="wrap"), @take(%x, %u, mode="wrap"),
   @take(%x, %u, axis=2, mode="clip"))
}
"""


@pytest.mark.parametrize("batch", [1, 3])
def test_compiled_forms_agree_with_the_evaluator(batch: int) -> None:
    module = relayish.parse(COMPILED)
    x = RNG.normal(size=(batch, 6, 4)).astype(np.float32)
    i = np.array([[-100, 0], [5, 127], [-1, 7]], np.int8)
    u = np.array([0, 9, 2**63 + 5, 2**64 - 1], np.uint64)
    expected = relayish.evaluate(module, "main", x, i, u)
    actual = relayish.compile(module, "main", tiered=False)(x, i, u)
    assert len(actual) == len(expected)
    for got, want in zip(actual, expected):
        np.testing.assert_array_equal(got, want, strict=True)


GENERATED = Features(ops=("reshape", "strided_slice", "take", "add", "mul", "sum", "tanh", "cast"), grad=True,
                     max_nodes=25)


@settings(max_examples=12, deadline=None, suppress_health_check=list(HealthCheck))
@given(program=programs(GENERATED))
def test_generated_programs_compiled(program: Any) -> None:
    """Programs of these operators as their rules draw them (the new forms among them), with Grad."""
    check_equivalent(program.module, program.module, program.entry, program.args,
                     backend_b=lambda m, name, *a: relayish.compile(m, name, tiered=False)(*a))


# gradients ------------------------------------------------------------------------------------------

GRADIENT_CASES = [
    ("reshape", [RNG.normal(size=(2, 3, 4))], {"newshape": (-3, -4, 2, -1)}),
    ("reshape", [RNG.normal(size=(2, 3, 4))], {"newshape": (0, -2, 1)}),
    ("strided_slice", [RNG.normal(size=(3, 5))], {"begin": (-9, 1), "end": (2, -1), "slice_mode": "size"}),
    ("strided_slice", [RNG.normal(size=(3, 5))], {"begin": (1,), "end": (), "strides": (2, -1)}),
    ("take", [RNG.normal(size=(3, 4))], {"axis": 1, "mode": "clip", "indices": np.array([[-3, 1], [9, 3]])}),
    ("take", [RNG.normal(size=(3, 4))], {"mode": "wrap", "indices": np.array([255, 13, 13, 0], np.uint8)}),
]


def loss(name: str, x: np.ndarray, attrs: dict[str, Any]) -> tuple[Module, list[np.ndarray]]:
    """``@main(x, w) = sum(op(x[, indices]) * w)``, with take's indices a constant, and its arguments."""
    attrs = dict(attrs)
    indices = attrs.pop("indices", None)
    out = get_op(name)(x, *([] if indices is None else [indices]), **attrs)
    xv, wv = Var("x", T(F64, *x.shape)), Var("w", T(F64, *out.shape))
    args = [xv] if indices is None else [xv, relayish.ir.Constant(indices)]
    body = Call(Op("sum"), [Call(Op("mul"), [Call(Op(name), args, attrs), wv])])
    return Module({"main": Function([xv, wv], body, T(F64))}), [x, RNG.uniform(-1, 1, size=out.shape)]


@pytest.mark.parametrize("case", GRADIENT_CASES, ids=lambda case: case[0])
def test_gradients_match_finite_differences(case: tuple) -> None:
    name, (x,), attrs = case
    check_grad(*loss(name, x, attrs))


@pytest.mark.parametrize("case", GRADIENT_CASES, ids=lambda case: case[0])
def test_second_derivatives_match_finite_differences(case: tuple) -> None:
    """``sum(d/dx (sum(op(x) * w)) * v)`` differentiated: the second derivatives in x (zero, the
    operators being linear in x) and the mixed ones in w, through the lowerings' gradients."""
    name, (x,), attrs = case
    first, inputs = loss(name, x, attrs)
    check_grad(directional_gradient(first), [*inputs, RNG.uniform(-1, 1, size=x.shape)])


# the text format -------------------------------------------------------------------------------------


def test_calls_with_the_new_attributes_print_and_parse_back() -> None:
    module = relayish.parse(COMPILED)
    text = str(module)
    for written in ('newshape=(0, -4, 2, -1, 4)', 'slice_mode="size"', 'end=()', 'mode="wrap"', 'mode="clip"'):
        assert written in text
    again = relayish.parse(text)
    assert str(again) == text
    assert str(infer(again)["main"].ret_type) == str(infer(module)["main"].ret_type)  # each parse has its own n
