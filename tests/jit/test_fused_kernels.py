"""Fused kernels (jit/kernels/fused.py) give the evaluator's results, and W1 runs as one kernel.

Programs are polymorphic in their sizes, so each (program, dtype) is one kernel whatever sizes
hypothesis draws (0 and 1 included): same-shape operands, rows, columns and scalars, reductions
over all axes, over the inner axis and over the outer one, several outputs, integers, casts and
comparisons, fills of a symbolic shape (read for their shape only), and log/sin/cos on arguments their approximations leave to libm. Tolerances: float32
rtol 1e-5 and atol 1e-6 (tanh's approximation is within 5 ulp, contracted multiply-adds round once,
and sums accumulate in float64 where NumPy adds float32 pairwise), float64 rtol 1e-10 and atol
1e-12, integers exact.
"""

from __future__ import annotations

import functools
from collections import Counter
from pathlib import Path

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

import relayish
from jit.kernels.registry import cache_dir
from jit.passes.fuse import fuse
from relayish.testing import check_equivalent
from tests.jit.passes.test_fuse import W1_VG, primitive_groups
from typecheck import infer

T = "Tensor({dtype}, Shape({shape}))"

PROGRAMS = {
    "w1": """def @main[n: Dim](%x: {T_n}, %w: {T_n}, %b: {T_n}) {{ @sum(sq @tanh(%x * %w + %b)) }}""",
    "rows_columns": """def @main[n: Dim, m: Dim](%X: {T_nm}, %b: {T_m}, %c: {T_n1}) {{
  let %h = @tanh(%X + %b) * 2.0{s} - %c in
  (%h, @sum(%h * %h, axis=1, keepdims=true), @mean(@exp(%h), axis=0))
}}""",
    "libm": """def @main[n: Dim](%x: {T_n}) {{ @log(%x * %x) + @sin(%x) * @cos(%x) - @sigmoid(%x) }}""",
    "compare_cast": """def @main[n: Dim](%x: {T_n}, %y: {T_n}) {{
  let %z = @where(%x > %y, %x, @maximum(%y, 0.5{s})) in
  (@cast(%x < %y, dtype={dtype}) * %z + @relu(%y), @sum(-%z / (%y * %y + 1.0{s})))
}}""",
    "fills": """def @main[n: Dim, m: Dim](%X: {T_nm}, %b: {T_m}) {{
  let %h = %X * %b in
  (@zeros_like(%h) + %h + %h, @sum(@ones_like(%h) + @abs(%h), axis=1), @ones_like(%h) - %X)
}}""",
    "integers": """def @main[n: Dim, m: Dim](%i: {T_nm}, %j: {T_m}) {{
  (@sum(%i * %j + 3{s}), @abs(%i - %j) * 2{s}, @sum(@cast(%i > %j, dtype={dtype}), axis=0))
}}""",
}
DTYPES = {"w1": ("f32", "f64"), "rows_columns": ("f32", "f64"), "libm": ("f32", "f64"), "compare_cast": ("f32",),
          "fills": ("f32", "i64"), "integers": ("i32", "i64")}
TYPES = {"f32": ("FloatType(32)", "", np.float32), "f64": ("FloatType(64)", "f64", np.float64),
         "i32": ("IntType(32)", "", np.int32), "i64": ("IntType(64)", "i64", np.int64)}
TOLERANCES = {"f32": (1e-5, 1e-6), "f64": (1e-10, 1e-12), "i32": (None, 0.0), "i64": (None, 0.0)}
SPECIAL = np.array([0.0, -0.0, 1e-40, 3e4, -2e5])
CASES = [(name, d) for name in PROGRAMS for d in DTYPES[name]]


@functools.cache
def program(name: str, d: str) -> tuple[relayish.Module, relayish.Module]:
    """The program typed, and fused."""
    dtype, suffix, _ = TYPES[d]
    shapes = {f"T_{k}": T.format(dtype=dtype, shape=s) for k, s in
              {"n": "n", "m": "m", "nm": "n, m", "n1": "n, 1"}.items()}
    typed = infer(relayish.parse(PROGRAMS[name].format(s=suffix, dtype=dtype, **shapes)))
    return typed, fuse(typed)


def jit(module: relayish.Module, name: str, *args):
    return relayish.compile(module, name)(*args)


def arguments(module: relayish.Module, d: str, n: int, m: int, seed: int) -> list[np.ndarray]:
    rng = np.random.default_rng(seed)
    dtype = TYPES[d][2]
    sizes = {"n": n, "m": m}
    args = []
    for p in module["main"].params:
        shape = tuple(dim.value if dim.is_const else sizes[next(dim.atoms()).name] for dim in p.type_annotation.shape.dims)
        if np.dtype(dtype).kind == "i":
            args.append(rng.integers(-50, 50, shape).astype(dtype))
            continue
        values = rng.uniform(-3, 3, shape).astype(dtype)
        special = rng.random(shape) < 0.2  # zeros, subnormals and huge arguments: libm's second pass
        values[special] = rng.choice(SPECIAL.astype(dtype), special.sum())
        args.append(values)
    return args


@pytest.mark.parametrize(("name", "d"), CASES, ids=[f"{n}-{d}" for n, d in CASES])
@given(n=st.integers(0, 24), m=st.integers(0, 24), seed=st.integers(0, 2**32 - 1))
def test_fused_programs_give_the_evaluators_results(name: str, d: str, n: int, m: int, seed: int) -> None:
    typed, fused = program(name, d)
    rtol, atol = TOLERANCES[d]
    check_equivalent(fused, typed, "main", arguments(typed, d, n, m, seed), rtol=rtol, atol=atol, backend_a=jit)


def test_every_program_here_is_one_fused_kernel():
    for name, d in CASES:
        typed, fused = program(name, d)
        assert len(primitive_groups(fused)) == 1, name
        assert relayish.compile(fused, "main").source.count("k_fused") == 1, name


def kernel_calls(f: relayish.CompiledFunction, *args) -> Counter:
    """Run ``f`` counting the calls of each kernel of its generated program (kernels are the
    program's ``k_*`` globals)."""
    namespace = f.program()[1].__globals__
    calls: Counter = Counter()

    def counting(name: str, kernel):
        def call(*a):
            calls[name.rstrip("_0123456789")] += 1
            return kernel(*a)
        return call

    saved = {k: v for k, v in namespace.items() if k.startswith("k_")}
    namespace.update({k: counting(k, v) for k, v in saved.items()})
    try:
        f(*args)
    finally:
        namespace.update(saved)
    return calls


def test_w1_forward_calls_one_kernel_and_its_gradient_one():
    typed, fused = program("w1", "f32")
    x, w, b = (np.random.default_rng(k).standard_normal(1000).astype(np.float32) for k in range(3))
    assert kernel_calls(relayish.compile(fused, "main"), x, w, b) == Counter({"k_fused": 1})
    value_grad = fuse(infer(relayish.parse(W1_VG)))
    x8, w8, b8 = x[:8], w[:8], b[:8]
    assert kernel_calls(relayish.compile(value_grad, "w1_vg"), x8, w8, b8) == Counter({"k_fused": 1})
    loss, (dw, db) = relayish.compile(value_grad, "w1_vg")(x8, w8, b8)
    t = np.tanh(x8 * w8 + b8)
    np.testing.assert_allclose(db, 2 * t * (1 - t * t), rtol=1e-5, atol=1e-6)
    np.testing.assert_allclose(dw, x8 * db, rtol=1e-5, atol=1e-6)
    np.testing.assert_allclose(loss, np.sum(t * t), rtol=1e-5)


def test_fused_kernels_are_cached_on_disk_as_python_modules():
    typed, fused = program("w1", "f32")
    relayish.compile(fused, "main")(*(np.ones(3, np.float32),) * 3)
    files = list((Path(cache_dir()) / "kernels").glob("k_fused_*.py"))
    assert files and any("def _fused(" in f.read_text() for f in files)


def test_a_group_whose_every_axis_has_size_one():
    """Found by the heavy generated-program run: with no axis to walk, the outputs still store
    their one element (the kernel named a view it had not made)."""
    module = relayish.parse("""
    def @main(%x: Tensor(FloatType(32), Shape(1, 1))) {
      let %y = @abs(@abs(%x) * 2.0) in
      (%y, @sum(%y + 1.0))
    }""")
    x = np.array([[-1.5]], np.float32)
    compiled = relayish.compile(module, "main")
    assert "k_fused" in compiled.source
    y, total = compiled(x)
    np.testing.assert_array_equal(y, [[3.0]])
    assert total == 4.0


def test_element_loops_prefer_512_bit_vectors():
    """jit/kernels/vectorize.py: the attribute is on the LLVM function that calls
    ``_wide_vectors()``, not on others; where the machine has AVX-512 the loop uses it; the values
    are the same. Every fused kernel's ``_part`` calls it."""
    import sys

    import llvmlite.binding as llvm
    import numba

    from jit.kernels.vectorize import ATTRIBUTE, SOURCE

    namespace: dict = {"numba": numba, "np": np}
    exec(SOURCE + """
def narrow(x, y, out):
    for i in range(x.size):
        out[i] = x[i] * np.float32(3.0) + y[i]

def wide(x, y, out):
    _wide_vectors()
    for i in range(x.size):
        out[i] = x[i] * np.float32(3.0) + y[i]
""", namespace)
    narrow, wide = (numba.njit(namespace[name]) for name in ("narrow", "wide"))
    x, y = np.arange(1000, dtype=np.float32), np.ones(1000, np.float32)
    outs = [np.empty_like(x), np.empty_like(x)]
    narrow(x, y, outs[0])
    wide(x, y, outs[1])
    np.testing.assert_array_equal(outs[0], outs[1])
    np.testing.assert_array_equal(outs[1], x * 3 + 1)
    ir_wide, ir_narrow = (next(iter(f.inspect_llvm().values())) for f in (wide, narrow))
    assert ATTRIBUTE in ir_wide and ATTRIBUTE not in ir_narrow
    if "+avx512f" in llvm.get_host_cpu_features().flatten().split(","):
        assert "zmm" in next(iter(wide.inspect_asm().values()))
    typed, fused = program("w1", "f32")
    compiled = relayish.compile(fused, "main")
    compiled(*(np.ones(3, np.float32),) * 3)
    kernel = compiled.program()[1].__globals__["k_fused"]
    source = Path(sys.modules[kernel.__module__].__file__).read_text()
    assert "):\n    _wide_vectors()\n" in source.split("def _part(")[1]


@pytest.mark.parametrize("d", ["f32", "f64"])
def test_a_fused_sum_is_as_accurate_as_numpys_pairwise_sum(d: str):
    """A tile's floats are summed in their dtype, in vector lanes (jit/kernels/vectorize.py), and
    the tiles in float64: the error stays within NumPy's pairwise bound, on sizes that end inside
    the vector loop, a tile, and a chunk run on every thread."""
    dtype, _, np_type = TYPES[d]
    module = relayish.parse(f"def @main[n: Dim](%x: {T.format(dtype=dtype, shape='n')}, "
                            f"%y: {T.format(dtype=dtype, shape='n')}) {{ @sum(%x + %y) }}")
    compiled = relayish.compile(module, "main")
    rng = np.random.default_rng(5)
    for n in (1, 31, 33, 1023, 1025, 70_001, 600_000):
        x, y = (rng.uniform(0.5, 2.0, n).astype(np_type) for _ in range(2))
        values = (x + y).astype(np.float64)  # each element as the kernel rounds it
        exact = np.sum(values)
        bound = 40 * np.finfo(np_type).eps / 2 * np.sum(np.abs(values))  # ~32 additions per lane, 5 joining
        assert abs(float(compiled(x, y)) - exact) <= bound, n


def test_a_tile_of_float32_values_is_summed_in_vector_lanes():
    """The reduction's additions alone may be reassociated, so LLVM vectorizes the tile's sum
    (W1's forward loop: 920 -> 625 us on one core against a buffer summed by a separate function)."""
    import re
    import sys

    typed, fused = program("w1", "f32")
    compiled = relayish.compile(fused, "main")
    compiled(*(np.ones(40, np.float32),) * 3)
    kernel = compiled.program()[1].__globals__["k_fused"]
    # compiled here, not loaded from the kernel cache (a function loaded from there has no LLVM IR to show)
    text = Path(sys.modules[kernel.__module__].__file__).read_text().replace("cache=True", "cache=False")
    namespace: dict = {}
    exec(compile(text, "fused_w1", "exec"), namespace)
    loop = namespace["_fused"]
    loop(*(np.ones(40, np.float32),) * 3)
    llvm = "".join(loop.inspect_llvm().values())
    assert re.search(r"fadd reassoc[a-z ]* <\d+ x float>", llvm)
    assert not re.search(r"fmul reassoc", llvm)  # the element code keeps its order
