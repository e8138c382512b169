"""The operator registry: each operator declared once, with everything the core needs.

An ``OpDef`` holds the operator's name, arity, attribute schema, fusion pattern and its
reference semantics in NumPy (what the evaluator runs). The type relation slot is filled by
``typecheck``; gradient rules live in ``ad/`` and kernels in ``jit/``, keyed by name.
"""

from __future__ import annotations

import enum
import functools
from typing import Any, Callable, Iterable, Mapping

import attrs
import numpy as np
from attrs import field

from ..errors import AttributeSchemaError
from ..types import BaseType


class Pattern(enum.Enum):
    """How the optimizer may fuse an operator (docs/design.md)."""

    ELEMWISE = "elementwise"
    BROADCAST = "broadcast"
    REDUCE = "reduction"
    OPAQUE = "opaque"


# Attribute kinds: each converts a user value to its canonical form or raises ValueError
# saying what was expected. Canonical values are ints, floats, bools, None, strings,
# tuples of ints and base types: exactly what the text format can print.


def _int(value: Any) -> int:
    if isinstance(value, bool) or not isinstance(value, (int, np.integer)):
        raise ValueError("an integer")
    return int(value)


def _float(value: Any) -> float:
    if isinstance(value, bool) or not isinstance(value, (int, float, np.integer, np.floating)):
        raise ValueError("a number")
    return float(value)


def _bool(value: Any) -> bool:
    if not isinstance(value, (bool, np.bool_)):
        raise ValueError("true or false")
    return bool(value)


def _ints(value: Any) -> tuple[int, ...]:
    if not isinstance(value, (tuple, list)):
        raise ValueError("a tuple of integers")
    return tuple(_int(v) for v in value)


def _axes(value: Any) -> int | tuple[int, ...] | None:
    if value is None:
        return None
    if isinstance(value, (tuple, list)):
        return _ints(value)
    return _int(value)


def _pair(value: Any) -> tuple[int, int]:
    if isinstance(value, (tuple, list)):
        pair = _ints(value)
        if len(pair) != 2:
            raise ValueError("an integer or a pair of integers")
        return pair
    v = _int(value)
    return (v, v)


def _dtype(value: Any) -> BaseType:
    if isinstance(value, BaseType):
        return value
    try:
        return BaseType.from_numpy(np.dtype(value))
    except (TypeError, ValueError):
        raise ValueError("a base type such as FloatType(32)") from None


def _str(value: Any) -> str:
    if not isinstance(value, str):
        raise ValueError("a string")
    return value


def _optional(kind: Callable[[Any], Any]) -> Callable[[Any], Any]:
    def convert(value: Any) -> Any:
        return None if value is None else kind(value)

    return convert


ATTR_KINDS: dict[str, Callable[[Any], Any]] = {
    "int": _int,
    "float": _float,
    "bool": _bool,
    "ints": _ints,
    "axes": _axes,  # an int, a tuple of ints, or None (all axes)
    "pair": _pair,  # an int n means (n, n)
    "dtype": _dtype,
    "str": _str,
    "int?": _optional(_int),
    "ints?": _optional(_ints),
    "pair?": _optional(_pair),
}

def _same_value(a: Any, b: Any) -> bool:
    """Equality that keeps -0.0 apart from 0.0 and NaN equal to NaN, as the text does."""
    if isinstance(a, float) and isinstance(b, float):
        return a.hex() == b.hex()
    if isinstance(a, tuple) and isinstance(b, tuple):
        return len(a) == len(b) and all(_same_value(x, y) for x, y in zip(a, b))
    return type(a) is type(b) and a == b


REQUIRED = attrs.make_class("Required", [], frozen=True)()


@attrs.frozen
class AttrSpec:
    """One attribute: its name, kind (a key of ATTR_KINDS) and default (REQUIRED if none)."""

    name: str
    kind: str = attrs.field(validator=attrs.validators.in_(ATTR_KINDS))
    default: Any = REQUIRED

    def convert(self, value: Any) -> Any:
        return ATTR_KINDS[self.kind](value)

    def convert_default(self) -> Any:
        return None if self.default is None else self.convert(self.default)


@attrs.frozen
class OpDef:
    """An operator: ``compute(*arrays, **attrs) -> array`` is its NumPy semantics."""

    name: str
    compute: Callable[..., Any]
    pattern: Pattern
    num_args: int | tuple[int, int | None]  # exact count, or (min, max) with None unbounded
    attrs: tuple[AttrSpec, ...] = ()
    differentiable: bool = True
    type_relation: Callable[..., Any] | None = field(default=None, eq=False)
    doc: str = ""

    def check_arity(self, count: int) -> str | None:
        """None when ``count`` arguments are fine, else what was expected."""
        if isinstance(self.num_args, int):
            lo = hi = self.num_args
        else:
            lo, hi = self.num_args
        if count < lo or (hi is not None and count > hi):
            if lo == hi:
                return f"{lo} argument{'s' * (lo != 1)}"
            return f"at least {lo} argument{'s' * (lo != 1)}" if hi is None else f"{lo} to {hi} arguments"
        return None

    def normalize_attrs(self, given: Mapping[str, Any] | Iterable[tuple[str, Any]]) -> tuple[tuple[str, Any], ...]:
        """Validate attributes; return them in schema order with defaults left out.

        Leaving defaults out makes the form canonical: ``sum(x, keepdims=false)`` and
        ``sum(x)`` are the same call and print the same.
        """
        if not given and all(spec.default is not REQUIRED for spec in self.attrs):
            return ()  # most calls: no attributes, none needed (every rebuilt Call comes here)
        given = dict(given)
        specs = {spec.name: spec for spec in self.attrs}
        unknown = sorted(set(given) - set(specs))
        if unknown:
            allowed = ", ".join(specs) or "none"
            raise AttributeSchemaError(
                f"operator {self.name} has no attribute {unknown[0]!r} (its attributes: {allowed})"
            )
        result = []
        for spec in self.attrs:
            if spec.name not in given:
                if spec.default is REQUIRED:
                    raise AttributeSchemaError(f"operator {self.name} needs attribute {spec.name!r}")
                continue
            try:
                value = spec.convert(given[spec.name])
            except ValueError as err:
                raise AttributeSchemaError(
                    f"attribute {spec.name!r} of operator {self.name} must be {err}, not {given[spec.name]!r}"
                ) from None
            if spec.default is REQUIRED or not _same_value(value, spec.convert_default()):
                result.append((spec.name, value))
        return tuple(result)

    def full_attrs(self, normalized: Iterable[tuple[str, Any]]) -> dict[str, Any]:
        """Every attribute with defaults filled in, ready for ``compute``."""
        values = {spec.name: spec.convert_default() for spec in self.attrs if spec.default is not REQUIRED}
        values.update(normalized)
        return values

    def __call__(self, *args: Any, **attr_values: Any) -> Any:
        """Run the NumPy semantics directly (arrays in, array out)."""
        full = self.full_attrs(self.normalize_attrs(attr_values))
        return self.compute(*(np.asarray(a) for a in args), **full)


_REGISTRY: dict[str, OpDef] = {}


def register(op: OpDef) -> OpDef:
    """Declare an operator; each name once."""
    if op.name in _REGISTRY:
        raise ValueError(f"operator {op.name} is already registered")
    _REGISTRY[op.name] = op
    return op


def get_op(name: str) -> OpDef:
    _load_library()
    try:
        return _REGISTRY[name]
    except KeyError:
        raise KeyError(f"unknown operator {name!r}") from None


def lookup_op(name: str) -> OpDef | None:
    _load_library()
    return _REGISTRY.get(name)


def all_ops() -> dict[str, OpDef]:
    _load_library()
    return dict(_REGISTRY)


@functools.cache
def _load_library() -> None:
    from . import library  # noqa: F401  (registers the standard operators on import)
    from .relations import attach_relations

    attach_relations()
