"""Structural comparison of results: hand-written pairs and the exact messages they give."""

from __future__ import annotations

import numpy as np
import pytest

import relayish
from relayish.testing.compare import assert_same, difference
from runtime.values import DataValue, RefCell

f32, f64, i32 = (lambda v, t=t: np.asarray(v, dtype=t) for t in (np.float32, np.float64, np.int32))


@pytest.mark.parametrize(
    "value",
    [
        f32(1.5),
        (f32([1, 2]), (i32(3), np.array([True, False])), ()),
        f64([np.nan, np.inf, -np.inf, -0.0]),
        RefCell((i32([1, 2]),)),
    ],
)
def test_equal_values_have_no_difference(value):
    assert difference(value, value) is None
    assert_same(value, value)


def test_nan_equals_nan_but_infinities_must_have_the_same_sign():
    assert difference(f32([np.nan, 1]), f32([np.nan, 1])) is None
    assert difference(f64(np.inf), f64(np.inf)) is None
    assert difference(f64(np.inf), f64(-np.inf)) == "result: actual inf, expected -inf (float64, rtol=1e-12, atol=0)"
    assert difference(f64(np.nan), f64(1.0)) is not None
    assert difference(f64(np.inf), f64(1e308)) is not None


def test_default_tolerances_depend_on_the_dtype_and_can_be_given():
    assert difference(f32(1.0), f32(1.0 + 4e-6)) is None
    assert difference(f32(1.0), f32(1.0 + 4e-5)) is not None
    assert difference(f64(1.0), f64(1.0 + 1e-13)) is None
    assert difference(f64(1.0), f64(1.0 + 1e-11)) is not None
    assert difference(np.float16([1.0]), np.float16([1.0009765625])) is None
    assert difference(f64(1.0), f64(1.1), rtol=0.2) is None
    assert difference(f64(0.0), f64(0.01), atol=0.02) is None
    assert difference(f64(0.0), f64(0.01), atol=0.005) is not None


def test_integers_and_bools_compare_exactly():
    assert difference(i32(7), i32(7), rtol=1.0) is None
    assert difference(i32([1, 2]), i32([1, 3]), rtol=1.0) == (
        "result: 1 of 2 elements differ; first at index [1]: actual 2, expected 3 (int32, exact)"
    )
    assert "actual False, expected True" in difference(np.array([True, False]), np.array([True, True]))


def test_the_message_names_the_path_the_first_element_and_the_count():
    actual = (f32(0), (f32([[1, 2, 3, 4], [5, 6, 7, 8], [9, 10, 11, 12]]),))
    expected = (f32(0), (f32([[1, 2, 3, 4], [5, 6, 7, 8], [9, 10, 0, 0]]),))
    assert difference(actual, expected) == (
        "result[1][0]: 2 of 12 elements differ; first at index [2, 2]: actual 11.0, expected 0.0 (float32, rtol=1e-05, atol=0)"
    )


def test_the_first_difference_left_to_right_is_reported():
    actual = ((i32(1), i32(9)), i32(9))
    expected = ((i32(1), i32(2)), i32(3))
    assert difference(actual, expected).startswith("result[0][1]: actual 9, expected 2")


@pytest.mark.parametrize(
    "actual, expected, message",
    [
        (f32([1]), f64([1]), "result: dtype differs: actual float32, expected float64"),
        ((i32([1, 2]),), (i32([[1, 2]]),), "result[0]: shape differs: actual (2,), expected (1, 2)"),
        ((i32(1), i32(2)), (i32(1),), "result: tuple length differs: actual has 2 fields, expected 1"),
        ((i32(1),), (i32(1), ()), "result: tuple length differs: actual has 1 fields, expected 2"),
        ((f32(1),), (np.float32(1),), "result[0]: kind differs: actual is an array of float32 (), expected a float32 np.float32(1.0)"),
        (((),), (i32(0),), "result[0]: kind differs: actual is a tuple of 0, expected an array of int32 ()"),
        (RefCell(i32(1)), RefCell(i32(2)), "result.value: actual 1, expected 2 (int32, exact)"),
    ],
)
def test_mismatches_of_structure_are_reported_as_such(actual, expected, message):
    assert difference(actual, expected) == message
    with pytest.raises(AssertionError) as caught:
        assert_same(actual, expected)
    assert str(caught.value) == message


def test_closures_cannot_be_compared():
    module = relayish.parse("def @main() { (fn (%x: Tensor(IntType(32), Shape())) { %x }, 1) }")
    closure, one = relayish.evaluate(module, "main")
    assert difference((closure, one), (closure, one)) == "cannot compare functions at result[0]"
    assert difference((i32(0), closure), (i32(0), i32(1))) == (
        "result[1]: kind differs: actual is a function, expected an array of int32 ()"
    )


def cons_list(*items):
    value = DataValue("Nil")
    for item in reversed(items):
        value = DataValue("Cons", (item, value))
    return value


def test_data_values_compare_by_constructor_and_fields():
    value = (cons_list(f32(1), f32([2, 3])), DataValue("Some", ((i32(1), DataValue("None")),)))
    same = (cons_list(f32(1), f32([2, 3])), DataValue("Some", ((i32(1), DataValue("None")),)))
    assert difference(value, same) is None
    assert difference(cons_list(f32(1)), cons_list(f32(1), f32(2))) == (
        "result.Cons[1]: constructor differs: actual is Nil of 0 fields, expected Cons of 2 fields"
    )
    assert difference(cons_list(f32(1), f32([2, 3])), cons_list(f32(1), f32([2, 4]))) == (
        "result.Cons[1].Cons[0]: 1 of 2 elements differ; first at index [1]: actual 3.0, expected 4.0 (float32, rtol=1e-05, atol=0)"
    )
    assert difference((DataValue("Leaf", (f32(1),)),), (f32(1),)) == (
        "result[0]: kind differs: actual is a Leaf value, expected an array of float32 ()"
    )
    assert difference(DataValue("Box", (f32(1),)), DataValue("Box", (f32(1), f32(2)))) == (
        "result: constructor differs: actual is Box of 1 field, expected Box of 2 fields"
    )


def test_long_data_values_compare_without_recursion():
    long = cons_list(*[i32(k) for k in range(3_000)])
    assert difference(long, cons_list(*[i32(k) for k in range(3_000)])) is None
    other = cons_list(*[i32(k) for k in range(2_999)], i32(0))
    assert difference(long, other).endswith("actual 2999, expected 0 (int32, exact)")


def test_the_evaluator_and_the_jit_give_data_values_that_compare():
    module = relayish.parse("""
def @main(%x: Tensor(FloatType(32), Shape(2))) -> (List[Tensor(FloatType(32), Shape(2))], Option[Tensor(IntType(32), Shape())]) {
  (Cons(%x, Cons(%x, Nil)), Some(3))
}
""", prelude=True)
    x = f32([1, 2])
    expected = relayish.evaluate(module, "main", x)
    assert_same(relayish.compile(module, "main", tiered=False)(x), expected)
    assert expected[0].ctor == "Cons" and expected[1].fields[0] == 3
