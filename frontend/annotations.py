"""Python annotations for @relay parameters: dtypes, ``Tensor[dtype, shape]``, ``Dim``.

``Float`` alone is a float32 scalar; ``Tensor[Float, (N, 784)]`` a tensor whose first
dimension is the dimension variable ``N = Dim("N")``; ``Tensor[Float, (Any, 3)]`` one whose first
dimension is known only at run time (``relayish.Any``, the text format's ``?``); ``tuple[...]`` a tuple,
``Callable[[...], R]`` a function and a data type (``Tree``, ``List[Tensor[Float, 3]]``: frontend.data) its values. Outside ``@relay`` the dtype markers convert values
(``Float64(0.5)`` is a float64 0-d array), so an undecorated function runs in NumPy.
"""

from __future__ import annotations

import collections.abc
import typing
from typing import Any, Callable

import attrs
import numpy as np

from relayish.dims import UNKNOWN_DIM
from relayish.dims import Dim as DimValue
from relayish.types import (
    BaseType, BoolType, DataType, FloatType, FuncType, IntType, Kind, Shape, TensorType, TupleType, Type,
    TypeVar, UIntType,
)  # fmt: skip


@attrs.frozen
class DType:
    """A dtype marker (``Float``, ``Int64``, ...): a scalar annotation, an attribute value
    (``relay.cast(x, dtype=Float64)``) and, called, a conversion (``Float64(x)``)."""

    name: str
    base: BaseType

    def __call__(self, value: Any) -> np.ndarray:
        return np.asarray(value, dtype=self.base.to_numpy())

    def __repr__(self) -> str:
        return self.name


Float16 = DType("Float16", FloatType(16))
Float32 = DType("Float32", FloatType(32))
Float64 = DType("Float64", FloatType(64))
Float = DType("Float", FloatType(32))
Int8 = DType("Int8", IntType(8))
Int16 = DType("Int16", IntType(16))
Int32 = DType("Int32", IntType(32))
Int64 = DType("Int64", IntType(64))
Int = DType("Int", IntType(32))
UInt8 = DType("UInt8", UIntType(8))
Bool = DType("Bool", BoolType())

DTYPES = (Float, Float16, Float32, Float64, Int, Int8, Int16, Int32, Int64, UInt8, Bool)


@attrs.frozen
class Dim:
    """A dimension variable for annotations: ``N = Dim("N")``; ``Tensor[Float, (N, 10)]``.
    Within one function every ``Dim`` of one name is the same dimension."""

    name: str


@attrs.frozen
class TensorSpec:
    dtype: DType
    shape: tuple[int | Dim | DimValue, ...]


class Tensor:
    """``Tensor[dtype, shape]``: shape is a tuple of ints, ``Dim``s and ``Any``, or one of them."""

    def __class_getitem__(cls, item: Any) -> TensorSpec:
        if not (isinstance(item, tuple) and len(item) == 2):
            raise TypeError("write Tensor[dtype, shape], e.g. Tensor[Float, (N, 784)]")
        dtype, shape = item
        if not isinstance(dtype, DType):
            raise TypeError(f"Tensor[dtype, shape]: the dtype must be Float, Int, ... not {dtype!r}")
        shape = shape if isinstance(shape, tuple) else (shape,)
        for d in shape:
            if not (isinstance(d, Dim) or d is UNKNOWN_DIM or (isinstance(d, int) and not isinstance(d, bool) and d >= 0)):
                raise TypeError(f"Tensor[dtype, shape]: each dimension must be an int >= 0, a Dim or Any, not {d!r}")
        return TensorSpec(dtype, shape)


class DataAnnotation:
    """A data type in an annotation (``Tree``, ``List[Tensor[Float, 3]]``): what ``to_type`` asks
    of one. frontend.data defines them (data types build on annotations, not the reverse)."""

    def applied(self) -> tuple[Any, tuple[Any, ...]]:
        """The data type (with ``name``, ``params`` and ``origin``: its Data) and its type arguments."""
        raise NotImplementedError


class AnnotationError(Exception):
    """An annotation that is not a relayish type (the caller adds the source position)."""


def to_type(annotation: Any, dims: dict[str, TypeVar], found: dict[str, Any] | None = None,
            resolve: Callable[[str], Any] | None = None) -> Type:
    """The relayish type an annotation denotes; ``dims`` maps Dim names to the function's
    dimension variables (new names are added), ``found`` receives the data types it names (two
    of one name are an error). ``resolve`` evaluates the strings of a data type's field types,
    which may also name its parameters (the type variables it returns): data definitions only."""
    if isinstance(annotation, str) and resolve is not None:
        annotation = resolve(annotation)
    if isinstance(annotation, typing.ForwardRef) and resolve is not None:
        annotation = resolve(annotation.__forward_arg__)
    if isinstance(annotation, TypeVar) and resolve is not None and annotation.kind is Kind.TYPE:
        return annotation
    if isinstance(annotation, DType):
        return TensorType(annotation.base, Shape())
    if isinstance(annotation, TensorSpec):
        shape = [dims.setdefault(d.name, TypeVar(d.name, Kind.DIM)) if isinstance(d, Dim) else d for d in annotation.shape]
        return TensorType(annotation.dtype.base, Shape(*shape))
    if isinstance(annotation, DataAnnotation):
        data, args = annotation.applied()
        if len(args) != len(data.params):
            raise AnnotationError(f"the data type {data.name} takes {len(data.params)} type argument"
                                  f"{'s' * (len(data.params) != 1)}: write {data.name}[{', '.join(data.params)}] with "
                                  "types in their place, e.g. List[Tensor[Float, 3]]")
        if found is not None:
            other = found.setdefault(data.name, data)
            if other is not data:
                raise AnnotationError(f"two data types are named {data.name} ({other.origin} and {data.origin}): "
                                      "rename one")
        return DataType(data.name, [to_type(a, dims, found, resolve) for a in args])
    origin = typing.get_origin(annotation)
    args = typing.get_args(annotation)
    if origin is tuple:
        if len(args) == 2 and args[1] is Ellipsis:
            raise AnnotationError("tuple[T, ...] has no fixed length: list the field types, tuple[A, B]")
        return TupleType([to_type(a, dims, found, resolve) for a in args])
    if origin is collections.abc.Callable:
        params, ret = args
        if params is Ellipsis:
            raise AnnotationError("Callable[..., R]: list the parameter types, Callable[[A, B], R]")
        return FuncType([to_type(p, dims, found, resolve) for p in params], to_type(ret, dims, found, resolve))
    raise AnnotationError(
        f"{annotation!r} is not a relayish type: write a dtype (Float, Float64, Int32, Bool, ...), "
        "Tensor[Float, (N, 784)], tuple[A, B], Callable[[A, B], R] or a data type (relayish.data)")
