"""Runtime values shared by both backends, and the check of arguments against types.

Tensors are NumPy arrays (0-d for scalars), tuples are Python tuples, functions are
``FunctionValue``s (the evaluator's ``Closure``, callable from Python) and references are
``RefCell``s. ``check_value`` is the one argument check of every backend: the evaluator and
the JIT call it, and the frontend words its ``ArgumentMismatch`` for the user's annotations.
"""

from __future__ import annotations

from typing import Any, Mapping, NamedTuple, Sequence

import numpy as np

from relayish.dims import Dim
from relayish.errors import RelayRuntimeError
from relayish.expr import Var
from relayish.module import TypeDef
from relayish.printer import astext
from relayish.traverse import trampoline
from relayish.types import BaseType, DataType, FuncType, RefType, Shape, TensorType, TupleType, Type, TypeVar
from typecheck.solver import substitute


class FunctionValue:
    """A function value of a backend, callable from Python (the evaluator's ``Closure``): what
    ``check_value`` accepts for a parameter of function type."""

    __slots__ = ()


class RefCell:
    """A mutable cell: every copy of the reference sees the same content."""

    __slots__ = ("value",)

    def __init__(self, value: Any):
        self.value = value

    def __repr__(self) -> str:
        return f"RefCell({self.value!r})"


class DataValue:
    """A value of an algebraic data type: the name of the constructor that built it and its fields.
    Both backends build these, and a caller passes them for parameters of data types."""

    __slots__ = ("ctor", "fields")

    def __init__(self, ctor: str, fields: tuple = ()):
        self.ctor, self.fields = ctor, tuple(fields)

    def __repr__(self) -> str:
        """``Cons(1.0, Nil)``, written without recursion (a list may be long)."""
        out: list[str] = []
        stack: list[Any] = [self]
        while stack:
            item = stack.pop()
            if isinstance(item, str) and item in _PUNCTUATION:
                out.append(item)
            elif isinstance(item, DataValue):
                out.append(item.ctor)
                if item.fields:
                    stack.append(")")
                    for k in range(len(item.fields) - 1, -1, -1):
                        stack.append(item.fields[k])
                        if k:
                            stack.append(", ")
                    stack.append("(")
            else:
                out.append(repr(item))
        return "".join(out)


_PUNCTUATION = frozenset({"(", ")", ", "})


def unpacked(value: DataValue, ctor: str, span: Any, global_name: str) -> tuple:
    """The fields of ``value``, which must have been built by ``ctor`` (``Unpack``: both backends)."""
    if value.ctor != ctor:
        raise RelayRuntimeError(f"a {value.ctor} value where {ctor} was expected, in @{global_name}: no clause of the "
                                f"match takes it (the type checker warned of that), or Unpack[{ctor}] was applied to it", span)
    return value.fields


def describe(value: Any) -> str:
    """A value's type in the text format's words, for error messages."""
    if isinstance(value, (np.ndarray, np.generic)) or hasattr(value, "copy_to_host"):  # or a CUDA device array
        try:
            dtype = astext(BaseType.from_numpy(value.dtype))
        except TypeError:
            dtype = f"NumPy {value.dtype}"
        return f"Tensor({dtype}, Shape({', '.join(map(str, np.shape(value)))}))"
    if isinstance(value, tuple):
        return "(" + ", ".join(describe(v) for v in value) + ("," if len(value) == 1 else "") + ")"
    if isinstance(value, (FunctionValue, RefCell)):
        return "a function" if isinstance(value, FunctionValue) else "a reference"
    if isinstance(value, DataValue):
        return f"a {value.ctor} value"
    return f"a Python {type(value).__name__}"


class ArgumentMismatch(RelayRuntimeError):
    """An argument that does not fit its parameter's type. Besides the message it keeps the part
    that does not fit (``path``: tuple field indices; ``field``, ``expected``: the value and type
    there) and why (``why``: 'kind', 'tuple', 'dtype', 'rank' or 'size', with ``detail`` in words
    for the last two), so that a caller with the user's words for the type (the frontend) can say it
    its way. The one argument check of every backend (``check_value``)."""

    def __init__(self, message: str, span: Any = None, *, what: str = "", path: tuple[int, ...] = (),
                 field: Any = None, expected: Type | None = None, why: str = "kind", detail: str = ""):
        super().__init__(message, span)
        self.what, self.path, self.field, self.expected, self.why, self.detail = what, path, field, expected, why, detail


class CallCheck:
    """What checking one call's arguments carries from one argument to the next: dimensions put
    off until the others are seen (``pending``), and which argument bound each variable."""

    __slots__ = ("pending", "origins")

    def __init__(self) -> None:
        self.pending: list[_Pending] = []
        self.origins: dict[TypeVar, str] = {}


def check_arguments(params: Sequence[Var], args: Sequence[Any], dims: dict[TypeVar, int], name: str,
                    type_defs: Mapping[str, TypeDef] | None = None) -> list[Any]:
    """Check the arguments of a call of global (or closure) ``name``, binding dimension variables
    in ``dims``; dimensions such as ``n + 1`` or ``n * n`` are solved and checked once every
    argument has been seen (a compiled kernel trusts the sizes its types promise). ``type_defs``:
    the module's data types, for arguments of those types."""
    call = CallCheck()
    checked = [check_value(p.type_annotation, a, dims, f"argument %{p.name_hint} of @{name}", call, type_defs=type_defs)
               if p.type_annotation is not None else a for p, a in zip(params, args)]
    settle(call, dims)
    return checked


def check_value(ty: Type, value: Any, dims: dict[TypeVar, int], what: str, call: CallCheck | None = None,
                tensors_only: bool = False, type_defs: Mapping[str, TypeDef] | None = None) -> Any:
    """Check ``value`` against ``ty``, binding dimension variables in ``dims``; an
    ``ArgumentMismatch`` names ``what`` and says what does not fit.

    Dimensions that are not a plain variable and mention an unbound one are put off in ``call``
    (for ``settle``, once the other arguments have bound what they can); without ``call`` they
    are settled here. Returns the value as the evaluator holds it (NumPy scalars become 0-d arrays).
    With ``tensors_only``, parts of function and reference type are taken as they are (the JIT's
    closures and references are plain Python objects), and so are CUDA device arrays of the right
    shape and dtype (the CUDA target's tensors). A data type's value is a ``DataValue`` of one of
    its constructors in ``type_defs``, its fields checked in turn (without ``type_defs`` it is taken
    as it is, as the JIT's own values are).
    """
    own = call is None
    call = CallCheck() if own else call

    def check(t: Type, v: Any, path: tuple[int, ...]):
        if isinstance(t, TensorType):
            if tensors_only and hasattr(v, "copy_to_host"):  # a CUDA device array: its shape and dtype
                _check_tensor(t, np.broadcast_to(np.empty((), v.dtype), v.shape), dims, _Where(what, ty, value, path), call)
                return v
            return _check_tensor(t, v, dims, _Where(what, ty, value, path), call)
        if isinstance(t, TupleType):
            if not isinstance(v, tuple) or len(v) != len(t.fields):
                raise _Where(what, ty, value, path).mismatch(t, v, "tuple")
            items = []
            for i, (field, item) in enumerate(zip(t.fields, v)):
                items.append((yield check(field, item, path + (i,))))
            return tuple(items)
        if isinstance(t, DataType) and type_defs is not None:
            return (yield _check_data(t, v, type_defs, _Where(what, ty, value, path), check))
        if tensors_only:
            return v
        if isinstance(t, FuncType) and not isinstance(v, FunctionValue) or isinstance(t, RefType) and not isinstance(v, RefCell):
            raise _Where(what, ty, value, path).mismatch(t, v, "kind")
        return v

    checked = trampoline(check(ty, value, ()))
    if own:
        settle(call, dims)
    return checked


def check_ascribed(ty: Type, value: Any, dims: dict[TypeVar, int], span: Any, global_name: str) -> Any:
    """The run-time check of an ascription (``(e : T)``), which the checker puts where a value with a
    ``?`` dimension flows into a place of a known size: the tensors in ``value`` must have ``ty``'s
    shapes, with the dimension variables in ``dims`` (those bound here) at their sizes. Parts of
    function and reference type are not looked into."""
    try:
        check_value(ty, value, dict(dims), "the value", tensors_only=True)
    except ArgumentMismatch as err:
        raise RelayRuntimeError(f"{err.message[len('the value: '):]}, in @{global_name}", span) from None
    return value


def _check_data(t: DataType, v: Any, type_defs: Mapping[str, TypeDef], where: _Where, check: Any) -> Any:
    """A ``DataValue`` of type ``t``: one of its constructors, with fields of their types."""
    definition = type_defs.get(t.name)
    ctor = None if definition is None else next((c for c in definition.ctors if isinstance(v, DataValue) and c.name == v.ctor), None)
    if ctor is None or len(v.fields) != len(ctor.fields):
        names = "" if definition is None else " or ".join(c.name for c in definition.ctors)
        raise where.mismatch(t, v, "kind", hint=f" (pass relayish.DataValue of {names})" if names else "")
    mapping = dict(zip(definition.params, t.args))
    fields = []
    for i, (field, item) in enumerate(zip(ctor.fields, v.fields)):
        fields.append((yield check(substitute(field, mapping), item, where.path + (i,))))
    return v if all(a is b for a, b in zip(fields, v.fields)) else DataValue(v.ctor, tuple(fields))


class _Where(NamedTuple):
    """Which argument (``what``, of type ``ty``, the value ``value``) and which field of it."""

    what: str
    ty: Type
    value: Any
    path: tuple[int, ...]

    def mismatch(self, expected: Type, field: Any, why: str, detail: str = "", hint: str = "") -> ArgumentMismatch:
        hint = hint or (f" ({detail})" if detail else "")
        return ArgumentMismatch(f"{self.what}: expected {astext(self.ty)}, got {describe(self.value)}{hint}",
                                what=self.what, path=self.path, field=field, expected=expected, why=why, detail=detail)


class _Pending(NamedTuple):
    """A dimension that could not be checked when its argument was: it mentions unbound variables."""

    dim: Dim
    size: int
    axis: int
    where: _Where
    ty: TensorType
    value: Any


def _check_tensor(t: TensorType, v: Any, dims: dict[TypeVar, int], where: _Where, call: CallCheck) -> np.ndarray:
    if not isinstance(v, (np.ndarray, np.generic)):
        raise where.mismatch(t, v, "kind", hint=" (pass a NumPy array, e.g. np.float32(1.0))")
    array = np.asarray(v)
    if isinstance(t.dtype, BaseType) and array.dtype != t.dtype.to_numpy():
        want = t.dtype.to_numpy().name
        raise where.mismatch(t, v, "dtype", hint=f" (pass {want} values: convert with .astype(np.{want}))")
    if isinstance(t.shape, Shape):
        if array.ndim != t.shape.rank:
            raise where.mismatch(t, v, "rank", f"rank {array.ndim} instead of {t.shape.rank}")
        for axis, (dim, size) in enumerate(zip(t.shape.dims, array.shape)):
            if dim.is_unknown:
                continue  # ? takes any size
            known = _known(dim, dims)
            lone = None if known.value is not None else known.lone_atom()
            if known.value is not None:
                _compare(_Pending(dim, size, axis, where, t, v), known.value, call)
            elif isinstance(lone, TypeVar):
                dims[lone] = size
                call.origins.setdefault(lone, where.what)
            else:
                call.pending.append(_Pending(dim, size, axis, where, t, v))
    return array


def _known(dim: Dim, dims: dict[TypeVar, int]) -> Dim:
    """``dim`` with the variables bound so far replaced by their sizes."""
    if dim.is_const or not dims:
        return dim
    return dim.substitute({tv: Dim.const(n) for tv, n in dims.items()})


def _compare(item: _Pending, expected: int, call: CallCheck) -> None:
    if expected == item.size:
        return
    if item.dim.is_const:
        detail = f"dimension {item.axis} must be {expected}"
    else:
        origin = next((call.origins[tv] for tv in item.dim.free_vars() if tv in call.origins), None)
        detail = f"dimension {item.axis} is {item.size}, but {astext(item.dim)} is {expected} " \
                 f"{'here' if origin is None else 'in ' + origin}"
    raise item.where.mismatch(item.ty, item.value, "size", detail)


def settle(call: CallCheck, dims: dict[TypeVar, int]) -> None:
    """Check the dimensions ``_check_tensor`` put off: a variable that is the only unknown of one
    of them is solved for (``n + 1`` of size 5 binds n to 4), then every one is compared with its
    size. Variables the sizes leave open (``n + m``; ``n // 2``, which two sizes of n satisfy)
    stay unbound, but equal dimensions must still have equal sizes."""
    pending = call.pending
    while pending:
        left: list[_Pending] = []
        for item in pending:
            known = _known(item.dim, dims)
            if known.value is not None:
                _compare(item, known.value, call)
                continue
            unknown = [tv for tv in known.free_vars() if isinstance(tv, TypeVar)]
            if len(unknown) == 1 and unknown[0] not in dims:
                solution = _solve(known, unknown[0], item.size)
                if solution is None:
                    raise item.where.mismatch(item.ty, item.value, "size", f"no size of {unknown[0].name} makes "
                                              f"dimension {item.axis}, {astext(item.dim)}, equal to {item.size}")
                if solution >= 0:
                    dims[unknown[0]] = solution
                    call.origins.setdefault(unknown[0], item.where.what)
            left.append(item)
        if len(left) == len(pending) and all(_known(i.dim, dims).value is None for i in left):
            break  # nothing more can be solved
        pending = left
    first: dict[Dim, _Pending] = {}
    for item in pending:
        other = first.setdefault(_known(item.dim, dims), item)
        if other.size != item.size:
            raise item.where.mismatch(item.ty, item.value, "size", f"dimension {item.axis} is {item.size}, but "
                                      f"{astext(item.dim)} is {other.size} in {other.where.what}")


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
