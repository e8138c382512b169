"""Types and kinds (the Relay paper's Figure 5, plus dimension variables).

Types are immutable and compare structurally, except type variables, which are equal only
to themselves (names are for printing). Equality and hashing are iterative and the hash is
computed once, bottom-up, at construction, so a type nested 100,000 deep compares and
hashes without recursion.
"""

from __future__ import annotations

import enum
import functools
import itertools
from typing import Iterator

import attrs
import numpy as np

from .dims import Dim, DimLike, as_dim


class Kind(enum.Enum):
    TYPE = "Type"
    SHAPE = "Shape"
    BASE_TYPE = "BaseType"
    DIM = "Dim"


class Type:
    """Base of all type-level terms: base types, shapes, types, type variables."""

    __slots__ = ()

    def _items(self) -> Iterator[object]:
        """Field values in order, tuples flattened behind their length."""
        for name in _field_names(type(self)):
            value = getattr(self, name)
            if isinstance(value, tuple):
                yield len(value)
                yield from value
            else:
                yield value

    def __attrs_post_init__(self) -> None:
        parts = tuple(v._hash if isinstance(v, Type) else v for v in self._items())
        object.__setattr__(self, "_hash", hash((type(self).__name__, parts)))

    def __hash__(self) -> int:
        return self._hash

    def __reduce__(self) -> tuple:
        """Pickled as its constructor's arguments: the cached hash (of strings, which hash
        differently in every process) is computed again where it is loaded."""
        fields = attrs.fields(type(self))
        return _build, (type(self), {f.alias: getattr(self, f.name) for f in fields if f.init})

    def __eq__(self, other: object) -> bool:
        if self is other:
            return True
        if not isinstance(other, Type):
            return NotImplemented
        stack = [(self, other)]
        seen: set[tuple[int, int]] = set()  # types are DAGs: compare each shared pair once
        while stack:
            a, b = stack.pop()
            if a is b or (id(a), id(b)) in seen:
                continue
            seen.add((id(a), id(b)))
            if type(a) is not type(b) or a._hash != b._hash or isinstance(a, TypeVar):
                return False
            for x, y in zip(a._items(), b._items(), strict=True):
                if isinstance(x, Type):
                    if not isinstance(y, Type):
                        return False
                    stack.append((x, y))
                elif x != y:
                    return False
        return True

    def __repr__(self) -> str:
        from .printer import astext

        return astext(self)

    __str__ = __repr__


def _build(cls: type, arguments: dict) -> Type:
    """A type from its attrs fields (``Shape`` has an ``__init__`` of its own: attrs' is then
    ``__attrs_init__``)."""
    obj = object.__new__(cls)
    getattr(cls, "__attrs_init__", cls.__init__)(obj, **arguments)
    return obj


@functools.cache
def _field_names(cls: type) -> tuple[str, ...]:
    return tuple(f.name for f in attrs.fields(cls) if f.name != "_hash")


def _type_class(cls):
    return attrs.define(frozen=True, slots=True, eq=False, repr=False)(cls)


_hash_field = attrs.field(init=False, default=0)


class BaseType(Type):
    """A scalar element type (kind BaseType)."""

    __slots__ = ()
    widths: tuple[int, ...] = ()
    numpy_kind = ""

    def to_numpy(self) -> np.dtype:
        return np.dtype(f"{self.numpy_kind}{self.bits // 8}") if self.numpy_kind != "b" else np.dtype(bool)

    @staticmethod
    @functools.cache
    def from_numpy(dtype: np.dtype) -> BaseType:
        dtype = np.dtype(dtype)
        for cls in (IntType, UIntType, FloatType):
            if dtype.kind == cls.numpy_kind and dtype.itemsize * 8 in cls.widths:
                return cls(dtype.itemsize * 8)
        if dtype.kind == "b":
            return BoolType()
        raise TypeError(f"relayish has no base type for NumPy dtype {dtype}")


def _check_width(instance: BaseType, attribute: attrs.Attribute, value: int) -> None:
    if value not in instance.widths:
        raise ValueError(f"{type(instance).__name__} width must be one of {instance.widths}, not {value}")


@_type_class
class IntType(BaseType):
    bits: int = attrs.field(validator=_check_width)
    _hash: int = _hash_field
    widths = (8, 16, 32, 64)
    numpy_kind = "i"


@_type_class
class UIntType(BaseType):
    bits: int = attrs.field(validator=_check_width)
    _hash: int = _hash_field
    widths = (8, 16, 32, 64)
    numpy_kind = "u"


@_type_class
class FloatType(BaseType):
    bits: int = attrs.field(validator=_check_width)
    _hash: int = _hash_field
    widths = (16, 32, 64)
    numpy_kind = "f"


@_type_class
class BoolType(BaseType):
    _hash: int = _hash_field
    numpy_kind = "b"
    bits = 8


def _as_dims(values) -> tuple[Dim, ...]:
    return tuple(as_dim(v) for v in values)


@_type_class
class Shape(Type):
    """A tensor shape (kind Shape): a tuple of dimensions, each possibly symbolic."""

    dims: tuple[Dim, ...] = attrs.field(converter=_as_dims)
    _hash: int = _hash_field

    def __init__(self, *dims: DimLike):
        self.__attrs_init__(dims)

    @property
    def rank(self) -> int:
        return len(self.dims)

    def static(self) -> tuple[int, ...] | None:
        """The shape as ints when every dimension is a constant, else None."""
        values = tuple(d.value for d in self.dims)
        return None if any(v is None for v in values) else values


_serial = itertools.count()


@attrs.define(frozen=True, slots=True, eq=False, repr=False)
class TypeVar(Type):
    """A type-level variable of some kind; identity is by object, the name only prints."""

    name: str
    kind: Kind = Kind.TYPE
    serial: int = attrs.field(init=False, factory=lambda: next(_serial))
    _hash: int = _hash_field

    def __attrs_post_init__(self) -> None:
        object.__setattr__(self, "_hash", object.__hash__(self))

    # Dimension variables take part in shape arithmetic directly: ``2 * n + 1``.
    def as_dim(self) -> Dim:
        """This dimension variable as a Dim (``dims.as_dim`` converts type variables with it)."""
        if self.kind is not Kind.DIM:
            raise TypeError(f"type variable {self.name} of kind {self.kind.value} is not a dimension")
        return Dim.atom(self)

    def __add__(self, other): return self.as_dim() + other  # noqa: E704
    def __radd__(self, other): return other + self.as_dim()  # noqa: E704
    def __sub__(self, other): return self.as_dim() - other  # noqa: E704
    def __rsub__(self, other): return as_dim(other) - self.as_dim()  # noqa: E704
    def __mul__(self, other): return self.as_dim() * other  # noqa: E704
    def __rmul__(self, other): return as_dim(other) * self.as_dim()  # noqa: E704
    def __floordiv__(self, other): return self.as_dim() // other  # noqa: E704
    def __rfloordiv__(self, other): return as_dim(other) // self.as_dim()  # noqa: E704
    def __neg__(self): return -self.as_dim()  # noqa: E704


@_type_class
class TensorType(Type):
    """``Tensor(dtype, shape)``; dtype and shape may be type variables of their kinds."""

    dtype: Type
    shape: Type
    _hash: int = _hash_field


@_type_class
class TupleType(Type):
    """A product type; ``TupleType(())`` is unit."""

    fields: tuple[Type, ...] = attrs.field(converter=tuple)
    _hash: int = _hash_field


@_type_class
class FuncType(Type):
    params: tuple[Type, ...] = attrs.field(converter=tuple)
    ret: Type
    _hash: int = _hash_field


@_type_class
class RefType(Type):
    value: Type
    _hash: int = _hash_field


@_type_class
class DataType(Type):
    """``Name[args]``: a value of the algebraic data type ``Name`` that the module defines
    (``type Name[a, ...] { Ctor(fields), ... }``), its type parameters given by ``args``."""

    name: str
    args: tuple[Type, ...] = attrs.field(default=(), converter=tuple)
    _hash: int = _hash_field


@_type_class
class ForallType(Type):
    """``forall (a: K, ...), body``: binds its type variables in ``body``."""

    params: tuple[TypeVar, ...] = attrs.field(converter=tuple)
    body: Type
    _hash: int = _hash_field

    def __attrs_post_init__(self) -> None:
        # Like every type, a forall equals only a forall over the very same variables
        # (alpha-equivalence is relayish.alpha_equal), so hashing the body suffices.
        object.__setattr__(self, "_hash", hash(("forall", len(self.params), self.body._hash)))


def is_first_order(ty: Type) -> bool:
    """Whether ``ty`` is a tensor or (nested) tuples of tensors: a value that can be compared,
    zeroed, read from arguments and differentiated with respect to."""
    stack = [ty]
    while stack:
        t = stack.pop()
        if isinstance(t, TupleType):
            stack.extend(t.fields)
        elif not isinstance(t, TensorType):
            return False
    return True


def with_axis(ty: Type, axis: int, size: Dim) -> Type | None:
    """``ty`` (tensors, tuples of them) with a dimension ``size`` inserted at ``axis`` of each
    tensor: the type of a batch of ``ty`` (``Vmap``). None where ``ty`` is not first-order, has a
    tensor of unknown rank or of rank below ``axis``."""
    if isinstance(ty, TupleType):
        fields = [with_axis(f, axis, size) for f in ty.fields]
        return None if any(f is None for f in fields) else TupleType(fields)
    if not (isinstance(ty, TensorType) and isinstance(ty.shape, Shape) and ty.shape.rank >= axis):
        return None
    dims = ty.shape.dims
    return TensorType(ty.dtype, Shape(*dims[:axis], size, *dims[axis:]))


def mapped_type(params: list[Type], ret: Type, in_axes: tuple[int | None, ...], size: Dim) -> FuncType:
    """The type of ``Vmap(f, in_axes)`` for ``f`` of type ``(params) -> ret`` and batch ``size``; a
    ValueError saying what is wrong where the axes do not fit the function."""
    if len(in_axes) != len(params):
        raise ValueError(f"in_axes has {len(in_axes)} entries, but the function takes {len(params)} parameters: give "
                         "one axis (or none) per parameter")
    if all(axis is None for axis in in_axes):
        raise ValueError("every entry of in_axes is none, so nothing says how many examples there are")
    mapped = []
    for i, (axis, param) in enumerate(zip(in_axes, params)):
        ty = param if axis is None else with_axis(param, axis, size)
        if ty is None:
            raise ValueError(f"parameter {i + 1} has type {param}, which cannot be mapped over axis {axis}: mapped "
                             "parameters are tensors (of rank at least the axis) or tuples of them, of known rank")
        mapped.append(ty)
    batched_ret = with_axis(ret, 0, size)
    if batched_ret is None:
        raise ValueError(f"the function returns {ret}; a batched result must be tensors or tuples of them")
    return FuncType(mapped, batched_ret)


def has_unknown_dim(ty: Type) -> bool:
    """Whether a tensor type in ``ty`` has a ``?`` dimension. Two equal types with ``?`` may hold
    values of different sizes, so code that takes equal types to mean equal sizes (dropping a
    ``sum_to``, fusing a loop, updating in place) must first ask this."""
    stack = [ty]
    while stack:
        t = stack.pop()
        if isinstance(t, Shape):
            if any(d.is_unknown for d in t.dims):
                return True
        elif not isinstance(t, TypeVar):
            stack.extend(v for v in t._items() if isinstance(v, Type))
    return False


def data_types_in(ty: Type) -> list[DataType]:
    """The data types that ``ty`` mentions, each occurrence (types are DAGs: shared parts once)."""
    found: list[DataType] = []
    stack, seen = [ty], set()
    while stack:
        t = stack.pop()
        if id(t) in seen:
            continue
        seen.add(id(t))
        if isinstance(t, DataType):
            found.append(t)
        if not isinstance(t, TypeVar):
            stack.extend(v for v in t._items() if isinstance(v, Type))
    return found


def scalar_type(dtype: BaseType) -> TensorType:
    """The rank-0 tensor type of a base type."""
    return TensorType(dtype, Shape())


UNIT = TupleType(())
