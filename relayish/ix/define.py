"""Defining an operator by an index expression, from Python: ``@ix.operator`` traces the function.

The function gets one placeholder per input: ``A[i, k]`` reads it, ``A.shape[0]`` is its
dimension (a ``Dim``: arithmetic on it is symbolic). It returns ``ix.tensor(shape, body)``, where
``body(i, j, ...)`` gives the element at output position ``(i, j, ...)``. The definition is
checked as it is traced (reduction axes used inside their reduction, one rank per input) and
registered as operator ``@name`` with its type relation, NumPy semantics and gradient derived
from it (relayish/ix/relation.py, semantics.py, derive.py): ``relay.name(...)`` in ``@relay`` code
and ``@name(...)`` in the text then call it.
"""

from __future__ import annotations

import inspect
import itertools
from typing import Any, Callable, Sequence

import numpy as np

from ..dims import Dim, as_dim
from ..errors import RelayError
from ..ops import registry
from ..ops.record import OpDef, Pattern, Raises
from ..ops.sites import Site
from .language import (
    FUNCTIONS, REDUCTIONS, Bin, Cast, Definition, InputDim, Node, Read, Reduce, Unary, Var, Where, children, node,
)  # fmt: skip
from .derive import adjoint
from .relation import relation
from .semantics import evaluate

_names = itertools.count()


class Input:
    """A placeholder for an input while its operator is traced."""

    def __init__(self, position: int, name: str):
        self.position, self.name = position, name
        self.rank: int | None = None
        self.shape_axes = 0

    @property
    def shape(self) -> _Shape:
        return _Shape(self)

    def __getitem__(self, indices: Any) -> Read:
        indices = indices if isinstance(indices, tuple) else (indices,)
        if self.rank is None:
            self.rank = len(indices)
        elif len(indices) != self.rank:
            raise RelayError(f"{self.name} is read with {self.rank} and with {len(indices)} indices: "
                             "an input has one rank")
        return Read(self.position, tuple(node(i) for i in indices))


class _Shape:
    def __init__(self, owner: Input):
        self.owner = owner

    def __getitem__(self, axis: int) -> Dim:
        if not isinstance(axis, int) or axis < 0:
            raise RelayError(f"{self.owner.name}.shape[{axis!r}]: name an axis by its non-negative position")
        self.owner.shape_axes = max(self.owner.shape_axes, axis + 1)
        return Dim.atom(InputDim(self.owner.position, axis, f"{self.owner.name}.shape[{axis}]"))

    def __iter__(self) -> Any:
        raise RelayError(f"write {self.owner.name}.shape[0], {self.owner.name}.shape[1], ...: the rank of "
                         f"{self.owner.name} comes from its reads, after the shape is asked for")


class Tensor:
    """What the traced function returns: the output's index variables and element expression."""

    def __init__(self, indices: tuple[Var, ...], body: Node, dtype: str | None):
        self.indices, self.body, self.dtype = indices, body, dtype


def tensor(shape: Sequence[Any], body: Callable[..., Any], dtype: Any = None) -> Tensor:
    """The output: of ``shape`` (dimensions of the inputs, integers, or arithmetic on them), element
    ``body(i0, i1, ...)`` at each position; ``dtype`` names the result's dtype (default: the body's)."""
    names = _parameter_names(body, len(shape))
    indices = tuple(Var(name, _dim(d, f"dimension {k} of the shape"), False)
                    for k, (name, d) in enumerate(zip(names, shape)))
    return Tensor(indices, node(body(*indices)), None if dtype is None else np.dtype(dtype).name)


def axis(extent: Any, name: str | None = None) -> Var:
    """A reduction axis over ``0 .. extent - 1``, bound by the reduction that names it."""
    return Var(name or f"r{next(_names)}", _dim(extent, "a reduction axis's extent"), True)


def _reduction(kind: str) -> Callable[..., Reduce]:
    def reduce(body: Any, *axes: Var) -> Reduce:
        if not axes or not all(isinstance(a, Var) and a.reduction for a in axes):
            raise RelayError(f"ix.{kind}(body, *axes) needs the axes it reduces, made by ix.axis")
        if len({id(a) for a in axes}) != len(axes):
            raise RelayError(f"ix.{kind}: an axis is named twice")
        return Reduce(kind, tuple(axes), node(body))

    reduce.__name__ = kind
    reduce.__doc__ = f"The {kind} of ``body`` over ``axes`` (made by ix.axis)."
    return reduce


def _function(name: str) -> Callable[[Any], Unary]:
    def apply(x: Any) -> Unary:
        return Unary(name, node(x))

    apply.__name__ = name
    apply.__doc__ = f"{name} of an index expression (in its dtype; integers become float64)."
    return apply


def where(cond: Any, a: Any, b: Any) -> Where:
    """``a`` where ``cond`` holds, else ``b``; a read outside its input in the branch not chosen is fine."""
    return Where(node(cond), node(a), node(b))


def cast(x: Any, dtype: Any) -> Cast:
    """``x`` converted to ``dtype`` (floats to integers truncate, as NumPy's astype)."""
    return Cast(np.dtype(dtype).name, node(x))


def maximum(a: Any, b: Any) -> Bin:
    return Bin("maximum", node(a), node(b))


def minimum(a: Any, b: Any) -> Bin:
    return Bin("minimum", node(a), node(b))


REDUCERS = {kind: _reduction(kind) for kind in REDUCTIONS}
SCALAR_FUNCTIONS = {name: _function(name) for name in FUNCTIONS}


def operator(fn: Callable[..., Tensor] | None = None, *, name: str | None = None) -> Any:
    """Define and register the operator ``fn`` describes (``@ix.operator`` or ``@ix.operator(name=...)``);
    returns its record (an ``OpDef``)."""
    if fn is None:
        return lambda f: operator(f, name=name)
    return replace(trace(fn, name or fn.__name__))


def replace(defn: Definition) -> OpDef:
    """Register ``defn``'s operator in place of any earlier one of its name (and its adjoints)."""
    if defn.name in registry.all_ops():
        raise RelayError(f"@{defn.name} is a standard operator: give the index-expression one another name")
    unregister(defn.name)  # an earlier definition's adjoints must not outlive it
    return register(defn)


def unregister(name: str) -> None:
    """Forget the index-expression operator ``@name`` and the adjoints derived from it."""
    for known in registry.user_op_names():
        if known == name or known.startswith(name + "__d"):
            registry.unregister_user_op(known)


def register(defn: Definition) -> OpDef:
    """Register ``defn``'s operator, its gradient the adjoints derived from it when AD first asks."""
    op = OpDef(defn.name, lambda *arrays: evaluate(defn, *arrays), Pattern.OPAQUE, len(defn.inputs),
               relation(defn), gradient=_gradient(defn), raises=Raises.MAYBE,
               doc=f"defined by an index expression ({defn.where})", definition=defn)
    registry.register_user_op(op)
    return op


def _gradient(defn: Definition) -> Callable[[Site], list[Any]]:
    def gradient(s: Site) -> list[Any]:
        adjoints: list[Any] = []
        for k, ty in enumerate(s.types):
            if ty.dtype.numpy_kind != "f":  # integers (indices) have no adjoint
                adjoints.append(None)
                continue
            name = f"{defn.name}__d{k}"
            registry.lookup_op(name)  # derived now, if no call named it before (_derived)
            adjoints.append(s.op(name, *s.args, s.g))
        return adjoints

    return gradient


def _derived(name: str) -> OpDef | None:
    """The record of ``@op__dK``, the adjoint of input K of index-expression operator ``@op``,
    derived and registered; None for any other name."""
    base, sep, k = name.rpartition("__d")
    parent = registry.lookup_op(base) if sep and k.isdigit() else None
    if parent is None or parent.definition is None or int(k) >= len(parent.definition.inputs):
        return None
    return register(adjoint(parent.definition, int(k)))


registry.DERIVED.append(_derived)


def trace(fn: Callable[..., Tensor], name: str, params: list[str] | None = None, where: str | None = None) -> Definition:
    """The definition ``fn`` describes, checked; ``params`` and ``where`` (file:line) default to
    ``fn``'s parameters and its place in its file."""
    where = where or _where(fn)
    if not name.isidentifier():
        raise RelayError(f"{where}: an operator name must be an identifier, not {name!r}")
    params = params or list(inspect.signature(fn).parameters)
    inputs = [Input(k, p) for k, p in enumerate(params)]
    try:
        out = fn(*inputs)
        if not isinstance(out, Tensor):
            raise RelayError(f"the function must return ix.tensor(shape, body), not {type(out).__name__}")
        _check_scopes(out)
    except RelayError as err:
        raise RelayError(f"{where}: in the definition of @{name}: {err.message}") from None
    return Definition(name, tuple(params), tuple(i.rank for i in inputs), tuple(i.shape_axes for i in inputs),
                      out.indices, out.body, out.dtype, where)


def _check_scopes(out: Tensor) -> None:
    """Every index variable is one of the output's or a reduction axis inside its reduction."""
    own = {id(v) for v in out.indices}
    stack: list[tuple[Node, frozenset[int]]] = [(out.body, frozenset())]
    seen: set[tuple[int, frozenset[int]]] = set()
    while stack:
        n, bound = stack.pop()
        if (id(n), bound) in seen:
            continue
        seen.add((id(n), bound))
        if isinstance(n, Var) and not (n.reduction and id(n) in bound or not n.reduction and id(n) in own):
            raise RelayError(f"the reduction axis {n.name} is used outside a reduction over it" if n.reduction else
                             f"the index {n.name} belongs to another definition")
        if isinstance(n, Reduce) and any(id(a) in bound for a in n.axes):
            raise RelayError(f"a reduction over {', '.join(a.name for a in n.axes)} is inside another over the "
                             "same axis: make another ix.axis for it")
        inner = bound | {id(a) for a in n.axes} if isinstance(n, Reduce) else bound
        stack.extend((c, inner) for c in children(n))


def _dim(value: Any, what: str) -> Dim:
    try:
        d = as_dim(value)
    except (TypeError, RelayError):
        raise RelayError(f"{what} must be a dimension of the inputs or an integer, not {value!r}") from None
    if any(not isinstance(a, InputDim) for a in d.free_vars()):
        raise RelayError(f"{what} must be computed from the inputs' dimensions, not {value!r}")
    return d


def _parameter_names(body: Callable[..., Any], count: int) -> list[str]:
    try:
        params = list(inspect.signature(body).parameters)
    except (TypeError, ValueError):
        params = []
    if len(params) != count:
        raise RelayError(f"the element function takes {len(params)} indices for a shape of {count} dimensions")
    return params


def _where(fn: Callable[..., Any]) -> str:
    code = getattr(fn, "__code__", None)
    return f"{code.co_filename}:{code.co_firstlineno}" if code is not None else repr(fn)
