"""Updates in place (jit/lower.py ``accumulate_into``): ``take``'s adjoint and ``c + a @ b``
groups, only when no other array can see the memory, so the program's value is what the
evaluator computes."""

from __future__ import annotations

import numba
import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st

import relayish
from jit.kernels.registry import ArgType, kernel
from jit.lower import accumulate_into
from relayish.testing import check_equivalent

KERNEL = kernel("scatter_add", {"axis": 0}, [ArgType("float32", 2), ArgType("int32", 0), ArgType("float32", 1)])
ACCUMULATE = KERNEL.py_func.__globals__["accumulate"]
ROW = np.ones(3, np.float32)


def accumulate(cell: list) -> None:
    accumulate_into(cell, ACCUMULATE, KERNEL, np.asarray(np.int32(1)), ROW)


@numba.njit
def numba_zeros(n):
    return np.zeros((n, 3), np.float32)


@numba.njit
def numba_view(x):
    return x.reshape(x.shape)


def test_an_array_nothing_else_sees_is_updated_in_place():
    for make in (lambda: np.zeros((2, 3), np.float32), lambda: numba_zeros(2)):
        cell = [make()]
        before = cell[0]
        identity = id(before)
        del before
        accumulate(cell)
        assert id(cell[0]) == identity
        np.testing.assert_array_equal(cell[0], [[0, 0, 0], [1, 1, 1]])


def test_a_shared_array_is_copied_and_left_as_it_was():
    shared = np.zeros((2, 3), np.float32)
    view_of_input = numba_view(np.zeros((2, 3), np.float32))  # Numba's view of an array Python holds
    for data, keep in ((shared, shared), (shared[:, :], shared), (view_of_input, view_of_input)):
        cell = [data]
        accumulate(cell)
        assert cell[0] is not data
        np.testing.assert_array_equal(keep, np.zeros((2, 3)))
        np.testing.assert_array_equal(cell[0], [[0, 0, 0], [1, 1, 1]])


def test_a_failing_update_leaves_the_cell_as_it_was():
    data = np.zeros((2, 3), np.float32)
    cell = [data]
    try:
        accumulate_into(cell, ACCUMULATE, KERNEL, np.asarray(np.int32(5)), ROW)
    except IndexError:
        pass
    assert cell[0] is data


def test_a_loop_reading_rows_accumulates_in_place_and_matches_the_evaluator():
    """A loop whose bound is an argument (a static one is unrolled: no loop, no reference)."""
    module = relayish.parse("""
    def @loss(%X: Tensor(FloatType(32), Shape(4, 4)), %n: Tensor(IntType(32), Shape())) -> Tensor(FloatType(32), Shape()) {
      let %loop = fn (%i: Tensor(IntType(32), Shape()), %acc: Tensor(FloatType(32), Shape())) -> Tensor(FloatType(32), Shape()) {
        if %i == %n then %acc else
        let %j = %i - (%i / 4) * 4 in
        %loop(%i + 1, %acc + @sum(@take(%X, %j, axis=1) * @take(%X, %j, axis=0)))
      } in
      %loop(0, 0.0)
    }
    def @vg(%X: Tensor(FloatType(32), Shape(4, 4)), %n: Tensor(IntType(32), Shape())) {
      Grad(fn (%Y: Tensor(FloatType(32), Shape(4, 4))) -> Tensor(FloatType(32), Shape()) { @loss(%Y, %n) })(%X)
    }""")
    assert "_accumulate_into(" in relayish.compile(module, "vg").source
    X = np.arange(16, dtype=np.float32).reshape(4, 4) / 10
    check_equivalent(module, module, "vg", (X, np.int32(6)), rtol=1e-5,
                     backend_a=lambda m, name, *args: relayish.compile(m, name)(*args))


def test_an_rnn_accumulates_the_adjoint_of_its_inputs_in_place_and_matches_the_evaluator():
    from tests.jit.passes.corpus import corpus

    program = next(p for p in corpus() if p.entry == "rnn_steps")
    source = relayish.compile(program.module, "rnn_steps").source
    assert "_scatter_add_at_in_place" in source  # xs[t]'s adjoint, in the loop
    check_equivalent(program.module, program.module, "rnn_steps", program.args, rtol=1e-5,
                     backend_a=lambda m, name, *args: relayish.compile(m, name)(*args))


def test_an_unrolled_loop_updates_its_adjoint_in_place_and_matches_the_evaluator():
    """Straight-line ``scatter_add``s (the loop has a constant count, so it is unrolled; CSE
    merges the steps that read the same column): an update whose array nothing else reads is
    handed over in a cell, and runs in place unless the array is still held elsewhere (an
    output of a fused kernel's tuple is copied; so is the update of an array read twice)."""
    module = relayish.parse("""
    def @loss(%X: Tensor(FloatType(32), Shape(4, 4))) -> Tensor(FloatType(32), Shape()) {
      let %loop = fn (%i: Tensor(IntType(32), Shape()), %acc: Tensor(FloatType(32), Shape())) -> Tensor(FloatType(32), Shape()) {
        if %i == 6 then %acc else
        let %j = %i - (%i / 4) * 4 in
        %loop(%i + 1, %acc + @sum(@take(%X, %j, axis=1) * %X))
      } in
      %loop(0, 0.0)
    }
    def @vg(%X: Tensor(FloatType(32), Shape(4, 4))) { Grad(@loss)(%X) }""")
    compiled = relayish.compile(module, "vg")
    assert "def " not in compiled.source.split("\n", 1)[1]  # one function: the loop is unrolled
    assert compiled.source.count(".pop()") == 5
    calls = counted(compiled, "_scatter_add_at")  # one column per update: NumPy adds it (jit/lower.py)
    X = np.arange(16, dtype=np.float32).reshape(4, 4) / 10
    check_equivalent(module, module, "vg", (X,), rtol=1e-5, backend_a=lambda m, name, *args: compiled(*args))
    assert calls["in place"] >= 3 and calls["in place"] + calls["copy"] == 6


def test_a_scalar_scatter_add_is_a_plain_call():
    """Rank 0 is a NumPy scalar in compiled code, not an array to update (found by the
    500-program run)."""
    module = relayish.parse("""
    def @main(%x: Tensor(UIntType(8), Shape())) -> Tensor(UIntType(8), Shape()) {
      let %b = %x * %x in
      let %s = @scatter_add(%b, 0, %x) in
      %s * %x
    }""")
    compiled = relayish.compile(module, "main")
    assert "_accumulate_into" not in compiled.source
    check_equivalent(module, module, "main", (np.uint8(7),), backend_a=lambda m, name, *args: compiled(*args))


# ``c + a @ b`` groups (jit/passes/products.py) --------------------------------------------------

def matmul_add_kernel(dtype: str):
    from jit.kernels.nn import matmul_add_source
    from jit.kernels.registry import kernel_from_source

    return kernel_from_source(f"matmul_add_{dtype}", matmul_add_source(dtype))


def layout(x: np.ndarray, kind: str) -> np.ndarray:
    """``x``'s values as a C-ordered, F-ordered (a transposed view) or strided array."""
    if kind == "F":
        return np.ascontiguousarray(x.T).T
    if kind == "strided":
        wide = np.zeros((x.shape[0], 2 * x.shape[1] + 1), x.dtype)
        wide[:, 1::2] = x
        return wide[:, 1::2]
    return np.ascontiguousarray(x)


@settings(deadline=None)
@given(st.integers(0, 6), st.integers(0, 6), st.integers(0, 6), st.sampled_from(["float32", "float64"]),
       st.sampled_from(["C", "F", "strided"]), st.sampled_from(["C", "F", "strided"]))
def test_the_gemm_kernel_adds_the_product_for_every_layout(m, k, n, dtype, a_layout, b_layout):
    """Against NumPy in float64, within the product's rounding: ``accumulate`` adds into ``c``
    itself and returns it, ``kernel`` leaves ``c`` as it was."""
    fn = matmul_add_kernel(dtype)
    rng = np.random.default_rng(m * 49 + k * 7 + n)
    c, a, b = (rng.standard_normal(s).astype(dtype) for s in ((m, n), (m, k), (k, n)))
    a, b = layout(a, a_layout), layout(b, b_layout)
    expected = c.astype(np.float64) + a.astype(np.float64) @ b.astype(np.float64)
    bound = (np.abs(c) + np.abs(a).astype(np.float64) @ np.abs(b)) * np.finfo(dtype).eps * (k + 2)
    before = c.copy()
    copied = fn(c, a, b)
    np.testing.assert_array_equal(c, before)
    assert copied.dtype == dtype and np.all(np.abs(copied - expected) <= bound)
    same = fn.py_func.__globals__["accumulate"](c, a, b)
    assert (c.size == 0 or np.shares_memory(same, c)) and np.all(np.abs(c - expected) <= bound)


GEMM_STEPS = """
def @main(%a: Tensor(FloatType(32), Shape(3, 4)), %b: Tensor(FloatType(32), Shape(4, 5)),
          %c: Tensor(FloatType(32), Shape(3, 5))) -> Tensor(FloatType(32), Shape(3, 5)) {
  let %p = @matmul(%a, %b) in
  let %s = %p + @matmul(%a * 2.0, %b) in
  let %u = %c + @matmul(%a, %b * %b) in
  @tanh(%s) + %u
}
"""


def counted(compiled, prefix: str) -> dict[str, int]:
    """Calls of the in-place and the copying kernels whose names start with ``prefix``."""
    calls = {"in place": 0, "copy": 0}
    namespace = compiled.program()[1].__globals__
    for name in [n for n in namespace if n.startswith(prefix)]:
        kind = "in place" if "in_place" in name else "copy"
        namespace[name] = (lambda fn, kind: lambda *a: (calls.__setitem__(kind, calls[kind] + 1), fn(*a))[1])(
            namespace[name], kind)
    return calls


def test_a_product_added_into_a_fresh_array_runs_in_place_and_into_an_argument_on_a_copy():
    module = relayish.parse(GEMM_STEPS)
    compiled = relayish.compile(module, "main")
    calls = counted(compiled, "k_matmul_add")
    rng = np.random.default_rng(1)
    args = [rng.standard_normal(s).astype(np.float32) for s in ((3, 4), (4, 5), (3, 5))]
    kept = [a.copy() for a in args]
    check_equivalent(module, module, "main", args, rtol=1e-5, atol=1e-6,
                     backend_a=lambda m, name, *xs: compiled(*xs))
    assert calls == {"in place": 1, "copy": 1}  # into %p's fresh array; %c is the caller's
    for a, k in zip(args, kept):
        np.testing.assert_array_equal(a, k)


def test_a_loop_adds_weight_gradient_products_into_its_adjoint_in_place():
    """The RNN as a loop over an argument count: ``dW := !dW + h^T d`` in the backpropagators."""
    from tests.jit.passes.corpus import corpus

    program = next(p for p in corpus() if p.entry == "rnn_steps")
    compiled = relayish.compile(program.module, "rnn_steps")
    calls = counted(compiled, "k_matmul_add")
    check_equivalent(program.module, program.module, "rnn_steps", program.args, rtol=1e-5, atol=1e-6,
                     backend_a=lambda m, name, *args: compiled(*args))
    assert calls["in place"] >= 6
