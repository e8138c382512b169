"""CUDA tests need Numba's CUDA simulator (or a GPU) chosen before Numba is imported, so they
run in a process of their own: ``tests/jit/test_cuda_target.py`` starts
``RELAYISH_CUDA_PROCESS=1 NUMBA_ENABLE_CUDASIM=1 python3 -m pytest tests/cuda`` (and, where a GPU
is present, the same without the simulator). The main test run does not collect this folder
(``tests/conftest.py``)."""

from __future__ import annotations


def pytest_configure(config) -> None:
    # the simulator runs kernels on NumPy scalars, which warn where the GPU silently wraps or gives inf/nan
    config.addinivalue_line("filterwarnings", "ignore::RuntimeWarning")
