"""``take``'s adjoint accumulated in place (jit/lower.py ``accumulate_into``): only when no
other array can see the memory, so the program's value is what the evaluator computes."""

from __future__ import annotations

import numba
import numpy as np

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
    assert "k_scatter_add_in_place" in source  # xs[t]'s adjoint, in the loop
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
    calls = {"in place": 0, "copy": 0}
    namespace = compiled.program()[1].__globals__
    for name in [n for n in namespace if n.startswith("k_scatter_add")]:
        kind = "in place" if "in_place" in name else "copy"
        namespace[name] = (lambda fn, kind: lambda *a: (calls.__setitem__(kind, calls[kind] + 1), fn(*a))[1])(
            namespace[name], kind)
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
