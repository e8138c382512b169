"""Compiled programs give what the evaluator gives: the evaluator's corpus (against the same
hand-written expectations), the frontend's corpus and the AD programs (compiled against
evaluated), and generated programs with Grad (``relayish.testing.check_equivalent``)."""

from __future__ import annotations

import os

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings

import relayish
from frontend import RelayFunction
from relayish.testing import check_equivalent
from relayish.testing.strategies import Features, programs
from relayish.types import FuncType
from tests.frontend import ad_functions
from tests.frontend.test_corpus import CASES as CORPUS_CASES
from tests.frontend.test_corpus import assert_same as assert_same_python
from tests.interp import test_corpus as interp_corpus


def jit_run(module: relayish.Module, name: str, *args):
    return relayish.compile(module, name)(*args)


@pytest.mark.parametrize("item", interp_corpus._case_ids(), ids=[interp_corpus._id(i) for i in interp_corpus._case_ids()])
def test_the_evaluator_corpus_compiled(item: tuple[str, int]) -> None:
    name, k = item
    case = interp_corpus.EXPECTATIONS[name][k]
    args = tuple(a.copy() if isinstance(a, np.ndarray) else a for a in case.args)
    result = jit_run(interp_corpus.load(name), "main", *args)
    interp_corpus.assert_same(result, case.expected, rtol=case.rtol, atol=case.atol)
    for a, kept in zip(args, case.args):  # compiled code does not write into its arguments either
        if isinstance(a, np.ndarray):
            np.testing.assert_array_equal(a, kept)


def _frontend_ids(cases) -> list[str]:
    return [f"{fn.__name__}-{i}" for i, (fn, _) in enumerate(cases)]


@pytest.mark.parametrize(("fn", "args"), CORPUS_CASES, ids=_frontend_ids(CORPUS_CASES))
def test_the_frontend_corpus_compiled(fn: RelayFunction, args: tuple) -> None:
    module, names = fn.module()
    expected = fn(*args)
    converted = [a if isinstance(a, np.ndarray) else np.asarray(a, dtype=p.type_annotation.dtype.to_numpy())
                 for a, p in zip(args, module[names[id(fn)]].params)]
    assert_same_python(jit_run(module, names[id(fn)], *converted), expected)


HEAVY = os.environ.get("RELAYISH_HYPOTHESIS") == "heavy"
# Entry points taking tensors (example_inputs cannot make a function argument); the two
# fourth-derivative programs expand to thousands of bindings and take minutes to compile,
# so they run with RELAYISH_HYPOTHESIS=heavy (the evaluator checks them in every run).
AD_FUNCTIONS = [v for v in vars(ad_functions).values() if isinstance(v, RelayFunction)
                and all(not isinstance(t, FuncType) for t in v.signature_types()[0])
                and (HEAVY or v.__name__ not in ("quint_d4", "quint_d4_defs"))]


@pytest.mark.parametrize("fn", AD_FUNCTIONS, ids=[f.__name__ for f in AD_FUNCTIONS])
def test_the_ad_programs_compiled(fn: RelayFunction) -> None:
    module, names = fn.module()
    name = names[id(fn)]
    from relayish.testing import example_inputs

    check_equivalent(module, module, name, example_inputs(module[name], seed=1),
                     backend_b=lambda m, n, *a: jit_run(m, n, *a))


GENERATED = Features(grad=True)


@settings(max_examples=500 if HEAVY else 30, suppress_health_check=list(HealthCheck), deadline=None)
@given(program=programs(GENERATED))
def test_generated_programs_with_grad_compiled(program) -> None:
    check_equivalent(program.module, program.module, program.entry, program.args,
                     backend_b=lambda m, n, *a: jit_run(m, n, *a))


def test_the_corpora_are_not_empty() -> None:
    assert len(CORPUS_CASES) >= 40 and len(AD_FUNCTIONS) >= 10
