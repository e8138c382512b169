"""Optimization passes, lowering and Numba kernels for the CPU and CUDA (DESIGN.md section 7).

Not yet implemented: the JIT and optimizer issues fill this layer.
"""
