"""Wide vectors for the element loops of fused kernels.

LLVM tunes Intel cores with AVX-512 (Skylake-X through Sapphire Rapids; this machine reports
itself as "rocketlake") to prefer 256-bit vectors, for code that mixes a little vector work into
scalar code. A fused kernel's element loop is all vector work: with 512-bit vectors W1's forward
loop (tanh of a multiply-add, squared and summed) took 397 instead of 451 us on two threads, and
25.8 instead of 30.3 us on 65,536 elements on one (medians of 9, the same bits). Numba has no
per-function option for it, so ``_wide_vectors()``, called first in a jitted function, is an
intrinsic that gives the LLVM function it is compiled into the attribute
``"prefer-vector-width"="512"``; a machine without AVX-512 gets the widest vectors it has, as
before. The attribute is in the machine code Numba caches.

``SOURCE`` is written into each kernel module that uses it (jit/kernels/fused.py), as the
kernels' other helpers are: a kernel's cache key is its text, so a change here compiles the
kernels again. llvmlite's function attributes accept only LLVM's enumerated ones, so the string
attribute is added to the set directly; were that to stop working, the function compiles as
before (narrower vectors, the same results).
"""

ATTRIBUTE = '"prefer-vector-width"="512"'

SOURCE = f"""
from numba.extending import intrinsic as _intrinsic


@_intrinsic
def _wide_vectors(typingctx):
    # the function calling it prefers 512-bit vectors (jit/kernels/vector_width.py)
    def codegen(context, builder, signature, args):
        try:
            set.add(builder.function.attributes, {ATTRIBUTE!r})
        except (TypeError, AttributeError):  # llvmlite keeps attributes otherwise now: narrower vectors
            pass
        return context.get_dummy_value()

    return numba.types.none(), codegen
"""
