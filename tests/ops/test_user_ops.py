"""Operators registered from Python (relayish/ops/user.py) and declared in the text by their
relation: typed by the library's relations, run by the evaluator and the JIT (checked against
NumPy), differentiated through the user's vjp (checked against finite differences)."""

import numpy as np
import pytest

import relayish
from relayish.testing import check_grad

V = "Tensor(FloatType(64), Shape(3))"
M = "Tensor(FloatType(64), Shape(2, 1))"


def hypot_vjp(g, a, b):
    h = np.hypot(a, b)
    return g * a / h, g * b / h


@pytest.fixture
def hypot():
    relayish.register_operator("hypot", np.hypot, relation="broadcast", vjp=hypot_vjp, doc="sqrt(a^2 + b^2)")
    yield
    relayish.unregister_operator("hypot")


PROGRAM = f"""
def @f(%a: {V}, %b: {M}) -> Tensor(FloatType(64), Shape()) {{ @sum(@hypot(%a, %b) * %a) }}
def @g(%a: {V}, %b: {M}) {{ Grad(@f)(%a, %b) }}
"""


def test_a_registered_operator_types_runs_and_differentiates(hypot) -> None:
    module = relayish.parse(PROGRAM)
    typed = relayish.infer_types(module)
    assert "@hypot(%a, %b) * %a" in relayish.astext(typed)
    a, b = np.array([3.0, 1.0, -2.0]), np.array([[4.0], [0.5]])
    expected = np.sum(np.hypot(a, b) * a)
    assert relayish.evaluate(module, "f", a, b) == pytest.approx(expected, rel=1e-15)
    assert relayish.compile(module, "f", tiered=False)(a, b) == pytest.approx(expected, rel=1e-15)
    check_grad(module, [a, b], name="f")
    jit_g = relayish.compile(module, "g", tiered=False)
    check_grad(module, [a, b], name="f", grad=lambda *args: jit_g(*args))


def test_the_relation_types_calls(hypot) -> None:
    with pytest.raises(relayish.RelayTypeError, match="@hypot: cannot broadcast"):
        relayish.infer_types(relayish.parse(f"def @f(%a: {V}, %b: Tensor(FloatType(64), Shape(2))) {{ @hypot(%a, %b) }}"))
    with pytest.raises(relayish.RelayTypeError, match="dtypes differ"):
        relayish.infer_types(relayish.parse(f"def @f(%a: {V}, %b: Tensor(FloatType(32), Shape(3))) {{ @hypot(%a, %b) }}"))


def test_an_implementation_that_breaks_its_relation_is_caught() -> None:
    relayish.register_operator("narrow", lambda a: a.astype(np.float32), relation="elementwise")
    try:
        module = relayish.parse(f"def @f(%a: {V}) {{ @narrow(%a) }}", "n.rly")
        message = r"n.rly:1:\d+: @narrow in @f: its implementation returned float32 \(3,\), but its relation gives float64 \(3,\)"
        with pytest.raises(relayish.RelayRuntimeError, match=message):
            relayish.evaluate(module, "f", np.ones(3))
        with pytest.raises(relayish.RelayRuntimeError, match=message):
            relayish.compile(module, "f", tiered=False)(np.ones(3))
    finally:
        relayish.unregister_operator("narrow")


def test_a_relation_of_ones_own() -> None:
    from relayish.ir import Shape, TensorType

    def outer(args, attrs):
        a, b = args
        return TensorType(a.dtype, Shape(*a.shape.dims, *b.shape.dims))

    relayish.register_operator("outer", np.multiply.outer, relation=outer, num_args=2)
    try:
        module = relayish.parse(f"def @f(%a: {V}, %b: {M}) {{ @outer(%a, %b) }}")
        assert "Shape(3, 2, 1)" in relayish.astext(relayish.infer_types(module))
        a, b = np.arange(3.0), np.ones((2, 1))
        np.testing.assert_array_equal(relayish.compile(module, "f", tiered=False)(a, b), np.multiply.outer(a, b))
    finally:
        relayish.unregister_operator("outer")


def test_without_a_vjp_there_is_no_gradient() -> None:
    relayish.register_operator("cube", lambda a: a ** 3, relation="elementwise")
    try:
        module = relayish.parse(f"def @f(%a: {V}) -> Tensor(FloatType(64), Shape()) {{ @sum(@cube(%a)) }}\n"
                                f"def @g(%a: {V}) {{ Grad(@f)(%a) }}")
        with pytest.raises(relayish.RelayTypeError, match="cube"):
            relayish.evaluate(module, "g", np.ones(3))
    finally:
        relayish.unregister_operator("cube")


@pytest.mark.parametrize("name, kwargs, message", [
    ("add", {"relation": "broadcast"}, "standard operator"),
    ("no good", {"relation": "broadcast"}, "must be an identifier"),
    ("f", {"relation": "sideways"}, "unknown relation 'sideways'"),
    ("f", {"relation": "broadcast", "num_args": 3}, "takes 2 arguments, not 3"),
    ("f", {"relation": lambda args, attrs: args[0]}, "come with num_args"),
])
def test_bad_registrations_are_refused(name: str, kwargs: dict, message: str) -> None:
    with pytest.raises(relayish.RelayError, match=message):
        relayish.register_operator(name, np.negative, **kwargs)


DECLARED = f"""operator @hypot : relation broadcast

def @f(%a: {V}, %b: {M}) {{
  @hypot(%a, %b)
}}
"""


def test_a_text_declaration_by_relation() -> None:
    module = relayish.parse(DECLARED)
    assert relayish.astext(module) == DECLARED
    assert relayish.alpha_equal(relayish.parse(relayish.astext(module)), module)
    typed = relayish.infer_types(module)
    assert "-> Tensor(FloatType(64), Shape(2, 3))" in relayish.astext(typed)
    with pytest.raises(relayish.RelayRuntimeError, match="declared but has no implementation"):
        relayish.evaluate(module, "f", np.ones(3), np.ones((2, 1)))
    with pytest.raises(relayish.ParseError, match="unknown relation sideways"):
        relayish.parse("operator @f : relation sideways\n")
    with pytest.raises(relayish.RelayTypeError, match="@hypot takes 2 arguments, not 1"):
        relayish.infer_types(relayish.parse(DECLARED.replace("@hypot(%a, %b)", "@hypot(%a)")))


def test_a_text_declaration_runs_once_the_implementation_is_registered(hypot) -> None:
    module = relayish.parse(DECLARED)
    a, b = np.arange(3.0), np.ones((2, 1))
    np.testing.assert_array_equal(relayish.evaluate(module, "f", a, b), np.hypot(a, b))
    np.testing.assert_array_equal(relayish.compile(module, "f", tiered=False)(a, b), np.hypot(a, b))


def test_registering_again_replaces_the_operator_and_its_vjp() -> None:
    from relayish.ops.registry import lookup_op

    relayish.register_operator("hypot", np.hypot, relation="broadcast", vjp=hypot_vjp)
    try:
        assert lookup_op("hypot_vjp") is not None
        relayish.register_operator("hypot", np.hypot, relation="broadcast")
        assert lookup_op("hypot").gradient is None and lookup_op("hypot_vjp") is None
    finally:
        relayish.unregister_operator("hypot")
