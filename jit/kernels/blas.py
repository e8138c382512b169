"""The BLAS of the CPU kernels' float matrix products: the one NumPy itself loaded.

Why: NumPy's wheels ship their own OpenBLAS (numpy.libs, numpy/.dylibs), and Numba's ``np.dot`` (its
``numba_xxgemm``) calls SciPy's, another library with a thread pool of its own. With two pools in one
process, a user's NumPy products alternating with relayish calls leave one pool's threads spinning while
the other's run: W2 took 2x its time in a process of its own, 40x with another process on a core
(bench/threads.py). Calling the gemm NumPy calls leaves one pool, shared with the user's NumPy code.

Finding it: the already loaded NumPy extension module is opened with ``ctypes`` (the library NumPy
imported, not a new copy), and its symbol scope (the module and the libraries it was linked with:
numpy.libs or numpy/.dylibs in a wheel, a system BLAS otherwise) is searched for the CBLAS names BLAS
builds export, ILP64 ones (64-bit integers) first: ``scipy_cblas_sgemm64_`` (scipy-openblas, NumPy 2's
wheels), ``cblas_sgemm64_`` and ``cblas_sgemm_64`` (OpenBLAS and MKL ILP64), ``scipy_cblas_sgemm`` and
``cblas_sgemm`` (32-bit integers). The single and double precision pair found is registered with LLVM
under names of ours (``relayish_`` + the symbol) by ``ensure_gemm``, which each kernel module calls at
import, before Numba links its cached machine code (what ``numba.np.linalg.ensure_blas`` does for
``numba_xxgemm``).

Threads: the products use OpenBLAS's pool as NumPy does (its threads, shared with the user's NumPy
products: alternating with them costs nothing on an idle machine). While other processes keep the cores
busy (``jit.threads.busy_elsewhere``), each compiled call first sets OpenBLAS's count to 1, and a compiled
call that finds the machine idle again puts the count back (``fit_blas_threads``; where the library exports
``openblas_set_num_threads``). The pool waits for work by spinning for a while after each product: beside
another busy process a product on two threads took 6-16 times its one-thread time here (25 MFLOP: 6.6 ms
against 0.4), a LeNet training step 1.5 s instead of 16 ms, and the workers left spinning by the user's own
NumPy products between our calls made W2 1.7x slower; on an idle machine two threads make W2's products
1.6x faster. So the one count is lowered for NumPy's products too while the machine is busy (they gain
from it as ours do) and the user's own count is given back as soon as a call sees the cores free; a count
the user changed meanwhile is left alone. OpenBLAS's sums differ in their last bits with its thread count:
``OPENBLAS_NUM_THREADS=1`` (or ``threadpoolctl``) keeps them fixed, and relayish then changes nothing.

Kernel modules import ``_gemm`` and ``_mm`` from the one helper module per dtype whose source is
``gemm_source(dtype)`` (``gemm_import``): the declaration of that symbol and the functions that call it.
The source names the symbol, so a process whose NumPy has another BLAS writes other kernel files (the
cache is keyed by source text) and never links a cached kernel against the wrong symbol.

Without such a symbol (a NumPy without CBLAS, or ``RELAYISH_BLAS=numba`` in the environment, which
tests and bench/threads.py use to compare) ``_gemm`` calls Numba's ``numba_xxgemm`` (SciPy's BLAS), as
``np.dot`` did; ``blas_in_use()`` says which BLAS runs.
"""

from __future__ import annotations

import ctypes
import dataclasses
import functools
import os
import sys
import textwrap
from typing import Any, Callable, Sequence

import llvmlite.binding

from ..threads import busy_elsewhere
from .registry import PACKAGE, shared

# (prefix, suffix, integer bits) of the CBLAS names tried, in order: cblas_sgemm is prefix + it + suffix
_NAMES = (("scipy_", "64_", 64), ("", "64_", 64), ("", "_64", 64), ("scipy_", "", 32), ("", "", 32))
_INT32_MAX = 2**31 - 1


@dataclasses.dataclass
class NumpyGemm:
    """The CBLAS ``sgemm`` and ``dgemm`` of NumPy's BLAS."""

    symbols: dict[str, str]  # "float32" / "float64" (and "get_threads" / "set_threads" of OpenBLAS) -> symbol name
    addresses: dict[str, int]  # the same keys -> address
    int_bits: int  # of its integer arguments: 64 (ILP64) or 32
    library: str  # the file it lives in ("?" where unknown)

    def registered_name(self, key: str) -> str:
        """The name kernels call the symbol by (registered by ``ensure_gemm``)."""
        return "relayish_" + self.symbols[key]

    @functools.cached_property
    def thread_control(self) -> tuple[Callable[[], int], Callable[[int], None]] | None:
        """OpenBLAS's ``get`` and ``set`` of its thread count, or None where the library has none."""
        if "set_threads" not in self.addresses:
            return None
        get = ctypes.CFUNCTYPE(ctypes.c_int)(self.addresses["get_threads"])
        set_ = ctypes.CFUNCTYPE(None, ctypes.c_int)(self.addresses["set_threads"])
        return get, set_


def _choice() -> str:
    """``RELAYISH_BLAS``: numpy (the default) or numba."""
    choice = os.environ.get("RELAYISH_BLAS", "").strip() or "numpy"
    if choice not in ("numpy", "numba"):
        raise ValueError(f"RELAYISH_BLAS must be numpy or numba, not {choice!r}")
    return choice


def _numpy_extension() -> str:
    try:
        from numpy._core import _multiarray_umath  # lazy: which of NumPy's two names exists
    except ImportError:  # NumPy 1
        from numpy.core import _multiarray_umath
    return _multiarray_umath.__file__


def _library_of(address: int) -> str:
    """The file of the shared object holding ``address`` (``dladdr``), or ``"?"`` where that is unknown."""

    class DlInfo(ctypes.Structure):
        _fields_ = [("dli_fname", ctypes.c_char_p), ("dli_fbase", ctypes.c_void_p),
                    ("dli_sname", ctypes.c_char_p), ("dli_saddr", ctypes.c_void_p)]

    info = DlInfo()
    try:
        found = ctypes.CDLL(None).dladdr(ctypes.c_void_p(address), ctypes.byref(info))
    except (AttributeError, OSError, TypeError):  # no dladdr (Windows)
        return "?"
    return os.path.realpath(info.dli_fname.decode()) if found and info.dli_fname else "?"


@functools.cache
def numpy_gemm() -> NumpyGemm | None:
    """NumPy's CBLAS gemm pair (module docstring), or None: no such symbol, or ``RELAYISH_BLAS=numba``."""
    if _choice() == "numba":
        return None
    try:
        scope = ctypes.CDLL(_numpy_extension())  # NumPy's library as loaded: dlopen of a loaded file reuses it
    except OSError:
        return None
    for prefix, suffix, bits in _NAMES:
        symbols = {dtype: f"{prefix}cblas_{kind}gemm{suffix}" for dtype, kind in (("float32", "s"), ("float64", "d"))}
        try:
            addresses = {dtype: ctypes.cast(getattr(scope, name), ctypes.c_void_p).value
                         for dtype, name in symbols.items()}
        except AttributeError:
            continue
        for key, name in (("get_threads", f"{prefix}openblas_get_num_threads{suffix}"),
                          ("set_threads", f"{prefix}openblas_set_num_threads{suffix}")):
            if hasattr(scope, name):  # OpenBLAS's thread count, lowered while the machine is busy
                symbols[key], addresses[key] = name, ctypes.cast(getattr(scope, name), ctypes.c_void_p).value
        if len(symbols) == 3:  # one of the pair only: no control
            del symbols["get_threads"], symbols["set_threads"], addresses["get_threads"], addresses["set_threads"]
        return NumpyGemm(symbols, addresses, bits, _library_of(addresses["float32"]))
    return None


class _Lowered:
    """The user's OpenBLAS thread count while ``fit_blas_threads`` keeps it at 1 (None: not lowered)."""

    count: int | None = None


def fit_blas_threads() -> None:
    """Before a compiled call: OpenBLAS on one thread while the machine is busy elsewhere, the user's
    count back once it is not (module docstring)."""
    gemm = numpy_gemm()
    control = gemm.thread_control if gemm is not None else None
    if control is None:
        return
    get, set_ = control
    if busy_elsewhere():
        count = get()
        if count != 1:
            _Lowered.count = count
            set_(1)
    elif _Lowered.count is not None:
        if get() == 1:  # not changed by the user meanwhile
            set_(_Lowered.count)
        _Lowered.count = None


def blas_in_use() -> str:
    """Which BLAS the kernels' float products call, in words (for tests and benchmarks)."""
    gemm = numpy_gemm()
    if gemm is not None:
        return f"NumPy's: {gemm.symbols['float32']} in {gemm.library}"
    why = "RELAYISH_BLAS=numba" if _choice() == "numba" else "no CBLAS gemm found in NumPy's BLAS"
    return f"Numba's numba_xxgemm (SciPy's BLAS): {why}"


def ensure_gemm() -> None:
    """Make the symbols ``gemm_source`` declares resolvable; kernel modules call it at import."""
    gemm = numpy_gemm()
    if gemm is None:
        from numba.np.linalg import ensure_blas  # lazy: numba, only once a kernel needs it

        ensure_blas()
        return
    for dtype, address in gemm.addresses.items():
        llvmlite.binding.add_symbol(gemm.registered_name(dtype), address)


def _block(text: str) -> str:
    return textwrap.dedent(text).strip("\n")


_HELPER = "gemm"  # the helper modules gemm_import names (h_gemm_<dtype>_<hash>), which calls_blas looks for


def gemm_import(dtype: str, names: Sequence[str] = ("_gemm",)) -> str:
    """The kernel-module lines importing ``names`` (``_gemm``, ``_mm``) from ``gemm_source(dtype)``'s
    module; the module is compiled per layout (``registry._contiguous_first``): BLAS reads F-ordered
    operands in place."""
    return shared(gemm_source(dtype), f"{_HELPER}_{dtype}", names) + "PER_LAYOUT = True\n"


def calls_blas(kernel: Any) -> bool:
    """Whether ``kernel`` (a function of a kernel module, or an ``IndexKernel`` running one; anything
    else is not) calls the BLAS: its
    module, or a helper module it imports from, imports from ``gemm_import``'s module. Compiled
    programs without such a kernel skip ``fit_blas_threads``."""
    kernel = getattr(kernel, "run", kernel)  # an index-expression operator's kernel (jit/kernels/index_expr.py)
    name = getattr(kernel, "__module__", None)
    seen: set[str] = set()
    stack = [name] if isinstance(name, str) and name.startswith(PACKAGE) else []
    while stack:
        module = sys.modules.get(stack.pop())
        for value in vars(module).values() if module is not None else ():
            source = getattr(value, "__module__", None)
            if not isinstance(source, str) or not source.startswith(PACKAGE + "h_") or source in seen:
                continue
            if source.startswith(f"{PACKAGE}h_{_HELPER}_"):
                return True
            seen.add(source)
            stack.append(source)
    return False


def gemm_source(dtype: str) -> str:
    """Module source defining ``_gemm(a, b, c, beta)``: c = a @ b + beta * c (beta 0 or 1) for 2-D
    a (m, k), b (k, n) and a C-contiguous c (m, n), and ``_mm(a, b, out)``: out = a @ b. C- and
    F-ordered operands are read as they are (a transposed view is F-ordered), other strides are
    copied first; with m or n zero it does nothing, with k zero c becomes beta * c. The BLAS is NumPy's (``numpy_gemm``), else Numba's ``numba_xxgemm``."""
    if dtype not in ("float32", "float64"):
        raise NotImplementedError(f"no BLAS gemm for {dtype}")
    gemm = numpy_gemm()
    scalar = f"types.{dtype}"
    if gemm is None:  # Fortran's column-major interface: row-major c = a @ b is column-major c^T = b^T @ a^T
        keep, flip = "ord('n')", "ord('t')"
        declaration = _block(f"""
            _xgemm = types.ExternalFunction("numba_xxgemm", types.intc(
                types.char, types.char, types.char, types.intp, types.intp, types.intp,  # kind, transposes, m, n, k
                types.CPointer({scalar}), types.CPointer({scalar}), types.intp,  # alpha, a, lda
                types.CPointer({scalar}), types.intp, types.CPointer({scalar}),  # b, ldb, beta
                types.CPointer({scalar}), types.intp))  # c, ldc
            """)
        call = _block(f"""
            alpha = np.ones(1, np.{dtype})
            scale = np.full(1, beta, np.{dtype})
            _xgemm(ord('{"s" if dtype == "float32" else "d"}'), b_trans, a_trans, n, m, k, alpha.ctypes,
                   b_data.ctypes, ldb, a_data.ctypes, lda, scale.ctypes, c.ctypes, n)
            """)
    else:  # CBLAS: 101 is row-major; 111 and 112 are "as it is" and "transposed"
        keep, flip = "111", "112"
        integer = f"types.int{gemm.int_bits}"
        declaration = _block(f"""
            _xgemm = types.ExternalFunction("{gemm.registered_name(dtype)}", types.void(
                types.intc, types.intc, types.intc, {integer}, {integer}, {integer},  # order, transposes, m, n, k
                {scalar}, types.CPointer({scalar}), {integer},  # alpha, a, lda
                types.CPointer({scalar}), {integer}, {scalar},  # b, ldb, beta
                types.CPointer({scalar}), {integer}))  # c, ldc
            """)
        call = _block(f"""
            _xgemm(101, a_trans, b_trans, m, n, k, np.{dtype}(1), a_data.ctypes, lda, b_data.ctypes, ldb,
                   np.{dtype}(beta), c.ctypes, n)
            """)
        if gemm.int_bits == 32:
            call = _block(f"""
                if max(m, n, k) > {_INT32_MAX}:
                    raise ValueError("BLAS: a matrix dimension exceeds the 32-bit integers of NumPy's BLAS")
                """) + "\n" + call
    functions = _block(f"""
        @numba.njit(cache=True)
        def _operand(x):
            # how BLAS reads a row-major x: (data, its transpose flag, leading dimension)
            if x.flags.c_contiguous:
                return x, {keep}, x.shape[1]
            if x.flags.f_contiguous:
                return x, {flip}, x.shape[0]
            return np.ascontiguousarray(x), {keep}, x.shape[1]


        @numba.njit(cache=True)
        def _gemm(a, b, c, beta):
            m, k = a.shape
            n = b.shape[1]
            if b.shape[0] != k or c.shape[0] != m or c.shape[1] != n:  # BLAS would read or write past an array
                raise ValueError("BLAS: the shapes of a matrix product's operands disagree")
            if m == 0 or n == 0:
                return
            if k == 0:
                if beta == 0:
                    c[:] = 0
                return
            a_data, a_trans, lda = _operand(a)
            b_data, b_trans, ldb = _operand(b)
        """)
    head = "import numba\nimport numpy as np\nfrom numba import types\n\nfrom jit.kernels.blas import ensure_gemm\n\nensure_gemm()"
    product = _block("""
        @numba.njit(cache=True)
        def _mm(a, b, out):
            _gemm(a, b, out, 0.0)
        """)
    return f"{head}\n\n{declaration}\n\n\n{functions}\n{textwrap.indent(call, '    ')}\n\n\n{product}\n"
