"""Errors of the Python frontend: each unsupported construct in ``error_cases.py`` is a
``FrontendError`` located at the construct (file, line, 1-based column), whose message
quotes the line with a caret and says what to write instead (a misspelled name says what
was meant); type errors in decorated functions are ``RelayTypeError``s that name the Python
line; an argument that does not fit its parameter names the parameter and the fix; errors
show the user's frames only and name the user's functions, not the globals AD generates;
and an error leaves nothing half-done behind.

The expected positions are computed here from the text of error_cases.py, independently
of the frontend: the line holding a substring unique inside the function (searched from
the function's ``def`` on), and the column of that substring (plus an offset into it).
"""

from __future__ import annotations

import traceback
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from relayish import FrontendError, Int, Int64, RelayError, RelayRuntimeError, RelayTypeError, Tensor, relay

from . import error_cases as E

FILE = Path(E.__file__).resolve()
LINES = FILE.read_text().splitlines()

F64 = np.float64(1.5)
V3 = np.ones(3, np.float64)
V5 = np.arange(5, dtype=np.float64)
M23 = np.ones((2, 3), np.float64)


def locate(function: str, needle: str, offset: int = 0) -> tuple[int, int]:
    """(line, column), 1-based, of ``needle`` (plus ``offset`` characters) at its first
    occurrence from the line ``def <function>(`` on; on that line itself the search starts
    after the function's name unless the needle is the ``def`` itself."""
    header = f"def {function}("
    starts = [i for i, line in enumerate(LINES) if line.lstrip().startswith(header)]
    assert len(starts) == 1, f"error_cases.py has {len(starts)} definitions of {function}"
    first = starts[0]
    for i in range(first, len(LINES)):
        line = LINES[i]
        begin = 0
        if i == first and not needle.startswith("def "):
            begin = line.index(header) + len(header)
        col = line.find(needle, begin)
        if col >= 0:
            return i + 1, col + offset + 1
    raise AssertionError(f"{needle!r} not found after def {function}")


@dataclass
class Case:
    name: str  # the decorated function in error_cases.py
    needle: str  # a substring at the offending construct
    phrase: str  # part of the message: what is wrong or what to write instead
    args: tuple = (F64,)  # valid arguments for the annotated parameters
    offset: int = 0  # the construct starts this far into the needle
    where: str | None = None  # the function whose text holds the construct (default: name)

    @property
    def position(self) -> tuple[int, int]:
        return locate(self.where or self.name, self.needle, self.offset)


CASES = [
    # statements
    Case("uses_try", "try:", "test the condition with if"),
    Case("uses_with", "with _Resource", "with is not supported"),
    Case("uses_yield", "yield x", "yield is not supported"),
    Case("uses_yield_value", "yield x", "yield is not supported"),
    Case("uses_global", "global COUNTER", "pass the value as an argument"),
    Case("uses_nonlocal", "nonlocal y", "return the new value instead"),
    Case("uses_break", "break", "break inside a loop is not supported"),
    Case("uses_continue", "continue", "continue inside a loop is not supported", (F64, 4)),
    Case("uses_return_in_loop", "return acc", "return inside a loop is not supported", (F64, 4)),
    Case("uses_assert", "assert x", "annotate shapes instead"),
    Case("uses_del", "del y", "del is not supported"),
    Case("uses_raise", "raise ValueError", "cannot raise"),
    Case("uses_import", "import os", "import at module level"),
    Case("uses_import_from", "from math import pi", "import at module level"),
    Case("uses_subscript_assignment", "x[0] = 1.0", "tensors are immutable", (V3,)),
    Case("uses_expression_statement", "relay.tanh(x)", "assign its value to a variable"),
    Case("uses_loop_else", "while r < 100.0", "put that code after the loop"),
    # expressions
    Case("uses_list_comprehension", "[x * k", "use a for loop over range"),
    Case("uses_generator", "sum(x * k", "Python function sum"),
    Case("uses_list_literal", "[x, x]", "use a tuple"),
    Case("uses_dict_literal", '{"a": x}', "use a tuple"),
    Case("uses_set_literal", "{x, x}", "use a tuple"),
    Case("uses_slice", "x[1:3]", "relay.strided_slice", (V5,)),
    Case("uses_tensor_index", "x[i]", "relay.take", (V5, 2)),
    Case("uses_attribute", "x.shape", "use relay operators", (M23,)),
    Case("uses_transpose_attribute", "x.T", "relay.transpose", (M23,)),
    Case("uses_string_constant", '"weights"', "is not a number"),
    Case("uses_none", "None", "is not a number"),
    Case("uses_shift", "n << 2", "the operator << (shift left) is not supported: use +, -, *, /", (3,)),
    Case("uses_invert", "~n", "relay.logical_not", (3,)),
    Case("uses_is", "x is y", "use <, <=, >, >=, ==, !=", (F64, F64)),
    Case("uses_in", "x in (y, y)", "use <, <=, >, >=, ==, !=", (F64, F64)),
    Case("uses_walrus", "y := x", "assign in a statement"),
    Case("uses_fstring", 'f"x={x}"', "f-strings are not supported"),
    Case("uses_starred_call", "*t", "pass arguments one by one", (F64, F64)),
    Case("uses_starred_unpack", "a, *rest", "unpack every field", (F64, F64)),
    # calls
    Case("calls_print", "print(x)", "Python function print"),
    Case("calls_print_statement", "print(x)", "Python function print"),
    Case("calls_abs", "abs(x)", "Python function abs"),
    Case("calls_numpy", "np.tanh(x)", "Python function"),
    Case("calls_math", "math.exp(x)", "Python function"),
    Case("calls_undecorated_helper", "_helper(x)", "decorate it with @relay"),
    Case("calls_range_outside_for", "range(n)", "iterable of a for loop", (3,)),
    Case("calls_missing_op", "relay.nonexistent_op", "relay has no operator nonexistent_op"),
    Case("calls_misspelled_op", "relay.tahn", "relay has no operator tahn: did you mean relay.tanh?"),
    Case("names_misspelled_op", "relay.sigmiod", "relay has no operator sigmiod: did you mean relay.sigmoid?"),
    Case("calls_layer_outside_model", "relay.linear(", "@relay_model", (np.ones((2, 4), np.float32),)),
    Case("calls_conv_layer_outside_model", "relay.conv2d(", "@relay_model", (np.ones((1, 1, 8, 8), np.float32),)),
    Case("bad_attribute_value", 'relay.sum(x, axis="a")', "must be an integer", (M23,)),
    Case("bad_attribute_name", "relay.sum(x, axes=1)", "has no attribute 'axes'", (M23,)),
    Case("computed_attribute", "axis=k", "must be a Python constant", (M23, 1), offset=5),
    Case("undefined_name", "not_defined_anywhere", "is not defined"),
    Case("misspelled_name", "SCAEL", "name SCAEL is not defined: did you mean SCALE?"),
    Case("float_literal_meets_int", "2.5", "cast the tensor first", (3,)),
    # loops and control flow
    Case("for_over_tensor", "for v in x", "for loops run over range(...) only", (V3,), offset=9),
    Case("for_over_tuple", "for v in (x, y)", "for loops run over range(...) only", (F64, F64), offset=9),
    Case("range_with_computed_step", "range(0, n, s)", "nonzero int literal", (5, 1), offset=12),
    Case("falls_off_the_end", "def falls_off_the_end", "every path must return a value"),
    Case("nested_def_falls_off_the_end", "def half", "every path must return a value"),
    Case("bare_return", "return", "return needs a value"),
    Case("uses_loop_only_variable", "return last", "assign it before this line", (F64, 3), offset=7),
    Case("uses_loop_counter_after_loop", "return i", "assign it before this line", (F64, 3), offset=7),
    Case("uses_name_before_assignment", "z + x", "assign it before this line"),
    # parameters and annotations
    Case("lambda_with_default", "k=2.0", "default parameter values are not supported", offset=2),
    Case("def_with_default", "= 2.0", "default parameter values are not supported", offset=2),
    Case("star_args", "*args", "list the parameters", (F64, F64), offset=1),
    Case("star_kwargs", "**options", "list the parameters", offset=2),
    Case("keyword_only", "y: Float64)", "use plain parameters", (F64, F64)),
    Case("missing_annotation", "y) ->", "needs a type annotation", (F64, F64)),
    Case("int_annotation", "int)", "is not a relayish type", (1,)),
    Case("numpy_annotation", "np.ndarray", "is not a relayish type", (V3,)),
    Case("open_tuple_annotation", "tuple[Float64, ...]", "no fixed length", ((F64, F64),)),
    # A quoted annotation is evaluated like an unquoted one: Tensor's own complaint.
    Case("string_bad_tensor_annotation", '"Tensor[float, 3]"', "the dtype must be Float", (V3,)),
    Case("undefined_annotation", '"NoSuchType"', "NoSuchType"),
    Case("bad_local_annotation", "list = x", "is not a relayish type"),
    Case("bad_return_annotation", "dict:", "is not a relayish type"),
    # where the construct is not in the function called, or is indented
    Case("broken_callee", "with _Resource", "with is not supported"),
    Case("calls_broken_callee", "with _Resource", "with is not supported", where="broken_callee"),
    Case("indented", "try:", "test the condition with if"),
    Case("method_like", "[x]", "use a tuple"),
    Case("error_in_lambda", "v.real", "use relay operators"),
    Case("error_in_nested_def", "{v: v}", "use a tuple"),
    Case("closure_late_binding", "f(x)", "f captured k, which is reassigned at line"),
    Case("closure_late_binding_loop", "f(x)", "f captured k, which is reassigned at line", (F64, 3)),
]  # fmt: skip

IDS = [c.name for c in CASES]


def test_the_table_is_what_the_acceptance_asks_for():
    """At least 15 unsupported constructs, every decorated error function used once."""
    assert len(CASES) >= 15 and len(set(IDS)) == len(IDS)
    used = set(IDS) | {"shape_mismatch", "dtype_mismatch", "two_params", "wrong_arity_global", "wrong_arity_local",
                       "wrong_return_type", "wrong_return_dtype", "type_error_in_callee_caller", "type_error_callee",
                       "still_fine", "still_fine_loop", "takes_vector", "takes_two_of_one_length", "takes_a_pair",
                       "divides_in_its_gradient"}
    decorated = {name for name, v in vars(E).items() if isinstance(v, type(E.still_fine))}
    assert decorated == used


def check_located(err: RelayError, line: int, col: int, phrase: str) -> None:
    """The error names error_cases.py, the line and the column; its text starts with
    file:line:col, quotes the line with a caret under the column and says ``phrase``."""
    span = err.span
    assert span is not None, f"the error has no position: {err}"
    assert Path(span.file).resolve() == FILE
    assert (span.line, span.col) == (line, col), f"at {span.line}:{span.col}, expected {line}:{col}: {err}"
    text = str(err)
    assert text.startswith(f"{span.file}:{line}:{col}: "), text
    source = LINES[line - 1]
    assert f"    {source}\n" in text, f"the line is not quoted:\n{text}"
    assert f"\n    {' ' * (col - 1)}^" in text, f"no caret under column {col}:\n{text}"
    assert phrase in err.message, f"{phrase!r} not in the message: {err.message}"


@pytest.mark.parametrize("c", CASES, ids=IDS)
def test_unsupported_construct_on_call(c: Case):
    fn = getattr(E, c.name)
    with pytest.raises(FrontendError) as info:
        fn(*c.args)
    check_located(info.value, *c.position, c.phrase)


@pytest.mark.parametrize("c", CASES, ids=IDS)
def test_unsupported_construct_on_ir(c: Case):
    fn = getattr(E, c.name)
    with pytest.raises(FrontendError) as info:
        fn.ir
    check_located(info.value, *c.position, c.phrase)


def test_decoration_is_lazy():
    """Decorating raises nothing: the errors above come at the first use."""
    assert isinstance(relay(E.uses_try.python_function), type(E.still_fine))


def test_relay_grad_of_a_function_with_an_unsupported_construct():
    with pytest.raises(FrontendError) as info:
        relay.grad(E.uses_try)(F64)
    check_located(info.value, *locate("uses_try", "try:"), "test the condition with if")


# ---------------------------------------------------------------------------------------
# Type errors name the Python line


@dataclass
class TypeCase:
    name: str
    needle: str  # on the line the error must name
    args: tuple
    where: str | None = None
    column: bool = True  # also check the column (of the needle)


TYPE_CASES = [
    TypeCase("shape_mismatch", "x + y", (np.ones(3, np.float32), np.ones(4, np.float32))),
    TypeCase("dtype_mismatch", "x * y", (np.float32(1.0), F64)),
    TypeCase("wrong_arity_local", "twice(x)", (F64,)),
    # The result has the wrong type: the error names the return statement's line.
    TypeCase("wrong_return_type", "return y", (V3,), column=False),
    TypeCase("wrong_return_dtype", "return y", (F64,), column=False),
    TypeCase("type_error_callee", "relay.dense(x, x)", (V3,)),
    TypeCase("type_error_in_callee_caller", "relay.dense(x, x)", (V3,), where="type_error_callee"),
]


def check_type_error(err: RelayTypeError, tc: TypeCase) -> None:
    line, col = locate(tc.where or tc.name, tc.needle)
    spans = [(Path(e.span.file).resolve(), e.span.line, e.span.col) for e in err.errors if e.span is not None]
    if tc.column:
        assert (FILE, line, col) in spans, f"expected {line}:{col} among {spans}: {err}"
    else:
        assert (FILE, line) in [s[:2] for s in spans], f"expected line {line} among {spans}: {err}"
    assert LINES[line - 1].strip() in str(err), f"the Python line is not quoted:\n{err}"


@pytest.mark.parametrize("tc", TYPE_CASES, ids=[t.name for t in TYPE_CASES])
def test_type_error_names_the_python_line(tc: TypeCase):
    fn = getattr(E, tc.name)
    with pytest.raises(RelayTypeError) as info:
        fn(*tc.args)
    check_type_error(info.value, tc)
    with pytest.raises(RelayTypeError) as info:
        fn.ir
    check_type_error(info.value, tc)


def test_wrong_number_of_arguments_to_another_relay_function():
    """Caught before type checking (the frontend knows the callee's parameters), at the call."""
    with pytest.raises(RelayError) as info:
        E.wrong_arity_global(F64)
    err = info.value
    assert isinstance(err, (FrontendError, RelayTypeError))
    line, col = locate("wrong_arity_global", "two_params(x)")
    spans = [(Path(e.span.file).resolve(), e.span.line, e.span.col) for e in getattr(err, "errors", [err])]
    assert (FILE, line, col) in spans, str(err)
    assert LINES[line - 1].strip() in str(err)
    assert "two_params takes 2 arguments" in str(err)


# ---------------------------------------------------------------------------------------
# Nothing half-done


def trigger(fn: Any, args: tuple) -> RelayError:
    with pytest.raises(RelayError) as info:
        fn(*args)
    return info.value


def test_errors_leave_nothing_half_done():
    """After every error above, correct functions still translate and run, and each broken
    function fails again the same way (no half-translated module was kept)."""
    first = {c.name: trigger(getattr(E, c.name), c.args) for c in CASES}
    first.update({t.name: trigger(getattr(E, t.name), t.args) for t in TYPE_CASES})
    assert float(E.still_fine(2.0, 3.0)) == 7.0
    assert float(E.still_fine_loop(2.0, 4)) == 8.0
    value, (dx, dy) = relay.grad(E.still_fine)(2.0, 3.0)
    assert (float(value), float(dx), float(dy)) == (7.0, 3.0, 2.0)
    assert "def @still_fine" in E.still_fine.astext()
    for c in CASES:
        again = trigger(getattr(E, c.name), c.args)
        assert type(again) is type(first[c.name]) and str(again) == str(first[c.name])
    for t in TYPE_CASES:
        again = trigger(getattr(E, t.name), t.args)
        assert type(again) is type(first[t.name]) and str(again) == str(first[t.name])


def test_a_broken_callee_does_not_break_its_own_callers_twice():
    """The callee's error is reported for the caller; fixing nothing, a correct function
    called by the same caller's neighbours still works."""
    with pytest.raises(FrontendError):
        E.calls_broken_callee(F64)
    with pytest.raises(FrontendError):
        E.broken_callee(F64)
    assert float(E.two_params(2.0, 5.0)) == 10.0


def test_no_operator_message_without_a_close_name_suggests_nothing():
    with pytest.raises(FrontendError) as info:
        E.calls_missing_op(F64)
    assert "did you mean" not in info.value.message


def test_relay_outside_a_decorated_function_suggests_the_operator_too():
    with pytest.raises(AttributeError, match=r"relay has no operator tahn: did you mean relay\.tanh\?"):
        relay.tahn  # noqa: B018
    with pytest.raises(AttributeError, match=r"did you mean relay\.create_model"):
        relay.creat_model  # noqa: B018


# ---------------------------------------------------------------------------------------
# Arguments that do not fit their parameters: the error names the parameter where the def
# declares it, says what it expected and how to fix the value; the traceback is the user's


def user_frames_only(err: BaseException) -> list[str]:
    """The files of the frames in ``err``'s traceback, asserting none is relayish's own."""
    files = [frame.filename for frame in traceback.extract_tb(err.__traceback__)]
    assert files and all(Path(f).resolve() == Path(__file__).resolve() for f in files), files
    assert err.__cause__ is None and err.__suppress_context__, "a chained internal exception would be printed"
    return files


@pytest.mark.parametrize("backend", ["interp", "jit"])
def test_a_float64_array_for_a_float_parameter_says_how_to_fix_it(backend):
    fn = relay(backend=backend)(E.takes_vector.python_function)
    with pytest.raises(RelayRuntimeError) as info:
        fn(np.ones(3))
    err = info.value
    line, col = locate("takes_vector", "x: Tensor")
    assert (Path(err.span.file).resolve(), err.span.line, err.span.col) == (FILE, line, col)
    assert err.message == ("argument x of takes_vector: expected Tensor[Float, 3] (a float32 tensor of shape (3,)), "
                           "got a float64 array of shape (3,): pass np.float32 values: x.astype(np.float32)")
    assert f"    {LINES[line - 1]}\n" in str(err)
    user_frames_only(err)
    assert float(fn(np.ones(3).astype(np.float32))) == 3.0  # the fix works


@pytest.mark.parametrize("args, phrase", [
    ((np.float32(1.0),), "got a float32 scalar, of rank 0 instead of 1"),
    ((np.ones(4, np.float32),), "got a float32 array of shape (4,): dimension 0 must be 3"),
    ((np.ones(3, np.int32),), "got an int32 array of shape (3,): pass np.float32 values: x.astype(np.float32)"),
    (("abc",), "got the str 'abc', which is not a number"),
    (([1.0, 2.0, 3.0, 4.0],), "got a float32 array of shape (4,): dimension 0 must be 3"),
])  # fmt: skip
def test_each_kind_of_misfit_is_named(args, phrase):
    with pytest.raises(RelayRuntimeError) as info:
        E.takes_vector(*args)
    assert info.value.message.startswith("argument x of takes_vector: expected Tensor[Float, 3] "), info.value.message
    assert info.value.message.endswith(phrase), info.value.message


def test_a_dimension_variable_bound_by_an_earlier_argument():
    with pytest.raises(RelayRuntimeError) as info:
        E.takes_two_of_one_length(np.ones(3, np.float32), np.ones(4, np.float32))
    assert info.value.message == ("argument y of takes_two_of_one_length: expected Tensor[Float, (N,)] (a float32 "
                                  "tensor of shape (N,)), got a float32 array of shape (4,): dimension 0 is 4, but N "
                                  "is 3 in argument x")
    assert info.value.span.line == locate("takes_two_of_one_length", "y: Tensor")[0]


def test_a_tuple_field_that_does_not_fit_is_named():
    assert float(E.takes_a_pair((1.5, 2))) == 1.5  # Python numbers in a tuple convert field by field
    with pytest.raises(RelayRuntimeError) as info:
        E.takes_a_pair((1.5, 2.5))
    assert info.value.message.endswith("(a tuple of 2 values), field 1: got the float 2.5: int32 parameters take "
                                       "ints, and relayish turns no float into an int: round it first, e.g. round(x)")
    with pytest.raises(RelayRuntimeError, match=r"field 0: got a float64 scalar: pass np.float32 values: "
                                                r"t\[0\].astype\(np.float32\)"):
        E.takes_a_pair((np.float64(1.5), np.int32(2)))


def test_errors_raised_inside_translation_show_the_users_frames_only():
    with pytest.raises(FrontendError) as info:
        E.uses_try(F64)
    user_frames_only(info.value)
    with pytest.raises(FrontendError) as info:
        E.uses_try.ir  # noqa: B018
    user_frames_only(info.value)


def test_traceback_filtering_can_be_turned_off(monkeypatch):
    monkeypatch.setenv("RELAYISH_TRACEBACK_FILTERING", "off")
    with pytest.raises(RelayRuntimeError) as info:
        E.takes_vector(np.ones(3))
    files = [frame.filename for frame in traceback.extract_tb(info.value.__traceback__)]
    assert any(Path(f).parts[-2:] == ("frontend", "function.py") for f in files), files


# ---------------------------------------------------------------------------------------
# Gradients: errors name the user's function, not the globals AD generates


def test_a_gradients_argument_error_names_the_gradient_of_the_users_function():
    with pytest.raises(RelayRuntimeError) as info:
        relay.grad(E.divides_in_its_gradient)(np.float64(1.0), 3)
    assert info.value.message.startswith("argument x of the gradient of `divides_in_its_gradient`: expected Float "
                                         "(a float32 scalar), got a float64 scalar: pass np.float32 values")
    user_frames_only(info.value)


def test_a_runtime_error_in_a_gradient_names_the_users_function():
    with pytest.raises(RelayRuntimeError) as info:
        relay.grad(E.divides_in_its_gradient)(np.float32(1.0), 3)
    err = info.value
    assert "the gradient of `divides_in_its_gradient`" in err.message, err.message
    assert "@divides_in_its_gradient_" not in str(err), str(err)  # neither @..._grad nor @...__ad
    assert err.span.line == locate("divides_in_its_gradient", "n // (n - n)")[0]
    user_frames_only(err)


# ---------------------------------------------------------------------------------------
# `%` is Python's floor modulo on integer tensors (floor_mod; floats: tests/frontend/test_floor_division.py)


@relay
def modulo(a: Int, b: Int) -> Int:
    return a % b


@relay
def modulo_vectors(a: Tensor[Int64, 6], b: Tensor[Int64, 6]) -> Tensor[Int64, 6]:
    return (a + 1) % b + 7 % -3  # an expression operand, and a constant one Python folds


INT32 = st.integers(-(2**31), 2**31 - 1)


@settings(max_examples=200)
@given(INT32, INT32.filter(bool))
def test_modulo_is_numpys_on_int32_scalars(a, b):
    assert modulo(a, b) == np.remainder(np.int32(a), np.int32(b))
    assert modulo(a, b).dtype == np.int32


@pytest.mark.parametrize("backend", ["interp", "jit"])
def test_modulo_is_numpys_on_int64_tensors(backend):
    fn = relay(backend=backend)(modulo_vectors.python_function)
    a = np.array([-7, -1, 0, 5, 9, 2**40], np.int64)
    b = np.array([3, -3, 2, -2, 4, -7], np.int64)
    expected = np.remainder(a + 1, b) + np.int64(7 % -3)
    np.testing.assert_array_equal(fn(a, b), expected)
    np.testing.assert_array_equal(modulo_vectors.python(a, b), expected)  # the undecorated function agrees
    assert "@floor_mod(%a, %b)" in modulo.astext()


def test_modulo_by_zero_is_a_runtime_error_at_the_percent_sign():
    with pytest.raises(RelayRuntimeError, match="division by zero") as info:
        modulo(7, 0)
    assert "return a % b" in str(info.value)
