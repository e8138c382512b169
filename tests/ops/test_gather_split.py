"""gather, its gradient operator gather_backward, and split.

Oracles, independent of the records: ``np.take_along_axis`` on the part of data the indices
cover (gather), a loop over the indices adding in C order (gather_backward: the reference
adds in that order, so float sums are exact), ``np.split`` and ``np.array_split`` (split).
Then: the result types (symbolic dimensions included) and the errors of the type checker and
of the NumPy semantics; the CPU kernels against the reference on drawn shapes, layouts and
dtypes (as tests/jit/test_shape_kernels.py); compiled programs against the evaluator (split
is lowered to strided slices, so the JIT never sees it); gradients against finite differences,
second order included; the text format; and split in ``@relay`` code with tuple unpacking.
The CUDA kernels are tested in tests/cuda/test_cuda_gather.py.
"""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import ad
import relayish
from relayish import Float32, Float64, Int64, Tensor, relay
from relayish.dims import Dim
from relayish.errors import RelayRuntimeError, RelayTypeError
from relayish.expr import Call, Function, GlobalVar, Grad, Op, Proj, Var
from relayish.module import Module
from relayish.ops import get_op
from relayish.testing import check_equivalent, check_grad
from relayish.testing.strategies import Features, programs
from relayish.traverse import post_order
from relayish.types import FloatType, IntType, Shape, TensorType, TupleType
from tests.ad.support import directional_gradient
from tests.jit.test_shape_kernels import check, layouts, tensors
from typecheck import infer

DIRECTIONS = np.random.default_rng(5)  # the directions of the second-order checks

SETTINGS = settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow])
INDEX_DTYPES = ("int8", "uint8", "int32", "int64", "uint64")
F32, F64, I32 = FloatType(32), FloatType(64), IntType(32)


def covered(data: np.ndarray, index_shape: tuple[int, ...], axis: int) -> np.ndarray:
    """The leading part of data that indices of ``index_shape`` read along the axes but ``axis``."""
    return data[tuple(slice(None) if d == axis % data.ndim else slice(k) for d, k in enumerate(index_shape))]


def added_back(g: np.ndarray, indices: np.ndarray, shape: tuple[int, ...], axis: int) -> np.ndarray:
    """gather's adjoint by a loop: each element of g added where gather read it, in C order."""
    out = np.zeros(shape, g.dtype)
    for position in np.ndindex(*indices.shape):
        at = list(position)
        at[axis % len(shape)] = indices[position]
        out[tuple(at)] += g[position]
    return out


@st.composite
def gathers(draw: st.DrawFn, dtype: str = "float64") -> tuple[np.ndarray, np.ndarray, int]:
    """(data, indices in range, axis): data of rank 1..3 (sizes 0..4), indices of its rank, along
    the axis any length (0 where there is nothing to index), along the others at most data's."""
    rank = draw(st.integers(1, 3))
    shape = tuple(draw(st.lists(st.integers(0, 4), min_size=rank, max_size=rank)))
    axis = draw(st.integers(-rank, rank - 1))
    size = shape[axis]
    index_shape = tuple(draw(st.integers(0, 4 if size else 0)) if d == axis % rank else draw(st.integers(0, k))
                        for d, k in enumerate(shape))
    rng = np.random.default_rng(draw(st.integers(0, 2**32 - 1)))
    data = (rng.normal(size=shape) * 10).astype(dtype)
    indices = rng.integers(0, max(size, 1), index_shape).astype(draw(st.sampled_from(INDEX_DTYPES)))
    return data, indices, axis


# NumPy semantics ------------------------------------------------------------------------------


@SETTINGS
@given(case=gathers())
def test_gather_is_take_along_axis_of_the_covered_data(case: tuple) -> None:
    data, indices, axis = case
    got = get_op("gather")(data, indices, axis=axis)
    expected = np.take_along_axis(covered(data, indices.shape, axis), indices.astype(np.int64), axis)
    np.testing.assert_array_equal(got, expected, strict=True)


def test_gather_of_relays_example() -> None:
    """TVM's documented example: data [[1, 2], [3, 4]], axis 1, indices [[0, 0], [1, 0]]."""
    got = get_op("gather")(np.array([[1, 2], [3, 4]]), np.array([[0, 0], [1, 0]]), axis=1)
    np.testing.assert_array_equal(got, [[1, 1], [4, 3]])


@SETTINGS
@given(case=gathers(), seed=st.integers(0, 2**32 - 1))
def test_gather_backward_adds_g_where_gather_reads(case: tuple, seed: int) -> None:
    like, indices, axis = case
    g = np.random.default_rng(seed).normal(size=indices.shape).astype(np.float32)
    got = get_op("gather_backward")(g, indices, like, axis=axis)
    np.testing.assert_array_equal(got, added_back(g, indices, like.shape, axis), strict=True)


def test_gather_backward_adds_repeated_indices_and_wraps_integers() -> None:
    indices = np.array([[1, 1, 1], [0, 2, 0]], np.uint8)
    g = np.array([[100, 100, 100], [1, 2, 3]], np.int8)
    got = get_op("gather_backward")(g, indices, np.zeros((2, 4), np.float32), axis=1)
    np.testing.assert_array_equal(got, np.array([[0, 44, 0, 0], [4, 0, 2, 0]], np.int8), strict=True)


@st.composite
def splits(draw: st.DrawFn) -> tuple[np.ndarray, dict[str, Any]]:
    """x of rank 1..3 and split attributes it admits: sections dividing the axis, or points
    strictly inside it (any of the positions 1 .. size - 1, sorted)."""
    rank = draw(st.integers(1, 3))
    shape = tuple(draw(st.lists(st.integers(0, 6), min_size=rank, max_size=rank)))
    axis = draw(st.integers(-rank, rank - 1))
    size = shape[axis]
    x = np.random.default_rng(draw(st.integers(0, 2**32 - 1))).normal(size=shape)
    if draw(st.booleans()) or size == 0:
        divisors = [k for k in range(1, 7) if size % k == 0]
        return x, {"sections": draw(st.sampled_from(divisors)), "axis": axis}
    points = draw(st.lists(st.integers(1, size - 1), unique=True, max_size=3)) if size > 1 else []
    return x, {"indices": tuple(sorted(points)), "axis": axis}


@SETTINGS
@given(case=splits())
def test_split_is_numpys(case: tuple) -> None:
    x, attrs = case
    got = get_op("split")(x, **attrs)
    if "sections" in attrs:
        expected = np.array_split(x, attrs["sections"], axis=attrs["axis"])
        assert [p.shape for p in expected] == [p.shape for p in np.split(x, attrs["sections"], axis=attrs["axis"])]
    else:
        expected = np.split(x, list(attrs["indices"]), axis=attrs["axis"])
    assert isinstance(got, tuple) and len(got) == len(expected)
    for part, want in zip(got, expected):
        np.testing.assert_array_equal(part, want, strict=True)


@pytest.mark.parametrize(("indices", "axis", "message"), [
    (np.array([[0, 3]]), 1, "gather: index 3 is out of range for axis 1 of size 3"),
    (np.array([[-1], [0]]), 0, "gather: index -1 is out of range for axis 0 of size 2"),
    (np.array([[0], [1], [0]]), 1, r"gather: the indices \(3, 1\) are longer than the data \(2, 3\) along an axis but 1"),
    (np.array([0, 1]), 0, r"gather: the indices \(2,\) must have the rank of the data \(2, 3\)"),
])
def test_gather_errors_name_the_operator(indices: np.ndarray, axis: int, message: str) -> None:
    data = np.arange(6.0).reshape(2, 3)
    with pytest.raises((IndexError, ValueError), match=message):
        get_op("gather")(data, indices, axis=axis)
    with pytest.raises(TypeError, match="gather"):
        get_op("gather")(data, np.zeros((2, 3)), axis=0)


@pytest.mark.parametrize(("attrs", "message"), [
    ({"sections": 4, "axis": 1}, "split: axis 1 of shape \\(2, 6\\): 4 sections do not divide the size 6"),
    ({"sections": 0}, "sections must be >= 1, not 0"),
    ({"indices": (0, 3), "axis": 1}, "must rise strictly from above 0 to below the size 6"),
    ({"indices": (3, 9), "axis": 1}, "must rise strictly"),
    ({"sections": 2, "indices": (1,)}, "give exactly one of the attributes sections and indices"),
    ({}, "give exactly one of the attributes sections and indices"),
])
def test_bad_splits_are_value_errors_naming_split(attrs: dict, message: str) -> None:
    with pytest.raises(ValueError, match=message):
        get_op("split")(np.zeros((2, 6)), **attrs)


# types --------------------------------------------------------------------------------------------


def T(dtype: Any, *dims: Any) -> TensorType:
    return TensorType(dtype, Shape(*dims))


def test_result_types_with_symbolic_dimensions() -> None:
    module = relayish.parse("""
    def @main[n: Dim](%x: Tensor(FloatType(32), Shape(n, 6, 4)), %i: Tensor(IntType(64), Shape(n, 9, 3))) {
      (@gather(%x, %i, axis=1), @split(%x, sections=3, axis=1), @split(%x, indices=(1,), axis=-1)[1],
       @gather_backward(@gather(%x, %i, axis=1), %i, %x, axis=1))
    }
    """)
    fn = infer(module)["main"]
    n = Dim.atom(fn.type_params[0])
    assert fn.ret_type == TupleType([
        T(F32, n, 9, 3), TupleType([T(F32, n, 2, 4)] * 3), T(F32, n, 6, 3), T(F32, n, 6, 4)])


@pytest.mark.parametrize(("body", "message"), [
    ("@gather(%x, %k, axis=0)", "@gather: dimension 1 of argument 2 Shape(2, 7) must be at most argument 1's 6 "
                                "(only along axis 0 may it be larger), not 7"),
    ("@gather(%x, %k, axis=1)", "@gather: dimension 0 of argument 2 Shape(2, 7) must be at most argument 1's n"),
    ("@gather(%x, %x, axis=1)", "@gather: argument 2 must have an integer dtype, not FloatType(32)"),
    ("@split(%x, sections=4, axis=1)", "@split: dimension 1 of Shape(n, 6): 4 sections do not divide the size 6"),
    ("@split(%x, indices=(2, 6), axis=1)", "@split: dimension 1 of Shape(n, 6): the points (2, 6) must rise"),
    ("@split(%x, sections=1)", "@split: split dimension 0 of Shape(n, 6) must have a static size, not n"),
])
def test_type_errors_name_the_operator_and_the_rule(body: str, message: str) -> None:
    module = relayish.parse(f"def @main[n: Dim](%x: Tensor(FloatType(32), Shape(n, 6)), "
                            f"%i: Tensor(IntType(32), Shape(n, 2)), %k: Tensor(IntType(32), Shape(2, 7))) {{ {body} }}")
    with pytest.raises(RelayTypeError) as info:
        infer(module)
    assert message in str(info.value)


# CPU kernels -------------------------------------------------------------------------------------


@pytest.mark.parametrize(("dtype", "rank", "index_dtype", "axis"),
                         [("float32", 3, "int32", 1), ("int64", 2, "uint8", -1), ("bool", 1, "int64", 0),
                          ("float64", 2, "uint64", 0), ("int8", 3, "int8", -3)])
@SETTINGS
@given(data=st.data())
def test_gather_kernel_is_the_reference(dtype: str, rank: int, index_dtype: str, axis: int,
                                        data: st.DataObject) -> None:
    """Exact, any layout; the reference's errors for an index out of range (negative, the size,
    the dtype's largest: a uint64 beyond int64) and for indices longer than the data."""
    x = data.draw(tensors(dtype, rank=rank))
    size = x.shape[axis]
    index_shape = [data.draw(st.integers(0, 3)) if d == axis % rank else data.draw(st.integers(0, k))
                   for d, k in enumerate(x.shape)]
    if data.draw(st.integers(0, 5)) == 0 and rank > 1:  # longer than data along another axis
        other = (axis + 1) % rank
        index_shape[other] = x.shape[other] + 1
    rng = np.random.default_rng(data.draw(st.integers(0, 2**32 - 1)))
    indices = rng.integers(0, max(size, 1), index_shape).astype(index_dtype)
    if indices.size and (size == 0 or data.draw(st.integers(0, 4)) == 0):  # an index out of range
        low = -1 if np.dtype(index_dtype).kind == "i" else 0
        bad = data.draw(st.sampled_from([low, size, int(np.iinfo(index_dtype).max)]))
        indices.flat[0] = np.asarray(bad).astype(index_dtype)
    check("gather", [x, data.draw(layouts(indices))], axis=axis)


@pytest.mark.parametrize(("dtype", "like_dtype", "index_dtype", "axis"),
                         [("float32", "bool", "int32", 1), ("float64", "float64", "uint64", -1),
                          ("int8", "float32", "uint8", 0), ("uint16", "int32", "int64", 2)])
@SETTINGS
@given(data=st.data())
def test_gather_backward_kernel_is_the_reference(dtype: str, like_dtype: str, index_dtype: str, axis: int,
                                                 data: st.DataObject) -> None:
    """Exact: the adds happen in the reference's order (repeated indices drawn often), integers wrap."""
    like = data.draw(tensors(like_dtype, rank=3))
    size = like.shape[axis]
    index_shape = tuple(data.draw(st.integers(0, 4)) if d == axis % 3 else data.draw(st.integers(0, k))
                        for d, k in enumerate(like.shape))
    rng = np.random.default_rng(data.draw(st.integers(0, 2**32 - 1)))
    indices = rng.integers(0, max(size, 1), index_shape).astype(index_dtype)
    if indices.size and (size == 0 or data.draw(st.integers(0, 5)) == 0):
        indices.flat[-1] = np.asarray(size).astype(index_dtype)
    g = data.draw(tensors(dtype, shape=index_shape))
    if data.draw(st.integers(0, 5)) == 0:  # not the shape of the gather result
        g = data.draw(tensors(dtype, shape=tuple(k + 1 for k in index_shape)))
    check("gather_backward", [g, data.draw(layouts(indices)), like], axis=axis)


def test_kernels_raise_the_references_errors_for_ranks_and_dtypes() -> None:
    x = np.zeros((2, 3), np.float32)
    check("gather", [x, np.zeros(3, np.int32)], axis=0)
    check("gather", [x, np.zeros((2, 3), np.int32)], axis=2)
    check("gather_backward", [np.zeros(2, np.float32), np.zeros((2, 2), np.int32), x], axis=0)
    check("gather", [x, np.zeros((2, 3), np.float32)], axis=0)  # TypeError, both


# compiled programs --------------------------------------------------------------------------------


PROGRAM = """
def @main(%x: Tensor(FloatType(64), Shape(3, 6)), %i: Tensor(IntType(64), Shape(2, 4)),
          %b: Tensor(UIntType(8), Shape(2, 4))) {
  let %parts = @split(%x, sections=3, axis=1) in
  let %cut = @split(%x, indices=(1, 5), axis=-1) in
  let %g = @gather(%x, %i, axis=1) in
  (%parts[0] * %parts[2], %cut[1], %cut[2], %g, @gather(%parts[1], @cast(%b, dtype=IntType(32)), axis=-1),
   Grad(fn (%y: Tensor(FloatType(64), Shape(3, 6))) {
     @sum(@gather(%y, %i, axis=1) * %g) + @sum(@split(%y, sections=2, axis=1)[1] * %cut[0])
   })(%x))
}
"""


def test_a_compiled_program_gives_what_the_evaluator_gives() -> None:
    module = relayish.parse(PROGRAM)
    rng = np.random.default_rng(3)
    args = (rng.normal(size=(3, 6)), np.array([[5, 0, 0, 2], [1, 1, 3, 4]]), np.array([[1, 0, 1, 1], [0, 0, 0, 1]], np.uint8))
    check_equivalent(module, module, "main", args, backend_b=lambda m, n, *a: relayish.compile(m, n, tiered=False)(*a))


def test_split_is_lowered_before_ad_and_the_compiler_see_it() -> None:
    lowered = ad.lowered(infer(relayish.parse(PROGRAM)))
    names = {n.name for n in post_order(lowered["main"]) if isinstance(n, Op)}
    assert "split" not in names and "strided_slice" in names and "gather" in names


def test_an_index_out_of_range_is_a_runtime_error_in_both_backends() -> None:
    module = relayish.parse("def @main(%x: Tensor(FloatType(32), Shape(2, 3)), %i: Tensor(IntType(32), Shape(1, 2))) "
                            "{ @gather(%x, %i, axis=1) }")
    x, bad = np.zeros((2, 3), np.float32), np.array([[0, 3]], np.int32)
    with pytest.raises(RelayRuntimeError, match="@gather failed in @main: gather: index 3 is out of range"):
        relayish.evaluate(module, "main", x, bad)
    with pytest.raises(RelayRuntimeError, match="gather"):
        relayish.compile(module, "main", tiered=False)(x, bad)


GENERATED = Features(ops=("gather", "gather_backward", "split", "add", "mul", "sum", "tanh", "cast"), grad=True,
                     max_nodes=25)


@settings(max_examples=12, deadline=None, suppress_health_check=list(HealthCheck))
@given(program=programs(GENERATED))
def test_generated_programs_compiled(program) -> None:
    check_equivalent(program.module, program.module, program.entry, program.args,
                     backend_b=lambda m, n, *a: relayish.compile(m, n, tiered=False)(*a))


# gradients ------------------------------------------------------------------------------------------


def loss(call: Any, params: list[Var], weights: list[Var]) -> Module:
    """``@main(params..., weights...) = sum(part_k * w_k)`` over the parts ``call(*params)`` gives."""
    parts = call(*params)
    total = None
    for part, w in zip(parts, weights):
        term = Call(Op("sum"), [Call(Op("mul"), [part, w])])
        total = term if total is None else Call(Op("add"), [total, term])
    return Module({"main": Function([*params, *weights], total, T(F64))})


@pytest.mark.parametrize(("shape", "index_shape", "axis"), [((3, 4), (5, 4), 0), ((2, 3, 4), (2, 2, 6), -1)])
def test_gather_gradients_first_and_second_order(shape: tuple, index_shape: tuple, axis: int) -> None:
    rng = np.random.default_rng(1)
    x = rng.normal(size=shape)
    indices = rng.integers(0, shape[axis], index_shape)  # repeated indices: their gradients add up
    p = [Var("x", T(F64, *shape)), Var("i", T(IntType(64), *index_shape))]
    w = [Var("w", T(F64, *index_shape))]
    module = loss(lambda x_, i_: [Call(Op("gather"), [x_, i_], {"axis": axis})], p, w)
    inputs = [x, indices, rng.uniform(-1, 1, size=index_shape)]
    check_grad(module, inputs)
    check_grad(directional_gradient(module), [*inputs, DIRECTIONS.uniform(-1, 1, size=shape)])  # through gather_backward's gradient, gather


@pytest.mark.parametrize(("attrs", "used"), [({"sections": 3, "axis": 1}, (0, 2)),
                                             ({"indices": (1, 4), "axis": -1}, (1,)),
                                             ({"indices": (2,), "axis": 0}, (0, 1))])
def test_split_gradients_through_the_parts(attrs: dict, used: tuple) -> None:
    rng = np.random.default_rng(2)
    x = rng.normal(size=(3, 6))
    shapes = [p.shape for p in get_op("split")(x, **attrs)]
    p = [Var("x", T(F64, 3, 6))]
    w = [Var(f"w{k}", T(F64, *shapes[k])) for k in used]
    module = loss(lambda x_: [Proj(Call(Op("split"), [x_], attrs), k) for k in used], p, w)
    inputs = [x, *(rng.uniform(-1, 1, size=shapes[k]) for k in used)]
    check_grad(module, inputs)
    grads = relayish.evaluate(module.with_function("g", Function(
        list(module["main"].params), Call(Grad(GlobalVar("main")), list(module["main"].params)))), "g", *inputs)[1]
    unused = np.ones(x.shape, bool)
    for k, weights in zip(used, inputs[1:]):  # each part's weights come back in its place; the rest is 0
        place = get_op("split")(np.arange(x.size).reshape(x.shape), **attrs)[k]
        np.testing.assert_array_equal(grads[0].reshape(-1)[place.reshape(-1)], weights.reshape(-1))
        unused.reshape(-1)[place.reshape(-1)] = False
    assert not grads[0][unused].any()
    check_grad(directional_gradient(module), [*inputs, DIRECTIONS.uniform(-1, 1, size=x.shape)])


# text and the frontend ------------------------------------------------------------------------------


def test_text_round_trip() -> None:
    typed = infer(relayish.parse(PROGRAM))
    text = relayish.astext(typed)
    assert "@split(%x, sections=3, axis=1)" in text and "@split(%y, sections=2, axis=1)[1]" in text
    assert "@gather(%x, %i, axis=1)" in text
    back = relayish.parse(text)
    assert relayish.alpha_equal(back, typed)
    assert relayish.astext(back) == text


@relay
def thirds(x: Tensor[Float32, (2, 6)]) -> Tensor[Float32, (2, 2)]:
    a, b, c = relay.split(x, sections=3, axis=1)
    return a * c - b


@relay
def middle(x: Tensor[Float64, (4, 3)], i: Tensor[Int64, (2, 3)]) -> Tensor[Float64, (2, 3)]:
    head, rest = relay.split(x, indices=(1,))
    return relay.gather(rest, i, axis=0) + head


def test_relay_code_unpacks_the_parts_of_a_split() -> None:
    x = np.arange(12, dtype=np.float32).reshape(2, 6)
    a, b, c = np.split(x, 3, axis=1)
    np.testing.assert_array_equal(thirds(x), a * c - b, strict=True)
    module, names = thirds.module()
    body = module[names[id(thirds)]]
    assert any(isinstance(n, Op) and n.name == "split" for n in post_order(body))
    assert sum(isinstance(n, Proj) for n in post_order(body)) == 3
    y = np.arange(12.0).reshape(4, 3)
    i = np.array([[2, 0, 1], [0, 0, 2]])
    np.testing.assert_array_equal(middle(y, i), np.take_along_axis(y[1:], i, 0) + y[:1], strict=True)
