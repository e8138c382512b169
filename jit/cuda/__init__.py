"""The CUDA target (``relayish.compile(..., target="cuda")``): a kernel per operator on device
arrays (``launch.py`` and the families beside it) and the program's boundary (``runtime.py``).

Importing this package imports ``numba.cuda``; the CPU target never does. Without a GPU, set
``NUMBA_ENABLE_CUDASIM=1`` before Numba is imported to run everything on Numba's simulator.
"""

import numpy as _np

if not hasattr(_np, "row_stack"):
    # numba-cuda (0.30.4, in maintenance: its maintainers will not fix it, NVIDIA/numba-cuda#907)
    # registers an overload of np.row_stack when it compiles its first kernel, which NumPy 2.5
    # removed; without the alias every CUDA kernel fails to compile with an AttributeError. It
    # was only ever another name of vstack.
    _np.row_stack = _np.vstack
