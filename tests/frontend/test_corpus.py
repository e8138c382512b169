"""The frontend corpus: every @relay function runs decorated (translated, type-checked,
evaluated) and undecorated (``f.python``: the original Python with ``relay.*`` as NumPy),
and the two results must agree in structure, dtype, shape and value.

Acceptance line: at least 40 decorated functions covering arithmetic, branches with early
return, nested closures, lambdas, recursion, mutual recursion, for and while loops with
several carried variables, tuple returns and symbolic-batch functions at two batch sizes.
"""

from __future__ import annotations

import copy

import numpy as np
import pytest
from hypothesis import given, settings, strategies as st

import relayish
from frontend import RelayFunction

from . import corpus_functions as C

f32 = np.float32
f64 = np.float64
i32 = np.int32


def F(*values):
    """A float32 array (0-d for one number)."""
    return np.array(values[0] if len(values) == 1 else values, dtype=f32)


def D(*values):
    return np.array(values[0] if len(values) == 1 else values, dtype=f64)


def I(*values):  # noqa: E743 - short helper name, like F and D
    return np.array(values[0] if len(values) == 1 else values, dtype=i32)


def B(*values):
    return np.array(values[0] if len(values) == 1 else values, dtype=np.bool_)


def rand(shape, seed, dtype=f32, scale=1.0):
    return (np.random.default_rng(seed).standard_normal(shape) * scale).astype(dtype)


def rand_int(shape, seed, low=-5, high=6):
    return np.random.default_rng(seed).integers(low, high, size=shape).astype(i32)


# ----------------------------------------------------------------------------- comparison
_KINDS = {bool: "b", int: "iu", float: "f"}
_RTOL = {np.dtype(np.float16): 1e-3, np.dtype(np.float32): 1e-6, np.dtype(np.float64): 1e-12}


def assert_same(actual, expected, path="result"):
    """``actual`` (the decorated result) equals ``expected`` (the undecorated one):
    same nesting of tuples, same dtype and shape, equal values (exact for ints and bools,
    rtol 1e-6 for float32 and 1e-12 for float64).

    The undecorated Python may return a plain Python number where a branch returns a
    literal (``return 1``): NumPy's weak scalar. The decorated program gives it the
    annotated dtype, so only its kind (bool / int / float) and value are compared."""
    if isinstance(expected, tuple):
        assert isinstance(actual, tuple), f"{path}: expected a tuple, got {type(actual).__name__}"
        assert len(actual) == len(expected), f"{path}: tuple of {len(actual)}, expected {len(expected)}"
        for i, (a, e) in enumerate(zip(actual, expected)):
            assert_same(a, e, f"{path}[{i}]")
        return
    assert isinstance(actual, np.ndarray), f"{path}: expected an array, got {type(actual).__name__}: {actual!r}"
    if isinstance(expected, (bool, int, float)) and not isinstance(expected, np.generic):
        kind = _KINDS[bool if isinstance(expected, bool) else type(expected) if type(expected) in _KINDS else float]
        assert actual.shape == (), f"{path}: shape {actual.shape}, expected a scalar"
        assert actual.dtype.kind in kind, f"{path}: dtype {actual.dtype} for the Python {type(expected).__name__}"
        expected = np.asarray(expected, dtype=actual.dtype)
    else:
        assert isinstance(expected, (np.ndarray, np.generic)), f"{path}: undecorated result {expected!r}"
        expected = np.asarray(expected)
        assert actual.dtype == expected.dtype, f"{path}: dtype {actual.dtype}, expected {expected.dtype}"
        assert actual.shape == expected.shape, f"{path}: shape {actual.shape}, expected {expected.shape}"
    if actual.dtype.kind == "f":
        np.testing.assert_allclose(actual, expected, rtol=_RTOL[actual.dtype], atol=0, err_msg=path)
    else:
        np.testing.assert_array_equal(actual, expected, err_msg=path)


def check(fn, *args):
    """Run ``fn`` decorated and undecorated on the same arguments and compare (each side
    gets its own copy of the arrays, so an in-place update in the Python cannot leak)."""
    expected = fn.python(*copy.deepcopy(args))
    actual = fn(*copy.deepcopy(args))
    assert_same(actual, expected)
    return actual


# ---------------------------------------------------------------------------------- table
X23, Y23 = rand((2, 3), 1), rand((2, 3), 2)
CONV_W = rand((3, 2, 3, 3), 3, scale=0.5)
MLP_W, MLP_B = rand((3, 4), 4), rand(3, 5)

# (function, arguments) pairs; the symbolic-batch functions appear at two batch sizes.
CASES = [
    # arithmetic
    (C.poly, (X23, Y23)),
    (C.int_arith, (I(3, -4, 0, 9), I(-2, 5, 7, 0))),
    (C.scalar_mix, (F(1.25), I(3))),
    (C.scalar_mix, (2.5, 4)),
    (C.f64_poly, (D(0.3, -1.7, 2.2),)),
    (C.augmented, (F(0.5, -1.0, 2.0, 3.5),)),
    (C.module_consts, (rand((3, 4), 6),)),
    (C.matmul_ops, (rand((2, 3), 7), rand((3, 4), 8))),
    # branches
    (C.relu_scalar, (F(2.5),)),
    (C.relu_scalar, (F(-3.0),)),
    (C.relu_scalar, (-0.5,)),
    (C.sign_elif, (F(4.0),)),
    (C.sign_elif, (F(-0.25),)),
    (C.sign_elif, (F(0.0),)),
    (C.grade, (I(95),)),
    (C.grade, (I(83),)),
    (C.grade, (I(70),)),
    (C.grade, (I(55),)),
    (C.grade, (12,)),
    (C.join_two, (F(3.0), F(1.5))),
    (C.join_two, (F(-1.0), F(2.0))),
    (C.if_no_else, (F(1.0, 2.0, 3.0), B(True))),
    (C.if_no_else, (F(1.0, 2.0, 3.0), B(False))),
    (C.nested_returns, (F(1.0), F(2.0))),
    (C.nested_returns, (F(1.0), F(-2.0))),
    (C.nested_returns, (F(-1.0), F(-2.0))),
    (C.nested_returns, (F(-1.0), F(0.5))),
    (C.deep_returns, (I(150),)),
    (C.deep_returns, (I(40),)),
    (C.deep_returns, (I(12),)),
    (C.deep_returns, (I(5),)),
    (C.deep_returns, (I(-30),)),
    (C.chained_cmp, (F(1.5), F(1.0), F(2.0))),
    (C.chained_cmp, (F(3.0), F(1.0), F(2.0))),
    (C.chained_cmp, (F(0.5), F(1.0), F(2.0))),
    (C.chained_cmp, (F(80.0), F(1.0), F(60.0))),
    (C.cond_expr, (F(2.0), F(-1.0))),
    (C.cond_expr, (F(-2.0), F(-1.0))),
    (C.bool_logic, (B(True), B(False), F(0.0))),
    (C.bool_logic, (B(True), B(True), F(2.0))),
    (C.bool_logic, (B(False), B(True), F(2.0))),
    (C.tensor_branch, (X23,)),
    (C.tensor_branch, (-np.abs(X23) - 1.0,)),
    (C.tensor_branch, (X23 * 0.0 - 0.1,)),
    # closures
    (C.closure_basic, (F(1.0, -2.0, 0.5), F(3.0))),
    (C.closure_nested3, (F(0.75),)),
    (C.closure_returned, (F(1.25),)),
    (C.closure_loop, (F(0.5), I(4))),
    (C.closure_while, (F(1.0, 2.0, -3.0), I(3))),
    # lambdas and higher-order functions
    (C.lambdas, (F(0.5, -1.0, 2.0, 0.0),)),
    (C.higher_order_local, (F(0.3),)),
    (C.compose_lambdas, (F(1.0, -1.0, 0.25),)),
    (C.use_callable, (F(1.5),)),
    (C.use_callable_def, (F(-0.75),)),
    # recursion
    (C.fib, (I(12),)),
    (C.fib, (10,)),
    (C.fact, (I(10),)),
    (C.fact, (I(1),)),
    (C.gcd, (I(1071), I(462))),
    (C.power_rec, (D(1.1), I(13))),
    (C.power_rec, (D(-0.5), I(0))),
    (C.sum_acc, (I(10), I(5))),
    (C.sum_keywords, (I(20),)),
    (C.search, (I(12),)),
    (C.search, (I(5),)),
    (C.search, (I(-1),)),
    (C.all_positive, (F(1.0, 2.0, 3.0, 0.5, 0.25, 9.0), I(0))),
    (C.all_positive, (F(1.0, 2.0, -3.0, 0.5, 0.25, 9.0), I(0))),
    (C.nested_rec, (F(0.5), I(6))),
    (C.nested_rec_untyped, (I(9),)),
    # mutual recursion
    (C.is_even, (I(10),)),
    (C.is_even, (I(7),)),
    (C.is_odd, (I(7),)),
    (C.hof_f, (I(9),)),
    (C.hof_m, (I(9),)),
    (C.ping, (F(0.5, -2.0), I(5))),
    (C.pong, (F(0.5, -2.0), I(4))),
    # loops
    (C.while_fib, (I(15),)),
    (C.while_fib, (0,)),
    (C.collatz, (I(27),)),
    (C.collatz, (I(1),)),
    (C.while_four, (F(0.5, 1.0, -0.25), I(6))),
    (C.while_four, (F(5.0, 10.0, -2.5), I(6))),
    (C.for_neg_step, (I(6),)),
    (C.for_neg_step, (I(0),)),
    (C.for_neg_step2, (F(1.0, 2.0, 3.0, 4.0),)),
    (C.range_step, (F(1.0, 2.0, 3.0, 4.0),)),
    (C.nested_loops, (I(4), I(6))),
    (C.nested_loops, (I(5), I(3))),
    (C.for_carried, (F(1.0, -2.0, 4.0), I(5))),
    (C.for_module_steps, (F(0.9),)),
    (C.loop_unpack_call, (I(12),)),
    (C.newton_sqrt, (D(2.0),)),
    (C.newton_sqrt, (D(1e4),)),
    (C.while_tuple_state, (F(1.0), I(5))),
    (C.for_tuple_state, (F(1.0), I(4))),
    # tuples
    (C.minmax, (F(3.0, -1.0, 4.0, 1.0, -5.0),)),
    (C.nested_tuple, (F(2.0), F(0.5))),
    (C.unpack_call, (F(3.0, -1.0, 4.0, 1.0, -5.0),)),
    (C.tuple_swap, (I(3), I(-8))),
    (C.join_tuple_value, (F(1.0),)),
    (C.join_tuple_value, (F(7.0),)),
    (C.join_tuple_value, (F(-1.0),)),
    (C.literal_tuple_return_f64, (D(2.0),)),
    (C.literal_tuple_return_f64, (D(-2.0),)),
    (C.literal_ifexp_return_f64, (B(True),)),
    (C.literal_ifexp_return_f64, (B(False),)),
    # operators with attributes, dtypes
    (C.softmax_dense, (rand((2, 4), 9),)),
    (C.reductions, (rand((2, 3, 4), 10),)),
    (C.shape_ops, (X23,)),
    (C.cast_f64, (F(0.1, -2.5, 3.0),)),
    (C.convert_f64, (F(0.1, -2.5, 3.0), I(3))),
    (C.int_tensor, (rand_int((2, 3), 11),)),
    (C.bool_tensor, (B(True, True, False, False), B(True, False, True, False))),
    (C.compare_tensor, (F(0.5, -1.0, 2.0, 0.0), F(0.25, 0.0, 3.0, -1.0))),
    (C.conv_pool, (rand((1, 2, 8, 8), 12), CONV_W)),
    # symbolic batch, each at two batch sizes
    (C.mlp, (rand((2, 4), 13), MLP_W, MLP_B)),
    (C.mlp, (rand((5, 4), 14), MLP_W, MLP_B)),
    (C.batch_stats, (rand((1, 5), 15),)),
    (C.batch_stats, (rand((4, 5), 16),)),
    (C.batch_conv, (rand((1, 2, 8, 8), 17), CONV_W)),
    (C.batch_conv, (rand((3, 2, 8, 8), 18), CONV_W)),
    (C.batch_where_take, (rand((2, 6), 19),)),
    (C.batch_where_take, (rand((7, 6), 20),)),
    (C.batch_concat, (rand((2, 2), 21), rand((2, 3), 22))),
    (C.batch_concat, (rand((6, 2), 23), rand((6, 3), 24))),
    (C.batch_f64, (rand((2, 3), 25),)),
    (C.batch_f64, (rand((5, 3), 26),)),
    (C.batch_int, (rand_int((2, 3), 27),)),
    (C.batch_int, (rand_int((6, 3), 28),)),
    (C.batch_loop, (rand((2, 3), 29), I(3))),
    (C.batch_loop, (rand((4, 3), 30), I(5))),
    (C.batch_matmul, (rand((2, 3), 31), rand((3, 2), 32))),
    (C.batch_matmul, (rand((5, 3), 33), rand((3, 5), 34))),
]

# Functions only reached through others (a Callable parameter cannot come from NumPy).
HELPERS = {C.apply_callable}

CORPUS = sorted((v for v in vars(C).values() if isinstance(v, RelayFunction)), key=lambda f: f.__name__)


def _case_id(case):
    fn, args = case
    return fn.__name__


@pytest.mark.parametrize("fn, args", CASES, ids=[_case_id(c) for c in CASES])
def test_decorated_equals_undecorated(fn, args):
    check(fn, *args)


def test_corpus_size_and_coverage():
    """The acceptance number: at least 40 decorated functions, each exercised."""
    assert len(CORPUS) >= 40, f"only {len(CORPUS)} @relay functions in the corpus"
    called = {id(fn) for fn, _ in CASES}
    untested = [f.__name__ for f in CORPUS if id(f) not in called and f not in HELPERS]
    assert not untested, f"corpus functions without a case: {untested}"
    symbolic = [C.mlp, C.batch_stats, C.batch_conv, C.batch_where_take, C.batch_concat, C.batch_f64,
                C.batch_int, C.batch_loop, C.batch_matmul]
    for fn in symbolic:
        sizes = {args[0].shape[0] for f, args in CASES if f is fn}
        assert len(sizes) >= 2, f"{fn.__name__} runs at batch sizes {sizes}, want two"


@pytest.mark.parametrize("fn", CORPUS, ids=[f.__name__ for f in CORPUS])
def test_ir_text_round_trips(fn):
    """The typed IR prints to text that parses back to an alpha-equal module."""
    module = fn.ir
    text = relayish.astext(module)
    assert relayish.alpha_equal(relayish.parse(text), module), text


# ------------------------------------------------------------------------------ hypothesis
finite32 = st.floats(min_value=-50.0, max_value=50.0, allow_nan=False, width=32).map(f32)


@settings(max_examples=25)
@given(n=st.integers(1, 6), seed=st.integers(0, 2**16))
def test_mlp_any_batch(n, seed):
    check(C.mlp, rand((n, 4), seed), MLP_W, MLP_B)


@settings(max_examples=25)
@given(n=st.integers(1, 6), seed=st.integers(0, 2**16))
def test_batch_where_take_any_batch(n, seed):
    check(C.batch_where_take, rand((n, 6), seed, scale=3.0))


@settings(max_examples=15)
@given(n=st.integers(1, 6), seed=st.integers(0, 2**16))
def test_batch_conv_any_batch(n, seed):
    check(C.batch_conv, rand((n, 2, 8, 8), seed), CONV_W)


@settings(max_examples=25)
@given(x=finite32, y=finite32)
def test_nested_returns_any_floats(x, y):
    check(C.nested_returns, np.asarray(x), np.asarray(y))


@settings(max_examples=25)
@given(x=finite32, lo=finite32, width=st.floats(0.0, 40.0, width=32).map(f32))
def test_chained_cmp_any_floats(x, lo, width):
    check(C.chained_cmp, np.asarray(x), np.asarray(lo), np.asarray(lo + width))


@settings(max_examples=25)
@given(a=finite32, b=finite32)
def test_join_and_cond_expr_any_floats(a, b):
    check(C.join_two, np.asarray(a), np.asarray(b))
    check(C.cond_expr, np.asarray(a), np.asarray(b))


@settings(max_examples=25)
@given(n=st.integers(-20, 200))
def test_deep_returns_any_int(n):
    check(C.deep_returns, I(n))


@settings(max_examples=20)
@given(n=st.integers(0, 12), m=st.integers(0, 12))
def test_loops_any_counts(n, m):
    check(C.nested_loops, I(n), I(m))
    check(C.for_neg_step, I(n))
    check(C.while_fib, I(n + m))
