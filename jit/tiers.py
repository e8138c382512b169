"""The first call of a compiled program runs on the evaluator while its kernels compile.

Why: with an empty cache a program's first call is mostly Numba compiling kernels (W2's
gradient: about 13 s on two cores, against JAX's 1.5-2 s cold start), and even with a full
cache importing Numba and loading their machine code takes a second; the evaluator runs the same optimized
program on the operators' NumPy semantics in milliseconds. So the first call of a program
runs on the evaluator, while the second process of ``jit/precompile.py`` lowers the program and
compiles its kernels into the cache; the second call lowers it, loads or compiles its kernels,
and every later call runs compiled. The first call does not even import Numba.

Which tier runs a call depends only on the program and on how many calls of its compiled
function came before, never on timing: the first call is the evaluator's, the rest are
compiled, so a script's results repeat exactly from run to run. The two tiers agree to
floating-point rounding, not bit for bit: NumPy and the kernels order sums and compute
transcendentals differently (the test suite holds the JIT to the evaluator within the same
tolerance).

Only straight-line programs over tensors take the evaluator tier: no calls of program
functions or closures (no recursion, no loops; fusion groups are operators). Their evaluator time is
their operators' NumPy time, a small multiple of the kernels'; a loop or a recursion
can run the evaluator's per-call overhead millions of times. ``RELAYISH_TIERED=0`` turns
the evaluator tier off (every call compiled, the first one waiting for the kernels).

The JIT does not import the evaluator (they are sibling layers, docs/design.md): the caller
passes it, ``jit.compile(..., first_tier=interp.run_prepared)``, as ``relayish.compile`` and
``@relay`` do; ``jit.compile`` without one compiles every call.
"""

from __future__ import annotations

import os
from typing import Any

from relayish.expr import Call, Function, Op
from relayish.module import Module
from relayish.traverse import post_order
from relayish.types import FuncType, Shape, TensorType, TupleType

def switched_off(variable: str) -> bool:
    """Whether the environment turns off a setting that is on by default (``RELAYISH_TIERED``,
    ``RELAYISH_COMPILE_AHEAD``): 0, off, false or no, in any case."""
    return os.environ.get(variable, "1").strip().lower() in ("0", "off", "false", "no")


def enabled() -> bool:
    """``RELAYISH_TIERED`` (default on)."""
    return not switched_off("RELAYISH_TIERED")


def straight_line(module: Module, name: str) -> bool:
    """Whether ``@name`` calls only operators and fusion groups (``fn primitive``): no other
    function, global or closure, so no loop or recursion."""
    for node in post_order(module[name].body):
        if isinstance(node, Call) and not isinstance(node.callee, Op) and \
                not (isinstance(node.callee, Function) and node.callee.primitive):
            return False
    return True


def tensors(ty: Any, min_rank: int = 0) -> bool:
    """Tensors of rank ``min_rank`` or more, possibly in tuples: values both tiers hand over
    alike (and, of rank 1 or more, values the CPU target takes and returns unchanged)."""
    if isinstance(ty, TupleType):
        return all(tensors(field, min_rank) for field in ty.fields)
    return isinstance(ty, TensorType) and (min_rank == 0 or isinstance(ty.shape, Shape) and ty.shape.rank >= min_rank)


def evaluator_first(module: Module, name: str, fn_type: FuncType, tiered: bool | None = None) -> bool:
    """Whether the first call of ``@name`` of an optimized ``module`` runs on the evaluator
    (module docstring); ``tiered`` None: as ``RELAYISH_TIERED`` says."""
    on = enabled() if tiered is None else tiered
    return on and all(map(tensors, [*fn_type.params, fn_type.ret])) and straight_line(module, name)
