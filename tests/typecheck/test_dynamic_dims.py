"""Dimensions known only at run time (issue 22, scope 1): ``?`` in the text, ``relayish.Any`` in
Python. Expected types are written out by hand; programs run in the evaluator and the JIT, which
must agree on values and on errors; gradients are checked against finite differences.
"""

import pickle

import numpy as np
import pytest

import relayish
from relayish.dims import UNKNOWN_DIM, Dim
from relayish.testing import check_grad
from relayish.types import FloatType, Shape, TensorType, TypeVar, Kind, has_unknown_dim
from typecheck.inference import declared_type

F = "Tensor(FloatType(64), Shape())"
I = "Tensor(IntType(32), Shape())"


def T(*dims: object) -> str:
    return f"Tensor(FloatType(64), Shape({', '.join(map(str, dims))}))"


def types_of(src: str) -> dict[str, str]:
    module = relayish.infer_types(relayish.parse(src, "t.rly"))
    return {name: str(declared_type(fn)) for name, fn in module.functions.items()}


def result_of(body: str, *params: str) -> str:
    """The type the checker gives ``body`` with parameters %a, %b, ... of the given types."""
    names = "abcdefgh"
    src = f"def @f({', '.join(f'%{n}: {t}' for n, t in zip(names, params))}) {{ {body} }}"
    return types_of(src)["f"].rsplit(") -> ", 1)[1]


def both(module: relayish.Module, name: str, *args):
    """The evaluator's result, after checking the JIT gives the same (or both raise alike)."""
    try:
        expected = relayish.evaluate(module, name, *args)
    except relayish.RelayRuntimeError as err:
        with pytest.raises(relayish.RelayRuntimeError) as jit_err:
            relayish.compile(module, name, tiered=False)(*args)
        assert str(err).splitlines()[0] == str(jit_err.value).splitlines()[0]
        raise
    actual = relayish.compile(module, name, tiered=False)(*args)
    for got, want in zip(_leaves(actual), _leaves(expected), strict=True):
        np.testing.assert_allclose(got, want, rtol=1e-12)
    return expected


def _leaves(value):
    if isinstance(value, tuple):
        return [leaf for v in value for leaf in _leaves(v)]
    return [np.asarray(value)]


# --- the dimension itself -----------------------------------------------------------------------


def test_arithmetic_with_an_unknown_dimension_is_unknown() -> None:
    n = TypeVar("n", Kind.DIM)
    for d in (UNKNOWN_DIM + 1, UNKNOWN_DIM * 2, n * UNKNOWN_DIM - 3, (n + 1) // UNKNOWN_DIM, UNKNOWN_DIM // 2):
        assert d.is_unknown and d == UNKNOWN_DIM and hash(d) == hash(UNKNOWN_DIM)
    assert (n + 1).free_vars() == {n} and UNKNOWN_DIM.free_vars() == set()
    assert UNKNOWN_DIM.value is None and UNKNOWN_DIM != 1
    assert relayish.Any is UNKNOWN_DIM and Dim.unknown() is UNKNOWN_DIM
    assert pickle.loads(pickle.dumps(Shape(UNKNOWN_DIM, 3))) == Shape(UNKNOWN_DIM, 3)
    assert has_unknown_dim(TensorType(FloatType(32), Shape(3, relayish.Any)))
    assert not has_unknown_dim(TensorType(FloatType(32), Shape(3, n)))


def test_text_round_trip() -> None:
    src = f"def @f(%a: {T('?', 3)}, %b: ({T(2, '?')}, RefType({T('?')}))) -> {T('?', 3)} {{\n  %a\n}}\n"
    module = relayish.parse(src)
    assert relayish.astext(module).strip() == src.strip()
    assert relayish.alpha_equal(relayish.parse(relayish.astext(module)), module)
    assert "Shape(?, 3)" in relayish.astext(relayish.parse(f"def @f(%a: {T('? + 1', 3)}) {{ %a }}"))


def test_a_misplaced_question_mark_is_a_parse_error() -> None:
    with pytest.raises(relayish.ParseError, match=r"t.rly:1:\d+"):
        relayish.parse(f"def @f(%a: {T('? ?', 3)}) {{ %a }}", "t.rly")


# --- type checking: hand-computed results --------------------------------------------------------


@pytest.mark.parametrize("body, params, expected", [
    ("@concatenate(%a, %b, axis=0)", (T("?", 3), T(1, 3)), T("?", 3)),
    ("@concatenate(%a, %b, axis=1)", (T("?", 3), T(2, 4)), T("?", 7)),  # ? must be 2: checked at run time
    ("%a + %b", (T("?", 3), T(5, 3)), T(5, 3)),  # ? is 1 or 5
    ("%a + %b", (T("?", 3), T(1, 3)), T("?", 3)),
    ("%a + %b", (T("?", 1), T("?", 3)), T("?", 3)),
    ("@matmul(%a, %b)", (T(2, "?"), T(4, 5)), T(2, 5)),
    ("@reshape(%a, newshape=(-1,))", (T("?", 3),), T("?")),
    ("@sum(%a, axis=0)", (T("?", 3),), T(3)),
    ("@dense(%a, %b)", (T(7, "?"), T(4, 3)), T(7, 4)),
    ("%a", (T("?", 3),), T("?", 3)),
    ("if %c then %a else %b", (T(2, 3), T("?", 3), "Tensor(BoolType, Shape())"), T("?", 3)),  # either way round
    ("if %c then %b else %a", (T(2, 3), T("?", 3), "Tensor(BoolType, Shape())"), T("?", 3)),
    ("if %c then (%a, %a) else (%a, %b)", (T(2, 3), T("?", 3), "Tensor(BoolType, Shape())"), f"({T(2, 3)}, {T('?', 3)})"),
])
def test_relations_give_what_relay_gives(body: str, params: tuple[str, ...], expected: str) -> None:
    assert result_of(body, *params) == expected


def test_known_differences_are_still_type_errors() -> None:
    with pytest.raises(relayish.RelayTypeError, match="dimension 1: 3 vs 4"):
        result_of("%a + %b", T("?", 3), T("?", 4))
    with pytest.raises(relayish.RelayTypeError, match="rank"):
        types_of(f"def @k(%x: {T(2, 3)}) {{ %x }}\ndef @f(%a: {T('?')}) {{ @k(%a) }}")


def test_a_dimension_variable_instantiated_with_unknown() -> None:
    src = f"""
def @id[n: Dim](%x: Tensor(FloatType(64), Shape(n, 3))) -> Tensor(FloatType(64), Shape(n, 3)) {{ %x }}
def @f(%a: {T('?', 3)}) {{ @id(%a) }}
"""
    assert types_of(src)["f"] == f"({T('?', 3)}) -> {T('?', 3)}"


def test_where_unknown_meets_a_known_size_the_typed_text_shows_the_check() -> None:
    src = f"""
def @k(%x: {T(2, 3)}) -> {T(2, 3)} {{ %x }}
def @f(%a: {T('?', 3)}) -> {T(2, 3)} {{ @k(%a) }}
def @g(%a: {T('?', 3)}) -> {T(2, 3)} {{ %a }}
def @h(%a: {T('?', 3)}) {{ let %b: {T(2, 3)} = %a in %b }}
"""
    text = relayish.astext(relayish.infer_types(relayish.parse(src)))
    assert f"@k(({T(2, 3)}) %a)" in text  # the argument
    assert f"-> {T(2, 3)} {{\n  ({T(2, 3)}) %a\n}}" in text  # the result
    assert f"let %b: {T(2, 3)} = ({T(2, 3)}) %a in" in text  # the binding
    typed = relayish.infer_types(relayish.parse(src))
    assert relayish.alpha_equal(relayish.infer_types(relayish.parse(relayish.astext(typed))), typed)  # stable


def test_no_check_where_a_known_size_meets_unknown() -> None:
    src = f"def @k(%x: {T('?', 3)}) {{ %x }}\ndef @f(%a: {T(2, 3)}) {{ @k(%a) }}"
    assert "(Tensor" not in relayish.astext(relayish.infer_types(relayish.parse(src)))


def test_a_function_that_could_not_be_checked_is_refused() -> None:
    """A function assuming a known size, passed where it will get values of unknown size."""
    src = f"""
def @apply(%f: ({T('?', 3)}) -> {F}, %a: {T('?', 3)}) -> {F} {{ %f(%a) }}
def @main(%a: {T('?', 3)}) {{ @apply(fn (%x: {T(2, 3)}) -> {F} {{ @sum(%x) }}, %a) }}
"""
    with pytest.raises(relayish.RelayTypeError, match=r"meet in a function's parameter \(dimension 0: \? vs 2\)"):
        relayish.infer_types(relayish.parse(src))
    safe = src.replace(f"fn (%x: {T(2, 3)})", f"fn (%x: {T('?', 3)})")
    relayish.infer_types(relayish.parse(safe))


def test_zero_of_an_unknown_size_is_a_type_error() -> None:
    with pytest.raises(relayish.RelayTypeError, match=r"Zero of .*a \? dimension has no size"):
        types_of(f"def @f() {{ Zero({T('?', 3)}) }}")


# --- running: the evaluator and the JIT agree ------------------------------------------------------

CHECKS = f"""
def @k(%x: {T(2, 3)}) -> {T(2, 3)} {{ %x * 2f64 }}
def @f(%a: {T('?', 3)}) -> {F} {{ @sum(@k(%a)) }}
def @loop(%i: {I}, %a: {T('?', 3)}) -> {T(2, 3)} {{ if %i <= 0 then %a else @loop(%i - 1, %a) }}
def @plus(%a: {T('?', 3)}, %b: {T('?', 3)}) -> {T('?', 3)} {{ %a + %b }}
def @unused(%a: {T('?', 3)}) -> {F} {{ let %u = @k(%a) in 1f64 }}
"""


def test_checks_pass_and_fail_alike_in_both_backends() -> None:
    module = relayish.parse(CHECKS, "c.rly")
    two, three = np.ones((2, 3)), np.ones((3, 3))
    assert both(module, "f", two) == 12.0
    np.testing.assert_array_equal(both(module, "plus", np.ones((1, 3)), three), 2 * three)
    for name, args in [("f", (three,)), ("loop", (np.int32(5), three)), ("unused", (three,))]:
        with pytest.raises(relayish.RelayRuntimeError, match=r"c.rly:\d+:\d+: expected .*Shape\(2, 3\).*dimension 0 must be 2"):
            both(module, name, *args)
    with pytest.raises(relayish.RelayRuntimeError, match=r"c.rly:5:\d+: @add in @plus: cannot broadcast Shape\(2, 3\) with Shape\(3, 3\)"):
        both(module, "plus", two, three)


def test_a_checked_tail_call_stays_a_loop(monkeypatch: pytest.MonkeyPatch) -> None:
    """Deeper than each backend allows non-tail calls: the evaluator's RELAYISH_MAX_DEPTH (set low
    here) and compiled code's 200,000."""
    module = relayish.parse(CHECKS)
    monkeypatch.setenv("RELAYISH_MAX_DEPTH", "100")
    np.testing.assert_array_equal(relayish.evaluate(module, "loop", np.int32(1_000), np.ones((2, 3))), np.ones((2, 3)))
    with pytest.raises(relayish.RelayRuntimeError, match="dimension 0 must be 2"):
        relayish.evaluate(module, "loop", np.int32(1_000), np.ones((3, 3)))
    compiled = relayish.compile(module, "loop", tiered=False)
    np.testing.assert_array_equal(compiled(np.int32(200_001), np.ones((2, 3))), np.ones((2, 3)))


# --- the acceptance program: rows appended by concatenation, a count known at run time -------------

GROW = f"""
def @grow(%i: {I}, %acc: {T('?', 3)}, %row: {T(1, 3)}) -> {T('?', 3)} {{
  if %i <= 0 then %acc else @grow(%i - 1, @concatenate(%acc, @tanh(%row * 1.5f64), axis=0), @tanh(%row))
}}
def @main(%x: {T(1, 3)}, %w: {T('?', 3)}, %n: {I}) -> {F} {{
  let %rows = @grow(%n, %x, %x) in
  @sum(%rows * %rows * %w)
}}
def @vg(%x: {T(1, 3)}, %w: {T('?', 3)}, %n: {I}) {{ Grad(@main)(%x, %w, %n) }}
"""


def _grow_numpy(x: np.ndarray, w: np.ndarray, n: int) -> float:
    rows, row = [x], x
    for _ in range(n):
        rows.append(np.tanh(row * 1.5))
        row = np.tanh(row)
    acc = np.concatenate(rows)
    return float(np.sum(acc * acc * w))


@pytest.mark.parametrize("n", [0, 3])
def test_a_growing_loop_runs_and_differentiates(n: int) -> None:
    module = relayish.parse(GROW)
    assert "Shape(?, 3)" in relayish.astext(relayish.infer_types(module))
    rng = np.random.default_rng(n)
    x, w = rng.uniform(-1, 1, (1, 3)), rng.uniform(-1, 1, (n + 1, 3))
    assert both(module, "main", x, w, np.int32(n)) == pytest.approx(_grow_numpy(x, w, n), rel=1e-12)
    check_grad(module, [x, w, np.int32(n)])  # the evaluator's Grad against finite differences
    jit_vg = relayish.compile(module, "vg", tiered=False)
    check_grad(module, [x, w, np.int32(n)], grad=lambda *a: jit_vg(*a))


def test_a_broadcast_against_unknown_sums_its_adjoint_at_run_time() -> None:
    """(?, 3) * (?, 3) with sizes 1 and 4: the adjoint of the first is summed to one row, which
    the types could not say (a static optimizer must not drop the sum)."""
    src = f"""
def @f(%a: {T('?', 3)}, %b: {T('?', 3)}) -> {F} {{ @sum(@exp(%a) * %b + %a) }}
def @g(%a: {T('?', 3)}, %b: {T('?', 3)}) {{ Grad(@f)(%a, %b) }}
"""
    module = relayish.parse(src)
    a, b = np.full((1, 3), 0.5), np.arange(12.0).reshape(4, 3)
    value, (ga, gb) = both(module, "g", a, b)
    assert ga.shape == (1, 3) and gb.shape == (4, 3)
    np.testing.assert_allclose(ga, np.exp(a) * b.sum(0, keepdims=True) + 4, rtol=1e-12)
    check_grad(module, [a, b], name="f")


def test_the_frontend_writes_any() -> None:
    from relayish import Any, Float, Int, Tensor, relay

    @relay
    def grow(x: Tensor[Float, (1, 3)], n: Int) -> Float:
        acc: Tensor[Float, (Any, 3)] = x
        i = 0
        while i < n:
            acc = relay.concatenate(acc, relay.tanh(x * 1.5), axis=0)
            i = i + 1
        return relay.sum(acc * acc)

    x = np.array([[0.1, 0.2, -0.3]], np.float32)
    assert "Shape(?, 3)" in str(grow.ir)
    assert grow(x, np.int32(3)) == pytest.approx(grow.python(x, np.int32(3)), rel=1e-6)
    value, (gx, _) = relay.grad(grow)(x, np.int32(3))
    expected = 2 * x * (1 + 3 * 1.5 * (1 - np.tanh(1.5 * x) ** 2) * np.tanh(1.5 * x) / x)
    np.testing.assert_allclose(gx, expected, rtol=1e-5)


def test_a_check_around_a_tail_call_applies_to_what_the_loop_returns_elsewhere() -> None:
    """The check wraps only the branch that calls itself; the loop ends in the other branch, whose
    value is still the result of the checked call."""
    src = f"""
def @down(%i: {I}, %a: {T('?', 3)}) -> {T('?', 3)} {{
  if %i > 0 then ({T(2, 3)}) @down(%i - 1, %a) else @concatenate(%a, %a, axis=0)
}}
"""
    module = relayish.parse(src, "d.rly")
    np.testing.assert_array_equal(both(module, "down", np.int32(0), np.ones((3, 3))), np.ones((6, 3)))
    np.testing.assert_array_equal(both(module, "down", np.int32(2), np.ones((1, 3))), np.ones((2, 3)))
    with pytest.raises(relayish.RelayRuntimeError, match=r"d.rly:3:\d+: expected .*Shape\(2, 3\).*dimension 0 must be 2"):
        both(module, "down", np.int32(2), np.ones((3, 3)))


def test_a_function_defined_in_a_checked_tail_returns_its_own_value() -> None:
    """The check of @main's result (its body has ?) belongs to @main: a closure built inside that tail
    (here Grad's expansion) returns its own value unchecked (found by generated programs)."""
    src = f"""def @main(%x: {F}) -> {T(2)} {{
  ({T('?')}) tensor(FloatType(64), Shape(2), [-0.25, 2.0]) + Grad(fn (%f: {F}) {{ %x * %f }})(%x)[0]
}}"""
    module = relayish.parse(src)
    expected = np.array([-0.25, 2.0]) + 0.81
    for opt_level in (0, 3):
        np.testing.assert_allclose(relayish.compile(module, "main", opt_level=opt_level, tiered=False)(np.float64(0.9)),
                                   expected, rtol=1e-12)
    np.testing.assert_allclose(relayish.evaluate(module, "main", np.float64(0.9)), expected, rtol=1e-12)
