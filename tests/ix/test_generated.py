"""Generated index-expression operators (relayish/testing/ix_programs.py): the kernel agrees with the
semantics, and the derived gradient of the smooth ones with central differences."""

from __future__ import annotations

import contextlib
import itertools

import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st

import relayish
from relayish import ix
from relayish.ix.define import unregister
from relayish.testing import check_grad
from relayish.testing.ix_programs import bodies, definition

_names = itertools.count()


@contextlib.contextmanager
def registered(body):
    """The drawn operator under a fresh name, removed (its adjoints too) afterwards."""
    name = f"ix_generated_{next(_names)}"
    try:
        yield ix.operator(definition(body), name=name)
    finally:
        unregister(name)


def ty(n: int, m: int, dtype: str = "FloatType(32)") -> str:
    return f"Tensor({dtype}, Shape({n}, {m}))"


# each example compiles a kernel (~0.3 s): a third of the profile's examples (CI 16, heavy 666)
@settings(max_examples=max(1, settings().max_examples // 3))
@given(body=bodies(smooth=False), n=st.integers(1, 5), m=st.integers(1, 5), seed=st.integers(0, 2**32 - 1))
def test_the_kernel_of_a_generated_operator_is_its_semantics(body, n, m, seed):
    check_kernel(body, n, m, seed, "cpu")


def check_kernel(body, n: int, m: int, seed: int, target: str) -> None:
    """The operator of ``body`` compiled for ``target`` computes its semantics on random (n, m) inputs."""
    rng = np.random.default_rng(seed)
    x0, x1 = (rng.standard_normal((n, m)).astype(np.float32) for _ in range(2))
    with registered(body) as op:
        module = relayish.parse(f"def @main(%a: {ty(n, m)}, %b: {ty(n, m)}) {{ @{op.name}(%a, %b) }}")
        got = relayish.compile(module, "main", target=target, tiered=False)(x0, x1)
        np.testing.assert_allclose(got, op.compute(x0, x1), rtol=1e-4, atol=1e-5)


@given(body=bodies(smooth=True), n=st.integers(1, 4), m=st.integers(1, 4), seed=st.integers(0, 2**32 - 1))
def test_the_derived_gradient_of_a_generated_operator_matches_finite_differences(body, n, m, seed):
    rng = np.random.default_rng(seed)
    args = [rng.uniform(-1, 1, (n, m)) for _ in range(3)]
    with registered(body) as op:
        check_grad(gradient_module(op.name, n, m), args, name="f", rtol=1e-4, atol=1e-6)


def gradient_module(name: str, n: int, m: int) -> relayish.Module:
    """``@f(a, b, w) = sum(name(a, b) * w)`` on float64 (n, m) arguments, and ``@vg``, its gradient."""
    params = ", ".join(f"%{p}: {ty(n, m, 'FloatType(64)')}" for p in "abw")
    return relayish.parse(f"def @f({params}) {{ @sum(@{name}(%a, %b) * %w) }}\n"
                          f"def @vg({params}) {{ Grad(@f)(%a, %b, %w) }}")
