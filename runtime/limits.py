"""The error of a run past a limit its caller set (``max_calls``), the same in both backends.

The limits on memory (``RELAYISH_MAX_TENSOR_BYTES``, checked before a tensor is made) are the
operators' and live with them in relayish/ops/limits.py.
"""

from __future__ import annotations

from relayish.errors import Span, StepLimitError


def step_limit(max_calls: int, global_name: str, span: Span | None = None) -> StepLimitError:
    """The error of a run past its ``max_calls`` in either backend (the evaluator counts calls, the
    JIT's ``CallBudget`` in jit/lower.py counts function entries and loop iterations)."""
    return StepLimitError(f"step limit exceeded: more than {max_calls} calls (in @{global_name}): pass a larger "
                          "max_calls if the program should run longer", span)
