"""Helpers that let LLVM vectorize the loops of fused kernels: wide vectors, and sums in lanes.

Wide vectors. LLVM tunes Intel cores with AVX-512 (Skylake-X through Sapphire Rapids) to prefer
256-bit vectors, for code that mixes a little vector work into scalar code. A fused kernel's
element loop is all vector work: with 512-bit vectors W1's forward loop (tanh of a multiply-add,
squared and summed) took 397 instead of 451 us on two threads of a Rocket Lake machine, and 25.8
instead of 30.3 us on 65,536 elements on one (medians of 9, the same bits). Numba has no
per-function option for it, so ``_wide_vectors()``, called first in a jitted function, is an
intrinsic that gives the LLVM function it is compiled into the attribute
``"prefer-vector-width"="512"``; a machine without AVX-512 gets the widest vectors it has, as
before. The attribute is in the machine code Numba caches. llvmlite's function attributes accept
only LLVM's enumerated ones, so the string attribute is added to the set directly; were that to
stop working, the function compiles as before (narrower vectors, the same results).

Sums in lanes. LLVM vectorizes a loop that sums floats only when its additions may be
reassociated; ``reassoc`` on the whole function would also let it reorder the element code (tanh's
polynomial, ...). ``_lane_add(s, v)`` is ``s + v`` with ``reassoc`` on that one addition, so a
tile's sum runs in vector lanes while the element code stays as written. W1's forward loop on one
core of a 2-core EPYC: 920 us when each tile's values went to a buffer that a separate
``reassoc`` function summed, 625 us with ``_lane_add`` (the loop that only stores its values:
612 us). The order of additions is fixed by the machine code, so results repeat on one machine.

``SOURCE`` is written into each kernel module that uses it (jit/kernels/fused.py), as the
kernels' other helpers are: a kernel's cache key is its text, so a change here compiles the
kernels again.
"""

ATTRIBUTE = '"prefer-vector-width"="512"'

SOURCE = f"""
from numba.extending import intrinsic as _intrinsic


@_intrinsic
def _wide_vectors(typingctx):
    # the function calling it prefers 512-bit vectors (jit/kernels/vectorize.py)
    def codegen(context, builder, signature, args):
        try:
            set.add(builder.function.attributes, {ATTRIBUTE!r})
        except (TypeError, AttributeError):  # llvmlite keeps attributes otherwise now: narrower vectors
            pass
        return context.get_dummy_value()

    return numba.types.none(), codegen


@_intrinsic
def _lane_add(typingctx, s, v):
    # s + v that LLVM may reassociate: a loop summing with it adds in vector lanes (jit/kernels/vectorize.py)
    def codegen(context, builder, signature, args):
        total = builder.fadd(*args)
        total.flags.append("reassoc")
        return total

    return s(s, v), codegen
"""
