"""Malformed programs: each gives a ParseError at the right place, saying what was expected."""

import pytest

import relayish

# (text, line, column, words the message must contain)
CASES = [
    ("def @f(%x) {\n  %x +\n}\n", 3, 1, "expected an expression, found '}'"),
    ("def @f(%x) {\n  %y\n}\n", 2, 3, "unbound variable %y"),
    ("def @f(%x) {\n  @nope(%x)\n}\n", 2, 3, "unknown global or operator @nope"),
    ("def @f(%x) {\n  let %y = %x\n  %y\n}\n", 3, 3, "expected 'in', found '%y'"),
    ("def @f(%x) {\n  if %x then %x\n}\n", 3, 1, "expected 'else', found '}'"),
    ("def @f(%x, %x) {\n  %x\n}\n", 1, 12, "parameter %x appears twice"),
    ("def @f(%x: Tensor(FloatType(33), Shape())) {\n  %x\n}\n", 1, 19, "FloatType width must be one of (16, 32, 64), not 33"),
    ("def @f(%x: Tensor(FloatType(32), Shape(n))) {\n  %x\n}\n", 1, 40, "unknown dimension variable n"),
    ("def @f[n: Dim](%x: Tensor(FloatType(32), Shape(n // 0))) {\n  %x\n}\n", 1, 50, "dimension divided by zero"),
    ("def @f[t: Type](%x: Tensor(FloatType(32), Shape(t))) {\n  %x\n}\n", 1, 49, "t is of kind Type, not a dimension variable"),
    ("def @f[n: Kind](%x) {\n  %x\n}\n", 1, 11, "expected a kind (Type, Shape, BaseType or Dim), found 'Kind'"),
    ("def @f(%x) {\n  @sum(%x, axs=1)\n}\n", 2, 7, "operator sum has no attribute 'axs'"),
    ("def @f(%x) {\n  @sum(%x, keepdims=3)\n}\n", 2, 7, "attribute 'keepdims' of operator sum must be true or false, not 3"),
    ("def @f(%x) {\n  @sum(axis=1, %x)\n}\n", 2, 16, "positional arguments come first"),
    ("def @f(%x) {\n  %x(%x, axis=1)\n}\n", 2, 10, "attributes are only allowed on operator calls"),
    ("def @f(%x) {\n  %x < %x < %x\n}\n", 2, 11, "comparisons do not chain: add parentheses"),
    ("def @f(%x) {\n  300i8\n}\n", 2, 3, "300 does not fit IntType(8)"),
    ("def @f(%x) {\n  1.5i32\n}\n", 2, 3, "is not an integer, so it cannot have type i32"),
    ("def @f(%x) {\n  2x7\n}\n", 2, 3, "unknown literal suffix 'x7'"),
    ("def @f(%x) {\n  tensor(FloatType(32), Shape(2, 2), [1.0, 2.0, 3.0])\n}\n", 2, 3, "needs 4 elements, not 3"),
    ("def @f(%x) {\n  %x[-1]\n}\n", 2, 5, "a tuple index cannot be negative"),
    ("def @f(%x) {\n  %x $ %x\n}\n", 2, 6, "unexpected character '$'"),
    ("def @f(%x) {\n  %x\n}\ndef @f(%y) {\n  %y\n}\n", 4, 5, "global @f is defined twice"),
    ("def @tanh(%x) {\n  %x\n}\n", 1, 5, "@tanh is a standard operator"),
    ("def @f(%x) {\n  Zero(%x)\n}\n", 2, 8, "expected a type, found '%x'"),
    ("fn (%x) { %x }\n", 1, 1, "expected 'def' or 'operator', found 'fn'"),
    ('def @f(%x) {\n  "unterminated\n}\n', 2, 3, "unexpected character '\"'"),
    ("def @f(%x) {\n  (Tensor(FloatType(32), Shape()) %x\n}\n", 2, 35, "expected ')', found '%x'"),
    ("def @f(%x) -> {\n  %x\n}\n", 1, 15, "expected a type, found '{'"),
    ("def @f(%x) {\n  @sum(%x, axis=1, axis=2)\n}\n", 2, 20, "attribute axis is given twice"),
    ("operator @g : (a) -> a\n", 1, 16, "unknown type variable a"),
    ("def @f(%x) {\n  %x\n", 2, 5, "expected '}', found end of input"),
]


@pytest.mark.parametrize("text, line, col, words", CASES, ids=[f"case{i}" for i in range(len(CASES))])
def test_parse_error_location_and_message(text, line, col, words):
    with pytest.raises(relayish.ParseError) as info:
        relayish.parse(text, filename="bad.rly")
    err = info.value
    assert (err.span.file, err.span.line, err.span.col) == ("bad.rly", line, col)
    assert words in err.message
    rendered = str(err).splitlines()
    assert rendered[0].startswith(f"bad.rly:{line}:{col}: ")
    source_line = text.split("\n")[line - 1]
    assert rendered[1] == "    " + source_line
    assert rendered[2] == "    " + " " * (col - 1) + "^"


def test_parse_error_is_a_relay_error():
    assert issubclass(relayish.ParseError, relayish.RelayError)


def test_parse_rejects_non_text():
    with pytest.raises(TypeError):
        relayish.parse(b"def @f() { 1 }")
