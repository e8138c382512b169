"""Malformed programs: each gives a ParseError at the right place, saying what was expected."""

import pytest

import relayish
from relayish.dims import MAX_SIZE

HUGE = "9" * 5_000
BIG = "9" * 4_000  # a product of two is past the 4,300 digits Python prints: fmt crashed on it

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
    ("def @f(%x) {\n  3000000000\n}\n", 2, 3, "(an integer without a suffix is IntType(32); write 3000000000i64 for a 64-bit one)"),
    # Relay's rule: a float literal past its type's largest finite value is an error, not inf
    ("def @f(%x) {\n  65505f16\n}\n", 2, 3, "65505 overflows FloatType(16): its largest finite value is 65504.0"),
    ("def @f(%x) {\n  3.40283e+38f32\n}\n", 2, 3, "3.40283e+38 overflows FloatType(32)"),
    ("def @f(%x) {\n  -1e999f64\n}\n", 2, 4, "-1e999 overflows FloatType(64)"),
    ("def @f(%x) {\n  tensor(FloatType(16), Shape(1), [70000.0])\n}\n", 2, 36, "element 70000.0 overflows FloatType(16)"),
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
    # Limits (docs/text-format.md): numbers past Python's 4,300-digit conversion limit and
    # attribute tuples 100,000 deep once raised ValueError and RecursionError.
    (f"def @f(%x) {{\n  {HUGE}\n}}\n", 2, 3, "99999999999999999999... (5,000 characters) does not fit IntType(32): its range is"),
    (f"def @f(%x) {{\n  -{HUGE}i64\n}}\n", 2, 4, "-9999999999999999999... (5,001 characters) does not fit IntType(64)"),
    ("def @f(%x) {\n  tensor(IntType(8), Shape(" + "9" * 100 + ", 0), [])\n}\n", 2, 27,
     "a tensor literal of shape (9999999999999999999... (105 characters) is too large for an array"),
    (f"def @f(%x) {{\n  tensor(IntType(8), Shape(1), [{HUGE}])\n}}\n", 2, 33, "element 99999999999999999999... (5,000 characters) does not fit IntType(8)"),
    (f"def @f(%x: Tensor(FloatType(32), Shape({HUGE}))) {{\n  %x\n}}\n", 1, 40, "a dimension may have at most 100 digits"),
    (f"def @f(%x: Tensor(IntType({HUGE}), Shape())) {{\n  %x\n}}\n", 1, 27, "a bit width may have at most 100 digits"),
    (f"def @f(%x) {{\n  %x[{HUGE}]\n}}\n", 2, 6, "a tuple index may have at most 100 digits"),
    (f"def @f(%x) {{\n  @sum(%x, axis={HUGE})\n}}\n", 2, 17, "an attribute integer may have at most 100 digits"),
    (f"def @f(%x: Tensor(FloatType(32), Shape({BIG} * {BIG}))) {{\n  %x\n}}\n", 1, 40, "a dimension may have at most 100 digits"),
    (f"def @f(%x: Tensor(FloatType(32), Shape({'9' * 60} * {'9' * 60}))) {{\n  %x\n}}\n", 1, 101,
     "a dimension's constants and coefficients may have at most 100 digits"),
    ("def @f(%x) {\n  @sum(%x, axis=" + "(" * 100_000 + "1" + ")" * 100_000 + ")\n}\n", 2, 49, "attribute tuples may nest at most 32 deep"),
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


def test_leading_zeros_do_not_count_as_digits():
    zeros = "0" * 5_000
    module = relayish.parse(f"def @f(%x) {{ {zeros}7 + @sum(%x, axis=-{zeros}1) }}")
    assert relayish.astext(module) == "def @f(%x) {\n  7 + @sum(%x, axis=-1)\n}\n"


def _at(text: str, err: relayish.ParseError) -> str:
    """The text at an error's position."""
    line = text.split("\n")[err.span.line - 1]
    return line[err.span.col - 1 :]


def test_a_dimension_past_the_size_limit_is_refused_at_its_operator():
    """Floor divisions add up: 250 of them are past MAX_SIZE terms and atoms."""
    dims = " + ".join(f"n // {k}" for k in range(2, 252))
    text = f"def @f[n: Dim](%x: Tensor(FloatType(32), Shape({dims}))) {{\n  %x\n}}\n"
    with pytest.raises(relayish.ParseError, match=f"a dimension may have at most {MAX_SIZE:,} terms and atoms") as info:
        relayish.parse(text)
    assert _at(text, info.value).startswith("+ n // ")


def test_a_product_too_big_to_multiply_out_is_refused_before_it_is():
    powers = " + ".join("*".join(["n"] * k) or "1" for k in range(40))
    text = f"def @f[n: Dim](%x: Tensor(FloatType(32), Shape(({powers}) * ({powers})))) {{\n  %x\n}}\n"
    with pytest.raises(relayish.ParseError, match=f"at most {MAX_SIZE:,} terms") as info:
        relayish.parse(text)
    assert _at(text, info.value).startswith("* (")
