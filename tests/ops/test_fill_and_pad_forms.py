"""Relay's forms of pad, one_hot and the fill operators: pad's ``pad_mode`` (edge, reflect),
one_hot's ``on_value``, ``off_value`` and ``axis``, and the fill value of ``full`` and
``full_like`` as a scalar tensor argument.

Oracles, independent of the records: pad element by element (each output position read from
its clamped or mirrored source position), one_hot from rows of an identity matrix (np.eye, a row
of zeros for an index out of range) moved into place with np.moveaxis, full as np.full of the
value converted with astype. Values move without arithmetic, so results are exact. The
lowerings (edge and reflect padding, one_hot's other forms, the tensor fill value) are run by
the JIT (``relayish.compile``) and compared with the evaluator; their gradients against central
finite differences (``check_grad``), second order too.
"""

from __future__ import annotations

import itertools
import math
from typing import Any

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import relayish
from relayish import Float64, Tensor, relay
from relayish.errors import RelayTypeError
from relayish.expr import Call, Function, Op, Var
from relayish.module import Module
from relayish.ops import get_op
from relayish.testing import check_grad
from relayish.types import FloatType, Shape, TensorType
from tests.ops.drawn import draw_call
from typecheck import infer

from .helpers import arrays, shapes
from tests.ad.support import directional_gradient

F64 = FloatType(64)
NAN, INF = math.nan, math.inf


# pad -------------------------------------------------------------------------------------------


def padded_by_hand(x: np.ndarray, widths: tuple[int, ...], mode: str) -> np.ndarray:
    """Each output element read from x at its source position: per axis, a position before the
    start goes to 0 (edge) or to its mirror -p (reflect), one past the end to n - 1 (edge) or to
    2(n - 1) - p (reflect)."""
    shape = tuple(n + widths[2 * a] + widths[2 * a + 1] for a, n in enumerate(x.shape))
    out = np.empty(shape, x.dtype)
    for index in itertools.product(*(range(n) for n in shape)):
        source = []
        for a, i in enumerate(index):
            n, p = x.shape[a], i - widths[2 * a]
            if p < 0:
                p = 0 if mode == "edge" else -p
            elif p >= n:
                p = n - 1 if mode == "edge" else 2 * (n - 1) - p
            source.append(p)
        out[index] = x[tuple(source)]
    return out


@st.composite
def pad_calls(draw: Any) -> tuple[np.ndarray, tuple[int, ...], str]:
    """An array and widths its mode can pad: reflect widths below each size."""
    mode = draw(st.sampled_from(("edge", "reflect")))
    x = draw(arrays(draw(st.sampled_from((np.float32, np.int8, np.bool_))), shapes(0, 3, 1, 4)))
    widths = []
    for n in x.shape:
        top = n - 1 if mode == "reflect" else 3
        widths += [draw(st.integers(0, top)), draw(st.integers(0, top))]
    return x, tuple(widths), mode


@given(call=pad_calls())
def test_pad_modes_match_the_element_by_element_oracle(call: tuple) -> None:
    x, widths, mode = call
    result = get_op("pad")(x, pad_width=widths, pad_mode=mode, pad_value=7)  # pad_value is ignored
    expected = padded_by_hand(x, widths, mode)
    assert result.dtype == x.dtype
    np.testing.assert_array_equal(result, expected)
    if x.ndim:  # and the oracle is NumPy's
        np.testing.assert_array_equal(expected, np.pad(x, list(zip(widths[::2], widths[1::2])), mode=mode))


def test_pad_modes_on_a_small_example() -> None:
    x = np.array([[1, 2, 3], [4, 5, 6]])
    np.testing.assert_array_equal(get_op("pad")(x, pad_width=(1, 1, 2, 2), pad_mode="reflect"),
                                  [[6, 5, 4, 5, 6, 5, 4], [3, 2, 1, 2, 3, 2, 1], [6, 5, 4, 5, 6, 5, 4],
                                   [3, 2, 1, 2, 3, 2, 1]])
    np.testing.assert_array_equal(get_op("pad")(x, pad_width=(0, 1, 2, 0), pad_mode="edge"),
                                  [[1, 1, 1, 2, 3], [4, 4, 4, 5, 6], [4, 4, 4, 5, 6]])


@pytest.mark.parametrize("x, widths, mode, message", [
    (np.ones((2, 3)), (0, 0, 3, 0), "reflect",
     r"pad: reflect padding of dimension 1 of Shape\(2, 3\) by \(3, 0\) needs each width below the size 3"),
    (np.ones((1,)), (0, 1), "reflect", "needs each width below the size 1"),
    (np.ones((0, 2)), (1, 0, 0, 0), "edge",
     r"pad: edge padding of dimension 0 of Shape\(0, 2\) by \(1, 0\) repeats the end elements of the dimension, which"),
    (np.ones(2), (1, 1), "wrap", "pad: pad_mode must be one of 'constant', 'edge', 'reflect', not 'wrap'"),
])
def test_pad_modes_refuse_what_they_cannot_pad(x: np.ndarray, widths: tuple, mode: str, message: str) -> None:
    with pytest.raises(ValueError, match=message):
        get_op("pad")(x, pad_width=widths, pad_mode=mode)


def test_pad_modes_pad_nothing_on_an_empty_axis_or_a_scalar() -> None:
    np.testing.assert_array_equal(get_op("pad")(np.ones((0, 2)), pad_width=(0, 0, 1, 1), pad_mode="edge"),
                                  np.ones((0, 4)))
    assert get_op("pad")(np.array(5), pad_width=(), pad_mode="reflect") == 5


# one_hot ---------------------------------------------------------------------------------------


def one_hot_by_eye(indices: np.ndarray, depth: int, on: float, off: float, axis: int, dtype: Any) -> np.ndarray:
    """Rows of np.eye (a zero row for an index out of range) mapped to on and off, the depth axis
    moved from last to ``axis``."""
    rows = np.vstack([np.eye(depth), np.zeros((1, depth))])
    inside = (indices >= 0) & (indices < depth)
    hot = rows[np.where(inside, indices, depth).astype(np.int64)] == 1
    dtype = np.dtype(dtype)
    with np.errstate(invalid="ignore"):
        on_value, off_value = np.float64(on).astype(dtype), np.float64(off).astype(dtype)
    return np.moveaxis(np.where(hot, on_value, off_value), -1, axis)


@given(indices=arrays(np.int32, shapes(0, 3, 0, 3), lo=-2, hi=5), depth=st.integers(0, 4),
       on=st.sampled_from((1.0, 0.0, -2.5, 3.0, NAN, INF)), off=st.sampled_from((0.0, -0.0, 1.0, -1.0, 2.5)),
       dtype=st.sampled_from((np.float32, np.float64, np.int8, np.uint8, np.bool_)), data=st.data())
def test_one_hot_matches_the_identity_matrix_oracle(indices: np.ndarray, depth: int, on: float, off: float,
                                                     dtype: Any, data: st.DataObject) -> None:
    axis = data.draw(st.integers(-indices.ndim - 1, indices.ndim), label="axis")
    if np.dtype(dtype).kind in "iub" and not (math.isfinite(on) and on >= 0):
        on = 2.0  # inf, nan and negative numbers have no agreed integer conversion
    result = get_op("one_hot")(indices, depth=depth, on_value=on, off_value=off, axis=axis,
                               dtype=np.dtype(dtype).name)
    expected = one_hot_by_eye(indices, depth, on, off, axis, dtype)
    assert result.dtype == np.dtype(dtype) and result.shape == expected.shape
    np.testing.assert_array_equal(result, expected)
    np.testing.assert_array_equal(np.signbit(result), np.signbit(expected))  # -0.0 stays -0.0


def test_one_hot_axis_out_of_range_fails() -> None:
    with pytest.raises(ValueError, match="one_hot: axis -4 is out of range for the depth axis of a result of rank 3"):
        get_op("one_hot")(np.zeros((2, 2), np.int32), depth=2, axis=-4)


# full and full_like ----------------------------------------------------------------------------


@pytest.mark.parametrize("fill, dtype", [(np.array(2.7), "int32"), (np.array(-1.5, np.float32), "float64"),
                                         (np.array(True), "float32"), (np.array(300, np.int64), "uint8"),
                                         (np.array(0.25), "bool"), (np.array(NAN, np.float32), "float16")])
def test_a_fill_tensor_is_converted_as_astype_converts(fill: np.ndarray, dtype: str) -> None:
    expected = np.full((2, 3), fill.astype(dtype))
    result = get_op("full")(fill, shape=(2, 3), dtype=dtype)
    assert result.dtype == np.dtype(dtype)
    np.testing.assert_array_equal(result, expected)
    like = np.zeros((3, 1), dtype)
    result = get_op("full_like")(like, fill)
    assert result.dtype == np.dtype(dtype)
    np.testing.assert_array_equal(result, np.full((3, 1), fill.astype(dtype)))


def test_the_attribute_forms_are_unchanged() -> None:
    np.testing.assert_array_equal(get_op("full")(shape=(2,)), np.zeros(2, np.float32))
    np.testing.assert_array_equal(get_op("full")(shape=(2,), fill_value=-3, dtype="int8"), np.full(2, -3, np.int8))
    np.testing.assert_array_equal(get_op("full_like")(np.ones(3, np.int32), fill_value=2.9), [2, 2, 2])


@pytest.mark.parametrize("name, args, attrs, message", [
    ("full", [np.array(1.0)], {"shape": (2,), "fill_value": 0.0},
     "full: the fill value is given twice: as argument 1 and as the attribute fill_value 0.0; give one"),
    ("full", [np.ones(2)], {"shape": (2,)},
     r"full: argument 1 \(the fill value\) must be a scalar of rank 0, not of shape Shape\(2\)"),
    ("full_like", [np.ones(2), np.array(1.0)], {"fill_value": 1.0}, "full_like: the fill value is given twice"),
    ("full_like", [np.ones(2)], {}, "full_like: needs a fill value: the attribute fill_value or a scalar tensor"),
    ("full_like", [np.ones(2), np.ones((1, 1))], {}, r"full_like: argument 2 \(the fill value\) must be a scalar"),
])
def test_fill_values_given_twice_none_or_not_scalar_fail(name: str, args: list, attrs: dict, message: str) -> None:
    with pytest.raises(ValueError, match=message):
        get_op(name)(*args, **attrs)


# types -----------------------------------------------------------------------------------------


def typed(signature: str, body: str) -> Any:
    """The result type of ``body`` in a function of ``signature`` (n a dimension variable)."""
    return infer(relayish.parse(f"def @main[n: Dim]({signature}) {{ {body} }}"))["main"].ret_type


X = "%x: Tensor(FloatType(32), Shape(n, 3))"
I = "%i: Tensor(IntType(8), Shape(n, 2))"
V = "%v: Tensor(IntType(64), Shape())"


@pytest.mark.parametrize("signature, body, expected", [
    (X, '@pad(%x, pad_width=(0, 0, 2, 1), pad_mode="reflect")', "Tensor(FloatType(32), Shape(n, 6))"),
    (X, '@pad(%x, pad_width=(0, 0, 4, 0), pad_mode="edge")', "Tensor(FloatType(32), Shape(n, 7))"),
    (X, '@pad(%x, pad_width=(1, 2, 0, 0))', "Tensor(FloatType(32), Shape(n + 3, 3))"),
    (I, "@one_hot(%i, depth=4)", "Tensor(FloatType(32), Shape(n, 2, 4))"),
    (I, "@one_hot(%i, depth=4, axis=0, on_value=3, dtype=IntType(8))", "Tensor(IntType(8), Shape(4, n, 2))"),
    (I, "@one_hot(%i, depth=4, axis=1)", "Tensor(FloatType(32), Shape(n, 4, 2))"),
    (I, "@one_hot(%i, depth=4, axis=-3)", "Tensor(FloatType(32), Shape(4, n, 2))"),
    (V, "@full(%v, shape=(2, 3), dtype=BoolType)", "Tensor(BoolType, Shape(2, 3))"),
    (f"{X}, {V}", "@full_like(%x, %v)", "Tensor(FloatType(32), Shape(n, 3))"),
])
def test_relations_give_the_result_types(signature: str, body: str, expected: str) -> None:
    assert str(typed(signature, body)) == expected


@pytest.mark.parametrize("signature, body, message", [
    (X, '@pad(%x, pad_width=(1, 0, 0, 0), pad_mode="edge")',
     "@pad: edge padding of dimension 0 of Shape(n, 3) by (1, 0) needs a static size, not n"),
    (X, '@pad(%x, pad_width=(0, 0, 0, 3), pad_mode="reflect")',
     "@pad: reflect padding of dimension 1 of Shape(n, 3) by (0, 3) needs each width below the size 3"),
    ("%x: Tensor(FloatType(32), Shape(0, 3))", '@pad(%x, pad_width=(0, 1, 0, 0), pad_mode="edge")',
     "edge padding of dimension 0 of Shape(0, 3) by (0, 1) repeats the end elements of the dimension, which is empty"),
    (X, '@pad(%x, pad_width=(0, 0, 0, 1), pad_mode="symmetric")',
     "pad_mode must be one of 'constant', 'edge', 'reflect', not 'symmetric'"),
    (I, "@one_hot(%i, depth=4, axis=3)", "axis 3 is out of range for the depth axis of a result of rank 3"),
    (I, "@one_hot(%i, depth=4, axis=-4)", "axis -4 is out of range"),
    (V, "@full(%v, shape=(2,), fill_value=0)", "the fill value is given twice: as argument 1 and as the attribute"),
    (X, "@full(%x, shape=(2,))", "argument 1 (the fill value) must be a scalar of rank 0, not of shape Shape(n, 3)"),
    (X, "@full_like(%x)", "needs a fill value: the attribute fill_value or a scalar tensor as argument 2"),
    (X, "@full_like(%x, %x)", "argument 2 (the fill value) must be a scalar of rank 0"),
    (f"{X}, {V}", "@full_like(%x, %v, fill_value=1)", "the fill value is given twice: as argument 2"),
    (f"{X}, {V}", "@full(%v, %v, shape=(2,))", "takes 0 to 1 arguments, not 2"),
])
def test_relations_refuse_clearly(signature: str, body: str, message: str) -> None:
    with pytest.raises(RelayTypeError) as err:
        typed(signature, body)
    assert message in str(err.value)


# text ------------------------------------------------------------------------------------------


ROUND_TRIP = f"""
def @main[n: Dim]({X}, {I}, {V}) {{
  (@pad(%x, pad_width=(0, 0, 2, 1), pad_value=-1.5, pad_mode="reflect"), @pad(%x, pad_width=(0, 0, 1, 1), pad_mode="edge"),
   @one_hot(%i, depth=3, on_value=-0.0, off_value=nan, axis=0, dtype=FloatType(64)), @full(%v, shape=(2,)),
   @full(shape=(1,), fill_value=0.0), @full_like(%x, %v), @full_like(%x, fill_value=inf))
}}
"""


def test_the_new_forms_print_and_parse_back() -> None:
    module = relayish.parse(ROUND_TRIP)
    text = str(module)
    for part in ('pad_mode="reflect"', "pad_value=-1.5", "on_value=-0.0", "off_value=nan", "axis=0",
                 "@full(%v, shape=(2,))", "@full(shape=(1,), fill_value=0.0)", "@full_like(%x, %v)"):
        assert part in text, part
    again = relayish.parse(text)
    assert relayish.alpha_equal(again["main"], module["main"])
    assert str(again) == text


# the JIT ---------------------------------------------------------------------------------------


RNG = np.random.default_rng(5)
PROGRAMS = {
    "float32 and converted fills": (
        """
        def @main(%x: Tensor(FloatType(32), Shape(3, 4)), %i: Tensor(IntType(32), Shape(2, 3)),
                  %v: Tensor(FloatType(64), Shape()), %b: Tensor(BoolType, Shape())) {
          (@pad(%x, pad_width=(2, 1, 3, 3), pad_mode="reflect"), @pad(%x, pad_width=(0, 2, 5, 1), pad_mode="edge"),
           @pad(%x, pad_width=(1, 0, 0, 2), pad_value=2.5), @one_hot(%i, depth=4, axis=1, on_value=-1, off_value=0.5),
           @one_hot(%i, depth=3, axis=0), @one_hot(%i, depth=5, on_value=nan, dtype=FloatType(64)),
           @full(%v, shape=(2, 3), dtype=IntType(8)), @full(%b, shape=(3,)), @full(shape=(2,)), @full(%v, shape=()),
           @full_like(%x, %v), @full_like(%i, %b), @full_like(%x, fill_value=-2))
        }
        """,
        [RNG.normal(size=(3, 4)).astype(np.float32), np.array([[0, 3, -1], [5, 2, 1]], np.int32), np.array(-2.75),
         np.array(True)],
    ),
    "integers, bools and a symbolic batch": (
        """
        def @main[n: Dim](%x: Tensor(IntType(8), Shape(n, 3)), %m: Tensor(BoolType, Shape(2, 2, n)),
                          %i: Tensor(UIntType(8), Shape(n)), %s: Tensor(UIntType(8), Shape())) {
          (@pad(%x, pad_width=(0, 0, 2, 2), pad_mode="reflect"), @pad(%m, pad_width=(1, 1, 0, 1, 0, 0), pad_mode="edge"),
           @one_hot(%i, depth=3, axis=-2, on_value=7, off_value=-3, dtype=IntType(16)),
           @one_hot(%i, depth=2, axis=0, dtype=BoolType), @full_like(%x, %s), @full(%s, shape=(2,)))
        }
        """,
        [np.array([[1, -128, 127], [0, 5, -3]], np.int8), RNG.random((2, 2, 2)) < 0.5, np.array([2, 9], np.uint8),
         np.array(200, np.uint8)],
    ),
}


@pytest.mark.parametrize("name", sorted(PROGRAMS))
def test_compiled_programs_agree_with_the_evaluator(name: str) -> None:
    src, args = PROGRAMS[name]
    module = relayish.parse(src)
    expected = relayish.evaluate(module, "main", *args)
    actual = relayish.compile(module, "main", tiered=False)(*args)
    assert len(actual) == len(expected)
    for got, want in zip(actual, expected):
        assert got.dtype == want.dtype and got.shape == want.shape
        np.testing.assert_array_equal(got, want)


# gradients -------------------------------------------------------------------------------------


def loss(name: str, args: list[np.ndarray], attrs: dict[str, Any], result: np.ndarray) -> Module:
    """``@main(args..., w) = sum(op(args...) * w)``."""
    params = [Var(f"a{i}", TensorType(F64, Shape(*a.shape))) for i, a in enumerate(args)]
    weights = Var("w", TensorType(F64, Shape(*result.shape)))
    body = Call(Op("sum"), [Call(Op("mul"), [Call(Op(name), params, attrs), weights])])
    return Module({"main": Function([*params, weights], body, TensorType(F64, Shape()))})


GRADIENT_CASES = [
    ("pad", [RNG.normal(size=(3, 4))], {"pad_width": (2, 1, 3, 2), "pad_mode": "reflect"}),
    ("pad", [RNG.normal(size=(2, 3))], {"pad_width": (1, 3, 0, 2), "pad_mode": "edge"}),
    ("pad", [RNG.normal(size=(1, 2, 2))], {"pad_width": (0, 0, 1, 0, 1, 1), "pad_mode": "reflect"}),
    ("full", [np.array(0.7)], {"shape": (2, 3), "dtype": F64}),
    ("full_like", [RNG.normal(size=(3, 2)), np.array(-1.3)], {}),
]


@pytest.mark.parametrize("case", GRADIENT_CASES, ids=lambda case: f"{case[0]}-{case[2].get('pad_mode', 'fill')}")
def test_gradients_match_finite_differences(case: tuple) -> None:
    name, args, attrs = case
    result = get_op(name)(*args, **attrs)
    check_grad(loss(name, args, attrs, result), [*args, RNG.uniform(-1, 1, size=result.shape)])


@pytest.mark.parametrize("case", GRADIENT_CASES, ids=lambda case: f"{case[0]}-{case[2].get('pad_mode', 'fill')}")
def test_second_derivatives_match_finite_differences(case: tuple) -> None:
    """The gradient of ``sum(d/d a_last (sum(op(args...) * w)) * v)``: the second derivatives
    (through take_backward, sum_to), against finite differences of the first gradient."""
    name, args, attrs = case
    result = get_op(name)(*args, **attrs)
    first = loss(name, args, attrs, result)
    module = directional_gradient(first, len(args) - 1)  # pad's x, the fill value
    check_grad(module, [*args, RNG.uniform(-1, 1, size=result.shape), RNG.uniform(-1, 1, size=args[-1].shape)])


def test_the_fill_adjoint_is_the_sum_of_g_in_the_fill_dtype() -> None:
    """float64 g into a float32 fill value: the sum, converted back; x gets zeros."""
    src = """
    def @f(%x: Tensor(FloatType(64), Shape(2, 3)), %v: Tensor(FloatType(32), Shape()), %w: Tensor(FloatType(64), Shape(2, 3))) {
      @sum(@full_like(%x, %v) * %w) + @sum(@full(%v, shape=(4,), dtype=FloatType(64)))
    }
    def @main(%x: Tensor(FloatType(64), Shape(2, 3)), %v: Tensor(FloatType(32), Shape()), %w: Tensor(FloatType(64), Shape(2, 3))) {
      Grad(@f)(%x, %v, %w)
    }
    """
    w = RNG.normal(size=(2, 3))
    args = (RNG.normal(size=(2, 3)), np.array(1.5, np.float32), w)
    module = relayish.parse(src)
    for run in (lambda *a: relayish.evaluate(module, "main", *a), relayish.compile(module, "main", tiered=False)):
        _, (gx, gv, _) = run(*args)
        assert gv.dtype == np.float32 and gv.shape == ()
        np.testing.assert_allclose(gv, np.float32(w.sum() + 4), rtol=1e-6)
        assert not gx.any()


@settings(max_examples=15)
@given(data=st.binary(min_size=64, max_size=64), symbolic=st.booleans(), seed=st.integers(0, 2**32 - 1))
def test_gradient_of_drawn_fill_calls_matches_finite_differences(data: bytes, symbolic: bool, seed: int) -> None:
    """full and full_like as their rules draw them (tensor fill values included), in float64."""
    for name in ("full", "full_like"):
        drawn = draw_call(name, data, symbolic, (F64,))
        if drawn is None:
            continue
        rng = np.random.default_rng(seed)
        sizes = drawn.sizes(rng)
        args = [rng.normal(size=shape) for shape in drawn.shapes(sizes)]
        if not np.all(np.isfinite(get_op(name)(*args, **drawn.plan.attrs))):
            continue  # a fill_value of inf or nan: no derivative in the weights
        check_grad(drawn.weighted_loss(), [*args, rng.uniform(-1, 1, size=drawn.out_shape(sizes))])


# the generator ---------------------------------------------------------------------------------


def test_the_rules_draw_every_new_form() -> None:
    """Over many draws: each pad mode, one_hot's axes and values, and both fill forms."""
    seen: set[str] = set()
    rng = np.random.default_rng(0)
    for _ in range(400):
        data = rng.bytes(64)
        for name in ("pad", "one_hot", "full", "full_like"):
            drawn = draw_call(name, data, symbolic=False)
            if drawn is None:
                continue
            attrs, arity = drawn.plan.attrs, len(drawn.plan.args)
            seen.add(f"{name} mode {attrs.get('pad_mode', 'constant')}" if name == "pad" else name)
            if name == "one_hot":
                seen |= {f"one_hot {k}" for k in ("axis", "on_value") if k in attrs}
            if name in ("full", "full_like"):
                seen.add(f"{name} {'tensor' if arity == (1 if name == 'full' else 2) else 'attribute'}")
    assert {"pad mode constant", "pad mode edge", "pad mode reflect", "one_hot axis", "one_hot on_value",
            "full tensor", "full attribute", "full_like tensor", "full_like attribute"} <= seen


# the frontend ----------------------------------------------------------------------------------


@relay
def fills_and_pads(x: Tensor[Float64, (2, 3)], v: Float64) -> tuple[
        Tensor[Float64, (4, 5)], Tensor[Float64, (2, 3)], Tensor[Float64, (3, 2)], Tensor[Float64, (2, 3)]]:
    padded = relay.pad(x, pad_width=(1, 1, 1, 1), pad_mode="reflect")
    return padded, relay.full_like(x, v), relay.full(v, shape=(3, 2), dtype=Float64), relay.full_like(x, 2.5)


@relay
def fill_loss(x: Tensor[Float64, (2, 3)], v: Float64) -> Float64:
    return relay.sum(relay.full_like(x, v) * x) + relay.sum(relay.pad(x, pad_width=(0, 1, 2, 0), pad_mode="edge"))


def test_the_frontend_calls_the_new_forms() -> None:
    x, v = RNG.normal(size=(2, 3)), np.float64(-0.5)
    padded, like, full, literal = fills_and_pads(x, v)
    np.testing.assert_array_equal(padded, padded_by_hand(x, (1, 1, 1, 1), "reflect"))
    np.testing.assert_array_equal(like, np.full((2, 3), v))
    np.testing.assert_array_equal(full, np.full((3, 2), v))
    np.testing.assert_array_equal(literal, np.full((2, 3), 2.5))
    for got, want in zip(fills_and_pads.python(x, v), (padded, like, full, literal)):
        np.testing.assert_array_equal(got, want)
    value, (gx, gv) = relay.grad(fill_loss)(x, v)
    assert np.isclose(value, v * x.sum() + padded_by_hand(x, (0, 1, 2, 0), "edge").sum())
    assert np.isclose(gv, x.sum())
    edge_counts = np.bincount(np.clip(np.arange(-2, 3), 0, 2), minlength=3)  # columns read by the edge pad
    np.testing.assert_allclose(gx, v + np.outer([1, 2], edge_counts))


def test_errors_name_the_operator_at_run_time() -> None:
    """Outside @relay the operator runs its NumPy semantics; a typed program is refused before."""
    with pytest.raises(ValueError, match="pad: reflect padding of dimension 0"):
        relay.pad(np.ones(2), pad_width=(2, 0), pad_mode="reflect")
    module = relayish.parse('def @main(%x: Tensor(FloatType(32), Shape(2))) { @pad(%x, pad_width=(2, 0), pad_mode="reflect") }')
    with pytest.raises(RelayTypeError, match=r"@pad: reflect padding of dimension 0 of Shape\(2\) by \(2, 0\)"):
        relayish.evaluate(module, "main", np.ones(2, np.float32))
    with pytest.raises(RelayTypeError, match="@full: the fill value is given twice"):
        relayish.evaluate(relayish.parse("def @main(%v: Tensor(FloatType(32), Shape())) "
                                         "{ @full(%v, shape=(2,), fill_value=1) }"), "main", np.float32(1))
