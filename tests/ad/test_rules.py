"""Every operator's gradient rule (its record's ``gradient``), and the forward rule derived from it,
against central finite differences in float64.

Each example draws a well-typed call of one operator (the generator's backward rules pick
argument types and attributes for a drawn result type), wraps it as
``sum(op(args...) * w)`` with random weights ``w`` (so that no symmetry hides a wrong
gradient, e.g. softmax sums to one) and compares ``Grad`` in the evaluator with
``relayish.testing.check_grad``: an independent oracle that never looks at the rules.
"""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import relayish
from relayish.ops import all_ops, get_op
from relayish.ops.generation import Hint
from relayish.testing import check_grad, check_jvp
from tests.ops.drawn import draw_call
from relayish.types import FloatType, IntType

F64 = FloatType(64)
WITH_GRADIENT = sorted(name for name, op in all_ops().items() if op.gradient is not None)
POSITIVE = {"log", "sqrt", "pow", "div"}  # arguments drawn from [0.5, 2]: inside the domain, off the poles


def _weighted_call(name: str, data: bytes, symbolic: bool, seed: int) -> tuple[relayish.Module, list] | None:
    """A drawn call of ``name`` as ``sum(op(args...) * w)`` and arguments for it (``w`` last), or
    None where the draw has no float result or the point has no derivative."""
    hint = get_op(name).hint
    drawn = draw_call(name, data, symbolic, (F64,), hint if hint.kinds != "b" else Hint(None, hint.min_rank,
                                                                                         hint.max_rank, hint.static))
    if drawn is None or not isinstance(drawn.target.dtype, FloatType):
        return None
    plan = drawn.plan
    rng = np.random.default_rng(seed)
    sizes = drawn.sizes(rng)
    args = drawn.arguments(sizes, rng, name in POSITIVE)
    if not np.all(np.isfinite(get_op(name)(*args, **plan.attrs))):
        return None  # e.g. a max-pool window wholly in the padding gives -inf: no derivative there
    if name == "floor_mod":
        quotient = args[0] / args[1]
        step = 1e-6 * (1 / np.abs(args[1]) + np.abs(args[0]) / args[1] ** 2)  # how far a finite-difference step moves a / b
        if np.any(np.abs(quotient - np.round(quotient)) < 1e-4 + 2 * step):
            return None  # a / b next to an integer: floor_mod jumps there, and a finite difference across it means nothing
    return drawn.weighted_loss(), [*args, rng.uniform(-1, 1, size=drawn.out_shape(sizes))]


@pytest.mark.parametrize("name", WITH_GRADIENT)
@pytest.mark.parametrize("mode", ["gradient", "forward"])
@settings(max_examples=12)
@given(data=st.binary(min_size=64, max_size=64), symbolic=st.booleans(), seed=st.integers(0, 2**32 - 1))
def test_rules_of_every_operator_match_finite_differences(mode, name, data, symbolic, seed):
    """``gradient``: the rule itself, through Grad; ``forward``: the forward rule derived from it
    (``ad.tangents``), through Jvp along random tangents."""
    case = _weighted_call(name, data, symbolic, seed)
    if case is not None and mode == "gradient":
        check_grad(*case, rtol=1e-5, atol=1e-7)
    elif case is not None:
        check_jvp(*case, seed=seed, rtol=1e-5, atol=1e-7)


def test_a_second_derivative_through_max_pool():
    """d/dx sum(g(x)) for g = the gradient of sum(max_pool(x)^2): it is 2 at each window's
    maximum (the maximum's own square) and 0 elsewhere; no other oracle is simpler."""
    src = """
    def @f(%x: Tensor(FloatType(64), Shape(1, 1, 4, 4))) -> Tensor(FloatType(64), Shape()) {
      @sum(@max_pool2d(%x, pool_size=2) * @max_pool2d(%x, pool_size=2))
    }
    def @g(%x: Tensor(FloatType(64), Shape(1, 1, 4, 4))) -> Tensor(FloatType(64), Shape()) {
      @sum(Grad(@f)(%x)[1][0])
    }
    def @main(%x: Tensor(FloatType(64), Shape(1, 1, 4, 4))) { Grad(@g)(%x) }
    """
    x = np.arange(16.0).reshape(1, 1, 4, 4) % 7  # window maxima at (1,1) (1,3) (2,0)... unique
    value, (gradient,) = relayish.evaluate(relayish.parse(src), "main", x)
    windows = x.reshape(2, 2, 2, 2).transpose(0, 2, 1, 3).reshape(2, 2, 4)
    expected = np.zeros((4, 4))
    for i in range(2):
        for j in range(2):
            k = int(np.argmax(windows[i, j]))
            expected[2 * i + k // 2, 2 * j + k % 2] = 2.0
    assert value == 2 * windows.max(axis=-1).sum()
    np.testing.assert_array_equal(gradient[0, 0], expected)


def test_integer_arguments_get_zero_gradients_of_their_dtype():
    src = """
    def @f(%x: Tensor(FloatType(64), Shape(3)), %k: Tensor(IntType(32), Shape(3)), %b: Tensor(BoolType, Shape())) -> Tensor(FloatType(64), Shape()) {
      @sum(%x * @cast(%k, dtype=FloatType(64)))
    }
    def @main(%x: Tensor(FloatType(64), Shape(3)), %k: Tensor(IntType(32), Shape(3)), %b: Tensor(BoolType, Shape())) { Grad(@f)(%x, %k, %b) }
    """
    value, (gx, gk, gb) = relayish.evaluate(relayish.parse(src), "main", np.array([1.0, 2.0, 3.0]),
                                             np.array([4, 5, 6], np.int32), np.array(True))
    assert value == 32.0
    np.testing.assert_array_equal(gx, [4.0, 5.0, 6.0])
    assert gk.dtype == np.int32 and not gk.any() and gk.shape == (3,)
    assert gb.dtype == np.bool_ and not gb and gb.shape == ()
    assert IntType(32).to_numpy() == gk.dtype
