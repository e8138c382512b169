"""Choices decoded from one hypothesis byte string, shared by the IR generators.

A generator reads its decisions front to back from one ``st.binary`` draw: a zero byte is
always the simplest choice (the first option, the smallest number), so hypothesis shrinks
a generated term by zeroing bytes, and a whole term costs one hypothesis draw instead of
hundreds. Past the end of the string every byte reads as zero, so generation always ends
with the simplest choices.
"""

from __future__ import annotations

from typing import Any, Callable, Sequence, TypeVar

from hypothesis import strategies as st

T = TypeVar("T")
Thunk = Callable[[], Any]


class Stream:
    """Choices read from a byte string; past its end every byte reads as zero."""

    def __init__(self, data: bytes):
        self.data = data
        self.pos = 0

    def take(self, count: int) -> bytes:
        chunk = self.data[self.pos : self.pos + count]
        self.pos += count
        return chunk.ljust(count, b"\0")

    def integer(self, lo: int, hi: int) -> int:
        """An integer in [lo, hi]; zero bytes give ``lo``."""
        span = hi - lo + 1
        if span <= 1:
            return lo
        size = ((span - 1).bit_length() + 7) // 8
        return lo + int.from_bytes(self.take(size), "big") % span


class Chooser:
    """Weighted and uniform choices from a ``Stream``; the base of every decoder."""

    def __init__(self, src: Stream):
        self.src = src

    def pick(self, options: Sequence[tuple[int, Thunk]]) -> Any:
        """Run one of the thunks, chosen with the given weights (weight 0: not an option)."""
        live = [(w, thunk) for w, thunk in options if w > 0]
        k = self.src.integer(0, sum(w for w, _ in live) - 1)
        for weight, thunk in live:
            if k < weight:
                return thunk()
            k -= weight
        raise AssertionError("unreachable")

    def integer(self, lo: int, hi: int) -> int:
        return self.src.integer(lo, hi)

    def flag(self, one_in: int = 2) -> bool:
        """True with probability 1/one_in (zero bytes: False)."""
        return self.src.integer(0, one_in - 1) == one_in - 1

    def many(self, thunk: Callable[[], T], lo: int, hi: int) -> list[T]:
        return [thunk() for _ in range(self.integer(lo, hi))]

    def maybe(self, thunk: Callable[[], T]) -> T | None:
        return thunk() if self.flag() else None

    def one_of(self, items: Sequence[T]) -> T:
        return items[self.integer(0, len(items) - 1)]


def decoded(build: Callable[[Stream], T], size: int) -> st.SearchStrategy[T]:
    """Terms decoded by ``build`` from one hypothesis-drawn string of ``size`` bytes.

    The size only needs to cover what a big term reads (past the end, bytes read as
    zero); a smaller one makes failures shrink faster.
    """
    return st.binary(min_size=size, max_size=size).map(lambda data: build(Stream(data)))
