"""The index-expression language: an operator's output element as an expression over index variables.

A definition (``Definition``) names the output's shape (dimensions computed from the inputs'
dimensions, symbolic ones included) and one expression (``body``) for the element at output
position ``(i0, i1, ...)``. Expressions are trees of these nodes:

- ``Var``: an index variable ranging over ``0 .. extent - 1``: an output index, or a reduction
  axis (``ix.axis``) bound by the ``Reduce`` that names it;
- ``Lit``: a Python number; ``Size``: a dimension of the inputs (``A.shape[0]``) as a value;
- ``Read``: input ``k`` at integer index expressions (affine, or anything integer: ``x[idx[i], j]``);
- ``Bin`` (arithmetic, comparisons, ``&``, ``|``, ``maximum``, ``minimum``), ``Unary`` (``-``, ``~``
  and the scalar functions of ``FUNCTIONS``), ``Where``, ``Cast``;
- ``Reduce``: sum, prod, max or min of its body over the named axes.

Nodes build by Python's operators (``A[i, k] * B[k, j] + 1``; comparisons too, so ``==`` builds a
node: nodes hash by identity). A node has no truth value: ``ix.where`` chooses.
"""

from __future__ import annotations

from typing import Any, Iterator, Union

import attrs
import numpy as np

from ..dims import Dim
from ..errors import RelayError

ARITHMETIC = ("+", "-", "*", "/", "//", "%", "maximum", "minimum")
COMPARISONS = ("<", "<=", ">", ">=", "==", "!=")
LOGICAL = ("&", "|")
FUNCTIONS = ("exp", "log", "tanh", "sqrt", "abs", "sin", "cos", "sigmoid")
REDUCTIONS = ("sum", "prod", "max", "min")


def _operator(op: str, reflected: bool = False) -> Any:
    """The method building ``Bin(op, self, other)`` (reflected: ``Bin(op, other, self)``)."""
    def build(self: Node, other: Any) -> Node:
        return Bin(op, node(other), self) if reflected else Bin(op, self, node(other))

    return build


class Node:
    """An index expression; Python's operators build larger ones."""

    __hash__ = object.__hash__
    __add__, __radd__ = _operator("+"), _operator("+", True)
    __sub__, __rsub__ = _operator("-"), _operator("-", True)
    __mul__, __rmul__ = _operator("*"), _operator("*", True)
    __truediv__, __rtruediv__ = _operator("/"), _operator("/", True)
    __floordiv__, __rfloordiv__ = _operator("//"), _operator("//", True)
    __mod__, __rmod__ = _operator("%"), _operator("%", True)
    __and__, __rand__ = _operator("&"), _operator("&", True)
    __or__, __ror__ = _operator("|"), _operator("|", True)
    __lt__, __le__, __gt__, __ge__ = _operator("<"), _operator("<="), _operator(">"), _operator(">=")
    __eq__, __ne__ = _operator("=="), _operator("!=")  # type: ignore[assignment]

    def __neg__(self) -> Node:
        return Unary("-", self)

    def __invert__(self) -> Node:
        return Unary("~", self)

    def __bool__(self) -> bool:
        raise RelayError("an index expression has no truth value while the operator is defined: "
                         "choose between values with ix.where(condition, a, b)")


@attrs.define(eq=False)
class Var(Node):
    """An index variable over ``0 .. extent - 1``: an output index, or a reduction axis."""

    name: str
    extent: Dim
    reduction: bool


@attrs.define(eq=False)
class Lit(Node):
    value: Union[bool, int, float]


@attrs.define(eq=False)
class Size(Node):
    """A dimension of the inputs, as an integer value (``A.shape[1] - 1``)."""

    dim: Dim


@attrs.define(eq=False)
class Read(Node):
    input: int  # the position of the input
    indices: tuple[Node, ...]


@attrs.define(eq=False)
class Bin(Node):
    op: str
    a: Node
    b: Node


@attrs.define(eq=False)
class Unary(Node):
    op: str  # "-", "~" or one of FUNCTIONS
    a: Node


@attrs.define(eq=False)
class Where(Node):
    cond: Node
    a: Node
    b: Node


@attrs.define(eq=False)
class Cast(Node):
    dtype: str  # a NumPy dtype name
    a: Node


@attrs.define(eq=False)
class Reduce(Node):
    kind: str  # one of REDUCTIONS
    axes: tuple[Var, ...]
    body: Node


@attrs.frozen
class InputDim:
    """The atom of a dimension of an input (``A.shape[axis]``) in a definition's dimensions."""

    input: int
    axis: int
    name: str = attrs.field(eq=False)

    def __repr__(self) -> str:
        return self.name


@attrs.define(eq=False)
class Scatter:
    """One part of an adjoint: over the grid of ``space``, ``value`` is added at position ``targets``
    (positions outside the result are skipped: their values are zero where the forward read was guarded)."""

    space: tuple[Var, ...]
    targets: tuple[Node, ...]
    value: Node


@attrs.define(eq=False)
class Definition:
    """An operator defined by an index expression: ``output[indices] = body``; or, derived from one,
    an adjoint: the sum of ``scatters`` into an array of input ``target``'s shape and dtype."""

    name: str
    inputs: tuple[str, ...]  # the parameters' names
    ranks: tuple[int | None, ...]  # each input's rank as its reads give it (None: only its shape is used)
    shape_axes: tuple[int, ...]  # per input, the number of leading axes whose sizes it uses (shape[k])
    indices: tuple[Var, ...]  # the output's index variables; their extents are the output's shape
    body: Node
    dtype: str | None  # the output dtype asked for (None: the body's)
    where: str  # the defining function's file:line, for messages
    scatters: tuple[Scatter, ...] = ()
    target: int | None = None

    @property
    def shape(self) -> tuple[Dim, ...]:
        return tuple(v.extent for v in self.indices)

    def roots(self) -> list[Node]:
        """The expressions the definition evaluates."""
        if self.target is None:
            return [self.body]
        return [n for s in self.scatters for n in (s.value, *s.targets)]


def node(value: Any) -> Node:
    """``value`` as a node: nodes as they are, Python numbers as literals, dimensions as sizes."""
    if isinstance(value, Node):
        return value
    if isinstance(value, Dim):
        return Size(value)
    if isinstance(value, (bool, int, float)):
        return Lit(value)
    if isinstance(value, np.generic) and value.dtype.kind in "biuf":
        return Lit(value.item())
    raise RelayError(f"an index expression cannot hold {value!r} ({type(value).__name__}): "
                     "use inputs, index variables, dimensions and Python numbers")


def children(n: Node) -> tuple[Node, ...]:
    """The nodes ``n`` is built from, in order."""
    if isinstance(n, Read):
        return n.indices
    if isinstance(n, (Bin, Where)):
        return (n.a, n.b) if isinstance(n, Bin) else (n.cond, n.a, n.b)
    if isinstance(n, (Unary, Cast)):
        return (n.a,)
    if isinstance(n, Reduce):
        return (n.body,)
    return ()


def nodes(*roots: Node) -> Iterator[Node]:
    """Every node under ``roots`` (themselves included), each once."""
    seen: set[int] = set()
    stack = list(roots)
    while stack:
        n = stack.pop()
        if id(n) not in seen:
            seen.add(id(n))
            yield n
            stack.extend(children(n))


def post_order(*roots: Node) -> Iterator[Node]:
    """Every node under ``roots``, each once, after the nodes it is built from."""
    done: set[int] = set()
    stack: list[tuple[Node, bool]] = [(root, False) for root in roots]
    while stack:
        n, ready = stack.pop()
        if id(n) in done:
            continue
        if ready:
            done.add(id(n))
            yield n
            continue
        stack.append((n, True))
        stack.extend((c, False) for c in children(n) if id(c) not in done)


def free_variables(root: Node) -> dict[int, set[int]]:
    """For each node under ``root`` (by id), the ids of the index variables its value depends on
    (a reduction's own axes excluded)."""
    free: dict[int, set[int]] = {}
    for n in post_order(root):
        own = {id(n)} if isinstance(n, Var) else set()
        axes = {id(v) for v in n.axes} if isinstance(n, Reduce) else set()
        free[id(n)] = own.union(*(free[id(c)] for c in children(n))) - axes
    return free
