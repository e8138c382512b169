"""Every operator's batching rule (``ad.batch_rules``) against a loop over the examples.

Each example draws a well-typed call of one operator (one with a lowering runs as what it stands
for), maps some of its parameters over a batch
of three examples (``ad.vmap``) and compares the evaluator's batched result with the call run on
each example alone: the loop never looks at the rules.
"""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import ad
from ad.batch_rules import PARTIAL, rule_of
from relayish.errors import RelayTypeError
from relayish.testing import check_vmap
from relayish.ops import all_ops
from relayish.ops.generation import Sizes
from tests.ops.drawn import draw_call

WITHOUT_RULE = {"conv2d_backward_weight", "dyn_reshape"}  # refused at the Vmap
# every operator with an argument, those with lowerings batched as the operators they stand for
BATCHED = sorted(name for name, op in all_ops().items() if op.num_args not in (0, (0, 0)) and name not in WITHOUT_RULE)
EXAMPLES = 3


def test_the_operators_without_a_batching_rule():
    """Those without tensor arguments are never batched; those with a lowering are expanded before
    batching; the rest refuse with a RelayTypeError at the Vmap."""
    without = {name for name, op in all_ops().items() if rule_of(name) is None}
    lowered = {name for name in without if all_ops()[name].lowering is not None}
    no_arguments = {name for name in without if all_ops()[name].num_args in (0, (0, 0))}
    assert without - lowered - no_arguments == WITHOUT_RULE


@pytest.mark.parametrize("name", BATCHED)
@settings(max_examples=10)
@given(data=st.binary(min_size=64, max_size=64), symbolic=st.booleans(), seed=st.integers(0, 2**32 - 1),
       mapped=st.lists(st.booleans(), min_size=4, max_size=4))
def test_batching_rule_matches_a_loop_over_examples(name, data, symbolic, seed, mapped):
    drawn = draw_call(name, data, symbolic)
    if drawn is None or not drawn.params:
        return  # no call drawn, or one without arguments (full with its fill an attribute)
    count = len(drawn.params)
    axes = tuple(0 if mapped[i % 4] and not isinstance(drawn.plan.args[i], Sizes) else None for i in range(count))
    if all(a is None for a in axes):
        axes = (0, *axes[1:]) if not isinstance(drawn.plan.args[0], Sizes) else axes
    if all(a is None for a in axes):
        return
    rng = np.random.default_rng(seed)
    sizes = drawn.sizes(rng)
    examples = [drawn.arguments(sizes, rng) for _ in range(EXAMPLES)]
    module = drawn.module()
    try:
        ad.vmap(module, "main", axes)
    except RelayTypeError as err:
        assert name in PARTIAL and "has no batched form" in str(err), err  # the documented refusals only
        return
    args = [np.stack([e[i] for e in examples]) if axis == 0 else examples[0][i] for i, axis in enumerate(axes)]
    # floats up to rounding: a batched kernel may sum in another order (a convolution of three
    # images at once is not three convolutions of one)
    kind = drawn.target.dtype.to_numpy()
    check_vmap(module, args, axes, atol=64 * np.finfo(kind).eps if kind.kind == "f" else 0.0)
