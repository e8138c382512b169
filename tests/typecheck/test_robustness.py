"""Whatever module it is given, the checker either returns a typed module or raises
RelayTypeError: never another exception, never an internal error."""

import re

from hypothesis import assume, given, settings
from hypothesis import strategies as st

import relayish
from relayish.testing.ir_strategies import modules

from .test_programs import lenet_source
from .test_rules import F, WELL_TYPED

CORPUS = [src.replace("$F", F) for _, src, _ in WELL_TYPED] + [lenet_source()]
DTYPES = ["FloatType(32)", "FloatType(64)", "IntType(32)", "IntType(8)", "UIntType(8)", "BoolType"]


def _replace_nth(text: str, pattern: str, n: int, make) -> str:
    matches = list(re.finditer(pattern, text))
    assume(matches)
    match = matches[n % len(matches)]
    return text[: match.start()] + make(match) + text[match.end():]


@st.composite
def mutated_programs(draw) -> str:
    """A well-typed program with one dimension, dtype, arity or tuple index changed."""
    text = draw(st.sampled_from(CORPUS))
    n = draw(st.integers(0, 1000))
    kind = draw(st.sampled_from(["dimension", "dtype", "arity", "index", "swap"]))
    if kind == "dimension":
        value = draw(st.sampled_from(["0", "1", "2", "3", "5", "784", "800", "n"]))
        return _replace_nth(text, r"(?<=Shape\()[^()]*?(?=[,)])|(?<=, )\d+(?=[,)])", n, lambda m: value)
    if kind == "dtype":
        dtype = draw(st.sampled_from(DTYPES))
        return _replace_nth(text, "|".join(re.escape(d) for d in DTYPES), n, lambda m: dtype)
    if kind == "arity":
        return _replace_nth(text, r", %\w+(?=[,)])", n, lambda m: "")
    if kind == "index":
        return _replace_nth(text, r"\[(\d+)\]", n, lambda m: f"[{int(m.group(1)) + draw(st.integers(1, 3))}]")
    return _replace_nth(text, r"Shape\((\w+), (\w+)", n, lambda m: f"Shape({m.group(2)}, {m.group(1)}")


def _check_outcome(module: relayish.Module) -> None:
    try:
        typed = relayish.infer_types(module)
    except relayish.RelayTypeError as err:
        assert "internal error" not in str(err), str(err)
    else:
        assert isinstance(typed, relayish.Module)


@settings(max_examples=1500)
@given(mutated_programs())
def test_mutated_well_typed_programs_check_or_raise_type_errors(text):
    try:
        module = relayish.parse(text)
    except relayish.ParseError:
        assume(False)
    _check_outcome(module)


@settings(max_examples=500)
@given(modules())
def test_arbitrary_generated_modules_check_or_raise_type_errors(module):
    _check_outcome(module)
