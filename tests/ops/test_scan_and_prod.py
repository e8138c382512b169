"""prod, cumsum (with reverse, which its gradient uses) and argmax/argmin over several axes.

Oracles, independent of the operators' NumPy calls: Python loops over index sets that multiply or
add scalars of the result dtype one at a time (integers wrap as NumPy's do), and scan the reduced
elements in row-major order for the first extreme (a nan counts as the extreme, as in NumPy).
Tolerances: integers, indices, reverse and cumsum (whose loop adds in the reference's order) are
exact; a float product within ``len * eps * |loop|`` (NumPy may multiply in another order).

Then: the type relation gives the result's type; the CPU kernels against the reference on drawn
shapes, values (nan and infinities among them) and layouts (C, strided, reversed views); the
compiled programs (``relayish.compile``) against the evaluator, on written programs and on
generated ones calling these operators (with Grad); gradients against central finite
differences, prod with one and two zeros in a reduction, and second derivatives of prod and
cumsum. The CUDA kernels are tested in tests/cuda/test_cuda_scan_and_prod.py.
"""

from __future__ import annotations

import math
from typing import Any, Callable

import numpy as np
import pytest
from hypothesis import HealthCheck, assume, given, settings
from hypothesis import strategies as st

import ad
import relayish
from relayish.errors import RelayTypeError
from relayish.expr import Call, Op
from relayish.ops import get_op
from relayish.testing import check_equivalent, check_grad
from relayish.testing.strategies import Features, programs
from relayish.traverse import post_order
from relayish.types import BaseType, FloatType, Shape, TensorType
from tests.jit.kernel_support import run
from tests.jit.test_reduce_kernels import tensors
from typecheck import expr_types, infer

from .helpers import arrays, shapes

DTYPES = [np.dtype(d) for d in ("float32", "float64", "int8", "uint8", "int32", "int64")]
SETTINGS = settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow])
KERNEL_SETTINGS = settings(max_examples=20, deadline=None, suppress_health_check=[HealthCheck.too_slow])


def values(dtype: np.dtype, shape: Any) -> st.SearchStrategy:
    """Floats in [-3, 3] (exact small products); integers over the dtype's range (8 bits) or a part
    of it that still overflows in products and sums (wider ones)."""
    if dtype.kind == "f":
        return arrays(dtype, shape, -3, 3)
    info = np.iinfo(dtype)
    return arrays(dtype, shape, max(info.min, -1000), min(info.max, 1000))


@st.composite
def axis_attr(draw: st.DrawFn, rank: int) -> Any:
    """None, one axis, or a tuple of distinct axes in any order (empty included), each possibly negative."""
    if rank == 0:
        return draw(st.sampled_from([None, ()]))
    chosen = draw(st.permutations(range(rank)))[:draw(st.integers(0, rank))]
    signed = tuple(draw(st.sampled_from([a, a - rank])) for a in chosen)
    return draw(st.sampled_from([None, signed] + list(signed[:1])))


def reduced(axis: Any, exclude: bool, rank: int) -> list[int]:
    named = range(rank) if axis is None else [axis] if isinstance(axis, int) else axis
    named = {a % rank for a in named}
    return [a for a in range(rank) if (a in named) != exclude]


def each_reduction(x: np.ndarray, axes: list[int]) -> tuple[list[int], list[tuple[tuple[int, ...], list[Any]]]]:
    """The kept axes, and for each kept index (row-major) the reduced elements in row-major order."""
    kept = [a for a in range(x.ndim) if a not in axes]
    found = []
    for k in np.ndindex(*[x.shape[a] for a in kept]):
        items = []
        for r in np.ndindex(*[x.shape[a] for a in axes]):
            index = [0] * x.ndim
            for a, i in [*zip(kept, k), *zip(axes, r)]:
                index[a] = i
            items.append(x[tuple(index)])
        found.append((k, items))
    return kept, found


def loop_reduce(x: np.ndarray, axes: list[int], keepdims: bool, fold: Callable[[list[Any]], Any],
                dtype: Any) -> np.ndarray:
    """``fold`` of each reduction, shaped as a reduction over ``axes`` (with keepdims) is."""
    kept, found = each_reduction(x, axes)
    out = np.array([fold(items) for _, items in found], dtype=dtype).reshape([x.shape[a] for a in kept])
    return out.reshape([1 if a in axes else n for a, n in enumerate(x.shape)]) if keepdims else out


def product_of(dtype: np.dtype) -> Callable[[list[Any]], Any]:
    def fold(items: list[Any]) -> Any:
        acc = dtype.type(1)
        with np.errstate(all="ignore"):  # integers wrap
            for v in items:
                acc = dtype.type(acc * v)
        return acc

    return fold


def first_extreme(largest: bool) -> Callable[[list[Any]], int]:
    def fold(items: list[Any]) -> int:
        nans = [i for i, v in enumerate(items) if v != v]
        if nans:
            return nans[0]
        best = 0
        for i, v in enumerate(items):
            if (v > items[best]) if largest else (v < items[best]):
                best = i
        return best

    return fold


def type_of(name: str, arrays_: list[np.ndarray], attrs: dict) -> TensorType:
    """The type the operator's relation gives for these arguments."""
    op = get_op(name)
    types = [TensorType(BaseType.from_numpy(a.dtype), Shape(*a.shape)) for a in arrays_]
    return op.type_relation(types, op.full_attrs(op.normalize_attrs(attrs)))


def assert_typed(result: np.ndarray, name: str, arrays_: list[np.ndarray], attrs: dict) -> None:
    assert type_of(name, arrays_, attrs) == TensorType(BaseType.from_numpy(result.dtype), Shape(*result.shape))


# semantics -----------------------------------------------------------------------------------------------


@SETTINGS
@given(data=st.data(), dtype=st.sampled_from(DTYPES), keepdims=st.booleans())
def test_prod_is_the_product_in_the_dtype(data: st.DataObject, dtype: np.dtype, keepdims: bool) -> None:
    x = data.draw(values(dtype, shapes(0, 3, min_side=0, max_side=4)), label="x")
    axis = data.draw(axis_attr(x.ndim), label="axis")
    got = get_op("prod")(x, axis=axis, keepdims=keepdims)
    axes = reduced(axis, False, x.ndim)
    expected = loop_reduce(x, axes, keepdims, product_of(dtype), dtype)
    assert got.dtype == dtype and got.shape == expected.shape
    if dtype.kind == "f":
        count = math.prod(x.shape[a] for a in axes)
        np.testing.assert_allclose(got, expected, rtol=count * np.finfo(dtype).eps, atol=0)
    else:
        np.testing.assert_array_equal(got, expected)
    assert_typed(got, "prod", [x], {"axis": axis, "keepdims": keepdims})


def test_prod_wraps_integers_and_the_empty_product_is_one() -> None:
    prod = get_op("prod")
    assert prod(np.array([100, 3], np.int8)) == np.int8(44)  # 300 - 256
    assert prod(np.array([16, 16], np.uint8)).dtype == np.uint8 and prod(np.array([16, 16], np.uint8)) == 0
    np.testing.assert_array_equal(prod(np.zeros((2, 0), np.int32), axis=1), np.ones(2, np.int32), strict=True)
    np.testing.assert_array_equal(prod(np.zeros((0, 3)), axis=0, keepdims=True), np.ones((1, 3)), strict=True)
    assert np.isnan(prod(np.array([0.0, np.inf])))


def loop_cumsum(x: np.ndarray, axis: int | None, dtype: Any, exclusive: bool) -> np.ndarray:
    """Each element converted (as astype converts) and added to the running sum in order; exclusive: the
    sum before each element, 0 first."""
    target = np.dtype(x.dtype if dtype is None else dtype)
    data = x.reshape(-1) if axis is None else x
    ax = 0 if axis is None else axis % x.ndim
    out = np.zeros(data.shape, target)
    with np.errstate(all="ignore"):
        for line in np.ndindex(*[n for a, n in enumerate(data.shape) if a != ax]):
            total = None
            for i in range(data.shape[ax]):
                index = line[:ax] + (i,) + line[ax:]
                before = total
                item = data[index].astype(target)
                total = item if total is None else target.type(total + item)
                out[index] = (target.type(0) if before is None else before) if exclusive else total
    return out


@SETTINGS
@given(data=st.data(), dtype=st.sampled_from(DTYPES + [np.dtype(bool)]), exclusive=st.booleans())
def test_cumsum_adds_in_order_in_the_dtype(data: st.DataObject, dtype: np.dtype, exclusive: bool) -> None:
    x = data.draw(values(dtype, shapes(0, 3, min_side=0, max_side=5)) if dtype != bool
                  else arrays(dtype, shapes(0, 3, min_side=0, max_side=5)), label="x")
    axis = data.draw(st.none() | st.integers(-x.ndim, x.ndim - 1) if x.ndim else st.none(), label="axis")
    target = data.draw(st.sampled_from([None] + DTYPES) if dtype != bool else st.sampled_from(DTYPES[2:]),
                       label="dtype")
    attrs = {"axis": axis, "dtype": target, "exclusive": exclusive}
    got = get_op("cumsum")(x, **attrs)
    expected = loop_cumsum(x, axis, target, exclusive)
    np.testing.assert_array_equal(got, expected, strict=True)
    assert_typed(got, "cumsum", [x], attrs)


def test_cumsum_by_hand() -> None:
    cumsum = get_op("cumsum")
    x = np.array([[1, 2, 3], [4, 5, 6]], np.int32)
    np.testing.assert_array_equal(cumsum(x), np.array([1, 3, 6, 10, 15, 21], np.int32), strict=True)
    np.testing.assert_array_equal(cumsum(x, axis=0, exclusive=True), np.array([[0, 0, 0], [1, 2, 3]], np.int32),
                                  strict=True)
    np.testing.assert_array_equal(cumsum(x, axis=-1, exclusive=True), np.array([[0, 1, 3], [0, 4, 9]], np.int32),
                                  strict=True)
    np.testing.assert_array_equal(cumsum(np.array([100, 100], np.int8)), np.array([100, -56], np.int8), strict=True)
    np.testing.assert_array_equal(cumsum(np.array([True, False, True]), dtype="int32"), np.array([1, 1, 2], np.int32),
                                  strict=True)
    np.testing.assert_array_equal(cumsum(np.array([1.7, -2.9]), dtype="int64"), np.array([1, -1]), strict=True)
    np.testing.assert_array_equal(cumsum(np.array(2.5)), np.array([2.5]), strict=True)  # a 0-d tensor flattened
    assert cumsum(np.zeros((0, 2)), axis=0, exclusive=True).shape == (0, 2)


@pytest.mark.parametrize("largest", [True, False], ids=["argmax", "argmin"])
@SETTINGS
@given(data=st.data(), dtype=st.sampled_from(DTYPES), keepdims=st.booleans(), exclude=st.booleans())
def test_argmax_and_argmin_over_several_axes(largest: bool, data: st.DataObject, dtype: np.dtype, keepdims: bool,
                                             exclude: bool) -> None:
    name = "argmax" if largest else "argmin"
    x = data.draw(arrays(dtype, shapes(0, 4), 0 if dtype.kind == "u" else -2, 2), label="x")  # many ties
    if dtype.kind == "f" and x.size and data.draw(st.booleans(), label="nan"):
        x.flat[data.draw(st.integers(0, x.size - 1))] = np.nan
    axis = data.draw(axis_attr(x.ndim), label="axis")
    assume(not (exclude and axis is None))
    attrs = {"axis": axis, "keepdims": keepdims, "exclude": exclude}
    got = get_op(name)(x, **attrs)
    expected = loop_reduce(x, reduced(axis, exclude, x.ndim), keepdims, first_extreme(largest), np.int32)
    np.testing.assert_array_equal(got, expected, strict=True)
    assert_typed(got, name, [x], attrs)


def test_argmax_over_several_axes_by_hand() -> None:
    x = np.array([[[0, 5], [7, 1]], [[7, 2], [3, 9]]], np.int32)  # (2, 2, 2)
    argmax = get_op("argmax")
    # over axes 0 and 2: positions (i, k) in row-major order, i.e. 2 * i + k
    np.testing.assert_array_equal(argmax(x, axis=(2, 0)), np.array([2, 3], np.int32), strict=True)
    np.testing.assert_array_equal(argmax(x, axis=1, exclude=True, keepdims=True),
                                  np.array([[[2], [3]]], np.int32), strict=True)
    np.testing.assert_array_equal(argmax(x, axis=(), exclude=True), np.int32(7), strict=True)
    np.testing.assert_array_equal(argmax(x, axis=()), np.zeros((2, 2, 2), np.int32), strict=True)
    np.testing.assert_array_equal(get_op("argmin")(x, axis=(0, 1)), np.array([0, 1], np.int32), strict=True)
    with pytest.raises(ValueError, match="empty sequence"):
        argmax(np.zeros((2, 0, 3)), axis=(1, 2))
    with pytest.raises(ValueError, match="exclude needs axis"):
        argmax(x, exclude=True)


def test_reverse_reverses_one_axis() -> None:
    x = np.arange(24, dtype=np.float32).reshape(2, 3, 4)
    for axis in range(-3, 3):
        got = get_op("reverse")(x, axis=axis)
        expected = np.empty_like(x)
        n = x.shape[axis]
        for index in np.ndindex(*x.shape):
            source = list(index)
            source[axis] = n - 1 - index[axis]
            expected[index] = x[tuple(source)]
        np.testing.assert_array_equal(got, expected, strict=True)
        assert_typed(got, "reverse", [x], {"axis": axis})


@pytest.mark.parametrize("call, message", [
    ("@cumsum(%b)", "numeric dtype"),
    ("@cumsum(%x, dtype=BoolType)", "numeric dtype"),
    ("@cumsum(%x, axis=2)", "axis 2 is out of range"),
    ("@reverse(%s, axis=0)", "out of range"),
    ("@argmax(%x, exclude=true)", "exclude needs axis"),
    ("@argmin(%x, axis=(1, -1))", "twice"),
    ("@prod(%b)", "numeric"),
])
def test_bad_calls_are_type_errors_naming_the_operator(call: str, message: str) -> None:
    src = f"""def @main(%x: Tensor(FloatType(32), Shape(2, 3)), %b: Tensor(BoolType, Shape(3)),
                       %s: Tensor(FloatType(32), Shape())) {{ {call} }}"""
    with pytest.raises(RelayTypeError, match=message) as caught:
        infer(relayish.parse(src))
    assert f"@{call[1:call.index('(')]}" in str(caught.value)


def test_bad_run_time_calls_name_the_operator() -> None:
    with pytest.raises(TypeError, match="cumsum: the sums need a numeric dtype"):
        get_op("cumsum")(np.array([True]))
    with pytest.raises(ValueError, match="cumsum"):
        get_op("cumsum")(np.ones(3), axis=1)
    with pytest.raises(ValueError, match="reverse"):
        get_op("reverse")(np.ones(()), axis=0)


# lowerings -----------------------------------------------------------------------------------------------


def test_cumsum_lowers_axis_none_and_another_dtype_and_keeps_the_primitive_form() -> None:
    src = """def @main(%x: Tensor(FloatType(32), Shape(2, 3))) {
      (@cumsum(%x), @cumsum(%x, axis=1, dtype=IntType(32), exclusive=true), @cumsum(%x, axis=0),
       @cumsum(%x, axis=0, dtype=FloatType(32)))
    }"""
    module = infer(relayish.parse(src))
    lowered = ad.lowered(module)
    calls = [n for n in post_order(lowered["main"]) if isinstance(n, Call) and isinstance(n.callee, Op)]
    assert sorted(n.callee.name for n in calls) == ["cast", "cumsum", "cumsum", "cumsum", "cumsum", "reshape"]
    types = expr_types(lowered)
    for n in calls:
        if n.callee.name == "cumsum":
            attrs = get_op("cumsum").full_attrs(n.attrs)
            assert attrs["axis"] is not None and attrs["dtype"] in (None, types[id(n.args[0])].dtype)
    x = np.array([[1.5, -2.25, 3.0], [np.inf, 0.5, -0.0]], np.float32)
    for got, want in zip(relayish.evaluate(lowered, "main", x), relayish.evaluate(module, "main", x), strict=True):
        np.testing.assert_array_equal(got, want, strict=True)


# kernels -------------------------------------------------------------------------------------------------


def exact_products(dtype: str, shape: tuple[int, ...], seed: int) -> np.ndarray:
    """Values whose products are exact in any order (powers of 2 near 1, 0, nan, infinities)."""
    pool = np.array([0.5, -0.5, 1.0, -1.0, 2.0, -2.0, 0.0, -0.0, np.nan, np.inf, -np.inf])
    rng = np.random.default_rng(seed)
    return rng.choice(pool, size=shape, p=[0.15] * 6 + [0.035] * 2 + [0.01] * 3).astype(dtype)


def kernel_outcome(name: str, x: np.ndarray, **attrs: Any) -> tuple[Any, Any]:
    """(kernel result, reference result); where the reference raises, the kernel raises the same class."""
    try:
        expected = get_op(name)(x, **attrs)
    except ValueError:
        with pytest.raises(ValueError):
            run(name, [x], **attrs)
        return None, None
    got = run(name, [x], **attrs)
    assert (got.dtype, got.shape) == (expected.dtype, expected.shape)
    return got, expected


@pytest.mark.parametrize("dtype, rank, axis, keepdims", [
    ("float32", 3, (0, 2), False), ("float64", 2, None, True), ("float32", 2, 0, False),
    ("int8", 2, -1, False), ("uint64", 3, (1, 2), True), ("int32", 0, None, False),
])
@KERNEL_SETTINGS
@given(data=st.data())
def test_prod_kernel_matches_reference(dtype: str, rank: int, axis: Any, keepdims: bool, data: st.DataObject) -> None:
    """Bitwise for C-contiguous input (NumPy's order); other layouts with values whose products are exact."""
    x = data.draw(tensors(dtype, rank, special=data.draw(st.booleans()), limit=600))
    if not x.flags.c_contiguous and dtype.startswith("float"):
        x = exact_products(dtype, x.shape, data.draw(st.integers(0, 2**32 - 1)))
    got, expected = kernel_outcome("prod", x, axis=axis, keepdims=keepdims)
    np.testing.assert_array_equal(got, expected, strict=True)


@pytest.mark.parametrize("dtype, rank, axis, exclusive", [
    ("float32", 3, 1, False), ("float64", 2, -1, True), ("float32", 1, 0, True),
    ("int8", 2, 0, False), ("uint64", 3, 2, True),
])
@KERNEL_SETTINGS
@given(data=st.data())
def test_cumsum_kernel_matches_reference(dtype: str, rank: int, axis: int, exclusive: bool,
                                         data: st.DataObject) -> None:
    """Exact in every layout: each sum is the previous one plus the next element, as NumPy adds."""
    x = data.draw(tensors(dtype, rank, special=data.draw(st.booleans()), limit=600))
    got, expected = kernel_outcome("cumsum", x, axis=axis, exclusive=exclusive)
    np.testing.assert_array_equal(got, expected, strict=True)


def test_cumsum_kernel_is_only_for_the_primitive_form() -> None:
    """axis None and another dtype are lowered first (a reshape and a cast), so they have no kernel."""
    from jit.kernels.registry import ArgType, kernel

    with pytest.raises(NotImplementedError, match="lowering"):
        kernel("cumsum", {"axis": None, "dtype": None, "exclusive": False}, [ArgType("float32", 2)])
    with pytest.raises(NotImplementedError, match="lowering"):
        kernel("cumsum", {"axis": 0, "dtype": get_op("cumsum").normalize_attrs({"dtype": "int32"})[0][1],
                          "exclusive": False}, [ArgType("float32", 2)])


@pytest.mark.parametrize("dtype, rank, axis, keepdims, exclude", [
    ("float32", 3, (0, 2), False, False), ("float64", 3, 1, True, True), ("int32", 4, (1, 3), True, False),
    ("uint8", 2, (), False, False), ("float32", 3, (2, 0, 1), False, False), ("int8", 3, (), True, True),
])
@KERNEL_SETTINGS
@given(data=st.data())
def test_argmax_kernel_over_several_axes_matches_reference(dtype: str, rank: int, axis: Any, keepdims: bool,
                                                           exclude: bool, data: st.DataObject) -> None:
    x = data.draw(tensors(dtype, rank, special=True, limit=600))
    if x.dtype.kind == "f" and x.size and data.draw(st.booleans()):
        x = np.round(x, 0)  # ties: the first maximum wins
    got, expected = kernel_outcome("argmax", x, axis=axis, keepdims=keepdims, exclude=exclude)
    if got is not None:
        np.testing.assert_array_equal(got, expected, strict=True)


@pytest.mark.parametrize("dtype, rank, axis", [("float32", 3, 1), ("int64", 1, 0), ("bool", 2, -1)])
@KERNEL_SETTINGS
@given(data=st.data())
def test_reverse_kernel_matches_reference(dtype: str, rank: int, axis: int, data: st.DataObject) -> None:
    x = data.draw(tensors("uint8" if dtype == "bool" else dtype, rank, limit=600))
    x = x.astype(dtype)
    got, expected = kernel_outcome("reverse", x, axis=axis)
    np.testing.assert_array_equal(got, expected, strict=True)


def test_float16_products_and_sums_run_in_float32_each_rounded_once() -> None:
    """What the compiled kernels compute (Numba has no float16); NumPy's float16 loops round some
    steps and not others, depending on the layout."""
    x = np.array([[0.1, 0.2, 0.3, 1000.0, -1000.0, 0.7], [3.0, 1.1, 1.3, 1.7, 1.9, 2.3]], np.float16)
    wide = x.astype(np.float32)
    np.testing.assert_array_equal(get_op("prod")(x, axis=0), np.prod(wide, axis=0).astype(np.float16), strict=True)
    np.testing.assert_array_equal(get_op("cumsum")(x, axis=1), np.cumsum(wide, axis=1).astype(np.float16),
                                  strict=True)
    module = relayish.parse("""def @main(%x: Tensor(FloatType(16), Shape(2, 6))) {
      (@prod(%x, axis=0), @prod(%x, axis=1, keepdims=true), @cumsum(%x, axis=1), @cumsum(%x, exclusive=true))
    }""")
    got = relayish.compile(module, "main", tiered=False)(x)
    for g, e in zip(got, relayish.evaluate(module, "main", x), strict=True):
        np.testing.assert_array_equal(np.asarray(g), e, strict=True)


# compiled programs ---------------------------------------------------------------------------------------


PROGRAM = """
def @main[n: Dim](%x: Tensor(FloatType(32), Shape(n, 3, 4)), %i: Tensor(IntType(8), Shape(n, 3)),
                  %b: Tensor(BoolType, Shape(n, 3))) {
  (@prod(%x, axis=(0, 2)), @prod(%x, keepdims=true), @prod(%i, axis=1), @prod(%x, axis=()),
   @cumsum(%x, axis=1), @cumsum(%x, exclusive=true), @cumsum(%i, axis=-1, dtype=IntType(64)),
   @cumsum(%b, axis=0, dtype=IntType(32), exclusive=true), @cumsum(%x, axis=2, dtype=IntType(16)),
   @reverse(%x, axis=1), @reverse(%i, axis=0),
   @argmax(%x, axis=(0, 2)), @argmax(%x, axis=1, exclude=true, keepdims=true), @argmax(%i, axis=()),
   @argmin(%x, axis=(2, 1), keepdims=true), @argmin(%i, axis=0, exclude=true), @argmin(%x, axis=-1))
}
"""


def program_args(batch: int) -> list[np.ndarray]:
    rng = np.random.default_rng(batch)
    x = np.round(rng.normal(0, 2, size=(batch, 3, 4)), 1).astype(np.float32)
    x.flat[rng.integers(0, x.size, 3)] = [np.nan, np.inf, -0.0]
    return [x, rng.integers(-128, 128, size=(batch, 3)).astype(np.int8), rng.random((batch, 3)) < 0.5]


@pytest.mark.parametrize("batch", [1, 3])
def test_compiled_program_agrees_with_the_evaluator(batch: int) -> None:
    module = relayish.parse(PROGRAM)
    args = program_args(batch)
    expected = relayish.evaluate(module, "main", *args)
    got = relayish.compile(module, "main", tiered=False)(*args)
    for g, e in zip(got, expected, strict=True):
        np.testing.assert_array_equal(np.asarray(g), e, strict=True)


GRAD_PROGRAM = """
def @f(%x: Tensor(FloatType(64), Shape(3, 4)), %w: Tensor(FloatType(64), Shape(4))) -> Tensor(FloatType(64), Shape()) {
  @sum(@prod(%x, axis=0) * %w) + @sum(@cumsum(%x, axis=1, exclusive=true) * @reverse(%x, axis=0)) + @sum(@cumsum(%x))
}
def @main(%x: Tensor(FloatType(64), Shape(3, 4)), %w: Tensor(FloatType(64), Shape(4))) { Grad(@f)(%x, %w) }
"""


def test_compiled_gradient_agrees_with_the_evaluator() -> None:
    module = relayish.parse(GRAD_PROGRAM)
    x = np.random.default_rng(2).normal(size=(3, 4))
    x[0, 1] = x[2, 1] = x[1, 3] = 0.0  # two zeros in column 1, one in column 3
    check_equivalent(module, module, "main", [x, np.arange(4.0)],
                     backend_b=lambda m, n, *a: relayish.compile(m, n, tiered=False)(*a))


SCAN_OPS = ("prod", "cumsum", "reverse", "argmax", "argmin", "add", "mul")


@settings(max_examples=12, deadline=None, suppress_health_check=list(HealthCheck))
@given(program=programs(Features(ops=SCAN_OPS, grad=True, max_nodes=20)))
def test_generated_programs_compiled(program: Any) -> None:
    check_equivalent(program.module, program.module, program.entry, program.args,
                     backend_b=lambda m, n, *a: relayish.compile(m, n, tiered=False)(*a))


# gradients -----------------------------------------------------------------------------------------------


def attrs_text(attrs: dict) -> str:
    def value(v: Any) -> str:
        if isinstance(v, bool):
            return str(v).lower()
        if isinstance(v, tuple):
            return f"({', '.join(map(str, v))}{',' if len(v) == 1 else ''})"
        return str(v)

    return "".join(f", {k}={value(v)}" for k, v in attrs.items())


def dims_text(shape: tuple[int, ...]) -> str:
    return f"Tensor(FloatType(64), Shape({', '.join(map(str, shape))}))"


def loss_module(name: str, x: np.ndarray, attrs: dict) -> tuple[relayish.Module, tuple[int, ...]]:
    """@f(x, w) = sum(op(x)^2 * w) (squared: the second derivative of a linear op is 0 otherwise),
    @g(x, w, v) = sum(d f / d x * v), whose gradient is f's second derivative applied to v."""
    out = get_op(name)(x, **attrs).shape
    call = f"@{name}(%x{attrs_text(attrs)})"
    src = f"""
    def @f(%x: {dims_text(x.shape)}, %w: {dims_text(out)}) -> {dims_text(())} {{ @sum({call} * {call} * %w) }}
    def @g(%x: {dims_text(x.shape)}, %w: {dims_text(out)}, %v: {dims_text(x.shape)}) -> {dims_text(())} {{
      @sum(Grad(@f)(%x, %w)[1][0] * %v)
    }}
    """
    return relayish.parse(src), out


RNG = np.random.default_rng(11)
ROWS = RNG.uniform(0.5, 1.5, size=(3, 4)) * RNG.choice([-1, 1], size=(3, 4))
ONE_ZERO, TWO_ZEROS = ROWS.copy(), ROWS.copy()
ONE_ZERO[:, 2] = 0.0  # one zero in each row
TWO_ZEROS[0, 1] = TWO_ZEROS[0, 3] = TWO_ZEROS[1, 0] = 0.0  # two zeros in row 0, one in row 1, none in row 2

CASES = [
    ("prod", ROWS, {"axis": 1}),
    ("prod", ROWS, {}),
    ("prod", ONE_ZERO, {"axis": 1}),
    ("prod", ONE_ZERO, {"axis": 0, "keepdims": True}),
    ("prod", TWO_ZEROS, {"axis": -1}),
    ("prod", TWO_ZEROS, {"axis": (0, 1), "keepdims": True}),
    ("prod", ONE_ZERO, {}),
    ("prod", TWO_ZEROS, {"axis": ()}),
    ("cumsum", ROWS, {"axis": 1}),
    ("cumsum", ROWS, {"axis": 0, "exclusive": True}),
    ("cumsum", ROWS, {}),
    ("cumsum", ROWS, {"exclusive": True, "dtype": FloatType(64)}),
    ("reverse", ROWS, {"axis": -1}),
]


@pytest.mark.parametrize("case", CASES, ids=lambda case: f"{case[0]}{case[2]}")
def test_gradients_first_and_second_order_match_finite_differences(case: tuple) -> None:
    name, x, attrs = case
    module, out = loss_module(name, x, attrs)
    w, v = RNG.uniform(-1, 1, size=out), RNG.uniform(-1, 1, size=x.shape)
    check_grad(module, [x, w], name="f")
    check_grad(module, [x, w, v], name="g")


def test_prod_gradient_is_the_product_of_the_others_and_finite() -> None:
    """At zeros no nan or inf appears, even in the branches where() leaves out (a nan there would
    poison the second derivative)."""
    module = relayish.parse(f"""
    def @f(%x: {dims_text((3, 4))}) -> {dims_text(())} {{ @sum(@prod(%x, axis=1)) }}
    def @main(%x: {dims_text((3, 4))}) {{ Grad(@f)(%x) }}
    def @second(%x: {dims_text((3, 4))}) {{ Grad(@h)(%x) }}
    def @h(%x: {dims_text((3, 4))}) -> {dims_text(())} {{ @sum(Grad(@f)(%x)[1][0]) }}
    """)
    x = TWO_ZEROS
    _, (gradient,) = relayish.evaluate(module, "main", x)
    others = np.array([[np.prod(np.delete(row, j)) for j in range(4)] for row in x])
    np.testing.assert_allclose(gradient, others, rtol=1e-12)
    _, (second,) = relayish.evaluate(module, "second", x)
    assert np.all(np.isfinite(second))
