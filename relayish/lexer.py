"""Tokens of the text format (docs/text-format.md)."""

from __future__ import annotations

import bisect
import re

from .errors import ParseError, Span

# A token with the spaces and comments before it (possessively: no backtracking into them).
# Each kind starts with characters of its own, so the order only matters for speed: the
# most frequent kinds come first.
_SPACE = r"(?:[ \t\r\n]|\#[^\n]*)*+"
_TOKEN = re.compile(
    _SPACE
    + r"""(?:
    (?P<punct>:=|->|=>|==|!=|<=|>=|//|[(){}\[\],:=<>+\-*/!?])
  | (?P<ident>[A-Za-z_][A-Za-z0-9_]*)
  | (?P<local>%[A-Za-z0-9_]+)
  | (?P<number>(?:\d+\.\d*(?:[eE][+-]?\d+)?|\d+[eE][+-]?\d+|\d+)(?:[A-Za-z_][A-Za-z0-9_]*)?)
  | (?P<global>@[A-Za-z_][A-Za-z0-9_]*)
  | (?P<string>"(?:[^"\\\n]|\\.)*")
    )""",
    re.VERBOSE | re.ASCII,
)
_SPACES = re.compile(_SPACE, re.VERBOSE)
_SPECIAL_FLOATS = frozenset(word + suffix for word in ("nan", "inf") for suffix in ("", "f16", "f32", "f64"))


class Token:
    """A token: its kind, text and offsets; its line, column and Span are worked out from
    the offset only when someone asks (on long inputs, most tokens never need them)."""

    __slots__ = ("kind", "text", "start", "end", "_source")

    def __init__(self, kind: str, text: str, start: int, end: int, source: _Source):
        self.kind, self.text, self.start, self.end, self._source = kind, text, start, end, source

    @property
    def position(self) -> tuple[int, int]:
        """Line and column, from 1."""
        line = bisect.bisect_right(self._source.line_starts, self.start)
        return line, self.start - self._source.line_starts[line - 1] + 1

    @property
    def span(self) -> Span:
        line, col = self.position
        return Span(self._source.filename, line, col, self._source.line_text(line))

    def __repr__(self) -> str:
        line, col = self.position
        return f"Token({self.kind}, {self.text!r}, {line}:{col})"


class _Source:
    def __init__(self, text: str, filename: str):
        self.text = text
        self.filename = filename
        self._line_starts: list[int] | None = None
        self._lines: list[str] | None = None

    @property
    def line_starts(self) -> list[int]:
        """The offset where each line starts."""
        if self._line_starts is None:
            self._line_starts = [0, *(match.end() for match in re.finditer("\n", self.text))]
        return self._line_starts

    def line_text(self, line: int) -> str:
        if self._lines is None:  # split once: every span of a line shares its text
            self._lines = self.text.split("\n")
        return self._lines[line - 1]


def tokenize(text: str, filename: str) -> list[Token]:
    """Split ``text`` into tokens; ``nan`` and ``inf`` (with a dtype suffix) are numbers."""
    source = _Source(text, filename)
    tokens: list[Token] = []
    append = tokens.append
    pos = 0
    match_token = _TOKEN.match  # anchored at pos: a search could rescan the spaces at each position
    while match := match_token(text, pos):
        kind = match.lastgroup
        start, pos = match.span(kind)
        word = match.group(kind)
        if kind == "ident" and word in _SPECIAL_FLOATS:
            kind = "number"
        append(Token(kind, word, start, pos, source))
    pos = _SPACES.match(text, pos).end()
    if pos < len(text):
        raise ParseError(f"unexpected character {text[pos]!r}", Token("", "", pos, pos, source).span)
    # End of input is shown just after the last token, where the missing text belongs.
    eof = tokens[-1].end if tokens else 0
    tokens.append(Token("eof", "", eof, eof, source))
    return tokens
