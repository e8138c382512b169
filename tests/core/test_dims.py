"""Symbolic dimensions: the canonical form, substitution, and an integer-arithmetic oracle.

The oracle: a dimension written as arithmetic (``DimTree``) is built with relayish's
operators and also evaluated with Python's integers; substituting the same values into the
canonical form must give the same number (or both divide by zero).
"""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from relayish import RelayError, astext
from relayish.dims import Dim, FloorDiv, as_dim
from relayish.testing.ir_strategies import DimTree, dim_trees, dims
from relayish.types import Kind, TypeVar

N, M, K = (TypeVar(name, Kind.DIM) for name in "nmk")
n, m, k = (as_dim(v) for v in (N, M, K))
VARIABLES = (N, M, K)


def test_canonical_forms():
    assert n - k + 1 == 1 + n - k
    assert 2 * n == n + n
    assert n * m == m * n
    assert (n + 1) * (n - 1) == n * n - 1
    assert (n * m) // m == n
    assert (2 * n + 1) // 2 == n
    assert (2 * n + 3) // 2 == n + 1
    assert (2 * n - 1) // 2 == n - 1
    assert (n + 4) // 2 == n // 2 + 2
    assert (6 * n * m + 4) // (2 * m) != 3 * n  # not exact: the constant term stays
    assert (6 * n * m) // (2 * m) == 3 * n
    assert n // n == 1
    assert n - n == 0 and (n - n).value == 0 and (n - n).is_const
    assert Dim.const(0) // n == 0
    assert hash(n - k + 1) == hash(1 + n - k)
    assert hash(2 * n) == hash(n + n)


def test_floor_division_stays_symbolic_when_not_exact():
    half = (n + 1) // 2
    assert half.value is None and not half.is_const
    (atom,) = half.atoms()
    assert isinstance(atom, FloorDiv) and atom.num == n + 1 and atom.den == 2
    assert half != n // 2 and half != (n + 2) // 2
    assert (3 * n + 1) // 2 != n  # (3n+1)//2 is neither n nor anything simpler written here
    assert n // m != m // n
    assert astext(half) == "(n + 1) // 2"
    assert astext(n - k + 1) == "n - k + 1"
    assert astext(2 * (n // 2) - n * m) == "-m*n + 2*(n // 2)"


def test_constants_and_errors():
    assert Dim.const(7).value == 7 and Dim.const(7) == 7
    assert n.value is None and n != 7
    assert (n + 2).free_vars() == {N}
    assert ((n + m) // (k + 1)).free_vars() == {N, M, K}
    assert Dim.const(7) // 2 == 3 and Dim.const(-7) // 2 == -4
    with pytest.raises(RelayError):
        n // 0
    with pytest.raises(RelayError):
        n // (m - m)
    with pytest.raises(TypeError):
        as_dim(True)
    with pytest.raises(TypeError):
        as_dim(1.5)
    with pytest.raises(TypeError):
        TypeVar("t", Kind.TYPE) + 1


def test_type_variables_take_part_in_arithmetic():
    assert N + 1 == n + 1 and 1 + N == n + 1
    assert N - 1 == n - 1 and 1 - N == 1 - n
    assert 2 * N == 2 * n and N * 2 == 2 * n and N * M == n * m
    assert N // 2 == n // 2 and -N == -n
    assert 6 // N == Dim.const(6) // n


def test_substitution():
    assert (n + m).substitute({N: Dim.const(2)}) == m + 2
    assert ((n + 1) // 2).substitute({N: Dim.const(5)}) == 3
    assert ((n + 1) // 2).substitute({N: 2 * m + 1}) == m + 1
    assert (n * n).substitute({N: m + 1}) == m * m + 2 * m + 1
    assert (n // m).substitute({M: n}) == 1
    assert (n - k + 1).substitute({}) == n - k + 1
    assert (n * m).substitute({N: m, M: n}) == n * m  # simultaneous, not one after the other
    with pytest.raises(RelayError):
        (n // m).substitute({M: Dim.const(0)})


def evaluate_dim(d: Dim, env: dict[TypeVar, int]) -> int:
    value = d.substitute({var: Dim.const(v) for var, v in env.items()}).value
    assert value is not None, f"{astext(d)} is not constant after substituting every variable"
    return value


ENVS = st.lists(st.tuples(st.integers(0, 30), st.integers(0, 30), st.integers(0, 30)), min_size=4, max_size=4)


@settings(max_examples=400)
@given(dim_trees(VARIABLES, max_leaves=10), ENVS)
def test_canonical_form_agrees_with_integer_arithmetic(tree, envs):
    try:
        built = as_dim(tree.build())
    except RelayError:  # the divisor is identically zero, so Python divides by zero too
        with pytest.raises(ZeroDivisionError):
            tree.evaluate(dict(zip(VARIABLES, envs[0])))
        return
    for values in envs:
        env = dict(zip(VARIABLES, values))
        try:
            expected = tree.evaluate(env)
        except ZeroDivisionError:  # undefined here; the canonical form may have simplified
            continue  # the division away ((n*m)//m is n), so it need not fail as well
        assert evaluate_dim(built, env) == expected, f"{tree} at {values}: {astext(built)}"


@settings(max_examples=200)
@given(dim_trees(VARIABLES, max_leaves=8))
def test_arithmetic_on_type_variables_and_ints_matches_dims(tree):
    """Leaves as the raw ints and TypeVars (their operators) give the same dims as Dim leaves."""
    try:
        expected = as_dim(tree.build())
    except RelayError:
        return
    assert as_dim(tree.build(leaf=lambda v: v)) == expected


@settings(max_examples=200)
@given(dims(VARIABLES), dims(VARIABLES), dims(VARIABLES))
def test_ring_laws(a, b, c):
    for left, right in [
        (a + b, b + a),
        (a * b, b * a),
        ((a + b) + c, a + (b + c)),
        ((a * b) * c, a * (b * c)),
        (a * (b + c), a * b + a * c),
        (a - a, Dim.const(0)),
        (a + 0, a),
        (a * 1, a),
        (-(-a), a),
        ((a * 3 + 2) // 3, a),
        ((a * b) // 1, a * b),
    ]:
        assert left == right, f"{astext(left)} != {astext(right)}"
        assert hash(left) == hash(right)


@settings(max_examples=200)
@given(dims(VARIABLES), st.integers(1, 5))
def test_exact_division_by_a_monomial(a, c):
    divisor = c * n * m
    assert (a * divisor) // divisor == a


@given(
    st.sampled_from([Dim.const(1), Dim.const(3), Dim.const(-2), 2 * n, -m, k * n]),
    st.sampled_from([n * m + k, 2 * n * n + n, n + 1, 3 * k - 2]),
)
def test_exact_division_by_a_polynomial_with_a_single_term_quotient(quotient, divisor):
    assert (divisor * quotient) // divisor == quotient
    assert ((divisor * quotient + 1) // divisor).value is None  # not exact: stays a division


def test_reshape_infers_minus_one_over_a_polynomial():
    from relayish import infer_types, parse

    text = """def @f[k: Dim](%x: Tensor(FloatType(32), Shape(k + 2, k, 1, 2, 1))) {
  @reshape(%x, newshape=(0, 0, -1))
}"""
    typed = infer_types(parse(text))
    assert "-> Tensor(FloatType(32), Shape(k + 2, k, 2))" in astext(typed)


def test_dim_tree_evaluates_like_python():
    tree = DimTree("//", (DimTree("-", (DimTree("var", (N,)), DimTree("const", (7,)))), DimTree("const", (2,))))
    assert tree.evaluate({N: 3}) == (3 - 7) // 2 == -2
    assert as_dim(tree.build()).substitute({N: Dim.const(3)}) == -2


def test_floor_division_nesting_is_capped_with_a_clear_error():
    """Floor divisions nest at most MAX_FLOORDIV_NESTING deep (no real shape needs more);
    up to that depth every operation works at the default recursion limit, and past it
    construction and parsing fail with a clear error, never a RecursionError."""
    from relayish import ParseError, RelayError, alpha_equal, parse, structural_hash
    from relayish.dims import MAX_FLOORDIV_NESTING
    from relayish.types import Shape

    def nested(depth: int) -> Dim:
        d = n
        for _ in range(depth):
            d = (d + 1) // 3
        return d

    deepest = MAX_FLOORDIV_NESTING
    a, b = nested(deepest), nested(deepest)
    assert a == b and hash(a) == hash(b) and a != nested(deepest - 1)
    assert alpha_equal(Shape(a), Shape(b)) and structural_hash(Shape(a)) == structural_hash(Shape(b))
    assert astext(a).count("//") == deepest
    expected = 10**40
    for _ in range(deepest):
        expected = (expected + 1) // 3
    assert a.substitute({N: Dim.const(10**40)}) == expected
    assert a.free_vars() == {N}
    text = f"def @f[n: Dim](%x: Tensor(FloatType(32), Shape({astext(a)}))) {{\n  %x\n}}\n"
    assert astext(parse(text)) == text
    with pytest.raises(RelayError, match=f"at most {deepest} floor divisions"):
        nested(deepest + 1)
    with pytest.raises(ParseError, match=f"at most {deepest} floor divisions"):
        parse(text.replace(f"Shape({astext(a)})", f"Shape(({astext(a)} + 1) // 3)"))
