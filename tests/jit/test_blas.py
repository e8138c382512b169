"""The kernels' float products call the BLAS NumPy loaded (jit/kernels/blas.py): ``_gemm`` against NumPy
(rtol 1e-5 float32, 1e-12 float64 of the terms' magnitudes, as tests/jit/test_nn_kernels.py), compiled
kernels loading from a warm cache in a fresh process, and one BLAS thread pool doing the work in a
process that also loaded SciPy's OpenBLAS (the one Numba's ``np.dot`` calls)."""

from __future__ import annotations

import json
import os
import pathlib
import subprocess
import sys

import numpy as np
import pytest

import relayish
from jit.kernels import blas
from jit.kernels.registry import kernel_from_source

ROOT = pathlib.Path(__file__).resolve().parents[2]
RTOL = {"float32": 1e-5, "float64": 1e-12}


def gemm(dtype: str):
    """``kernel(a, b, c, beta)``: ``_gemm`` of the kernel modules, returning c."""
    source = "import numpy as np\nimport numba\n\n" + blas.gemm_source(dtype) + (
        "\n\n@numba.njit(cache=True)\ndef kernel(a, b, c, beta):\n    _gemm(a, b, c, beta)\n    return c\n")
    return kernel_from_source(f"test_gemm_{dtype}", source)


def layout(x: np.ndarray, kind: str) -> np.ndarray:
    """x (same values) in C order, F order, or as a view with strides BLAS cannot take."""
    if kind == "C":
        return np.ascontiguousarray(x)
    if kind == "F":
        return np.asfortranarray(x)
    wide = np.zeros((x.shape[0] * 2, x.shape[1] * 3), x.dtype)
    wide[::2, ::3] = x
    return wide[::2, ::3]


def test_numpys_blas_is_found() -> None:
    found = blas.numpy_gemm()
    assert found is not None, blas.blas_in_use()
    assert found.symbols["float32"] in blas.blas_in_use()
    assert pathlib.Path(found.library).is_file()


@pytest.mark.parametrize("dtype", ["float32", "float64"])
@pytest.mark.parametrize("a_layout", ["C", "F", "strided"])
@pytest.mark.parametrize("b_layout", ["C", "F", "strided"])
@pytest.mark.parametrize("beta", [0.0, 1.0])
def test_gemm_matches_numpy(dtype: str, a_layout: str, b_layout: str, beta: float) -> None:
    rng = np.random.default_rng(0)
    for m, k, n in [(7, 5, 3), (1, 9, 4), (33, 17, 65), (64, 784, 256)]:
        a = layout(rng.standard_normal((m, k)).astype(dtype), a_layout)
        b = layout(rng.standard_normal((k, n)).astype(dtype), b_layout)
        c = rng.standard_normal((m, n)).astype(dtype) if beta else np.full((m, n), np.nan, dtype)  # beta 0: not read
        expected = a.astype(np.float64) @ b.astype(np.float64) + beta * np.nan_to_num(c.astype(np.float64))
        magnitude = np.abs(a.astype(np.float64)) @ np.abs(b.astype(np.float64)) + beta * np.abs(np.nan_to_num(c))
        a_before, b_before = a.copy(), b.copy()
        got = gemm(dtype)(a, b, c, beta)
        assert got is c and got.dtype == dtype
        assert np.all(np.abs(got - expected) <= RTOL[dtype] * magnitude), (m, k, n)
        np.testing.assert_array_equal(a, a_before)
        np.testing.assert_array_equal(b, b_before)


@pytest.mark.parametrize("dtype", ["float32", "float64"])
@pytest.mark.parametrize("m, k, n", [(0, 3, 4), (3, 4, 0), (3, 0, 4), (0, 0, 0)])
def test_gemm_of_zero_sizes(dtype: str, m: int, k: int, n: int) -> None:
    a, b = np.ones((m, k), dtype), np.ones((k, n), dtype)
    assert np.array_equal(gemm(dtype)(a, b, np.full((m, n), np.nan, dtype), 0.0), np.zeros((m, n), dtype))
    c = np.arange(m * n, dtype=dtype).reshape(m, n)
    assert np.array_equal(gemm(dtype)(a, b, c.copy(), 1.0), c)


def test_matmul_kernels_name_the_blas_symbol_they_call() -> None:
    """A cached kernel module is keyed by its source: the symbol in it keeps kernels of another BLAS apart."""
    for dtype in ("float32", "float64"):
        assert blas.numpy_gemm().registered_name(dtype) in blas.gemm_source(dtype)


def run_script(script: str, cache: pathlib.Path, **env: str) -> dict:
    """``script`` in a fresh ``python3 -c`` process with the kernel cache ``cache``: its last line, as JSON."""
    environment = {**os.environ, "RELAYISH_CACHE_DIR": str(cache), **env,
                   "PYTHONPATH": os.pathsep.join([str(ROOT), os.environ.get("PYTHONPATH", "")])}
    proc = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, env=environment,
                          timeout=600, check=False)
    assert proc.returncode == 0, proc.stderr[-3000:]
    return json.loads(proc.stdout.strip().splitlines()[-1])


PROGRAM = r"""
import json
import numpy as np
import relayish
from jit.kernels.blas import blas_in_use
from jit.kernels.registry import compile_stats

mod = relayish.parse('''
def @main(%x: Tensor(FloatType(32), Shape(6, 5)), %w: Tensor(FloatType(32), Shape(5, 4)),
          %c: Tensor(FloatType(32), Shape(6, 4))) -> Tensor(FloatType(32), Shape(6, 4)) {
  %c + @matmul(%x, %w)
}
def @double(%x: Tensor(FloatType(64), Shape(6, 5)),
            %w: Tensor(FloatType(64), Shape(4, 5))) -> Tensor(FloatType(64), Shape(6, 4)) {
  @matmul(%x, @transpose(%w))
}
''')
rng = np.random.default_rng(0)
x, w, c = (rng.standard_normal(s).astype(np.float32) for s in [(6, 5), (5, 4), (6, 4)])
x64, w64 = rng.standard_normal((6, 5)), rng.standard_normal((4, 5))
errors = [
    float(np.max(np.abs(relayish.compile(mod, "main")(x, w, c) - (c.astype(np.float64) + x.astype(np.float64) @ w)))),
    float(np.max(np.abs(relayish.compile(mod, "double")(x64, w64) - x64 @ w64.T))),
]
print(json.dumps({"errors": errors, "blas": blas_in_use(), **compile_stats()}))
"""


def test_compiled_products_load_from_a_warm_cache_in_a_fresh_process(tmp_path: pathlib.Path) -> None:
    cache = tmp_path / "cache"
    cold = run_script(PROGRAM, cache)
    warm = run_script(PROGRAM, cache)
    for result in (cold, warm):
        assert result["errors"][0] <= 1e-5 and result["errors"][1] <= 1e-12
        assert result["blas"] == blas.blas_in_use()
    assert cold["compiled"] > 0 and cold["kernels_generated"] > 0
    assert warm["compiled"] == 0 and warm["kernels_generated"] == 0 and warm["cache_hits"] > 0
    products = [p for p in (cache / "kernels").glob("k_*.py") if "_gemm(" in p.read_text()]
    assert len(products) >= 2  # the c + x @ w group and the single product
    # Numba's gemm (RELAYISH_BLAS=numba) is other source: new kernel files, never the cached machine code
    other = run_script(PROGRAM, cache, RELAYISH_BLAS="numba")
    assert other["kernels_generated"] >= 2 and other["compiled"] > 0 and "numba_xxgemm" in other["blas"]
    assert other["errors"][0] <= 1e-5 and other["errors"][1] <= 1e-12


ONE_POOL = r"""
import json, os

def threads():
    return {int(t) for t in os.listdir("/proc/self/task")}

def cpu_ticks(tids):
    total = 0
    for tid in tids:
        with open(f"/proc/self/task/{tid}/stat") as handle:
            fields = handle.read().rsplit(")", 1)[1].split()
        total += int(fields[11]) + int(fields[12])  # utime + stime
    return total

start = threads()
import numpy as np  # NumPy's OpenBLAS starts its workers as it loads
numpy_workers = threads() - start
import scipy.linalg  # SciPy's OpenBLAS, which Numba's np.dot calls: the second pool
scipy_workers = threads() - start - numpy_workers
import relayish

mod = relayish.parse('''
def @main(%x: Tensor(FloatType(32), Shape(768, 768)),
          %w: Tensor(FloatType(32), Shape(768, 768))) -> Tensor(FloatType(32), Shape(768, 768)) {
  @matmul(%x, %w)
}
''')
f = relayish.compile(mod, "main")
rng = np.random.default_rng(0)
x, w = rng.standard_normal((768, 768)).astype(np.float32), rng.standard_normal((768, 768)).astype(np.float32)
f(x, w)
before = cpu_ticks(numpy_workers), cpu_ticks(scipy_workers)
for _ in range(60):
    out = f(x, w)
after = cpu_ticks(numpy_workers), cpu_ticks(scipy_workers)
bound = 1e-5 * (np.abs(x).astype(np.float64) @ np.abs(w))
print(json.dumps({"numpy_workers": len(numpy_workers), "scipy_workers": len(scipy_workers),
                  "numpy_ticks": after[0] - before[0], "scipy_ticks": after[1] - before[1],
                  "within": bool(np.all(np.abs(out - x.astype(np.float64) @ w) <= bound))}))
"""


def test_one_blas_thread_pool_does_the_work(tmp_path: pathlib.Path) -> None:
    """SciPy's OpenBLAS workers stay idle while relayish multiplies (NumPy's pool does the work,
    or the calling thread while the machine is busy)."""
    result = run_script(ONE_POOL, tmp_path / "cache")
    assert result["scipy_ticks"] == 0, result
    assert result["within"], result


def test_products_run_on_openblas_threads_and_on_one_while_the_machine_is_busy(monkeypatch) -> None:
    """Idle: NumPy's own product on OpenBLAS's two threads, bit for bit; busy elsewhere: the count
    is 1 from that call on (NumPy's products too: its spinning workers would slow both) and the
    result is NumPy's one-thread product, bit for bit (OpenBLAS's sums depend on the count); the
    first call that finds the machine idle puts the user's count back, unless the user changed it."""
    gemm = blas.numpy_gemm()
    if gemm is None or gemm.thread_control is None:
        pytest.skip(f"no OpenBLAS thread control in NumPy's BLAS here ({blas.blas_in_use()})")
    get_threads, set_threads = gemm.thread_control
    busy = [False]
    monkeypatch.setattr(blas, "busy_elsewhere", lambda: busy[0])
    mod = relayish.parse("""
def @main(%x: Tensor(FloatType(32), Shape(256, 784)), %w: Tensor(FloatType(32), Shape(784, 64))) {
  @matmul(%x, %w)
}""")
    f = relayish.compile(mod, "main")
    rng = np.random.default_rng(0)
    x, w = rng.standard_normal((256, 784)).astype(np.float32), rng.standard_normal((784, 64)).astype(np.float32)
    before = get_threads()
    set_threads(2)
    try:
        np.testing.assert_array_equal(f(x, w), x @ w)
        assert get_threads() == 2
        busy[0] = True
        out = f(x, w)
        assert get_threads() == 1
        np.testing.assert_array_equal(out, x @ w)
        busy[0] = False
        f(x, w)
        assert get_threads() == 2
        busy[0] = True
        f(x, w)
        set_threads(3)  # the user's own choice, while lowered
        busy[0] = False
        f(x, w)
        assert get_threads() == 3
    finally:
        set_threads(before)
        blas._Lowered.count = None


def test_only_programs_with_products_set_the_thread_count(monkeypatch) -> None:
    """calls_blas finds the BLAS call in a product's kernel (also through a helper module, as in
    a convolution's) and in no elementwise kernel; a compiled call of a program without products
    leaves OpenBLAS's count alone even while the machine is busy."""
    gemm = blas.numpy_gemm()
    if gemm is None or gemm.thread_control is None:
        pytest.skip(f"no OpenBLAS thread control in NumPy's BLAS here ({blas.blas_in_use()})")
    get_threads, set_threads = gemm.thread_control
    monkeypatch.setattr(blas, "busy_elsewhere", lambda: True)
    T = "Tensor(FloatType(32), Shape(4, 4))"
    mod = relayish.parse(f"""
def @product(%x: {T}, %w: {T}) {{ @matmul(%x, %w) }}
def @conv(%x: Tensor(FloatType(32), Shape(1, 1, 6, 6)), %k: Tensor(FloatType(32), Shape(2, 1, 3, 3))) {{ @conv2d(%x, %k) }}
def @elementwise(%x: {T}, %w: {T}) {{ @tanh(%x) * %w }}""")
    product, conv, elementwise = (relayish.compile(mod, name) for name in ("product", "conv", "elementwise"))
    x = np.ones((4, 4), np.float32)
    before = get_threads()
    set_threads(2)
    try:
        elementwise(x, x)
        conv(np.ones((1, 1, 6, 6), np.float32), np.ones((2, 1, 3, 3), np.float32))
        assert not elementwise.blas and conv.blas and get_threads() == 1
        set_threads(2)
        elementwise(x, x)
        assert get_threads() == 2
        product(x, x)
        assert product.blas and get_threads() == 1
    finally:
        set_threads(before)
        blas._Lowered.count = None
    assert not blas.calls_blas(np.add) and not blas.calls_blas(None)
