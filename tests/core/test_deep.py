"""Deep terms go through every core traversal without RecursionError.

Each test runs under Python's default recursion limit (never a raised one): a 100,000-long
let chain and 10,000 nested closures print, parse, compare, hash and report free
variables; a type nested 100,000 deep compares, hashes and prints.
"""

from __future__ import annotations

import sys

import pytest

from relayish import alpha_equal, astext, free_vars, parse, structural_hash
from relayish.expr import Call, Function, Let, Op, Var
from relayish.module import Module
from relayish.testing.ir_strategies import time_limit
from relayish.types import FloatType, FuncType, RefType, Shape, TensorType, TupleType

SCALAR = TensorType(FloatType(32), Shape())
DEFAULT_RECURSION_LIMIT = 1000


@pytest.fixture(autouse=True)
def default_recursion_limit():
    """Run at most at Python's default limit, whatever else raised it before."""
    saved = sys.getrecursionlimit()
    sys.setrecursionlimit(min(saved, DEFAULT_RECURSION_LIMIT))
    yield
    sys.setrecursionlimit(saved)


def let_chain(length: int, hint: str | None = None) -> Module:
    """``def @main(%x) { let %x0 = -%x in ... %x<length-1> }``; ``hint`` names every let."""
    x = Var("x", SCALAR)
    variables = [x] + [Var(f"x{i}" if hint is None else hint) for i in range(length)]
    body = variables[-1]
    for previous, var in zip(reversed(variables[:-1]), reversed(variables[1:])):
        body = Let(var, Call(Op("neg"), [previous]), body)
    return Module({"main": Function([x], body, SCALAR)})


def closure_nest(depth: int) -> Module:
    """``fn (%x0: T) { fn (%x1: T) { ... %x0 } }`` nested ``depth`` deep, inside ``@main``."""
    params = [Var(f"x{i}", SCALAR) for i in range(depth)]
    body = params[0]
    for param in reversed(params):
        body = Function([param], body)
    return Module({"main": Function([], body)})


def check_module(m: Module) -> Module:
    text = astext(m)
    back = parse(text)
    assert alpha_equal(back, m)
    assert structural_hash(back) == structural_hash(m)
    assert astext(back) == text
    return back


@pytest.fixture(scope="module")
def long_chain() -> Module:
    return let_chain(100_000)


def test_let_chain_of_100000_bindings_round_trips(long_chain):
    check_module(long_chain)
    assert astext(long_chain).count("\n") == 100_000 + 3  # header, lets, result, brace


def test_let_chain_of_100000_bindings_free_vars(long_chain):
    main = long_chain["main"]
    assert free_vars(main.body) == list(main.params)
    assert free_vars(main) == []


def test_printing_100000_lets_with_one_hint_is_not_quadratic():
    """Passes produce many variables with the same hint; naming them must stay linear."""
    m = let_chain(100_000, hint="t")
    with time_limit(15, "printing 100,000 lets all hinted 't'"):
        text = astext(m)
    assert "let %t_99999 = -%t_99998 in\n  %t_99999\n}" in text


def test_10000_nested_closures():
    m = closure_nest(10_000)
    back = check_module(m)
    outer = back["main"].body
    assert free_vars(outer) == []
    inner = outer
    for _ in range(9_999):
        inner = inner.body
    assert isinstance(inner, Function) and inner.body is outer.params[0]
    assert free_vars(inner) == [outer.params[0]]
    # Returning the innermost parameter instead is a different binding structure.
    params = [Var("x", SCALAR) for _ in range(10_000)]
    body = params[-1]
    for param in reversed(params):
        body = Function([param], body)
    assert not alpha_equal(Module({"main": Function([], body)}), m)


def nested_type(depth: int, innermost=SCALAR):
    t = innermost
    for i in range(depth):
        t = (TupleType([t]), RefType(t), FuncType([SCALAR], t))[i % 3]
    return t


def test_type_nested_100000_deep():
    a, b = nested_type(100_000), nested_type(100_000)
    assert a is not b
    assert a == b and hash(a) == hash(b)
    assert alpha_equal(a, b) and structural_hash(a) == structural_hash(b)
    c = nested_type(100_000, TensorType(FloatType(64), Shape()))
    assert a != c and not alpha_equal(a, c)
    assert astext(a).count("RefType(") == 33_333
