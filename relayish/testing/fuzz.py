"""Fuzzing the error contract of the parser and the type checker (issue 20).

``parse`` returns a module or raises ``ParseError``; ``infer`` (``relayish check``) returns a
typed module or raises ``RelayTypeError`` (``KindError`` included), never an "internal
error"; whatever parses or checks also prints (``relayish fmt``). Inputs start from real
programs (``corpus()``: tests/interp/programs, examples/ and the code blocks of docs/ and
README.md) and from generated ones, and are decoded from byte strings like
``ir_strategies`` (see ``choices``), so the same generators serve hypothesis
(``parser_inputs``, ``mutants``, ``typecheck_inputs``, ``type_mutants``) and the command
line, which prints the figures the issue asks for::

    python3 -m relayish.testing.fuzz --parser 5000 --typecheck 10000
"""

from __future__ import annotations

import argparse
import collections
import functools
import math
import random
import re
import sys
import time
from pathlib import Path
from typing import Callable, Sequence

import attrs
from hypothesis import strategies as st

from ..dims import MAX_DIGITS, MAX_FLOORDIV_NESTING
from ..errors import ParseError, RelayTypeError
from ..lexer import Token, tokenize
from ..module import Module
from ..parser import MAX_ATTRIBUTE_NESTING, parse
from ..printer import astext
from .choices import Chooser, Stream, decoded
from .ir_strategies import TimeLimitExceeded, _Builder, time_limit

PARSER_INPUTS = 5_000  # the figures, run by the command line and RELAYISH_HYPOTHESIS=heavy
TYPECHECK_MUTANTS = 10_000
DEEPEST = 100_000
HANG_SECONDS = 5.0  # an input that takes longer (of CPU time: a shared machine stretches wall time) is a hang
ABORT_SECONDS = 60.0  # and one that takes this long (of wall time) is stopped
_STREAM_BYTES = 2048  # generated programs read under 1,300 bytes (strategies.STREAM_BYTES), mutations a few dozen

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

# (prefix, opener, innermost, closer, suffix, valid): prefix + opener*k + innermost +
# closer*k + suffix is a program when ``valid`` (an int: when k is at most that), and may
# be one otherwise.
_POWERS_OF_TWO = int(MAX_DIGITS * math.log2(10))  # 2**k has at most MAX_DIGITS digits
_EXPR = ("def @f(%x) {\n  ", "\n}\n")
_TYPE = ("def @f(%x: ", ") {\n  %x\n}\n")
_DIM = ("def @f[n: Dim](%x: Tensor(FloatType(32), Shape(", "))) {\n  %x\n}\n")
NESTINGS = [
    (*_EXPR[:1], "(", "%x", ")", _EXPR[1], True),
    (*_EXPR[:1], "-", "%x", "", _EXPR[1], True),
    (*_EXPR[:1], "- ", "1.0", "", _EXPR[1], True),
    (*_EXPR[:1], "!", "%x", "", _EXPR[1], True),
    (*_EXPR[:1], "sq ", "%x", "", _EXPR[1], True),
    (*_EXPR[:1], "Ref(", "%x", ")", _EXPR[1], True),
    (*_EXPR[:1], "Grad(", "%x", ")", _EXPR[1], True),
    (*_EXPR[:1], "(%x, ", "%x", ")", _EXPR[1], True),
    (*_EXPR[:1], "(", "%x", ",)", _EXPR[1], True),
    (*_EXPR[:1], "fn (%y) { ", "%x", " }", _EXPR[1], True),
    (*_EXPR[:1], "let %y = %x in ", "%y", "", _EXPR[1], True),
    (*_EXPR[:1], "let %y = (", "%x", ") in %y", _EXPR[1], True),
    (*_EXPR[:1], "if %x then %x else ", "%x", "", _EXPR[1], True),
    (*_EXPR[:1], "(if %x then ", "%x", " else %x)", _EXPR[1], True),
    (*_EXPR[:1], "(Tensor(FloatType(32), Shape())) ", "%x", "", _EXPR[1], True),
    (*_EXPR[:1], "%x + (", "%x", ")", _EXPR[1], True),
    (*_EXPR[:1], "", "%x", " + %x", _EXPR[1], True),
    (*_EXPR[:1], "%x(", "%x", ")", _EXPR[1], True),
    (*_EXPR[:1], "", "%x", "[0]", _EXPR[1], True),
    (*_EXPR[:1], "", "%x", "()", _EXPR[1], True),
    (*_EXPR[:1], "@sum(", "%x", ")", _EXPR[1], True),
    (*_EXPR[:1], "%x := (", "%x", ")", _EXPR[1], True),
    (*_EXPR[:1], "Zero(", "()", ")", _EXPR[1], False),
    (*_EXPR[:1], "[", "%x", "]", _EXPR[1], False),
    (*_EXPR[:1], "{", "%x", "}", _EXPR[1], False),
    (*_EXPR[:1], "(", "%x", "", _EXPR[1], False),
    (_EXPR[0] + "@sum(%x, axis=", "(", "1", ",)", ")" + _EXPR[1], 1),
    ("operator @my_op : (Tensor(FloatType(32), Shape())) -> ()\n" + _EXPR[0] + "@my_op(%x, a=", "(", "1", ",)", ")" + _EXPR[1],
     MAX_ATTRIBUTE_NESTING),
    (*_TYPE[:1], "(", "Tensor(FloatType(32), Shape())", ",)", _TYPE[1], True),
    (*_TYPE[:1], "RefType(", "()", ")", _TYPE[1], True),
    (*_TYPE[:1], "(", "()", ") -> ()", _TYPE[1], True),
    (*_TYPE[:1], "() -> ", "()", "", _TYPE[1], True),
    (*_TYPE[:1], "forall (a: Type), ", "a", "", _TYPE[1], True),
    (*_TYPE[:1], "Tensor(", "FloatType(32)", ", Shape())", _TYPE[1], False),
    (*_TYPE[:1], "(", "()", ")", _TYPE[1], False),
    (*_DIM[:1], "(", "n", ")", _DIM[1], True),
    (*_DIM[:1], "-", "n", "", _DIM[1], True),
    (*_DIM[:1], "n + ", "1", "", _DIM[1], True),
    (*_DIM[:1], "2*(", "n", ")", _DIM[1], _POWERS_OF_TWO),
    (*_DIM[:1], "(", "n", " // 2)", _DIM[1], _POWERS_OF_TWO),
    (*_DIM[:1], "(", "n", " + 1) // 2", _DIM[1], MAX_FLOORDIV_NESTING),
    (*_DIM[:1], "(", "n", " + 1) // n", _DIM[1], MAX_FLOORDIV_NESTING),
    (*_DIM[:1], "2*(", "n", " // 3)", _DIM[1], MAX_FLOORDIV_NESTING),
    (*_DIM[:1], "(n + 1)*(", "n", ")", _DIM[1], False),
    (*_DIM[:1], "9223372036854775807*(", "n", ")", _DIM[1], False),
]  # fmt: skip


def nest(case: tuple, depth: int) -> str:
    """A case of ``NESTINGS`` nested ``depth`` deep."""
    prefix, opener, innermost, closer, suffix, _ = case
    return prefix + opener * depth + innermost + closer * depth + suffix


def nest_is_valid(case: tuple, depth: int) -> bool:
    """Whether ``nest(case, depth)`` must parse (an int in the case: up to that depth)."""
    valid = case[-1]
    return valid if isinstance(valid, bool) else depth <= valid


_FENCE = re.compile(r"^```\n(.*?)^```", re.MULTILINE | re.DOTALL)
_ROOT = Path(__file__).resolve().parents[2]


@functools.cache
def corpus() -> tuple[str, ...]:
    """Real programs: the .rly files of tests/interp/programs and examples/, and the plain
    code blocks of docs/ and README.md that parse (none where the sources are not around)."""
    texts = [path.read_text() for folder in ("tests/interp/programs", "examples") for path in sorted((_ROOT / folder).glob("*.rly"))]
    for doc in [*sorted((_ROOT / "docs").glob("*.md")), _ROOT / "README.md"]:
        if doc.exists():
            texts += [block for block in _FENCE.findall(doc.read_text()) if _parses(block)]
    return tuple(texts)


def _parses(text: str) -> bool:
    try:
        parse(text)
    except ParseError:
        return False
    return True


@functools.cache
def typed_corpus() -> tuple[str, ...]:
    """The corpus programs that type-check, printed with every binding annotated."""
    from typecheck import infer

    typed = []
    for text in corpus():
        try:
            typed.append(astext(infer(parse(text))))
        except RelayTypeError:
            pass
    return tuple(typed)


# -- the generators ---------------------------------------------------------------------------

_DIGITS = (20, 64, 101, 640, 4_301, 5_000, 100_000)
_SUFFIXES = ("", "", "i8", "i64", "u64", "f16", "f64", "x")
_KINDS = ("Type", "Shape", "BaseType", "Dim")
_BASE_TYPE_WORDS = ("BoolType", "IntType", "UIntType", "FloatType")
_BASE_TYPES = ("FloatType(32)", "FloatType(64)", "FloatType(16)", "IntType(32)", "IntType(8)", "UIntType(8)", "BoolType")
_NOT_BASE_TYPES = ("Shape(2)", "Shape()", "Tensor(FloatType(32), Shape())", "()", "IntType(7)")
_TYPES = ("Tensor(FloatType(32), Shape())", "Tensor(FloatType(32), Shape(3))", "(Tensor(IntType(32), Shape()),)",
          "()", "RefType(Tensor(FloatType(32), Shape()))", "(Tensor(FloatType(32), Shape())) -> ()",
          "forall (a: Type), (a) -> a", "Shape(3)", "FloatType(32)")  # fmt: skip


_DIM_CONSTANTS = ("0", "1", "2", "3", "784", "-1", "-7", str(2**63 - 1), "9" * 100, "9" * 101, "*".join(["9" * 60] * 2))


def _dim_texts(name: str) -> tuple[str, ...]:
    """Dimensions over the variable ``name``: negative, divided and deeply nested ones."""
    exponential = name
    for _ in range(5):
        exponential = f"({exponential}) // ({exponential} + 1)"
    return (
        name, f"{name} + 1", f"{name} - 100", f"-{name}", f"{name}*{name}", f"{name} // -2", f"{name} // 0",
        f"({name} + 1) // 2", f"{name} // {name}", f"{name} // ({name} - {name})", f"({name} - 5) // (1 - {name})",
        "(" * 70 + name + " // 3)" * 70, "(" * 64 + name + " + 1) // 2" * 64, "(" * 65 + name + " + 1) // 2" * 65,
        exponential, "*".join([f"({name} + 1)"] * 30),
    )  # fmt: skip


class _Fuzzer(Chooser):
    """Decodes one fuzz input from a stream of choices."""

    # parser inputs ------------------------------------------------------------------------
    def parser_input(self, max_depth: int) -> tuple[str, str]:
        """``(what, text)``: a mutated real program, one with a huge number, a deep nest or
        token soup."""
        programs = corpus()
        return self.pick([
            (6 if programs else 0, lambda: ("mutated program", self.mutate(self.one_of(programs)))),
            (2 if programs else 0, lambda: ("huge number", self.huge_number_in(self.one_of(programs)))),
            (2, lambda: ("generated program", self.mutate(astext(_Builder(self.src, max_nodes=25).module(2, 4))))),
            (1, lambda: self.nest(max_depth)),
            (1, lambda: ("token soup", self.token_soup())),
        ])  # fmt: skip

    def mutate(self, text: str) -> str:
        for _ in range(self.integer(1, 4)):
            text = self.edit(text)
        return text

    def edit(self, text: str) -> str:
        """One random edit of ``text``: on lexemes or on characters, or a truncation."""
        lexemes = LEXEME.findall(text)
        if not lexemes:
            return self.one_of(TOKENS)
        i, j = self.integer(0, len(lexemes) - 1), self.integer(0, len(lexemes) - 1)
        c = self.integer(0, len(text))
        edit = self.one_of(("delete", "insert", "replace", "duplicate", "swap", "truncate", "char-delete", "char-insert"))
        if edit == "delete":
            del lexemes[i]
        elif edit == "insert":
            lexemes.insert(i, self.one_of(TOKENS))
        elif edit == "replace":
            lexemes[i] = self.one_of(TOKENS)
        elif edit == "duplicate":
            lexemes[i:i] = lexemes[min(i, j) : max(i, j) + 1]
        elif edit == "swap":
            lexemes[i], lexemes[j] = lexemes[j], lexemes[i]
        elif edit == "truncate":
            return text[:c]
        elif edit == "char-delete":
            return text[:c] + text[c + 1 :]
        else:
            return text[:c] + chr(self.integer(0, 0x2FFF)) + text[c:]
        return "".join(lexemes)

    def huge_number(self) -> str:
        digits = self.one_of(("9", "1", "0", "7")) * self.one_of(_DIGITS)
        return self.pick([
            (3, lambda: self.one_of(("", "-")) + digits + self.one_of(_SUFFIXES)),
            (1, lambda: digits + ".5" + self.one_of(_SUFFIXES)),
            (1, lambda: "1e" + digits),
            (1, lambda: "0" * len(digits) + "1"),
        ])  # fmt: skip

    def huge_number_in(self, text: str) -> str:
        """``text`` with one of its numbers (a literal, dimension, bit width, index or attribute) made huge."""
        numbers = [m.span() for m in re.finditer(r"\b\d+\b", text)]
        if not numbers:
            return text + self.huge_number()
        start, end = self.one_of(numbers)
        return text[:start] + self.huge_number() + text[end:]

    def nest(self, max_depth: int) -> tuple[str, str]:
        depth = self.pick([(3, lambda: self.integer(1, 100)), (1, lambda: self.integer(1, max_depth)), (2, lambda: max_depth)])
        return f"{depth:,}-deep nest" if depth == DEEPEST else "nest", nest(self.one_of(NESTINGS), depth)

    def token_soup(self) -> str:
        return "".join(self.one_of(TOKENS) + self.one_of(SEPARATORS) for _ in range(self.integer(0, 150)))

    # type-checker inputs ------------------------------------------------------------------
    def typed_program(self) -> str:
        """A well-typed program's annotated text, or a kind-correct one that need not type-check."""
        from .strategies import Features, _Generator

        typed = typed_corpus()
        return self.pick([
            (4 if typed else 0, lambda: self.one_of(typed)),
            (4, lambda: astext(_Generator(self.src, Features()).module())),
            (1, lambda: astext(_Builder(self.src, max_nodes=25).module(2, 3))),
        ])  # fmt: skip

    def typecheck_input(self) -> str:
        return self.type_mutant(self.typed_program())

    def type_mutant(self, text: str) -> str:
        """``text`` with one or two of its types (or calls and projections) changed."""
        for _ in range(self.integer(1, 2)):
            try:
                tokens = tokenize(text, "<fuzz>")
            except ParseError:
                break
            text = _Sites(text, tokens).mutate(self)
        return text


class _Sites:
    """Where a program's text has types, dimensions, type variables, arguments and
    projections, found on its tokens; ``mutate`` changes one of them."""

    def __init__(self, text: str, tokens: list[Token]):
        self.text, self.tokens = text, tokens
        pairs = list(zip(tokens, tokens[1:]))
        self.binders = [i for i, (a, b) in enumerate(pairs) if a.kind == "ident" and b.text == ":" and tokens[i + 2].text in _KINDS]
        self.names = sorted({tokens[i].text for i in self.binders})
        self.dim_binders = [i for i in self.binders if tokens[i + 2].text == "Dim"]
        self.shapes = [self.shape_dims(i + 2) for i, (a, b) in enumerate(pairs) if a.text == "Shape" and b.text == "("]
        self.dims = [d for shape in self.shapes for d in shape]
        self.base_types = [(i, i + (1 if t.text == "BoolType" else 4)) for i, t in enumerate(tokens) if t.text in _BASE_TYPE_WORDS]
        self.uses = [i for i, t in enumerate(tokens) if t.kind == "ident" and t.text in self.names]
        self.annotations = [(i + 2, _type_end(tokens, i + 2)) for i, (a, b) in enumerate(pairs)
                            if b.text in (":", "->") and a.kind in ("local", "punct")]  # fmt: skip
        self.arguments = [i for i, (a, b) in enumerate(pairs) if a.text == "," and b.kind == "local" and tokens[i + 2].text in (",", ")")]
        self.indices = [i + 1 for i, (a, b) in enumerate(pairs) if a.text == "[" and b.kind == "number"]
        self.signatures = [sig for i, (a, b) in enumerate(pairs) if b.text == "[" and (a.kind == "global" or a.text == "fn")
                           for sig in [self.signature(i + 1)] if sig[0] and sig[1]]  # fmt: skip

    def signature(self, open_at: int) -> tuple[list[str], list[tuple[int, int]]]:
        """The type parameters of the function whose ``[`` is at ``open_at``, and the base
        types in its parameters' and result's types."""
        close = next(j for j in range(open_at, len(self.tokens)) if self.tokens[j].text == "]" or self.tokens[j].kind == "eof")
        body = next((j for j in range(close, len(self.tokens)) if self.tokens[j].text == "{"), len(self.tokens) - 1)
        names = [self.tokens[i].text for i in self.binders if open_at < i < close]
        return names, [(a, b) for a, b in self.base_types if close < a < body]

    def shape_dims(self, i: int) -> list[tuple[int, int]]:
        """Token ranges of the dimensions of the shape whose ``(`` is just before ``i``."""
        dims, start, depth = [], i, 0
        for j in range(i, len(self.tokens)):
            text = self.tokens[j].text
            if depth == 0 and text in (",", ")") or self.tokens[j].kind == "eof":
                if j > start:
                    dims.append((start, j))
                if text != ",":
                    return dims
                start = j + 1
            depth += (text == "(") - (text == ")")
        return dims

    def source(self, span: tuple[int, int]) -> str:
        start, end = span
        return self.text[self.tokens[start].start : self.tokens[end - 1].end]

    def splice(self, edits: Sequence[tuple[int, int, str]]) -> str:
        """The text with token ranges replaced (ranges do not overlap)."""
        out, pos = [], 0
        for start, end, new in sorted(edits):
            out += [self.text[pos : self.tokens[start].start], new]
            pos = self.tokens[end - 1].end if end > start else self.tokens[start].start
        return "".join(out) + self.text[pos:]

    def swapped(self, a: tuple[int, int], b: tuple[int, int]) -> list[tuple[int, int, str]]:
        apart = a[1] <= b[0] or b[1] <= a[0]
        return [(*a, self.source(b)), (*b, self.source(a))] if apart else []

    def dim_text(self, f: _Fuzzer, at: int) -> str:
        """A dimension to write at token ``at``, over the Dim variable bound last before it (if any)."""
        bound = [self.tokens[i].text for i in self.dim_binders if i < at]
        return f.one_of(_DIM_CONSTANTS + (_dim_texts(bound[-1]) if bound else ()))

    def dtype_text(self, f: _Fuzzer, at: int) -> str:
        """A base type, or a term of another kind (often a type variable bound shortly before
        token ``at``, of whatever kind), to write where a base type is."""
        bound = [self.tokens[i].text for i in self.binders if i < at][-4:]
        return f.one_of(f.one_of([_BASE_TYPES, _NOT_BASE_TYPES, *[bound] * 2 * bool(bound)]))

    def mutate(self, f: _Fuzzer) -> str:
        shapes = [shape for shape in self.shapes if len(shape) > 1]

        def swap_dims() -> list[tuple[int, int, str]]:
            shape = f.one_of(shapes)
            return self.swapped(f.one_of(shape), f.one_of(shape))

        edits: list[tuple[int, Callable[[], list[tuple[int, int, str]]]]] = [
            (4 if self.dims else 0, lambda: [(start, end, self.dim_text(f, start)) for start, end in [f.one_of(self.dims)]]),
            (1 if self.dims else 0, lambda: [(*f.one_of(self.dims), "")]),  # a dimension less
            (1 if self.dims else 0, lambda: [(end, end, ", " + self.source((start, end))) for start, end in [f.one_of(self.dims)]]),
            (1 if shapes else 0, swap_dims),
            (3 if self.base_types else 0, lambda: [(start, end, self.dtype_text(f, start)) for start, end in [f.one_of(self.base_types)]]),
            (2 if self.binders else 0, lambda: [(i + 2, i + 3, f.one_of(_KINDS)) for i in [f.one_of(self.binders)]]),
            (2 if self.signatures else 0, lambda: [(*f.one_of(spans), f.one_of(names)) for names, spans in [f.one_of(self.signatures)]]),
            (2 if self.uses else 0, lambda: [(i, i + 1, f.one_of([*self.names, "zz"])) for i in [f.one_of(self.uses)]]),
            (1 if self.annotations else 0, lambda: [(start - 1, end, "") for start, end in [f.one_of(self.annotations)]]),
            (1 if self.annotations else 0, lambda: self.swapped(f.one_of(self.annotations), f.one_of(self.annotations))),
            (1 if self.annotations else 0, lambda: [(*f.one_of(self.annotations), f.one_of(_TYPES))]),
            (1 if self.arguments else 0, lambda: [(i, i + 2, "") for i in [f.one_of(self.arguments)]]),
            (1 if self.indices else 0, lambda: [(i, i + 1, str(f.integer(0, 4))) for i in [f.one_of(self.indices)]]),
            (1, lambda: []),  # so that every program has an edit to pick
        ]  # fmt: skip
        return self.splice(f.pick(edits))


def _type_end(tokens: list[Token], i: int) -> int:
    """The index just past the type that starts at token ``i`` (a ``forall``'s comma included)."""
    depth = foralls = 0
    while tokens[i].kind != "eof":
        text = tokens[i].text
        if text in ("(", "["):
            depth += 1
        elif text in (")", "]"):
            if depth == 0:
                return i
            depth -= 1
        elif depth == 0 and text == "forall":
            foralls += 1
        elif depth == 0 and text == "," and foralls:
            foralls -= 1
        elif depth == 0 and text in (",", "=", "{"):
            return i
        i += 1
    return i


# -- checks ------------------------------------------------------------------------------------


def check_parse(text: str) -> str:
    """``"ok"`` or ``"ParseError"`` (with a position); anything else propagates: it breaks
    the contract. (Printing what parses is checked by ``check_typecheck`` and the tests.)"""
    try:
        parse(text)
    except ParseError as err:
        assert err.span is not None and err.span.line >= 1 and err.span.col >= 1, f"a ParseError without a position: {err}"
        return "ParseError"
    return "ok"


def check_typecheck(text: str) -> str:
    """What ``relayish fmt`` and ``relayish check`` do with ``text``: ``"ok"`` or the class
    of the error (ParseError, RelayTypeError, KindError); an internal error or any other
    exception breaks the contract."""
    try:
        module = parse(text)
    except ParseError:
        return "ParseError"
    astext(module)
    return check_module(module)


def check_module(module: Module) -> str:
    """Type-check ``module`` and print the result: ``"ok"``, or ``"RelayTypeError"`` or
    ``"KindError"``; an internal error or any other exception breaks the contract."""
    from typecheck import infer

    try:
        typed = infer(module)
    except RelayTypeError as err:
        assert "internal error" not in str(err), str(err)
        return type(err).__name__
    astext(typed)
    return "ok"


# -- strategies ----------------------------------------------------------------------------------


def parser_inputs(max_depth: int = DEEPEST) -> st.SearchStrategy[str]:
    """Mutated real and generated programs, huge numbers, nests up to ``max_depth`` deep
    and token soup."""
    return decoded(lambda src: _Fuzzer(src).parser_input(max_depth)[1], 256)


def mutants(texts: st.SearchStrategy[str]) -> st.SearchStrategy[str]:
    """Texts drawn from ``texts`` with one to four edits of their lexemes or characters."""
    return st.tuples(texts, st.binary(min_size=64, max_size=64)).map(lambda pair: _Fuzzer(Stream(pair[1])).mutate(pair[0]))


def type_mutants(texts: st.SearchStrategy[str]) -> st.SearchStrategy[str]:
    """Programs drawn from ``texts`` with dimensions, dtypes, kinds, type variables,
    annotations, arguments or projections changed."""
    return st.tuples(texts, st.binary(min_size=64, max_size=64)).map(lambda pair: _Fuzzer(Stream(pair[1])).type_mutant(pair[0]))


def typecheck_inputs() -> st.SearchStrategy[str]:
    """Mutants of real typed programs and of generated ones."""
    return decoded(lambda src: _Fuzzer(src).typecheck_input(), _STREAM_BYTES)


# -- the command line ---------------------------------------------------------------------------


@attrs.define
class Tally:
    """What a fuzz run saw: outcomes by class, contract breaks, hangs and the slowest input."""

    inputs: int = 0
    kinds: collections.Counter = attrs.field(factory=collections.Counter)
    outcomes: collections.Counter = attrs.field(factory=collections.Counter)
    breaks: list[tuple[str, str]] = attrs.field(factory=list)
    hangs: int = 0  # over HANG_SECONDS of CPU time
    slow: int = 0  # over HANG_SECONDS of wall time
    slowest: tuple[float, float, str, str] = (0.0, 0.0, "", "")  # CPU and wall seconds, kind, text

    def run(self, kind: str, text: str, check: Callable[[str], str]) -> None:
        self.inputs += 1
        self.kinds[kind] += 1
        wall, cpu = time.perf_counter(), time.process_time()
        try:
            with time_limit(ABORT_SECONDS, "one fuzz input"):
                outcome = check(text)
        except TimeLimitExceeded:
            outcome = "stopped"
        except Exception as err:  # a contract break: counted and shown, the run goes on
            outcome = type(err).__name__
            self.breaks.append((text, f"{outcome}: {err}"))
        wall, cpu = time.perf_counter() - wall, time.process_time() - cpu
        self.outcomes[outcome] += 1
        self.hangs += cpu > HANG_SECONDS
        self.slow += wall > HANG_SECONDS
        if cpu > self.slowest[0]:
            self.slowest = (cpu, wall, kind, text)

    @property
    def internal_errors(self) -> int:
        return sum("internal error" in error for _, error in self.breaks)

    def summary(self, breaks: str) -> str:
        """One line; ``breaks`` says how many contract breaks of what kind there were."""
        made = ", ".join(f"{count:,} {kind}" for kind, count in self.kinds.most_common())
        seen = ", ".join(f"{name} {count:,}" for name, count in self.outcomes.most_common())
        cpu, wall, kind, text = self.slowest
        return (f"{self.inputs:,} inputs ({made}); outcomes: {seen}; {breaks}; {self.hangs:,} hangs over "
                f"{HANG_SECONDS:g} s of CPU time ({self.slow:,} inputs over {HANG_SECONDS:g} s of wall time); slowest "
                f"{cpu:.2f} s of CPU time ({wall:.2f} s of wall time): a {kind} of {len(text):,} characters, {text[:48]!r}...")  # fmt: skip


def fuzz_parser(count: int, seed: int = 0) -> Tally:
    tally, rng = Tally(), random.Random(seed)
    for _ in range(count):
        kind, text = _Fuzzer(Stream(rng.randbytes(256))).parser_input(DEEPEST)
        tally.run(kind, text, check_parse)
    return tally


def fuzz_typecheck(count: int, seed: int = 0) -> Tally:
    tally, rng = Tally(), random.Random(seed)
    for _ in range(count):
        tally.run("typed-program mutant", _Fuzzer(Stream(rng.randbytes(_STREAM_BYTES))).typecheck_input(), check_typecheck)
    return tally


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python3 -m relayish.testing.fuzz", description=__doc__.split("\n\n")[0])
    parser.add_argument("--parser", type=int, default=PARSER_INPUTS, help=f"parser inputs (default {PARSER_INPUTS:,})")
    parser.add_argument("--typecheck", type=int, default=TYPECHECK_MUTANTS, help=f"type-checker mutants (default {TYPECHECK_MUTANTS:,})")
    parser.add_argument("--seed", type=int, default=0)
    args = parser.parse_args(argv)
    broken = 0
    if args.parser:
        tally = fuzz_parser(args.parser, args.seed)
        _report("Parser fuzz", tally, f"{len(tally.breaks):,} exceptions other than ParseError")
        broken += len(tally.breaks) + tally.hangs
    if args.typecheck:
        tally = fuzz_typecheck(args.typecheck, args.seed)
        internal = tally.internal_errors
        _report("Type-checker fuzz", tally, f"{internal:,} internal errors, {len(tally.breaks) - internal:,} other exceptions")
        broken += len(tally.breaks) + tally.hangs
    return 1 if broken else 0


def _report(name: str, tally: Tally, breaks: str) -> None:
    print(f"{name}: {tally.summary(breaks)}", flush=True)
    for text, error in tally.breaks[:5]:
        print(f"  input {text[:300]!r}\n  raised {error[:500]}")


if __name__ == "__main__":
    sys.exit(main())
