"""The evaluator on a corpus of small programs (tests/interp/programs/*.rly).

Every program's expected result is written here independently of relayish: by hand, or
with NumPy written directly in this file (never relayish's operators). Results are
compared structurally: tuples as Python tuples, tensors as NumPy arrays of the exact
dtype and shape (0-d arrays for scalars), float32 with rtol 1e-5, float64 with rtol
1e-12, integers and bools exactly. Closures are checked by calling them from Python.
"""

from __future__ import annotations

import functools
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Callable

import numpy as np
import pytest
from numpy.lib.stride_tricks import sliding_window_view

import relayish

PROGRAMS = Path(__file__).parent / "programs"


# ---------------------------------------------------------------------------------------
# Values


# Arrays of an exact dtype, for writing expected values.
f32, f64, i32, i64, i8, u8, b = (
    functools.partial(np.asarray, dtype=dtype)
    for dtype in (np.float32, np.float64, np.int32, np.int64, np.int8, np.uint8, np.bool_)
)

UNIT: tuple = ()

RTOL = {np.dtype(np.float32): 1e-5, np.dtype(np.float64): 1e-12, np.dtype(np.float16): 1e-3}


def assert_same(actual: Any, expected: Any, *, rtol: float | None = None, atol: float = 0.0, where: str = "result") -> None:
    """Structural comparison: tuples by position, arrays by dtype, shape and value."""
    if isinstance(expected, Check):
        expected.fn(actual)
        return
    if isinstance(expected, tuple):
        assert isinstance(actual, tuple), f"{where}: expected a tuple of {len(expected)}, got {type(actual).__name__}: {actual!r}"
        assert len(actual) == len(expected), f"{where}: expected a tuple of {len(expected)}, got {len(actual)}: {actual!r}"
        for k, (a, e) in enumerate(zip(actual, expected)):
            assert_same(a, e, rtol=rtol, atol=atol, where=f"{where}[{k}]")
        return
    assert isinstance(expected, np.ndarray), f"bad expectation at {where}: {expected!r}"
    assert isinstance(actual, np.ndarray), f"{where}: expected a NumPy array, got {type(actual).__name__}: {actual!r}"
    assert actual.dtype == expected.dtype, f"{where}: dtype {actual.dtype}, expected {expected.dtype}"
    assert actual.shape == expected.shape, f"{where}: shape {actual.shape}, expected {expected.shape}"
    if np.issubdtype(expected.dtype, np.floating):
        tol = RTOL[expected.dtype] if rtol is None else rtol
        np.testing.assert_allclose(actual, expected, rtol=tol, atol=atol, err_msg=where)
    else:
        np.testing.assert_array_equal(actual, expected, err_msg=where)


@dataclass(frozen=True)
class Check:
    """An expectation that is a function of the result (for closures and refs)."""

    fn: Callable[[Any], None]


@dataclass
class Case:
    args: tuple
    expected: Any
    rtol: float | None = None
    atol: float = 0.0
    label: str = ""


EXPECTATIONS: dict[str, list[Case]] = {}


def expect(name: str, args: tuple, expected: Any, *, rtol: float | None = None, atol: float = 0.0, label: str = "") -> None:
    EXPECTATIONS.setdefault(name, []).append(Case(args, expected, rtol, atol, label))


@functools.lru_cache(maxsize=None)
def load(name: str) -> Any:
    path = PROGRAMS / f"{name}.rly"
    return relayish.parse(path.read_text(), filename=str(path))


def run(name: str, *args: Any) -> Any:
    return relayish.evaluate(load(name), "main", *args)


# ---------------------------------------------------------------------------------------
# NumPy oracles, written here (never relayish's operators)


def np_conv2d(x: np.ndarray, w: np.ndarray, stride: int = 1, pad: int = 0) -> np.ndarray:
    """Cross-correlation of NCHW x with OIHW w (no kernel flip), zero padding."""
    if pad:
        x = np.pad(x, ((0, 0), (0, 0), (pad, pad), (pad, pad)))
    kh, kw = w.shape[2:]
    win = sliding_window_view(x, (kh, kw), axis=(2, 3))  # N, C, H', W', kh, kw
    win = win[:, :, ::stride, ::stride]
    return np.einsum("nchwij,ocij->nohw", win, w)


def np_max_pool(x: np.ndarray, size: int, stride: int) -> np.ndarray:
    return sliding_window_view(x, (size, size), axis=(2, 3))[:, :, ::stride, ::stride].max(axis=(4, 5))


def np_avg_pool(x: np.ndarray, size: int, stride: int) -> np.ndarray:
    return sliding_window_view(x, (size, size), axis=(2, 3))[:, :, ::stride, ::stride].mean(axis=(4, 5))


def np_max_pool_2x2(x: np.ndarray) -> np.ndarray:
    n, c, h, w = x.shape
    return x.reshape(n, c, h // 2, 2, w // 2, 2).max(axis=(3, 5))


def np_logsumexp(z: np.ndarray, axis: int) -> np.ndarray:
    m = z.max(axis=axis, keepdims=True)
    return (m + np.log(np.exp(z - m).sum(axis=axis, keepdims=True))).squeeze(axis)


def np_softmax_xent(z: np.ndarray, y: np.ndarray) -> np.ndarray:
    """Mean over the batch of logsumexp(z) - sum(y * z), along axis 1."""
    return np.mean(np_logsumexp(z, 1) - (y * z).sum(axis=1))


# ---------------------------------------------------------------------------------------
# Constants, variables, globals, tuples, let

expect("constants_scalar", (), (i32(42), f32(2.5), b(True), b(False), i64(7), f64(0.25), u8(200), i32(-3), f32(-1.5), i8(-5)))

expect("constants_tensor", (), (
    f32([[1, 2, 3], [4, 5, 6]]),
    i32([-1, 0, 7]),
    b([True, False]),
    f64([[0.125]]),
))

expect("variables_params", (f32([1, 2, 3]), i32([[1, 2], [3, 4]])),
       (i32([[1, 2], [3, 4]]), f32([1, 2, 3]), f32([1, 2, 3])))

# (x*x + 1) + (x + 1)**2
expect("global_call", (f32([1, 2, 3]),), f32([6, 14, 26]))
expect("global_call", (f32([-1, 0.5, 0]),), f32([2 + 0, 1.25 + 2.25, 1 + 1]))

# (x*x + 1) * 2
expect("globals_any_order", (i32(3),), i32(20))
expect("globals_any_order", (i32(-4),), i32(34))

expect("tuples_projection", (f32(1.5),), (f32(1.5), i32(5), f32(3.0), UNIT, (f32(3.0),), f32(3.0)))

# x = 4; x = 5; y = 50; x = 50 - 4
expect("let_shadowing", (i32(4),), (i32(46), i32(50)))
expect("let_shadowing", (i32(-1),), (i32(1), i32(0)))

# ---------------------------------------------------------------------------------------
# If

expect("if_scalar", (f32(-2.5),), f32(2.5))
expect("if_scalar", (f32(3.0),), f32(3.0))
expect("if_scalar", (f32(0.0),), f32(0.0))

expect("if_nested", (f32([1, 2, -0.5]),), (i32(1), f32([2, 4, -1])))
expect("if_nested", (f32([-1, -2, 0.5]),), (i32(-1), f32([-2, -3, -0.5])))
expect("if_nested", (f32([1, -1, 0]),), (i32(0), f32([0, -2, -1])))

expect("if_lazy", (i32(7), i32(0)), i32(-1))
expect("if_lazy", (i32(7), i32(2)), i32(3))
expect("if_lazy", (i32(-7), i32(2)), i32(-4))

# ---------------------------------------------------------------------------------------
# Closures

# a = 2x = [2, 4]; f(y) = y + a * 0.5 = y + [1, 2]
expect("closure_capture", (f32([1, 2]), f32(0.5)), (f32([2, 4]), f32([11, 22])))

# f() = 1 (the first %a); then %a = 100: (1 + 100, 100 + 1 * 2)
expect("closure_lexical_scope", (), (i32(101), i32(102)))

expect("closure_returned", (f32(2.0),), (f32(3.0), f32(12.0), f32(0.75)))


def _check_closure_to_python(k: float) -> Check:
    def check(result: Any) -> None:
        assert callable(result), f"expected a closure, got {result!r}"
        assert_same(result(f32([1, 2, 3])), f32([1 * k + 10 * k, 2 * k + 10 * k, 3 * k + 10 * k]))
        assert_same(result(f32([0, 0, 0])), f32([10 * k] * 3))
        assert_same(result(f32([-1, 0.5, 4])), f32([-k + 10 * k, 0.5 * k + 10 * k, 4 * k + 10 * k]))

    return Check(check)


expect("closure_to_python", (f32(2.0),), _check_closure_to_python(2.0))
expect("closure_to_python", (f32(-0.5),), _check_closure_to_python(-0.5))

# (x + c + c, x * 9)
expect("closure_passed", (f32(1.0), f32(0.5)), (f32(2.0), f32(9.0)))
expect("closure_passed", (f32(-2.0), f32(3.0)), (f32(4.0), f32(-18.0)))

expect("curried", (), (i32(123), i32(456), i32(457), i32(789)))

expect("closure_in_tuple", (f32(2.0), b(True)), (f32(3.0), f32(6.0), f32(11.0)))
expect("closure_in_tuple", (f32(2.0), b(False)), (f32(3.0), f32(6.0), f32(20.0)))

# outer(1)(3)(4) = a*1000 + 1*100 + (a+1)*10 + 3 + 4; wrap(5) = a*1000 + 2*100 + (a+2)*10 + 5 + 5
expect("nested_closures", (i32(1),), (i32(1127), i32(1240)))
expect("nested_closures", (i32(2),), (i32(2137), i32(2250)))

# h(x) = 2x + 1; (dbl . inc)(x) = 2(x + 1); k(x) = h(2(x + 1)) = 4x + 5
expect("compose", (f32([1, 2]),), (f32([3, 5]), f32([4, 6]), f32([9, 13])))

expect("if_closure_result", (i32(10),), (i32(13), i32(4)))
expect("if_closure_result", (i32(-1),), (i32(2), i32(-7)))

expect("global_as_value", (i32(5),), (i32(6), i32(7), i32(6)))

expect("fn_type_params", (f32([1, 2]), f32([1, 1, 1, 1, 2])), (f32(5.0), f32(8.0)))

expect("poly_type", (f32([1.5, -2]),), (f32([1.5, -2]), (i32(1), (f32([1.5, -2]), b(True))), i32(12)))

# ---------------------------------------------------------------------------------------
# Recursion

expect("factorial", (i32(10),), i32(3628800))
expect("factorial", (i32(0),), i32(1))
expect("factorial", (i32(1),), i32(1))
expect("factorial", (i32(12),), i32(479001600))
expect("factorial", (i32(13),), i32(6227020800 - 2**32), label="13! wraps around in int32")

expect("fibonacci", (i32(0),), i32(0))
expect("fibonacci", (i32(1),), i32(1))
expect("fibonacci", (i32(2),), i32(1))
expect("fibonacci", (i32(15),), i32(610))

expect("loop_accumulator", (i32(10),), (i32(55), f32(1024.0)))
expect("loop_accumulator", (i32(0),), (i32(0), f32(1.0)))

expect("even_odd", (i32(7),), (b(False), b(True)))
expect("even_odd", (i32(10),), (b(True), b(False)))
expect("even_odd", (i32(0),), (b(True), b(False)))

expect("let_rec_local", (i32(100), i32(2)), i32(10100))
expect("let_rec_local", (i32(0), i32(2)), i32(0))
expect("let_rec_local", (i32(4), i32(-3)), i32(-30))

expect("deep_recursion", (i32(10000),), (i32(50005000), i32(50005000)))

# ---------------------------------------------------------------------------------------
# Zero

_x23 = np.arange(6, dtype=np.float32).reshape(2, 3) - 2.5
expect("zero_tensor", (_x23,), (np.zeros((2, 3), np.float32), i32(0), np.zeros(4, np.float64), _x23.copy()))

expect("zero_tuple", (), ((f32(0.0), (np.zeros(3, np.float64), np.zeros((2, 2), np.int32))), UNIT))

# ---------------------------------------------------------------------------------------
# References

expect("ref_basic", (f32(1.5),), (f32(1.5), f32(3.5), UNIT))

expect("ref_counter", (), (i32(1), i32(2), i32(3), i32(1)))


def _check_counter(start: int) -> Check:
    def check(counter: Any) -> None:
        assert callable(counter), f"expected a closure, got {counter!r}"
        assert_same(counter(), i32(start + 1))
        assert_same(counter(), i32(start + 2))
        assert_same(counter(), i32(start + 3))
        # A second run of @main makes a fresh cell; the first counter keeps its own.
        fresh = run("ref_counter_python", i32(start))
        assert_same(fresh(), i32(start + 1))
        assert_same(counter(), i32(start + 4))

    return Check(check)


expect("ref_counter_python", (i32(10),), _check_counter(10))
expect("ref_counter_python", (i32(-2),), _check_counter(-2))

expect("ref_alias", (), (i32(5), i32(6), i32(6), i32(42)))

# [1, 2] + [1, 10] = [2, 12]; then doubled
expect("ref_passed", (f32([1, 2]),), f32([4, 24]))

expect("ref_of_tuple", (), ((i32(1), f32(2.0)), (i32(11), f32(6.0)), f32(6.0)))

expect("ref_loop", (i32(10),), i32(55))
expect("ref_loop", (i32(0),), i32(0))

expect("ref_closure_shared", (f32(2.5),), (f32(2.5), f32(10.0)))

expect("unit_values", (f32(1.0),), (UNIT, UNIT, (UNIT, (f32(1.0),))))

# ---------------------------------------------------------------------------------------
# Ascription and prefix operators

expect("ascription", (f32([1, 2, 3]),), ((i32(1), f32([1, 2, 3])), f32(3.0)))

expect("prefix_ops", (f32([1, -2, 3]),),
       (f32([-1, 2, -3]), f32([1, 4, 9]), f32([1, -2, 3]), f32([-1, 2, -3]), f32(-1.0), i32(9)))

# ---------------------------------------------------------------------------------------
# Tensor arithmetic: broadcasting, reductions, comparisons, integers, float64


def _broadcast_case() -> None:
    col = f32([[1], [2], [3]])
    row = f32([1, 2, 4, 8])
    cube = np.arange(8, dtype=np.float32).reshape(2, 1, 4)
    grid = col + row
    expect("broadcast_arith", (col, row, cube), (grid, 2 * grid, cube - grid, grid / row, row * col - 1))


_broadcast_case()


def _reductions_case() -> None:
    rng = np.random.default_rng(1)
    x = rng.permutation(24).astype(np.float32).reshape(2, 3, 4) - 7.0
    m = rng.integers(-50, 50, size=(3, 4)).astype(np.int32)
    expect("reductions", (x, m), (
        f32(x.astype(np.float64).sum()),
        x.sum(axis=0),
        x.sum(axis=(0, 2), keepdims=True),
        f32(x.astype(np.float64).mean(axis=1, keepdims=True)),
        x.max(axis=-1),
        f32(x.min()),
        x.argmax(axis=1).astype(np.int32),
        m.sum(axis=1).astype(np.int32),
        m.max(axis=0, keepdims=True),
    ))


_reductions_case()


def _comparisons_case() -> None:
    a = f32([[1, 2, 3], [0, -1, 5]])
    bb = f32([1, 3, 2])
    i = i32([1, 2, 3])
    expect("comparisons", (a, bb, i), (
        a < bb, a <= bb, a > bb, a >= bb, a == bb, a != bb,
        (a > 0) & (a < bb),
        (a == bb) | ~(a > bb),
        i == 2,
        i < i32([0, 5, 2]),
    ))
    # Spelled out by hand for the first row of the first comparison.
    assert (a < bb)[0].tolist() == [False, True, False]


_comparisons_case()

expect("int_arith", (i32([7, -7, 7, -7]), i32([2, 2, -2, -2]), i64(3_000_000_000)), (
    i32([9, -5, 5, -9]),
    i32([5, -9, 9, -5]),
    i32([14, -14, -14, 14]),
    i32([3, -4, -4, 3]),
    i32(-2147483648),
    i32(-4),
    i64(9_000_000_000),
    u8(4),
    i32([2, -3, 2, -3]),
))


def _float64_case() -> None:
    x = f64([0.5, -1.0, 2.0])
    tiny = np.float64(1.0) + np.float64(1e-10) - np.float64(1.0)
    assert tiny != 0.0  # float32 would lose it: the program must keep float64
    y = np.exp(x) * 0.5 + np.sqrt(np.abs(x))
    expect("float64_program", (x,), (f64(tiny), y, f64(np.log(y).sum()), np.tanh(x) / 3.0))


_float64_case()

# ---------------------------------------------------------------------------------------
# Symbolic dimensions


def _symbolic_batch_cases() -> None:
    w = f32([[0.5, -1.0], [0.25, 0.0], [-0.75, 2.0]])
    rng = np.random.default_rng(2)
    for n in (1, 5):
        x = rng.standard_normal((n, 3)).astype(np.float32)
        h = np.tanh(x.astype(np.float64) @ w.astype(np.float64))
        expect("symbolic_batch", (x, w), (f32(h.sum(axis=1)), f32(h), f32(x.astype(np.float64).mean())),
               atol=1e-6, label=f"n={n}")


_symbolic_batch_cases()


def _symbolic_polymorphic_cases() -> None:
    i = i32([1, 2, 3, 4])
    for n in (2, 4):
        x = (np.arange(3 * n, dtype=np.float32).reshape(n, 3) - 3.0) / 4.0
        expect("symbolic_polymorphic", (x, i), (
            x * 2, i32([2, 4, 6, 8]), f64(5.0), x.sum(axis=1), x.sum(axis=0), np.concatenate([x, x * 2], axis=0),
        ), label=f"n={n}")


_symbolic_polymorphic_cases()

# ---------------------------------------------------------------------------------------
# Neural-network programs


def _lenet_case() -> None:
    rng = np.random.default_rng(0)

    def normal(shape: tuple[int, ...], scale: float) -> np.ndarray:
        return (rng.standard_normal(shape) * scale).astype(np.float32)

    x = normal((2, 1, 28, 28), 1.0)
    k1, c1 = normal((20, 1, 5, 5), 0.2), normal((20, 1, 1), 0.1)
    k2, c2 = normal((50, 20, 5, 5), 0.05), normal((50, 1, 1), 0.1)
    w3, b3 = normal((500, 800), 0.03), normal((500,), 0.1)
    w4, b4 = normal((10, 500), 0.05), normal((10,), 0.1)
    y = np.zeros((2, 10), np.float32)
    y[0, 3] = 1.0
    y[1, 7] = 1.0
    args = (x, k1, c1, k2, c2, w3, b3, w4, b4, y)

    # The oracle runs in float64 on the float32 inputs.
    d = [a.astype(np.float64) for a in args]
    x, k1, c1, k2, c2, w3, b3, w4, b4, y = d
    a1 = np_max_pool_2x2(np.tanh(np_conv2d(x, k1) + c1))
    assert a1.shape == (2, 20, 12, 12)
    a2 = np_max_pool_2x2(np.tanh(np_conv2d(a1, k2) + c2))
    assert a2.shape == (2, 50, 4, 4)
    flat = a2.reshape(2, -1)
    hidden = np.tanh(flat @ w3.T + b3)
    logits = hidden @ w4.T + b4
    loss = np_softmax_xent(logits, y)
    # Logits are O(1) sums of 800- and 500-term float32 dot products: rtol 1e-5, plus an
    # atol of 1e-6 for logits that happen to lie near 0.
    expect("lenet", args, (f32(logits), f32(loss)), rtol=1e-5, atol=1e-6)


_lenet_case()


def _softmax_case() -> None:
    z = f32([[1, 2, 3], [1, -1, 0.5]])
    y = f32([[0, 0, 1], [0.5, 0.5, 0]])
    zd = z.astype(np.float64)
    e = np.exp(zd - zd.max(axis=1, keepdims=True))
    soft = e / e.sum(axis=1, keepdims=True)
    logsoft = zd - np_logsumexp(zd, 1)[:, None]
    # Row 0 by hand: logsumexp(1, 2, 3) - 3 = log(e^-2 + e^-1 + 1)
    assert np.isclose(np_softmax_xent(zd, y.astype(np.float64)),
                      (np.log(np.exp(-2) + np.exp(-1) + 1) + np_logsumexp(zd[1], 0) - 0.0) / 2)
    expect("softmax_xent", (z, y), (f32(soft), f32(logsoft), f32(np_softmax_xent(zd, y.astype(np.float64)))))


_softmax_case()


def _mlp_cases() -> None:
    rng = np.random.default_rng(3)
    w1, b1 = rng.standard_normal((6, 5)).astype(np.float32) * 0.5, rng.standard_normal(5).astype(np.float32)
    w2, b2 = rng.standard_normal((5, 4)).astype(np.float32), rng.standard_normal(4).astype(np.float32)
    for n in (1, 3):
        x = rng.standard_normal((n, 6)).astype(np.float32)
        y = np.eye(4, dtype=np.float32)[rng.integers(0, 4, size=n)]
        h = np.tanh(x.astype(np.float64) @ w1 + b1)
        z = h @ w2 + b2
        expect("mlp", (x, w1, b1, w2, b2, y), f32(np_softmax_xent(z, y.astype(np.float64)) * 0.5), label=f"n={n}")


_mlp_cases()


def _conv_case() -> None:
    x = (np.arange(50, dtype=np.float32).reshape(1, 2, 5, 5) - 20.0) / 10.0
    w = np.random.default_rng(4).standard_normal((3, 2, 3, 3)).astype(np.float32)
    xd, wd = x.astype(np.float64), w.astype(np.float64)
    conv = np_conv2d(xd, wd, stride=2, pad=1)
    assert conv.shape == (1, 3, 3, 3)
    # The centre output (row 1, col 1) reads the unpadded input rows/cols 1..3.
    assert np.isclose(conv[0, 0, 1, 1], (xd[0, :, 1:4, 1:4] * wd[0]).sum())
    expect("conv_pool_attrs", (x, w), (f32(conv), np_max_pool(x, 3, 1), f32(np_avg_pool(xd, 2, 2))), atol=1e-6)


_conv_case()

# ---------------------------------------------------------------------------------------
# Other operators

_x = f32([[1, 2, 3], [4, 5, 6]])
expect("shape_ops", (_x,), (
    f32([[1, 2], [3, 4], [5, 6]]),
    f32([[1, 4], [2, 5], [3, 6]]),
    f32([[[1, 2, 3]], [[4, 5, 6]]]),
    _x.copy(),
    f32([[1, 2, 3, 10, 20, 30], [4, 5, 6, 40, 50, 60]]),
    f32([[[1, 2, 3], [4, 5, 6]], [[-1, -2, -3], [-4, -5, -6]]]),
    f32([[2, 3], [5, 6]]),
    f32([[9, 9, 9, 9, 9], [1, 2, 3, 9, 9], [4, 5, 6, 9, 9]]),
    f32([[1, 2, 3, 4, 5, 6]]),
    f32([[5, 7, 9], [5, 7, 9]]),
))

expect("take_where_cast", (f32([[1, -2, 3], [-4, 5, -6]]), i32([2, 0])), (
    f32([3, 1]),
    f32([[3, 1], [-6, -4]]),
    f32([[0, 0, 1, 0], [1, 0, 0, 0]]),
    f32([[1, 0, 3], [0, 5, 0]]),
    i32([[1, -3, 4], [-6, 7, -9]]),
    f64([2, 0]),
))


def _elementwise_case() -> None:
    x = f32([-1, 0, 0.5, 2])
    p = f32([0.25, 1, 4, 9])
    expect("elementwise_ops", (x, p), (
        np.exp(x), np.log(p), f32([0.5, 1, 2, 3]), f32(1 / (1 + np.exp(-x.astype(np.float64)))),
        f32([0, 0, 0.5, 2]), f32([1, 0, 0.5, 2]), np.sin(x), np.cos(x),
        f32([0.0625, 1, 16, 81]), f32([0.25, 1, 4, 9]), f32([-1, 0, 0, 0]), i32([0, 0, 3]),
    ))


_elementwise_case()


# ---------------------------------------------------------------------------------------
# The tests


def _case_ids() -> list[tuple[str, int]]:
    return [(name, k) for name in sorted(EXPECTATIONS) for k in range(len(EXPECTATIONS[name]))]


def _id(item: tuple[str, int]) -> str:
    name, k = item
    label = EXPECTATIONS[name][k].label
    return f"{name}-{k}" + (f"-{label}" if label else "")


@pytest.mark.parametrize("item", _case_ids(), ids=[_id(i) for i in _case_ids()])
def test_program(item: tuple[str, int]) -> None:
    name, k = item
    case = EXPECTATIONS[name][k]
    args = tuple(a.copy() if isinstance(a, np.ndarray) else a for a in case.args)
    result = run(name, *args)
    assert_same(result, case.expected, rtol=case.rtol, atol=case.atol)
    # The arguments are not written into.
    for a, kept in zip(args, case.args):
        if isinstance(a, np.ndarray):
            np.testing.assert_array_equal(a, kept)


def test_every_program_has_an_expectation_and_a_header_comment() -> None:
    files = sorted(p.stem for p in PROGRAMS.glob("*.rly"))
    assert len(files) >= 40
    assert sorted(EXPECTATIONS) == files, (
        f"programs without expectations: {sorted(set(files) - set(EXPECTATIONS))}; "
        f"expectations without programs: {sorted(set(EXPECTATIONS) - set(files))}"
    )
    for name in files:
        text = (PROGRAMS / f"{name}.rly").read_text()
        assert text.startswith("# "), f"{name}.rly must start with a comment saying what it exercises"
        assert "def @main" in text, f"{name}.rly has no @main"


def test_every_program_type_checks() -> None:
    for p in sorted(PROGRAMS.glob("*.rly")):
        relayish.infer_types(load(p.stem))


def test_the_corpus_covers_every_expression_node() -> None:
    from relayish import expr as E
    from relayish.traverse import post_order

    wanted = {"Var", "GlobalVar", "Constant", "Tuple", "Proj", "Let", "If", "Call", "Op", "Function",
              "Ascribe", "Zero", "RefNew", "RefRead", "RefWrite"}
    seen: set[str] = set()
    for p in sorted(PROGRAMS.glob("*.rly")):
        module = load(p.stem)
        for name in module.functions:
            for node in post_order(module[name]):
                seen.add(type(node).__name__)
    missing = {n for n in wanted if hasattr(E, n)} - seen
    assert not missing, f"node kinds no corpus program uses: {sorted(missing)}"
