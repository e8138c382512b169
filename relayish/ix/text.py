"""Index-expression operators in the text format: their grammar, and the printer of a definition.

    operator @sqdist(%A, %B) = compute(shape(%A, 0), shape(%B, 0)) fn (%i, %j) {
      sum(%k: shape(%A, 1)) { (%A[%i, %k] - %B[%j, %k]) * (%A[%i, %k] - %B[%j, %k]) }
    }

``compute(dims..., dtype=float32)`` gives the output's shape (dimensions of the inputs,
``shape(%A, 0)``, integers, ``+ - * //``) and optionally its dtype; ``fn (%i, ...)`` names the
output's indices. The element expression has reads ``%A[e, ...]`` (``%A[]`` for a rank-0 input),
index variables, numbers, ``shape(%A, k)`` as a value, ``+ - * / //``, comparisons, ``-e``,
calls ``exp log tanh sqrt abs sin cos sigmoid`` (one argument), ``where(c, a, b)``,
``maximum(a, b)``, ``minimum(a, b)``, ``and(a, b)``, ``or(a, b)``, ``not(a)``, ``mod(a, b)``,
``cast(e, float32)``, and reductions ``sum(%k: extent, ...) { e }`` (also ``prod``, ``max``,
``min``). Comparisons bind loosest, then ``+ -``, then ``* / //``, then unary minus; parentheses
group. Parsing builds the operator with the Python API (relayish/ix/define.py), so its checks and
messages are the same, and registers it, as ``@ix.operator`` does. ``definition_text`` writes a
definition back in this form (names made unique; every binary operation in parentheses).
"""

from __future__ import annotations

import inspect
from typing import Any

import numpy as np

from ..dims import Dim, dim_text
from ..errors import RelayError
from . import define
from .language import (
    COMPARISONS, FUNCTIONS, REDUCTIONS, Bin, Cast, Definition, Lit, Node, Read, Reduce, Size, Unary, Var, Where,
    children, post_order,
)  # fmt: skip

MAX_DEPTH = 100  # nesting of an element expression in the text: the recursive parser takes 5 frames a level
_CALLS = {"where": 3, "maximum": 2, "minimum": 2, "and": 2, "or": 2, "not": 1, "mod": 2,
          **{f: 1 for f in FUNCTIONS}}
_SYMBOLS = {"and": "&", "or": "|", "mod": "%"}  # text call -> language operator
_CALL_OF = {symbol: call for call, symbol in _SYMBOLS.items()}
_DTYPES = ("bool", "int8", "int16", "int32", "int64", "uint8", "uint16", "uint32", "uint64", "float32", "float64")


def parse_definition(p: Any, name: str, where: str) -> Definition:
    """The rest of ``operator @name(%A, ...) = compute(...) fn (...) { e }`` after the name, read
    with the text parser ``p`` (relayish/parser.py); ``where`` is its file:line. The parser
    registers it (``define.replace``) once the whole text has parsed."""
    params = _names(p, "an input name such as %A")
    p.expect("=")
    keyword = p.identifier("compute")
    if keyword.text != "compute":
        raise p.error(f"expected compute, found {keyword.text!r}", keyword)
    p.expect("(")
    dims: list[Any] = []
    dtype = None
    while not p.at(")"):
        if p.tok.kind == "ident" and p.tok.text == "dtype":
            p.advance()
            p.expect("=")
            dtype = _dtype(p)
            break
        dims.append(_Reader(p, params, set()).expression(0))
        if not p.accept(","):
            break
    p.expect(")")
    p.expect("fn")
    indices = _names(p, "an index name such as %i")
    p.expect("{")
    body = _Reader(p, params, set(indices)).expression(0)
    p.expect("}")

    def build(*inputs: define.Input) -> define.Tensor:
        scope: dict[str, Any] = dict(zip(params, inputs))
        shape = [_build(d, scope) for d in dims]
        element = _element(body, scope, indices)
        return define.tensor(shape, element, dtype)

    try:
        defn = define.trace(build, name, params=params, where=where)
    except RelayError as err:
        raise p.error(err.message, p.tok) from None
    return defn


def _dtype(p: Any) -> str:
    """A dtype's name (``float32``)."""
    tok = p.identifier("a dtype such as float32")
    if tok.text not in _DTYPES:
        raise p.error(f"unknown dtype {tok.text} (one of {', '.join(_DTYPES)})", tok)
    return tok.text


def _names(p: Any, what: str) -> list[str]:
    """``(%a, %b, ...)``: the names without their ``%``, each once."""
    p.expect("(")
    names: list[str] = []
    while not p.at(")"):
        tok = p.name_token("local", what)
        if tok.text[1:] in names:
            raise p.error(f"{tok.text} is named twice", tok)
        names.append(tok.text[1:])
        if not p.accept(","):
            break
    p.expect(")")
    return names


def _element(body: tuple, scope: dict[str, Any], indices: list[str]) -> Any:
    """The element function ``define.tensor`` calls with the output's index variables."""
    def element(*variables: Var) -> Any:
        return _build(body, {**scope, **dict(zip(indices, variables))})

    element.__signature__ = _signature(indices)  # type: ignore[attr-defined]
    return element


def _signature(names: list[str]) -> Any:
    return inspect.Signature([inspect.Parameter(n, inspect.Parameter.POSITIONAL_ONLY) for n in names])


class _Reader:
    """Recursive descent over one element or dimension expression, into tuples (``_build`` reads them)."""

    def __init__(self, p: Any, params: list[str], bound: set[str]):
        self.p, self.params, self.bound = p, params, bound

    def expression(self, depth: int) -> tuple:
        self.check(depth)
        a = self.sum(depth)
        op = self.p.tok.text if self.p.tok.kind == "punct" and self.p.tok.text in COMPARISONS else None
        if op is None:
            return a
        self.p.advance()
        return ("bin", op, a, self.sum(depth))

    def sum(self, depth: int) -> tuple:
        a = self.product(depth)
        while self.p.at("+") or self.p.at("-"):  # each term nests the chain one deeper
            op = self.p.advance().text
            depth += 1
            a = ("bin", op, a, self.product(depth))
        return a

    def product(self, depth: int) -> tuple:
        a = self.unary(depth)
        while self.p.at("*") or self.p.at("/") or self.p.at("//"):
            op = self.p.advance().text
            depth += 1
            a = ("bin", op, a, self.unary(depth))
        return a

    def check(self, depth: int) -> None:
        if depth > MAX_DEPTH:
            raise self.p.error(f"an index expression nested more than {MAX_DEPTH} deep (each term of a chain such as "
                               "a + b + c nests one deeper)")

    def unary(self, depth: int) -> tuple:
        self.check(depth)
        if self.p.accept("-"):
            return ("neg", self.unary(depth + 1))
        return self.atom(depth)

    def atom(self, depth: int) -> tuple:
        p, tok = self.p, self.p.tok
        if p.accept("("):
            inner = self.expression(depth + 1)
            p.expect(")")
            return inner
        if tok.kind == "number":
            p.advance()
            text = tok.text
            try:
                return ("num", int(text) if text.isdigit() else float(text))
            except ValueError:
                raise p.error(f"{text}: a number in an index expression has no dtype suffix", tok) from None
        if tok.kind == "local":
            p.advance()
            name = tok.text[1:]
            if name in self.params:
                if not p.accept("["):
                    raise p.error(f"read input {tok.text} at indices: {tok.text}[...] ({tok.text}[] for a rank-0 input)", tok)
                indices = []
                while not p.at("]"):
                    indices.append(self.expression(depth + 1))
                    if not p.accept(","):
                        break
                p.expect("]")
                return ("read", name, indices)
            if name not in self.bound:
                raise p.error(f"{tok.text} is neither an input nor an index in scope", tok)
            return ("var", name)
        if tok.kind == "ident" and tok.text in ("inf", "nan"):
            p.advance()
            return ("num", float(tok.text))
        if tok.kind == "ident" and tok.text in REDUCTIONS:
            return self.reduction(depth)
        if tok.kind == "ident" and tok.text in ("shape", "cast") or tok.kind == "ident" and tok.text in _CALLS:
            return self.call(depth)
        raise p.expected("an index expression (a read, an index, a number, a call or a reduction)")

    def call(self, depth: int) -> tuple:
        p = self.p
        fname = p.advance()
        p.expect("(")
        if fname.text == "shape":
            input_tok = p.name_token("local", "an input such as %A")
            if input_tok.text[1:] not in self.params:
                raise p.error(f"{input_tok.text} is not an input", input_tok)
            p.expect(",")
            axis = p.integer("an axis")
            p.expect(")")
            return ("shape", input_tok.text[1:], axis)
        args = [self.expression(depth + 1)]
        while p.accept(","):
            if fname.text == "cast":
                dtype = _dtype(p)
                p.expect(")")
                return ("cast", args[0], dtype)
            args.append(self.expression(depth + 1))
        p.expect(")")
        wanted = 2 if fname.text == "cast" else _CALLS[fname.text]
        if len(args) != wanted:
            raise p.error(f"{fname.text} takes {wanted} argument{'s' * (wanted != 1)}, not {len(args)}", fname)
        return ("call", fname.text, args)

    def reduction(self, depth: int) -> tuple:
        p = self.p
        kind = p.advance().text
        p.expect("(")
        axes = []
        while True:
            tok = p.name_token("local", "an axis name such as %k")
            if tok.text[1:] in self.params or tok.text[1:] in self.bound:
                raise p.error(f"{tok.text} is already a name here: give the axis another", tok)
            p.expect(":")
            axes.append((tok.text[1:], self.expression(depth + 1)))
            if not p.accept(","):
                break
        p.expect(")")
        p.expect("{")
        inner = _Reader(p, self.params, self.bound | {name for name, _ in axes}).expression(depth + 1)
        p.expect("}")
        return ("reduce", kind, axes, inner)


def _build(t: tuple, scope: dict[str, Any]) -> Any:
    """The value of a parsed expression with the Python API: nodes, or dimensions for a shape."""
    kind = t[0]
    if kind == "num":
        return t[1]
    if kind == "var":
        return scope[t[1]]
    if kind == "shape":
        return scope[t[1]].shape[t[2]]
    if kind == "read":
        return scope[t[1]][tuple(_build(i, scope) for i in t[2])]
    if kind == "neg":
        return -_build(t[1], scope)
    if kind == "cast":
        return define.cast(_build(t[1], scope), t[2])
    if kind == "bin":
        a, b = _build(t[2], scope), _build(t[3], scope)
        if isinstance(a, (Dim, int)) and isinstance(b, (Dim, int)) and t[1] in "+-*//":
            return {"+": lambda: a + b, "-": lambda: a - b, "*": lambda: a * b, "//": lambda: a // b,
                    "/": lambda: _no_division(a)}[t[1]]()
        return Bin(t[1], define.node(a), define.node(b))
    if kind == "call":
        args = [define.node(_build(a, scope)) for a in t[2]]
        name = t[1]
        if name == "where":
            return Where(*args)
        if name == "not":
            return Unary("~", args[0])
        if name in ("maximum", "minimum") or name in _SYMBOLS:
            return Bin(_SYMBOLS.get(name, name), *args)
        return Unary(name, args[0])
    assert kind == "reduce"
    axes = [define.axis(_build(extent, scope), name) for name, extent in t[2]]
    body = _build(t[3], {**scope, **{name: v for (name, _), v in zip(t[2], axes)}})
    return Reduce(t[1], tuple(axes), define.node(body))


def _no_division(a: Any) -> Any:
    raise RelayError(f"a dimension divides with //, not / ({a} / ...)")


def definition_text(defn: Definition) -> str:
    """``defn`` in the text format (what ``parse_definition`` reads), after ``operator @name``."""
    names = _variable_names(defn)

    def name(v: Var) -> str:
        return "%" + names[id(v)]

    def dim(d: Dim) -> str:
        return dim_text(d, lambda atom: f"shape(%{defn.inputs[atom.input]}, {atom.axis})")  # type: ignore[attr-defined]

    text: dict[int, str] = {}
    for n in post_order(defn.body):
        if isinstance(n, Var):
            text[id(n)] = name(n)
        elif isinstance(n, Lit):
            text[id(n)] = repr(n.value) if not isinstance(n.value, bool) else "(0 == 0)" if n.value else "(0 != 0)"
        elif isinstance(n, Size):
            text[id(n)] = dim(n.dim)
        elif isinstance(n, Read):
            text[id(n)] = f"%{defn.inputs[n.input]}[{', '.join(text[id(i)] for i in n.indices)}]"
        elif isinstance(n, Bin):
            a, b = text[id(n.a)], text[id(n.b)]
            symbol = _CALL_OF.get(n.op)
            text[id(n)] = f"{symbol or n.op}({a}, {b})" if symbol or n.op in ("maximum", "minimum") else f"({a} {n.op} {b})"
        elif isinstance(n, Unary):
            a = text[id(n.a)]
            text[id(n)] = f"(-{a})" if n.op == "-" else f"not({a})" if n.op == "~" else f"{n.op}({a})"
        elif isinstance(n, Where):
            text[id(n)] = f"where({text[id(n.cond)]}, {text[id(n.a)]}, {text[id(n.b)]})"
        elif isinstance(n, Cast):
            text[id(n)] = f"cast({text[id(n.a)]}, {n.dtype})"
        else:
            assert isinstance(n, Reduce)
            axes = ", ".join(f"{name(v)}: {dim(v.extent)}" for v in n.axes)
            text[id(n)] = f"{n.kind}({axes}) {{ {text[id(n.body)]} }}"
    dims = [dim(v.extent) for v in defn.indices] + ([f"dtype={np.dtype(defn.dtype).name}"] if defn.dtype else [])
    params = ", ".join(f"%{p}" for p in defn.inputs)
    return (f"({params}) = compute({', '.join(dims)}) fn ({', '.join(name(v) for v in defn.indices)}) "
            f"{{ {text[id(defn.body)]} }}")


def _variable_names(defn: Definition) -> dict[int, str]:
    """A name per index variable, none equal to another in scope where it is (an input's, the
    output's indices', an enclosing reduction's): sibling reductions may reuse one."""
    names: dict[int, str] = {}

    def fresh(v: Var, scope: set[str]) -> None:
        if id(v) not in names:
            base, k = v.name, 1
            while base in scope:
                base, k = f"{v.name}_{k}", k + 1
            names[id(v)] = base
        scope.add(names[id(v)])

    outer = set(defn.inputs)
    for v in defn.indices:
        fresh(v, outer)
    stack: list[tuple[Node, frozenset[str]]] = [(defn.body, frozenset(outer))]
    seen: set[tuple[int, frozenset[str]]] = set()
    while stack:
        n, scope = stack.pop()
        if (id(n), scope) in seen:
            continue
        seen.add((id(n), scope))
        if isinstance(n, Reduce):
            inner = set(scope)
            for v in n.axes:
                fresh(v, inner)
            stack.append((n.body, frozenset(inner)))
        else:
            stack.extend((c, scope) for c in children(n))
    return names
