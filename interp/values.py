"""Runtime values of the reference evaluator, and the check of arguments against types.

Tensors are NumPy arrays (0-d for scalars), tuples are Python tuples, functions are
``Closure``s (callable from Python) and references are ``RefCell``s.
"""

from __future__ import annotations

from typing import Any, NamedTuple, Sequence

import numpy as np

from relayish.dims import Dim
from relayish.errors import RelayRuntimeError
from relayish.expr import Function, Var
from relayish.printer import astext
from relayish.traverse import trampoline
from relayish.types import BaseType, FuncType, RefType, Shape, TensorType, TupleType, Type, TypeVar


class Frame:
    """The variables of one function activation; closures keep their defining frame."""

    __slots__ = ("values", "parent", "dims", "global_name")

    def __init__(self, parent: Frame | None, global_name: str, dims: dict[TypeVar, int] | None = None):
        self.values: dict[int, Any] = {}
        self.parent = parent
        self.global_name = global_name
        self.dims = dims if dims is not None else (parent.dims if parent is not None else {})  # shared unless new

    def lookup(self, var: Any) -> Any:
        frame: Frame | None = self
        key = id(var)
        while frame is not None:
            if key in frame.values:
                return frame.values[key]
            frame = frame.parent
        raise KeyError(var)


class RefCell:
    """A mutable cell: every copy of the reference sees the same content."""

    __slots__ = ("value",)

    def __init__(self, value: Any):
        self.value = value

    def __repr__(self) -> str:
        return f"RefCell({self.value!r})"


class Closure:
    """A function value. Calling it from Python runs it in the evaluator."""

    __slots__ = ("fn", "frame", "global_name", "evaluator")

    def __init__(self, fn: Function, frame: Frame | None, global_name: str, evaluator: Any):
        self.fn, self.frame, self.global_name, self.evaluator = fn, frame, global_name, evaluator

    def __call__(self, *args: Any) -> Any:
        return self.evaluator.call_from_python(self, args)

    def __repr__(self) -> str:
        return f"<closure of {len(self.fn.params)} arguments from @{self.global_name}>"


def describe(value: Any) -> str:
    """A value's type in the text format's words, for error messages."""
    if isinstance(value, (np.ndarray, np.generic)):
        try:
            dtype = astext(BaseType.from_numpy(value.dtype))
        except TypeError:
            dtype = f"NumPy {value.dtype}"
        return f"Tensor({dtype}, Shape({', '.join(map(str, np.shape(value)))}))"
    if isinstance(value, tuple):
        return "(" + ", ".join(describe(v) for v in value) + ("," if len(value) == 1 else "") + ")"
    if isinstance(value, (Closure, RefCell)):
        return "a function" if isinstance(value, Closure) else "a reference"
    return f"a Python {type(value).__name__}"


def check_arguments(params: Sequence[Var], args: Sequence[Any], dims: dict[TypeVar, int], name: str) -> list[Any]:
    """Check the arguments of a call of global (or closure) ``name``, binding dimension variables
    in ``dims``; dimensions such as ``n + 1`` or ``n * n`` are solved and checked once every
    argument has been seen (a compiled kernel trusts the sizes its types promise)."""
    pending: list[_Pending] = []
    checked = [check_value(p.type_annotation, a, dims, f"argument %{p.name_hint} of @{name}", pending)
               if p.type_annotation is not None else a for p, a in zip(params, args)]
    settle(pending, dims)
    return checked


def check_value(ty: Type, value: Any, dims: dict[TypeVar, int], what: str, pending: list[_Pending] | None = None) -> Any:
    """Check ``value`` against ``ty``, binding dimension variables in ``dims``.

    Dimensions that are not a plain variable and mention an unbound one go to ``pending`` (for
    ``settle``, once the other arguments have bound what they can); without ``pending`` they are
    settled here. Returns the value as the evaluator holds it (NumPy scalars become 0-d arrays).
    """
    own = pending is None
    pending = [] if own else pending

    def check(t: Type, v: Any):
        if isinstance(t, TensorType):
            return _check_tensor(t, v, dims, what, pending)
        if isinstance(t, TupleType):
            if not isinstance(v, tuple) or len(v) != len(t.fields):
                raise _mismatch(what, ty, value)
            items = []
            for field, item in zip(t.fields, v):
                items.append((yield check(field, item)))
            return tuple(items)
        if isinstance(t, FuncType) and not isinstance(v, Closure) or isinstance(t, RefType) and not isinstance(v, RefCell):
            raise _mismatch(what, ty, value)
        return v

    checked = trampoline(check(ty, value))
    if own:
        settle(pending, dims)
    return checked


class _Pending(NamedTuple):
    """A dimension that could not be checked when its argument was: it mentions unbound variables."""

    dim: Dim
    size: int
    axis: int
    what: str
    ty: TensorType
    value: Any


def _check_tensor(t: TensorType, v: Any, dims: dict[TypeVar, int], what: str, pending: list[_Pending]) -> np.ndarray:
    if not isinstance(v, (np.ndarray, np.generic)):
        raise _mismatch(what, t, v, hint=" (pass a NumPy array, e.g. np.float32(1.0))")
    array = np.asarray(v)
    if isinstance(t.dtype, BaseType) and array.dtype != t.dtype.to_numpy():
        want = t.dtype.to_numpy().name
        raise _mismatch(what, t, v, hint=f" (pass {want} values: convert with .astype(np.{want}))")
    if isinstance(t.shape, Shape):
        if array.ndim != t.shape.rank:
            raise _mismatch(what, t, v)
        for axis, (dim, size) in enumerate(zip(t.shape.dims, array.shape)):
            known = _known(dim, dims)
            lone = None if known.value is not None else _lone_var(known)
            if known.value is not None:
                _compare(_Pending(dim, size, axis, what, t, v), known.value)
            elif lone is not None:
                dims[lone] = size
            else:
                pending.append(_Pending(dim, size, axis, what, t, v))
    return array


def _known(dim: Dim, dims: dict[TypeVar, int]) -> Dim:
    """``dim`` with the variables bound so far replaced by their sizes."""
    if dim.is_const or not dims:
        return dim
    return dim.substitute({tv: Dim.const(n) for tv, n in dims.items()})


def _lone_var(dim: Dim) -> TypeVar | None:
    """The variable when ``dim`` is one variable alone (its size is the argument's)."""
    if len(dim.terms) != 1:
        return None
    (mono, coeff), = dim.terms.items()
    if coeff != 1 or len(mono) != 1:
        return None
    (atom, power), = mono
    return atom if power == 1 and isinstance(atom, TypeVar) else None


def _compare(item: _Pending, expected: int) -> None:
    if expected != item.size:
        detail = f"dimension {item.axis} is {item.size}, but {astext(item.dim)} is {expected} here"
        raise _mismatch(item.what, item.ty, item.value, hint=f" ({detail})" if not item.dim.is_const else "")


def settle(pending: list[_Pending], dims: dict[TypeVar, int]) -> None:
    """Check the dimensions ``_check_tensor`` put off: a variable that is the only unknown of one
    of them is solved for (``n + 1`` of size 5 binds n to 4), then every one is compared with its
    size. Variables the sizes leave open (``n + m``; ``n // 2``, which two sizes of n satisfy)
    stay unbound, but equal dimensions must still have equal sizes."""
    while pending:
        left: list[_Pending] = []
        for item in pending:
            known = _known(item.dim, dims)
            if known.value is not None:
                _compare(item, known.value)
                continue
            unknown = [tv for tv in known.free_vars() if isinstance(tv, TypeVar)]
            if len(unknown) == 1 and unknown[0] not in dims:
                solution = _solve(known, unknown[0], item.size)
                if solution is None:
                    raise _mismatch(item.what, item.ty, item.value, hint=f" (no size of {unknown[0].name} makes "
                                    f"dimension {item.axis}, {astext(item.dim)}, equal to {item.size})")
                if solution >= 0:
                    dims[unknown[0]] = solution
            left.append(item)
        if len(left) == len(pending) and all(_known(i.dim, dims).value is None for i in left):
            break  # nothing more can be solved
        pending = left
    first: dict[Dim, _Pending] = {}
    for item in pending:
        other = first.setdefault(_known(item.dim, dims), item)
        if other.size != item.size:
            raise _mismatch(item.what, item.ty, item.value, hint=f" (dimension {item.axis} is {item.size}, but "
                            f"{astext(item.dim)} is {other.size} in {other.what})")


def _solve(dim: Dim, var: TypeVar, size: int) -> int | None:
    """The one size of ``var`` at which ``dim`` (whose only variable it is) equals ``size``; -1 when
    two sizes do (``n // 2``); None when none does. ``dim`` is taken to grow with ``var``, as
    dimensions written over sizes do; any other answer is rejected by the check that follows."""

    def at(n: int) -> int:
        return dim.substitute({var: Dim.const(n)}).value

    b = at(0)
    a = at(1) - b
    if a and dim == Dim.atom(var) * a + b:  # linear, falling ones too (10 - n): solved exactly
        n, rest = divmod(size - b, a)
        return n if rest == 0 and n >= 0 else None
    lo, hi = 0, 1
    while at(hi) < size:
        if hi > size + 2 ** 32:  # no size of var is that large
            return None
        lo, hi = hi, 2 * hi
    while lo < hi:
        mid = (lo + hi) // 2
        if at(mid) < size:
            lo = mid + 1
        else:
            hi = mid
    if at(lo) != size:
        return None
    return -1 if at(lo + 1) == size else lo


def _mismatch(what: str, ty: Type, value: Any, hint: str = "") -> RelayRuntimeError:
    return RelayRuntimeError(f"{what}: expected {astext(ty)}, got {describe(value)}{hint}")
