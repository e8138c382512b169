"""The composite operators' lowerings against their NumPy semantics, and the JIT against both.

Oracle: each record's ``compute`` (tests/ops/test_composite.py holds it to NumPy). A call is
expanded with ``ad.lowered`` (what AD and the JIT run), and the
evaluator runs the expansion (primitive operators only) and the call itself (``compute``):
the two must agree, on calls the generator's rules draw (random attributes, symbolic
dimensions, every default dtype, values with nan and infinities mixed in) and on special
cases written here. Each expansion must be complete (expanding it again changes nothing). Float
tolerance: ``rtol * (|expected| + 8 * M**2)`` with M the largest finite input magnitude
(rtol float16 1e-2, float32 1e-5, float64 1e-12): the lowering and NumPy accumulate in other
orders, and variance-like sums scale with the squares of the inputs. Integers, bools, nan and
infinities are exact.

The compiled programs (``relayish.compile``, which expands lowered operators before it
optimizes) are compared with the evaluator on a few programs that call every composite
operator, with special values (each compiles for about a minute with a cold kernel cache).
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import ad
import relayish
from relayish.expr import Call, Function, Op, Var
from relayish.module import Module
from relayish.ops import all_ops, get_op, lookup_op
from relayish.ops.expand import expand_lowered, has_lowered
from tests.ops.drawn import draw_call
from relayish.traverse import post_order
from relayish.types import Shape, TensorType
from typecheck import expr_types, infer

COMPOSITE = [name for name, op in all_ops().items() if op.lowering is not None]  # partial lowerings too
RTOL = {np.dtype(np.float16): 1e-2, np.dtype(np.float32): 1e-5, np.dtype(np.float64): 1e-12}


def expanded(module: Module) -> Module:
    """``module`` type-checked with every lowered operator replaced by its lowering."""
    return ad.lowered(infer(module))


def operators(module: Module) -> set[str]:
    return {n.callee.name for fn in module.functions.values() for n in post_order(fn)
            if isinstance(n, Call) and isinstance(n.callee, Op)}


def assert_primitive(module: Module) -> None:
    """Only registered operators, none of which a lowering would replace any more."""
    types = expr_types(module)
    assert expand_lowered(module, lambda e: types[id(e)]) is module
    for name in operators(module):
        assert lookup_op(name) is not None, name


def assert_agree(actual: Any, expected: Any, inputs: list[np.ndarray]) -> None:
    if isinstance(expected, tuple):  # split's parts
        assert isinstance(actual, tuple) and len(actual) == len(expected), (actual, expected)
        for got, want in zip(actual, expected):
            assert_agree(got, want, inputs)
        return
    actual, expected = np.asarray(actual), np.asarray(expected)
    assert actual.dtype == expected.dtype and actual.shape == expected.shape, (actual.dtype, actual.shape,
                                                                               expected.dtype, expected.shape)
    if expected.dtype.kind != "f":
        np.testing.assert_array_equal(actual, expected)
        return
    finite = [np.abs(a[np.isfinite(a)]).astype(np.float64) for a in inputs if a.dtype.kind == "f"]
    big = max((float(f.max()) for f in finite if f.size), default=1.0)
    a, e = actual.astype(np.float64), expected.astype(np.float64)
    same = (a == e) | (np.isnan(a) & np.isnan(e))
    with np.errstate(invalid="ignore"):
        close = np.abs(a - e) <= RTOL[expected.dtype] * (np.abs(e) + 8 * big ** 2)
    ok = same | (np.isfinite(a) & np.isfinite(e) & close)
    assert ok.all(), f"lowering\n{actual}\ncompute\n{expected}"


def tensor_type(a: np.ndarray) -> TensorType:
    from relayish.types import BaseType

    return TensorType(BaseType.from_numpy(a.dtype), Shape(*a.shape))


def module_of(name: str, args: list[np.ndarray], attrs: dict[str, Any]) -> Module:
    params = [Var(f"a{i}", tensor_type(a)) for i, a in enumerate(args)]
    return Module({"main": Function(params, Call(Op(name), params, attrs))})


def check_lowering(name: str, args: list[np.ndarray], attrs: dict[str, Any]) -> None:
    module = module_of(name, args, attrs)
    lowered = expanded(module)
    assert_primitive(lowered)
    expected = relayish.evaluate(module, "main", *args)
    assert_agree(relayish.evaluate(lowered, "main", *args), expected, args)


# drawn calls ---------------------------------------------------------------------------------------


def values(rng: np.random.Generator, dtype: np.dtype, shape: tuple[int, ...], specials: bool) -> np.ndarray:
    """Normal floats (scale 3) with, sometimes, nan and infinities; integers over a small range
    that includes the extremes of an 8-bit type; bools."""
    if dtype.kind == "f":
        x = rng.normal(0, 3, size=shape)
        if specials:
            x = np.where(rng.random(shape) < 0.15, rng.choice([np.nan, np.inf, -np.inf], size=shape), x)
        return x.astype(dtype)
    if dtype.kind == "b":
        return rng.random(shape) < 0.5
    info = np.iinfo(dtype)
    pool = np.array([info.min, info.max, 0, 1, 2, 3] + ([-1, -2] if info.min < 0 else []))
    return rng.choice(pool, size=shape).astype(dtype)


@pytest.mark.parametrize("name", COMPOSITE)
@settings(max_examples=25)
@given(data=st.binary(min_size=64, max_size=64), symbolic=st.booleans(), specials=st.booleans(),
       seed=st.integers(0, 2**32 - 1))
def test_lowering_of_drawn_calls_agrees_with_compute(name: str, data: bytes, symbolic: bool, specials: bool,
                                                      seed: int) -> None:
    """The generator's rule draws a call; its result type is the relation's, the expansion is
    primitive and the evaluator gives the same on both."""
    drawn = draw_call(name, data, symbolic)
    if drawn is None:
        return
    module = drawn.module()
    assert infer(module)["main"].ret_type == drawn.target
    lowered = expanded(module)
    assert_primitive(lowered)
    rng = np.random.default_rng(seed)
    args = [values(rng, p.type_annotation.dtype.to_numpy(), shape, specials)
            for p, shape in zip(drawn.params, drawn.shapes(drawn.sizes(rng)))]
    try:
        expected = relayish.evaluate(module, "main", *args)
    except relayish.RelayRuntimeError:
        return  # e.g. an empty reduction of max: the rules never draw one, but sizes here may be 0
    assert_agree(relayish.evaluate(lowered, "main", *args), expected, args)


# special cases ---------------------------------------------------------------------------------------


NAN, INF = math.nan, math.inf
F32 = np.float32
SPECIAL = np.array([[NAN, -INF, INF, -3.0], [0.25, 7.0, -0.0, 0.0], [-INF, -INF, -INF, -INF], [INF, 1.0, 1.0, -2.0]],
                   F32)
CH = np.arange(1.0, 5.0, dtype=F32)
IMAGES = np.random.default_rng(1).normal(size=(2, 3, 4, 5)).astype(F32)
CASES = [
    ("clip", [SPECIAL], {"a_min": -1, "a_max": 2}),
    ("clip", [SPECIAL], {"a_min": 3, "a_max": 1}),
    ("clip", [np.array([-128, -1, 0, 5, 127], np.int8)], {"a_min": -1.5, "a_max": 2.9}),
    ("clip", [np.array([0, 3, 255], np.uint8)], {"a_min": -INF, "a_max": INF}),
    ("clip", [np.array([-5, 3, 9], np.int32)], {"a_min": NAN, "a_max": 4}),
    ("leaky_relu", [SPECIAL], {}),
    ("leaky_relu", [SPECIAL.astype(np.float16)], {"alpha": 0.3}),
    ("bias_add", [IMAGES, CH[:3]], {}),
    ("bias_add", [SPECIAL, CH], {"axis": -1}),
    ("bias_add", [np.arange(6, dtype=np.uint8).reshape(2, 3), np.array([250, 1], np.uint8)], {"axis": 0}),
    ("variance", [SPECIAL], {"axis": 1}),
    ("variance", [IMAGES], {"axis": 1, "exclude": True, "keepdims": True}),
    ("variance", [IMAGES], {"axis": (0, 2), "unbiased": True}),
    ("variance", [np.ones((3, 1))], {"axis": 1, "unbiased": True}),
    ("variance", [np.ones((3, 0))], {"axis": 1, "unbiased": True}),
    ("variance", [np.ones((3, 0))], {"axis": 1}),
    ("variance", [IMAGES], {"axis": ()}),
    ("std", [IMAGES.astype(np.float64)], {}),
    ("std", [IMAGES], {"axis": (0, 1, 2, 3), "exclude": True, "unbiased": True}),
    ("all", [np.array([[True, False], [True, True]])], {"axis": 1}),
    ("all", [np.zeros((2, 0), bool)], {"axis": 1, "keepdims": True}),
    ("any", [np.array([[True, False], [False, False]])], {}),
    ("any", [np.zeros((2, 0), bool)], {"axis": -1}),
    ("logsumexp", [SPECIAL], {"axis": 1}),
    ("logsumexp", [SPECIAL], {"axis": 0, "keepdims": True}),
    ("logsumexp", [SPECIAL[1:2]], {}),
    ("logsumexp", [np.array([1000.0, 1000.0, -1000.0])], {"keepdims": True}),
    ("logsumexp", [np.zeros((0, 3))], {"axis": 1}),
    ("argmin", [SPECIAL], {"axis": 1}),
    ("argmin", [SPECIAL[1:]], {}),
    ("argmin", [np.array([[5, -128, 127, -128]], np.int8)], {"axis": 1, "keepdims": True}),
    ("argmin", [np.array([255, 0, 7, 0], np.uint8)], {}),
    ("argmin", [np.array([np.iinfo(np.int64).min, 0, np.iinfo(np.int64).max])], {}),
    ("full_like", [SPECIAL], {"fill_value": NAN}),
    ("full_like", [np.zeros(3, np.int32)], {"fill_value": -2.7}),
    ("full_like", [np.zeros(3, bool)], {"fill_value": 0.5}),
    ("zeros", [], {"shape": (2, 3), "dtype": "int8"}),
    ("ones", [], {"shape": (), "dtype": "bool"}),
    ("arange", [], {"stop": 5}),
    ("arange", [], {"start": 2, "stop": -3, "step": -0.7, "dtype": "int32"}),
    ("arange", [], {"start": 1, "stop": 1}),
    ("tile", [SPECIAL[:2, :3]], {"reps": (2, 1, 3)}),
    ("tile", [SPECIAL[:2, :3]], {"reps": (0,)}),
    ("tile", [np.array(True)], {"reps": (3,)}),
    ("repeat", [SPECIAL[:2, :3]], {"repeats": 3, "axis": -1}),
    ("repeat", [SPECIAL[:2, :3]], {"repeats": 0, "axis": 0}),
    ("repeat", [SPECIAL[:2, :3]], {"repeats": 1, "axis": 0}),
    ("cumsum", [SPECIAL], {}),
    ("cumsum", [SPECIAL], {"axis": None, "exclusive": True}),
    ("cumsum", [np.array([[True, False, True], [True, True, False]])], {"axis": 1, "dtype": "int32"}),
    ("cumsum", [np.array([[100, 27], [-128, 127]], np.int8)], {"axis": 0, "dtype": "int16", "exclusive": True}),
    ("split", [SPECIAL], {"sections": 2, "axis": 1}),
    ("split", [SPECIAL[:, :3]], {"indices": (1,), "axis": -1}),
    ("split", [np.arange(24, dtype=np.int8).reshape(2, 3, 4)], {"indices": (1, 2), "axis": 1}),
    ("split", [np.zeros((2, 0), bool)], {"sections": 3, "axis": 1}),
    ("global_avg_pool2d", [IMAGES], {}),
    ("global_avg_pool2d", [np.zeros((1, 2, 0, 3), F32)], {}),
    ("global_max_pool2d", [IMAGES], {}),
    ("global_max_pool2d", [np.array([[[[1, 9], [-4, 2]]]], np.int32)], {}),
    ("layer_norm", [IMAGES, CH[:1].repeat(5), np.zeros(5, F32)], {}),
    ("layer_norm", [SPECIAL, CH, CH], {"axis": 0, "center": False, "epsilon": 0.1}),
    ("layer_norm", [IMAGES, CH[:3], CH[:3]], {"axis": 1, "scale": False}),
    ("batch_norm", [IMAGES, CH[:3], CH[:3], CH[:3], CH[:3]], {}),
    ("batch_norm", [IMAGES, CH[:3], CH[:3], CH[:3], CH[:3]], {"training": True}),
    ("batch_norm", [IMAGES, CH, CH, CH, -CH], {"axis": 2, "center": False}),
    ("batch_norm", [IMAGES[:, :, 0, 0], CH[:3], CH[:3], CH[:3], CH[:3]], {"training": True, "scale": False}),
    ("pad", [SPECIAL[:3, :3]], {"pad_width": (2, 1, 0, 2), "pad_mode": "reflect"}),
    ("pad", [SPECIAL], {"pad_width": (1, 3, 2, 0), "pad_mode": "edge", "pad_value": 5}),
    ("pad", [np.arange(6, dtype=np.int8).reshape(1, 2, 3)], {"pad_width": (0, 0, 1, 1, 2, 2), "pad_mode": "reflect"}),
    ("pad", [np.zeros((0, 2), bool)], {"pad_width": (0, 0, 1, 1), "pad_mode": "edge"}),
    ("one_hot", [np.array([[0, 2], [-1, 5]], np.int32)], {"depth": 3, "axis": 0}),
    ("one_hot", [np.array([0, 2, 7], np.uint8)], {"depth": 4, "on_value": NAN, "off_value": -INF}),
    ("one_hot", [np.array([[1, 0]], np.int64)], {"depth": 2, "axis": -2, "on_value": -2.7, "off_value": 100,
                                                 "dtype": "int8"}),
    ("one_hot", [np.array([1, 3], np.int32)], {"depth": 4, "off_value": -0.0}),
    ("one_hot", [np.array([1, 3], np.int32)], {"depth": 4, "on_value": 0.5, "dtype": "bool"}),
    ("full", [np.array(2.5, F32)], {"shape": (2, 3)}),
    ("full", [np.array(-1.7)], {"shape": (4,), "dtype": "int32"}),
    ("full", [np.array(NAN, F32)], {"shape": (), "dtype": "float16"}),
    ("full_like", [SPECIAL, np.array(3, np.int8)], {}),
    ("full_like", [np.zeros(3, bool), np.array(0.5)], {}),
    ("strided_slice", [SPECIAL], {"begin": (-6, 1), "end": (2, -1), "slice_mode": "size"}),
    ("strided_slice", [IMAGES], {"begin": (1, -2), "end": (9,), "strides": (2, 0), "axes": (3, 1), "slice_mode": "size"}),
    ("strided_slice", [IMAGES], {"begin": (1,), "end": (), "strides": (2, -1)}),
    ("strided_slice", [SPECIAL], {"begin": (0,), "end": (), "axes": (1,)}),
    ("take", [SPECIAL, np.array([[-5, 0], [3, 9]], np.int8)], {"axis": 1, "mode": "clip"}),
    ("take", [SPECIAL, np.array([0, 17, 2**63, 2**64 - 1], np.uint64)], {"mode": "wrap"}),
    ("take", [np.arange(6, dtype=np.int16).reshape(2, 3), np.array([np.iinfo(np.int64).min, -1, 5])],
     {"axis": -1, "mode": "wrap"}),
    ("take", [SPECIAL, np.array(200, np.uint8)], {"axis": 0, "mode": "clip"}),
    ("take", [np.zeros((0, 2), bool), np.zeros(0, np.int32)], {"axis": 0, "mode": "clip"}),
    ("conv2d", [IMAGES, IMAGES[:, :, :2, :2].reshape(6, 1, 2, 2)], {"groups": 3, "padding": 1}),
    ("conv2d", [SPECIAL.reshape(1, 2, 2, 4), SPECIAL[1:3, :2].reshape(4, 1, 1, 1)], {"groups": 2, "strides": (1, 2)}),
    ("conv2d", [np.full((1, 2, 3, 3), 100, np.int8), np.full((2, 2, 2, 2), -90, np.int8)], {"out_dtype": "int32"}),
    ("conv2d", [IMAGES, np.ones((4, 3, 2, 3), np.uint8)], {"dilation": 2, "out_dtype": "float64"}),
    ("conv2d_transpose", [IMAGES, IMAGES[:, :, :2, :3].reshape(3, 2, 2, 3)], {"strides": 2, "output_padding": 1,
                                                                             "padding": (1, 0)}),
    ("conv2d_transpose", [IMAGES, IMAGES[1, :, 1:, 1:4].reshape(3, 1, 3, 3)], {"groups": 3, "dilation": 2,
                                                                              "out_dtype": "float64"}),
    ("conv2d_transpose", [SPECIAL.reshape(1, 1, 4, 4), np.ones((1, 2, 2, 2), F32)], {"strides": 3, "output_padding": 2}),
    ("conv2d_transpose", [np.full((1, 2, 2, 2), 120, np.int8), np.full((2, 1, 2, 2), 3, np.int8)],
     {"groups": 2, "out_dtype": "int16"}),
]


def _case_id(case: tuple) -> str:
    return case[0]


def test_every_composite_operator_has_special_cases() -> None:
    assert {case[0] for case in CASES} == set(COMPOSITE)


@pytest.mark.parametrize("case", CASES, ids=_case_id)
def test_lowering_agrees_with_compute_on_special_cases(case: tuple) -> None:
    name, args, attrs = case
    try:
        get_op(name)(*args, **attrs)
    except ValueError:  # an empty reduction of max: the expansion raises as well
        module = module_of(name, args, attrs)
        with pytest.raises(relayish.RelayRuntimeError):
            relayish.evaluate(expanded(module), "main", *args)
        return
    check_lowering(name, args, attrs)


@pytest.mark.parametrize("case", CASES, ids=_case_id)
def test_expansion_is_complete(case: tuple) -> None:
    """The expansion replaces the call as written (a partial lowering may call its operator in a
    primitive form: one_hot's plain call), and nothing in it expands further (``ad.lowered``
    repeats its rounds until then)."""
    name, args, attrs = case
    module = module_of(name, args, attrs)
    assert has_lowered(module["main"])
    lowered = expanded(module)
    assert_primitive(lowered)
    written = module["main"].body.attrs
    assert not any(isinstance(n, Call) and isinstance(n.callee, Op) and n.callee.name == name and n.attrs == written
                   for n in post_order(lowered["main"]))


def test_argmin_of_the_smallest_integer_does_not_wrap() -> None:
    """neg(-128) is -128 in int8: argmax(neg(x)) would pick the 127; the complement picks -128."""
    x = np.array([127, -128, 0], np.int8)
    lowered = expanded(module_of("argmin", [x], {}))
    assert "neg" not in operators(lowered)
    assert relayish.evaluate(lowered, "main", x) == 1


SYMBOLIC = """
def @main[n: Dim](%x: Tensor(FloatType(64), Shape(n, 3, 2, 2)), %c: Tensor(FloatType(64), Shape(3)),
                  %v: Tensor(FloatType(64), Shape(n))) {
  (@bias_add(%x, %c), @variance(%x, axis=1, exclude=true, unbiased=true), @logsumexp(%x, axis=(1, 2)),
   @global_max_pool2d(%x), @global_avg_pool2d(%x), @batch_norm(%x, %c, %c, %c, %c, training=true),
   @layer_norm(%x, %v, %v, axis=0), @tile(%x, reps=(2, 1, 1, 1, 2)), @repeat(%x, repeats=2, axis=-1),
   @argmin(%x, axis=0), @std(%x), @clip(%x, a_min=-0.5, a_max=0.5), @full_like(%x, fill_value=3))
}
"""


def symbolic_args(batch: int) -> list[np.ndarray]:
    rng = np.random.default_rng(batch)
    return [rng.normal(size=(batch, 3, 2, 2)), rng.uniform(0.5, 2, size=3), rng.normal(size=batch)]


def test_symbolic_batch_lowers() -> None:
    """Lowerings keep a symbolic batch dimension where the relation allows one."""
    module = relayish.parse(SYMBOLIC)
    lowered = expanded(module)
    assert_primitive(lowered)
    assert infer(module)["main"].ret_type == lowered["main"].ret_type
    for batch in (1, 3):
        args = symbolic_args(batch)
        for got, want in zip(relayish.evaluate(lowered, "main", *args), relayish.evaluate(module, "main", *args)):
            assert_agree(got, want, args)


# compiled ----------------------------------------------------------------------------------------------


COMPILED = {
    "float32": (
        """
        def @main(%x: Tensor(FloatType(32), Shape(4, 4)), %c: Tensor(FloatType(32), Shape(4)),
                  %im: Tensor(FloatType(32), Shape(2, 3, 4, 5)), %k: Tensor(FloatType(32), Shape(3)),
                  %g: Tensor(FloatType(32), Shape(5))) {
          (@clip(%x, a_min=-1, a_max=2), @leaky_relu(%x, alpha=0.2), @bias_add(%x, %c, axis=0),
           @variance(%x, axis=1), @std(%im, axis=1, exclude=true, unbiased=true), @logsumexp(%x, axis=1),
           @logsumexp(%x, axis=0, keepdims=true), @argmin(%x, axis=1), @argmin(%x), @full_like(%x, fill_value=-2.5),
           @zeros(shape=(2, 2)), @ones(shape=(3,), dtype=FloatType(64)), @arange(start=1, stop=4, step=0.5),
           @tile(%x, reps=(2, 1, 2)), @repeat(%x, repeats=2, axis=0), @global_avg_pool2d(%im),
           @global_max_pool2d(%im), @layer_norm(%im, %g, %g, axis=-1),
           @batch_norm(%im, %k, %k, %k, %k), @batch_norm(%im, %k, %k, %k, %k, training=true, center=false))
        }
        """,
        [SPECIAL, CH, IMAGES, CH[:3], np.linspace(0.5, 2, 5, dtype=F32)],
    ),
    "integers and bools": (
        """
        def @main(%i: Tensor(IntType(8), Shape(2, 4)), %j: Tensor(IntType(8), Shape(4)),
                  %u: Tensor(UIntType(8), Shape(4)), %b: Tensor(BoolType, Shape(2, 3))) {
          (@clip(%i, a_min=-1.5, a_max=2.9), @argmin(%i, axis=1), @argmin(%u), @bias_add(%i, %j, axis=1),
           @all(%b, axis=1), @any(%b), @any(%b, axis=0, keepdims=true), @full_like(%b, fill_value=1),
           @tile(%b, reps=(2,)), @repeat(%u, repeats=3, axis=0), @arange(start=5, stop=-5, step=-3, dtype=IntType(8)),
           @zeros(shape=(2,), dtype=UIntType(8)))
        }
        """,
        [np.array([[5, -128, 127, -128], [0, 1, 2, 3]], np.int8), np.array([1, -1, 100, 127], np.int8),
         np.array([255, 0, 7, 0], np.uint8), np.array([[True, False, True], [True, True, True]])],
    ),
    "float64, symbolic batch": (SYMBOLIC, symbolic_args(3)),
}


@pytest.mark.parametrize("name", sorted(COMPILED))
def test_compiled_agrees_with_the_evaluator(name: str) -> None:
    src, args = COMPILED[name]
    module = relayish.parse(src)
    expected = relayish.evaluate(module, "main", *args)
    actual = relayish.compile(module, "main", tiered=False)(*args)
    assert len(actual) == len(expected)
    for got, want in zip(actual, expected):
        assert_agree(got, want, list(args))
