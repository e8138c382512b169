"""Operators written as index expressions: their derived semantics against the built-in operators
and NumPy, their derived type relation against hand-computed types, and the errors of both."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

import relayish
from relayish import Dim, Float, Tensor, ix, relay
from relayish.errors import RelayError, RelayTypeError
from relayish.ops import get_op
from relayish.ops.registry import unregister_user_op
from relayish.types import BaseType, Shape, TensorType
from tests.ix import definitions
from typecheck import infer

F32 = "Tensor(FloatType(32), Shape({}))"
N = Dim("N")


def builtin(name: str, *args: np.ndarray, **attrs) -> np.ndarray:
    op = get_op(name)
    return op.compute(*args, **op.full_attrs(attrs))


def floats(rng: np.random.Generator, *shape: int) -> np.ndarray:
    return rng.standard_normal(shape).astype(np.float32)


@given(n=st.integers(0, 5), k=st.integers(0, 6), m=st.integers(0, 5), seed=st.integers(0, 2**32 - 1))
def test_matmul_is_the_builtin_matmul(ops, n, k, m, seed):
    rng = np.random.default_rng(seed)
    a, b = floats(rng, n, k), floats(rng, k, m)
    got = ops["ix_matmul"].compute(a, b)
    assert got.dtype == np.float32 and got.shape == (n, m)
    np.testing.assert_allclose(got, builtin("matmul", a, b), rtol=1e-5, atol=1e-5)


@given(b=st.integers(0, 3), n=st.integers(0, 4), k=st.integers(0, 5), m=st.integers(0, 4), seed=st.integers(0, 2**32 - 1))
def test_batched_matmul_dense_and_squared_distances_are_numpys(ops, b, n, k, m, seed):
    rng = np.random.default_rng(seed)
    a, c = floats(rng, b, n, k), floats(rng, b, k, m)
    np.testing.assert_allclose(ops["ix_bmm"].compute(a, c), builtin("matmul", a, c),
                               rtol=1e-5, atol=1e-5)
    x, w = floats(rng, n, k), floats(rng, m, k)
    np.testing.assert_allclose(ops["ix_dense"].compute(x, w), builtin("dense", x, w), rtol=1e-5, atol=1e-5)
    expected = ((x.astype(np.float64)[:, None, :] - w[None, :, :]) ** 2).sum(axis=2)
    np.testing.assert_allclose(ops["ix_sqdist"].compute(x, w), expected, rtol=1e-5, atol=1e-5)


@given(data=st.data(), seed=st.integers(0, 2**32 - 1))
def test_conv2d_with_stride_and_padding_is_the_builtin_conv2d(ops, data, seed):
    stride, pad = data.draw(st.sampled_from([(1, 0), (2, 1)]), label="stride, padding")
    n, c, f = (data.draw(st.integers(1, 3)) for _ in range(3))
    kh, kw = data.draw(st.integers(1, 3)), data.draw(st.integers(1, 3))
    h, w = data.draw(st.integers(max(kh - 2 * pad, 1), 7)), data.draw(st.integers(max(kw - 2 * pad, 1), 7))
    rng = np.random.default_rng(seed)
    x, k = floats(rng, n, c, h, w), floats(rng, f, c, kh, kw)
    got = ops[f"ix_conv_s{stride}p{pad}"].compute(x, k)
    expected = builtin("conv2d", x, k, strides=(stride, stride), padding=(pad, pad))
    assert got.shape == expected.shape
    np.testing.assert_allclose(got, expected, rtol=1e-4, atol=1e-5)


def test_max_pool2d_batched_trace_diag_transpose_and_gather_are_numpys(ops):
    rng = np.random.default_rng(0)
    x = floats(rng, 2, 3, 5, 6)
    x[0, 0, 0, 0] = np.nan  # NaN wins a window, as in the built-in
    np.testing.assert_array_equal(ops["ix_max_pool2d"].compute(x), builtin("max_pool2d", x, pool_size=(2, 2)))
    cube = floats(rng, 4, 3, 3)
    np.testing.assert_allclose(ops["ix_batched_trace"].compute(cube), np.trace(cube, axis1=1, axis2=2), rtol=1e-6)
    square = floats(rng, 4, 4)
    np.testing.assert_array_equal(ops["ix_diag"].compute(square), np.diag(square))
    np.testing.assert_array_equal(ops["ix_transpose"].compute(x[0, 0]), x[0, 0].T)
    idx = np.array([2, 0, 2, 1], np.int32)
    np.testing.assert_array_equal(ops["ix_gather"].compute(square, idx), builtin("take", square, idx, axis=0))


@given(n=st.integers(1, 30), seed=st.integers(0, 2**32 - 1))
def test_a_guarded_stencil_reads_zero_outside(ops, n, seed):
    x = floats(np.random.default_rng(seed), n)
    expected = np.convolve(x.astype(np.float64), [0.25, 0.5, 0.25])[1:n + 1]
    got = ops["ix_stencil"].compute(x)
    assert got.dtype == np.float32
    np.testing.assert_allclose(got, expected, rtol=1e-6, atol=1e-6)


def test_softmax_with_its_max_and_sum_reductions_is_the_builtin_softmax(ops):
    x = floats(np.random.default_rng(1), 4, 7) * 30
    np.testing.assert_allclose(ops["ix_softmax"].compute(x), builtin("softmax", x, axis=-1), rtol=1e-5,
                               atol=1e-7)


def test_empty_reductions_give_the_identity():
    @ix.operator(name="ix_test_empty")
    def folds(x):
        k = ix.axis(x.shape[0])
        return ix.tensor((3,), lambda i: ix.sum(x[k], k) + ix.prod(x[k], k) * 10 + ix.max(x[k], k))

    try:
        got = folds.compute(np.zeros(0, np.float32))
        np.testing.assert_array_equal(got, np.full(3, -np.inf, np.float32))
    finally:
        unregister_user_op("ix_test_empty")


def test_an_unguarded_read_outside_an_input_names_it_and_the_output_element(ops):
    with pytest.raises(ValueError, match=r"ix_unguarded: output element \(0,\) reads x outside its shape \(4,\)"):
        ops["ix_unguarded"].compute(np.ones(4, np.float32))
    with pytest.raises(ValueError, match="reads X outside its shape"):
        ops["ix_gather"].compute(np.ones((3, 2), np.float32), np.array([0, 3]))


@pytest.mark.parametrize(("body", "expected"), [
    (lambda x, y, i: x[i] + i * 2 + 0.5, np.float32),  # indices and Python numbers are weak: x's float32
    (lambda x, y, i: y[i] * 0.5, np.float64),  # an int32 array times a Python float: NumPy's float64
    (lambda x, y, i: y[i] + i, np.int32),
    (lambda x, y, i: ix.cast(x[i], "int8"), np.int8),
    (lambda x, y, i: x[i] > y[i], np.bool_),
    (lambda x, y, i: ix.tanh(y[i]), np.float64),
    (lambda x, y, i: i * 0.5, np.float32),  # weak throughout: relayish's default float
], ids=["weak", "int-float", "int", "cast", "compare", "function", "all-weak"])
def test_dtypes_follow_numpy_with_indices_and_numbers_weak(body, expected):
    op = ix.operator(lambda x, y: ix.tensor((x.shape[0],), lambda i: body(x, y, i)), name="ix_test_dtypes")
    try:
        got = op.compute(np.arange(3, dtype=np.float32), np.arange(3, dtype=np.int32))
        assert got.dtype == expected
        typed = infer(relayish.parse(f"def @main(%x: {F32.format(3)}, %y: Tensor(IntType(32), Shape(3))) "
                                     "{ @ix_test_dtypes(%x, %y) }"))
        assert typed["main"].ret_type == TensorType(BaseType.from_numpy(np.dtype(expected)), Shape(3))
    finally:
        unregister_user_op("ix_test_dtypes")


def test_the_relation_gives_symbolic_shapes(ops):
    """Hand-computed result types, dimension variables included."""
    typed = infer(relayish.parse(f"""
    def @main[n: Dim, k: Dim, m: Dim, h: Dim](%a: {F32.format("n, k")}, %b: {F32.format("k, m")},
                                               %x: {F32.format("2, 3, h, 9")}, %w: {F32.format("4, 3, 3, 3")}) {{
      (@ix_matmul(%a, %b), @ix_conv_s2p1(%x, %w), @ix_conv_s1p0(%x, %w), @ix_max_pool2d(%x), @ix_transpose(%a))
    }}"""))
    shapes = [t.shape for t in typed["main"].ret_type.fields]
    printed = [str(s) for s in shapes]
    assert printed == ["Shape(n, m)", "Shape(2, 4, (h + 1) // 2, 5)", "Shape(2, 4, h - 2, 7)",
                       "Shape(2, 3, h // 2, 4)", "Shape(k, n)"]


@pytest.mark.parametrize(("text", "message"), [
    ("@ix_matmul(%a, %a)", r"B.shape\[0\] is n, but it is read at k, which ranges over k \(A.shape\[1\]\)"),
    ("@ix_diag(%a)", r"X.shape\[1\] is k, but it is read at i, which ranges over n"),
    ("@ix_matmul(%v, %a)", r"argument 1 \(A\) must have rank 2 \(its reads have 2 indices\)"),
    ("@ix_gather(%a, %v)", r"X: index 0 is float32, not an integer"),
])
def test_the_relation_refuses_calls_that_do_not_fit(ops, text, message):
    module = relayish.parse(f"def @main[n: Dim, k: Dim](%a: {F32.format('n, k')}, %v: {F32.format('n')}) {{ {text} }}")
    with pytest.raises(RelayTypeError, match=message):
        infer(module)


def test_a_result_dimension_below_zero_is_a_type_error(ops):
    module = relayish.parse(f"def @main(%x: {F32.format('1, 1, 2, 2')}, %k: {F32.format('1, 1, 4, 4')}) "
                            "{ @ix_conv_s1p0(%x, %k) }")
    with pytest.raises(RelayTypeError, match=r"dimension 2 of the result is -1 for these arguments "
                                             r"\(X.shape\[2\] - W.shape\[2\] \+ 1\)"):
        infer(module)


def test_definition_errors_name_the_function():
    def outside(x):
        k = ix.axis(x.shape[0])
        return ix.tensor((x.shape[0],), lambda i: x[k])

    def truth(x):
        return ix.tensor((x.shape[0],), lambda i: x[i] if x[i] > 0 else 0)

    def ranks(x):
        return ix.tensor((x.shape[0],), lambda i: x[i] + x[i, i])

    def unpacked(x):
        n, m = x.shape
        return ix.tensor((n,), lambda i: x[i])

    def nested(x):
        k = ix.axis(x.shape[0], "k")
        return ix.tensor((x.shape[0],), lambda i: ix.sum(x[k] * ix.sum(x[k], k), k))

    for fn, message in [(outside, "the reduction axis r\\d+ is used outside a reduction over it"),
                        (truth, "an index expression has no truth value"), (ranks, "x is read with 1 and with 2 indices"),
                        (unpacked, "write x.shape\\[0\\], x.shape\\[1\\]"),
                        (nested, "a reduction over k is inside another over the same axis")]:
        with pytest.raises(RelayError, match=rf"test_semantics_and_types.py:\d+: in the definition of @{fn.__name__}: {message}"):
            ix.trace(fn, fn.__name__)
    with pytest.raises(RelayError, match="@matmul is a standard operator"):
        ix.operator(definitions.matmul, name="matmul")


def test_index_operators_run_in_relay_functions_and_compiled_programs(ops):
    """``relay.ix_matmul`` in decorated code (the evaluator here) and the JIT, which runs the
    semantics on the host as it does for operators registered from Python."""
    @relay
    def layer(x: Tensor[Float, (N, 4)], w: Tensor[Float, (4, 3)]) -> Tensor[Float, (N, 3)]:
        return relay.tanh(relay.ix_matmul(x, w))

    rng = np.random.default_rng(2)
    x, w = floats(rng, 5, 4), floats(rng, 4, 3)
    np.testing.assert_allclose(layer(x, w), np.tanh(x @ w), rtol=1e-5, atol=1e-6)
    compiled = relayish.compile(layer.ir, layer.global_name, tiered=False)
    np.testing.assert_allclose(compiled(x, w), np.tanh(x @ w), rtol=1e-5, atol=1e-6)


def test_a_large_grid_is_evaluated_by_rows_with_the_same_result(ops, monkeypatch):
    """Products of reads fill the grid (output elements times reduction steps): past GRID_LIMIT
    cells the output is computed a block of rows at a time, errors naming the same element."""
    from relayish.ix import semantics

    rng = np.random.default_rng(3)
    a, b = floats(rng, 7, 5), floats(rng, 5, 3)
    whole = ops["ix_matmul"].compute(a, b)
    monkeypatch.setattr(semantics, "GRID_LIMIT", 20)
    np.testing.assert_array_equal(ops["ix_matmul"].compute(a, b), whole)
    x = np.ones((7, 4), np.float32)
    with pytest.raises(ValueError, match=r"output element \(5, 0\) reads X"):
        ops["ix_gather"].compute(x, np.array([0, 1, 2, 3, 4, 7, 0]))
