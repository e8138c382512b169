"""Whole programs compiled for the CUDA target give what the evaluator gives: the evaluator's
corpus (against its hand-written expectations; programs whose arguments are too big for the
simulator or that use float16 are left out, the latter tested to be refused clearly), and
generated programs with Grad (``check_equivalent``)."""

from __future__ import annotations

import os

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings

import relayish
from jit.kernels.registry import kernel_operators
from relayish.errors import RelayRuntimeError
from relayish.testing import check_equivalent
from relayish.testing.difftest import default_features
from relayish.testing.strategies import programs
from tests.interp import test_corpus as interp_corpus

SIMULATOR_ELEMENTS = 4096  # the simulator runs a Python thread per element


def cuda_run(module: relayish.Module, name: str, *args):
    return relayish.compile(module, name, target="cuda")(*args)


def _small(item: tuple[str, int]) -> bool:
    case = interp_corpus.EXPECTATIONS[item[0]][item[1]]
    arrays = [a for a in case.args if isinstance(a, np.ndarray)]
    return sum(a.size for a in arrays) <= SIMULATOR_ELEMENTS and not any(a.dtype == np.float16 for a in arrays) \
        and "float16" not in item[0] and "lenet" not in item[0]


CASES = [item for item in interp_corpus._case_ids() if _small(item)]


@pytest.mark.parametrize("item", CASES, ids=[interp_corpus._id(i) for i in CASES])
def test_the_evaluator_corpus_on_cuda(item: tuple[str, int]) -> None:
    name, k = item
    case = interp_corpus.EXPECTATIONS[name][k]
    args = tuple(a.copy() if isinstance(a, np.ndarray) else a for a in case.args)
    try:
        result = cuda_run(interp_corpus.load(name), "main", *args)
    except RelayRuntimeError as err:
        if "float16" in str(err):
            pytest.fail(f"{name} uses float16; leave it out of CASES: {err}")
        raise
    interp_corpus.assert_same(result, case.expected, rtol=case.rtol, atol=case.atol)


def test_most_of_the_corpus_runs_on_cuda() -> None:
    assert len(CASES) >= 0.7 * len(interp_corpus._case_ids())


def test_float16_is_refused_with_a_clear_error() -> None:
    mod = relayish.parse("def @main(%x: Tensor(FloatType(16), Shape(2))) { @tanh(%x) }")
    with pytest.raises(RelayRuntimeError, match="CUDA target has no float16"):
        cuda_run(mod, "main", np.ones(2, np.float16))


# float16 is refused on CUDA (tested above), and left out of `relayish difftest --backend cuda`'s
# programs too; the simulator runs a Python thread per element, so programs stay small and few
# (RELAYISH_HYPOTHESIS=heavy: 100)
HEAVY = os.environ.get("RELAYISH_HYPOTHESIS") == "heavy"


@settings(max_examples=100 if HEAVY else 40, suppress_health_check=list(HealthCheck), deadline=None)
@given(program=programs(default_features(["cuda"]), max_nodes=30))
def test_generated_programs_with_grad_on_cuda(program) -> None:
    check_equivalent(program.module, program.module, program.entry, program.args, backend_b=cuda_run)


def test_every_operator_has_a_cuda_kernel() -> None:
    assert kernel_operators("cuda") == kernel_operators("cpu")


def test_forward_mode_and_a_hessian_vector_product_on_cuda() -> None:
    """Jvp alone and over Grad (forward over reverse) compiled for CUDA, against the evaluator."""
    v16 = "Tensor(FloatType(32), Shape(16))"
    module = relayish.parse(f"""
    def @f(%x: {v16}) -> Tensor(FloatType(32), Shape()) {{ @sum(@sin(%x) * %x) }}
    def @g(%x: {v16}) -> {v16} {{ Grad(@f)(%x)[1][0] }}
    def @hvp(%x: {v16}, %v: {v16}) -> {v16} {{ Jvp(@g)(%x, %v)[1] }}
    def @fw(%x: {v16}, %v: {v16}) -> (Tensor(FloatType(32), Shape()), Tensor(FloatType(32), Shape())) {{ Jvp(@f)(%x, %v) }}
    """)
    rng = np.random.default_rng(0)
    x, v = rng.standard_normal(16).astype(np.float32), rng.standard_normal(16).astype(np.float32)
    for name in ("hvp", "fw"):
        check_equivalent(module, module, name, [x, v], backend_a=relayish.evaluate, backend_b=cuda_run, rtol=1e-5)


def test_batched_if_loop_and_per_example_gradients_on_cuda() -> None:
    """Vmap of a data-dependent if and loop, and of a gradient, compiled for CUDA, against the evaluator."""
    f32, i32 = "Tensor(FloatType(32), Shape())", "Tensor(IntType(32), Shape())"
    module = relayish.parse(f"""
    def @loop(%x: {f32}, %n: {i32}) -> {f32} {{ if %n > 0 then @loop(@sin(%x) + %x * 0.5, %n - 1) else %x }}
    def @f(%x: {f32}, %n: {i32}) -> {f32} {{ if %x > 0.0 then @loop(%x, %n) else %x * %x }}
    def @main(%xs: Tensor(FloatType(32), Shape(8)), %ns: Tensor(IntType(32), Shape(8))) {{
      (Vmap(@f, in_axes=(0, 0))(%xs, %ns), Vmap(Grad(@f), in_axes=(0, 0))(%xs, %ns)[1][0])
    }}
    """)
    rng = np.random.default_rng(1)
    xs, ns = rng.standard_normal(8).astype(np.float32), rng.integers(0, 4, 8).astype(np.int32)
    check_equivalent(module, module, "main", [xs, ns], backend_a=relayish.evaluate, backend_b=cuda_run, rtol=1e-5)
