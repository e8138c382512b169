"""Index-expression operators on the CUDA target (jit/cuda/index_expr.py), against the evaluator
(their derived NumPy semantics): the operators of tests/ix/definitions.py with their derived
gradients, generated operators and their gradients, and a read outside an input."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

import relayish
from relayish.ix.define import unregister
from relayish.testing.inputs import leaves
from tests.ix.conftest import ops as ops  # noqa: PLC0414 - the fixture, for this folder's process
from tests.ix.definitions import CASES
from relayish.testing.ix_programs import bodies
from tests.ix.test_generated import check_kernel, gradient_module, registered
from tests.ix.test_kernels import check_against_the_evaluator


@pytest.mark.parametrize("name", sorted(CASES))
def test_operators_and_their_gradients_on_cuda_agree_with_the_evaluator(ops, name):
    check_against_the_evaluator(ops, name, "cuda")


@given(body=bodies(smooth=False), n=st.integers(1, 4), m=st.integers(1, 4), seed=st.integers(0, 2**32 - 1))
def test_a_generated_operator_on_cuda_is_its_semantics(body, n, m, seed):
    check_kernel(body, n, m, seed, "cuda")


@given(body=bodies(smooth=True), n=st.integers(1, 3), m=st.integers(1, 3), seed=st.integers(0, 2**32 - 1))
def test_the_derived_gradient_of_a_generated_operator_on_cuda_is_the_evaluators(body, n, m, seed):
    rng = np.random.default_rng(seed)
    args = [rng.uniform(-1, 1, (n, m)) for _ in range(3)]
    with registered(body) as op:
        module = gradient_module(op.name, n, m)
        got = relayish.compile(module, "vg", target="cuda", tiered=False)(*args)
        for (_, g), (_, e) in zip(leaves(got), leaves(relayish.evaluate(module, "vg", *args)), strict=True):
            np.testing.assert_allclose(np.asarray(g), np.asarray(e), rtol=1e-9, atol=1e-12)


def test_a_read_outside_an_input_on_cuda_raises_the_evaluators_error(ops):
    module = relayish.parse("def @main[n: Dim](%x: Tensor(FloatType(32), Shape(n))) { @ix_unguarded(%x) }")
    with pytest.raises(Exception, match=r"output element \(0,\) reads x outside its shape \(3,\)"):
        relayish.compile(module, "main", target="cuda", tiered=False)(np.ones(3, np.float32))
    gather = relayish.parse("""def @main(%x: Tensor(FloatType(32), Shape(3, 2)), %i: Tensor(IntType(64), Shape(2))) {
      @ix_gather(%x, %i) }""")
    with pytest.raises(Exception, match=r"output element \(1, 0\) reads X outside its shape \(3, 2\)"):
        relayish.compile(gather, "main", target="cuda", tiered=False)(np.ones((3, 2), np.float32), np.array([0, -1]))


def test_rank_0_arguments_and_results_on_cuda_in_a_loop_and_its_gradient():
    """A read at an index given as a scalar, with a scalar result, summed in a loop: the CUDA
    target passes scalars by value; the gradient adds one element per step."""
    from relayish import ix

    @ix.operator(name="ix_pick")
    def pick(x, i):
        return ix.tensor((), lambda: x[i[()]])

    try:
        module = relayish.parse("""
        def @f(%x: Tensor(FloatType(32), Shape(5)), %n: Tensor(IntType(32), Shape())) -> Tensor(FloatType(32), Shape()) {
          let %loop = fn (%i: Tensor(IntType(32), Shape()), %acc: Tensor(FloatType(32), Shape())) -> Tensor(FloatType(32), Shape()) {
            if %i == %n then %acc else %loop(%i + 1, %acc + @ix_pick(%x, %i) * @ix_pick(%x, %i))
          } in
          %loop(0, 0.0)
        }
        def @vg(%x: Tensor(FloatType(32), Shape(5)), %n: Tensor(IntType(32), Shape())) {
          Grad(fn (%y: Tensor(FloatType(32), Shape(5))) -> Tensor(FloatType(32), Shape()) { @f(%y, %n) })(%x)
        }""")
        x = np.arange(1, 6, dtype=np.float32)
        value, (grad,) = relayish.compile(module, "vg", target="cuda", tiered=False)(x, np.int32(3))
        assert float(value) == 1 + 4 + 9
        np.testing.assert_array_equal(grad, [2, 4, 6, 0, 0])
    finally:
        unregister("ix_pick")
