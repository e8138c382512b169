"""Tokens of the text format (docs/text-format.md)."""

from __future__ import annotations

import re

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
    re.VERBOSE | re.ASCII,
)
_SPECIAL_FLOAT = re.compile(r"(nan|inf)(f16|f32|f64)?\Z")


class Token:
    """A token; its Span is made only when someone asks (most tokens never need one)."""

    __slots__ = ("kind", "text", "start", "end", "line", "col", "_source")

    def __init__(self, kind: str, text: str, start: int, end: int, line: int, col: int, source: _Source):
        self.kind, self.text, self.start, self.end = kind, text, start, end
        self.line, self.col, self._source = line, col, source

    @property
    def span(self) -> Span:
        return Span(self._source.filename, self.line, self.col, self._source.line_text(self.line))

    def __repr__(self) -> str:
        return f"Token({self.kind}, {self.text!r}, {self.line}:{self.col})"


class _Source:
    def __init__(self, text: str, filename: str):
        self.text = text
        self.filename = filename
        self._lines: list[str] | None = None

    def line_text(self, line: int) -> str:
        if self._lines is None:
            self._lines = self.text.split("\n")
        return self._lines[line - 1]


def tokenize(text: str, filename: str) -> list[Token]:
    """Split ``text`` into tokens; ``nan`` and ``inf`` (with a dtype suffix) are numbers."""
    source = _Source(text, filename)
    tokens = []
    pos, line, line_start = 0, 1, 0
    match_token = _TOKEN.match
    while pos < len(text):
        match = match_token(text, pos)
        if match is None:
            raise ParseError(f"unexpected character {text[pos]!r}", Token("", "", pos, pos, line, pos - line_start + 1, source).span)
        kind, end = match.lastgroup, match.end()
        if kind == "space":
            newlines = text.count("\n", pos, end)
            if newlines:
                line += newlines
                line_start = text.rfind("\n", pos, end) + 1
        else:
            word = match.group()
            if kind == "ident" and _SPECIAL_FLOAT.match(word):
                kind = "number"
            tokens.append(Token(kind, word, pos, end, line, pos - line_start + 1, source))
        pos = end
    # End of input is shown just after the last token, where the missing text belongs.
    last = tokens[-1] if tokens else None
    eof_line, eof_col = (last.line, last.col + len(last.text)) if last else (1, 1)
    tokens.append(Token("eof", "", pos, pos, eof_line, eof_col, source))
    return tokens
