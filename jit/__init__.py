"""Optimization passes, lowering and Numba kernels (docs/design.md).

``jit.compile(module, name)`` (``relayish.compile``, with the evaluator as its first tier)
returns a callable that runs the global as generated Python calling one Numba kernel per
operator; see ``jit/compile.py`` (the program), ``jit/lower.py`` (IR to Python) and
``jit/kernels/`` (a kernel generator per operator, and the kernel cache).
"""

from .compile import CompiledFunction, compile

__all__ = ["CompiledFunction", "compile"]
