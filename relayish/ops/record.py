"""The operator record: everything about one operator, in one value.

An ``OpDef`` holds what every layer needs to know about an operator, so that adding one
means writing one record (docs/operators.md, "Adding an operator"):

- ``compute``: its NumPy semantics, what the evaluator runs and the oracle for the rest;
- ``attrs``: the attribute schema; ``num_args``: the arity;
- ``type_relation``: its result type from its argument types (the type checker);
- ``gradient``: the adjoint of each argument as operator calls (AD), None where the
  operator is not differentiable;
- ``raises``: when a well-typed call can raise (what the optimizer may move or drop);
- ``pattern`` and ``element``: how it fuses; an elementwise operator's value at one element
  in the element language (``relayish.ops.element``), from which the compiler writes its
  scalar code and its CPU and CUDA kernels;
- ``lowering``: for an operator defined by others (``logsumexp``, ``layer_norm``), the
  operator calls it stands for: the compiler expands it, so its kernels are theirs;
- ``rule`` and ``hint``: how the program generator makes a call with a given result type;
- ``unknown_sizes``: its result type has ``?`` whatever its arguments' (``dyn_reshape``), so
  the optimizer keeps the run-time size checks of programs calling it.
- ``definition``: for an operator defined by an index expression (``relayish.ix``), that
  definition, from which its other parts are derived.

Gradient and lowering rules get a ``Site`` (``relayish.ops.sites``): the call's arguments
and types and a builder of operator calls, so the records never import the expression
classes and the core has no import cycle.
"""

from __future__ import annotations

import enum
import typing
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


def _padding(value: Any) -> tuple[int, ...]:
    """Relay's convolution padding: n, (height, width), or (top, left, bottom, right); four
    numbers that pad both sides alike are written as their pair, so each padding has one form."""
    if isinstance(value, (tuple, list)) and len(value) == 4:
        top, left, bottom, right = _ints(value)
        return (top, left) if (top, left) == (bottom, right) else (top, left, bottom, right)
    try:
        return _pair(value)
    except ValueError:
        raise ValueError("an integer, a pair (height, width) or four integers (top, left, bottom, right)") from None


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
    "padding": _padding,  # a pair, or Relay's (top, left, bottom, right) where the sides differ
    "dtype": _dtype,
    "str": _str,
    "int?": _optional(_int),
    "float?": _optional(_float),
    "ints?": _optional(_ints),
    "pair?": _optional(_pair),
    "dtype?": _optional(_dtype),
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
class Raises:
    """When a call whose arguments have the types it was checked with can raise at run time.

    The optimizer may drop, move or speculate a call that cannot raise; one that may must
    stay where it is, in order. Judged from the argument types (``jit/passes/util.py``).
    """

    when: str
    indexed: int | None = None  # on indices: the argument that the indices (argument 1) index

    NEVER: "typing.ClassVar[Raises]"  # never: the type relation checks everything
    ON_INTEGERS: "typing.ClassVar[Raises]"  # only with integer arguments (division by 0, negative powers)
    ON_EMPTY: "typing.ClassVar[Raises]"  # only when an argument may be empty (an empty max raises)
    UNLESS_RANKED: "typing.ClassVar[Raises]"  # never when every argument's rank is known: the relation
    # checks the dimensions symbolically or demands static sizes
    ON_WINDOWS: "typing.ClassVar[Raises]"  # only when a windowed axis (past the batch) has a symbolic size
    MAYBE: "typing.ClassVar[Raises]"  # anything else: always assumed to raise

    @staticmethod
    def on_indices(indexed: int) -> Raises:
        """Only when the indices (argument 1) are not constants inside argument ``indexed``."""
        return Raises("on indices", indexed)


Raises.NEVER = Raises("never")
Raises.ON_INTEGERS = Raises("on integers")
Raises.ON_EMPTY = Raises("on empty")
Raises.UNLESS_RANKED = Raises("unless ranked")
Raises.ON_WINDOWS = Raises("on windows")
Raises.MAYBE = Raises("maybe")


@attrs.frozen
class OpDef:
    """An operator: ``compute(*arrays, **attrs) -> array`` is its NumPy semantics; the other
    fields are described in the module docstring."""

    name: str
    compute: Callable[..., Any]
    pattern: Pattern
    num_args: int | tuple[int, int | None]  # exact count, or (min, max) with None unbounded
    type_relation: Callable[[list[Any], dict[str, Any]], Any] = field(eq=False)
    attrs: tuple[AttrSpec, ...] = ()
    gradient: Callable[[Any], list[Any]] | None = field(default=None, eq=False)
    raises: Raises = Raises.MAYBE
    element: str | None = None
    lowering: Callable[[Any], Any] | None = field(default=None, eq=False)
    rule: Callable[..., Any] | None = field(default=None, eq=False)
    hint: Any = None
    doc: str = ""  # the semantics: the operator table's column (docs/operators.md, relayish.ops.catalog)
    signature: str = ""  # the arguments as the table names them ("x", "a, b", "x, w[, b]")
    dtypes: str = ""  # the dtypes accepted and given ("float", "numeric", "any → bool")
    # its result type has ``?`` whatever its arguments' types (dyn_reshape: the sizes are in a
    # tensor's values), so a program calling it has run-time size checks though no type it writes has ``?``
    unknown_sizes: bool = False
    # an operator defined by an index expression: its definition (relayish/ix), from which the
    # other parts are derived
    definition: Any = field(default=None, eq=False)

    # whether AD propagates adjoints through it: it has a gradient, or a lowering whose expansion
    # differentiates (a lowered argmin or arange does not: ``define(..., differentiable=False)``)
    differentiable: bool = field()

    @differentiable.default
    def _differentiable(self) -> bool:
        return self.gradient is not None or self.lowering is not None

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
