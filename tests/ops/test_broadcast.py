"""Broadcasting binary operators, comparisons, logic and where.

References are float64 (or exact integer) expressions on explicitly broadcast operands.
Tolerances are the defaults of helpers.py (float32 rtol 1e-5 atol 1e-6, float64 rtol 1e-12
atol 1e-14; integers and booleans exact).
"""

from __future__ import annotations

import operator
import warnings

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st
from hypothesis.extra import numpy as hnp

from relayish.ops import get_op

from .helpers import FLOATS, I32, NUMBERS, arrays, assert_close, elements

BROADCAST_SHAPES = hnp.mutually_broadcastable_shapes(num_shapes=2, min_dims=0, max_dims=3, max_side=3)


def nonzero(dtype: np.dtype) -> st.SearchStrategy:
    """Divisors kept away from 0 so that float32 quotients cannot overflow."""
    return elements(dtype, 0.5, 10) | elements(dtype, -10, -0.5)


# name: (reference, dtypes, values of a, values of b)
ARITHMETIC = {
    "add": (operator.add, NUMBERS, (-100, 100), (-100, 100)),
    "sub": (operator.sub, NUMBERS, (-100, 100), (-100, 100)),
    "mul": (operator.mul, NUMBERS, (-100, 100), (-100, 100)),
    "div": (lambda a, b: a / b, FLOATS, (-100, 100), nonzero),
    "pow": (lambda a, b: np.exp(b * np.log(a)), FLOATS, (0.1, 10), (-3, 3)),
    "maximum": (lambda a, b: np.where(a >= b, a, b), NUMBERS, (-100, 100), (-100, 100)),
    "minimum": (lambda a, b: np.where(a <= b, a, b), NUMBERS, (-100, 100), (-100, 100)),
    "equal": (operator.eq, NUMBERS, (-2, 2), (-2, 2)),
    "not_equal": (operator.ne, NUMBERS, (-2, 2), (-2, 2)),
    "less": (operator.lt, NUMBERS, (-2, 2), (-2, 2)),
    "less_equal": (operator.le, NUMBERS, (-2, 2), (-2, 2)),
    "greater": (operator.gt, NUMBERS, (-2, 2), (-2, 2)),
    "greater_equal": (operator.ge, NUMBERS, (-2, 2), (-2, 2)),
}


def draw_operand(data: st.DataObject, dtype: np.dtype, shape: tuple[int, ...], values, label: str) -> np.ndarray:
    strategy = values(dtype) if callable(values) else elements(dtype, *values)
    return data.draw(hnp.arrays(dtype, shape, elements=strategy), label=label)


@pytest.mark.parametrize("name", sorted(ARITHMETIC))
@given(data=st.data(), shapes=BROADCAST_SHAPES)
def test_binary(name: str, data: st.DataObject, shapes: hnp.BroadcastableShapes) -> None:
    reference, dtypes, a_values, b_values = ARITHMETIC[name]
    dtype = data.draw(st.sampled_from(dtypes), label="dtype")
    a = draw_operand(data, dtype, shapes.input_shapes[0], a_values, "a")
    b = draw_operand(data, dtype, shapes.input_shapes[1], b_values, "b")
    wide_a, wide_b = (np.broadcast_to(v.astype(np.float64), shapes.result_shape) for v in (a, b))
    expected = reference(wide_a, wide_b)
    result_dtype = bool if expected.dtype == bool else dtype
    assert_close(get_op(name)(a, b), expected, result_dtype)


@given(data=st.data(), shapes=BROADCAST_SHAPES)
def test_integer_div_and_pow(data: st.DataObject, shapes: hnp.BroadcastableShapes) -> None:
    a = draw_operand(data, I32, shapes.input_shapes[0], (-100, 100), "a")
    b = draw_operand(data, I32, shapes.input_shapes[1], nonzero, "b")
    exponent = draw_operand(data, I32, shapes.input_shapes[1], (0, 3), "exponent")
    wide_a, wide_b, wide_e = (np.broadcast_to(v.astype(np.int64), shapes.result_shape) for v in (a, b, exponent))
    floor = np.vectorize(lambda p, q: p // q, otypes=[np.int64])  # Python's floor division
    assert_close(get_op("div")(a, b), floor(wide_a, wide_b), I32)
    assert_close(get_op("pow")(a, exponent), np.vectorize(pow, otypes=[np.int64])(wide_a, wide_e), I32)


@pytest.mark.parametrize("name", ["logical_and", "logical_or"])
@given(shapes=BROADCAST_SHAPES, data=st.data())
def test_logical(name: str, shapes: hnp.BroadcastableShapes, data: st.DataObject) -> None:
    a, b = (data.draw(arrays(bool, shape)) for shape in shapes.input_shapes)
    wide_a, wide_b = (np.broadcast_to(v, shapes.result_shape) for v in (a, b))
    truth = {"logical_and": lambda p, q: p and q, "logical_or": lambda p, q: p or q}[name]
    expected = np.array([truth(p, q) for p, q in zip(wide_a.flat, wide_b.flat)], dtype=bool)
    assert_close(get_op(name)(a, b), expected.reshape(shapes.result_shape), bool)


@given(
    data=st.data(),
    shapes=hnp.mutually_broadcastable_shapes(num_shapes=3, min_dims=0, max_dims=3, max_side=3),
    dtype=st.sampled_from(NUMBERS),
)
def test_where(data: st.DataObject, shapes: hnp.BroadcastableShapes, dtype: np.dtype) -> None:
    cond = data.draw(arrays(bool, shapes.input_shapes[0]), label="cond")
    a = data.draw(arrays(dtype, shapes.input_shapes[1]), label="a")
    b = data.draw(arrays(dtype, shapes.input_shapes[2]), label="b")
    expected = np.choose(cond.astype(np.int64), [b, a])
    assert_close(get_op("where")(cond, a, b), expected, dtype)


def test_integer_division_by_zero_raises() -> None:
    with pytest.raises(ZeroDivisionError, match="division by zero"):
        get_op("div")(np.array([1, 2, 3], dtype=np.int32), np.array([1, 0, 1], dtype=np.int32))


def test_integer_division_floors() -> None:
    a = np.array([7, -7, 7, -7], dtype=np.int64)
    b = np.array([2, 2, -2, -2], dtype=np.int64)
    assert_close(get_op("div")(a, b), np.array([3, -4, -4, 3]), np.int64)


@pytest.mark.parametrize("dtype", FLOATS)
def test_float_division_by_zero_is_ieee_without_warnings(dtype: np.dtype) -> None:
    a = np.array([1.0, -1.0, 0.0], dtype=dtype)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        result = get_op("div")(a, np.zeros(3, dtype=dtype))
    assert_close(result, np.array([np.inf, -np.inf, np.nan]), dtype)
