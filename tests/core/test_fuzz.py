"""The parser on hostile text: it returns a Module or raises ParseError, nothing else.

2,000 inputs in all, each under 2 KB: token soup from the format's own vocabulary, raw
character soup, printed programs with random mutations, and deep nestings of every
bracketing construct (a recursive parser would hit RecursionError there). No input may
hang (``time_limit``), and whatever parses must print and parse back alpha-equivalently.
"""

from __future__ import annotations

import re

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from relayish.dims import MAX_FLOORDIV_NESTING
from relayish import ParseError, alpha_equal, astext, parse
from relayish.module import Module
from relayish.testing.ir_strategies import modules, time_limit

MAX_BYTES = 2000

# The format's vocabulary, some near misses and some characters it has no use for.
TOKENS = (
    "let", "in", "if", "then", "else", "fn", "def", "operator", "forall",
    "@", "%", "%x", "%0", "%x_1", "@f", "@main", "@add", "@sum", "@full", "@tanh", "@let",
    "(", ")", "{", "}", "[", "]", ",", ":", "=", ":=", "->", "+", "-", "*", "/", "//",
    "==", "!=", "<", "<=", ">", ">=", "!", "--", "- ",
    "Tensor", "Shape", "FloatType(32)", "IntType(8)", "UIntType(64)", "FloatType(7)", "BoolType",
    "RefType", "Zero", "Grad", "Ref", "tensor", "true", "false", "none", "sq", "nan", "inf",
    "1.0", "-1.0", "0", "1", "2", "-3", "1i8", "300i8", "2u64", "-1u8", "1e+300", "1e999", "0.5f16",
    "nanf64", "-inff16", "1.5i32", "7x9", "1.", "00", "x", "n", "m", "a", "Type", "Dim", "BaseType",
    "Kind", "axis", "axis=1", "keepdims=true", "dtype=FloatType(16)", "shape=(2, 3)", '"s"', '"',
    "'", "#", "# comment\n", "\\", "$", "?", ".", ";", "é", "٣", "\x00", "\r", "\t", "\n", " ",
    "Shape(n, 784)", "Tensor(FloatType(32), Shape())", "fn (%x) { %x }", "let %y = %x in",
)  # fmt: skip
SEPARATORS = (" ", " ", "", "\n")
LEXEME = re.compile(r"\s+|%\w+|@\w+|\d[\w.]*(?:[eE][+-]?\d+)?|\w+|:=|->|==|!=|<=|>=|//|\S")


def check_parse(text: str) -> Module | None:
    """Parse ``text``: a Module (which must round-trip) or a located ParseError."""
    assert len(text) <= MAX_BYTES
    with time_limit(10, "parsing a 2 KB input"):
        try:
            module = parse(text)
        except ParseError as err:
            assert err.span is not None and err.span.file == "<string>", err
            assert 1 <= err.span.line <= text.count("\n") + 1 and err.span.col >= 1, err
            return None
    assert isinstance(module, Module)
    printed = astext(module)
    assert alpha_equal(parse(printed), module), f"{text!r} parsed, but its printed form reads back differently"
    return module


@st.composite
def token_soup(draw) -> str:
    pieces = draw(st.lists(st.tuples(st.sampled_from(TOKENS), st.sampled_from(SEPARATORS)), max_size=150))
    return "".join(token + sep for token, sep in pieces)[:MAX_BYTES]


@settings(max_examples=600)
@given(token_soup())
def test_token_soup(text):
    check_parse(text)


@settings(max_examples=200)
@given(st.text(st.characters(codec="utf-8"), max_size=300) | st.text("%@(){}[],:=-<>!+*/ 019.xni#\"\n", max_size=300))
def test_character_soup(text):
    check_parse(text)


def mutate(draw, text: str) -> str:
    """One random edit of ``text``: on lexemes or on characters, or a truncation."""
    lexemes = LEXEME.findall(text)
    if not lexemes:
        return draw(st.sampled_from(TOKENS))
    i = draw(st.integers(0, len(lexemes) - 1))
    j = draw(st.integers(0, len(lexemes) - 1))
    c = draw(st.integers(0, len(text)))
    edits = ("delete", "insert", "replace", "duplicate", "swap", "truncate", "char-delete", "char-insert")
    edit = draw(st.sampled_from(edits))
    if edit == "delete":
        del lexemes[i]
    elif edit == "insert":
        lexemes.insert(i, draw(st.sampled_from(TOKENS)))
    elif edit == "replace":
        lexemes[i] = draw(st.sampled_from(TOKENS))
    elif edit == "duplicate":
        lexemes[i:i] = lexemes[min(i, j) : max(i, j) + 1]
    elif edit == "swap":
        lexemes[i], lexemes[j] = lexemes[j], lexemes[i]
    elif edit == "truncate":
        return text[:c]
    elif edit == "char-delete":
        return text[:c] + text[c + 1 :]
    else:
        return text[:c] + draw(st.characters(codec="utf-8")) + text[c:]
    return "".join(lexemes)


@st.composite
def mutated_programs(draw) -> str:
    text = astext(draw(modules(max_globals=2, max_depth=4, max_nodes=25)))[:MAX_BYTES]
    for _ in range(draw(st.integers(1, 4))):
        text = mutate(draw, text)
    return text[:MAX_BYTES]


@settings(max_examples=1000)
@given(mutated_programs())
def test_mutated_programs(text):
    check_parse(text)


# (prefix, opener, innermost, closer, suffix, valid): prefix + opener*k + innermost +
# closer*k + suffix, a program when ``valid``.
EXPR = ("def @f(%x) {\n  ", "\n}\n")
TYPE = ("def @f(%x: ", ") {\n  %x\n}\n")
DIM = ("def @f[n: Dim](%x: Tensor(FloatType(32), Shape(", "))) {\n  %x\n}\n")
NESTINGS = [
    (*EXPR[:1], "(", "%x", ")", EXPR[1], True),
    (*EXPR[:1], "-", "%x", "", EXPR[1], True),
    (*EXPR[:1], "- ", "1.0", "", EXPR[1], True),
    (*EXPR[:1], "!", "%x", "", EXPR[1], True),
    (*EXPR[:1], "sq ", "%x", "", EXPR[1], True),
    (*EXPR[:1], "Ref(", "%x", ")", EXPR[1], True),
    (*EXPR[:1], "Grad(", "%x", ")", EXPR[1], True),
    (*EXPR[:1], "(%x, ", "%x", ")", EXPR[1], True),
    (*EXPR[:1], "(", "%x", ",)", EXPR[1], True),
    (*EXPR[:1], "fn (%y) { ", "%x", " }", EXPR[1], True),
    (*EXPR[:1], "let %y = %x in ", "%y", "", EXPR[1], True),
    (*EXPR[:1], "let %y = (", "%x", ") in %y", EXPR[1], True),
    (*EXPR[:1], "if %x then %x else ", "%x", "", EXPR[1], True),
    (*EXPR[:1], "(if %x then ", "%x", " else %x)", EXPR[1], True),
    (*EXPR[:1], "(Tensor(FloatType(32), Shape())) ", "%x", "", EXPR[1], True),
    (*EXPR[:1], "%x + (", "%x", ")", EXPR[1], True),
    (*EXPR[:1], "", "%x", " + %x", EXPR[1], True),
    (*EXPR[:1], "%x(", "%x", ")", EXPR[1], True),
    (*EXPR[:1], "", "%x", "[0]", EXPR[1], True),
    (*EXPR[:1], "", "%x", "()", EXPR[1], True),
    (*EXPR[:1], "@sum(", "%x", ")", EXPR[1], True),
    (*EXPR[:1], "%x := (", "%x", ")", EXPR[1], True),
    (*EXPR[:1], "Zero(", "()", ")", EXPR[1], False),
    (*EXPR[:1], "[", "%x", "]", EXPR[1], False),
    (*EXPR[:1], "{", "%x", "}", EXPR[1], False),
    (*EXPR[:1], "(", "%x", "", EXPR[1], False),
    (*EXPR[:1], "@sum(%x, axis=(", "1", ",)", ")" + EXPR[1], False),
    (*TYPE[:1], "(", "Tensor(FloatType(32), Shape())", ",)", TYPE[1], True),
    (*TYPE[:1], "RefType(", "()", ")", TYPE[1], True),
    (*TYPE[:1], "(", "()", ") -> ()", TYPE[1], True),
    (*TYPE[:1], "() -> ", "()", "", TYPE[1], True),
    (*TYPE[:1], "forall (a: Type), ", "a", "", TYPE[1], True),
    (*TYPE[:1], "Tensor(", "FloatType(32)", ", Shape())", TYPE[1], False),
    (*TYPE[:1], "(", "()", ")", TYPE[1], False),
    (*DIM[:1], "(", "n", ")", DIM[1], True),
    (*DIM[:1], "-", "n", "", DIM[1], True),
    (*DIM[:1], "n + ", "1", "", DIM[1], True),
    (*DIM[:1], "2*(", "n", ")", DIM[1], True),
    (*DIM[:1], "(", "n", " // 2)", DIM[1], True),
    (*DIM[:1], "(", "n", " + 1) // 2", DIM[1], MAX_FLOORDIV_NESTING),
    (*DIM[:1], "(", "n", " + 1) // n", DIM[1], MAX_FLOORDIV_NESTING),
    (*DIM[:1], "2*(", "n", " // 3)", DIM[1], MAX_FLOORDIV_NESTING),
]  # fmt: skip


def expected_valid(case: tuple, depth: int | None) -> bool:
    """A case's last field: True, False, or the deepest nesting that is valid (floor
    divisions that do not flatten nest at most MAX_FLOORDIV_NESTING deep)."""
    valid = case[-1]
    if isinstance(valid, bool):
        return valid
    return nesting_depth(case, depth) <= valid


def nesting_depth(case: tuple, depth: int | None) -> int:
    prefix, opener, innermost, closer, suffix, _ = case
    room = (MAX_BYTES - len(prefix) - len(innermost) - len(suffix)) // max(1, len(opener) + len(closer))
    return room if depth is None else min(depth, room)


def nesting(case: tuple, depth: int | None = None) -> str:
    """The case nested ``depth`` deep, or as deep as fits in 2 KB."""
    prefix, opener, innermost, closer, suffix, _ = case
    depth = nesting_depth(case, depth)
    return prefix + opener * depth + innermost + closer * depth + suffix


@settings(max_examples=200)
@given(st.sampled_from(NESTINGS), st.integers(1, MAX_BYTES))
def test_deep_nesting(case, depth):
    module = check_parse(nesting(case, depth))
    valid = expected_valid(case, depth)
    assert module is not None or not valid, f"a valid program did not parse: {nesting(case, depth)[:200]!r}"


@pytest.mark.parametrize("case", NESTINGS, ids=[f"{i}:{c[1]}...{c[3]}" for i, c in enumerate(NESTINGS)])
def test_deepest_nesting_that_fits_in_2kb(case):
    module = check_parse(nesting(case))
    assert module is not None or not expected_valid(case, None)
