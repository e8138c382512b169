"""Tokens of the text format (docs/text-format.md)."""

from __future__ import annotations

import re

import attrs

from .errors import ParseError, Span

_TOKEN = re.compile(
    r"""
    (?P<space>[ \t\r\n]+|\#[^\n]*)
  | (?P<local>%[A-Za-z0-9_]+)
  | (?P<global>@[A-Za-z_][A-Za-z0-9_]*)
  | (?P<number>(?:\d+\.\d*(?:[eE][+-]?\d+)?|\d+[eE][+-]?\d+|\d+)(?:[A-Za-z_][A-Za-z0-9_]*)?)
  | (?P<ident>[A-Za-z_][A-Za-z0-9_]*)
  | (?P<string>"(?:[^"\\\n]|\\.)*")
  | (?P<punct>:=|->|==|!=|<=|>=|//|[(){}\[\],:=<>+\-*/!])
    """,
    re.VERBOSE,
)
_SPECIAL_FLOAT = re.compile(r"(nan|inf)(f16|f32|f64)?\Z")


@attrs.frozen
class Token:
    kind: str  # local, global, number, ident, string, punct, eof
    text: str
    start: int
    end: int
    span: Span


def tokenize(text: str, filename: str) -> list[Token]:
    """Split ``text`` into tokens; ``nan`` and ``inf`` (with a dtype suffix) are numbers."""
    lines = text.split("\n")
    line_starts = [0]
    for line in lines[:-1]:
        line_starts.append(line_starts[-1] + len(line) + 1)

    def span_at(pos: int, line_index: int) -> Span:
        return Span(filename, line_index + 1, pos - line_starts[line_index] + 1, lines[line_index])

    tokens = []
    pos, line_index = 0, 0
    while pos < len(text):
        while line_index + 1 < len(line_starts) and line_starts[line_index + 1] <= pos:
            line_index += 1
        match = _TOKEN.match(text, pos)
        if match is None:
            raise ParseError(f"unexpected character {text[pos]!r}", span_at(pos, line_index))
        kind = match.lastgroup
        if kind != "space":
            word = match.group()
            if kind == "ident" and _SPECIAL_FLOAT.match(word):
                kind = "number"
            tokens.append(Token(kind, word, pos, match.end(), span_at(pos, line_index)))
        pos = match.end()
    # End of input is shown just after the last token, where the missing text belongs.
    end = tokens[-1].end if tokens else 0
    end_line = tokens[-1].span.line - 1 if tokens else 0
    tokens.append(Token("eof", "", pos, pos, span_at(end, end_line)))
    return tokens
