"""The parser on hostile text: it returns a Module or raises ParseError, nothing else.

Token soup, raw character soup and printed programs with random mutations, each under 2 KB;
mutated real programs, huge numbers and the whole mixture of ``python3 -m
relayish.testing.fuzz`` (``relayish.testing.fuzz`` makes them); deep nestings of every
bracketing construct, as deep as fits in 2 KB and 100,000 deep (a recursive parser would
hit RecursionError there). No input may hang (``time_limit`` on CPU time), and whatever
parses must print and parse back alpha-equivalently.

Under RELAYISH_HYPOTHESIS=heavy the mixture runs the issue's 5,000 inputs and every
construct is nested 100,000 deep; the everyday profile runs a sample of each.
"""

from __future__ import annotations

import os

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from relayish import ParseError, alpha_equal, astext, parse
from relayish.module import Module
from relayish.testing.fuzz import (
    DEEPEST, HANG_SECONDS, NESTINGS, PARSER_INPUTS, SEPARATORS, TOKENS, corpus, mutants, nest,
    nest_is_valid, parser_inputs,
)  # fmt: skip
from relayish.testing.ir_strategies import modules, time_limit

MAX_BYTES = 2000
HEAVY = os.environ.get("RELAYISH_HYPOTHESIS") == "heavy"


def examples(everyday: int, heavy: int) -> int:
    """How many examples a slow fuzz test runs: the issue's full count under the heavy profile."""
    return heavy if HEAVY else everyday


def check_parse(text: str, seconds: float = 10) -> Module | None:
    """Parse ``text`` within ``seconds`` of CPU time: a Module (which must round-trip) or a
    located ParseError."""
    with time_limit(seconds, f"parsing a {len(text):,}-character input", cpu=True):
        try:
            module = parse(text)
        except ParseError as err:
            assert err.span is not None and err.span.file == "<string>", err
            assert 1 <= err.span.line <= text.count("\n") + 1 and err.span.col >= 1, err
            return None
    assert isinstance(module, Module)
    printed = astext(module)
    assert alpha_equal(parse(printed), module), f"{text[:300]!r} parsed, but its printed form reads back differently"
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


def _cut(text: str) -> str:
    return text[:MAX_BYTES]


@settings(max_examples=1000)
@given(mutants(modules(max_globals=2, max_depth=4, max_nodes=25).map(astext).map(_cut)).map(_cut))
def test_mutated_programs(text):
    check_parse(text)


@settings(max_examples=examples(300, 2000))
@given(mutants(st.sampled_from(corpus())))
def test_mutated_real_programs(text):
    """The corpus: tests/interp/programs, examples/ and the code blocks of docs/ and README.md."""
    check_parse(text)


def test_the_corpus_is_there():
    assert len(corpus()) >= 50  # it is found from the sources; a test of nothing otherwise


@settings(max_examples=examples(300, PARSER_INPUTS))
@given(parser_inputs(max_depth=DEEPEST if HEAVY else 2_000))
def test_fuzz_inputs(text):
    """What ``python3 -m relayish.testing.fuzz --parser`` runs: mutated real and generated
    programs, huge numbers, deep nests and token soup; none takes over HANG_SECONDS."""
    check_parse(text, HANG_SECONDS)


def nesting_depth(case: tuple, depth: int | None) -> int:
    """``depth``, or the deepest that fits in 2 KB."""
    prefix, opener, innermost, closer, suffix, _ = case
    room = (MAX_BYTES - len(prefix) - len(innermost) - len(suffix)) // max(1, len(opener) + len(closer))
    return room if depth is None else min(depth, room)


@settings(max_examples=200)
@given(st.sampled_from(NESTINGS), st.integers(1, MAX_BYTES))
def test_deep_nesting(case, depth):
    depth = nesting_depth(case, depth)
    module = check_parse(nest(case, depth))
    assert module is not None or not nest_is_valid(case, depth), f"a valid program did not parse: {nest(case, depth)[:200]!r}"


CASE_IDS = [f"{i}:{c[1]}...{c[3]}" for i, c in enumerate(NESTINGS)]


@pytest.mark.parametrize("case", NESTINGS, ids=CASE_IDS)
def test_deepest_nesting_that_fits_in_2kb(case):
    depth = nesting_depth(case, None)
    module = check_parse(nest(case, depth))
    assert module is not None or not nest_is_valid(case, depth)


# Everyday: an expression, a type, a dimension and an attribute in parentheses (about a
# second each); heavy: every construct.
EVERYDAY_DEEP = [0, 26, 28, 35]


@pytest.mark.parametrize("case", NESTINGS if HEAVY else [NESTINGS[i] for i in EVERYDAY_DEEP],
                         ids=CASE_IDS if HEAVY else [CASE_IDS[i] for i in EVERYDAY_DEEP])  # fmt: skip
def test_100000_deep_nesting(case):
    text = nest(case, DEEPEST)
    with time_limit(HANG_SECONDS, f"parsing {CASE_IDS[NESTINGS.index(case)]} nested {DEEPEST:,} deep", cpu=True):
        try:
            module = parse(text)
        except ParseError as err:
            assert not nest_is_valid(case, DEEPEST), f"a valid program did not parse: {err.message}"
            return
    assert "f" in module  # and freed after the time limit: freeing it is not parsing
