"""Symbolic tensor dimensions in a canonical polynomial form.

A dimension is an integer polynomial over *atoms*: dimension variables (``TypeVar`` of kind
Dim) and floor divisions that could not be simplified. Terms are kept as a mapping from
monomials (a frozenset of ``(atom, power)`` pairs) to non-zero integer coefficients, so two
dimensions that are equal as polynomials compare equal however they were written:
``n - k + 1 == 1 + n - k`` and ``2*n == n + n``. Floor division is exact only where it is:
``(n*m) // m`` is ``n``, ``(2*n + 1) // 2`` is ``n``, ``(n + 1) // 2`` stays a division.
Dimensions have limits (``MAX_FLOORDIV_NESTING``, ``MAX_SIZE``, ``MAX_DIGITS``, see
docs/text-format.md); an operation whose result would pass one raises ``RelayError``.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Callable, Iterator, Mapping, Union

from .errors import RelayError
from .names import Names

if TYPE_CHECKING:
    from .types import TypeVar

Monomial = frozenset  # frozenset[tuple[Atom, int]]; the empty monomial is the constant 1
DimLike = Union["Dim", int, "TypeVar"]


# Limits: going past one is a RelayError (a ParseError where the text says it). No real shape
# comes near them; they keep every operation on dimensions (which recurse through floor
# divisions, and copy them out when substituting) quick and far from Python's stack limit.
MAX_FLOORDIV_NESTING = 64
MAX_SIZE = 1_000  # terms plus atoms, a floor division counting its numerator and denominator:
# this bounds a dimension's printed text, which substitution could otherwise double at each step
MAX_DIGITS = 100  # of a constant or coefficient (Python prints no integer over 4,300 digits)
_COEFFICIENT_BOUND = 10**MAX_DIGITS


def _too_large() -> RelayError:
    return RelayError(f"a dimension may have at most {MAX_SIZE:,} terms and atoms (floor divisions written out)")


def _nesting(d: Dim) -> int:
    return max((atom.nesting for atom in d.atoms() if isinstance(atom, FloorDiv)), default=0)


class _Unknown:
    """The atom of ``?``: a dimension known only at run time (Relay's ``Any``). One object: every
    ``?`` prints, compares and hashes alike, so types with ``?`` round-trip through the text.
    Equality says nothing about sizes, though: two ``?`` may differ at run time, which is why the
    checker treats ``?`` as consistent with any dimension and checks it where it meets a known
    one (docs/design.md, "Dynamic dimensions")."""

    __slots__ = ()
    size = 1

    def __reduce__(self) -> str:
        return "UNKNOWN"  # the module's one instance, by name

    def __repr__(self) -> str:
        return "?"


UNKNOWN = _Unknown()
_UNKNOWN_TERMS = {frozenset({(UNKNOWN, 1)}): 1}


class FloorDiv:
    """An atom ``num // den`` kept symbolic because it is not exact."""

    __slots__ = ("num", "den", "nesting", "size", "_hash")

    def __init__(self, num: Dim, den: Dim):
        self.num = num
        self.den = den
        self.nesting = 1 + max(_nesting(num), _nesting(den))
        if self.nesting > MAX_FLOORDIV_NESTING:
            raise RelayError(f"a dimension may nest at most {MAX_FLOORDIV_NESTING} floor divisions")
        self.size = 1 + num.size + den.size
        self._hash = hash(("//", num, den))

    def __eq__(self, other: object) -> bool:
        return isinstance(other, FloorDiv) and self.num == other.num and self.den == other.den

    def __reduce__(self) -> tuple:
        return FloorDiv, (self.num, self.den)  # the hash is computed again where it is loaded

    def __hash__(self) -> int:
        return self._hash

    def __repr__(self) -> str:
        return f"FloorDiv({self.num!r}, {self.den!r})"


def _mono_mul(a: Monomial, b: Monomial) -> Monomial:
    powers = dict(a)
    for atom, p in b:
        powers[atom] = powers.get(atom, 0) + p
    return frozenset(powers.items())


def _mono_div(a: Monomial, b: Monomial) -> Monomial | None:
    """``a / b`` when ``b`` divides ``a``, else None."""
    powers = dict(a)
    for atom, p in b:
        left = powers.get(atom, 0) - p
        if left < 0:
            return None
        if left:
            powers[atom] = left
        else:
            powers.pop(atom, None)
    return frozenset(powers.items())


class Dim:
    """An immutable integer polynomial over dimension atoms."""

    __slots__ = ("terms", "size", "_hash", "is_unknown")

    def __init__(self, terms: Mapping[Monomial, int]):
        self.terms = {m: c for m, c in terms.items() if c != 0}
        # whether this is ``?``: arithmetic with ? gives ?, ``? + 1`` is as unknown as ``?`` (an attribute:
        # the argument check of every compiled call asks it per axis)
        self.is_unknown = any(atom is UNKNOWN for mono in self.terms for atom, _ in mono)
        if self.is_unknown:
            self.terms = dict(_UNKNOWN_TERMS)
        size = len(self.terms)
        for mono, coeff in self.terms.items():
            if not -_COEFFICIENT_BOUND < coeff < _COEFFICIENT_BOUND:
                raise RelayError(f"a dimension's constants and coefficients may have at most {MAX_DIGITS} digits")
            for atom, _ in mono:
                size += atom.size if type(atom) is FloorDiv else 1
        if size > MAX_SIZE:
            raise _too_large()
        self.size = size
        value = self.value
        # A constant hashes like its int, since it compares equal to it.
        self._hash = hash(value) if value is not None else hash(frozenset(self.terms.items()))

    def __reduce__(self) -> tuple:
        """Pickled as its terms: the hash (of objects whose hashes differ per process) is
        computed again where it is loaded."""
        return Dim, (self.terms,)

    # construction -------------------------------------------------------------------
    @staticmethod
    def const(value: int) -> Dim:
        return Dim({frozenset(): int(value)})

    @staticmethod
    def atom(atom: object) -> Dim:
        return Dim({frozenset({(atom, 1)}): 1})

    @staticmethod
    def unknown() -> Dim:
        """``?``: a dimension known only at run time."""
        return UNKNOWN_DIM

    # queries ------------------------------------------------------------------------
    @property
    def is_const(self) -> bool:
        return all(not m for m in self.terms)

    @property
    def value(self) -> int | None:
        """The integer value when the dimension is a constant, else None."""
        if not self.is_const:
            return None
        return self.terms.get(frozenset(), 0)

    def lone_atom(self) -> object | None:
        """The atom when this dimension is exactly one atom (``n``, not ``2*n``, ``n*n`` or ``n + 1``)."""
        if len(self.terms) == 1:
            ((mono, coeff),) = self.terms.items()
            if coeff == 1 and len(mono) == 1:
                ((atom, power),) = mono
                if power == 1:
                    return atom
        return None

    def atoms(self) -> Iterator[object]:
        for mono in self.terms:
            for atom, _ in mono:
                yield atom

    def free_vars(self) -> set:
        """Dimension variables this dimension mentions, inside floor divisions too."""
        found: set = set()
        stack = [self]
        while stack:
            dim = stack.pop()
            for atom in dim.atoms():
                if isinstance(atom, FloorDiv):
                    stack += [atom.num, atom.den]
                elif atom is not UNKNOWN:
                    found.add(atom)
        return found

    def substitute(self, mapping: Mapping[object, Dim]) -> Dim:
        """Replace dimension variables by dimensions, re-canonicalizing the result."""
        if not mapping:
            return self
        total = Dim.const(0)
        for mono, coeff in self.terms.items():
            term = Dim.const(coeff)
            for atom, power in mono:
                if isinstance(atom, FloorDiv):
                    base = atom.num.substitute(mapping) // atom.den.substitute(mapping)
                else:
                    base = mapping.get(atom)
                    base = Dim.atom(atom) if base is None else as_dim(base)
                for _ in range(power):
                    term = term * base
            total = total + term
        return total

    # arithmetic ---------------------------------------------------------------------
    def __add__(self, other: DimLike) -> Dim:
        other = as_dim(other)
        terms = dict(self.terms)
        for m, c in other.terms.items():
            terms[m] = terms.get(m, 0) + c
        return Dim(terms)

    __radd__ = __add__

    def __neg__(self) -> Dim:
        return Dim({m: -c for m, c in self.terms.items()})

    def __sub__(self, other: DimLike) -> Dim:
        return self + (-as_dim(other))

    def __rsub__(self, other: DimLike) -> Dim:
        return as_dim(other) - self

    def __mul__(self, other: DimLike) -> Dim:
        other = as_dim(other)
        if len(self.terms) * len(other.terms) > MAX_SIZE:  # refused before the work of multiplying out
            raise _too_large()
        terms: dict = {}
        for ma, ca in self.terms.items():
            for mb, cb in other.terms.items():
                m = _mono_mul(ma, mb)
                terms[m] = terms.get(m, 0) + ca * cb
        return Dim(terms)

    __rmul__ = __mul__

    def __floordiv__(self, other: DimLike) -> Dim:
        other = as_dim(other)
        den = other.value
        if den == 0:
            raise RelayError("dimension divided by zero")
        if self.is_unknown or other.is_unknown:
            return UNKNOWN_DIM
        if not self.terms:
            return self
        if den is not None:
            return self._floordiv_const(den)
        exact = self._exact_div(other)
        if exact is not None:
            return exact
        return Dim.atom(FloorDiv(self, other))

    def __rfloordiv__(self, other: DimLike) -> Dim:
        return as_dim(other) // self

    def _floordiv_const(self, den: int) -> Dim:
        # x // -d == (-x) // d, so only positive divisors remain. Writing every coefficient
        # c as den*q + r with 0 <= r < den, floor((den*Q + R) / den) == Q + floor(R / den)
        # for integer-valued Q: the remainder R is canonical, so equal dimensions stay equal.
        if den < 0:
            return (-self)._floordiv_const(-den)
        quotient = Dim({m: c // den for m, c in self.terms.items()})
        rest = Dim({m: c % den for m, c in self.terms.items()})
        if rest.is_const:
            return quotient + Dim.const(rest.value // den)
        inner = rest._lone_floordiv()
        if inner is not None and inner.den.is_const:  # (x // a) // b == x // (a*b)
            return quotient + Dim.atom(FloorDiv(inner.num, inner.den * den))
        return quotient + Dim.atom(FloorDiv(rest, Dim.const(den)))

    def _lone_floordiv(self) -> FloorDiv | None:
        """The atom when this dimension is exactly one floor division, else None."""
        atom = self.lone_atom()
        return atom if isinstance(atom, FloorDiv) else None

    def _exact_div(self, other: Dim) -> Dim | None:
        if self == other:
            return Dim.const(1)
        if len(other.terms) != 1:
            return self._monomial_quotient(other)
        ((mono, coeff),) = other.terms.items()
        terms = {}
        for m, c in self.terms.items():
            q = _mono_div(m, mono)
            if q is None or c % coeff:
                return None
            terms[q] = c // coeff
        return Dim(terms)

    def _monomial_quotient(self, other: Dim) -> Dim | None:
        """``q`` when ``self == other * q`` for a single term ``q`` (``(2k*k + 4k) // (k*k + 2k)``
        is 2), else None: every candidate is a term of ``self`` over one fixed term of ``other``."""
        mono, coeff = next(iter(other.terms.items()))
        for m, c in self.terms.items():
            q = _mono_div(m, mono)
            if q is not None and c % coeff == 0:
                candidate = Dim({q: c // coeff})
                if other * candidate == self:
                    return candidate
        return None

    # comparison ---------------------------------------------------------------------
    def __eq__(self, other: object) -> bool:
        if isinstance(other, int) and not isinstance(other, bool):
            return self.value == other
        if not isinstance(other, Dim):
            try:
                other = as_dim(other)
            except TypeError:
                return NotImplemented
        return self._hash == other._hash and self.terms == other.terms

    def __hash__(self) -> int:
        return self._hash

    def __repr__(self) -> str:
        return f"Dim({dim_text(self)})"


UNKNOWN_DIM = Dim(_UNKNOWN_TERMS)


def as_dim(value: DimLike) -> Dim:
    """Coerce an int, a dimension variable or a Dim to a Dim."""
    if isinstance(value, Dim):
        return value
    if isinstance(value, bool):
        raise TypeError("a dimension cannot be a bool")
    if isinstance(value, int):
        return Dim.const(value)
    if callable(getattr(value, "as_dim", None)):  # a type variable: TypeVar.as_dim (a TypeError unless of kind Dim)
        return value.as_dim()
    if hasattr(value, "__index__"):
        return Dim.const(value.__index__())
    raise TypeError(f"not a dimension: {value!r}")


def dim_source(d: Dim, name: Callable[[object], str | None]) -> str | None:
    """Python source computing ``d``, ``name(atom)`` naming what holds each dimension variable's
    value; None when ``name`` names one of them None."""
    terms = []
    for mono, coeff in d.terms.items():
        factors = [] if coeff == 1 and mono else [str(coeff)]
        for atom, power in mono:
            if isinstance(atom, FloorDiv):
                num, den = dim_source(atom.num, name), dim_source(atom.den, name)
                base = None if num is None or den is None else f"({num} // {den})"
            else:
                base = name(atom)
            if base is None:
                return None
            factors += [base] * power
        terms.append(" * ".join(factors))
    return f"({' + '.join(terms)})" if len(terms) > 1 else terms[0] if terms else "0"


def dim_text(d: Dim, name: Callable[[object], str] | None = None) -> str:
    """``d`` as the text format writes it: higher degree first, positive before negative, then
    by name. ``name`` names the dimension variables (the printer's names); by default they
    are named as the printer names a dimension printed on its own."""
    if name is None:
        names = Names(allow_leading_digit=False)
        name = lambda tv: names.name(tv, tv.name)  # noqa: E731
    return _DimWriter(name).dim(d)


class _DimWriter:
    def __init__(self, name: Callable[[object], str]):
        self.name = name

    def dim(self, d: Dim) -> str:
        terms = []
        for mono, coeff in d.terms.items():
            factors = sorted((self.atom(atom), power) for atom, power in mono)
            degree = sum(p for _, p in mono)
            terms.append(((-degree, coeff < 0, factors), mono, coeff, factors))
        terms.sort(key=lambda t: t[0])
        if not terms:
            return "0"
        pieces = []
        for i, (_, mono, coeff, factors) in enumerate(terms):
            magnitude = self.monomial(abs(coeff), factors)
            if i == 0:
                negative_atom = coeff < 0 and "//" in magnitude
                pieces.append(("-(" + magnitude + ")") if negative_atom else ("-" if coeff < 0 else "") + magnitude)
            else:
                pieces.append((" - " if coeff < 0 else " + ") + magnitude)
        return "".join(pieces)

    def atom(self, atom: object) -> str:
        if atom is UNKNOWN:
            return "?"
        if isinstance(atom, FloorDiv):
            return f"{self.operand(atom.num)} // {self.operand(atom.den)}"
        return self.name(atom)

    def operand(self, d: Dim) -> str:
        text = self.dim(d)
        simple = len(d.terms) == 1 and (d.is_const and d.value >= 0 or next(iter(d.terms.values())) == 1)
        return text if simple and "//" not in text and "*" not in text else f"({text})"

    @staticmethod
    def monomial(coeff: int, factors: list[tuple[str, int]]) -> str:
        parts = [str(coeff)] if coeff != 1 or not factors else []
        for text, power in factors:
            if "//" in text and (coeff != 1 or power > 1 or len(factors) > 1):
                text = f"({text})"
            parts.extend([text] * power)
        return "*".join(parts)
