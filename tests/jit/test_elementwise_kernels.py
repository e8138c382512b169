"""Elementwise kernels (jit/kernels/elementwise.py) against the reference NumPy semantics.

Each (operator, dtypes, ranks) compiles once (~0.3-1 s), so every test fixes its dtypes and ranks and hypothesis
draws only sizes (0, 1 and broadcast sizes included) and values (NaN, infinities, -0.0, extreme integers) of
contiguous arrays; since Numba compiles again for each layout, views (transposed, strided, reversed, broadcast) are
tested for a few kernels that stand for all (they share the code that makes arguments contiguous).

Tolerances (see the kernel module's docstring): exact, NaN equal to NaN and signed zeros alike, for integer and
bool results and for what IEEE rounds exactly (neg, sq, abs, relu, sqrt, add, sub, mul, div, maximum, minimum,
comparisons, where, casts, including NumPy's vectorized results for out-of-range float -> int casts); exp, log,
sigmoid, sin, cos, tanh (vectorized approximations) and pow (libm) rtol 1e-6 for float32 and 1e-12 for float64,
atol 1e-44 / 1e-300 for subnormal results. The float32 approximations' ulp bounds are checked over the whole float32
range (a stride through every bit pattern) against correctly rounded results, the float64 ones against NumPy's.
"""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from hypothesis.extra import numpy as hnp

from jit.kernels.registry import ArgType, kernel
from relayish.ops import get_op

EXAMPLES = settings(max_examples=20, deadline=None)

F32, F64 = np.dtype(np.float32), np.dtype(np.float64)
APPROXIMATED = {"exp", "log", "sigmoid", "sin", "cos", "tanh"}  # vectorized approximations
INEXACT = APPROXIMATED | {"pow"}  # results that may differ from NumPy's in the last bits


def run(name: str, arrays: list[np.ndarray], **attrs):
    """The kernel's result and the reference's, for the same arrays (possibly views)."""
    op = get_op(name)
    full = op.full_attrs(op.normalize_attrs(attrs))
    fn = kernel(name, full, [ArgType(a.dtype.name, a.ndim) for a in arrays])
    return fn(*arrays), op(*arrays, **attrs)


def tolerance(name: str, dtype: np.dtype) -> float:
    if dtype.kind != "f" or name not in INEXACT:
        return 0.0
    return 1e-6 if dtype == F32 else 1e-12


def check(name: str, *arrays: np.ndarray, **attrs) -> None:
    originals = [a.copy() for a in arrays]
    got, ref = run(name, list(arrays), **attrs)
    assert isinstance(got, np.ndarray) and got.dtype == ref.dtype and got.shape == ref.shape, (got, ref)
    for a, original in zip(arrays, originals):
        np.testing.assert_array_equal(a, original)  # inputs untouched
    rtol = tolerance(name, arrays[-1].dtype)
    if rtol == 0:
        np.testing.assert_array_equal(got, ref)
    else:
        atol = 1e-44 if ref.dtype == F32 else 1e-300
        np.testing.assert_allclose(got, ref, rtol=rtol, atol=atol, equal_nan=True)
    if ref.dtype.kind == "f":  # signed zeros too
        zeros = (got == 0) & (ref == 0)
        np.testing.assert_array_equal(np.signbit(got[zeros]), np.signbit(ref[zeros]))


def values(dtype: np.dtype, lo: float | None = None, hi: float | None = None) -> st.SearchStrategy:
    """Elements of dtype: for floats NaN, infinities, -0.0, subnormals and huge values (unless bounded)."""
    if dtype.kind == "b":
        return st.booleans()
    if dtype.kind == "f":
        width = dtype.itemsize * 8
        if lo is not None:
            return st.floats(lo, hi, width=width)
        return st.floats(width=width) | st.sampled_from([0.0, -0.0, 1.0, -1.0, 0.5, np.inf, -np.inf, np.nan])
    info = np.iinfo(dtype)
    lo = info.min if lo is None else max(info.min, int(lo))
    hi = info.max if hi is None else min(info.max, int(hi))
    return st.integers(lo, hi) | st.sampled_from([v for v in (lo, hi, 0, 1) if lo <= v <= hi])


def view(array: np.ndarray, kind: str) -> np.ndarray:
    """The same values as a view of another layout (each one Numba compiles for separately)."""
    if kind == "transposed":
        return np.ascontiguousarray(np.swapaxes(array, 0, -1)).swapaxes(0, -1)
    if kind == "strided":
        wide = np.zeros(array.shape[:-1] + (2 * array.shape[-1],), array.dtype)
        wide[..., ::2] = array
        return wide[..., ::2]
    if kind == "reversed":
        return np.ascontiguousarray(array[::-1])[::-1]
    assert kind == "broadcast"
    return np.broadcast_to(array[..., :1], array.shape)  # stride 0 along the last axis, readonly


def shape_of_rank(rank: int, max_side: int = 5) -> st.SearchStrategy:
    return hnp.array_shapes(min_dims=rank, max_dims=rank, min_side=0, max_side=max_side)


def array_of(dtype: np.dtype, shape: tuple[int, ...], lo: float | None = None, hi: float | None = None):
    return hnp.arrays(dtype, shape, elements=values(dtype, lo, hi))


# ---------------------------------------------------------------------------------------------------------------
# Unary operators: (operator, dtype, rank), ranks spread over 0..3 so each compiles once (the approximations rank 1,
# shared with the accuracy tests below).

UNARY = [
    ("neg", "float32", 2), ("neg", "int8", 1), ("neg", "uint8", 0),
    ("sq", "float64", 1), ("sq", "int32", 2),
    ("relu", "float32", 3), ("relu", "uint8", 0),
    ("abs", "float32", 1), ("abs", "int64", 2),
    ("logical_not", "bool", 2),
    ("sqrt", "float32", 1), ("sqrt", "float64", 2),
    ("exp", "float32", 1), ("exp", "float64", 1),
    ("log", "float32", 1), ("log", "float64", 1),
    ("tanh", "float32", 1), ("tanh", "float64", 1),
    ("sigmoid", "float32", 1), ("sigmoid", "float64", 1),
    ("sin", "float32", 1), ("sin", "float64", 1),
    ("cos", "float32", 1), ("cos", "float64", 1),
]


@pytest.mark.parametrize("name, dtype, rank", UNARY)
@EXAMPLES
@given(data=st.data())
def test_unary(name, dtype, rank, data):
    shape = data.draw(shape_of_rank(rank))
    check(name, data.draw(array_of(np.dtype(dtype), shape)))


@pytest.mark.parametrize("name", sorted(APPROXIMATED))
def test_float64_approximations_against_numpy(name):
    """Within 4 ulp of NumPy's (itself within an ulp of the exact result) over magnitudes 1e-300 .. 1e300 (up to
    the overflow limits), the far-angle limit of sin/cos included; specials exactly as NumPy's."""
    rng = np.random.default_rng(13)
    x = np.concatenate([rng.uniform(-750, 750, 4000), rng.uniform(-1, 1, 2000), rng.uniform(-1.2e5, 1.2e5, 2000),
                        np.exp(rng.uniform(-690, 690, 2000)) * rng.choice([-1, 1], 2000),
                        [0.0, -0.0, np.inf, -np.inf, np.nan, 5e-324, 2.2250738585072014e-308, 709.78, 709.79,
                         -745.1, -745.2, 1e5, 1e5 + 1, 0.625, -0.625, 1.7e308]])
    if name == "log":
        x = np.abs(x)
    got, ref = run(name, [x])
    finite = np.isfinite(ref)
    np.testing.assert_array_equal(got[~finite], ref[~finite])
    assert np.max(np.abs(got[finite] - ref[finite]) / np.spacing(np.abs(ref[finite]))) <= 4


@pytest.mark.parametrize("name", sorted(APPROXIMATED))
def test_float32_transcendentals_on_many_elements(name):
    """Thousands of elements in [-100, 100] and around the far-angle limit of sin/cos, including the specials."""
    rng = np.random.default_rng(7)
    x = np.concatenate([rng.uniform(-100, 100, 5000), rng.uniform(-2e4, 2e4, 500), [0.0, -0.0, np.inf, -np.inf,
                        np.nan, 1e-45, -1e-45, 1e-38, 88.72, 88.73, -87.4, -103.9, -104.0, 1e4, 1e4 + 1, 3e38]])
    if name in ("log",):
        x = np.abs(x)
    check(name, x.astype(np.float32))


def float32_sweep() -> np.ndarray:
    """Every 1021st float32 bit pattern (4.2 million): every binade, both signs, subnormals, inf and NaN."""
    return np.arange(0, 2**32, 1021, dtype=np.uint64).astype(np.uint32).view(np.float32)


def ulp_errors(got: np.ndarray, exact: np.ndarray) -> np.ndarray:
    """|got - exact| in units of the last place of exact rounded to float32 (where that is finite)."""
    rounded = exact.astype(np.float32)
    return np.abs(got.astype(np.float64) - exact) / np.spacing(np.abs(rounded)).astype(np.float64)


EXACT64 = {
    "exp": np.exp, "log": np.log, "tanh": np.tanh, "sin": np.sin, "cos": np.cos,
    "sigmoid": lambda x: 1.0 / (1.0 + np.exp(-x)),
}
ULP_BOUND = {"exp": 1.02, "log": 0.83, "tanh": 4.9, "sin": 1.54, "cos": 1.54, "sigmoid": 2.49}  # exhaustive maxima


@pytest.mark.parametrize("name", sorted(APPROXIMATED))
def test_float32_approximation_ulp_bound(name):
    """The approximation within its stated ulp bound of the correctly rounded result over the float32 range;
    non-finite results (and those the reference's float32 exp overflows for, in sigmoid) exactly as NumPy's."""
    x = float32_sweep()
    got, ref = run(name, [x])
    with np.errstate(all="ignore"):
        exact = EXACT64[name](x.astype(np.float64))
        finite = np.isfinite(exact) & np.isfinite(exact.astype(np.float32))
        if name == "sigmoid":
            finite &= np.isfinite(np.exp(-x))
    errors = ulp_errors(got[finite], exact[finite])
    worst = int(np.argmax(errors))
    assert errors[worst] <= ULP_BOUND[name], (x[finite][worst], got[finite][worst], exact[finite][worst])
    np.testing.assert_array_equal(got[~finite], ref[~finite])


# ---------------------------------------------------------------------------------------------------------------
# Casts and *_like

CASTS = [
    ("float32", "int32", 2), ("float64", "uint8", 1), ("float32", "float64", 1), ("float64", "float32", 3),
    ("float32", "bool", 1), ("int64", "float32", 2), ("int32", "int8", 1), ("uint8", "int64", 0),
    ("bool", "float32", 2), ("float32", "uint32", 1), ("float64", "uint64", 1),
]


def in_range(source: np.dtype, target: np.dtype) -> tuple[float | None, float | None]:
    """Float -> int casts are defined (in C; NumPy's short and long arrays disagree otherwise) for values an int32
    or the target holds: draw only those (negative values wrap into unsigned targets)."""
    if source.kind == "f" and target.kind in "iu":
        return -(2.0**24), float(min(np.iinfo(target).max, 2**24))
    return None, None


@pytest.mark.parametrize("source, target, rank", CASTS)
@EXAMPLES
@given(data=st.data())
def test_cast(source, target, rank, data):
    source, target = np.dtype(source), np.dtype(target)
    lo, hi = in_range(source, target)
    x = data.draw(array_of(source, data.draw(shape_of_rank(rank)), lo, hi))
    check("cast", x, dtype=target.name)


@pytest.mark.parametrize("source, target, rank", [c for c in CASTS if c[0].startswith("float") and "int" in c[1]])
def test_cast_out_of_range_as_numpys_vector_loops(source, target, rank):
    """NaN, infinities and out-of-range values: undefined in C, NumPy's own results differ between short and long
    arrays; the kernels give NumPy's long-array (vectorized loop) values."""
    special = [np.nan, np.inf, -np.inf, -1.5, 300.7, 1e10, -1e10, 3e9, -3e9, 1e20, 255.9, -129.5, 2.0**63, 2.0**64]
    x = np.array(special * 8, source).reshape((1,) * (rank - 1) + (-1,))
    with np.errstate(all="ignore"):
        check("cast", x, dtype=target)


@EXAMPLES
@given(data=st.data())
def test_cast_like(data):
    """like supplies only its dtype: any shape."""
    source, target = np.dtype(np.float32), np.dtype(np.int64)
    lo, hi = in_range(source, target)
    x = data.draw(array_of(source, data.draw(shape_of_rank(2)), lo, hi))
    like = np.zeros(data.draw(shape_of_rank(1)), target)
    check("cast_like", x, like)


@pytest.mark.parametrize("name, dtype, rank", [("zeros_like", "bool", 0), ("ones_like", "float32", 2)])
@EXAMPLES
@given(data=st.data())
def test_fill_like(name, dtype, rank, data):
    check(name, data.draw(array_of(np.dtype(dtype), data.draw(shape_of_rank(rank)))))


def test_float16_has_no_kernel():
    with pytest.raises(NotImplementedError, match="float16"):
        run("exp", [np.ones(3, np.float16)])


# ---------------------------------------------------------------------------------------------------------------
# Broadcasting operators: (operator, dtype, ranks of the arguments)

BINARY = [
    ("add", "float32", (2, 2)), ("add", "uint8", (0, 2)), ("sub", "float64", (3, 1)),
    ("mul", "float32", (1, 2)), ("mul", "int8", (2, 0)),
    ("div", "float32", (2, 2)), ("div", "float64", (1, 0)), ("div", "int64", (2, 1)), ("div", "uint8", (1, 2)),
    ("pow", "float32", (2, 1)), ("pow", "float64", (1, 1)), ("pow", "int32", (2, 0)), ("pow", "uint8", (1, 1)),
    ("pow", "int64", (1, 2)),
    ("maximum", "float32", (2, 2)), ("minimum", "float32", (1, 2)),
    ("equal", "float32", (2, 1)), ("not_equal", "int32", (0, 2)), ("less", "bool", (1, 1)),
    ("less_equal", "int64", (1, 2)), ("greater", "uint8", (2, 0)), ("greater_equal", "float64", (2, 2)),
    ("logical_and", "bool", (2, 1)), ("logical_or", "bool", (1, 1)),
]


@st.composite
def broadcast_shapes(draw, ranks: tuple[int, ...], max_side: int = 4) -> list[tuple[int, ...]]:
    """Shapes of the given ranks that broadcast together: the trailing axes of one result shape, some sizes 1."""
    out = draw(shape_of_rank(max(ranks), max_side))
    return [tuple(draw(st.sampled_from((n, 1))) for n in out[len(out) - r:]) for r in ranks]


def operand_values(name: str, dtype: np.dtype, position: int) -> tuple[float | None, float | None]:
    """Bounds for an operand's values: integer divisors and exponents kept where the reference does not raise."""
    if dtype.kind in "iu" and position == 1:
        if name == "div":
            return (1, 100) if dtype.kind == "u" else (-100, 100)
        if name == "pow":
            return 0, 9
    if name == "pow" and dtype.kind == "f":
        return (-8.0, 8.0)
    return None, None


@pytest.mark.parametrize("name, dtype, ranks", BINARY)
@EXAMPLES
@given(data=st.data())
def test_binary(name, dtype, ranks, data):
    dtype = np.dtype(dtype)
    shapes = data.draw(broadcast_shapes(ranks))
    arrays = [data.draw(array_of(dtype, shape, *operand_values(name, dtype, k))) for k, shape in enumerate(shapes)]
    if name == "div" and dtype.kind == "i":
        arrays[1] = np.where(arrays[1] == 0, 7, arrays[1]).astype(dtype)  # zero divisors: the error test
    check(name, *arrays)


@pytest.mark.parametrize("dtype, ranks", [("float32", (2, 2, 0)), ("int64", (1, 2, 1))])
@EXAMPLES
@given(data=st.data())
def test_where(dtype, ranks, data):
    dtype = np.dtype(dtype)
    cond_shape, a_shape, b_shape = data.draw(broadcast_shapes(ranks))
    check("where", data.draw(array_of(np.dtype(bool), cond_shape)), data.draw(array_of(dtype, a_shape)),
          data.draw(array_of(dtype, b_shape)))


def test_where_constant_branches():
    """A full condition picking between two scalars, and a scalar condition: the hoisted and strided loops."""
    cond = np.random.default_rng(3).random((40, 7)) > 0.5
    check("where", cond, np.array([[1.5]], np.float32), np.array(-2.0, np.float32))
    check("where", np.array([[True]]), np.ones((4, 1), np.float32), np.array(3.0, np.float32))
    check("where", cond[:1], np.ones((5, 1), np.float32), np.array(3.0, np.float32))


@pytest.mark.parametrize("a_shape, b_shape", [((1000, 64), (1, 64)), ((1000, 64), (1000, 1)), ((1, 1), (1000, 64)),
                                              ((7, 1), (1, 3)), ((300, 1), (300, 1)), ((0, 64), (1, 64))])
def test_broadcast_patterns_at_size(a_shape, b_shape):
    """Rows, columns, scalars and outer products at realistic sizes (kernels of rank (2, 2) compiled above)."""
    rng = np.random.default_rng(11)
    a, b = rng.standard_normal(a_shape).astype(np.float32), rng.standard_normal(b_shape).astype(np.float32)
    for name in ("add", "maximum", "div"):
        check(name, a, b)
        check(name, b, a)


VIEWED = [("neg", "float32", (2,)), ("add", "float32", (2, 2))]


@pytest.mark.parametrize("kind", ["transposed", "strided", "reversed", "broadcast"])
@pytest.mark.parametrize("name, dtype, ranks", VIEWED)
def test_views(name, dtype, ranks, kind):
    """Non-contiguous arguments (each argument in turn) give the reference's result and stay untouched."""
    rng = np.random.default_rng(5)
    shapes = [(6, 5)[2 - r:] for r in ranks]
    arrays = [(rng.standard_normal(s) * 10).astype(dtype) for s in shapes]
    for k, array in enumerate(arrays):
        if array.ndim >= 1 and not (kind == "transposed" and array.ndim < 2):
            check(name, *arrays[:k], view(array, kind), *arrays[k + 1:])


def test_integer_division_semantics():
    """Floor division rounding toward -inf, the smallest integer over -1 wrapping as in NumPy, unsigned halves."""
    a = np.array([[7, -7, 7, -7, np.iinfo(np.int64).min, 0, 5]], np.int64)
    b = np.array([2, 2, -2, -2, -1, 3, -9], np.int64)
    check("div", a, b)
    check("div", np.array([7, 255, 0], np.uint8), np.array([[2, 16, 3]], np.uint8))


@pytest.mark.parametrize("a, b", [(np.ones((2, 3), np.int64), np.array([1, 0, 2], np.int64)),
                                  (np.ones((0, 3), np.int64), np.array([1, 0, 2], np.int64)),
                                  (np.ones(3, np.uint8), np.zeros((2, 3), np.uint8))])
def test_integer_division_by_zero_raises(a, b):
    """The reference checks the whole divisor, even for an empty result."""
    with pytest.raises(ZeroDivisionError):
        get_op("div")(a, b)
    with pytest.raises(ZeroDivisionError, match="division by zero"):
        run("div", [a, b])


def test_integer_negative_power_raises():
    a, b = np.arange(6, dtype=np.int32).reshape(2, 3), np.array(-1, np.int32)
    with pytest.raises(ValueError, match="negative integer powers"):
        get_op("pow")(a, b)
    with pytest.raises(ValueError, match="negative integer powers"):
        run("pow", [a, b])
    check("pow", np.ones((0, 3), np.int32), np.array(-1, np.int32))  # nothing computed, nothing raised


def test_integer_power_wraps():
    a = np.array([3, -3, 2, 7, 0, 0, -1], np.int64)
    b = np.array([[40, 41, 63, 100, 0, 5, 2**40 + 1]], np.int64)
    check("pow", a, b)
    check("pow", np.array([3, 200, 2], np.uint8), np.array([5, 2, 8], np.uint8))


def test_maximum_minimum_nan_and_signed_zero():
    a = np.array([np.nan, 1.0, -0.0, 0.0, np.inf, -np.inf, 2.0], np.float32)
    b = np.array([1.0, np.nan, 0.0, -0.0, np.nan, 3.0, 2.0], np.float32)
    for name, args in [("maximum", [a[None], b[None]]), ("minimum", [a, b[None]]),
                       ("relu", [np.array([[[-0.0, 0.0, np.nan, -1.0, 2.0]]], np.float32)])]:
        got, ref = run(name, args)
        np.testing.assert_array_equal(got, ref)
        np.testing.assert_array_equal(np.signbit(got), np.signbit(ref))


def test_shapes_that_do_not_broadcast_raise():
    with pytest.raises(ValueError, match="broadcast"):
        run("add", [np.ones((2, 3), np.float32), np.ones((2, 2), np.float32)])


def test_results_are_fresh_arrays():
    """Results never alias the inputs (the reference's results do not either)."""
    x = np.ones((3, 4), np.float32)
    for name, args, attrs in [("neg", [x], {}), ("add", [x, x], {}), ("cast", [x[0]], {"dtype": "float64"}),
                              ("where", [x > 0, x, np.array(0, np.float32)], {})]:
        got, _ = run(name, args, **attrs)
        assert not np.shares_memory(got, x)


@pytest.mark.parametrize(("name", "dtype", "count"), [("add", "float32", 2), ("tanh", "float32", 1),
                                                       ("where", "float64", 3), ("neg", "int16", 1)])
def test_the_parallel_loops_equal_the_serial_ones(name, dtype, count, monkeypatch):
    """RELAYISH_PARALLEL_MIN turns the parallel loops on (module docstring); here from 1 element."""
    rng = np.random.default_rng(0)
    arrays = [(rng.standard_normal(1000) * 3).astype(dtype) for _ in range(count)]
    if name == "where":
        arrays[0] = arrays[0] > 0
    op = get_op(name)
    fn = kernel(name, op.full_attrs(()), [ArgType(a.dtype.name, a.ndim) for a in arrays])
    serial = fn(*arrays)
    module = __import__("sys").modules[fn.__module__]
    monkeypatch.setattr(module, "PARALLEL_MIN", 1)
    parallel = fn(*arrays)
    assert module._parallel.signatures, "the parallel loop did not run"
    np.testing.assert_array_equal(parallel, serial, strict=True)
    np.testing.assert_allclose(parallel, op(*arrays), rtol=tolerance(name, np.dtype(dtype)))


def test_the_parallel_threshold_comes_from_the_environment(monkeypatch):
    from jit.kernels.registry import PARALLEL_OFF, parallel_min

    monkeypatch.setenv("RELAYISH_PARALLEL_MIN", "0")
    assert parallel_min() == PARALLEL_OFF
    monkeypatch.setenv("RELAYISH_PARALLEL_MIN", "5000")
    assert parallel_min() == 5000
    monkeypatch.delenv("RELAYISH_PARALLEL_MIN")
    assert parallel_min() == PARALLEL_OFF  # off by default (measurements in jit/kernels/elementwise.py)
