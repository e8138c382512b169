"""The operators of relayish/ops/arithmetic.py compiled (``relayish.compile``) against the evaluator.

Every operator runs as a CPU kernel on arrays of rank 1 and 2 (polymorphic in their sizes, so one
kernel per dtype and rank whatever sizes hypothesis draws, 0 and 1 included), as scalar code on
rank-0 tensors (NumPy scalars; ``sign`` natively), broadcast (the binary ones: a row, a column, a
scalar), and fused with its neighbours into one kernel. Values include NaN, infinities, -0.0,
subnormals, huge values, halves (rounding) and extreme integers.

Tolerances: exact, NaN equal to NaN and zeros of the same sign, for ceil, floor, trunc, round,
sign, floor_divide, floor_mod and comparisons, and for every integer result; the transcendental
functions (libm in the kernels, NumPy and scipy in the evaluator) rtol 1e-6 for float32 and 1e-12
for float64, atol 1e-44 / 1e-300 for subnormal results; fused programs that go through exp as well
rtol 1e-5 / 1e-10 (exp is a vectorized approximation within an ulp or two).
"""

from __future__ import annotations

import functools

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from hypothesis.extra import numpy as hnp

import relayish
from jit import scalars
from relayish.errors import RelayRuntimeError
from relayish.ops import get_op
from relayish.types import BaseType, Shape, TensorType

EXAMPLES = settings(max_examples=25, deadline=None)
TRANSCENDENTAL = ["erf", "tan", "atan", "asin", "acos", "sinh", "cosh", "rsqrt", "log1p", "expm1"]
EXACT_UNARY = ["ceil", "floor", "trunc", "round", "sign"]
BINARY = ["floor_divide", "floor_mod"]
DTYPES = {"float16": "FloatType(16)", "float32": "FloatType(32)", "float64": "FloatType(64)", "int8": "IntType(8)",
          "int32": "IntType(32)", "int64": "IntType(64)", "uint8": "UIntType(8)", "uint64": "UIntType(64)"}
SPECIAL_FLOATS = [0.0, -0.0, 0.5, -0.5, 1.5, -2.5, 1.0, -1.0, np.inf, -np.inf, np.nan, 1e-45, 1e-310, 0.49999997,
                  4503599627370497.0, 1e30, -1e30, 3e38, 89.0, 710.0, -1.0000001]


def tensor_type(dtype: str, dims: str) -> str:
    return f"Tensor({DTYPES[dtype]}, Shape({dims}))"


DIMS = {0: "", 1: "n", 2: "n, m"}


@functools.cache
def compiled(source: str):
    module = relayish.parse(source)
    return module, relayish.compile(module, "main")


def unary_program(name: str, dtype: str, rank: int) -> str:
    return f"def @main[n: Dim, m: Dim](%x: {tensor_type(dtype, DIMS[rank])}) {{ @{name}(%x) }}"


def assert_matches(got, ref, rtol: float = 0.0) -> None:
    got, ref = np.asarray(got), np.asarray(ref)
    assert got.dtype == ref.dtype and got.shape == ref.shape, (got, ref)
    if rtol == 0.0 or ref.dtype.kind != "f":
        np.testing.assert_array_equal(got, ref)
    else:
        np.testing.assert_allclose(got, ref, rtol=rtol, atol=1e-44 if ref.dtype == np.float32 else 1e-300,
                                   equal_nan=True)
        np.testing.assert_array_equal(np.isinf(got), np.isinf(ref))
    if ref.dtype.kind == "f":
        zeros = (got == 0) & (ref == 0)
        np.testing.assert_array_equal(np.signbit(got[zeros]), np.signbit(ref[zeros]))


def rtol_for(name: str, dtype: str) -> float:
    if name not in TRANSCENDENTAL or not dtype.startswith("float"):
        return 0.0
    return 1e-6 if dtype == "float32" else 1e-12


def values(dtype: np.dtype) -> st.SearchStrategy:
    if dtype.kind == "f":
        width = dtype.itemsize * 8
        specials = [float(dtype.type(v)) for v in SPECIAL_FLOATS]
        return st.floats(width=width) | st.floats(-4, 4, width=width) | st.sampled_from(specials)
    info = np.iinfo(dtype)
    return st.integers(int(info.min), int(info.max)) | st.sampled_from([int(info.min), int(info.max), 0, 1])


def arrays(dtype: str, rank: int, nonzero: bool = False) -> st.SearchStrategy:
    dt = np.dtype(dtype)
    elements = values(dt).filter(bool) if nonzero else values(dt)
    return hnp.arrays(dt, hnp.array_shapes(min_dims=rank, max_dims=rank, min_side=0, max_side=5), elements=elements)


# ---------------------------------------------------------------------------------------------------------------
# One operator: kernels of rank 1 and 2, scalar code of rank 0

UNARY_CASES = [(name, dtype, rank) for name in TRANSCENDENTAL + EXACT_UNARY
               for dtype, rank in (("float32", 1), ("float64", 2), ("float32", 0), ("float64", 0))]
UNARY_CASES += [("sign", "int8", 1), ("sign", "uint8", 2), ("sign", "int64", 0), ("sign", "uint64", 1)]


@pytest.mark.parametrize("name, dtype, rank", UNARY_CASES)
@EXAMPLES
@given(data=st.data())
def test_unary_operators_match_the_evaluator(name: str, dtype: str, rank: int, data: st.DataObject) -> None:
    module, fn = compiled(unary_program(name, dtype, rank))
    x = data.draw(arrays(dtype, rank), label="x")
    assert_matches(fn(x), relayish.evaluate(module, "main", x), rtol_for(name, dtype))


@pytest.mark.parametrize("name", TRANSCENDENTAL + EXACT_UNARY)
@pytest.mark.parametrize("dtype", ["float32", "float64"])
def test_special_values_in_kernels_and_scalar_code(name: str, dtype: str) -> None:
    x = np.array(SPECIAL_FLOATS, dtype)
    module, fn = compiled(unary_program(name, dtype, 1))
    assert_matches(fn(x), relayish.evaluate(module, "main", x), rtol_for(name, dtype))
    module, fn = compiled(unary_program(name, dtype, 0))
    for v in x:
        assert_matches(fn(v), relayish.evaluate(module, "main", v), rtol_for(name, dtype))


@pytest.mark.parametrize("name", ["floor", "tan", "sign"])
def test_views_are_read_as_their_values(name: str) -> None:
    """A transposed, a strided and a broadcast view (each one more Numba specialization of one kernel)."""
    module, fn = compiled(unary_program(name, "float64", 2))
    base = np.linspace(-5, 5, 24).reshape(4, 6)
    for view in (base.T, base[:, ::2], np.broadcast_to(base[:1], (4, 6))):
        assert_matches(fn(view), relayish.evaluate(module, "main", np.ascontiguousarray(view)), rtol_for(name, "float64"))


def test_round_takes_halves_to_even_in_every_backend() -> None:
    x = np.arange(-8, 9) / 2  # -4.0, -3.5, ..., 4.0
    expected = np.array([float(round(v)) for v in x.tolist()])  # Python's round: halves to even
    expected = np.copysign(expected, x)  # round(-0.5) is -0.0
    for rank in (1, 0):
        module, fn = compiled(unary_program("round", "float64", rank))
        got = fn(x) if rank else np.array([fn(v) for v in x])
        assert_matches(got, expected)


# ---------------------------------------------------------------------------------------------------------------
# floor_divide and floor_mod: broadcasting, integers, zero divisors

BROADCASTS = {  # the divisor's dims against a (n, m) dividend
    "same": "n, m", "row": "m", "column": "n, 1", "scalar": "",
}
BINARY_CASES = [(name, dtype, shape) for name in BINARY for dtype, shape in (
    ("float32", "same"), ("float64", "row"), ("float32", "column"), ("float64", "scalar"),
    ("int32", "same"), ("uint8", "row"), ("int8", "column"), ("int64", "scalar"), ("uint64", "same"))]


def binary_program(name: str, dtype: str, dims_a: str, dims_b: str) -> str:
    return (f"def @main[n: Dim, m: Dim](%a: {tensor_type(dtype, dims_a)}, %b: {tensor_type(dtype, dims_b)}) "
            f"{{ @{name}(%a, %b) }}")


@pytest.mark.parametrize("name, dtype, shape", BINARY_CASES)
@EXAMPLES
@given(data=st.data())
def test_binary_operators_broadcast_like_the_evaluator(name: str, dtype: str, shape: str, data: st.DataObject) -> None:
    module, fn = compiled(binary_program(name, dtype, "n, m", BROADCASTS[shape]))
    a = data.draw(arrays(dtype, 2), label="a")
    n, m = a.shape
    b_shape = {"same": (n, m), "row": (m,), "column": (n, 1), "scalar": ()}[shape]
    integer = not dtype.startswith("float")
    b = data.draw(hnp.arrays(np.dtype(dtype), b_shape, elements=values(np.dtype(dtype)).filter(lambda v: v != 0)
                             if integer else values(np.dtype(dtype))), label="b")
    assert_matches(fn(a, b), relayish.evaluate(module, "main", a, b))


@pytest.mark.parametrize("name", BINARY)
@pytest.mark.parametrize("dtype", ["float32", "float64", "int8", "int32", "uint8"])
@EXAMPLES
@given(data=st.data())
def test_binary_scalar_code(name: str, dtype: str, data: st.DataObject) -> None:
    module, fn = compiled(binary_program(name, dtype, "", ""))
    dt = np.dtype(dtype)
    a = dt.type(data.draw(values(dt)))
    b = dt.type(data.draw(values(dt).filter(bool) if dt.kind != "f" else values(dt)))
    assert_matches(fn(a, b), relayish.evaluate(module, "main", a, b))


def test_float_floor_division_specials_exactly() -> None:
    v = np.array([-7.5, 7.5, -0.0, 0.0, 3.0, -3.0, np.inf, -np.inf, np.nan, 1e30, 5e-324, 6.0, 1e308])
    a, b = np.meshgrid(v, v)
    for name in BINARY:
        for dtype in ("float32", "float64"):
            module, fn = compiled(binary_program(name, dtype, "n, m", "n, m"))
            x, y = a.astype(dtype), b.astype(dtype)
            assert_matches(fn(x, y), relayish.evaluate(module, "main", x, y))
            module, fn = compiled(binary_program(name, dtype, "", ""))
            for p, q in zip(x.ravel()[::7], y.ravel()[::7]):
                assert_matches(fn(p, q), relayish.evaluate(module, "main", p, q))


@pytest.mark.parametrize("name", BINARY)
def test_the_smallest_integer_divided_by_minus_one_wraps_as_numpy_does(name: str) -> None:
    module, fn = compiled(binary_program(name, "int8", "n, m", "m"))
    a, b = np.array([[-128, 127, -1]], np.int8), np.array([-1, -1, -1], np.int8)
    assert_matches(fn(a, b), relayish.evaluate(module, "main", a, b))


@pytest.mark.parametrize("name", BINARY)
@pytest.mark.parametrize("dims", [("n, m", "m"), ("", "")])
def test_integer_division_by_zero_is_a_runtime_error_in_both(name: str, dims: tuple[str, str]) -> None:
    module, fn = compiled(binary_program(name, "int32", *dims))
    a, b = (np.array([[5, 6]], np.int32), np.array([1, 0], np.int32)) if dims[0] else (np.int32(5), np.int32(0))
    for run in (fn, lambda *args: relayish.evaluate(module, "main", *args)):
        with pytest.raises(RelayRuntimeError, match="by zero"):
            run(a, b)


# ---------------------------------------------------------------------------------------------------------------
# Fused with their neighbours

T = "Tensor({dtype}, Shape(n))"
FUSED = {
    "exp_floor": ("@exp(@floor(%x) * %y)", ("float32", "float64")),
    "rounding": ("@floor_mod(%x, %y) + @round(%x) * @sign(%y) - @ceil(%x) + @trunc(%y) * 0.5{s}", ("float32", "float64")),
    "compare": ("@where(@floor(%x) == @ceil(%x), @round(%y), @floor_divide(%x, %y))", ("float32", "float64")),
    "smooth": ("@rsqrt(@cosh(%x)) - @atan(%y) + @erf(%x) * @expm1(%y) + @tan(%x) * @sinh(%y)", ("float32", "float64")),
    "domains": ("@asin(%x) + @acos(%y) * @log1p(%x)", ("float32", "float64")),
    "integers": ("@floor_mod(%x, %y) * @sign(%x) + @floor_divide(%x, %y)", ("int32", "int64")),
}
SUFFIX = {"float32": "", "float64": "f64", "int32": "", "int64": "i64"}
FUSED_CASES = [(name, dtype) for name, (_, dtypes) in FUSED.items() for dtype in dtypes]


def fused_program(name: str, dtype: str) -> str:
    body = FUSED[name][0].format(s=SUFFIX[dtype])
    ty = T.format(dtype=DTYPES[dtype])
    return f"def @main[n: Dim](%x: {ty}, %y: {ty}) {{ {body} }}"


@pytest.mark.parametrize("name, dtype", FUSED_CASES)
@EXAMPLES
@given(data=st.data())
def test_fused_programs_match_the_evaluator(name: str, dtype: str, data: st.DataObject) -> None:
    module, fn = compiled(fused_program(name, dtype))
    assert fn.source.count("k_fused(") == 1, fn.source  # one kernel for the whole expression
    size = data.draw(st.integers(0, 12), label="n")
    dt = np.dtype(dtype)
    if dt.kind == "f":
        x = data.draw(hnp.arrays(dt, size, elements=values(dt)), label="x")
        y = data.draw(hnp.arrays(dt, size, elements=values(dt)), label="y")
    else:
        x = data.draw(hnp.arrays(dt, size, elements=st.integers(-1000, 1000)), label="x")
        y = data.draw(hnp.arrays(dt, size, elements=st.integers(-50, 50).filter(bool)), label="y")
    got, ref = fn(x, y), relayish.evaluate(module, "main", x, y)
    if dt.kind != "f" or name in ("rounding", "compare"):
        assert_matches(got, ref)
    else:  # transcendental results combined: a few ulp each
        rtol = 1e-5 if dtype == "float32" else 1e-10
        assert got.dtype == ref.dtype and got.shape == ref.shape
        np.testing.assert_allclose(got, ref, rtol=rtol, atol=1e-30 if dtype == "float32" else 1e-290, equal_nan=True)


# ---------------------------------------------------------------------------------------------------------------
# The scalar expressions themselves (jit/scalars.py), float16 included


SCALAR_DTYPES = ["float16", "float32", "float64", "int8", "int32", "uint8"]


@pytest.mark.parametrize("name", TRANSCENDENTAL + EXACT_UNARY + BINARY)
def test_scalar_expressions_are_the_reference(name: str) -> None:
    op = get_op(name)
    count = op.num_args
    for dtype in SCALAR_DTYPES:
        dt = np.dtype(dtype)
        if dt.kind != "f" and name not in ("sign", *BINARY):
            continue
        pool = [dt.type(v) for v in SPECIAL_FLOATS] if dt.kind == "f" else \
            [dt.type(v) for v in (np.iinfo(dt).min, np.iinfo(dt).max, 0, 1, 7)] + ([dt.type(-3)] if dt.kind == "i" else [])
        types = [TensorType(BaseType.from_numpy(dt), Shape())] * count
        text = scalars.expression(name, [f"v{i}" for i in range(count)], types, {})
        for args in ([(v,) for v in pool] if count == 1 else [(p, q) for p in pool for q in pool]):
            with np.errstate(all="ignore"):
                try:
                    expected = op(*args)
                except ZeroDivisionError:
                    with pytest.raises(ZeroDivisionError):
                        eval(text, {**scalars.NAMESPACE, **{f"v{i}": v for i, v in enumerate(args)}})  # noqa: S307
                    continue
                result = eval(text, {**scalars.NAMESPACE, **{f"v{i}": v for i, v in enumerate(args)}})  # noqa: S307
            result = np.asarray(result)
            assert result.dtype == expected.dtype, (name, args, text, result.dtype)
            np.testing.assert_array_equal(result, expected, err_msg=f"{name}{args} via {text}")
