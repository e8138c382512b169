"""Error classes and source spans shared by every layer.

Every user-facing error carries the span of the user's construct so that the message can
say ``file:line:col``, quote the line and put a caret under the column.
"""

from __future__ import annotations

import linecache

import attrs


@attrs.frozen
class Span:
    """A position in user source: 1-based line and column."""

    file: str
    line: int
    col: int
    source_line: str | None = attrs.field(default=None, eq=False, repr=False)

    def __str__(self) -> str:
        return f"{self.file}:{self.line}:{self.col}"

    def quote(self) -> str:
        """The source line with a caret under the column, or '' when it is unknown."""
        text = self.source_line
        if text is None:
            text = linecache.getline(self.file, self.line)
        text = text.rstrip("\r\n")
        if not text:
            return ""
        return f"    {text}\n    {' ' * (self.col - 1)}^"


class RelayError(Exception):
    """Base of every error relayish raises on purpose."""

    def __init__(self, message: str, span: Span | None = None):
        self.message = message
        self.span = span
        super().__init__(self._render())

    def _render(self) -> str:
        if self.span is None:
            return self.message
        quoted = self.span.quote()
        head = f"{self.span}: {self.message}"
        return f"{head}\n{quoted}" if quoted else head

    def reword(self, message: str) -> None:
        """Replace the message, keeping the span: for a caller that knows the user's words for
        what the message names (the frontend names a generated global after the user's function)."""
        self.message = message
        self.args = (self._render(),)


class ParseError(RelayError):
    """Bad relayish text: says where, quotes the line and says what was expected."""


class AttributeSchemaError(RelayError):
    """An operator call with an unknown, missing or ill-typed attribute."""


class RelayTypeError(RelayError):
    """A program that does not type-check; ``errors`` holds every independent diagnostic.

    The message renders each one as ``file:line:col: message`` with the quoted line.
    """

    def __init__(self, message: str, span: Span | None = None, errors: list[RelayTypeError] | None = None):
        self.errors = errors or [self]
        if errors and len(errors) > 1:
            message = f"{len(errors)} type errors:\n" + "\n".join(str(e) for e in errors)
            span = None
        super().__init__(message, span)


class KindError(RelayTypeError):
    """A type-level term of the wrong kind: a shape where a type belongs, and so on."""


class RelayRuntimeError(RelayError):
    """An error while running a program: bad arguments, division by zero, an index out of range."""


class StepLimitError(RelayRuntimeError):
    """A run stopped after the ``max_calls`` it was allowed (``relayish.evaluate``)."""


class FrontendError(RelayError):
    """Python code that ``@relay`` cannot translate: says what is not supported, where
    (the Python file, line and column) and what to write instead."""


class NonExhaustiveMatch(UserWarning):
    """A ``match`` that some value of its scrutinee's type falls through: the type checker warns,
    and such a value is a run-time error."""
