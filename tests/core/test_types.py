"""Types: structural equality and hashing, type variables by identity, base types and NumPy."""

from __future__ import annotations

import attrs
import numpy as np
import pytest
from hypothesis import given, settings

from relayish import alpha_equal, astext
from relayish.dims import as_dim
from relayish.testing.ir_strategies import BASE_TYPES, types
from relayish.types import (
    UNIT, BaseType, BoolType, FloatType, ForallType, FuncType, IntType, Kind, RefType, Shape, TensorType,
    TupleType, Type, TypeVar, UIntType, scalar_type,
)  # fmt: skip

F32 = FloatType(32)


def test_structural_equality_and_hash():
    n = TypeVar("n", Kind.DIM)
    pairs = [
        (TensorType(F32, Shape(2, 3)), TensorType(FloatType(32), Shape(2, 3))),
        (TensorType(F32, Shape(n, 2 * n)), TensorType(F32, Shape(n, n + n))),
        (TupleType(()), UNIT),
        (FuncType([UNIT], RefType(UNIT)), FuncType((UNIT,), RefType(TupleType([])))),
        (BoolType(), BoolType()),
        (scalar_type(IntType(8)), TensorType(IntType(8), Shape())),
    ]
    for a, b in pairs:
        assert a is not b and a == b and hash(a) == hash(b)
        assert {a: 1}[b] == 1
    different = [
        F32, FloatType(64), IntType(32), UIntType(32), BoolType(), Shape(), Shape(1), Shape(1, 1),
        TensorType(F32, Shape(1)), TensorType(F32, Shape(2)), TupleType([TensorType(F32, Shape(1))]),
        UNIT, FuncType([], UNIT), FuncType([UNIT], UNIT), RefType(UNIT), TupleType([UNIT, UNIT]),
    ]  # fmt: skip
    for i, a in enumerate(different):
        for j, b in enumerate(different):
            assert (a == b) == (i == j), (astext(a), astext(b))
    assert F32 != "FloatType(32)" and F32 != 32


def test_type_variables_compare_by_identity():
    a, b = TypeVar("a"), TypeVar("a")
    assert a == a and a != b and hash(a) != hash(b)
    assert a.kind is Kind.TYPE and TypeVar("n", Kind.DIM).kind is Kind.DIM
    assert FuncType([a], a) == FuncType([a], a)
    assert FuncType([a], a) != FuncType([b], b)
    assert ForallType([a], a) != ForallType([b], b)
    assert alpha_equal(ForallType([a], a), ForallType([b], b))
    assert [kind.value for kind in Kind] == ["Type", "Shape", "BaseType", "Dim"]


def test_types_are_immutable():
    t = TensorType(F32, Shape(2))
    with pytest.raises(attrs.exceptions.FrozenInstanceError):
        t.dtype = IntType(8)
    with pytest.raises(attrs.exceptions.FrozenInstanceError):
        F32.bits = 64


def test_base_type_widths_are_validated():
    for cls, widths in ((IntType, (8, 16, 32, 64)), (UIntType, (8, 16, 32, 64)), (FloatType, (16, 32, 64))):
        for w in widths:
            assert cls(w).bits == w
        for w in (0, 1, 7, 12, 24, 128, -32):
            with pytest.raises(ValueError):
                cls(w)
    with pytest.raises(ValueError):
        FloatType(8)


NUMPY = {
    IntType(8): np.int8, IntType(16): np.int16, IntType(32): np.int32, IntType(64): np.int64,
    UIntType(8): np.uint8, UIntType(16): np.uint16, UIntType(32): np.uint32, UIntType(64): np.uint64,
    FloatType(16): np.float16, FloatType(32): np.float32, FloatType(64): np.float64, BoolType(): np.bool_,
}  # fmt: skip


def test_numpy_dtype_mapping():
    assert set(NUMPY) == set(BASE_TYPES)
    for base, dtype in NUMPY.items():
        assert base.to_numpy() == np.dtype(dtype)
        assert BaseType.from_numpy(np.dtype(dtype)) == base
        assert BaseType.from_numpy(dtype) == base
    for bad in (np.complex64, np.complex128, np.str_, np.object_, "datetime64[s]", np.void):
        with pytest.raises(TypeError):
            BaseType.from_numpy(bad)


def test_shapes():
    n = TypeVar("n", Kind.DIM)
    assert Shape(2, 3).static() == (2, 3) and Shape(2, 3).rank == 2
    assert Shape().static() == () and Shape().rank == 0
    assert Shape(2, n).static() is None
    assert Shape(2, n).dims == (as_dim(2), as_dim(n))
    assert Shape(np.int64(4)) == Shape(4)
    with pytest.raises(TypeError):
        Shape(TypeVar("t", Kind.TYPE))
    with pytest.raises(TypeError):
        Shape(2.0)


def rebuilt(t: Type) -> Type:
    """A structural copy made of new objects (type variables stay the same objects)."""
    if isinstance(t, (TypeVar, BaseType)):
        return t
    if isinstance(t, Shape):
        return Shape(*t.dims)
    if isinstance(t, TensorType):
        return TensorType(rebuilt(t.dtype), rebuilt(t.shape))
    if isinstance(t, TupleType):
        return TupleType([rebuilt(f) for f in t.fields])
    if isinstance(t, FuncType):
        return FuncType([rebuilt(p) for p in t.params], rebuilt(t.ret))
    if isinstance(t, RefType):
        return RefType(rebuilt(t.value))
    return ForallType(t.params, rebuilt(t.body))


@settings(max_examples=200)
@given(types(), types())
def test_generated_types_equality_hash_and_printing(a, b):
    copy = rebuilt(a)
    assert copy == a and hash(copy) == hash(a) and alpha_equal(copy, a)
    assert astext(copy) == astext(a)
    if a == b:
        assert hash(a) == hash(b)
    assert (a == b) == (b == a)
    if astext(a) != astext(b):
        assert a != b
