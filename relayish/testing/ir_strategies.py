"""Hypothesis strategies for syntactically arbitrary, closed relayish IR.

What comes out is *closed* and *kind-correct* but not necessarily well typed: every local
variable is bound (once) where it is used (by a ``let``, a function or a pattern of a ``match``
clause, in that clause's body), every type variable is bound by an enclosing function,
definition, data type or ``forall`` and has the kind its position needs (Dim inside shapes,
BaseType as a tensor's dtype, Shape as a tensor's shape, Type elsewhere), every ``@name``
names a global of the module, a registered operator or a declared one, every data type and
constructor is one the module defines (a data type with as many arguments as it has
parameters), and operator attributes are valid for the operator's schema. That is what the
printer, the parser and alpha-equivalence must handle; the type checker is not involved.

Name hints repeat on purpose (two different variables called ``x``, hints that are
keywords, start with a digit, are empty or are not identifiers) so that the printer's
renaming is exercised.

Every term is decoded from one hypothesis byte string, read front to back: a zero byte
is always the simplest choice (a leaf, the first option, the smallest number), so the
shrinker simplifies terms by zeroing bytes, and a term costs one hypothesis draw instead
of hundreds (which would make a 500-example round trip take minutes).

Modules define data types now and then (``type``), so that constructors, ``Is``, ``Unpack``
and ``match`` with its patterns appear; ``exprs()`` and ``types()``, outside any module, have none.

Strategies: ``modules()``, ``exprs()``, ``types()``, ``dims(dim_vars)`` and
``dim_trees(dim_vars)`` (dimension arithmetic as written, evaluable on integers: the oracle
for the canonical form of ``relayish.dims``). ``time_limit`` turns a hang into a failure.
"""

from __future__ import annotations

import contextlib
import functools
import math
import operator
import signal
from typing import Any, Callable, Iterator, Mapping, Sequence

import attrs
import numpy as np
from hypothesis import strategies as st

from ..dims import Dim, as_dim
from .choices import Chooser, Stream, decoded
from ..expr import (
    Ascribe, Call, Constant, Construct, Expr, Function, GlobalVar, Grad, If, IsCtor, Jvp, Let, Match, Op, Vmap,
    Pattern, PatternCtor, PatternTuple, PatternVar, PatternWildcard, Proj, RefNew, RefRead, RefWrite,
    Tuple, Unpack, Var, Zero,
)  # fmt: skip
from ..module import CtorDef, Module, TypeDef
from ..ops.record import REQUIRED, OpDef
from ..ops.registry import all_ops
from ..types import (
    BaseType, BoolType, DataType, FloatType, ForallType, FuncType, IntType, Kind, RefType, Shape,
    TensorType, TupleType, Type, TypeVar, UIntType,
)  # fmt: skip


BASE_TYPES: tuple[BaseType, ...] = (
    *(IntType(w) for w in IntType.widths),
    *(UIntType(w) for w in UIntType.widths),
    *(FloatType(w) for w in FloatType.widths),
    BoolType(),
)
BINARY_OP_NAMES = (
    "add", "sub", "mul", "div", "equal", "not_equal", "less", "less_equal", "greater", "greater_equal",
)  # fmt: skip
UNARY_OP_NAMES = ("neg", "sq")

# Hints that collide with each other and with the printer's own suffixes, keywords, a
# leading digit, an empty hint and one that is not an identifier.
VAR_HINTS = ("x", "x", "y", "x_1", "f", "acc", "0", "in", "", "a-b")
TYPE_VAR_HINTS = ("n", "n", "m", "a", "s", "n_1", "in", "Tensor", "3d", "")
# Global and declared-operator names: identifiers, none a registered operator; some are
# keywords of the text format, which must still work after "@".
GLOBAL_NAMES = ("main", "f", "g", "f_1", "loop", "_helper", "x0", "let", "Tensor")
DECLARED_OP_NAMES = ("my_op", "custom", "op2", "fn")
# Data type and constructor names: a constructor named as a type, one named as a type variable
# hint, names with the printer's suffix; type and constructor names have namespaces of their own.
DATA_NAMES = ("List", "Tree", "Box", "n", "T_1", "maybe")
CTOR_NAMES = ("Cons", "Nil", "Box", "Leaf", "Node", "Some", "None", "C_1", "x", "Empty")

NONFINITE_AND_SIGNED_ZERO = (math.nan, math.inf, -math.inf, -0.0)


@functools.lru_cache(maxsize=1)
def registered_ops() -> tuple[OpDef, ...]:
    """Every registered operator, by name."""
    return tuple(op for _, op in sorted(all_ops().items()))


@functools.lru_cache(maxsize=1)
def _ops_by_attribute_kind() -> dict[str, tuple[OpDef, ...]]:
    """For each attribute kind in use, the operators with an attribute of that kind."""
    by_kind: dict[str, list[OpDef]] = {}
    for op in registered_ops():
        for spec in op.attrs:
            by_kind.setdefault(spec.kind, []).append(op)
    return {kind: tuple(ops) for kind, ops in sorted(by_kind.items())}


@attrs.frozen
class _Scope:
    """What may be referred to here: local variables and type variables of every kind."""

    vars: tuple[Var, ...] = ()
    tvars: tuple[TypeVar, ...] = ()

    def bind(self, vars: Sequence[Var] = (), tvars: Sequence[TypeVar] = ()) -> _Scope:
        return _Scope(self.vars + tuple(vars), self.tvars + tuple(tvars))

    def of_kind(self, kind: Kind) -> tuple[TypeVar, ...]:
        return tuple(tv for tv in self.tvars if tv.kind is kind)


# -- dimensions as written -----------------------------------------------------------------

_ARITHMETIC: dict[str, Callable[..., Any]] = {
    "neg": operator.neg, "+": operator.add, "-": operator.sub, "*": operator.mul, "//": operator.floordiv,
}  # fmt: skip


@attrs.frozen
class DimTree:
    """A dimension kept as written, so it can be both built and evaluated directly.

    ``op`` is ``"const"`` (``args`` holds an int), ``"var"`` (a Dim type variable),
    ``"neg"`` with one argument, or one of ``+ - * //`` with two.
    """

    op: str
    args: tuple

    def build(self, leaf: Callable[[Any], Any] = as_dim, safe: bool = False) -> Any:
        """The dimension made with relayish arithmetic; leaves go through ``leaf`` first.

        With ``leaf=lambda v: v`` the arithmetic runs on ints and type variables themselves.
        With ``safe``, a division by a divisor that is identically zero is left out instead
        of raising (generators only need some valid dimension).
        """
        if self.op in ("const", "var"):
            return leaf(self.args[0])
        parts = [arg.build(leaf, safe) for arg in self.args]
        if safe and self.op == "//" and as_dim(parts[1]) == 0:
            return parts[0]
        return _ARITHMETIC[self.op](*parts)

    def evaluate(self, env: Mapping[TypeVar, int]) -> int:
        """Python integer arithmetic on the same expression (raises ZeroDivisionError)."""
        if self.op == "const":
            return self.args[0]
        if self.op == "var":
            return env[self.args[0]]
        return _ARITHMETIC[self.op](*(arg.evaluate(env) for arg in self.args))

    def __str__(self) -> str:
        if self.op in ("const", "var"):
            arg = self.args[0]
            return str(arg) if isinstance(arg, int) else arg.name
        if self.op == "neg":
            return f"-({self.args[0]})"
        return f"({self.args[0]} {self.op} {self.args[1]})"


# -- the generator ----------------------------------------------------------------------------


@functools.lru_cache(maxsize=None)
def _float_specials(dtype: np.dtype) -> tuple[float, ...]:
    info = np.finfo(dtype)
    return (
        math.nan, math.inf, -math.inf, -0.0, 0.0, 1.0, -1.0, 0.5, -2.5, 0.1,
        float(info.max), float(-info.max), float(info.tiny), float(info.smallest_subnormal),
    )  # fmt: skip


class _Builder(Chooser):
    """Decodes one term from a stream; size is bounded by a depth and a node budget."""

    def __init__(
        self,
        src: Stream,
        globals_: Sequence[str] = (),
        declared_ops: Sequence[str] = (),
        max_nodes: int = 40,
        type_depth: int = 3,
    ):
        super().__init__(src)
        self.globals = tuple(globals_)
        self.declared_ops = tuple(declared_ops)
        self.nodes_left = max_nodes
        self.type_depth = type_depth
        self.data: tuple[tuple[str, int], ...] = ()  # the module's data types and their arities
        self.ctors: tuple[tuple[str, int], ...] = ()  # its constructors and their numbers of fields

    def names(self, pool: Sequence[str], most: int) -> list[str]:
        """Up to ``most`` distinct names from ``pool`` (none only now and then)."""
        chosen: list[str] = []
        for _ in range(self.pick([(1, lambda: 0), (9, lambda: self.integer(1, most))])):
            name = self.one_of(pool)
            if name not in chosen:
                chosen.append(name)
        return chosen

    # scalars ------------------------------------------------------------------------
    def element(self, dtype: np.dtype) -> Any:
        """One element of ``dtype``: small numbers, extremes, specials or any bit pattern."""
        if dtype.kind == "b":
            return self.flag()
        raw = lambda: np.frombuffer(self.src.take(dtype.itemsize), dtype=dtype)[0]  # noqa: E731
        if dtype.kind in "iu":
            info = np.iinfo(dtype)
            return self.pick([
                (4, lambda: self.integer(max(int(info.min), -9), 9)),
                (1, lambda: self.one_of((int(info.min), int(info.max)))),
                (2, lambda: int(raw())),
            ])  # fmt: skip
        return self.pick([
            (3, lambda: self.integer(-16, 16) / 4),
            (3, lambda: self.one_of(NONFINITE_AND_SIGNED_ZERO)),
            (2, lambda: self.one_of(_float_specials(dtype))),
            (3, raw),
        ])  # fmt: skip

    def constant(self) -> Constant:
        dtype = self.one_of(BASE_TYPES).to_numpy()
        if self.integer(0, 2):
            return Constant(np.array(self.element(dtype), dtype=dtype))
        shape = tuple(self.many(lambda: self.integer(0, 3), 1, 3))
        values = [self.element(dtype) for _ in range(math.prod(shape))]
        return Constant(np.array(values, dtype=dtype).reshape(shape))

    def attr_value(self, kind: str) -> Any:
        """A valid value of an attribute kind of ``relayish.ops.record.ATTR_KINDS``."""
        small = lambda: self.integer(-3, 8)  # noqa: E731
        ints = lambda: tuple(self.many(small, 0, 4))  # noqa: E731
        if kind.endswith("?") and not self.integer(0, 3):
            return None
        kind = kind.rstrip("?")
        if kind == "int":
            return self.pick([(4, small), (1, lambda: self.integer(-(2**70), 2**70))])
        if kind == "float":
            return self.pick([
                (2, lambda: self.integer(-8, 8) / 8),
                (3, lambda: self.one_of((math.nan, *NONFINITE_AND_SIGNED_ZERO))),
                (1, lambda: self.element(np.dtype(np.float64))),
            ])  # fmt: skip
        if kind == "bool":
            return self.flag()
        if kind == "ints":
            return ints()
        if kind == "axes":
            return self.pick([(1, lambda: None), (2, small), (2, ints)])
        if kind == "pair":
            return self.pick([(1, small), (2, lambda: (small(), small()))])
        if kind == "padding":  # a pair, or Relay's four numbers
            return self.pick([(1, small), (2, lambda: (small(), small())), (1, lambda: (small(), small(), small(), small()))])
        if kind == "dtype":
            return self.one_of(BASE_TYPES)
        if kind == "str":
            return self.one_of(("", "same", 'quote " and \\ backslash', "tab\tnewline\n", "é∑"))
        raise ValueError(f"no generator for attribute kind {kind!r}")

    # dimensions and types -------------------------------------------------------------
    def dim_tree(self, dim_vars: Sequence[TypeVar], leaves: int) -> DimTree:
        """Arithmetic over ``dim_vars`` and small naturals, at most ``leaves`` leaves."""
        if leaves <= 1 or not self.integer(0, 2):
            if dim_vars and self.flag():
                return DimTree("var", (self.one_of(dim_vars),))
            return DimTree("const", (self.integer(0, 12),))
        op = self.one_of(("+", "-", "*", "//", "//", "neg"))
        if op == "neg":
            return DimTree("neg", (self.dim_tree(dim_vars, leaves - 1),))
        split = self.integer(1, leaves - 1)
        left = self.dim_tree(dim_vars, split)
        if op == "//" and self.flag():
            return DimTree("//", (left, DimTree("const", (self.integer(1, 4),))))
        return DimTree(op, (left, self.dim_tree(dim_vars, leaves - split)))

    def dim(self, scope: _Scope) -> Dim:
        dim_vars = scope.of_kind(Kind.DIM)
        return self.pick([
            (3, lambda: Dim.const(self.integer(0, 6))),
            (1, lambda: Dim.const(self.integer(0, 2**40))),
            (3 if dim_vars else 0, lambda: as_dim(self.one_of(dim_vars))),
            (3, lambda: as_dim(self.dim_tree(dim_vars, 5).build(safe=True))),
            (1, Dim.unknown),
        ])  # fmt: skip

    def fresh_tvars(self, lo: int, hi: int,
                    kinds: Sequence[Kind] = (Kind.DIM, Kind.DIM, Kind.DIM, Kind.TYPE, Kind.SHAPE, Kind.BASE_TYPE),
                    ) -> tuple[TypeVar, ...]:
        return tuple(self.many(lambda: TypeVar(self.one_of(TYPE_VAR_HINTS), self.one_of(kinds)), lo, hi))

    def tensor_type(self, scope: _Scope) -> TensorType:
        base_vars, shape_vars = scope.of_kind(Kind.BASE_TYPE), scope.of_kind(Kind.SHAPE)
        dtype = self.pick([
            (5, lambda: self.one_of(BASE_TYPES)),
            (2 if base_vars else 0, lambda: self.one_of(base_vars)),
        ])  # fmt: skip
        shape = self.pick([
            (5, lambda: Shape(*self.many(lambda: self.dim(scope), 0, 3))),
            (2 if shape_vars else 0, lambda: self.one_of(shape_vars)),
        ])  # fmt: skip
        return TensorType(dtype, shape)

    def type_(self, scope: _Scope, depth: int | None = None) -> Type:
        """A type of kind Type."""
        depth = self.type_depth if depth is None else depth
        composite = 1 if depth > 0 else 0
        type_vars = scope.of_kind(Kind.TYPE)

        def sub() -> Type:
            return self.type_(scope, depth - 1)

        def forall() -> ForallType:
            params = self.fresh_tvars(1, 3)
            return ForallType(params, self.type_(scope.bind(tvars=params), depth - 1))

        def data() -> DataType:
            name, arity = self.one_of(self.data)
            return DataType(name, [sub() for _ in range(arity)])

        return self.pick([
            (6, lambda: self.tensor_type(scope)),
            (3 if type_vars else 0, lambda: self.one_of(type_vars)),
            (1, lambda: TupleType(())),
            (2 * composite, lambda: TupleType(self.many(sub, 1, 3))),
            (3 * composite, lambda: FuncType(self.many(sub, 0, 3), sub())),
            (1 * composite, lambda: RefType(sub())),
            (2 * composite, forall),
            (2 if self.data else 0, data),
        ])  # fmt: skip

    def type_defs(self) -> dict[str, TypeDef]:
        """Up to three data types (none half the time) over zero to two parameters, whose fields may
        name any of them, itself included; constructors unique across the module."""
        names = self.names(DATA_NAMES, 3) if self.flag() else []
        params = {name: self.fresh_tvars(0, 2, (Kind.TYPE,)) for name in names}
        self.data = tuple((name, len(params[name])) for name in names)
        unused = list(CTOR_NAMES)
        defs = {}
        for name in names:
            ctors = []
            for _ in range(self.integer(1, 3)):
                ctor = unused.pop(self.integer(0, len(unused) - 1))
                fields = self.many(functools.partial(self.type_, _Scope(tvars=params[name]), 2), 0, 3)
                ctors.append(CtorDef(ctor, fields))
            defs[name] = TypeDef(name, params[name], ctors)
        self.ctors = tuple((c.name, len(c.fields)) for td in defs.values() for c in td.ctors)
        return defs

    # expressions ------------------------------------------------------------------------
    def var(self, scope: _Scope) -> Var:
        """A fresh variable, annotated or not (the annotation is drawn in ``scope``)."""
        return Var(self.one_of(VAR_HINTS), self.maybe(lambda: self.type_(scope)))

    def op_call(self, scope: _Scope, depth: int) -> Call:
        """A registered operator's call; mostly one chosen for an attribute kind, set."""
        by_kind = _ops_by_attribute_kind()
        kind = self.pick([(1, lambda: None), (3, lambda: self.one_of(tuple(by_kind)))])
        op = self.one_of(registered_ops() if kind is None else by_kind[kind])
        if isinstance(op.num_args, int):
            arity = op.num_args
        else:
            lo, hi = op.num_args
            arity = self.integer(lo, lo + 2 if hi is None else hi)
        args = [self.expr(scope, depth - 1) for _ in range(arity)]
        values = {}
        for spec in op.attrs:
            if spec.default is REQUIRED or spec.kind == kind or self.flag():
                values[spec.name] = self.attr_value(spec.kind)
        return Call(Op(op.name), args, values)

    def function(self, scope: _Scope, depth: int, self_var: Var | None = None) -> Function:
        """A function (a closure over ``scope``); ``self_var`` names it in its own body."""
        type_params = self.pick([(3, tuple), (2, lambda: self.fresh_tvars(1, 3))])
        inner = scope.bind(tvars=type_params)
        params = tuple(self.many(lambda: self.var(inner), 0, 3))
        ret_type = self.maybe(lambda: self.type_(inner))
        body_scope = inner.bind(vars=params + ((self_var,) if self_var is not None else ()))
        body = self.expr(body_scope, depth - 1)
        if self_var is not None:  # recursion: if c then <body> else <self>(...)
            args = [self.expr(body_scope, 0) for _ in params]
            body = If(self.expr(body_scope, 0), body, Call(self_var, args))
        return Function(params, body, ret_type, type_params)

    def let(self, scope: _Scope, depth: int, recursive: bool) -> Let:
        var = self.var(scope)
        value = self.function(scope, depth, self_var=var) if recursive else self.expr(scope, depth - 1)
        return Let(var, value, self.expr(scope.bind(vars=(var,)), depth - 1))

    def ctor_name(self, fields: int | None = None) -> str:
        """A constructor of the module, mostly one of ``fields`` fields where there is one."""
        fitting = [name for name, count in self.ctors if count == fields]
        return self.one_of(fitting if fitting and self.integer(0, 3) else [name for name, _ in self.ctors])

    def construct(self, scope: _Scope, depth: int) -> Construct:
        """A constructor applied to fields, mostly as many as it has."""
        name, count = self.one_of(self.ctors)
        count = count if self.integer(0, 3) else self.integer(0, 3)
        return Construct(name, [self.expr(scope, depth - 1) for _ in range(count)])

    def match(self, scope: _Scope, depth: int) -> Match:
        """``match e { p => body, .. }``: each body sees its pattern's variables."""
        value = self.expr(scope, depth - 1)
        patterns, bodies = [], []
        for _ in range(self.integer(1, 3)):
            pattern, bound = self.pattern(2)
            patterns.append(pattern)
            bodies.append(self.expr(scope.bind(vars=bound), depth - 1))
        return Match(value, patterns, bodies)

    def pattern(self, depth: int) -> tuple[Pattern, list[Var]]:
        """A pattern and the variables it binds (fresh, unannotated: patterns carry no types)."""
        if depth <= 0 or not self.integer(0, 2):
            if self.flag():
                return PatternWildcard(), []
            var = Var(self.one_of(VAR_HINTS))
            return PatternVar(var), [var]
        parts = [self.pattern(depth - 1) for _ in range(self.integer(0, 3))]
        bound = [var for _, vars_ in parts for var in vars_]
        if self.ctors and self.integer(0, 2):
            return PatternCtor(self.ctor_name(len(parts)), [p for p, _ in parts]), bound
        return PatternTuple([p for p, _ in parts]), bound

    def callee(self, scope: _Scope, depth: int) -> Expr:
        return self.pick([
            (3 if scope.vars else 0, lambda: self.one_of(scope.vars)),
            (3 if self.globals else 0, lambda: GlobalVar(self.one_of(self.globals))),
            (1, lambda: self.function(scope, depth)),
            (1, lambda: self.expr(scope, depth)),
        ])  # fmt: skip

    def expr(self, scope: _Scope, depth: int) -> Expr:
        c = 1 if depth > 0 and self.nodes_left > 0 else 0  # composites allowed
        self.nodes_left -= c
        d = depth - 1
        ops = self.declared_ops

        def sub() -> Expr:
            return self.expr(scope, d)

        return self.pick([
            # leaves
            (5 if scope.vars else 0, lambda: self.one_of(scope.vars)),
            (3, self.constant),
            (2 if self.globals else 0, lambda: GlobalVar(self.one_of(self.globals))),
            (1, lambda: Op(self.one_of((*ops, *BINARY_OP_NAMES, *UNARY_OP_NAMES, "sum")))),
            (1, lambda: Tuple(())),
            (1, lambda: Zero(self.type_(scope, 1))),
            # composites
            (2 * c, lambda: Tuple(self.many(sub, 1, 3))),
            (2 * c, lambda: Proj(sub(), self.integer(0, 3))),
            (1 * c, lambda: Proj(Proj(sub(), self.integer(0, 3)), self.integer(0, 3))),
            (4 * c, lambda: self.let(scope, depth, recursive=False)),
            (2 * c, lambda: self.let(scope, depth, recursive=True)),
            (2 * c, lambda: If(sub(), sub(), sub())),
            (5 * c, lambda: self.op_call(scope, depth)),
            (6 * c, lambda: Call(Op(self.one_of(BINARY_OP_NAMES)), (sub(), sub()))),
            (3 * c, lambda: Call(Op(self.one_of(UNARY_OP_NAMES)), (sub(),))),
            (2 * c if ops else 0, lambda: Call(Op(self.one_of(ops)), self.many(sub, 0, 3))),
            (4 * c, lambda: Call(self.callee(scope, d), self.many(sub, 0, 3))),
            (3 * c, lambda: self.function(scope, depth)),
            (2 * c, lambda: Ascribe(sub(), self.type_(scope))),
            (1 * c, lambda: Grad(sub())),
            (1 * c, lambda: Jvp(sub())),
            (1 * c, lambda: Vmap(sub(), tuple(self.one_of((0, 1, None)) for _ in range(self.integer(0, 3))))),
            (1 * c, lambda: RefNew(sub())),
            (1 * c, lambda: RefRead(sub())),
            (1 * c, lambda: RefWrite(sub(), sub())),
            (2 * c if self.ctors else 0, lambda: self.construct(scope, depth)),
            (1 * c if self.ctors else 0, lambda: IsCtor(sub(), self.ctor_name())),
            (1 * c if self.ctors else 0, lambda: Unpack(sub(), self.ctor_name())),
            (2 * c if self.ctors else 0, lambda: self.match(scope, depth)),
        ])  # fmt: skip

    def module(self, max_globals: int, max_depth: int) -> Module:
        type_defs = self.type_defs()
        names = self.names(GLOBAL_NAMES, max_globals)
        op_names = self.names(DECLARED_OP_NAMES, 2)
        self.globals, self.declared_ops = tuple(names), tuple(op_names)
        op_decls = {name: self.type_(_Scope()) for name in op_names}
        functions = {name: self.function(_Scope(), max_depth + 1) for name in names}
        return Module(functions, op_decls, type_defs)


def modules(max_globals: int = 3, max_depth: int = 5, max_nodes: int = 60) -> st.SearchStrategy[Module]:
    """Closed, kind-correct modules: mutually recursive globals and operator declarations."""
    return decoded(lambda src: _Builder(src, max_nodes=max_nodes).module(max_globals, max_depth), 2048)


def exprs(max_depth: int = 4, max_nodes: int = 30) -> st.SearchStrategy[Expr]:
    """Closed expressions (no globals, no declared operators)."""
    return decoded(lambda src: _Builder(src, max_nodes=max_nodes).expr(_Scope(), max_depth), 1024)


def types(max_depth: int = 3) -> st.SearchStrategy[Type]:
    """Closed types of kind Type (their type variables bound by ``forall``)."""
    return decoded(lambda src: _Builder(src, type_depth=max_depth).type_(_Scope()), 256)


def dim_trees(dim_vars: Sequence[TypeVar] = (), max_leaves: int = 8) -> st.SearchStrategy[DimTree]:
    """Dimension arithmetic over ``dim_vars`` and naturals: ``+ - * //`` and negation."""
    return decoded(lambda src: _Builder(src).dim_tree(tuple(dim_vars), max_leaves), 8 * max_leaves)


def dims(dim_vars: Sequence[TypeVar] = (), max_leaves: int = 8) -> st.SearchStrategy[Dim]:
    """Canonical dimensions over ``dim_vars`` (never a division by zero)."""
    return dim_trees(dim_vars, max_leaves).map(lambda tree: as_dim(tree.build(safe=True)))


# -- a guard for tests --------------------------------------------------------------------------


class TimeLimitExceeded(BaseException):
    """Raised by ``time_limit``; a BaseException so that no ``except Exception`` hides it."""


@contextlib.contextmanager
def time_limit(seconds: float, what: str, cpu: bool = False) -> Iterator[None]:
    """Fail (instead of hanging) when the block runs longer than ``seconds`` (main thread): of
    wall time, or with ``cpu`` of the CPU time of this process, which the other processes of
    a shared machine do not stretch."""
    timer, signum, clock = (signal.ITIMER_PROF, signal.SIGPROF, " of CPU time") if cpu else (signal.ITIMER_REAL, signal.SIGALRM, "")

    def expire(signum: int, frame: Any) -> None:
        raise TimeLimitExceeded(f"{what} took more than {seconds} s{clock}")

    previous = signal.signal(signum, expire)
    signal.setitimer(timer, seconds)
    try:
        yield
    finally:
        signal.setitimer(timer, 0)
        signal.signal(signum, previous)
