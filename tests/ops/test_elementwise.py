"""Elementwise operators of one argument against independent float64 expressions.

Tolerances are the defaults of helpers.py (float32 rtol 1e-5 atol 1e-6, float64 rtol 1e-12
atol 1e-14; integers exact).
"""

from __future__ import annotations

import warnings

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

from relayish.ops import get_op
from relayish.types import BaseType

from .helpers import FLOATS, NUMBERS, arrays, assert_close, shapes

# name: (reference on float64 values, lowest input, highest input, dtypes)
UNARY = {
    "neg": (lambda x: 0 - x, -100, 100, NUMBERS),
    "sq": (lambda x: x**2, -100, 100, NUMBERS),
    "exp": (lambda x: np.e**x, -20, 20, FLOATS),
    "log": (lambda x: np.log2(x) / np.log2(np.e), 1e-3, 1e3, FLOATS),
    "sqrt": (lambda x: x**0.5, 0, 1e3, FLOATS),
    "tanh": (lambda x: np.sinh(x) / np.cosh(x), -10, 10, FLOATS),
    "sigmoid": (lambda x: np.exp(x) / (1 + np.exp(x)), -30, 30, FLOATS),
    "relu": (lambda x: np.where(x > 0, x, 0), -100, 100, NUMBERS),
    "abs": (lambda x: np.where(x < 0, -x, x), -100, 100, NUMBERS),
    "sin": (lambda x: np.exp(1j * x).imag, -10, 10, FLOATS),
    "cos": (lambda x: np.exp(1j * x).real, -10, 10, FLOATS),
}


@pytest.mark.parametrize("name", sorted(UNARY))
@given(data=st.data())
def test_unary(name: str, data: st.DataObject) -> None:
    reference, lo, hi, dtypes = UNARY[name]
    dtype = data.draw(st.sampled_from(dtypes), label="dtype")
    x = data.draw(arrays(dtype, shapes(min_side=0), lo, hi), label="x")
    assert_close(get_op(name)(x), reference(x.astype(np.float64)), dtype)


@given(x=arrays(bool, shapes(min_side=0)))
def test_logical_not(x: np.ndarray) -> None:
    expected = np.array([not v for v in x.flat], dtype=bool).reshape(x.shape)
    assert_close(get_op("logical_not")(x), expected, bool)


CASTS = [np.float32, np.float64, np.int32, np.int64, np.uint8, np.bool_]


@given(data=st.data())
def test_cast(data: st.DataObject) -> None:
    source = np.dtype(data.draw(st.sampled_from(CASTS), label="from"))
    target = np.dtype(data.draw(st.sampled_from(CASTS), label="to"))
    x = data.draw(arrays(source, shapes(), 0, 100), label="x")
    result = get_op("cast")(x, dtype=BaseType.from_numpy(target))
    expected = [target.type(int(v) if target.kind in "iu" else v) for v in x.flat]  # int() truncates
    assert_close(result, np.array(expected, dtype=target).reshape(x.shape), target)


@given(data=st.data())
def test_cast_like_converts_to_the_dtype_of_like_whatever_its_shape(data: st.DataObject) -> None:
    source = np.dtype(data.draw(st.sampled_from(CASTS), label="from"))
    target = np.dtype(data.draw(st.sampled_from(CASTS), label="to"))
    x = data.draw(arrays(source, shapes(), 0, 100), label="x")
    like = np.zeros(data.draw(shapes(), label="like shape"), dtype=target)
    result = get_op("cast_like")(x, like)
    expected = [target.type(int(v) if target.kind in "iu" else v) for v in x.flat]
    assert_close(result, np.array(expected, dtype=target).reshape(x.shape), target)


def test_cast_accepts_a_numpy_dtype_name() -> None:
    assert_close(get_op("cast")(np.array([1.7, -2.7]), dtype="int32"), np.array([1, -2]), np.int32)


@pytest.mark.parametrize(
    ("name", "x", "expected"),
    [
        ("log", [0.0, -1.0, np.inf], [-np.inf, np.nan, np.inf]),
        ("sqrt", [-1.0, np.inf], [np.nan, np.inf]),
        ("exp", [1000.0, -1000.0, np.nan], [np.inf, 0.0, np.nan]),
        ("sigmoid", [-1000.0, 1000.0, 0.0], [0.0, 1.0, 0.5]),
        ("tanh", [-1000.0, 1000.0], [-1.0, 1.0]),
        ("relu", [np.nan, -np.inf], [np.nan, 0.0]),
    ],
)
def test_ieee_special_values_without_warnings(name: str, x: list[float], expected: list[float]) -> None:
    for dtype in (np.float32, np.float64):
        with warnings.catch_warnings():
            warnings.simplefilter("error")
            result = get_op(name)(np.array(x, dtype=dtype))
        assert_close(result, np.array(expected), dtype)
