"""Errors of the evaluator: bad arguments at the boundary, and runtime errors with spans.

Bad arguments raise ``relayish.RelayRuntimeError`` naming the parameter, the expected and
the actual type (in the text format's words). Runtime errors inside the program raise
``RelayRuntimeError`` with the span of the offending expression, and the message names
the global being evaluated.
"""

from __future__ import annotations

import re

import numpy as np
import pytest

import relayish

F32_3 = "Tensor(FloatType(32), Shape(3))"


def evaluate(src: str, *args: object, filename: str = "errors.rly", name: str = "main") -> object:
    return relayish.evaluate(relayish.parse(src, filename=filename), name, *args)


def runtime_error(src: str, *args: object, filename: str = "errors.rly", name: str = "main") -> relayish.RelayRuntimeError:
    with pytest.raises(relayish.RelayRuntimeError) as info:
        evaluate(src, *args, filename=filename, name=name)
    return info.value


def assert_mentions(message: str, *parts: str) -> None:
    for part in parts:
        assert part in message, f"{part!r} is not in the message:\n{message}"


def test_runtime_error_is_a_relay_error() -> None:
    assert issubclass(relayish.RelayRuntimeError, relayish.RelayError)


# ---------------------------------------------------------------------------------------
# Bad arguments

ONE_PARAM = f"def @main(%x: {F32_3}) {{ %x * 2.0 }}"

BAD_ARGUMENTS = [
    ("float64 for float32", np.array([1, 2, 3], np.float64), "Tensor(FloatType(64), Shape(3))"),
    ("int32 for float32", np.array([1, 2, 3], np.int32), "Tensor(IntType(32), Shape(3))"),
    ("rank 2 for rank 1", np.ones((3, 1), np.float32), "Tensor(FloatType(32), Shape(3, 1))"),
    ("rank 0 for rank 1", np.array(1.0, np.float32), "Tensor(FloatType(32), Shape())"),
    ("wrong length", np.ones(4, np.float32), "Tensor(FloatType(32), Shape(4))"),
    ("a tuple for a tensor", (np.ones(3, np.float32), np.ones(3, np.float32)), f"({F32_3}, {F32_3})"),
]


@pytest.mark.parametrize("label, arg, actual", BAD_ARGUMENTS, ids=[b[0] for b in BAD_ARGUMENTS])
def test_a_bad_argument_names_the_parameter_and_both_types(label: str, arg: object, actual: str) -> None:
    err = runtime_error(ONE_PARAM, arg)
    assert_mentions(err.message, "%x", F32_3, actual)


def test_the_right_argument_passes() -> None:
    out = evaluate(ONE_PARAM, np.array([1, 2, 3], np.float32))
    assert isinstance(out, np.ndarray) and out.dtype == np.float32
    np.testing.assert_array_equal(out, [2, 4, 6])


def test_a_bad_second_argument_names_the_second_parameter() -> None:
    src = "def @main(%a: Tensor(IntType(32), Shape()), %b: Tensor(IntType(32), Shape(2))) { %a + %b }"
    err = runtime_error(src, np.array(1, np.int32), np.array([1, 2], np.int64))
    assert_mentions(err.message, "%b", "Tensor(IntType(32), Shape(2))", "Tensor(IntType(64), Shape(2))")
    assert "%a" not in err.message


def test_a_tensor_where_a_tuple_is_expected() -> None:
    src = f"def @main(%t: ({F32_3}, Tensor(IntType(32), Shape()))) {{ %t[1] }}"
    err = runtime_error(src, np.ones(3, np.float32))
    assert_mentions(err.message, "%t", f"({F32_3}, Tensor(IntType(32), Shape()))", F32_3)


def test_a_wrong_tensor_inside_a_tuple_argument() -> None:
    src = f"def @main(%t: ({F32_3}, Tensor(IntType(32), Shape()))) {{ %t[1] }}"
    err = runtime_error(src, (np.ones(3, np.float32), np.array(1, np.int64)))
    assert_mentions(err.message, "%t", "Tensor(IntType(32), Shape())", "Tensor(IntType(64), Shape())")


SYMBOLIC_PAIR = """
def @main[n: Dim](%a: Tensor(FloatType(32), Shape(n)), %b: Tensor(FloatType(32), Shape(n))) {
  (%a, %b)
}
"""


def test_a_symbolic_dimension_bound_inconsistently() -> None:
    # The body would run fine on the mismatched arrays: the boundary check must catch it.
    err = runtime_error(SYMBOLIC_PAIR, np.ones(3, np.float32), np.ones(4, np.float32))
    assert_mentions(err.message, "%b", "n")
    assert re.search(r"\b3\b", err.message) and re.search(r"\b4\b", err.message), err.message


def test_a_symbolic_dimension_bound_consistently_at_two_sizes() -> None:
    for size in (2, 5):
        a, b_ = np.arange(size, dtype=np.float32), -np.arange(size, dtype=np.float32)
        out = evaluate(SYMBOLIC_PAIR, a, b_)
        assert isinstance(out, tuple) and len(out) == 2
        np.testing.assert_array_equal(out[0], a)
        np.testing.assert_array_equal(out[1], b_)


def test_a_symbolic_dimension_inconsistent_within_one_parameter() -> None:
    src = "def @main[n: Dim](%m: Tensor(FloatType(32), Shape(n, n))) { @sum(%m) }"
    err = runtime_error(src, np.ones((2, 3), np.float32))
    assert_mentions(err.message, "%m")
    assert re.search(r"\b2\b", err.message) and re.search(r"\b3\b", err.message), err.message


@pytest.mark.parametrize("count", [1, 3])
def test_wrong_number_of_arguments(count: int) -> None:
    src = "def @main(%a: Tensor(FloatType(32), Shape()), %b: Tensor(FloatType(32), Shape())) { %a + %b }"
    err = runtime_error(src, *[np.array(1.0, np.float32)] * count)
    assert_mentions(err.message, "@main", "2", str(count))


def test_a_closure_called_from_python_checks_its_arguments() -> None:
    src = f"def @main(%k: Tensor(FloatType(32), Shape())) {{ fn (%v: {F32_3}) {{ %v * %k }} }}"
    closure = evaluate(src, np.array(2.0, np.float32))
    np.testing.assert_array_equal(closure(np.array([1, 2, 3], np.float32)), [2, 4, 6])
    with pytest.raises(relayish.RelayRuntimeError) as info:
        closure(np.array([1, 2, 3], np.float64))
    assert_mentions(info.value.message, "%v", F32_3, "Tensor(FloatType(64), Shape(3))")
    with pytest.raises(relayish.RelayRuntimeError):
        closure()


def test_an_ill_typed_module_is_a_type_error() -> None:
    src = "def @main(%x: Tensor(FloatType(32), Shape(3))) { %x + 1 }"
    with pytest.raises(relayish.RelayTypeError):
        evaluate(src, np.ones(3, np.float32))


def test_an_unknown_global_is_a_runtime_error() -> None:
    with pytest.raises(relayish.RelayRuntimeError, match="@nope"):
        evaluate(ONE_PARAM, np.ones(3, np.float32), name="nope")


# ---------------------------------------------------------------------------------------
# Runtime errors with spans

DIVISION = """\
# integer division by zero on line 4
def @main(%a: Tensor(IntType(32), Shape()), %b: Tensor(IntType(32), Shape())) {
  let %c = %a + 1 in
  let %q = %c / %b in
  %q * 2
}
"""


def test_integer_division_by_zero_has_the_span_of_the_division() -> None:
    assert evaluate(DIVISION, np.array(7, np.int32), np.array(2, np.int32), filename="div.rly") == 8
    err = runtime_error(DIVISION, np.array(7, np.int32), np.array(0, np.int32), filename="div.rly")
    assert err.span is not None
    assert (err.span.file, err.span.line) == ("div.rly", 4)
    assert_mentions(err.message, "@main")
    assert "div.rly:4:" in str(err)


def test_integer_division_by_zero_in_a_tensor() -> None:
    src = "def @main(%a: Tensor(IntType(32), Shape(3)), %b: Tensor(IntType(32), Shape(3))) {\n  %a / %b\n}\n"
    err = runtime_error(src, np.array([1, 2, 3], np.int32), np.array([1, 0, 1], np.int32), filename="vec.rly")
    assert err.span is not None and err.span.line == 2
    assert_mentions(err.message, "@main")


TAKE = """\
# @take out of range on line 5
def @main(%x: Tensor(FloatType(32), Shape(3)), %i: Tensor(IntType(32), Shape())) {
  let %y = %x * 2.0 in
  let %z =
    @take(%y, %i) in
  %z + 1.0
}
"""


@pytest.mark.parametrize("index", [3, 100, -1])
def test_take_out_of_range_has_the_span_of_the_take(index: int) -> None:
    err = runtime_error(TAKE, np.array([1, 2, 3], np.float32), np.array(index, np.int32), filename="take.rly")
    assert err.span is not None
    assert (err.span.file, err.span.line) == ("take.rly", 5)
    assert_mentions(err.message, "@main")


def test_take_in_range_runs() -> None:
    out = evaluate(TAKE, np.array([1, 2, 3], np.float32), np.array(2, np.int32), filename="take.rly")
    assert isinstance(out, np.ndarray) and out.dtype == np.float32 and out.shape == ()
    assert out == 7.0


HELPER = """\
def @main(%n: Tensor(IntType(32), Shape())) {
  @ratio(%n, %n - 3)
}

def @ratio(%p: Tensor(IntType(32), Shape()), %q: Tensor(IntType(32), Shape())) -> Tensor(IntType(32), Shape()) {
  %p / %q
}
"""


def test_a_runtime_error_in_a_helper_has_the_helpers_span_and_name() -> None:
    assert evaluate(HELPER, np.array(5, np.int32), filename="helper.rly") == 2
    err = runtime_error(HELPER, np.array(3, np.int32), filename="helper.rly")
    assert err.span is not None
    assert (err.span.file, err.span.line) == ("helper.rly", 6)
    assert_mentions(err.message, "@ratio")


DEEP = """\
def @count(%n: Tensor(IntType(32), Shape())) -> Tensor(IntType(32), Shape()) {
  if %n == 0 then 10 / %n else 1 + @count(%n - 1)
}

def @main(%n: Tensor(IntType(32), Shape())) {
  @count(%n)
}
"""


def test_a_runtime_error_deep_in_recursion() -> None:
    err = runtime_error(DEEP, np.array(3000, np.int32), filename="deep.rly")
    assert err.span is not None and err.span.line == 2
    assert_mentions(err.message, "@count")


def test_evaluate_and_compiled_calls_show_the_users_frames_and_say_how_to_fix_a_dtype():
    """relayish.evaluate and compiled functions raise from the user's line, with the fix in the
    message (a float64 array for a float32 parameter), not from twenty frames of ours."""
    import traceback

    module = relayish.parse("def @main(%x: Tensor(FloatType(32), Shape(3))) { @sum(%x) }")
    compiled = relayish.compile(module, "main")
    for run in (lambda: relayish.evaluate(module, "main", np.ones(3)), lambda: compiled(np.ones(3))):
        with pytest.raises(relayish.RelayRuntimeError, match=r"argument %x of @main: .*Shape\(3\)\), got "
                           r".*\(pass float32 values: convert with \.astype\(np\.float32\)\)") as info:
            run()
        files = {frame.filename for frame in traceback.extract_tb(info.value.__traceback__)}
        assert files == {__file__}, files  # this test's frames only (the lambda and the raises block)
        assert info.value.__cause__ is None and info.value.__suppress_context__
