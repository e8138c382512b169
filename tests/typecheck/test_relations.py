"""Operator type relations, against hand-computed types and against NumPy's own shapes.

Every operator is checked at least once well typed (its exact result type) and at least once
ill typed (the exact message). Expected results are worked out by hand from the operator's
documented semantics; the hypothesis tests use NumPy, run on real arrays, as the oracle.
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st
from hypothesis.extra import numpy as hnp

from relayish.dims import UNKNOWN_DIM
from relayish.errors import RelayTypeError
from relayish.ops import all_ops, get_op
from relayish.types import (
    UNIT, BoolType, FloatType, FuncType, IntType, Kind, RefType, Shape, TensorType, TupleType, Type,
    TypeVar, UIntType,
)  # fmt: skip

F32, F64, I32, U8, B = FloatType(32), FloatType(64), IntType(32), UIntType(8), BoolType()
n, m, k, h = (TypeVar(name, Kind.DIM) for name in "nmkh")
s, t = TypeVar("s", Kind.SHAPE), TypeVar("t", Kind.SHAPE)
dt = TypeVar("a", Kind.BASE_TYPE)


def T(dtype: Type, *dims: Any) -> TensorType:
    """A tensor type; a single shape variable stands for the whole shape."""
    if len(dims) == 1 and isinstance(dims[0], TypeVar) and dims[0].kind is Kind.SHAPE:
        return TensorType(dtype, dims[0])
    return TensorType(dtype, Shape(*dims))


def relate(name: str, *args: Type, **attrs: Any) -> Type:
    """Run ``name``'s relation with its attributes canonicalized and defaults filled in."""
    op = get_op(name)
    return op.type_relation(list(args), op.full_attrs(op.normalize_attrs(attrs)))


X = T(F32, 2, 3)
WELL_TYPED: list[tuple[str, tuple[Type, ...], dict[str, Any], Type]] = [
    # elementwise
    ("neg", (T(I32, 2, 3),), {}, T(I32, 2, 3)),
    ("sq", (T(F32, n),), {}, T(F32, n)),
    ("exp", (T(F64, 3),), {}, T(F64, 3)),
    ("exp", (T(dt, s),), {}, T(dt, s)),
    ("log", (T(F32, n, 4),), {}, T(F32, n, 4)),
    ("sqrt", (T(F32),), {}, T(F32)),
    ("tanh", (T(F32, n, 10),), {}, T(F32, n, 10)),
    ("sigmoid", (T(F64, s),), {}, T(F64, s)),
    ("relu", (T(F32, n, 500),), {}, T(F32, n, 500)),
    ("abs", (T(U8, 4),), {}, T(U8, 4)),
    ("sin", (X,), {}, X),
    ("cos", (X,), {}, X),
    ("logical_not", (T(B, 2),), {}, T(B, 2)),
    ("cast", (T(F32, n, 3),), {"dtype": I32}, T(I32, n, 3)),
    ("cast", (T(B, s),), {"dtype": "float64"}, T(F64, s)),
    ("zeros_like", (T(B, s),), {}, T(B, s)),
    ("ones_like", (T(I32, 2),), {}, T(I32, 2)),
    # broadcasting
    ("add", (T(F32, 3, 4, 1), T(F32, 1, 5)), {}, T(F32, 3, 4, 5)),
    ("sub", (T(F32, n, 3), T(F32, 3)), {}, T(F32, n, 3)),
    ("mul", (T(F32, n, 1), T(F32, 1, 4)), {}, T(F32, n, 4)),
    ("div", (T(F32, s), T(F32, s)), {}, T(F32, s)),
    ("div", (T(F32, s), T(F32)), {}, T(F32, s)),
    ("pow", (T(I32, 2, 3), T(I32)), {}, T(I32, 2, 3)),
    ("maximum", (T(F32, 1), T(F32, n)), {}, T(F32, n)),
    ("minimum", (T(F64, 2, 1, 3), T(F64, 4, 1)), {}, T(F64, 2, 4, 3)),
    ("equal", (T(F32, 3), T(F32, 2, 1)), {}, T(B, 2, 3)),
    ("not_equal", (T(B, n), T(B, n)), {}, T(B, n)),
    ("less", (T(I32, n, 1), T(I32, m)), {}, T(B, n, m)),
    ("less_equal", (T(dt, s), T(dt, s)), {}, T(B, s)),
    ("greater", (T(F32), T(F32, 4)), {}, T(B, 4)),
    ("greater_equal", (X, X), {}, T(B, 2, 3)),
    ("logical_and", (T(B, 2), T(B, 2)), {}, T(B, 2)),
    ("logical_or", (T(B, n, 1), T(B, 3)), {}, T(B, n, 3)),
    ("where", (T(B, n, 1), T(F32, 1, 4), T(F32)), {}, T(F32, n, 4)),
    # reductions
    ("sum", (T(F32, 2, 3, 4),), {"axis": 1}, T(F32, 2, 4)),
    ("sum", (T(F32, 2, 3, 4),), {"axis": (0, -1), "keepdims": True}, T(F32, 1, 3, 1)),
    ("sum", (T(I32, 2, 3, 4),), {}, T(I32)),
    ("sum", (T(F32, 2, 3, 4),), {"keepdims": True}, T(F32, 1, 1, 1)),
    ("sum", (T(F32, s),), {}, T(F32)),
    ("mean", (T(F32, n, 10),), {"axis": -1}, T(F32, n)),
    ("max", (T(I32, n, 10),), {"axis": 0}, T(I32, 10)),
    ("min", (T(F32, n, 10),), {"axis": 1, "keepdims": True}, T(F32, n, 1)),
    ("argmax", (T(F32, n, 10),), {"axis": 1}, T(I32, n)),
    ("argmax", (T(F64, n, 10),), {}, T(I32)),
    ("argmax", (T(F32, n, 3, 4),), {"axis": (2, 1), "keepdims": True}, T(I32, n, 1, 1)),
    ("argmax", (T(F32, n, 3, 4),), {"axis": 0, "exclude": True}, T(I32, n)),
    ("prod", (T(I32, 2, n, 4),), {"axis": (0, 2)}, T(I32, n)),
    ("cumsum", (T(F32, n, 3),), {}, T(F32, 3 * n)),
    ("cumsum", (T(B, n, 3),), {"axis": -1, "dtype": I32, "exclusive": True}, T(I32, n, 3)),
    ("ndarray_size", (T(B, n, 10, h),), {"axis": (0, -1), "exclude": True, "dtype": F32}, T(F32)),
    ("ndarray_size", (T(I32),), {}, T(IntType(64))),
    # shape operators
    ("reshape", (T(F32, n, 50, 4, 4),), {"newshape": (0, -1)}, T(F32, n, 800)),
    ("reshape", (T(F32, 2, 3, 4),), {"newshape": (4, -1)}, T(F32, 4, 6)),
    ("reshape", (T(I32, 6),), {"newshape": (2, 3)}, T(I32, 2, 3)),
    ("reshape", (T(F32, n, 6),), {"newshape": (-1, 3)}, T(F32, 2 * n, 3)),
    # dyn_reshape: every dimension ? but a rank-1 result's, data's element count
    ("dyn_reshape", (T(F32, n, 6), T(I32, 3)), {}, T(F32, UNKNOWN_DIM, UNKNOWN_DIM, UNKNOWN_DIM)),
    ("dyn_reshape", (T(U8, 2, 3), T(IntType(64), 1)), {}, T(U8, 6)),
    ("dyn_reshape", (T(F32, n, UNKNOWN_DIM), T(I32, 1)), {}, T(F32, UNKNOWN_DIM)),
    ("dyn_reshape", (T(F64, n, 3, m), T(I32, 1)), {}, T(F64, 3 * n * m)),
    ("dyn_reshape", (T(B, 1, 1), T(I32, 0)), {}, T(B)),
    ("dyn_reshape", (T(F32, s), T(I32, 2)), {}, T(F32, UNKNOWN_DIM, UNKNOWN_DIM)),
    ("transpose", (T(F32, 2, 3, 4),), {}, T(F32, 4, 3, 2)),
    ("transpose", (T(F32, 2, n, 4),), {"axes": (0, 2, 1)}, T(F32, 2, 4, n)),
    ("transpose", (T(F32, 2, 3, 4),), {"axes": (-1, 0, 1)}, T(F32, 4, 2, 3)),
    ("expand_dims", (T(F32, n, 3),), {"axis": 1}, T(F32, n, 1, 3)),
    ("expand_dims", (T(F32, n, 3),), {"axis": -1, "num_newaxis": 2}, T(F32, n, 3, 1, 1)),
    ("squeeze", (T(F32, 1, 3, 1),), {}, T(F32, 3)),
    ("squeeze", (T(F32, n, 1, 3),), {"axis": 1}, T(F32, n, 3)),
    ("broadcast_to", (T(F32, 3, 1),), {"shape": (2, 3, 4)}, T(F32, 2, 3, 4)),
    ("broadcast_to", (T(I32),), {"shape": (2, 2)}, T(I32, 2, 2)),
    ("broadcast_to_like", (T(F32, 1, n), T(I32, 4, n)), {}, T(F32, 4, n)),
    ("broadcast_to_like", (T(F32), T(F32, s)), {}, T(F32, s)),
    ("sum_to", (T(F32, 2, 3, 4), T(F32, 3, 1)), {}, T(F32, 3, 1)),
    ("sum_to", (T(F32, n, 10), T(F32, 10)), {}, T(F32, 10)),
    ("sum_to", (T(F32, s), T(F32, s)), {}, T(F32, s)),
    ("concatenate", (T(F32, n, 3), T(F32, m, 3)), {}, T(F32, n + m, 3)),
    ("concatenate", (T(I32, 2, 3), T(I32, 2, 4), T(I32, 2, 1)), {"axis": -1}, T(I32, 2, 8)),
    ("stack", (T(F32, n, 3), T(F32, n, 3)), {}, T(F32, 2, n, 3)),
    ("stack", (T(F32, n, 3), T(F32, n, 3), T(F32, n, 3)), {"axis": -1}, T(F32, n, 3, 3)),
    ("take", (T(F32, 5, 4), T(I32, n)), {"axis": 0}, T(F32, n, 4)),
    ("take", (T(F32, 5, 4), T(I32, 2, 3)), {}, T(F32, 2, 3)),
    ("take", (T(F64, 2, 5, 7), T(U8, 3, 4)), {"axis": 1}, T(F64, 2, 3, 4, 7)),
    # gather: the indices' shape; along the other axes at most data's dimensions
    ("gather", (T(F32, n, 5), T(I32, n, 7)), {"axis": 1}, T(F32, n, 7)),
    ("gather", (T(B, 4, 5, 6), T(U8, 2, 9, 6)), {"axis": -2}, T(B, 2, 9, 6)),
    # split: a tuple of the parts; the split axis is static, the others may be symbolic
    ("split", (T(F32, n, 6),), {"sections": 3, "axis": 1}, TupleType([T(F32, n, 2)] * 3)),
    ("split", (T(I32, 5, n),), {"indices": (1, 4)}, TupleType([T(I32, 1, n), T(I32, 3, n), T(I32, 1, n)])),
    ("split", (T(F64, 0),), {"sections": 2}, TupleType([T(F64, 0)] * 2)),
    ("strided_slice", (T(F32, 10, n),), {"begin": (2,), "end": (8,), "strides": (2,)}, T(F32, 3, n)),
    ("strided_slice", (T(F32, 5, 6),), {"begin": (-1, 0), "end": (-6, 100), "strides": (-2, 3)}, T(F32, 3, 2)),
    ("strided_slice", (T(F32, n, 5),), {"begin": (1,), "end": (3,), "axes": (1,)}, T(F32, n, 2)),
    ("reverse", (T(U8, n, 5),), {"axis": -2}, T(U8, n, 5)),
    ("pad", (T(F32, n, 3),), {"pad_width": (1, 2, 0, 1)}, T(F32, n + 3, 4)),
    ("flatten", (T(F32, n, 50, 4, 4),), {}, T(F32, n, 800)),
    ("flatten", (T(F32, 5),), {}, T(F32, 5, 1)),
    ("full", (), {"shape": (2, 3), "dtype": I32}, T(I32, 2, 3)),
    ("full", (), {"shape": ()}, T(F32)),
    ("one_hot", (T(I32, n),), {"depth": 10}, T(F32, n, 10)),
    ("one_hot", (T(U8, 2, 3),), {"depth": 4, "dtype": F64}, T(F64, 2, 3, 4)),
    # linear algebra and neural networks
    ("matmul", (T(F32, n, k), T(F32, k, m)), {}, T(F32, n, m)),
    ("matmul", (T(F32, 2, 1, 3, 4), T(F32, 5, 4, 6)), {}, T(F32, 2, 5, 3, 6)),
    ("dense", (T(F32, n, 784), T(F32, 500, 784), T(F32, 500)), {}, T(F32, n, 500)),
    ("dense", (T(F32, 784), T(F32, 10, 784)), {}, T(F32, 10)),
    ("conv2d", (T(F32, n, 1, 28, 28), T(F32, 20, 1, 5, 5)), {}, T(F32, n, 20, 24, 24)),
    ("conv2d", (T(F32, n, 1, h, 28), T(F32, 20, 1, 5, 5)), {}, T(F32, n, 20, h - 4, 24)),
    # (32 + 2*1 - 2*(3-1) - 1) // 2 + 1 = 29 // 2 + 1 = 15
    ("conv2d", (T(F32, 1, 3, 32, 32), T(F32, 8, 3, 3, 3)), {"strides": 2, "padding": 1, "dilation": 2},
     T(F32, 1, 8, 15, 15)),
    ("conv2d", (T(F32, n, 1, h, h), T(F32, 4, 1, 3, 3)), {"strides": 2}, T(F32, n, 4, (h - 3) // 2 + 1, (h - 3) // 2 + 1)),
    ("conv2d", (T(I32, n, 6, 5, 5), T(U8, 4, 3, 3, 3)), {"groups": 2, "out_dtype": F64}, T(F64, n, 4, 3, 3)),
    # (h - 1) * 2 - 2 * 1 + 1 * (3 - 1) + 1 + 1 = 2h; (5 - 1) * 2 - 2 + 2 + 0 + 1 = 9
    ("conv2d_transpose", (T(F32, n, 4, h, 5), T(F32, 4, 3, 3, 3)),
     {"strides": 2, "padding": 1, "output_padding": (1, 0), "groups": 2}, T(F32, n, 6, 2 * h, 9)),
    ("max_pool2d", (T(F32, n, 20, 24, 24),), {"pool_size": 2}, T(F32, n, 20, 12, 12)),
    ("max_pool2d", (T(I32, 1, 1, 5, 5),), {"pool_size": 3, "strides": 1, "padding": 1}, T(I32, 1, 1, 5, 5)),
    # (h - 2) // 2 + 1 is h // 2
    ("avg_pool2d", (T(F32, n, 20, h, h),), {"pool_size": 2}, T(F32, n, 20, h // 2, h // 2)),
    ("cast_like", (T(F64), T(F32, n, 10)), {}, T(F32)),  # like gives the dtype, x the shape
    ("cast_like", (T(I32, n, 2), T(F64)), {}, T(F64, n, 2)),
    ("softmax", (T(F32, n, 10),), {}, T(F32, n, 10)),
    ("log_softmax", (T(F64, n, 10),), {"axis": 0}, T(F64, n, 10)),
    ("softmax_cross_entropy", (T(F32, n, 10), T(F32, n, 10)), {"axis": 1}, T(F32)),
    # gradient operators: g has the forward result's shape; like gives the shape, not the dtype
    ("reshape_like", (T(F32, n, 6), T(I32, 2, n, 3)), {}, T(F32, 2, n, 3)),
    ("reshape_like", (T(F32, s), T(F64, s)), {}, T(F32, s)),
    ("conv2d_backward_input", (T(F32, 1, 8, 15, 15), T(F32, 8, 3, 3, 3), T(F32, 1, 3, 32, 32)),
     {"strides": 2, "padding": 1, "dilation": 2}, T(F32, 1, 3, 32, 32)),
    ("conv2d_backward_input", (T(F32, n, 4, (h - 3) // 2 + 1, (h - 3) // 2 + 1), T(F32, 4, 1, 3, 3), T(B, n, 1, h, h)),
     {"strides": 2}, T(F32, n, 1, h, h)),
    ("conv2d_backward_weight", (T(F32, n, 20, 24, 24), T(F32, n, 1, 28, 28), T(F64, 20, 1, 5, 5)), {},
     T(F32, 20, 1, 5, 5)),
    ("max_pool2d_backward", (T(F32, n, 20, 12, 12), T(F32, n, 20, 24, 24)), {"pool_size": 2}, T(F32, n, 20, 24, 24)),
    ("max_pool2d_backward", (T(I32, 1, 1, 5, 5), T(I32, 1, 1, 5, 5)), {"pool_size": 3, "strides": 1, "padding": 1},
     T(I32, 1, 1, 5, 5)),
    ("avg_pool2d_backward", (T(F32, n, 20, h // 2, h // 2), T(F32, n, 20, h, h)),
     {"pool_size": 2, "count_include_pad": False}, T(F32, n, 20, h, h)),
    ("strided_slice_backward", (T(F32, 3, n), T(I32, 10, n)), {"begin": (2,), "end": (8,), "strides": (2,)},
     T(F32, 10, n)),
    ("take_backward", (T(F32, n, 4), T(I32, n), T(F32, 5, 4)), {"axis": 0}, T(F32, 5, 4)),
    ("take_backward", (T(F64, 2, 3), T(U8, 2, 3), T(B, 5, 4)), {}, T(F64, 5, 4)),
    # scatter_add: data's type; updates of take's result shape and data's dtype
    ("scatter_add", (T(F32, 5, n), T(I32, 2, 3), T(F32, 2, 3, n)), {"axis": 0}, T(F32, 5, n)),
    ("scatter_add", (T(I32, 5, 4), T(U8, n), T(I32, n)), {}, T(I32, 5, 4)),
    ("gather_backward", (T(F32, n, 2), T(I32, n, 2), T(B, n, 5)), {"axis": -1}, T(F32, n, 5)),
    ("gather_backward", (T(I32, 7, 2), T(U8, 7, 2), T(F32, 3, 4)), {"axis": 0}, T(I32, 3, 4)),
    # the parts give the shapes only: the piece has g's dtype
    ("concatenate_backward", (T(F32, n + m, 3), T(I32, n, 3), T(I32, m, 3)), {"index": 1}, T(F32, m, 3)),
    ("concatenate_backward", (T(F64, 2, 8), T(F64, 2, 3), T(F64, 2, 4), T(F64, 2, 1)), {"axis": -1, "index": 2},
     T(F64, 2, 1)),
    ("concatenate_backward", (T(B, n), T(F32, n)), {"index": 0}, T(B, n)),
    ("pad_backward", (T(F32, n + 3, 4), T(I32, n, 3)), {"pad_width": (1, 2, 0, 1)}, T(F32, n, 3)),
    ("pad_backward", (T(F64), T(F64)), {"pad_width": ()}, T(F64)),
    # h has x's shape and dtype; the result has the pooled shape
    ("max_pool2d_gather", (T(F32, n, 20, 24, 24), T(F32, n, 20, 24, 24)), {"pool_size": 2}, T(F32, n, 20, 12, 12)),
    ("max_pool2d_gather", (T(I32, 1, 1, 5, 5), T(I32, 1, 1, 5, 5)), {"pool_size": 3, "strides": 1, "padding": 1},
     T(I32, 1, 1, 5, 5)),

    # the elementwise arithmetic of relayish/ops/arithmetic.py
    *[(name, (T(F32, n, 3),), {}, T(F32, n, 3)) for name in
      ("erf", "tan", "atan", "asin", "acos", "sinh", "cosh", "rsqrt", "log1p", "expm1", "ceil", "floor", "trunc",
       "round")],
    ("sign", (T(I32, 2),), {}, T(I32, 2)),
    ("floor_divide", (T(F64, n, 1), T(F64, 4)), {}, T(F64, n, 4)),
    ("floor_mod", (T(I32, 3), T(I32)), {}, T(I32, 3)),

    # the operators defined by others (relayish/ops/composite.py)
    ("clip", (T(F32, n, 3),), {"a_min": 0, "a_max": 1}, T(F32, n, 3)),
    ("clip", (T(U8, s),), {"a_min": 0, "a_max": 1}, T(U8, s)),
    ("clip", (T(dt, n),), {"a_min": 0, "a_max": 1}, T(dt, n)),
    ("leaky_relu", (T(F64, n, 2),), {}, T(F64, n, 2)),
    ("bias_add", (T(F32, n, 3, 5, 5), T(F32, 3)), {}, T(F32, n, 3, 5, 5)),
    ("bias_add", (T(I32, 4, n), T(I32, n)), {"axis": -1}, T(I32, 4, n)),
    ("variance", (T(F32, n, 4, 5),), {"axis": 1}, T(F32, n, 5)),
    ("variance", (T(F32, n, 4, 5),), {"axis": 0, "exclude": True, "keepdims": True}, T(F32, n, 1, 1)),
    ("std", (T(F64, s),), {}, T(F64)),
    ("std", (T(F64, n, 4),), {"axis": (0, 1), "exclude": True, "unbiased": True}, T(F64, n, 4)),
    ("all", (T(B, n, 3),), {"axis": 1}, T(B, n)),
    ("any", (T(B, n, 3),), {"keepdims": True}, T(B, 1, 1)),
    ("logsumexp", (T(F32, n, 10),), {"axis": -1}, T(F32, n)),
    ("logsumexp", (T(F32, s),), {}, T(F32)),
    ("argmin", (T(U8, n, 10),), {"axis": 1, "keepdims": True}, T(I32, n, 1)),
    ("argmin", (T(F32, n, 10),), {}, T(I32)),
    ("full_like", (T(B, n, 2),), {"fill_value": 1}, T(B, n, 2)),
    ("zeros", (), {"shape": (2, 3), "dtype": "int32"}, T(I32, 2, 3)),
    ("ones", (), {"shape": ()}, T(F32)),
    ("arange", (), {"stop": 10}, T(F32, 10)),
    ("arange", (), {"start": 1, "stop": 2, "step": 0.3, "dtype": "int32"}, T(I32, 4)),
    ("arange", (), {"start": 5, "stop": 1, "step": -2, "dtype": "uint8"}, T(U8, 2)),
    ("arange", (), {"start": 5, "stop": 1}, T(F32, 0)),
    ("tile", (T(F32, n, 3),), {"reps": (2,)}, T(F32, n, 6)),
    ("tile", (T(F32, n, 3),), {"reps": (2, 1, 3)}, T(F32, 2, n, 9)),
    ("tile", (T(F32, n, 3),), {"reps": (0, 1)}, T(F32, 0, 3)),
    ("tile", (T(F32),), {"reps": ()}, T(F32)),
    ("repeat", (T(I32, n, 3),), {"repeats": 2, "axis": 1}, T(I32, n, 6)),
    ("repeat", (T(I32, n, 3),), {"repeats": 1, "axis": 0}, T(I32, n, 3)),
    ("global_avg_pool2d", (T(F32, n, 8, 5, 7),), {}, T(F32, n, 8, 1, 1)),
    ("global_max_pool2d", (T(I32, n, 8, n, n),), {}, T(I32, n, 8, 1, 1)),
    ("layer_norm", (T(F32, n, 16), T(F32, 16), T(F32, 16)), {}, T(F32, n, 16)),
    ("layer_norm", (T(F32, n, 16), T(F32, n), T(F32, n)), {"axis": 0}, T(F32, n, 16)),
    ("batch_norm", (T(F32, n, 3, 4, 4),) + (T(F32, 3),) * 4, {}, T(F32, n, 3, 4, 4)),
    ("batch_norm", (T(F64, n, 5),) + (T(F64, 5),) * 4, {"axis": -1, "training": True}, T(F64, n, 5)),
]

ILL_TYPED: list[tuple[str, tuple[Type, ...], dict[str, Any], str]] = [
    # elementwise
    ("neg", (T(B, 2),), {}, "argument 1 must have a numeric dtype, not BoolType"),
    ("neg", (UNIT,), {}, "argument 1 must be a tensor, not ()"),
    ("sq", (TupleType([T(F32, 2)]),), {}, "argument 1 must be a tensor, not (Tensor(FloatType(32), Shape(2)),)"),
    ("exp", (T(I32, 3),), {}, "argument 1 must have a floating-point dtype, not IntType(32)"),
    ("log", (T(B, 3),), {}, "argument 1 must have a floating-point dtype, not BoolType"),
    ("sqrt", (T(U8),), {}, "argument 1 must have a floating-point dtype, not UIntType(8)"),
    ("tanh", (T(I32, n),), {}, "argument 1 must have a floating-point dtype, not IntType(32)"),
    ("sigmoid", (T(I32, n),), {}, "argument 1 must have a floating-point dtype, not IntType(32)"),
    ("sin", (T(B),), {}, "argument 1 must have a floating-point dtype, not BoolType"),
    ("cos", (T(I32),), {}, "argument 1 must have a floating-point dtype, not IntType(32)"),
    ("relu", (T(B, 2),), {}, "argument 1 must have a numeric dtype, not BoolType"),
    ("abs", (T(B, 2),), {}, "argument 1 must have a numeric dtype, not BoolType"),
    ("logical_not", (T(F32, 2),), {}, "argument 1 must have a boolean dtype, not FloatType(32)"),
    ("cast", (FuncType([X], X),), {"dtype": I32},
     "argument 1 must be a tensor, not (Tensor(FloatType(32), Shape(2, 3))) -> Tensor(FloatType(32), Shape(2, 3))"),
    ("cast_like", (X, FuncType([X], X)), {},
     "argument 2 must be a tensor, not (Tensor(FloatType(32), Shape(2, 3))) -> Tensor(FloatType(32), Shape(2, 3))"),
    ("zeros_like", (RefType(X),), {}, "argument 1 must be a tensor, not RefType(Tensor(FloatType(32), Shape(2, 3)))"),
    ("ones_like", (TypeVar("T"),), {}, "argument 1 must be a tensor, not T"),
    # broadcasting
    ("add", (T(F32, 3), T(F64, 3)), {}, "dtypes differ: FloatType(32) vs FloatType(64)"),
    ("add", (T(F32, 3), T(F32, 4)), {}, "cannot broadcast Shape(3) with Shape(4): dimension 0: 3 vs 4"),
    ("add", (T(F32, 3), UNIT), {}, "argument 2 must be a tensor, not ()"),
    ("sub", (T(F32, n), T(F32, 5)), {}, "cannot broadcast Shape(n) with Shape(5): dimension 0: n vs 5"),
    ("mul", (T(F32, 2, n), T(F32, 3, 1, m)), {}, "cannot broadcast Shape(2, n) with Shape(3, 1, m): dimension 2: n vs m"),
    ("div", (T(F32, s), T(F32, 3)), {}, "cannot broadcast s with Shape(3): a shape variable broadcasts only with itself"),
    ("pow", (T(B, 2), T(B, 2)), {}, "argument 1 must have a numeric dtype, not BoolType"),
    ("maximum", (T(F32, s), T(F32, t)), {}, "cannot broadcast s with t: a shape variable broadcasts only with itself"),
    ("minimum", (T(F32, 4, 3), T(F32, 2, 3)), {}, "cannot broadcast Shape(4, 3) with Shape(2, 3): dimension 0: 4 vs 2"),
    ("equal", (T(I32, 2), T(F32, 2)), {}, "dtypes differ: IntType(32) vs FloatType(32)"),
    ("not_equal", (T(B, 2), T(B, 3)), {}, "cannot broadcast Shape(2) with Shape(3): dimension 0: 2 vs 3"),
    ("less", (T(dt, 2), T(F32, 2)), {}, "dtypes differ: a vs FloatType(32)"),
    ("less_equal", (T(F32, n, 2), T(F32, m, 2)), {}, "cannot broadcast Shape(n, 2) with Shape(m, 2): dimension 0: n vs m"),
    ("greater", (T(F32, 1, 4), T(F32, 3, 5)), {}, "cannot broadcast Shape(1, 4) with Shape(3, 5): dimension 1: 4 vs 5"),
    ("greater_equal", (X, TupleType([X, X])), {},
     "argument 2 must be a tensor, not (Tensor(FloatType(32), Shape(2, 3)), Tensor(FloatType(32), Shape(2, 3)))"),
    ("logical_and", (T(F32, 2), T(B, 2)), {}, "argument 1 must have a boolean dtype, not FloatType(32)"),
    ("logical_or", (T(B, 2), T(I32, 2)), {}, "argument 2 must have a boolean dtype, not IntType(32)"),
    ("where", (T(F32, 2), X, X), {}, "argument 1 must have a boolean dtype, not FloatType(32)"),
    ("where", (T(B, 2), T(F32, 2), T(I32, 2)), {}, "dtypes differ: FloatType(32) vs IntType(32)"),
    ("where", (T(B, 2), T(F32, 3), T(F32)), {}, "cannot broadcast Shape(2) with Shape(3): dimension 0: 2 vs 3"),
    # reductions
    ("sum", (X,), {"axis": 2}, "axis 2 is out of range for a tensor of rank 2"),
    ("sum", (X,), {"axis": (0, -2)}, "axes (0, -2) name axis 0 twice"),
    ("sum", (T(B, 2),), {}, "argument 1 must have a numeric dtype, not BoolType"),
    ("sum", (T(F32, s),), {"axis": 0}, "argument 1 needs a shape of known rank, not the shape variable s"),
    ("mean", (T(I32, 2),), {}, "argument 1 must have a floating-point dtype, not IntType(32)"),
    ("max", (X,), {"axis": -3}, "axis -3 is out of range for a tensor of rank 2"),
    ("min", (T(F32),), {"axis": 0}, "axis 0 is out of range for a tensor of rank 0"),
    ("argmax", (T(F32, n),), {"axis": 1}, "axis 1 is out of range for a tensor of rank 1"),
    ("argmax", (T(F32, n),), {"exclude": True}, "exclude needs axis: it reduces the axes that axis does not name"),
    ("prod", (T(B, 2),), {}, "argument 1 must have a numeric dtype, not BoolType"),
    ("cumsum", (T(B, 2),), {}, "the sums need a numeric dtype, not BoolType (give a numeric dtype to count the "
                                "trues of a bool tensor)"),
    ("cumsum", (T(F32, s),), {}, "argument 1 needs a shape of known rank, not the shape variable s"),
    ("reverse", (T(F32),), {"axis": 0}, "axis 0 is out of range for a tensor of rank 0"),
    ("ndarray_size", (T(F32, n, 3),), {"axis": (1, -1)}, "axes (1, -1) name axis 1 twice"),
    ("ndarray_size", (T(F32, n),), {"dtype": B}, "dtype must be a numeric type, not BoolType"),
    # shape operators
    ("reshape", (X,), {"newshape": (4,)}, "cannot reshape Shape(2, 3) (6 elements) to Shape(4) (4 elements)"),
    ("reshape", (T(F32, n, 3),), {"newshape": (-1, 2)}, "cannot reshape Shape(n, 3) (3*n elements) to (-1, 2): 3*n is not a multiple of 2"),
    ("reshape", (T(F32, 7),), {"newshape": (-1, 2)}, "cannot reshape Shape(7) (7 elements) to (-1, 2): 7 is not a multiple of 2"),
    ("reshape", (T(F32, n, 4),), {"newshape": (4, 0)}, "cannot reshape Shape(n, 4) (4*n elements) to Shape(4, 4) (16 elements)"),
    ("reshape", (X,), {"newshape": (-1, -1)}, "newshape (-1, -1) has more than one -1"),
    ("dyn_reshape", (X, T(F32, 2)), {}, "argument 2 must have an integer dtype, not FloatType(32)"),
    ("dyn_reshape", (X, T(I32, 2, 1)), {}, "argument 2 must have rank 1 (a vector of sizes), not 2 (Shape(2, 1))"),
    ("dyn_reshape", (X, T(I32, n)), {}, "argument 2 (newshape) needs a static length, the result's rank, not n"),
    ("dyn_reshape", (X, T(I32, UNKNOWN_DIM)), {},
     "argument 2 (newshape) needs a static length, the result's rank, not ?"),
    ("dyn_reshape", (X, T(I32, 65)), {}, "argument 2 (newshape) has 65 elements, but tensors have at most 64 axes"),
    ("reshape", (T(F32, 2),), {"newshape": (0, 0)}, "newshape[1] is 0, which copies input dimension 1, but the input has rank 1"),
    ("reshape", (T(F32, 0, 3),), {"newshape": (0, -1)},
     "cannot infer the -1 in newshape (0, -1) for Shape(0, 3): the other dimensions hold 0 elements"),
    ("transpose", (X,), {"axes": (0, 0)}, "axes (0, 0) name axis 0 twice"),
    ("transpose", (X,), {"axes": (0,)}, "axes (0,) is not a permutation of the 2 axes of Shape(2, 3)"),
    ("transpose", (T(F32, s),), {}, "argument 1 needs a shape of known rank, not the shape variable s"),
    ("expand_dims", (X,), {"axis": 3}, "axis 3 is out of range for a new axis in a tensor of rank 2"),
    ("expand_dims", (X,), {"axis": 0, "num_newaxis": -1}, "num_newaxis must be between 0 and 62 (tensors have at most 64 axes), not -1"),
    ("squeeze", (T(F32, 3, 1),), {"axis": 0}, "cannot squeeze dimension 0 of Shape(3, 1): its size is 3, not 1"),
    ("squeeze", (T(F32, n, 1),), {"axis": 0}, "cannot squeeze dimension 0 of Shape(n, 1): its size is n, not 1"),
    ("squeeze", (T(F32, n, 1),), {},
     "squeeze without axis needs static dimensions, but dimension 0 of Shape(n, 1) is n: name the axes to squeeze"),
    ("broadcast_to", (T(F32, 3),), {"shape": (4,)}, "cannot broadcast Shape(3) to Shape(4): dimension 0: 3 vs 4"),
    ("broadcast_to", (X,), {"shape": (3,)}, "cannot broadcast Shape(2, 3) to Shape(3): rank 2 is larger than 1"),
    ("broadcast_to", (T(F32, 3),), {"shape": (2, 1)}, "cannot broadcast Shape(3) to Shape(2, 1): dimension 1: 3 vs 1"),
    ("broadcast_to", (T(F32),), {"shape": (2, -1)}, "shape (2, -1) has a negative dimension"),
    ("broadcast_to_like", (T(F32, s), T(F32, 3)), {},
     "cannot broadcast s to Shape(3): a shape variable broadcasts only with itself"),
    ("sum_to", (X, T(F32, 4)), {}, "cannot sum Shape(2, 3) to Shape(4), which does not broadcast to it: dimension 1: 4 vs 3"),
    ("concatenate", (X, T(F32, 2, 4)), {}, "argument 2 Shape(2, 4) differs from argument 1 Shape(2, 3) in dimension 1: 4 vs 3"),
    ("concatenate", (X, T(F32, 3)), {}, "argument 2 has rank 1 (Shape(3)), but argument 1 has rank 2 (Shape(2, 3))"),
    ("concatenate", (X, T(F64, 2, 3)), {}, "dtypes differ: FloatType(32) vs FloatType(64)"),
    ("concatenate", (T(F32), T(F32)), {}, "axis 0 is out of range for a tensor of rank 0"),
    ("stack", (T(F32, n, 3), T(F32, m, 3)), {}, "argument 2 Shape(m, 3) differs from argument 1 Shape(n, 3) in dimension 0: m vs n"),
    ("stack", (T(F32, 3), T(F32, s)), {}, "argument 2 has shape s, but argument 1 has shape Shape(3)"),
    ("stack", (T(F32, 3), T(F32, 3)), {"axis": 3}, "axis 3 is out of range for a new axis in a tensor of rank 1"),
    ("take", (X, T(F32, 2)), {}, "argument 2 must have an integer dtype, not FloatType(32)"),
    ("take", (X, T(I32, 2)), {"axis": 2}, "axis 2 is out of range for a tensor of rank 2"),
    ("gather", (X, T(F32, 2, 3)), {"axis": 0}, "argument 2 must have an integer dtype, not FloatType(32)"),
    ("gather", (X, T(I32, 6)), {"axis": 0}, "argument 2 Shape(6) must have the rank 2 of argument 1 Shape(2, 3), not 1"),
    ("gather", (X, T(I32, 2, 3)), {"axis": 2}, "axis 2 is out of range for a tensor of rank 2"),
    ("gather", (X, T(I32, 5, 4)), {"axis": 0},
     "dimension 1 of argument 2 Shape(5, 4) must be at most argument 1's 3 (only along axis 0 may it be larger), not 4"),
    ("gather", (T(F32, 2, n), T(I32, 2, 1)), {"axis": 0},
     "dimension 1 of argument 2 Shape(2, 1) must be at most argument 1's n (only along axis 0 may it be larger), not 1"),
    ("split", (T(F32, 2, 6),), {"sections": 4, "axis": 1}, "dimension 1 of Shape(2, 6): 4 sections do not divide the size 6"),
    ("split", (T(F32, 6),), {"sections": 0}, "dimension 0 of Shape(6): sections must be >= 1, not 0"),
    ("split", (T(F32, 6),), {}, "dimension 0 of Shape(6): give exactly one of the attributes sections and indices"),
    ("split", (T(F32, 6),), {"sections": 2, "indices": (3,)},
     "dimension 0 of Shape(6): give exactly one of the attributes sections and indices"),
    ("split", (T(F32, 6),), {"indices": (2, 6)},
     "dimension 0 of Shape(6): the points (2, 6) must rise strictly from above 0 to below the size 6 (no part empty)"),
    ("split", (T(F32, 6),), {"indices": (3, 2)},
     "dimension 0 of Shape(6): the points (3, 2) must rise strictly from above 0 to below the size 6 (no part empty)"),
    ("split", (T(F32, n, 6),), {"sections": 2}, "split dimension 0 of Shape(n, 6) must have a static size, not n"),
    ("split", (T(F32),), {"sections": 1}, "axis 0 is out of range for a tensor of rank 0"),
    ("strided_slice", (T(F32, n, 5),), {"begin": (0,), "end": (1,)},
     "sliced dimension 0 of Shape(n, 5) must have a static size, not n"),
    ("strided_slice", (X,), {"begin": (0,), "end": (1,), "strides": (0,)}, "the stride of axis 0 is 0"),
    ("strided_slice", (X,), {"begin": (0, 0, 0), "end": (1,)},
     "begin, end and strides have up to 3 entries, more than the 2 axes of the tensor"),
    ("strided_slice_backward", (T(F32, 1, 3), X), {"begin": (0,), "end": (1, 2)},
     "begin, end, strides and axes have lengths 1, 2, 1 and 1; they must be equal"),
    ("strided_slice", (X,), {"begin": (0, 0), "end": (1, 1), "axes": (1, -1)}, "axes (1, -1) name axis 1 twice"),
    ("pad", (X,), {"pad_width": (1, 1)}, "pad_width needs 4 numbers for rank 2, not 2"),
    ("pad", (X,), {"pad_width": (1, 1, -1, 0)}, "pad_width (1, 1, -1, 0) has a negative number"),
    ("flatten", (T(F32),), {}, "argument 1 must have rank >= 1, not 0 (Shape())"),
    ("full", (), {"shape": (2, -1)}, "shape (2, -1) has a negative dimension"),
    ("one_hot", (T(F32, 3),), {"depth": 4}, "argument 1 must have an integer dtype, not FloatType(32)"),
    ("one_hot", (T(I32, 3),), {"depth": -1}, "depth must be >= 0, not -1"),
    # linear algebra and neural networks
    ("matmul", (T(F32, n, 784), T(F32, 800, 10)), {},
     "inner dimensions differ: 784 vs 800 (Shape(n, 784) @ Shape(800, 10))"),
    ("matmul", (X, T(F32, 3)), {}, "argument 2 must have rank >= 2, not 1 (Shape(3))"),
    ("matmul", (T(F32, 2, 3, 4), T(F32, 3, 4, 5)), {},
     "batch dimensions: cannot broadcast Shape(2) with Shape(3): dimension 0: 2 vs 3"),
    ("matmul", (T(B, 2, 2), T(B, 2, 2)), {}, "argument 1 must have a numeric dtype, not BoolType"),
    ("dense", (T(F32, n, 800), T(F32, 500, 784)), {},
     "dense expects 784 input features (weight Shape(500, 784)) but the input has 800 (Shape(n, 800))"),
    ("dense", (T(F32, n, 784), T(F32, 500, 784), T(F32, 10)), {},
     "the bias must have shape Shape(500) for 500 units (weight Shape(500, 784)), not Shape(10)"),
    ("dense", (T(F32, n, 784), T(F32, 784)), {}, "argument 2 must have rank 2, not 1 (Shape(784))"),
    ("conv2d", (T(F32, n, 3, 28, 28), T(F32, 20, 1, 5, 5)), {},
     "conv2d expects 1 input channels (weight Shape(20, 1, 5, 5)) but the input has 3 (Shape(n, 3, 28, 28))"),
    ("conv2d", (T(F32, 1, 1, 4, 4), T(F32, 1, 1, 5, 5)), {}, "kernel 5 is larger than the padded input 4 in dimension 2"),
    ("conv2d", (T(F32, 1, 1, 9, 4), T(F32, 1, 1, 3, 3)), {"dilation": 2}, "kernel 5 is larger than the padded input 4 in dimension 3"),
    ("conv2d", (T(F32, 1, 28, 28), T(F32, 20, 1, 5, 5)), {}, "argument 1 must have rank 4 (NCHW), not 3 (Shape(1, 28, 28))"),
    ("conv2d", (T(F32, 1, 1, 8, 8), T(F32, 1, 1, 3, 3)), {"strides": (0, 1)}, "strides (0, 1) must be >= 1"),
    ("conv2d", (T(F32, n, 4, 8, 8), T(F32, 6, 1, 3, 3)), {"groups": 4},
     "groups 4 must divide the 6 output channels of argument 2 Shape(6, 1, 3, 3)"),
    ("conv2d_transpose", (T(F32, 1, 4, 5, 5), T(F32, 4, 2, 3, 3)), {"strides": 2, "output_padding": 2},
     "output_padding (2, 2) must be >= 0 and below the strides (2, 2)"),
    ("max_pool2d", (T(F32, 1, 1, 4, 4),), {"pool_size": 5}, "window 5 is larger than the padded input 4 in dimension 2"),
    ("max_pool2d", (T(F32, 1, 1, 4, 4),), {"pool_size": 0}, "pool_size (0, 0) must be >= 1"),
    ("avg_pool2d", (T(I32, 1, 1, 4, 4),), {"pool_size": 2}, "argument 1 must have a floating-point dtype, not IntType(32)"),
    ("avg_pool2d", (T(F32, 1, 1, 4, 4),), {"pool_size": 2, "padding": -1}, "padding (-1, -1) must be >= 0"),
    ("softmax", (X,), {"axis": 2}, "axis 2 is out of range for a tensor of rank 2"),
    ("softmax", (T(I32, 2),), {}, "argument 1 must have a floating-point dtype, not IntType(32)"),
    ("log_softmax", (T(F32, s),), {}, "argument 1 needs a shape of known rank, not the shape variable s"),
    ("softmax_cross_entropy", (T(F32, n, 10), T(F32, n, 5)), {},
     "argument 2 Shape(n, 5) differs from argument 1 Shape(n, 10) in dimension 1: 5 vs 10"),
    ("softmax_cross_entropy", (T(F32, n, 10), T(F64, n, 10)), {}, "dtypes differ: FloatType(32) vs FloatType(64)"),
    ("softmax_cross_entropy", (T(F32, s), T(F32, n, 10)), {},
     "argument 2 has shape Shape(n, 10), but argument 1 has shape s"),
    # gradient operators
    ("reshape_like", (X, T(F32, 4)), {},
     "cannot reshape Shape(2, 3) (6 elements) to the shape of argument 2, Shape(4) (4 elements)"),
    ("reshape_like", (T(F32, n, 2), T(F32, m, 2)), {},
     "cannot reshape Shape(n, 2) (2*n elements) to the shape of argument 2, Shape(m, 2) (2*m elements)"),
    ("conv2d_backward_input", (T(F32, 1, 8, 14, 15), T(F32, 8, 3, 3, 3), T(F32, 1, 3, 32, 32)),
     {"strides": 2, "padding": 1, "dilation": 2},
     "argument 1 Shape(1, 8, 14, 15) differs from the conv2d result Shape(1, 8, 15, 15) in dimension 2: 14 vs 15"),
    ("conv2d_backward_input", (T(F32, 1, 8, 30, 30), T(F64, 8, 3, 3, 3), T(F32, 1, 3, 32, 32)), {},
     "dtypes differ: FloatType(32) vs FloatType(64)"),
    ("conv2d_backward_weight", (T(F32, 1, 20, 24, 24), T(F32, 1, 3, 28, 28), T(F32, 20, 1, 5, 5)), {},
     "conv2d expects 1 input channels (weight Shape(20, 1, 5, 5)) but the input has 3 (Shape(1, 3, 28, 28))"),
    ("conv2d_backward_weight", (T(F32, 20, 24, 24), T(F32, 1, 1, 28, 28), T(F32, 20, 1, 5, 5)), {},
     "argument 1 has rank 3 (Shape(20, 24, 24)), but the conv2d result has rank 4 (Shape(1, 20, 24, 24))"),
    ("max_pool2d_backward", (T(F32, 1, 1, 2, 3), T(F32, 1, 1, 4, 4)), {"pool_size": 2},
     "argument 1 Shape(1, 1, 2, 3) differs from the max_pool2d result Shape(1, 1, 2, 2) in dimension 3: 3 vs 2"),
    ("max_pool2d_backward", (T(F32, 1, 1, 2, 2), T(F32, 4, 4)), {"pool_size": 2},
     "argument 2 must have rank 4 (NCHW), not 2 (Shape(4, 4))"),
    ("avg_pool2d_backward", (T(I32, 1, 1, 2, 2), T(I32, 1, 1, 4, 4)), {"pool_size": 2},
     "argument 1 must have a floating-point dtype, not IntType(32)"),
    ("avg_pool2d_backward", (T(F32, 1, 1, 1, 1), T(F32, 1, 1, 4, 4)), {"pool_size": 5},
     "window 5 is larger than the padded input 4 in dimension 2"),
    ("strided_slice_backward", (T(F32, 2, n), T(F32, 10, n)), {"begin": (2,), "end": (8,), "strides": (2,)},
     "argument 1 Shape(2, n) differs from the strided_slice result Shape(3, n) in dimension 0: 2 vs 3"),
    ("strided_slice_backward", (T(F32, 1, 5), T(F32, n, 5)), {"begin": (0,), "end": (1,)},
     "sliced dimension 0 of Shape(n, 5) must have a static size, not n"),
    ("take_backward", (T(F32, 2, 4), T(I32, 3), T(F32, 5, 4)), {"axis": 0},
     "argument 1 Shape(2, 4) differs from the take result Shape(3, 4) in dimension 0: 2 vs 3"),
    ("take_backward", (T(F32, 3), T(F32, 3), T(F32, 5)), {}, "argument 2 must have an integer dtype, not FloatType(32)"),
    ("take_backward", (T(B, 3), T(I32, 3), T(F32, 5)), {}, "argument 1 must have a numeric dtype, not BoolType"),
    ("take_backward", (T(F32, s), T(I32, 3), T(F32, 5)), {}, "argument 1 has shape s, but the take result has shape Shape(3)"),
    ("scatter_add", (T(F32, 5, 4), T(I32, 3), T(F32, 2, 4)), {"axis": 0},
     "argument 3 Shape(2, 4) differs from the take result Shape(3, 4) in dimension 0: 2 vs 3"),
    ("scatter_add", (T(F32, 5, 4), T(I32, 3), T(F32, 3)), {"axis": -1},
     "argument 3 has rank 1 (Shape(3)), but the take result has rank 2 (Shape(5, 3))"),
    ("scatter_add", (T(F32, 5), T(I32, 3), T(F64, 3)), {}, "dtypes differ: FloatType(32) vs FloatType(64)"),
    ("scatter_add", (T(F32, 5), T(F32, 3), T(F32, 3)), {}, "argument 2 must have an integer dtype, not FloatType(32)"),
    ("scatter_add", (T(B, 5), T(I32, 3), T(B, 3)), {}, "argument 1 must have a numeric dtype, not BoolType"),
    ("scatter_add", (T(F32, 5), T(I32, 3), T(F32, 3)), {"axis": 1}, "axis 1 is out of range for a tensor of rank 1"),
    ("gather_backward", (T(F32, 2, 3), T(I32, 2, 2), T(F32, 5, 4)), {"axis": 0},
     "argument 1 Shape(2, 3) differs from the gather result Shape(2, 2) in dimension 1: 3 vs 2"),
    ("gather_backward", (T(B, 2), T(I32, 2), T(F32, 5)), {"axis": 0}, "argument 1 must have a numeric dtype, not BoolType"),
    ("gather_backward", (T(F32, 2, 6), T(I32, 2, 6), T(F32, 5, 4)), {"axis": 0},
     "dimension 1 of argument 2 Shape(2, 6) must be at most argument 3's 4 (only along axis 0 may it be larger), not 6"),
    ("concatenate_backward", (T(F32, 5, 3), T(F32, 2, 3), T(F32, 3, 3)), {"index": 2},
     "index 2 is out of range for 2 parts"),
    ("concatenate_backward", (T(F32, 5, 3), T(F32, 2, 3), T(F32, 3, 3)), {"index": -1},
     "index -1 is out of range for 2 parts"),
    ("concatenate_backward", (T(F32, 6, 3), T(F32, 2, 3), T(F32, 3, 3)), {"index": 0},
     "argument 1 Shape(6, 3) differs from the concatenate result Shape(5, 3) in dimension 0: 6 vs 5"),
    ("concatenate_backward", (T(F32, n, 3), T(F32, n, 3), T(F32, m, 3)), {"index": 0},
     "argument 1 Shape(n, 3) differs from the concatenate result Shape(m + n, 3) in dimension 0: n vs m + n"),
    ("concatenate_backward", (T(F32, 5, 3), T(F32, 2, 3), T(F64, 3, 3)), {"index": 0},
     "dtypes differ: FloatType(32) vs FloatType(64)"),
    ("concatenate_backward", (T(F32, 2, 3), T(F32, 2, 3)), {"axis": 2, "index": 0},
     "axis 2 is out of range for a tensor of rank 2"),
    ("pad_backward", (T(F32, n + 3, 5), T(F32, n, 3)), {"pad_width": (1, 2, 0, 1)},
     "argument 1 Shape(n + 3, 5) differs from the pad result Shape(n + 3, 4) in dimension 1: 5 vs 4"),
    ("pad_backward", (T(F32, 4, 3), T(F32, 2, 3)), {"pad_width": (1, 1)}, "pad_width needs 4 numbers for rank 2, not 2"),
    ("pad_backward", (T(F32, 4, 3), T(F32, 2, 3)), {"pad_width": (1, 1, -1, 0)},
     "pad_width (1, 1, -1, 0) has a negative number"),
    ("max_pool2d_gather", (T(F32, 1, 1, 4, 4), T(F64, 1, 1, 4, 4)), {"pool_size": 2},
     "dtypes differ: FloatType(32) vs FloatType(64)"),
    ("max_pool2d_gather", (T(B, 1, 1, 4, 4), T(B, 1, 1, 4, 4)), {"pool_size": 2},
     "argument 1 must have a numeric dtype, not BoolType"),
    ("max_pool2d_gather", (T(F32, 1, 1, 4, 4), T(F32, 1, 1, 4, 4)), {"pool_size": 5},
     "window 5 is larger than the padded input 4 in dimension 2"),
    ("max_pool2d_gather", (T(F32, 4, 4), T(F32, 4, 4)), {"pool_size": 2},
     "argument 2 must have rank 4 (NCHW), not 2 (Shape(4, 4))"),
    ("max_pool2d_gather", (T(F32, 1, 1, 4, 5), T(F32, 1, 1, 4, 4)), {"pool_size": 2},
     "argument 1 Shape(1, 1, 4, 5) and argument 2 Shape(1, 1, 4, 4) must have the same shape"),
    ("concatenate_backward", (T(F32, 2, 7), T(F32, 2, 3), T(F32, 3, 4)), {"axis": 1, "index": 0},
     "argument 3 Shape(3, 4) differs from argument 2 Shape(2, 3) in dimension 0: 3 vs 2"),

    *[(name, (T(I32, 2),), {}, "argument 1 must have a floating-point dtype, not IntType(32)") for name in
      ("erf", "tan", "atan", "asin", "acos", "sinh", "cosh", "rsqrt", "log1p", "expm1", "ceil", "floor", "trunc",
       "round")],
    ("sign", (T(B, 2),), {}, "argument 1 must have a numeric dtype, not BoolType"),
    ("floor_divide", (T(F32, 3), T(F32, 4)), {}, "cannot broadcast Shape(3) with Shape(4): dimension 0: 3 vs 4"),
    ("floor_mod", (T(F32, 3), T(I32, 3)), {}, "dtypes differ: FloatType(32) vs IntType(32)"),

    ("clip", (T(B, 2),), {"a_min": 0, "a_max": 1}, "argument 1 must have a numeric dtype, not BoolType"),
    ("leaky_relu", (T(I32, 2),), {}, "argument 1 must have a floating-point dtype, not IntType(32)"),
    ("bias_add", (T(F32, n, 3), T(F32, 4)), {},
     "argument 2 must have shape Shape(3), the size of axis 1 of argument 1 Shape(n, 3), not Shape(4)"),
    ("bias_add", (T(F32), T(F32, 1)), {}, "argument 1 must have rank >= 1, not 0 (Shape())"),
    ("bias_add", (T(F32, 2, 3), T(F64, 3)), {}, "dtypes differ: FloatType(32) vs FloatType(64)"),
    ("bias_add", (T(F32, 2, 3), T(F32, 3)), {"axis": 2}, "axis 2 is out of range for a tensor of rank 2"),
    ("variance", (T(I32, 2),), {}, "argument 1 must have a floating-point dtype, not IntType(32)"),
    ("variance", (T(F32, 2),), {"exclude": True}, "exclude needs axis: it reduces the axes that axis does not name"),
    ("std", (T(F32, 2, 3),), {"axis": (1, -1), "exclude": True}, "axes (1, -1) name axis 1 twice"),
    ("all", (T(F32, 2),), {}, "argument 1 must have a boolean dtype, not FloatType(32)"),
    ("any", (T(B, 2),), {"axis": 1}, "axis 1 is out of range for a tensor of rank 1"),
    ("logsumexp", (T(I32, 2),), {}, "argument 1 must have a floating-point dtype, not IntType(32)"),
    ("argmin", (T(B, 2),), {}, "argument 1 must have a numeric dtype, not BoolType"),
    ("full_like", (FloatType(32),), {"fill_value": 0}, "argument 1 must be a tensor, not FloatType(32)"),
    ("zeros", (), {"shape": (2, -1)}, "shape (2, -1) has a negative dimension"),
    ("ones", (), {"shape": (-1,)}, "shape (-1,) has a negative dimension"),
    ("arange", (), {"stop": 3, "step": 0}, "step must not be 0"),
    ("arange", (), {"stop": math.inf}, "stop must be finite, not inf"),
    ("arange", (), {"stop": 3, "dtype": "bool"}, "dtype must be a numeric type, not BoolType"),
    ("tile", (T(F32, n, 3),), {"reps": (2, 1)}, "tiled dimension 0 of Shape(n, 3) must have a static size, not n"),
    ("tile", (T(F32, 3),), {"reps": (2, -1)}, "reps (2, -1) has a negative number"),
    ("repeat", (T(F32, n, 3),), {"repeats": 2, "axis": 0},
     "repeated dimension 0 of Shape(n, 3) must have a static size, not n"),
    ("repeat", (T(F32, 3),), {"repeats": -1, "axis": 0}, "repeats must be >= 0, not -1"),
    ("repeat", (T(F32),), {"repeats": 2, "axis": 0}, "axis 0 is out of range for a tensor of rank 0"),
    ("global_avg_pool2d", (T(F32, n, 3, 4),), {}, "argument 1 must have rank 4 (NCHW), not 3 (Shape(n, 3, 4))"),
    ("global_avg_pool2d", (T(I32, 1, 1, 1, 1),), {}, "argument 1 must have a floating-point dtype, not IntType(32)"),
    ("global_max_pool2d", (T(F32, s),), {}, "argument 1 needs a shape of known rank, not the shape variable s"),
    ("layer_norm", (T(F32, n, 16), T(F32, 16), T(F32, n)), {},
     "argument 3 must have shape Shape(16), the size of axis 1 of argument 1 Shape(n, 16), not Shape(n)"),
    ("batch_norm", (T(F32, n, 3), T(F32, 3), T(F32, 3), T(F32, 3), T(F32, 3, 1)), {},
     "argument 5 must have shape Shape(3), the size of axis 1 of argument 1 Shape(n, 3), not Shape(3, 1)"),
    ("batch_norm", (T(F32, n, 3),) + (T(F32, 3),) * 4, {"axis": 2}, "axis 2 is out of range for a tensor of rank 2"),
]


def _case_id(case: tuple) -> str:
    return case[0]


@pytest.mark.parametrize("case", WELL_TYPED, ids=_case_id)
def test_well_typed(case: tuple) -> None:
    name, args, attrs, expected = case
    assert relate(name, *args, **attrs) == expected


@pytest.mark.parametrize("case", ILL_TYPED, ids=_case_id)
def test_ill_typed(case: tuple) -> None:
    name, args, attrs, message = case
    with pytest.raises(RelayTypeError) as info:
        relate(name, *args, **attrs)
    assert info.value.message == message
    assert info.value.span is None


def test_every_operator_is_tested_both_ways() -> None:
    ops = set(all_ops())
    assert {case[0] for case in WELL_TYPED} == ops
    assert {case[0] for case in ILL_TYPED} == ops


# symbolic dimensions, spelled out ------------------------------------------------------


def test_symbolic_results_are_canonical() -> None:
    # the same polynomial however it is written
    assert relate("conv2d", T(F32, n, 1, h, 28), T(F32, 20, 1, 5, 5)) == T(F32, n, 20, 1 + h - 5, 24)
    assert relate("concatenate", T(F32, n), T(F32, n), T(F32, 2)) == T(F32, 2 * n + 2)
    assert relate("pad", T(F32, n), pad_width=(2, 2)) == T(F32, 4 + n)
    got = relate("reshape", T(F32, n, m, 6), newshape=(-1, 2))
    assert got == T(F32, 3 * n * m, 2)


def test_lenet_shapes_through_symbolic_batch() -> None:
    """LeNet's shapes (docs/frontend.md, the models) from a batch of n images: each layer by hand."""
    x = T(F32, n, 1, 28, 28)
    c1 = relate("conv2d", x, T(F32, 20, 1, 5, 5))
    assert c1 == T(F32, n, 20, 24, 24)
    p1 = relate("max_pool2d", relate("relu", c1), pool_size=2)
    assert p1 == T(F32, n, 20, 12, 12)
    c2 = relate("conv2d", p1, T(F32, 50, 20, 5, 5))
    assert c2 == T(F32, n, 50, 8, 8)
    p2 = relate("max_pool2d", c2, pool_size=(2, 2))
    assert p2 == T(F32, n, 50, 4, 4)
    flat = relate("flatten", p2)
    assert flat == relate("reshape", p2, newshape=(0, -1)) == T(F32, n, 800)
    logits = relate("dense", flat, T(F32, 10, 800), T(F32, 10))
    assert logits == T(F32, n, 10)
    assert relate("softmax_cross_entropy", logits, T(F32, n, 10)) == T(F32)


def test_attached_relation_is_what_the_checker_runs() -> None:
    from relayish import parse
    from typecheck.inference import infer

    text = """def @f[n: Dim](%x: Tensor(FloatType(32), Shape(n, 800)), %w: Tensor(FloatType(32), Shape(500, 784))) {
  @dense(%x, %w)
}"""
    with pytest.raises(RelayTypeError) as info:
        infer(parse(text))
    assert "@dense: dense expects 784 input features" in info.value.message
    assert "but the input has 800" in info.value.message
    good = infer(parse(text.replace("Shape(n, 800)", "Shape(n, 784)")))
    assert "Tensor(FloatType(32), Shape(n, 500))" in str(good)


# NumPy as the oracle ---------------------------------------------------------------------

small_shapes = hnp.array_shapes(min_dims=0, max_dims=4, min_side=0, max_side=3)


def _numpy_shape(fn: Any) -> tuple[int, ...] | None:
    """The shape NumPy computes, or None when NumPy rejects the operands."""
    try:
        return fn().shape
    except ValueError:  # numpy.exceptions.AxisError is a ValueError
        return None


def _agrees(expected: tuple[int, ...] | None, name: str, *args: Type, **attrs: Any) -> None:
    if expected is None:
        with pytest.raises(RelayTypeError):
            relate(name, *args, **attrs)
    else:
        assert relate(name, *args, **attrs).shape == Shape(*expected)


@given(hnp.mutually_broadcastable_shapes(num_shapes=2, min_dims=0, max_dims=4, max_side=4))
def test_broadcasting_agrees_with_numpy(shapes: Any) -> None:
    a, b = shapes.input_shapes
    expected = (np.zeros(a) + np.zeros(b)).shape
    assert expected == np.broadcast_shapes(a, b)
    _agrees(expected, "add", T(F32, *a), T(F32, *b))
    _agrees(expected, "where", T(B, *a), T(F32, *b), T(F32))


@given(small_shapes, small_shapes)
def test_broadcasting_rejects_what_numpy_rejects(a: tuple[int, ...], b: tuple[int, ...]) -> None:
    _agrees(_numpy_shape(lambda: np.zeros(a) * np.zeros(b)), "mul", T(F32, *a), T(F32, *b))


@given(
    hnp.mutually_broadcastable_shapes(num_shapes=2, min_dims=0, max_dims=2, max_side=3),
    small_shapes,
    small_shapes,
    st.integers(1, 3),
    st.integers(1, 3),
    st.integers(1, 3),
    st.integers(1, 3),
    st.booleans(),
)
def test_matmul_agrees_with_numpy(batches: Any, batch_a: Any, batch_b: Any, rows: int, inner: int,
                                  inner_b: int, cols: int, independent: bool) -> None:
    # Mostly compatible batch axes; sometimes two unrelated ones, and inner sizes that may differ.
    pa, pb = (batch_a[:2], batch_b[:2]) if independent else batches.input_shapes
    a, b = pa + (rows, inner), pb + (inner_b, cols)
    _agrees(_numpy_shape(lambda: np.zeros(a) @ np.zeros(b)), "matmul", T(F32, *a), T(F32, *b))


axis_values = st.integers(-5, 4)


@given(
    hnp.array_shapes(min_dims=0, max_dims=4, min_side=1, max_side=3),
    st.none() | axis_values | st.lists(axis_values, max_size=4).map(tuple),
    st.booleans(),
)
def test_reductions_agree_with_numpy(shape: tuple[int, ...], axis: Any, keepdims: bool) -> None:
    # np.mean is the oracle: np.sum and np.argmax also accept axis 0 or -1 on a 0-d array,
    # a quirk that np.mean does not share and that the relations reject.
    expected = _numpy_shape(lambda: np.mean(np.zeros(shape), axis=axis, keepdims=keepdims))
    _agrees(expected, "sum", T(F32, *shape), axis=axis, keepdims=keepdims)
    _agrees(expected, "mean", T(F32, *shape), axis=axis, keepdims=keepdims)
    if (axis is None or isinstance(axis, int)) and (shape or axis is None):
        expected = _numpy_shape(lambda: np.argmax(np.zeros(shape), axis=axis, keepdims=keepdims))
        _agrees(expected, "argmax", T(F32, *shape), axis=axis, keepdims=keepdims)


# arange, tile and repeat against NumPy's shapes ----------------------------------------------


@given(start=st.integers(-30, 30) | st.floats(-30, 30), stop=st.integers(-30, 30) | st.floats(-30, 30),
       step=st.sampled_from([1, 2, -1, -3, 0.5, -0.25, 0.1, 0.3, 7.5]))
def test_arange_relation_gives_nps_length(start: float, stop: float, step: float) -> None:
    length = len(np.arange(start, stop, step, dtype=np.float64))
    assert relate("arange", start=start, stop=stop, step=step, dtype="int32") == T(I32, length)


@given(data=st.data())
def test_tile_and_repeat_relations_give_nps_shapes(data: st.DataObject) -> None:
    shape = data.draw(hnp.array_shapes(min_dims=0, max_dims=3, min_side=0, max_side=3), label="shape")
    reps = tuple(data.draw(st.lists(st.integers(0, 3), max_size=4), label="reps"))
    assert relate("tile", T(F32, *shape), reps=reps) == T(F32, *np.tile(np.zeros(shape), reps).shape)
    if shape:
        axis = data.draw(st.integers(-len(shape), len(shape) - 1), label="axis")
        repeats = data.draw(st.integers(0, 3), label="repeats")
        expected = np.repeat(np.zeros(shape), repeats, axis=axis).shape
        assert relate("repeat", T(F32, *shape), repeats=repeats, axis=axis) == T(F32, *expected)
