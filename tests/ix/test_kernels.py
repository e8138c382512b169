"""Kernels generated from index expressions (jit/kernels/index_expr.py) against the evaluator,
which runs the operators' derived NumPy semantics: the operators, their derived gradients
(scatter kernels), a run split over threads, and the error of a read outside an input."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

import relayish
from jit.kernels.index_expr import source
from relayish.testing.inputs import leaves
from tests.ix.definitions import CASES, arguments, tensor


def module_for(name: str, args: list[np.ndarray], out: tuple[int, ...]) -> relayish.Module:
    """``@main`` calls the operator; ``@vg`` takes the gradient of sum(tanh(op(args)) * w)."""
    def ty(a: np.ndarray) -> str:
        return tensor(a.shape, {"int64": "IntType(64)", "float32": "FloatType(32)"}[a.dtype.name])

    params = ", ".join(f"%a{k}: {ty(a)}" for k, a in enumerate(args))
    names = ", ".join(f"%a{k}" for k in range(len(args)))
    w = tensor(out, "FloatType(32)")
    return relayish.parse(f"""
    def @main({params}) {{ @{name}({names}) }}
    def @f({params}, %w: {w}) {{ @sum(@tanh(@{name}({names})) * %w) }}
    def @vg({params}, %w: {w}) {{ Grad(@f)({names}, %w) }}""")


def assert_close(got, expected) -> None:
    pairs = list(zip(leaves(got), leaves(expected), strict=True))
    assert pairs
    for (_, g), (_, e) in pairs:
        assert np.asarray(g).dtype == np.asarray(e).dtype
        np.testing.assert_allclose(np.asarray(g), np.asarray(e), rtol=2e-5, atol=2e-5)


def check_against_the_evaluator(ops, name: str, target: str) -> None:
    """``name`` and the gradient through it, compiled for ``target``, give the evaluator's values."""
    args = [a.astype(np.float32) if a.dtype.kind == "f" else a for a in arguments(name, np.random.default_rng(9))]
    out = ops[name].compute(*args).shape
    module = module_for(name, args, out)
    w = np.random.default_rng(1).standard_normal(out).astype(np.float32)
    for fn, values in [("main", args), ("vg", [*args, w])]:
        compiled = relayish.compile(module, fn, target=target, tiered=False)
        assert f"k_{name}" in compiled.source and "_run_op" not in compiled.source
        assert_close(compiled(*values), relayish.evaluate(module, fn, *values))


@pytest.mark.parametrize("name", sorted(CASES))
def test_compiled_operators_and_gradients_agree_with_the_evaluator(ops, name):
    check_against_the_evaluator(ops, name, "cpu")


@given(data=st.data(), seed=st.integers(0, 2**32 - 1))
def test_compiled_convolutions_agree_with_the_evaluator_on_drawn_shapes(ops, data, seed):
    name = data.draw(st.sampled_from(["ix_conv_s1p0", "ix_conv_s2p1"]))
    n, c, f, kh, kw = (data.draw(st.integers(1, 3)) for _ in range(5))
    h, w = data.draw(st.integers(kh, 8)), data.draw(st.integers(kw, 8))
    rng = np.random.default_rng(seed)
    x, k = rng.standard_normal((n, c, h, w)).astype(np.float32), rng.standard_normal((f, c, kh, kw)).astype(np.float32)
    module = relayish.parse(f"""def @main[n: Dim, h: Dim](%x: Tensor(FloatType(32), Shape(n, {c}, h, {w})),
                                                         %k: {tensor(k.shape, 'FloatType(32)')}) {{ @{name}(%x, %k) }}""")
    got = relayish.compile(module, "main", tiered=False)(x, k)
    np.testing.assert_allclose(got, relayish.evaluate(module, "main", x, k), rtol=1e-5, atol=1e-5)


def test_a_large_output_runs_in_chunks_on_every_thread_with_the_same_values(ops):
    """Squared distances are a sum that is not a product: loops, the output's rows split over threads."""
    rng = np.random.default_rng(2)
    a, b = rng.standard_normal((700, 8)).astype(np.float32), rng.standard_normal((600, 8)).astype(np.float32)
    module = relayish.parse("""def @main[n: Dim, m: Dim](%a: Tensor(FloatType(32), Shape(n, 8)),
                                                        %b: Tensor(FloatType(32), Shape(m, 8))) { @ix_sqdist(%a, %b) }""")
    compiled = relayish.compile(module, "main", tiered=False)
    whole = compiled(a, b)
    np.testing.assert_allclose(whole, ops["ix_sqdist"].compute(a, b), rtol=1e-5, atol=1e-5)
    for rows in (slice(0, 5), slice(690, 700)):  # small: one call on one thread; the same loop per element
        np.testing.assert_array_equal(compiled(a[rows], b), whole[rows])


@given(data=st.data(), seed=st.integers(0, 2**32 - 1))
def test_sums_of_products_run_as_matrix_products_within_blas_error(ops, data, seed):
    """matmul, dense (a transposed view), batched matmul (a product per batch entry) and the
    convolutions (gathered, a product per image) call the BLAS gemm; each element's error is bounded
    as a product's is, by rtol times the same operator of the arguments' absolute values."""
    name = data.draw(st.sampled_from(["ix_matmul", "ix_dense", "ix_bmm", "ix_conv_s1p0", "ix_conv_s2p1"]))
    sizes = [data.draw(st.integers(0 if "conv" not in name else 1, 6)) for _ in range(4)]
    b, n, k, m = sizes
    shapes = {"ix_matmul": [(n, k), (k, m)], "ix_dense": [(n, k), (m, k)], "ix_bmm": [(b, n, k), (b, k, m)],
              "ix_conv_s1p0": [(b, k, n + 2, m + 2), (n, k, 3, 3)], "ix_conv_s2p1": [(b, k, n + 2, m + 2), (n, k, 3, 3)]}[name]
    rng = np.random.default_rng(seed)
    args = [rng.standard_normal(s).astype(np.float32) for s in shapes]
    params = ", ".join(f"%a{i}: {tensor(a.shape, 'FloatType(32)')}" for i, a in enumerate(args))
    compiled = relayish.compile(relayish.parse(f"def @main({params}) {{ @{name}(%a0, %a1) }}"), "main", tiered=False)
    assert "_mm(" in source(ops[name].definition, [np.dtype(np.float32)] * 2, [len(s) for s in shapes])
    got = compiled(*args)
    exact = ops[name].compute(*[a.astype(np.float64) for a in args])
    bound = 1e-5 * ops[name].compute(*[np.abs(a).astype(np.float64) for a in args])
    assert got.dtype == np.float32 and got.shape == exact.shape
    assert np.all(np.abs(got - exact) <= bound + 1e-30), name


def test_a_compiled_read_outside_an_input_raises_the_evaluators_error(ops):
    module = relayish.parse("def @main[n: Dim](%x: Tensor(FloatType(32), Shape(n))) { @ix_unguarded(%x) }")
    compiled = relayish.compile(module, "main", tiered=False)
    assert "k_ix_unguarded" in compiled.source
    with pytest.raises(Exception, match=r"output element \(0,\) reads x outside its shape \(3,\)"):
        compiled(np.ones(3, np.float32))
    gather = relayish.parse("""def @main(%x: Tensor(FloatType(32), Shape(3, 2)), %i: Tensor(IntType(64), Shape(2))) {
      @ix_gather(%x, %i) }""")
    with pytest.raises(Exception, match=r"output element \(1, 0\) reads X outside its shape \(3, 2\)"):
        relayish.compile(gather, "main", tiered=False)(np.ones((3, 2), np.float32), np.array([0, -1]))


def test_a_kernel_called_with_sizes_that_do_not_fit_reads_nothing_outside(ops):
    """Memory safety whatever the arguments: a read at an index variable alone is checked once per
    call (its range fits the axis), so a kernel handed a B too short for A's columns, which the
    type checker would have refused, runs the semantics instead, which raise."""
    from jit.kernels.index_expr import index_kernel

    kernel = index_kernel(ops["ix_matmul"].definition, [np.float32, np.float32], [2, 2])
    a, b = np.ones((2, 6), np.float32), np.ones((4, 3), np.float32)
    with pytest.raises(ValueError, match=r"output element \(0, 0\) reads B outside its shape \(4, 3\)"):
        kernel(a, b)
    np.testing.assert_array_equal(kernel(a, np.ones((6, 3), np.float32)), np.full((2, 3), 6, np.float32))


def test_affine_reads_outside_a_where_are_checked_once_per_call(ops):
    """A convolution without padding reads X[n, c, y + ky, x + kx]: its range over the loops' box
    is exact, so it is checked before the loops and the loops have no check; a read in a where's
    branch (the padded convolution, the stencil) or at a data-dependent index (gather) is checked
    where it happens."""
    def loops(name: str, dtypes: list, ranks: list[int]) -> str:
        text = source(ops[name].definition, [np.dtype(d) for d in dtypes], ranks)
        return text[text.index("def _part(" if "def _part(" in text else "def kernel("):]

    plain = loops("ix_conv_s1p0", ["float32", "float32"], [4, 4])
    assert "return out, 1" in plain and "bad = 2" not in plain
    for name, dtypes, ranks in [("ix_conv_s2p1", ["float32"] * 2, [4, 4]), ("ix_stencil", ["float32"], [1]),
                                ("ix_gather", ["float32", "int64"], [2, 1])]:
        assert "bad = 2" in loops(name, dtypes, ranks), name


def test_sizes_the_checker_could_not_see_are_checked_when_the_call_runs(ops):
    """With ``?`` dimensions the relation runs on the arguments, compiled as evaluated: A's columns
    and B's rows must agree, though B's extra rows would be readable."""
    module = relayish.parse("""def @main(%a: Tensor(FloatType(32), Shape(2, ?)), %b: Tensor(FloatType(32), Shape(?, 3))) {
      @ix_matmul(%a, %b) }""")
    a, b = np.ones((2, 4), np.float32), np.ones((5, 3), np.float32)
    for run in (relayish.compile(module, "main", tiered=False), lambda *xs: relayish.evaluate(module, "main", *xs)):
        with pytest.raises(Exception, match=r"B.shape\[0\] is 5, but it is read at k, which ranges over 4"):
            run(a, b)
    np.testing.assert_array_equal(relayish.compile(module, "main", tiered=False)(a, np.ones((4, 3), np.float32)),
                                  np.full((2, 3), 4, np.float32))


def test_an_adjoint_adds_into_an_array_in_place_or_into_a_copy_with_the_same_values(ops):
    """The JIT adds an adjoint's scatters into the gradient it accumulates (``accumulate``), or into
    a copy when the array is shared (``added``): the same values, the semantics' sum within float32."""
    from jit.kernels.index_expr import index_kernel
    from relayish.ops.registry import lookup_op

    defn = lookup_op("ix_gather__d0").definition
    kernel = index_kernel(defn, [np.float32, np.int64, np.float32], [2, 1, 2])
    rng = np.random.default_rng(4)
    x, idx, ct = rng.standard_normal((4, 3)).astype(np.float32), np.array([3, 0, 3, 1, 2]), rng.standard_normal((5, 3)).astype(np.float32)
    data = rng.standard_normal((4, 3)).astype(np.float32)
    before = data.copy()
    copied = kernel.added(data, x, idx, ct)
    np.testing.assert_array_equal(data, before)  # the shared array is left alone
    in_place = kernel.accumulate(data, x, idx, ct)
    assert in_place is data
    np.testing.assert_array_equal(in_place, copied)
    np.testing.assert_allclose(copied, before + lookup_op("ix_gather__d0").compute(x, idx, ct), rtol=1e-6, atol=1e-6)
    row = rng.standard_normal((1, 3)).astype(np.float32)  # another shape: NumPy's broadcasting sum
    np.testing.assert_allclose(kernel.accumulate(row, x, idx, ct), row + lookup_op("ix_gather__d0").compute(x, idx, ct))


def test_an_adjoint_whose_reads_fail_adds_the_semantics_values_or_raises_their_error():
    """A check before the loops that fails (a shifted read): nothing is added in place, and the
    semantics' values are added instead. A read outside an input found while the scatters add (a
    data-dependent index): the semantics raise their error (the array, the JIT's own accumulator,
    is dropped)."""
    from jit.kernels.index_expr import index_kernel
    from relayish import ix
    from relayish.ix.define import unregister
    from relayish.ops.registry import lookup_op

    @ix.operator(name="ix_shifted_square")
    def shifted_square(x):
        return ix.tensor((x.shape[0],), lambda i: ix.where(i > 0, x[i + 1] * x[i + 1], 0.0))

    @ix.operator(name="ix_scaled_gather")
    def scaled_gather(x, y, idx):
        return ix.tensor((x.shape[0],), lambda i: x[i] * y[idx[i]])

    try:
        shifted = lookup_op("ix_shifted_square__d0")
        kernel = index_kernel(shifted.definition, [np.float32] * 2, [1, 1])
        x, ct = np.arange(4, dtype=np.float32), np.ones(4, np.float32)
        data = np.full(4, 10, np.float32)
        np.testing.assert_array_equal(kernel.accumulate(data, x, ct), 10 + shifted.compute(x, ct))
        kernel = index_kernel(lookup_op("ix_scaled_gather__d0").definition, [np.float32, np.float32, np.int64, np.float32],
                              [1, 1, 1, 1])
        with pytest.raises(Exception, match=r"reads y outside its shape \(2,\)"):
            kernel.accumulate(np.zeros(4, np.float32), x, np.ones(2, np.float32), np.array([0, 1, 0, 5]), ct)
    finally:
        for name in ("ix_shifted_square", "ix_scaled_gather"):
            unregister(name)


def test_an_adjoint_adding_at_index_variables_alone_is_gathered(ops):
    """matmul's adjoints and a convolution's weight gradient scatter at distinct index variables
    alone: they run as the gathering definitions (matrix products here), with the scatters' values;
    a strided convolution's input gradient and diag's adjoint scatter elsewhere and stay scatters.
    Sizes that disagree (a ``?`` hid them) make the gathered shape differ: the scatters run."""
    from jit.kernels.index_expr import gathered, index_kernel, kernel_plan
    from relayish.ops.registry import lookup_op

    f32 = [np.dtype(np.float32)] * 3
    for name in ("ix_matmul__d0", "ix_matmul__d1", "ix_dense__d1", "ix_bmm__d0", "ix_conv_s2p1__d1"):
        assert gathered(lookup_op(name).definition, f32) is not None, name
        assert "gathered: a matrix product" in kernel_plan(lookup_op(name).definition, f32), name
    for name, count in (("ix_conv_s2p1__d0", 3), ("ix_diag__d0", 2)):
        assert gathered(lookup_op(name).definition, f32[:count]) is None, name
    rng = np.random.default_rng(5)
    x, w, g = (rng.standard_normal(s).astype(np.float32) for s in [(2, 3, 7, 6), (4, 3, 3, 3), (2, 4, 4, 3)])
    conv = lookup_op("ix_conv_s2p1__d1")
    got = index_kernel(conv.definition, f32, [4, 4, 4])(x, w, g)
    assert got.dtype == np.float32
    bound = 1e-5 * conv.compute(np.abs(x), np.abs(w), np.abs(g)) + 1e-30
    assert np.all(np.abs(got - conv.compute(x.astype(np.float64), w, g.astype(np.float64))) <= bound)
    matmul = lookup_op("ix_matmul__d1")
    kernel = index_kernel(matmul.definition, f32, [2, 2, 2])
    a, b, ct = np.ones((2, 6), np.float32), np.ones((4, 3), np.float32), np.ones((2, 3), np.float32)
    np.testing.assert_array_equal(kernel(a, b, ct), matmul.compute(a, b, ct))  # k runs past B's rows: skipped


def test_explain_says_how_each_index_expression_call_computes(ops):
    args = [np.ones((3, 4), np.float32), np.ones((4, 2), np.float32)]
    text = relayish.compile(module_for("ix_matmul", args, (3, 2)), "vg", tiered=False).explain()
    lines = text.split("# index-expression operators (docs/index-expressions.md):\n")[1].splitlines()
    assert lines == ["#   @ix_matmul in @vg: a matrix product (BLAS gemm), summing over (k)",
                     "#   @ix_matmul__d0 in @vg: the adjoint of input 0, gathered: a matrix product (BLAS gemm), summing over (j)",
                     "#   @ix_matmul__d1 in @vg: the adjoint of input 1, gathered: a matrix product (BLAS gemm), summing over (i)"]
    stencil = relayish.compile(module_for("ix_stencil", [np.ones(7, np.float32)], (7,)), "vg", tiered=False).explain()
    assert "@ix_stencil in @vg: loops over the output; rows split over the cores when large" in stencil
    assert "@ix_stencil__d0 in @vg: the adjoint of input 0: 3 scatter(s), serial" in stencil
