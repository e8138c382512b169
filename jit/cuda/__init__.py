"""The CUDA target (``relayish.compile(..., target="cuda")``): a kernel per operator on device
arrays (``launch.py`` and the families beside it) and the program's boundary (``runtime.py``).

Importing this package imports ``numba.cuda``; the CPU target never does. Without a GPU, set
``NUMBA_ENABLE_CUDASIM=1`` before Numba is imported to run everything on Numba's simulator.
"""
