"""Kernels of the elementwise operators: unary ops, casts, ``*_like``, broadcasting binary ops and ``where``.

Loops. Arguments are made contiguous (``np.ascontiguousarray``: free for contiguous data, one copy of a strided or
broadcast view) and the loops run over flat 1-d views, where LLVM vectorizes them:

- unary and casts: one flat loop (the result has the argument's shape);
- broadcasting (2 or 3 arguments): when every argument has the result's shape, one flat loop; otherwise each
  argument gets element strides over the result's axes (0 where it broadcasts), axes that every argument walks
  alike are merged as NumPy's iterator merges them (a 0-d scalar against anything is one flat axis; a conv bias
  (C, 1, 1) against (N, C, H, W) walks H*W contiguous elements per step), and an odometer walks the outer axes
  while the innermost axis runs one of the specialised loops: all arguments contiguous, or one argument constant
  (stride 0, hoisted: a scalar, a row or a column; for ``where`` also both values constant); a strided loop covers
  the rest. Everything is one function: Numba compiles each function separately, helpers would cost compile time.

Numba would compile a kernel again for each new argument layout; an F-contiguous or strided argument runs on a
C-contiguous copy instead (``registry._contiguous_first``: the kernel's own first step), so a kernel compiles for
C-contiguous arguments, writable or readonly. Measured here (AMD EPYC Zen 4, AVX-512; 2 shared cores, best of 40): float32 add of (1000, 1000) and
(1000, 1000) 165 us vs NumPy's 152 us, with a row (1000,) 99 vs 186 us, with a column (1000, 1) 92 vs 206 us, with a
scalar 85 vs 86 us; (64, 16, 28, 28) * (16, 1, 1) 76 vs 160 us; maximum with a scalar 85 vs 367 us; less 97 vs 97 us;
where(x > 0, x, 0.0) 98 vs 3570 us (NumPy's where broadcasts its scalar slowly); add on a transposed operand 811 vs
824 us; a call on tiny arrays costs ~0.8 us (NumPy 0.3 us), mostly Numba's dispatch.

Parallel loops. Unary operators without a second pass and broadcasting operators whose arguments all have one
shape (C-contiguous) have a second loop, ``numba.prange`` over the flat arrays, taken from ``PARALLEL_MIN`` elements
on: off unless ``RELAYISH_PARALLEL_MIN`` sets it (131072 is a good value where cores are dedicated), by measurement
(2 cores; float32 add of 1M elements: 157 us serial). On an idle machine with Numba's OpenMP layer the loop takes
74 us (W1's forward pass 0.8x NumPy instead of 1.3x), but OpenMP's spinning threads then fight OpenBLAS's: W2's
value and gradient, whose 784x256 weight gradients cross the threshold, went from 0.8 ms to 8.4 ms; with
OMP_WAIT_POLICY=PASSIVE that is gone and so is the gain (W1 forward 1.2-1.5x); Numba's workqueue layer is slower
than one core (314 us); and while another process holds a core an OpenMP barrier can wait 8 ms. The parallel loop
compiles (~1.3 s) only when first taken.

Errors. Integer ``div`` raises ZeroDivisionError when any divisor is 0 (checked over the whole divisor, as the
reference does) and floor-divides (``INT_MIN // -1`` wraps to ``INT_MIN`` as in NumPy instead of trapping); integer
``pow`` raises ValueError for a negative exponent when the result is not empty (NumPy raises on meeting one).
Floats follow IEEE (``error_model="numpy"``: ``x / 0`` is inf or nan, no exception). ``maximum``/``minimum``
propagate NaN and, for equal arguments (``-0.0``, ``0.0``), return the second, as NumPy's contiguous loops do.
Casts from float to integers reproduce NumPy's x86-64 vectorized cast loops also where C leaves the result undefined
(NaN, infinities, out-of-range values; NumPy's short and long arrays disagree there): narrow targets through int32,
uint32/uint64 with the compilers' unsigned scheme, so negative values wrap (-1.5 -> 255 for uint8).

Transcendental operators. These Numba wheels have no SVML, so a loop calling libm costs 2-16 ns per element, and
calling NumPy's ufunc from inside the kernel (``numba.objmode``) would be as fast as NumPy but makes the kernel
uncacheable (Numba cannot cache functions with object-mode blocks, numba issue 3955: every process would compile it
again), so the kernels use vectorizable approximations. ns per element at 1e6 elements, allocation included:

    float32   libm loop   NumPy ufunc (objmode: +1.2 us a call)   approximation   chosen
    exp          2.32          0.45                                  0.30-0.36     approximation (<= 1.02 ulp)
    log          2.59          0.37                                  0.28          approximation (<= 0.83 ulp)
    sqrt         0.17          0.34                                  -             loop (vectorized, exact)
    tanh        15.2           0.36                                  0.28-0.32     approximation (<= 4.9 ulp)
    sigmoid      2.56          0.76 (the reference's 4 ufuncs)       0.35          approximation (<= 2.49 ulp)
    sin          8.1           0.51                                  0.31-0.35     approximation (<= 1.53 ulp)
    cos          8.0           0.53                                  0.30-0.32     approximation (<= 1.53 ulp)

    float64   libm loop   NumPy ufunc   approximation (max ulp off the correctly rounded result, 4000 samples)
    exp          4.3          0.8           0.85  (1)
    log          3.7          0.8           0.68  (1)
    sqrt         0.55         1.15          -     (loop, exact)
    tanh        14.8          1.65          1.31  (1)
    sigmoid      4.4          5.7           0.96  (1)
    sin/cos     16            15            0.9   (2)

The approximations are branch-free (selects for special values, contracted to FMA): exp by Cody-Waite reduction by
ln 2 (polynomial of degree 6 / Taylor degree 13), scaling by 2**n in two steps so subnormal results round once;
sigmoid = 1 / (1 + exp(-x)), the reference's formula; log splits off the exponent around sqrt(2) (Cephes' float
polynomial / fdlibm's); sin/cos reduce by pi/2 in three / four parts (Cephes' float polynomials / fdlibm's kernels);
tanh is Eigen's 13/6 rational for float32 (saturating to +-1 beyond |x| = 9) and Cephes' for float64. Arguments
outside what a reduction handles (log: zero, negative, subnormal, NaN; sin/cos: |x| > 1e4 in float32, 1e5 in
float64) are flagged by the vectorized loop and redone by libm in a second pass that runs only when one occurred.
Float32 bounds are against the correctly rounded result, exhaustively (exp over [-104, 89], log over all positive
numbers, sigmoid over [-88.72, 20], tanh over [0, 9.1], sin/cos over [0, 1e4]); NumPy's own float32
exp/log/sin/tanh err by up to 2.3/3.2/1.5/1.4 ulp. Float ``pow`` calls libm per element (~12 ns; NumPy's SIMD
pow ~0.7 ns) except for x ** 2, which multiplies.

Tolerances against the reference (tests/jit/test_elementwise_kernels.py): exact (NaN equal to NaN) for every
integer and bool result and for neg, sq, abs, relu, sqrt, add, sub, mul, div, maximum, minimum, comparisons, where,
casts; exp, log, sigmoid, sin, cos, tanh and pow rtol 1e-6 (float32; tanh: 4.9 ulp + NumPy's 1.4) or 1e-12
(float64), atol 1e-44 / 1e-300 for subnormal results. float16 has no Numba arithmetic: the generators raise
NotImplementedError for it.
"""

from __future__ import annotations

from typing import Sequence

import attrs

from relayish.ops.element import gives_bool, translate
from relayish.ops.registry import lookup_op

from .registry import ArgType, element_generator, generator

_HEADER = """import math

import numba
import numpy as np

from jit.kernels.registry import parallel_min

_F = np.float32
PARALLEL_MIN = parallel_min()  # elements from which the flat loop runs on every core (module docstring)
"""

# Vectorizable approximations (error bounds in the module docstring). Each handles finite arguments of its range,
# infinities and NaN branch-free; arguments outside the range a reduction is accurate for go to libm in a second pass.
_EXP32 = """
@numba.njit(inline="always", fastmath={"contract"})
def _exp32(x):
    \"\"\"e**x: x = n ln2 + r, |r| <= ln2 / 2, Cephes polynomial, times 2**(n - n // 2) * 2**(n // 2) so that
    subnormal results round once.\"\"\"
    x = _F(89.0) if x > _F(89.0) else x
    x = _F(-104.0) if x < _F(-104.0) else x
    k = x * _F(1.4426950408889634) + _F(12582912.0)
    n = _F(k).view(np.int32) - np.int32(0x4B400000)
    nf = k - _F(12582912.0)
    r = x - nf * _F(0.693359375) - nf * _F(-2.12194440e-4)
    p = _F(1.9875691500e-4)
    p = p * r + _F(1.3981999507e-3)
    p = p * r + _F(8.3334519073e-3)
    p = p * r + _F(4.1665795894e-2)
    p = p * r + _F(1.6666665459e-1)
    p = p * r + _F(5.0000001201e-1)
    y = p * (r * r) + r + _F(1.0)
    n1 = n >> 1
    s1 = np.int32((n1 + 127) << 23).view(np.float32)
    s2 = np.int32((n - n1 + 127) << 23).view(np.float32)
    return y * s1 * s2
"""

_EXP64 = """
@numba.njit(inline="always", fastmath={"contract"})
def _exp64(x):
    \"\"\"e**x: x = n ln2 + r (ln2 in two parts), |r| <= ln2 / 2, Taylor polynomial of degree 13, times
    2**(n - n // 2) * 2**(n // 2).\"\"\"
    x = 710.0 if x > 710.0 else x
    x = -746.0 if x < -746.0 else x
    k = x * 1.4426950408889634 + 6755399441055744.0
    n = np.float64(k).view(np.int64) - np.int64(0x4338000000000000)
    nf = k - 6755399441055744.0
    r = x - nf * 6.93147180369123816490e-01
    r = r - nf * 1.90821492927058770002e-10
    p = 1.0 / 6227020800.0
    p = p * r + 1.0 / 479001600.0
    p = p * r + 1.0 / 39916800.0
    p = p * r + 1.0 / 3628800.0
    p = p * r + 1.0 / 362880.0
    p = p * r + 1.0 / 40320.0
    p = p * r + 1.0 / 5040.0
    p = p * r + 1.0 / 720.0
    p = p * r + 1.0 / 120.0
    p = p * r + 1.0 / 24.0
    p = p * r + 1.0 / 6.0
    p = p * r + 0.5
    y = p * (r * r) + r + 1.0
    n1 = n >> 1
    s1 = np.int64((n1 + 1023) << 52).view(np.float64)
    s2 = np.int64((n - n1 + 1023) << 52).view(np.float64)
    return y * s1 * s2
"""

_LOG32 = """
@numba.njit(inline="always", fastmath={"contract"})
def _log32(x):
    \"\"\"log of a positive normal x (or inf): x = 2**e * m, m in [sqrt(1/2), sqrt(2)), Cephes polynomial in m - 1,
    e ln2 added in two parts.\"\"\"
    bits = _F(x).view(np.int32)
    e = np.int32(np.int32(bits - np.int32(0x3F3504F3)) >> 23)
    m = np.int32(bits - np.int32(e << 23)).view(np.float32)
    ef = _F(e)
    f = m - _F(1.0)
    z = f * f
    p = _F(7.0376836292e-2)
    p = p * f - _F(1.1514610310e-1)
    p = p * f + _F(1.1676998740e-1)
    p = p * f - _F(1.2420140846e-1)
    p = p * f + _F(1.4249322787e-1)
    p = p * f - _F(1.6668057665e-1)
    p = p * f + _F(2.0000714765e-1)
    p = p * f - _F(2.4999993993e-1)
    p = p * f + _F(3.3333331174e-1)
    y = p * f * z + ef * _F(-2.12194440e-4) - _F(0.5) * z
    r = f + y + ef * _F(0.693359375)
    return r if x < np.inf else x
"""

_LOG64 = """
@numba.njit(inline="always", fastmath={"contract"})
def _log64(x):
    \"\"\"log of a positive normal x (or inf), as fdlibm: x = 2**k (1 + f), 1 + f in [sqrt(1/2), sqrt(2)),
    s = f / (2 + f), log(1 + f) = f - (f*f/2 - s (f*f/2 + R(s*s))).\"\"\"
    bits = np.float64(x).view(np.int64)
    e = (bits - np.int64(0x3FE6A09E667F3BCD)) >> 52
    m = np.int64(bits - (e << 52)).view(np.float64)
    k = np.float64(e)
    f = m - 1.0
    s = f / (2.0 + f)
    z = s * s
    w = z * z
    t1 = w * (3.999999999940941908e-01 + w * (2.222219843214978396e-01 + w * 1.531383769920937332e-01))
    t2 = z * (6.666666666666735130e-01 + w * (2.857142874366239149e-01 + w * (1.818357216161805012e-01
                                                                              + w * 1.479819860511658591e-01)))
    hfsq = 0.5 * f * f
    r = k * 6.93147180369123816490e-01 - ((hfsq - (s * (hfsq + t1 + t2) + k * 1.90821492927058770002e-10)) - f)
    return r if x < np.inf else x
"""

_TANH32 = """
@numba.njit(inline="always", fastmath={"contract"})
def _tanh32(x):
    \"\"\"tanh: Eigen's odd 13/6 rational on [-7.9, 7.9]; +-1 beyond |x| = 9; x itself below 4e-4.\"\"\"
    c = _F(7.90531110763549805)
    t = c if x > c else x
    t = -c if t < -c else t
    z = t * t
    p = _F(-2.76076847742355e-16)
    p = p * z + _F(2.00018790482477e-13)
    p = p * z + _F(-8.60467152213735e-11)
    p = p * z + _F(5.12229709037114e-08)
    p = p * z + _F(1.48572235717979e-05)
    p = p * z + _F(6.37261928875436e-04)
    p = p * z + _F(4.89352455891786e-03)
    q = _F(1.19825839466702e-06)
    q = q * z + _F(1.18534705686654e-04)
    q = q * z + _F(2.26843463243900e-03)
    q = q * z + _F(4.89352518554385e-03)
    r = t * p / q
    r = _F(1.0) if x > _F(9.0) else r
    r = _F(-1.0) if x < _F(-9.0) else r
    return x if abs(x) < _F(0.0004) else r
"""

_TANH64 = _EXP64 + """
@numba.njit(inline="always", fastmath={"contract"})
def _tanh64(x):
    \"\"\"tanh as Cephes: x + x^3 P(x^2) / Q(x^2) below |x| = 0.625, else sign(x) (1 - 2 / (exp(2|x|) + 1)).\"\"\"
    a = abs(x)
    z = x * x
    p = -9.64399179425052238628e-1
    p = p * z - 9.92877231001918586564e1
    p = p * z - 1.61468768441708447952e3
    q = z + 1.12811678491632931402e2
    q = q * z + 2.23548839060100448583e3
    q = q * z + 4.84406305325125486048e3
    small = x + x * z * (p / q)
    big = 1.0 - 2.0 / (_exp64(a + a) + 1.0)
    big = -big if x < 0.0 else big
    r = small if a < 0.625 else big
    return x if x == 0.0 else r
"""

_SINCOS32 = """
@numba.njit(inline="always", fastmath={"contract"})
def _sincos32(x, cosine):
    \"\"\"sin (cos: one quadrant on) for |x| <= 1e4: x = j pi/2 + r with pi/2 in three parts, Cephes
    polynomials on |r| <= pi/4.\"\"\"
    k = x * _F(0.636619772367581343) + _F(12582912.0)
    q = _F(k).view(np.int32) + (1 if cosine else 0)
    j = k - _F(12582912.0)
    r = x - j * _F(1.5707963705062866)
    r = r - j * _F(-4.3711388286737929e-08)
    r = r - j * _F(-1.7151245100059488e-15)
    z = r * r
    s = _F(-1.9515295891e-4)
    s = s * z + _F(8.3321608736e-3)
    s = s * z - _F(1.6666654611e-1)
    s = r + r * z * s
    c = _F(2.443315711809948e-5)
    c = c * z - _F(1.388731625493765e-3)
    c = c * z + _F(4.166664568298827e-2)
    c = c * z * z - _F(0.5) * z + _F(1.0)
    v = c if q & 1 else s
    v = -v if q & 2 else v
    return v if cosine else (x if x == _F(0.0) else v)
"""

_SINCOS64 = """
@numba.njit(inline="always", fastmath={"contract"})
def _sincos64(x, cosine):
    \"\"\"sin (cos: one quadrant on) for |x| <= 1e5: x = j pi/2 + r with pi/2 in four parts (fdlibm's; the first three
    of 33 bits, so j times each is exact), fdlibm's kernels on |r| <= pi/4.\"\"\"
    k = x * 0.63661977236758134308 + 6755399441055744.0
    q = np.float64(k).view(np.int64) + (1 if cosine else 0)
    j = k - 6755399441055744.0
    r = x - j * 1.57079632673412561417e+00
    r = r - j * 6.07710050630396597660e-11
    r = r - j * 2.02226624871116645580e-21
    r = r - j * 8.47842766036889956997e-32
    z = r * r
    s = 1.58969099521155010221e-10
    s = s * z - 2.50507602534068634195e-08
    s = s * z + 2.75573137070700676789e-06
    s = s * z - 1.98412698298579493134e-04
    s = s * z + 8.33333333332248946124e-03
    s = s * z - 1.66666666666666324348e-01
    sv = r + r * z * s
    c = -1.13596475577881948265e-11
    c = c * z + 2.08757232129817482790e-09
    c = c * z - 2.75573143513906633035e-07
    c = c * z + 2.48015872894767294178e-05
    c = c * z - 1.38888888888741095749e-03
    c = c * z + 4.16666666666666019037e-02
    hz = 0.5 * z
    w = 1.0 - hz
    cv = w + (((1.0 - w) - hz) + z * z * c)
    v = cv if q & 1 else sv
    v = -v if q & 2 else v
    return v if cosine else (x if x == 0.0 else v)
"""


def _np_type(dtype: str) -> str:
    return "np.bool_" if dtype == "bool" else f"np.{dtype}"


def _check_dtypes(args: Sequence[ArgType]) -> None:
    for arg in args:
        if arg.dtype == "float16":
            raise NotImplementedError("Numba has no float16 arithmetic; no CPU kernel for float16 tensors")


def _decorator(fastmath: bool = False, nogil: bool = False) -> str:
    flags = (', fastmath={"contract"}' if fastmath else "") + (", nogil=True" if nogil else "")
    return f'@numba.njit(cache=True, error_model="numpy"{flags})'


def _is_float(dtype: str) -> bool:
    return dtype.startswith("float")


def _parallel_loop(expr: str, nargs: int, fastmath: bool, unary: bool = False) -> str:
    """``_parallel(f0, ..., fo)``: the element loop over flat contiguous arrays on every core. Generated beside
    the serial kernel and called (through the Python-level ``kernel``) only from ``PARALLEL_MIN`` elements on, so
    Numba compiles it only for programs that have such arrays (parallel loops take ~1.3 s to compile)."""
    flags = ', fastmath={"contract"}' if fastmath else ""
    flats = ", ".join(f"f{k}" for k in range(nargs))
    reads = "x = f0[j]" if unary else "; ".join(f"x{k} = f{k}[j]" for k in range(nargs))
    return f"""@numba.njit(cache=True, parallel=True, error_model="numpy"{flags})
def _parallel({flats}, fo):
    for j in numba.prange(fo.size):
        {reads}
        fo[j] = {expr}
"""


def _is_signed(dtype: str) -> bool:
    return dtype.startswith("int")


# ---------------------------------------------------------------------------------------------------------------
# Unary operators


# ---------------------------------------------------------------------------------------------------------------
# Casts and *_like


def _conversion(source: str, target: str) -> str:
    """The conversion of the element x, as NumPy's x86-64 cast loops do it also where C leaves it undefined (NaN,
    infinities, values out of the target's range): through int32 for narrow integers, and for uint32/uint64 the
    compilers' unsigned scheme (subtract 2**31 / 2**63 from large values, convert signed, flip the top bit)."""
    if target == "bool" and source != "bool":
        return f"x != {_np_type(source)}(0)"
    if not _is_float(source) or _is_float(target) or target == "bool":
        return "x"
    if target in ("int8", "int16", "uint8", "uint16"):
        return "np.int32(x)"
    if target == "uint32":
        top = f"{_np_type(source)}(2147483648.0)"
        return f"(np.uint32(np.int32(x - {top})) ^ np.uint32(0x80000000)) if x >= {top} else np.uint32(np.int32(x))"
    if target == "uint64":
        top = f"{_np_type(source)}(9223372036854775808.0)"
        return (f"(np.uint64(np.int64(x - {top})) ^ np.uint64(0x8000000000000000)) if x >= {top} "
                "else np.uint64(np.int64(x))")
    return "x"


def _cast_source(x: ArgType, target: str, extra_args: Sequence[ArgType]) -> str:
    """x converted element by element to ``target`` (the store converts as astype does); extra arguments
    (cast_like's ``like``) supply nothing but their dtype."""
    _check_dtypes([x, *extra_args])
    if target == "float16":
        raise NotImplementedError("Numba has no float16 arithmetic; no CPU kernel for float16 tensors")
    expr = _conversion(x.dtype, target)
    params = ", ".join(["a0"] + [f"_unused{i}" for i in range(len(extra_args))])
    return f"""{_HEADER}

{_decorator()}
def kernel({params}):
    out = np.empty(a0.shape, {_np_type(target)})
    fo = out.reshape(-1)
    f0 = np.ascontiguousarray(a0).reshape(-1)
    for j in range(fo.size):
        x = f0[j]
        fo[j] = {expr}
    return out
"""


@generator("cast")
def generate_cast(attrs: dict, args: Sequence[ArgType]) -> str:
    """x converted to ``attrs["dtype"]`` (a BaseType, baked into the source)."""
    return _cast_source(args[0], attrs["dtype"].to_numpy().name, [])


@generator("cast_like")
def generate_cast_like(attrs: dict, args: Sequence[ArgType]) -> str:
    """x converted to like's dtype; like's shape and values are not read."""
    return _cast_source(args[0], args[1].dtype, [args[1]])


def _fill_source(value: str, x: ArgType) -> str:
    _check_dtypes([x])
    return f"""{_HEADER}

{_decorator()}
def kernel(x):
    return np.{value}(x.shape, {_np_type(x.dtype)})
"""


@generator("zeros_like")
def generate_zeros_like(attrs: dict, args: Sequence[ArgType]) -> str:
    """Zeros of x's shape and dtype."""
    return _fill_source("zeros", args[0])


@generator("ones_like")
def generate_ones_like(attrs: dict, args: Sequence[ArgType]) -> str:
    """Ones of x's shape and dtype."""
    return _fill_source("ones", args[0])


# ---------------------------------------------------------------------------------------------------------------
# Broadcasting operators

class _Code:
    """Lines of a function body, indented by nesting level."""

    def __init__(self) -> None:
        self.lines: list[str] = []

    def __call__(self, level: int, *lines: str) -> None:
        self.lines += ["    " * level + line for line in lines]

    def text(self) -> str:
        return "\n".join(self.lines) + "\n"


def _inner_loops(
    code: _Code, level: int, expr: str, nargs: int, combos: Sequence[tuple[int, ...]], scalar_case: tuple[str, str]
) -> None:
    """The loops over the innermost axis: n elements into ``o``; argument k starts at f{k}[p{k}] and advances by
    s{k}, in {0, 1} after coalescing (and irrelevant when n is 1): one loop for each pattern in ``combos`` (a
    stride-0 argument is a hoisted scalar), a strided loop for any other. ``scalar_case`` (condition, expression):
    a cheaper expression for when the last argument is a hoisted scalar meeting the condition."""

    def loop(level: int, combo: tuple[int, ...], body: str) -> None:
        code(level, "for j in range(n):")
        code(level + 1, *(f"x{k} = v{k}[j]" for k, s in enumerate(combo) if s), f"o[j] = {body}")

    for i, combo in enumerate(combos):
        test = " and ".join(f"s{k} == {s}" for k, s in enumerate(combo))
        if i == 0:  # all contiguous
            test = f"n == 1 or {test}"
        code(level, f"{'if' if i == 0 else 'elif'} {test}:")
        code(level + 1, *(f"v{k} = f{k}[p{k}:p{k} + n]" if s else f"x{k} = f{k}[p{k}]" for k, s in enumerate(combo)))
        if scalar_case[0] and combo == (1,) * (nargs - 1) + (0,):
            code(level + 1, f"if {scalar_case[0]}:")
            loop(level + 2, combo, scalar_case[1])
            code(level + 1, "else:")
            loop(level + 2, combo, expr)
        else:
            loop(level + 1, combo, expr)
    if len(combos) < 2**nargs - 1:
        code(level, "else:")
        code(level + 1, "for j in range(n):")
        code(level + 2, *(f"x{k} = f{k}[p{k} + j * s{k}]" for k in range(nargs)), f"o[j] = {expr}")


def _broadcast_source(
    expr: str,
    args: Sequence[ArgType],
    out_dtype: str,
    *,
    helpers: str = "",
    divisor_check: int | None = None,
    exponent_check: int | None = None,
    scalar_case: tuple[str, str] = ("", ""),
) -> str:
    """A broadcasting kernel computing ``expr`` of the elements x0, x1, ... (see the module docstring). One
    function: Numba compiles each function separately, and helpers would double the compile time."""
    _check_dtypes(args)
    parallel = divisor_check is None and exponent_check is None and all(a.rank == args[0].rank for a in args)
    nargs = len(args)
    rank = max(a.rank for a in args)
    width = max(rank, 1)
    ks = range(nargs)
    # Inner-loop patterns: all contiguous, then one constant argument (a scalar or a broadcast row/column); for
    # where also both values constant (where(c, 1.0, 0.0)). Other patterns take the strided loop.
    combos = [(1,) * nargs] + [tuple(int(i != k) for i in ks) for k in ks]
    if nargs == 3:
        combos.append((1, 0, 0))
    names = ", ".join(f"a{k}" for k in ks)
    code = _Code()
    for d in range(rank):
        code(1, f"n{d} = 1")
        for k, a in enumerate(args):
            if d >= rank - a.rank:
                code(1, f"s = a{k}.shape[{d - rank + a.rank}]", "if s != 1:")
                code(2, f"if n{d} != 1 and n{d} != s:")
                code(3, 'raise ValueError("operands could not be broadcast together: a dimension differs, not 1")')
                code(2, f"n{d} = s")
    shape = "(" + "".join(f"n{d}, " for d in range(rank)) + ")"
    code(1, f"out = np.empty({shape}, {_np_type(out_dtype)})", "fo = out.reshape(-1)")
    code(1, *(f"f{k} = np.ascontiguousarray(a{k}).reshape(-1)" for k in ks))
    if divisor_check is not None:  # the whole divisor, before the size-0 return, as the reference checks
        code(1, f"for j in range(f{divisor_check}.size):")
        code(2, f"if f{divisor_check}[j] == 0:")
        code(3, 'raise ZeroDivisionError("integer division by zero (a divisor is 0)")')
    code(1, "if fo.size == 0:")
    code(2, "return out")
    if exponent_check is not None:  # NumPy raises on meeting a negative exponent, so only for a non-empty result
        code(1, f"for j in range(f{exponent_check}.size):")
        code(2, f"if f{exponent_check}[j] < 0:")
        code(3, 'raise ValueError("Integers to negative integer powers are not allowed.")')
    code(1, f"dims = np.ones({width}, np.intp)", f"st = np.zeros(({nargs}, {width}), np.intp)")
    if all(a.rank == rank for a in args):  # the common case: no broadcasting, one flat loop
        code(1, "if " + " and ".join(f"a{k}.shape == out.shape" for k in ks) + ":")
        code(2, "m = 1", "dims[0] = fo.size", *(f"st[{k}, 0] = 1" for k in ks))
        code(1, "else:")
        level = 2
    else:
        level = 1
    code(level, *(f"dims[{d}] = n{d}" for d in range(rank)))
    for k, a in enumerate(args):  # element strides of the contiguous f{k} over the result's axes
        code(level, "step = 1")
        for i in reversed(range(a.rank)):
            code(level, f"if a{k}.shape[{i}] != 1:")
            code(level + 1, f"st[{k}, {rank - a.rank + i}] = step")
            code(level, f"step *= a{k}.shape[{i}]")
    # Coalesce: drop size-1 axes, merge an axis into the kept one before it when every argument walks them alike.
    code(level, "m = 0", f"for d in range({width}):")
    code(level + 1, "n = dims[d]", "if n == 1:")
    code(level + 2, "continue")
    code(level + 1, "if m > 0 and " + " and ".join(f"st[{k}, m - 1] == st[{k}, d] * n" for k in ks) + ":")
    code(level + 2, "dims[m - 1] *= n", *(f"st[{k}, m - 1] = st[{k}, d]" for k in ks))
    code(level + 1, "else:")
    code(level + 2, "dims[m] = n", *(f"st[{k}, m] = st[{k}, d]" for k in ks), "m += 1")
    code(level, "if m == 0:")
    code(level + 1, "dims[0] = 1", "m = 1")
    code(1, "n = dims[m - 1]", *(f"s{k} = st[{k}, m - 1]" for k in ks), *(f"p{k} = 0" for k in ks))
    code(1, f"idx = np.zeros({width}, np.intp)", "for base in range(0, fo.size, n):")
    code(2, "o = fo[base:base + n]")
    _inner_loops(code, 2, expr, nargs, combos, scalar_case)
    code(2, "d = m - 2", "while d >= 0:")  # the odometer over the outer axes
    code(3, "idx[d] += 1", *(f"p{k} += st[{k}, d]" for k in ks), "if idx[d] < dims[d]:")
    code(4, "break")
    code(3, *(f"p{k} -= st[{k}, d] * dims[d]" for k in ks), "idx[d] = 0", "d -= 1")
    code(1, "return out")
    serial = f"{_decorator()}\ndef {'_serial' if parallel else 'kernel'}({names}):\n{code.text()}"
    if not parallel:
        return f"{_HEADER}{helpers}\n\n{serial}"
    same = " and ".join(f"a{k}.shape == a0.shape and a{k}.flags.c_contiguous" for k in ks)
    return f"""{_HEADER}{helpers}\n\n{serial}
{_parallel_loop(expr, nargs, bool(helpers))}

def kernel({names}):
    if a0.size >= PARALLEL_MIN and {same}:
        out = np.empty(a0.shape, {_np_type(out_dtype)})
        _parallel({", ".join(f"a{k}.reshape(-1)" for k in ks)}, out.reshape(-1))
        return out
    return _serial({names})
"""


# ---------------------------------------------------------------------------------------------------------------
# Element expressions: an operator record's ``element`` (relayish/ops/element.py) written in Numba


_APPROXIMATIONS = {  # function -> (call template, float32 helper, float64 helper)
    "exp": ("_exp{bits}({0})", _EXP32, _EXP64),
    "tanh": ("_tanh{bits}({0})", _TANH32, _TANH64),
    "log": ("_log{bits}({0})", _LOG32, _LOG64),
    "sin": ("_sincos{bits}({0}, False)", _SINCOS32, _SINCOS64),
    "cos": ("_sincos{bits}({0}, True)", _SINCOS32, _SINCOS64),
}
_LIBM = {"log": "np.log({0})", "sin": "math.sin({0})", "cos": "math.cos({0})"}  # where an approximation stops

_IPOW = '''
@numba.njit(inline="always")
def _ipow_{T}(a, b):
    """a ** b for b >= 0 by squaring; the products wrap as NumPy's do."""
    r = np.{T}(1)
    while b > np.{T}(0):
        if b & np.{T}(1):
            r = r * a
        a = a * a
        b = b >> np.{T}(1)
    return r
'''

# NumPy's floor_divide and remainder of floats (npy_divmod): fmod, then the quotient snapped to an integer.
_FLOAT_DIVMOD = '''
@numba.njit(inline="always")
def _divmod_{T}(a, b):
    m = np.fmod(a, b)
    if b == np.{T}(0):
        return a / b, m
    d = (a - m) / b
    if m != np.{T}(0):
        if (b < np.{T}(0)) != (m < np.{T}(0)):
            m += b
            d -= np.{T}(1)
    else:
        m = np.copysign(a - a, b)  # a is finite here: a - a is a zero of its dtype
    if d != np.{T}(0):
        q = np.floor(d)
        if d - q > np.{T}(0.5):
            q += np.{T}(1)
    else:
        q = np.copysign(a - a, a / b)
    return q, m
'''


@attrs.frozen
class ElementCode:
    """An element expression in Numba: ``expr`` over the argument names, the helper functions it
    calls, ``fixup`` (condition, exact expression) for the elements an approximation does not
    cover, the integer arguments checked over the whole array (a divisor, an exponent), a cheaper
    expression for a scalar last argument, and the result dtype."""

    expr: str
    helpers: str
    fixup: tuple[str, str] | None
    divisor: int | None
    exponent: int | None
    scalar_case: tuple[str, str]
    out_dtype: str


class NumbaDialect:
    """Writes element expressions for the CPU kernels (module docstring: approximations, checks)."""

    def __init__(self, args: Sequence[str], dtype: str, exact: bool = False):
        self.args, self.dtype, self.exact = list(args), dtype, exact
        self.helpers: dict[str, str] = {}
        self.fixups: list[str] = []
        self.divisor: int | None = None
        self.exponent: int | None = None
        self.scalar_case = ("", "")

    def arg(self, index: int) -> str:
        return self.args[index]

    def literal(self, value: int | float | bool) -> str:
        return f"{_np_type(self.dtype)}({value!r})"

    def unary(self, op: str, x: str) -> str:
        return f"(not {x})" if op == "not" else f"(-{x})"

    def binary(self, op: str, x: str, y: str) -> str:
        floating = _is_float(self.dtype)
        if op in ("and", "or"):
            return f"({x} {'&' if op == 'and' else '|'} {y})"
        if op in ("+", "-", "*", "==", "!=", "<", "<=", ">", ">=") or op == "/" and floating:
            return f"({x} {op} {y})"
        if op in ("//", "%") and floating:
            self.helpers[f"_divmod_{self.dtype}"] = _FLOAT_DIVMOD.replace("{T}", self.dtype)
            return f"_divmod_{self.dtype}({x}, {y})[{int(op == '%')}]"
        if op in ("/", "//", "%"):
            self.divisor = self._argument(y, "divisor")
            if not _is_signed(self.dtype):
                return f"({x} {'%' if op == '%' else '//'} {y})"
            # x // -1 is negation (wrapping for the smallest integer, where the hardware division would trap)
            return f"({self.literal(0)} if {y} == -1 else {x} % {y})" if op == "%" else \
                f"(-{x} if {y} == -1 else {x} // {y})"
        assert op == "**"
        if floating:
            # libm per element (NumPy's SIMD pow has no vectorizable counterpart here); x ** 2, what squares and
            # losses write, multiplies.
            if (x, y) == tuple(self.args[:2]):
                self.scalar_case = (f"{y} == 2", f"{x} * {x}")
            return f"({x} ** {y})"
        self.helpers[f"_ipow_{self.dtype}"] = _IPOW.replace("{T}", self.dtype)
        if _is_signed(self.dtype):
            self.exponent = self._argument(y, "exponent")
        return f"_ipow_{self.dtype}({x}, {y})"

    def call(self, name: str, args: list[str]) -> str:
        x = args[0]
        selected = selection(name, args, self.dtype)
        if selected is not None:
            return selected
        if name == "erf":
            return f"math.erf({x})"
        if name in _APPROXIMATIONS and self.dtype in ("float32", "float64") and \
                not (self.exact and name in _LIBM):
            template, single, double = _APPROXIMATIONS[name]
            self.helpers[name if name not in ("sin", "cos") else "sincos"] = single if self.dtype == "float32" else double
            if name in _LIBM:
                tiny = "_F(1.17549435e-38)" if self.dtype == "float32" else "2.2250738585072014e-308"  # smallest normal
                far = "_F(1e4)" if self.dtype == "float32" else "1e5"  # where reduction by pi/2 stops being accurate
                self.fixups.append(f"not {x} >= {tiny}" if name == "log" else f"abs({x}) > {far}")
            return template.format(x, bits=self.dtype[-2:])
        return _LIBM.get(name, f"np.{name}({{0}})").format(x)

    def _argument(self, name: str, role: str) -> int:
        if name not in self.args:
            raise NotImplementedError(f"an integer {role} must be an argument of the operator, not {name}")
        return self.args.index(name)


def selection(name: str, args: list[str], dtype: str) -> str | None:
    """``where``, ``maximum``, ``minimum`` and ``abs`` in Numba, as the CPU and CUDA kernels write
    them alike (None for other functions): NaN wins a maximum, and of equal arguments (-0.0, 0.0)
    the second, as NumPy's loops give."""
    x = args[0]
    if name == "where":
        return f"({args[1]} if {x} else {args[2]})"
    if name in ("maximum", "minimum"):
        y = args[1]
        return f"({y} if ({x} {'<=' if name == 'maximum' else '>='} {y}) | ({y} != {y}) else {x})"
    if name == "abs":
        return x if dtype.startswith("uint") else f"abs({x})"
    return None


def element_code(op: str, dtypes: Sequence[str], names: Sequence[str]) -> ElementCode:
    """Operator ``op``'s element expression over ``names`` (arguments of ``dtypes``) in Numba."""
    text = lookup_op(op).element
    dtype = next((d for d in dtypes if d != "bool"), "bool")
    dialect = NumbaDialect(names, dtype)
    expr = translate(text, dialect)
    fixup = None
    if dialect.fixups:
        fixup = (" or ".join(dialect.fixups), translate(text, NumbaDialect(names, dtype, exact=True)))
    return ElementCode(expr, "".join(dialect.helpers.values()), fixup, dialect.divisor, dialect.exponent,
                       dialect.scalar_case, "bool" if gives_bool(text) else dtype)


def _element_source(code: ElementCode, args: Sequence[ArgType]) -> str:
    """A flat loop for one argument (with the fixup pass and the parallel loop), broadcasting loops otherwise."""
    if len(args) > 1:
        return _broadcast_source(code.expr, args, code.out_dtype, helpers=code.helpers, divisor_check=code.divisor,
                                 exponent_check=code.exponent, scalar_case=code.scalar_case)
    _check_dtypes(args)
    out = _np_type(code.out_dtype)
    parallel = code.fixup is None
    body = f"""
{_decorator(fastmath=bool(code.helpers))}
def {'_serial' if parallel else 'kernel'}(a0):
    out = np.empty(a0.shape, {out})
    fo = out.reshape(-1)
    f0 = np.ascontiguousarray(a0).reshape(-1)
"""
    if code.fixup:
        cond, fallback = code.fixup
        body += f"""    redo = False
    for j in range(fo.size):
        x = f0[j]
        fo[j] = {code.expr}
        redo |= {cond}
    if redo:
        for j in range(fo.size):
            x = f0[j]
            if {cond}:
                fo[j] = {fallback}
"""
    else:
        body += f"""    for j in range(fo.size):
        x = f0[j]
        fo[j] = {code.expr}
"""
    source = f"{_HEADER}{code.helpers}{body}    return out\n"
    if not parallel:
        return source
    return f"""{source}
{_parallel_loop(code.expr, 1, bool(code.helpers), unary=True)}

def kernel(a0):
    if a0.size >= PARALLEL_MIN and a0.flags.c_contiguous:
        out = np.empty(a0.shape, {out})
        _parallel(a0.reshape(-1), out.reshape(-1))
        return out
    return _serial(a0)
"""


@element_generator("cpu")
def generate_element(op: str, attrs: dict, args: Sequence[ArgType]) -> str:
    """The kernel of an operator given by its element expression (see the module docstring for the loops)."""
    names = ["x"] if len(args) == 1 else [f"x{k}" for k in range(len(args))]
    return _element_source(element_code(op, [a.dtype for a in args], names), args)
