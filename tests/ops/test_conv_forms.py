"""conv2d's groups and out_dtype, conv2d_transpose, and conv2d_backward_input without like.

Oracles, written here from the definitions and never from the library: a grouped convolution
as a loop over every output element and kernel tap (output channel f of group g reads input
channels g * C/groups ... of the image); a transposed convolution as the scatter of every input
pixel times the kernel into the output at the pixel's position times the strides, less the
padding. Both accumulate in float64 (floats, compared with helpers.assert_close, scaled by the
same loops over absolute values) or exactly in int64 (integers). out_dtype converts both inputs
before the products (Relay's meaning): its oracle is the loops on converted inputs.

Then: the types the relations give (symbolic batch and image sizes included) and their errors,
errors at run time, the lowerings (``ad.lowered``: what the JIT and AD run) against the
evaluator and the number of calls and kernels they need (depthwise convolutions of hundreds of
channels), the generator rules, the CPU kernel of conv2d_backward_input without like, the JIT
(``relayish.compile``) against the evaluator, and gradients against finite differences
(``check_grad``), second order on small cases. CUDA: tests/cuda/test_cuda_conv_forms.py.
"""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import ad
import relayish
from relayish.errors import AttributeSchemaError, RelayRuntimeError, RelayTypeError
from relayish.expr import Call, Function, GlobalVar, Grad, Op, Var
from relayish.module import Module
from relayish.ops import get_op
from relayish.testing import check_grad
from relayish.traverse import post_order
from relayish.types import BaseType, FloatType, IntType, Kind, Shape, TensorType, Type, TypeVar, UIntType
from tests.jit.test_nn_kernels import PRODUCT_RTOL, SETTINGS, check, laid_out, seeds, values as kernel_values
from tests.ops.drawn import draw_call
from typecheck import infer

from .helpers import assert_close
from tests.ad.support import directional_gradient

F32, F64, I8, I32, U8 = FloatType(32), FloatType(64), IntType(8), IntType(32), UIntType(8)
n, h = (TypeVar(name, Kind.DIM) for name in "nh")
RNG = np.random.default_rng(21)


# oracles ------------------------------------------------------------------------------------------


def grouped_conv_loops(x: np.ndarray, w: np.ndarray, strides: Any, padding: Any, dilation: Any, groups: int
                       ) -> np.ndarray:
    """Every output element by its definition: the taps of its window over its group's channels;
    ``padding`` is (height, width) or (top, left, bottom, right)."""
    batch, _, height, width = x.shape
    out_channels, group_channels, kh, kw = w.shape
    per_group = out_channels // groups
    sides = tuple(padding) if len(padding) == 4 else (*padding, *padding)
    oh, ow = ((size + before + after - d * (k - 1) - 1) // s + 1
              for size, k, s, before, after, d in zip((height, width), (kh, kw), strides, sides[:2], sides[2:], dilation))
    out = np.zeros((batch, out_channels, oh, ow), np.float64 if x.dtype.kind == "f" else np.int64)
    for b, f, i, j in np.ndindex(batch, out_channels, oh, ow):
        first = f // per_group * group_channels
        for c, p, q in np.ndindex(group_channels, kh, kw):
            row = i * strides[0] + p * dilation[0] - sides[0]
            col = j * strides[1] + q * dilation[1] - sides[1]
            if 0 <= row < height and 0 <= col < width:
                out[b, f, i, j] += x[b, first + c, row, col] * w[f, c, p, q]
    return out


def transposed_size(size: int, k: int, stride: int, pad: int, dilation: int, extra: int) -> int:
    return (size - 1) * stride - 2 * pad + dilation * (k - 1) + extra + 1


def transposed_conv_scatter(x: np.ndarray, w: np.ndarray, strides: Any, padding: Any, dilation: Any,
                            output_padding: Any, groups: int) -> np.ndarray:
    """Each input pixel times the kernel, added at its position times the strides less the padding
    (what falls outside the output is cropped); input channel c feeds its group's outputs."""
    batch, channels, height, width = x.shape
    _, per_group, kh, kw = w.shape
    size = [transposed_size(*axis) for axis in zip((height, width), (kh, kw), strides, padding, dilation,
                                                   output_padding)]
    out = np.zeros((batch, per_group * groups, *size), np.float64 if x.dtype.kind == "f" else np.int64)
    for b, c, i, j in np.ndindex(batch, channels, height, width):
        first = c // (channels // groups) * per_group
        for f, p, q in np.ndindex(per_group, kh, kw):
            row = i * strides[0] + p * dilation[0] - padding[0]
            col = j * strides[1] + q * dilation[1] - padding[1]
            if 0 <= row < size[0] and 0 <= col < size[1]:
                out[b, first + f, row, col] += x[b, c, i, j] * w[c, f, p, q]
    return out


# drawn cases --------------------------------------------------------------------------------------


@st.composite
def axis_attrs(draw: Any) -> tuple[int, int, int, int]:
    """(kernel, stride, padding, dilation) along one axis."""
    return (draw(st.integers(1, 3)), draw(st.integers(1, 3)), draw(st.integers(0, 2)), draw(st.integers(1, 2)))


@st.composite
def grouped_cases(draw: Any) -> tuple[tuple[int, ...], tuple[int, ...], dict[str, Any]]:
    """x's shape, w's shape (OIHW, I = C / groups) and attributes for which every window fits."""
    groups, per_in, per_out, batch = (draw(st.integers(1, k)) for k in (3, 2, 2, 2))
    axes = [draw(axis_attrs()) for _ in range(2)]
    sizes = []
    for k, _, pad, dil in axes:
        smallest = max(1, dil * (k - 1) + 1 - 2 * pad)
        sizes.append(draw(st.integers(smallest, smallest + 3)))
    (kh, sh, ph, dh), (kw, sw, pw, dw) = axes
    padding: tuple[int, ...] = (ph, pw)
    if draw(st.booleans()):  # Relay's (top, left, bottom, right), the same total on each axis
        top, left = draw(st.integers(0, 2 * ph)), draw(st.integers(0, 2 * pw))
        padding = (top, left, 2 * ph - top, 2 * pw - left)
    attrs = {"strides": (sh, sw), "padding": padding, "dilation": (dh, dw), "groups": groups}
    return (batch, groups * per_in, *sizes), (groups * per_out, per_in, kh, kw), attrs


@st.composite
def transposed_cases(draw: Any) -> tuple[tuple[int, ...], tuple[int, ...], dict[str, Any]]:
    """x's shape, w's shape (C, O / groups, KH, KW) and attributes with an output of size >= 0."""
    groups, per_in, per_out, batch = (draw(st.integers(1, k)) for k in (3, 2, 2, 2))
    axes, sizes, extras = [], [], []
    for _ in range(2):
        k, stride, pad, dil = draw(axis_attrs())
        extra = draw(st.integers(0, stride - 1))
        size = draw(st.integers(1, 3))
        while transposed_size(size, k, stride, pad, dil, extra) < 0:  # the padding crops more than there is
            size += 1
        axes.append((k, stride, pad, dil))
        sizes.append(size)
        extras.append(extra)
    (kh, sh, ph, dh), (kw, sw, pw, dw) = axes
    attrs = {"strides": (sh, sw), "padding": (ph, pw), "dilation": (dh, dw), "output_padding": tuple(extras),
             "groups": groups}
    return (batch, groups * per_in, *sizes), (groups * per_in, per_out, kh, kw), attrs


def values(dtype: np.dtype, shape: tuple[int, ...]) -> np.ndarray:
    if dtype.kind == "f":
        return RNG.normal(size=shape).astype(dtype)
    return RNG.integers(-100, 100, size=shape).astype(dtype)


def check_against(actual: np.ndarray, oracle: Any, x: np.ndarray, w: np.ndarray, dtype: np.dtype) -> None:
    """``actual`` (of ``dtype``) against ``oracle(x, w)`` in float64 or int64, floats scaled by the
    oracle on absolute values (the size of the terms it added)."""
    expected = oracle(x, w)
    if dtype.kind == "f":
        assert_close(actual, expected, dtype, scale=oracle(np.abs(x.astype(np.float64)), np.abs(w.astype(np.float64))))
    else:
        assert_close(actual, expected.astype(dtype), dtype)


# semantics ----------------------------------------------------------------------------------------


@settings(max_examples=40)
@given(case=grouped_cases(), dtype=st.sampled_from([np.dtype(np.float32), np.dtype(np.float64), np.dtype(np.int32)]))
def test_grouped_conv2d_matches_the_loops(case: Any, dtype: np.dtype) -> None:
    x_shape, w_shape, attrs = case
    x, w = values(dtype, x_shape), values(dtype, w_shape)
    oracle = lambda a, b: grouped_conv_loops(a, b, attrs["strides"], attrs["padding"], attrs["dilation"],
                                             attrs["groups"])
    check_against(get_op("conv2d")(x, w, **attrs), oracle, x, w, dtype)


@settings(max_examples=40)
@given(case=transposed_cases(), dtype=st.sampled_from([np.dtype(np.float32), np.dtype(np.float64), np.dtype(np.int32)]))
def test_conv2d_transpose_is_the_scatter_of_each_pixel_times_the_kernel(case: Any, dtype: np.dtype) -> None:
    x_shape, w_shape, attrs = case
    x, w = values(dtype, x_shape), values(dtype, w_shape)
    oracle = lambda a, b: transposed_conv_scatter(a, b, attrs["strides"], attrs["padding"], attrs["dilation"],
                                                  attrs["output_padding"], attrs["groups"])
    check_against(get_op("conv2d_transpose")(x, w, **attrs), oracle, x, w, dtype)


@settings(max_examples=25)
@given(case=transposed_cases())
def test_conv2d_transpose_is_the_adjoint_of_conv2d(case: Any) -> None:
    """<conv2d(y, w), x> = <y, conv2d_transpose(x, w)>: the same array w is conv2d's OIHW weight
    (O = x's channels) and conv2d_transpose's (C, O / groups, KH, KW)."""
    x_shape, w_shape, attrs = case
    x, w = RNG.normal(size=x_shape), RNG.normal(size=w_shape)
    out = get_op("conv2d_transpose")(x, w, **attrs)
    y = RNG.normal(size=out.shape)
    forward = {k: attrs[k] for k in ("strides", "padding", "dilation", "groups")}
    left, right = np.sum(get_op("conv2d")(y, w, **forward) * x), np.sum(y * out)
    assert abs(left - right) <= 1e-10 * (1 + np.sum(np.abs(y)) * np.sum(np.abs(w)) * np.abs(x).max())


@settings(max_examples=25)
@given(case=transposed_cases())
def test_conv2d_backward_input_without_like_is_its_form_with_like(case: Any) -> None:
    x_shape, w_shape, attrs = case
    g, w = RNG.normal(size=x_shape[:1] + w_shape[:1] + x_shape[2:]), RNG.normal(size=w_shape)
    forward = {k: attrs[k] for k in ("strides", "padding", "dilation")}
    unliked = get_op("conv2d_backward_input")(g, w, output_padding=attrs["output_padding"], **forward)
    like = np.zeros((x_shape[0], w_shape[1], *unliked.shape[2:]), np.int8)
    assert np.array_equal(unliked, get_op("conv2d_backward_input")(g, w, like, **forward))
    assert np.array_equal(unliked, get_op("conv2d_transpose")(g, w, output_padding=attrs["output_padding"], **forward))


def test_out_dtype_converts_the_inputs_before_the_products() -> None:
    """int8 products and sums beyond int8 are kept in int32; mixed input dtypes meet in out_dtype;
    floats convert to an integer out_dtype as cast converts (toward zero)."""
    x = np.full((1, 2, 3, 3), 100, np.int8)
    w = np.full((2, 1, 2, 2), -100, np.int8)
    got = get_op("conv2d")(x, w, groups=2, out_dtype=I32)
    assert got.dtype == np.int32 and (got == -40000).all()
    u = np.full((1, 1, 2, 2), 200, np.uint8)
    assert get_op("conv2d")(u, np.full((1, 1, 1, 1), -3, np.int8), out_dtype=I32).ravel().tolist() == [-600] * 4
    assert get_op("conv2d_transpose")(u, np.full((1, 1, 1, 1), -3, np.int8), out_dtype="int32").ravel().tolist() \
        == [-600] * 4
    f = np.array([[[[1.9, -2.7]]]])
    assert get_op("conv2d")(f, np.ones((1, 1, 1, 1)), out_dtype=I32).ravel().tolist() == [1, -2]
    x32, w32 = RNG.normal(size=(2, 3, 4, 4)).astype(np.float32), RNG.normal(size=(3, 1, 3, 3)).astype(np.float32)
    wide = get_op("conv2d")(x32, w32, groups=3, out_dtype=F64)
    assert wide.dtype == np.float64
    assert np.array_equal(wide, get_op("conv2d")(x32.astype(np.float64), w32.astype(np.float64), groups=3))


def test_depthwise_conv2d_matches_the_loops() -> None:
    """groups = C (each channel its own kernel), with a channel multiplier of 2."""
    x, w = RNG.normal(size=(2, 5, 6, 7)), RNG.normal(size=(10, 1, 3, 3))
    attrs = {"strides": (2, 1), "padding": (1, 1), "dilation": (1, 1)}
    assert_close(get_op("conv2d")(x, w, groups=5, **attrs), grouped_conv_loops(x, w, groups=5, **attrs), np.float64)


# types and errors ---------------------------------------------------------------------------------


def T(dtype: BaseType, *dims: Any) -> TensorType:
    return TensorType(dtype, Shape(*dims))


def relate(name: str, *args: Type, **attrs: Any) -> Type:
    op = get_op(name)
    return op.type_relation(list(args), op.full_attrs(op.normalize_attrs(attrs)))


TYPED = [
    ("conv2d", (T(F32, n, 6, 8, 8), T(F32, 9, 2, 3, 3)), {"groups": 3}, T(F32, n, 9, 6, 6)),
    ("conv2d", (T(F32, n, 4, h, 5), T(F32, 8, 1, 3, 3)), {"groups": 4, "padding": 1}, T(F32, n, 8, h, 5)),
    ("conv2d", (T(I8, n, 4, 5, 5), T(U8, 4, 1, 3, 3)), {"groups": 4, "out_dtype": I32}, T(I32, n, 4, 3, 3)),
    ("conv2d", (T(F32, 1, 2, 3, 3), T(F32, 2, 2, 1, 1)), {"out_dtype": "float64"}, T(F64, 1, 2, 3, 3)),
    ("conv2d", (T(F32, n, 3, h, 5), T(F32, 4, 3, 3, 3)), {"padding": (1, 0, 2, 1)}, T(F32, n, 4, h + 1, 4)),
    ("conv2d", (T(F32, n, 3, h, 5), T(F32, 4, 3, 3, 3)), {"padding": (1, 0, 1, 0)}, T(F32, n, 4, h, 3)),
    ("conv2d_transpose", (T(F32, n, 4, 5, 6), T(F32, 4, 3, 3, 3)), {}, T(F32, n, 3, 7, 8)),
    ("conv2d_transpose", (T(F32, n, 4, h, 5), T(F32, 4, 3, 3, 3)),
     {"strides": 2, "padding": 1, "output_padding": (1, 0), "groups": 2}, T(F32, n, 6, 2 * h, 9)),
    ("conv2d_transpose", (T(I8, 2, 4, 3, 3), T(I8, 4, 1, 2, 2)), {"strides": (3, 1), "dilation": 2, "out_dtype": I32},
     T(I32, 2, 1, 9, 5)),
    ("conv2d_transpose", (T(F64, n, 1, 1, 1), T(F64, 1, 1, 3, 3)), {"padding": 1}, T(F64, n, 1, 1, 1)),
    ("conv2d_backward_input", (T(F32, n, 4, h, 5), T(F32, 4, 3, 3, 3)), {"strides": 2, "output_padding": 1},
     T(F32, n, 3, 2 * h + 2, 12)),
]


@pytest.mark.parametrize("case", TYPED, ids=lambda case: case[0])
def test_result_types(case: tuple) -> None:
    name, args, attrs, expected = case
    assert relate(name, *args, **attrs) == expected


ILL_TYPED = [
    ("conv2d", (T(F32, n, 4, 8, 8), T(F32, 6, 2, 3, 3)), {"groups": 3},
     "conv2d expects 6 input channels (weight Shape(6, 2, 3, 3), groups 3) but the input has 4 (Shape(n, 4, 8, 8))"),
    ("conv2d", (T(F32, n, 4, 8, 8), T(F32, 6, 1, 3, 3)), {"groups": 4},
     "groups 4 must divide the 6 output channels of argument 2 Shape(6, 1, 3, 3)"),
    ("conv2d", (T(F32, 1, 4, 8, 8), T(F32, n, 2, 3, 3)), {"groups": 2},
     "argument 2 Shape(n, 2, 3, 3) needs static channel counts (dimensions 0 and 1) with groups 2"),
    ("conv2d", (T(F32, 1, 4, 8, 8), T(F32, 4, 4, 3, 3)), {"groups": 0}, "groups must be >= 1, not 0"),
    ("conv2d", (T(F32, 1, 4, 8, 8), T(F32, 4, 4, 3, 3)), {"padding": (0, 1, -1, 0)}, "padding (0, 1, -1, 0) must be >= 0"),
    ("conv2d", (T(F32, 1, 4, 2, 8), T(F32, 4, 4, 3, 3)), {"padding": (0, 0, 0, 1)},
     "kernel 3 is larger than the padded input 2 in dimension 2"),
    ("conv2d", (T(F32, 1, 4, 8, 8), T(F64, 4, 4, 3, 3)), {}, "dtypes differ: FloatType(32) vs FloatType(64)"),
    ("conv2d", (T(F32, 1, 4, 8, 8), T(F32, 4, 4, 3, 3)), {"out_dtype": "bool"},
     "out_dtype must be a numeric type, not BoolType"),
    ("conv2d_transpose", (T(F32, 1, 4, 5, 5), T(F32, 3, 2, 3, 3)), {},
     "argument 1 has 4 channels (Shape(1, 4, 5, 5)), but dimension 0 of argument 2 Shape(3, 2, 3, 3) is 3"),
    ("conv2d_transpose", (T(F32, 1, 4, 5, 5), T(F32, 4, 2, 3, 3)), {"strides": 2, "output_padding": 2},
     "output_padding (2, 2) must be >= 0 and below the strides (2, 2)"),
    ("conv2d_transpose", (T(F32, 1, 4, 1, 5), T(F32, 4, 2, 1, 1)), {"padding": 1},
     "padding (1, 1) leaves a negative output size -1 in dimension 2"),
    ("conv2d_transpose", (T(F32, n, 4, 0, 5), T(F32, 4, 2, 3, 3)), {},
     "argument 1 Shape(n, 4, 0, 5) has an empty image (dimension 2)"),
    ("conv2d_transpose", (T(F32, 1, 4, 5, 5), T(F32, 4, 2, 3, 3)), {"groups": 3},
     "groups 3 must divide the 4 input channels of argument 2 Shape(4, 2, 3, 3)"),
    ("conv2d_transpose", (T(F32, 1, 4, 5, 5), T(F32, 4, 2, 0, 3)), {}, "the kernel 0 x 3 must be at least 1 x 1"),
    ("conv2d_backward_input", (T(F32, 1, 4, 3, 3), T(F32, 4, 2, 3, 3), T(F32, 1, 2, 8, 8)),
     {"strides": 2, "output_padding": 1},
     "output_padding (1, 1) is for the form without like (argument 3 gives the shape)"),
]


@pytest.mark.parametrize("case", ILL_TYPED, ids=lambda case: case[0])
def test_type_errors_say_what_was_expected(case: tuple) -> None:
    name, args, attrs, message = case
    with pytest.raises(RelayTypeError) as info:
        relate(name, *args, **attrs)
    assert info.value.message == message


COMPUTE_ERRORS = [
    ("conv2d", [np.zeros((1, 4, 5, 5)), np.zeros((6, 2, 3, 3))], {"groups": 3}, ValueError,
     r"conv2d: input \(1, 4, 5, 5\) \(NCHW\) and weight \(6, 2, 3, 3\) \(OIHW\) do not match with groups 3"),
    ("conv2d", [np.zeros((1, 4, 5, 5)), np.zeros((4, 4, 3, 3))], {"groups": -1}, ValueError,
     "conv2d: groups must be >= 1, not -1"),
    ("conv2d", [np.zeros((1, 4, 5, 5)), np.zeros((4, 4, 3, 3), np.float32)], {}, TypeError,
     "conv2d needs x and w of one dtype"),
    ("conv2d", [np.zeros((1, 4, 5, 5)), np.zeros((4, 4, 3, 3))], {"out_dtype": "bool"}, TypeError,
     "conv2d: out_dtype must be numeric"),
    ("conv2d_transpose", [np.zeros((1, 4, 5, 5)), np.zeros((4, 2, 3, 3))], {"strides": 2, "output_padding": 2},
     ValueError, r"conv2d_transpose: output_padding \(2, 2\) must be >= 0 and below the strides \(2, 2\)"),
    ("conv2d_transpose", [np.zeros((1, 4, 1, 5)), np.zeros((4, 2, 1, 1))], {"padding": 1}, ValueError,
     r"conv2d_transpose: padding \(1, 1\) leaves a negative output size \(-1, 3\)"),
    ("conv2d_transpose", [np.zeros((1, 4, 0, 5)), np.zeros((4, 2, 3, 3))], {}, ValueError,
     r"conv2d_transpose: the input image \(0, 5\) is empty"),
    ("conv2d_transpose", [np.zeros((1, 4, 5, 5)), np.zeros((4, 2, 3, 3))], {"groups": 3}, ValueError,
     "conv2d_transpose: groups \\(3\\) must be >= 1 and divide the input's 4 channels"),
    ("conv2d_transpose", [np.zeros((1, 4, 5, 5)), np.zeros((3, 2, 3, 3))], {}, ValueError,
     r"conv2d_transpose: input \(1, 4, 5, 5\) \(NCHW\) and weight \(3, 2, 3, 3\)"),
    ("conv2d_backward_input", [np.zeros((1, 4, 3, 3)), np.zeros((4, 2, 3, 3)), np.zeros((1, 2, 8, 8))],
     {"strides": 2, "output_padding": 1}, ValueError, "output_padding .* is for the form without like"),
]


@pytest.mark.parametrize("case", COMPUTE_ERRORS, ids=lambda case: case[0])
def test_bad_arguments_raise_naming_the_operator(case: tuple) -> None:
    name, args, attrs, error, message = case
    with pytest.raises(error, match=message):
        get_op(name)(*args, **attrs)


SYMBOLIC_IMAGE = """
def @main[h: Dim](%x: Tensor(FloatType(64), Shape(1, 2, h, 3)), %w: Tensor(FloatType(64), Shape(2, 2, KH, 1))) {
  @conv2d_transpose(%x, %w, padding=PAD)
}
"""


@pytest.mark.parametrize("height, kernel, padding, evaluated, compiled", [
    (0, 3, 0, "has an empty image \\(dimension 2\\)", "kernel window does not fit in the padded input"),
    (1, 1, 1, "leaves a negative output size -1 in dimension 2", "a tensor of shape \\(1, 2, -1, 3\\) has a negative dimension"),
])
def test_sizes_known_only_at_run_time_fail_clearly(height: int, kernel: int, padding: int, evaluated: str,
                                                    compiled: str) -> None:
    """A symbolic image height the relation cannot check: the evaluator and the compiled program
    both raise RelayRuntimeError (the evaluator's from the relation run on the actual shapes before
    every call, the compiled one from the lowered conv2d_backward_input)."""
    module = relayish.parse(SYMBOLIC_IMAGE.replace("KH", str(kernel)).replace("PAD", f"({padding}, 0)"))
    args = (np.zeros((1, 2, height, 3)), np.ones((2, 2, kernel, 1)))
    with pytest.raises(RelayRuntimeError, match=f"conv2d_transpose.*{evaluated}"):
        relayish.evaluate(module, "main", *args)
    with pytest.raises(RelayRuntimeError, match=f"conv2d_backward_input.*{compiled}"):
        relayish.compile(module, "main", tiered=False)(*args)


# lowerings ----------------------------------------------------------------------------------------


def call_module(name: str, types: list[TensorType], attrs: dict[str, Any]) -> Module:
    params = [Var(f"a{i}", t) for i, t in enumerate(types)]
    return Module({"main": Function(params, Call(Op(name), params, attrs), None, (n, h))})


def calls(module: Module) -> list[Call]:
    return [e for e in post_order(module["main"]) if isinstance(e, Call) and isinstance(e.callee, Op)]


def test_relays_four_number_padding_is_canonical_and_checked() -> None:
    """Four numbers that pad both sides alike are their pair (one printed form); others stay four."""
    conv = get_op("conv2d")
    assert dict(conv.normalize_attrs({"padding": (1, 2, 1, 2)}))["padding"] == (1, 2)
    assert dict(conv.normalize_attrs({"padding": (1, 2, 3, 0)}))["padding"] == (1, 2, 3, 0)
    assert dict(conv.normalize_attrs({"padding": 3}))["padding"] == (3, 3)
    with pytest.raises(AttributeSchemaError, match=r"attribute 'padding' of operator conv2d must be an integer, a pair "
                                                   r"\(height, width\) or four integers \(top, left, bottom, right\), "
                                                   r"not \(1, 2, 3\)"):
        conv.normalize_attrs({"padding": (1, 2, 3)})
    with pytest.raises(ValueError, match=r"padding \(0, 0, -1, 0\) must be >= 0"):
        conv(np.zeros((1, 1, 3, 3)), np.zeros((1, 1, 1, 1)), padding=(0, 0, -1, 0))
    text = "def @f(%x: Tensor(FloatType(32), Shape(1, 1, 3, 3)), %w: Tensor(FloatType(32), Shape(1, 1, 2, 2))) {\n" \
           "  @conv2d(%x, %w, padding=(0, 1, 1, 0))\n}\n"
    assert relayish.astext(relayish.parse(text)) == text
    lowered = ad.lowered(infer(relayish.parse(text)))  # a pad, then the plain form AD and the kernels know
    calls = [(c.callee.name, c.attr_dict.get("padding")) for c in post_order(lowered["f"]) if isinstance(c, Call)]
    assert calls == [("pad", None), ("conv2d", None)]  # the default padding, left out


def test_plain_conv2d_is_kept_and_its_forms_are_lowered() -> None:
    plain = infer(call_module("conv2d", [T(F32, n, 2, 5, 5), T(F32, 3, 2, 3, 3)], {"padding": 1}))
    assert ad.lowered(plain) is plain
    cast = ad.lowered(infer(call_module("conv2d", [T(I8, n, 2, 5, 5), T(I32, 3, 2, 3, 3)], {"out_dtype": I32})))
    assert sorted(c.callee.name for c in calls(cast)) == ["cast", "conv2d"]
    transposed = ad.lowered(infer(call_module("conv2d_transpose", [T(F32, n, 2, 5, 5), T(F32, 2, 3, 3, 3)],
                                              {"strides": 2, "output_padding": 1})))
    (call,) = calls(transposed)
    assert call.callee.name == "conv2d_backward_input" and len(call.args) == 2
    assert transposed["main"].ret_type == T(F32, n, 3, 12, 12)


def lowered_calls(name: str, x: TensorType, w: TensorType, attrs: dict[str, Any]) -> list[Call]:
    return calls(ad.lowered(infer(call_module(name, [x, w], attrs))))


@pytest.mark.parametrize("multiplier", [1, 2])
def test_depthwise_conv2d_lowers_to_as_many_calls_whatever_the_channels(multiplier: int) -> None:
    """One input channel per group: a sum over the kernel taps of elementwise products (fused by
    the JIT), its calls as many for 16 channels as for 64."""
    attrs = {"strides": (2, 1), "padding": 1, "dilation": (1, 2)}
    counts = []
    for channels in (16, 64):
        found = lowered_calls("conv2d", T(F32, n, channels, 7, 8), T(F32, multiplier * channels, 1, 3, 2),
                              {"groups": channels, **attrs})
        assert "conv2d" not in {c.callee.name for c in found}
        counts.append(len(found))
    assert counts[0] == counts[1]


@pytest.mark.parametrize("name, x, w", [
    ("conv2d", T(F32, n, 128, 6, 6), T(F32, 64, 2, 3, 3)),
    ("conv2d", T(F32, n, 64, h, 6), T(F32, 64, 1, 3, 3)),  # depthwise, but a symbolic image: no slices
    ("conv2d_transpose", T(F32, n, 64, 6, 6), T(F32, 64, 2, 3, 3)),
])
def test_other_groups_lower_to_calls_of_a_few_kernels_whatever_the_groups(name: str, x: TensorType,
                                                                          w: TensorType) -> None:
    """64 groups: each group's channels by a take of constant indices and the parts joined two by
    two, so the calls need a handful of distinct kernels (a kernel is specialized to its operator,
    attributes and argument types), not one per group, and no 64-part concatenate."""
    found = lowered_calls(name, x, w, {"groups": 64, "padding": 1})
    kinds = {(c.callee.name, c.attrs) for c in found}  # the argument types: rank-4 float32 tensors
    assert len(kinds) <= 5, kinds
    assert all(len(c.args) == 2 for c in found if c.callee.name == "concatenate")


LOWERED = [
    ("conv2d", [(2, 6, 5, 4), (9, 2, 3, 2)], {"groups": 3, "strides": (2, 1), "padding": 1}),
    ("conv2d", [(2, 3, 5, 4), (6, 1, 3, 2)], {"groups": 3, "strides": (2, 1), "padding": (1, 2), "dilation": 2}),
    ("conv2d", [(1, 4, 4, 4), (4, 1, 2, 2)], {"groups": 4, "dilation": 2, "out_dtype": "float64"}),
    ("conv2d", [(2, 4, 5, 4), (6, 2, 3, 2)], {"groups": 2, "padding": (0, 2, 1, 0), "out_dtype": "float64"}),
    ("conv2d_transpose", [(2, 4, 3, 2), (4, 3, 3, 2)], {"groups": 2, "strides": 2, "output_padding": (1, 0)}),
    ("conv2d_transpose", [(1, 3, 2, 2), (3, 2, 2, 3)], {"dilation": (2, 1), "padding": (1, 0), "out_dtype": "float64"}),
]


@pytest.mark.parametrize("case", LOWERED, ids=lambda case: case[0])
def test_lowerings_agree_with_compute(case: tuple) -> None:
    name, shapes, attrs = case
    args = [RNG.normal(size=shape).astype(np.float32) for shape in shapes]
    module = call_module(name, [T(F32, *shape) for shape in shapes], attrs)
    expected = relayish.evaluate(module, "main", *args)
    got = relayish.evaluate(ad.lowered(infer(module)), "main", *args)
    assert got.dtype == expected.dtype and np.allclose(got, expected, rtol=1e-6, atol=1e-6)


# generator rules ----------------------------------------------------------------------------------

RULED = ["conv2d", "conv2d_transpose", "conv2d_backward_input"]


@pytest.mark.parametrize("name", RULED)
@settings(max_examples=30)
@given(data=st.binary(min_size=64, max_size=64), symbolic=st.booleans(), seed=st.integers(0, 2**32 - 1))
def test_rules_give_their_result_type(name: str, data: bytes, symbolic: bool, seed: int) -> None:
    """The rule's call has the wanted type (the relation says so) and the evaluator gives it."""
    drawn = draw_call(name, data, symbolic)
    if drawn is None:
        return
    module = drawn.module()
    assert infer(module)["main"].ret_type == drawn.target
    rng = np.random.default_rng(seed)
    sizes = drawn.sizes(rng)
    args = [rng.integers(-3, 4, size=shape).astype(p.type_annotation.dtype.to_numpy())
            for p, shape in zip(drawn.params, drawn.shapes(sizes))]
    out = relayish.evaluate(module, "main", *args)
    assert out.shape == drawn.out_shape(sizes) and out.dtype == drawn.target.dtype.to_numpy()


def test_rules_draw_every_form() -> None:
    """Over some draws: groups, out_dtype (with inputs of other dtypes), output_padding, and
    conv2d_backward_input without like."""
    rng = np.random.default_rng(0)
    seen: set[str] = set()
    for name in RULED:
        for _ in range(300):
            drawn = draw_call(name, rng.bytes(64), False)
            if drawn is None:
                continue
            attrs, params = drawn.plan.attrs, drawn.params
            seen.update(f"{name} {key}" for key in ("groups", "out_dtype") if attrs.get(key) not in (None, 1))
            if any(p.type_annotation.dtype != drawn.target.dtype for p in params[:2]):  # like: any dtype
                seen.add(f"{name} converted inputs")
            if attrs.get("output_padding") not in (None, 0, (0, 0)):
                seen.add(f"{name} output_padding")
            if name == "conv2d_backward_input" and len(params) == 2:
                seen.add(f"{name} without like")
    assert seen == {"conv2d groups", "conv2d out_dtype", "conv2d converted inputs", "conv2d_transpose groups",
                    "conv2d_transpose out_dtype", "conv2d_transpose converted inputs", "conv2d_transpose output_padding",
                    "conv2d_backward_input output_padding", "conv2d_backward_input without like"}


# compiled -----------------------------------------------------------------------------------------


UNLIKED_COMBOS = [
    ("float32", {}, "C"),
    ("float64", {"strides": 2, "padding": 1, "dilation": (1, 2), "output_padding": (1, 0)}, "A"),
    ("int32", {"strides": (3, 2), "padding": (2, 0), "dilation": 2, "output_padding": (2, 1)}, "C"),
]


@SETTINGS
@given(st.sampled_from(UNLIKED_COMBOS), st.data(), seeds)
def test_conv2d_backward_input_kernel_without_like(combo: tuple, data: Any, seed: int) -> None:
    """The CPU kernel against the reference (tests/jit/test_nn_kernels.py's ``check``), empty
    images and paddings that leave a negative size included: the same error class then."""
    dtype, attrs, layout = combo
    rng = np.random.default_rng(seed)
    batch, o, c = data.draw(st.integers(layout != "C", 2)), data.draw(st.integers(1, 3)), data.draw(st.integers(1, 3))
    image = (data.draw(st.integers(0, 4)), data.draw(st.integers(0, 4)))
    kernel_size = (data.draw(st.integers(1, 3)), data.draw(st.integers(1, 3)))
    g, w = kernel_values(rng, (batch, o, *image), dtype), kernel_values(rng, (o, c, *kernel_size), dtype)
    check("conv2d_backward_input", [laid_out(g, layout), laid_out(w, layout)], attrs, PRODUCT_RTOL)


PROGRAM = """
def @main[n: Dim](%x: Tensor(FloatType(32), Shape(n, 4, 5, 6)), %w: Tensor(FloatType(32), Shape(6, 2, 3, 3)),
                  %v: Tensor(FloatType(32), Shape(4, 3, 2, 3)), %i: Tensor(IntType(8), Shape(n, 4, 5, 6)),
                  %j: Tensor(UIntType(8), Shape(4, 1, 3, 3)), %d: Tensor(FloatType(32), Shape(8, 1, 3, 2))) {
  (@conv2d(%x, %w, groups=2, padding=1), @conv2d(%x, %w, groups=2, strides=2, dilation=(1, 2), out_dtype=FloatType(64)),
   @conv2d(%x, %d, groups=4, strides=(2, 1), dilation=(1, 2), padding=(1, 2)),
   @conv2d(%i, %j, groups=4, out_dtype=IntType(32)), @conv2d(%i, %j, groups=4, padding=(2, 0), out_dtype=FloatType(32)),
   @conv2d_transpose(%x, %v, strides=2, output_padding=(1, 0), groups=2, padding=1),
   @conv2d_transpose(%x, %v, strides=(2, 3), dilation=2), @conv2d_transpose(%i, %j, strides=2, out_dtype=IntType(32)),
   @conv2d_transpose(%x, %v, padding=(1, 2), out_dtype=FloatType(64)), @conv2d(%x, %d, groups=4, padding=(0, 1, 2, 0)))
}
"""


def program_args(batch: int) -> list[np.ndarray]:
    return [RNG.normal(size=(batch, 4, 5, 6)).astype(np.float32), RNG.normal(size=(6, 2, 3, 3)).astype(np.float32),
            RNG.normal(size=(4, 3, 2, 3)).astype(np.float32), RNG.integers(-128, 128, size=(batch, 4, 5, 6)).astype(np.int8),
            RNG.integers(0, 256, size=(4, 1, 3, 3)).astype(np.uint8), RNG.normal(size=(8, 1, 3, 2)).astype(np.float32)]


def assert_same_results(got: Any, want: Any) -> None:
    assert len(got) == len(want)
    for a, b in zip(got, want):
        a, b = np.asarray(a), np.asarray(b)
        assert a.dtype == b.dtype and a.shape == b.shape
        if b.dtype.kind == "f":
            assert np.allclose(a, b, rtol=1e-5, atol=1e-4), np.abs(a - b).max()
        else:
            assert np.array_equal(a, b)


def test_compiled_programs_agree_with_the_evaluator() -> None:
    """One compiled program over two batch sizes (the batch is symbolic)."""
    module = relayish.parse(PROGRAM)
    compiled = relayish.compile(module, "main", tiered=False)
    for batch in (1, 3):
        args = program_args(batch)
        assert_same_results(compiled(*args), relayish.evaluate(module, "main", *args))


GRADIENT = """
def @loss[n: Dim](%x: Tensor(FloatType(64), Shape(n, 4, 5, 4)), %w: Tensor(FloatType(64), Shape(4, 2, 3, 3)),
                  %v: Tensor(FloatType(64), Shape(4, 1, 2, 3))) {
  let %y = @conv2d(%x, %w, groups=2, padding=1) in
  let %z = @conv2d_transpose(%y, %v, groups=4, strides=2, output_padding=1) in
  @sum(@mul(%z, %z))
}

def @main[n: Dim](%x: Tensor(FloatType(64), Shape(n, 4, 5, 4)), %w: Tensor(FloatType(64), Shape(4, 2, 3, 3)),
                  %v: Tensor(FloatType(64), Shape(4, 1, 2, 3))) {
  Grad(@loss)(%x, %w, %v)
}
"""


def test_compiled_gradients_agree_with_the_evaluator() -> None:
    module = relayish.parse(GRADIENT)
    args = [RNG.normal(size=(2, 4, 5, 4)), RNG.normal(size=(4, 2, 3, 3)), RNG.normal(size=(4, 1, 2, 3))]
    (value, grads) = relayish.compile(module, "main", tiered=False)(*args)
    (want, wanted) = relayish.evaluate(module, "main", *args)
    assert np.allclose(value, want, rtol=1e-12)
    for a, b in zip(grads, wanted):
        assert np.allclose(a, b, rtol=1e-10, atol=1e-10)


# gradients ----------------------------------------------------------------------------------------


def loss_module(name: str, args: list[np.ndarray], attrs: dict[str, Any]) -> tuple[Module, list[np.ndarray]]:
    """``@main(args..., w) = sum(op(args...) * w)`` and its arguments (w random)."""
    params = [Var(f"a{i}", T(BaseType.from_numpy(a.dtype), *a.shape)) for i, a in enumerate(args)]
    out = get_op(name)(*args, **attrs)
    weights = Var("w", T(BaseType.from_numpy(out.dtype), *out.shape))
    body = Call(Op("sum"), [Call(Op("mul"), [Call(Op(name), params, attrs), weights])])
    module = Module({"main": Function([*params, weights], body, T(BaseType.from_numpy(out.dtype)))})
    return module, [*args, RNG.uniform(-1, 1, size=out.shape)]


GRADIENT_CASES = [
    ("conv2d", [RNG.normal(size=(2, 4, 4, 5)), RNG.normal(size=(6, 2, 3, 2))], {"groups": 2, "padding": 1,
                                                                               "strides": (2, 1)}),
    ("conv2d", [RNG.normal(size=(1, 3, 4, 4)), RNG.normal(size=(3, 1, 2, 2))], {"groups": 3, "dilation": 2}),
    ("conv2d", [RNG.integers(-3, 4, size=(1, 2, 3, 3)), RNG.normal(size=(2, 2, 2, 2))], {"out_dtype": F64}),
    ("conv2d", [RNG.normal(size=(1, 2, 5, 4)), RNG.normal(size=(4, 1, 3, 2))], {"groups": 2, "strides": (2, 1),
                                                                               "padding": (1, 0)}),
    ("conv2d", [RNG.normal(size=(2, 2, 4, 3)), RNG.normal(size=(3, 2, 2, 2))], {"strides": (1, 2),
                                                                               "padding": (1, 0, 0, 2)}),
    ("conv2d_transpose", [RNG.normal(size=(2, 4, 3, 2)), RNG.normal(size=(4, 2, 3, 3))],
     {"groups": 2, "strides": 2, "padding": 1, "output_padding": (1, 0)}),
    ("conv2d_transpose", [RNG.normal(size=(1, 2, 2, 3)), RNG.normal(size=(2, 3, 2, 2))], {"dilation": (1, 2)}),
    ("conv2d_transpose", [RNG.normal(size=(1, 2, 2, 2)), RNG.integers(-3, 4, size=(2, 1, 2, 2)).astype(np.int32)],
     {"strides": 3, "output_padding": 2, "out_dtype": F64}),
    ("conv2d_backward_input", [RNG.normal(size=(2, 3, 2, 3)), RNG.normal(size=(3, 2, 3, 2))],
     {"strides": (2, 3), "padding": 1, "output_padding": (1, 2)}),
]


@pytest.mark.parametrize("case", GRADIENT_CASES, ids=lambda case: case[0])
def test_gradient_matches_finite_differences(case: tuple) -> None:
    """Integer inputs (converted by out_dtype) get zero gradients of their dtype."""
    name, args, attrs = case
    module, inputs = loss_module(name, args, attrs)
    check_grad(module, inputs)


def test_gradient_through_out_dtype_comes_back_in_the_inputs_dtype() -> None:
    """float32 inputs with out_dtype float64: the gradients are the float64 convolution's, cast
    back to float32 (the lowering's casts)."""
    x, w = RNG.normal(size=(1, 2, 4, 4)).astype(np.float32), RNG.normal(size=(4, 1, 3, 3)).astype(np.float32)
    module, inputs = loss_module("conv2d", [x, w], {"groups": 2, "out_dtype": F64})
    wide, wide_inputs = loss_module("conv2d", [x.astype(np.float64), w.astype(np.float64)], {"groups": 2})
    grad = Function(list(module["main"].params), Call(Grad(GlobalVar("main")), list(module["main"].params)))
    wide_grad = Function(list(wide["main"].params), Call(Grad(GlobalVar("main")), list(wide["main"].params)))
    _, (gx, gw, _) = relayish.evaluate(module.with_function("g", grad), "g", *inputs)
    _, (wx, ww, _) = relayish.evaluate(wide.with_function("g", wide_grad), "g", *wide_inputs[:2], inputs[2])
    assert gx.dtype == gw.dtype == np.float32
    assert np.array_equal(gx, wx.astype(np.float32)) and np.array_equal(gw, ww.astype(np.float32))


@pytest.mark.parametrize("case", [GRADIENT_CASES[i] for i in (0, 3, 5, 7)], ids=lambda case: case[0])
def test_second_derivatives_match_finite_differences(case: tuple) -> None:
    """``sum(d/d a0 (sum(op(args...) * w)) * v)``: its gradient holds the second derivatives."""
    name, args, attrs = case
    first, inputs = loss_module(name, args, attrs)
    check_grad(directional_gradient(first), [*inputs, RNG.uniform(-1, 1, size=args[0].shape)])
