"""The Grad and Jvp transforms: reverse mode through backpropagator closures and references, and
forward mode.

In the dual program every tensor ``x : T`` becomes a pair ``(x, Ref(adjoint))`` (``dual_type``),
tuples, closures and references are rebuilt over dual values, and every primitive call

    let y = op(a, b) in ...

becomes its primal call, a fresh zero adjoint for ``y`` and one more link in the
backpropagator chain ``bp : RefType(() -> ())``:

    let y = op(a[0], b[0]) in let yb = Ref(zeros_like(y)) in
    let prev = !bp in let _ = bp := fn () { let g = !yb in a[1] := !a[1] + rule_a(g) ... ; prev() } in
    (y, yb)

``Grad(f)`` expands to a closure that lifts its arguments to duals, runs the dual of ``f``,
seeds the result's adjoint with one, runs the chain and reads the adjoints back. The result
is an ordinary relayish program (it type-checks, prints, parses and runs), so ``Grad``
nests: inner ``Grad`` nodes are expanded first and the outer transform differentiates
their expansion, references and closures included. Free variables of a differentiated
function are constants at its level (lifted with zero adjoints nobody reads), which is what
keeps nested gradients apart. A global ``@g`` called by differentiated code gets a dual
global ``@g__ad(bp, duals...)``, recursive where ``@g`` is.

Forward mode (``Jvp``, ``Mode`` FORWARD) is the same dualizer with other duals: a tensor is paired
with its tangent (no references, no chain), an operator call computes its result's tangent by the
forward rule derived from its gradient rule (``ad.tangents``), and ``Jvp(f)`` applies ``f``'s dual
to (argument, tangent) pairs and splits the result. Dual globals are ``@g__fw``, dual data types
``List__fw``. Grad and Jvp nodes expand innermost first, so they nest in any order.

What the transform cannot see it refuses with a RelayTypeError at the ``Grad``: a free
variable of function type that is not bound by an enclosing ``let`` to a function literal
(its code is unknown), a free reference, or a type variable of kind Type.
"""

from __future__ import annotations

from typing import Any, Callable, Iterator

import attrs

from relayish.dims import Dim
from relayish.errors import RelayTypeError, Span
from relayish.expr import (
    Ascribe, Call, Constant, Construct, Expr, Function, GlobalVar, Grad, If, IsCtor, Jvp, Let, Match, Op, PatternCtor,
    PatternVar, Proj, RefNew, RefRead, RefWrite, Tuple, Unpack, Var, Vmap, Zero, lets, written_type,
)  # fmt: skip
from relayish.matches import has_match, lower_matches, lowered_function
from relayish.module import CtorDef, Module, TypeDef
from relayish.ops.expand import expand_lowered, has_lowered
from relayish.ops.registry import is_user_op, lookup_op
from relayish.ops.sites import Site
from relayish.traverse import ExprMutator, globals_reached, post_order, reads, replace, trampoline
from relayish.types import (
    UNIT, DataType, FloatType, ForallType, FuncType, Kind, RefType, Shape, TensorType, TupleType, Type, TypeVar, data_types_in, is_first_order,
)  # fmt: skip
from typecheck import expr_types, infer, type_arguments
from typecheck.inference import declared_type
from typecheck.instances import instantiated
from typecheck.solver import substitute as substitute_type

from .batching import Context as BatchContext
from .literals import free_in_order, let_literals
from .tangents import tangent

BACKPROP = RefType(FuncType([], UNIT))


@attrs.frozen
class Mode:
    """Reverse mode (``Grad``: a tensor's dual pairs it with a reference to its adjoint) or
    forward mode (``Jvp``: with its tangent). Duals of data types and globals are named with
    ``suffix``."""

    node: str
    suffix: str

    @property
    def forward(self) -> bool:
        return self.node == "Jvp"


REVERSE = Mode("Grad", "__ad")
FORWARD = Mode("Jvp", "__fw")
MODES = (REVERSE, FORWARD)


def op(name: str, *args: Expr) -> Call:
    return Call(Op(name), args)


def dual_type(ty: Type, kept: tuple[TypeVar, ...] = (), mode: Mode = REVERSE) -> Type:
    """The type of a value's dual: tensors become (value, adjoint reference) pairs in reverse mode,
    (value, tangent) pairs in forward mode, and a data type ``D[args]`` its dual ``D__ad[dual args]``
    (``dual_name``). The type variables ``kept`` stand for themselves (a data type's parameters, in
    its dual's fields)."""
    if isinstance(ty, TensorType):
        return TupleType([ty, ty if mode.forward else RefType(ty)])
    if isinstance(ty, TupleType):
        return TupleType([dual_type(f, kept, mode) for f in ty.fields])
    if isinstance(ty, FuncType):
        return FuncType([dual_type(p, kept, mode) for p in ty.params], dual_type(ty.ret, kept, mode))
    if isinstance(ty, RefType):
        return RefType(dual_type(ty.value, kept, mode))
    if isinstance(ty, ForallType):
        return ForallType(ty.params, dual_type(ty.body, kept, mode))
    if isinstance(ty, DataType):
        return DataType(dual_name(ty.name, mode), [dual_type(a, kept, mode) for a in ty.args])
    if ty in kept:
        return ty
    raise RelayTypeError(f"{mode.node} cannot differentiate through a value of type {ty} (a type variable of kind Type)")


def dual_name(name: str, mode: Mode = REVERSE) -> str:
    """The dual of data type (or constructor) ``name``: its fields hold duals."""
    return f"{name}{mode.suffix}"


def dual_source(name: str) -> tuple[str, Mode] | None:
    """The data type (or constructor) that ``name`` is the dual of, and the mode; None if none."""
    for mode in MODES:
        if name.endswith(mode.suffix):
            return name[: -len(mode.suffix)], mode
    return None


def with_dual_types(module: Module) -> Module:
    """``module`` with the dual of every data type its code mentions and lacks (``List__ad`` of
    ``List``; a dual's fields may ask for more duals)."""
    defs = dict(module.type_defs)
    wanted = []
    for fn in module.functions.values():
        for node in post_order(fn):
            t = written_type(node)
            wanted += [d.name for d in data_types_in(t) if d.name not in defs] if t is not None else []
            # a dual constructor's type is not written until the module is checked
            if isinstance(node, (Construct, IsCtor, Unpack)) and module.ctor(node.ctor) is None:
                found = dual_source(node.ctor)
                base = module.ctor(found[0]) if found is not None else None
                wanted += [dual_name(base[0].name, found[1])] if base is not None else []
    while wanted:
        name = wanted.pop()
        found = dual_source(name)
        if name in defs or found is None or found[0] not in defs:
            continue
        source, mode = defs[found[0]], found[1]
        ctors = [CtorDef(dual_name(c.name, mode), [dual_type(f, source.params, mode) for f in c.fields]) for c in source.ctors]
        defs[name] = TypeDef(name, source.params, ctors)
        wanted += [t.name for c in ctors for f in c.fields for t in data_types_in(f) if t.name not in defs]
    return module if len(defs) == len(module.type_defs) else Module(module.functions, module.op_decls, defs)



Convert = Callable[[str, DataType], str]


def lift(e: Expr, ty: Type, convert: Convert, mode: Mode = REVERSE) -> Expr:
    """A constant's dual: each tensor paired with a fresh zero adjoint that nobody reads (a zero
    tangent). A value of a data type goes through the global ``convert("lift", ty)`` names
    (``Context.converter``)."""
    if isinstance(ty, TupleType):
        return Tuple([lift(Proj(e, i), f, convert, mode) for i, f in enumerate(ty.fields)])
    if isinstance(ty, DataType):
        return Call(GlobalVar(convert("lift", ty)), [e])
    return lift_tensor(e, mode)


def lift_tensor(e: Expr, mode: Mode = REVERSE) -> Expr:
    """``e`` (a tensor) paired with a fresh zero adjoint (a zero tangent). ``e`` is evaluated once: a
    dual may write the backpropagator (``Is[C](...)`` of a constructor call with float fields does),
    and two copies would bind the same variables twice, so a link would call itself."""
    def with_zero(v: Expr) -> Tuple:
        zero = op("zeros_like", v)
        return Tuple([v, zero if mode.forward else RefNew(zero)])

    if isinstance(e, (Var, Constant)):
        return with_zero(e)
    value = Var("v", None)
    return Let(value, e, with_zero(value))


def adjoints(d: Expr, ty: Type, convert: Convert) -> Expr:
    """The adjoints held by a dual of type ``dual_type(ty)``, shaped like ``ty`` (a data type's by
    the global ``convert("adjoints", ty)``: the same constructors, holding the adjoints)."""
    if isinstance(ty, TupleType):
        return Tuple([adjoints(Proj(d, i), f, convert) for i, f in enumerate(ty.fields)])
    if isinstance(ty, DataType):
        return Call(GlobalVar(convert("adjoints", ty)), [d])
    return RefRead(Proj(d, 1))


def primal(d: Expr, ty: Type) -> Expr:
    """The value of a dual, shaped like ``ty``."""
    if isinstance(ty, TupleType):
        return Tuple([primal(Proj(d, i), f) for i, f in enumerate(ty.fields)])
    return Proj(d, 0)


def tangent_of(d: Expr, ty: Type) -> Expr:
    """The tangent of a forward-mode dual, shaped like ``ty``."""
    if isinstance(ty, TupleType):
        return Tuple([tangent_of(Proj(d, i), f) for i, f in enumerate(ty.fields)])
    return Proj(d, 1)


def paired(value: Expr, tangent: Expr, ty: Type) -> Expr:
    """The forward-mode dual of ``value`` with ``tangent`` (both shaped like ``ty``); integers and
    booleans have no tangent: theirs is zero, whatever was given."""
    if isinstance(ty, TupleType):
        return Tuple([paired(Proj(value, i), Proj(tangent, i), f) for i, f in enumerate(ty.fields)])
    return Tuple([value, tangent if _is_float(ty) else op("zeros_like", value)])


def seed(d: Expr, ty: Type, cotangent: Expr | None) -> list[Expr]:
    """Stores that seed a result's adjoints: ones, or the given cotangent."""
    if isinstance(ty, TupleType):
        return [w for i, f in enumerate(ty.fields) for w in seed(Proj(d, i), f, None if cotangent is None else Proj(cotangent, i))]
    value = op("ones_like", Proj(d, 0)) if cotangent is None else cotangent
    return [RefWrite(Proj(d, 1), value)]


def _is_float(ty: Type) -> bool:
    return isinstance(ty, TensorType) and isinstance(ty.dtype, FloatType)


class Context:
    """One type-checked module without Grad or Jvp being differentiated in ``mode``: its types, the
    function literals its lets bind, and the dual globals made so far."""

    def __init__(self, module: Module, made: dict[str, tuple[Function, str]] | None = None, mode: Mode = REVERSE):
        self.module = module
        self.mode = mode
        self.types = expr_types(module)
        self.literals = let_literals(module)
        self.made = made if made is not None else {}
        self.pending: list[tuple[str, str]] = []
        self.new_globals: dict[str, Function] = {}
        self.converters: dict[tuple[str, DataType], str] = {}

    def hint(self, f: Expr, index: int) -> str:
        """A name for parameter ``index`` of an expansion of ``Grad(f)`` or ``Jvp(f)``: ``f``'s own when known."""
        fn = self.module[f.name] if isinstance(f, GlobalVar) else f
        if isinstance(fn, Function) and index < len(fn.params):
            return fn.params[index].name_hint
        return f"x{index}"

    def type_of(self, e: Expr) -> Type:
        return self.types[id(e)]

    def dual_type(self, ty: Type) -> Type:
        return dual_type(ty, mode=self.mode)

    def converter(self, kind: str, ty: DataType) -> str:
        """The global that lifts a value of data type ``ty`` to its dual (``kind`` "lift": each
        tensor with a zero adjoint or tangent) or reads a dual's adjoints back into a ``ty``
        ("adjoints"), made once per type: a match over the constructors, recursive where the type is."""
        mode = self.mode
        key = (kind, ty)
        if key in self.converters:
            return self.converters[key]
        name = f"{kind}{mode.suffix}_{ty.name}"
        while name in self.module.functions or name in self.new_globals or name in self.converters.values():
            name += "_"
        self.converters[key] = name
        definition = self.module.type_defs[ty.name]
        mapping = dict(zip(definition.params, ty.args))
        x = Var("x", ty if kind == "lift" else dual_type(ty, mode=mode))
        patterns, bodies = [], []
        for ctor in definition.ctors:
            fields = [substitute_type(f, mapping) for f in ctor.fields]
            for field in fields:
                if not _liftable(field):
                    raise RelayTypeError(f"{mode.node}: a value of type {ty} is differentiated with respect to, and its "
                                         f"constructor {ctor.name} holds a {field}: only tensors can be")
            names = [Var(f"x{i}") for i in range(len(fields))]
            dual = dual_name(ctor.name, mode)
            source, target = (ctor.name, dual) if kind == "lift" else (dual, ctor.name)
            patterns.append(PatternCtor(source, [PatternVar(v) for v in names]))
            converted = [lift(v, t, self.converter, mode) if kind == "lift" else adjoints(v, t, self.converter)
                         for v, t in zip(names, fields)]
            bodies.append(Construct(target, converted))
        fn = Function([x], Match(x, patterns, bodies), dual_type(ty, mode=mode) if kind == "lift" else ty)
        self.new_globals[name] = lowered_function(fn)
        return name

    def dual_global(self, name: str) -> str:
        """The name of ``@name``'s dual global, made on demand (and reused while ``@name`` is unchanged)."""
        key = name + self.mode.suffix
        known = self.made.get(key)
        if known is not None and known[0] is self.module[name]:
            return known[1]
        dual = key
        while dual in self.module.functions and self.made.get(key, (None, None))[1] != dual:
            dual += "_"
        self.made[key] = (self.module[name], dual)
        self.pending.append((name, dual))
        return dual

    def build_pending(self) -> dict[str, Function]:
        """Every dual global asked for so far (their bodies may ask for more)."""
        while self.pending:
            name, dual = self.pending.pop()
            fn = self.module[name]
            bp = [] if self.mode.forward else [Var("bp", BACKPROP)]
            dualizer = Dualizer(self, bp[0] if bp else None)
            params = [dualizer.bind(p, Var(p.name_hint, self.dual_type(p.type_annotation))) for p in fn.params]
            body = dualizer.run(fn.body)
            self.new_globals[dual] = Function([*bp, *params], body, self.dual_type(fn.ret_type), fn.type_params, span=fn.span)
        return self.new_globals

    # expansions ---------------------------------------------------------------------------
    def transformed_type(self, f: Expr, span: Span | None) -> FuncType:
        """The type of the function ``f`` that ``Grad(f)`` or ``Jvp(f)`` transforms: at the node, as
        instantiated there; a global on its own (``ad.grad``): its generic type, whose type parameters
        the new global takes over."""
        fty = self.types[id(f)] if id(f) in self.types else declared_type(self.module[f.name])
        if isinstance(fty, ForallType):
            fty = fty.body
        node, forward = self.mode.node, self.mode.forward
        for i, t in enumerate(fty.params):
            if not (is_first_order(t) if forward else _liftable(t)):
                what = "tensors and tuples of them" if forward else "tensors, tuples and data types holding them"
                raise RelayTypeError(f"{node}: parameter {i + 1} of the differentiated function has type {t}; {node} "
                                     f"differentiates with respect to {what}, not functions or references", span)
        if forward and not is_first_order(fty.ret):
            raise RelayTypeError(f"Jvp: the differentiated function returns {fty.ret}; Jvp gives tangents of tensors "
                                 "and tuples of them", span)
        return fty

    def applied(self, f: Expr, span: Span | None, bp: Var | None, duals: list[Expr]) -> tuple[list[tuple[Var, Expr]], Expr]:
        """Bindings giving ``f``'s free variables duals, and the dual of ``f`` called on ``duals``."""
        dualizer = Dualizer(self, bp)
        bindings = dualizer.lift_free(f, span)
        if isinstance(f, GlobalVar):
            return bindings, Call(GlobalVar(self.dual_global(f.name)), [*([bp] if bp is not None else []), *duals])
        return bindings, Call(dualizer.run(f), duals)

    def forward_expansion(self, f: Expr, span: Span | None) -> Function:
        """``Jvp(f)`` as a closure: ``f``'s dual applied to (argument, tangent) pairs, split into the
        value and the tangent of the result."""
        fty = self.transformed_type(f, span)
        params = [Var(self.hint(f, i), t) for i, t in enumerate(fty.params)]
        tangents = [Var("t" + p.name_hint, t) for p, t in zip(params, fty.params)]
        out = Var("out", self.dual_type(fty.ret))
        bindings, result = self.applied(f, span, None, [paired(p, t, ty) for p, t, ty in zip(params, tangents, fty.params)])
        body = lets([*bindings, (out, result)], Tuple([primal(out, fty.ret), tangent_of(out, fty.ret)]))
        return Function(params + tangents, body, TupleType([fty.ret, fty.ret]), span=span)

    def expansion(self, f: Expr, span: Span | None, cotangent: bool = False) -> Function:
        """``Grad(f)`` (or, with ``cotangent``, its vector-Jacobian product) as a closure."""
        fty = self.transformed_type(f, span)
        params = [Var(self.hint(f, i), t) for i, t in enumerate(fty.params)]
        ct = Var("ct", fty.ret) if cotangent else None
        bp = Var("bp", BACKPROP)
        prelude: list[tuple[Var, Expr]] = [(bp, RefNew(Function([], Tuple([]), UNIT)))]
        duals = [Var("d" + p.name_hint, dual_type(t)) for p, t in zip(params, fty.params)]
        bindings, result = self.applied(f, span, bp, list(duals))
        prelude += bindings
        prelude += [(d, lift(p, t, self.converter)) for d, p, t in zip(duals, params, fty.params)]
        out = Var("out", dual_type(fty.ret))
        prelude.append((out, result))
        prelude += [(Var("u", UNIT), store) for store in seed(out, fty.ret, ct)]
        prelude.append((Var("u", UNIT), Call(RefRead(bp), [])))
        gradients = Tuple([adjoints(d, t, self.converter) for d, t in zip(duals, fty.params)])
        body = lets(prelude, Tuple([primal(out, fty.ret), gradients]))
        ret = TupleType([fty.ret, TupleType(fty.params)])
        return Function(params + ([ct] if ct is not None else []), body, ret, span=span)


class Dualizer:
    """The dual of code inside one backpropagator chain ``bp`` (reverse mode), or in forward mode
    (``bp`` None)."""

    def __init__(self, ctx: Context, bp: Expr | None):
        self.ctx = ctx
        self.mode = ctx.mode
        self.bp = bp
        self.chain = [bp] if bp is not None else []  # what a dual global takes before the duals
        self.env: dict[int, Expr] = {}

    def bind(self, old: Var, new: Var) -> Var:
        self.env[id(old)] = new
        return new

    def run(self, e: Expr) -> Expr:
        self.live = live_vars(e)
        return trampoline(self.expr(e))

    # free variables ---------------------------------------------------------------------------
    def lift_free(self, f: Expr, span: Span | None) -> list[tuple[Var, Expr]]:
        """Bindings that give ``f``'s free variables duals: constants for tensors, the dual
        of the literal a ``let`` binds for functions (with its own free variables first)."""
        bindings: list[tuple[Var, Expr]] = []
        for var in free_in_order(f, self.ctx.literals):
            ty = var.type_annotation
            new = self.bind(var, Var(var.name_hint, None))
            literal = self.ctx.literals.get(id(var))
            if ty is not None and _liftable(ty):
                bindings.append((new, lift(var, ty, self.ctx.converter, self.mode)))
            elif literal is not None:
                bindings.append((new, self.run(literal)))
            else:
                what = ("reads %{}, a reference from outside it" if isinstance(ty, RefType)
                        else "calls %{}, a function from outside it whose code {} cannot see").format(var.name_hint, self.mode.node)
                raise RelayTypeError(
                    f"{self.mode.node}: the differentiated function {what}; define it inside the function, "
                    "bind it with let to a function literal, or make it a global",
                    span,
                )
        return bindings

    # expressions ------------------------------------------------------------------------------
    def expr(self, e: Expr) -> Iterator[Any]:
        if isinstance(e, Var):
            return self.env[id(e)]
        if isinstance(e, Constant):
            return lift_tensor(e, self.mode)
        if isinstance(e, GlobalVar):
            return self.global_value(e)
        if isinstance(e, Tuple):
            fields = []
            for f in e.fields:
                fields.append((yield self.expr(f)))
            return Tuple(fields, span=e.span)
        if isinstance(e, Proj):
            return Proj((yield self.expr(e.tuple_value)), e.index, span=e.span)
        if isinstance(e, Let):
            return (yield self.let_chain(e))
        if isinstance(e, If):
            cond = yield self.expr(e.cond)
            then_branch = yield self.expr(e.then_branch)
            else_branch = yield self.expr(e.else_branch)
            return If(Proj(cond, 0), then_branch, else_branch, span=e.span)
        if isinstance(e, Function):
            return (yield self.function(e))
        if isinstance(e, Call):
            return (yield self.call(e))
        if isinstance(e, Ascribe):
            return Ascribe((yield self.expr(e.expr)), self.ctx.dual_type(e.type), span=e.span)
        if isinstance(e, Zero):
            return _lift_zero(e.type, self.mode)
        if isinstance(e, RefNew):
            return RefNew((yield self.expr(e.value)), span=e.span)
        if isinstance(e, RefRead):
            return RefRead((yield self.expr(e.ref)), span=e.span)
        if isinstance(e, RefWrite):
            ref = yield self.expr(e.ref)
            return RefWrite(ref, (yield self.expr(e.value)), span=e.span)
        if isinstance(e, Construct):
            fields = []
            for f in e.fields:
                fields.append((yield self.expr(f)))
            return Construct(dual_name(e.ctor, self.mode), fields, span=e.span)
        if isinstance(e, IsCtor):
            return lift_tensor(IsCtor((yield self.expr(e.value)), dual_name(e.ctor, self.mode), span=e.span), self.mode)
        if isinstance(e, Unpack):
            return Unpack((yield self.expr(e.value)), dual_name(e.ctor, self.mode), span=e.span)
        if isinstance(e, Op):
            raise RelayTypeError(f"{self.mode.node}: operator @{e.name} used as a value: call it instead", e.span)
        raise AssertionError(f"unexpanded {type(e).__name__} in differentiated code")  # Grad, Jvp: expanded first

    def let_chain(self, e: Let) -> Iterator[Any]:
        bindings: list[tuple[Var, Expr]] = []
        while isinstance(e, Let):
            new = self.bind(e.var, Var(e.var.name_hint, None))  # before the value: let-bound functions recurse
            value = e.value
            if isinstance(value, Call) and isinstance(value.callee, Op) and id(e.var) not in self.live:
                # a dead result's adjoint stays zero: no link, so its gradient is exactly 0 and costs nothing
                dual = yield self.call(value, linked=False)
            else:
                dual = yield self.expr(value)
            bindings.append((new, dual))
            e = e.body
        return lets(bindings, (yield self.expr(e)))

    def function(self, fn: Function) -> Iterator[Any]:
        params = [self.bind(p, Var(p.name_hint, self.ctx.dual_type(self.param_type(p)))) for p in fn.params]
        body = yield self.expr(fn.body)
        ret = self.ctx.dual_type(fn.ret_type) if fn.ret_type is not None else None
        return Function(params, body, ret, fn.type_params, span=fn.span)

    def param_type(self, p: Var) -> Type:
        return p.type_annotation if p.type_annotation is not None else self.ctx.type_of(p)

    def global_value(self, g: GlobalVar) -> Function:
        """``@g`` used as a value: a closure calling its dual global with this chain."""
        fty = self.ctx.type_of(g)
        params = [Var(f"x{i}", self.ctx.dual_type(t)) for i, t in enumerate(fty.params)]
        return Function(params, Call(GlobalVar(self.ctx.dual_global(g.name)), [*self.chain, *params]),
                        self.ctx.dual_type(fty.ret))

    def call(self, e: Call, linked: bool = True) -> Iterator[Any]:
        args = []
        for a in e.args:
            dead = not linked and isinstance(a, Call) and isinstance(a.callee, Op)  # read only by dead code
            args.append((yield self.call(a, linked=False) if dead else self.expr(a)))
        if isinstance(e.callee, Op):
            return self.primitive(e, args, linked)
        if isinstance(e.callee, GlobalVar):
            return Call(GlobalVar(self.ctx.dual_global(e.callee.name)), [*self.chain, *args], span=e.span)
        return Call((yield self.expr(e.callee)), args, span=e.span)

    def primitive(self, e: Call, duals: list[Expr], linked: bool = True) -> Expr:
        """An operator call: its primal call, a zero adjoint, and (``linked``) a link in the chain; in
        forward mode its primal call and its tangent (``ad.tangents``)."""
        name = e.callee.name
        definition = lookup_op(name)
        if definition is None:
            raise RelayTypeError(f"{self.mode.node}: the declared operator @{name} has no implementation to differentiate", e.span)
        bindings: list[tuple[Var, Expr]] = []
        pairs, primals = [], []
        for i, d in enumerate(duals):
            if not isinstance(d, Var):
                d = _bound(bindings, Var(f"a{i}"), d)
            pairs.append(d)
            primals.append(_bound(bindings, Var(f"p{i}"), Proj(d, 0)))
        y, yb = Var("y"), Var("yb")
        bindings.append((y, Call(Op(name), primals, e.attrs, span=e.span)))
        types = [self.ctx.type_of(a) for a in e.args]
        out_type = self.ctx.type_of(e)
        differentiated = linked and _is_float(out_type) and any(map(_is_float, types))
        if differentiated and definition.gradient is None and is_user_op(name):
            raise RelayTypeError(f"{self.mode.node}: @{name} was registered without a vjp, so nothing says how to "
                                 "differentiate it (relayish.register_operator(..., vjp=...))", e.span)
        if self.mode.forward:
            site = Site(name, tuple(primals), tuple(types), y, out_type, definition.full_attrs(e.attrs), Var("g"))
            tangents = [Proj(pair, 1) if _is_float(t) else None for pair, t in zip(pairs, types)]
            derived = tangent(site, tangents, e.span) if differentiated else None
            return lets(bindings, Tuple([y, derived if derived is not None else op("zeros_like", y)]))
        bindings.append((yb, RefNew(op("zeros_like", y))))
        if differentiated and definition.gradient is not None:
            g = Var("g")
            site = Site(name, tuple(primals), tuple(types), y, out_type, definition.full_attrs(e.attrs), g)
            contributions = definition.gradient(site)
            steps = [
                RefWrite(Proj(pair, 1), accumulated(RefRead(Proj(pair, 1)), c))
                for pair, c, t in zip(pairs, contributions, types)
                if c is not None and _is_float(t)
            ]
            prev = Var("prev")
            backward = Function([], Let(g, RefRead(yb), lets([(Var("u", UNIT), s) for s in steps], Call(prev, []))), UNIT)
            bindings += [(prev, RefRead(self.bp)), (Var("u", UNIT), RefWrite(self.bp, backward))]
        return lets(bindings, Tuple([y, yb]))


def accumulated(adjoint: Expr, contribution: Expr) -> Expr:
    """``adjoint + contribution``; the adjoint of ``take`` (zeros with g added at the indices)
    is added where the indices point instead (``scatter_add``: work of g's size, which the
    JIT does in place when the adjoint is not shared), so a loop reading one row of a matrix
    per step does not build a dense matrix per step."""
    if isinstance(contribution, Call) and isinstance(contribution.callee, Op) and contribution.callee.name == "take_backward":
        g, indices, _like = contribution.args
        return Call(Op("scatter_add"), [adjoint, indices, g], contribution.attrs)
    return op("add", adjoint, contribution)


def live_vars(e: Expr) -> set[int]:
    """``id``s of the variables whose values ``e``'s result or effects may depend on.

    A variable bound to an operator call is live only when something live reads it, so a
    chain of bindings that ends unread is dead as a whole (its adjoints are all zero)."""
    deps: dict[int, set[int]] = {}  # an operator-call binding's variable: the variables its value reads
    owned: set[int] = set()  # nodes inside those values
    for node in post_order(e):
        if _operator_let(node):
            # A binding nested in the value is walked once, by its own entry: the outer value
            # depends on its variable, whose entry carries what its value reads (linear in size).
            seen: set[int] = set()
            read: set[int] = set()
            stack = [node.value]
            while stack:
                n = stack.pop()
                if id(n) in seen:
                    continue
                seen.add(id(n))
                if isinstance(n, Var):
                    read.add(id(n))
                stack.extend([n.var, n.body] if _operator_let(n) else n.children())
            owned |= seen
            deps[id(node.var)] = read
    live: set[int] = set()
    for node in post_order(e):
        if id(node) in owned:
            continue
        live.update(id(c) for c in reads(node) if isinstance(c, Var))
    stack = list(live)
    while stack:
        for dep in deps.get(stack.pop(), ()):
            if dep not in live:
                live.add(dep)
                stack.append(dep)
    return live


def _operator_let(node: Expr) -> bool:
    return isinstance(node, Let) and isinstance(node.value, Call) and isinstance(node.value.callee, Op)


def _bound(bindings: list[tuple[Var, Expr]], var: Var, value: Expr) -> Var:
    bindings.append((var, value))
    return var


def _lift_zero(ty: Type, mode: Mode) -> Expr:
    if isinstance(ty, TupleType):
        return Tuple([_lift_zero(f, mode) for f in ty.fields])
    return Tuple([Zero(ty), Zero(ty) if mode.forward else RefNew(Zero(ty))])


# whole modules --------------------------------------------------------------------------------


def _liftable(ty: Type) -> bool:
    """Whether values of ``ty`` can be differentiated with respect to: tensors, and tuples and data
    types whose parts are (data types are taken to be: their fields are checked where they are lifted)."""
    return is_first_order(ty) or isinstance(ty, DataType) or \
        isinstance(ty, TupleType) and all(map(_liftable, ty.fields))


def _next_grad(module: Module) -> tuple[str, Grad | Jvp | Vmap] | None:
    """A Grad, Jvp or Vmap with none inside it nor in the globals it reaches (those go first)."""
    transforms = (Grad, Jvp, Vmap)
    grads = {name: [node for node in post_order(fn) if isinstance(node, transforms)] for name, fn in module.functions.items()}
    with_grads = {name for name, found in grads.items() if found}
    blocked = False
    for name, found in grads.items():
        for node in found:
            inner = any(isinstance(n, transforms) for n in post_order(node.func))
            if inner:
                continue
            if globals_reached(module, node.func) & with_grads:
                blocked = True
                continue
            return name, node
    if blocked:
        raise RelayTypeError("Grad: a transformed function reaches a global that itself transforms it "
                             "(a cycle of Grad, Jvp or Vmap through globals), which has no finite expansion")
    return None


def expand(module: Module) -> Module:
    """``module`` type-checked, with every ``Grad`` replaced by its expansion (innermost
    first) and the dual globals they need added."""
    return _expanded(module)[0]


def lowered(module: Module) -> Module:
    """``module`` (type-checked) with every ``match`` lowered to ``if``s and ``Unpack``s
    (relayish/matches.py) and every call of a lowered operator replaced by the operator calls it
    stands for (relayish/ops/expand.py): what AD differentiates and the compiler compiles.
    Type-checked again; a module without either is returned as it is. Lowerings may call
    lowered operators: rounds repeat until none is left to expand."""
    if has_match(module):
        module = infer(lower_matches(module))
    for _ in range(_LOWERING_ROUNDS):
        if not any(has_lowered(fn) for fn in module.functions.values()):
            return module
        types = expr_types(module)
        expanded = expand_lowered(module, lambda e: types[id(e)])
        if expanded is module:
            return module
        module = infer(expanded)
    raise AssertionError(f"operator lowerings still expand after {_LOWERING_ROUNDS} rounds: one lowers to itself")


_LOWERING_ROUNDS = 16  # the deepest chain of lowerings calling lowered operators is far shorter


def with_instances(module: Module) -> Module:
    """``module`` (type-checked) with each reference from a monomorphic global to a global that is
    polymorphic over types (``fn [a: Type] ..``: the Prelude's ``map``) replaced by a reference to
    the global's instance at the types used there (``@map__1``), made once per types: the dual of a
    value of an unknown type is unknown, the dual of its instance's is not. Instances refer to
    instances in turn; repeated until none is new."""
    if not any(map(_over_types, module.functions.values())):
        return module
    made: dict[tuple, str] = {}
    for _ in range(_INSTANCE_ROUNDS):
        arguments = type_arguments(module)
        functions = dict(module.functions)

        class Instances(ExprMutator):
            def rewrite(self, old: Expr, new: Expr) -> Expr:
                target = module.functions.get(old.name) if isinstance(old, GlobalVar) else None
                if target is None or not _over_types(target):
                    return new
                mapping = arguments.get(id(old), {})
                if any(tv not in mapping for tv in target.type_params):
                    return new  # not determined here: Grad says so if it must differentiate it
                key = (old.name, tuple(mapping[tv] for tv in target.type_params))
                if key not in made:
                    instance = f"{old.name}__{len(made) + 1}"
                    while instance in functions:
                        instance += "_"
                    made[key] = instance
                    copy = _own_global_refs(instantiated(target, mapping))
                    # the types may mention the caller's own type parameters (its Dim n): the instance takes them too
                    functions[instance] = attrs.evolve(copy, type_params=_type_vars_in(mapping.values()))
                return GlobalVar(made[key], span=old.span)

        for name, fn in module.functions.items():
            if not _over_types(fn):
                functions[name] = Instances().mutate(fn)
        if all(functions.get(n) is fn for n, fn in module.functions.items()) and len(functions) == len(module.functions):
            return module
        module = infer(module.with_functions(functions))
    raise RelayTypeError(f"Grad: polymorphic globals instantiate each other at ever new types ({_INSTANCE_ROUNDS} rounds)")


_INSTANCE_ROUNDS = 64


def _type_vars_in(values: Any) -> list[TypeVar]:
    """The type variables (dimension variables included) in these types and dimensions, in order."""
    found: dict[TypeVar, None] = {}
    stack = list(values)[::-1]
    while stack:
        t = stack.pop()
        if isinstance(t, TypeVar):
            found[t] = None
        elif isinstance(t, Dim):
            found.update(dict.fromkeys(v for v in t.free_vars() if isinstance(v, TypeVar)))
        elif isinstance(t, Shape):
            stack.extend(reversed(t.dims))
        elif isinstance(t, Type):
            stack.extend(reversed([v for v in t._items() if isinstance(v, Type)]))
    return list(found)


def _own_global_refs(fn: Function) -> Function:
    """``fn`` with a new node for each reference to a global: copies share the nodes that did not
    change, and the instantiation ``type_arguments`` finds at a reference is keyed by its node."""

    class Renew(ExprMutator):
        def rewrite(self, old: Expr, new: Expr) -> Expr:
            return GlobalVar(old.name, span=old.span) if isinstance(old, GlobalVar) else new

    return Renew().mutate(fn)


def _over_types(fn: Function) -> bool:
    return any(tv.kind is Kind.TYPE for tv in fn.type_params)


def _expanded(module: Module, lower: bool = False) -> tuple[Module, dict[str, tuple[Function, str]]]:
    """The expanded module, and the dual globals made: source name and mode suffix -> (source, dual
    name). A module with a Grad or Jvp (or with ``lower``) gets its lowered operators expanded first, once."""
    module = infer(module)
    if lower or _next_grad(module) is not None:
        module = with_instances(lowered(module))
    made: dict[str, tuple[Function, str]] = {}
    while (found := _next_grad(module)) is not None:
        owner, node = found
        ctx: Context | BatchContext
        if isinstance(node, Vmap):
            ctx = BatchContext(module, made)
            replacement = ctx.expansion(node)
        else:
            ctx = Context(module, made, FORWARD if isinstance(node, Jvp) else REVERSE)
            replacement = (ctx.forward_expansion if ctx.mode.forward else ctx.expansion)(node.func, node.span)
        functions = {**module.functions, owner: replace(module[owner], node, replacement)}
        functions.update(ctx.build_pending())
        module = infer(with_dual_types(module.with_functions(functions)))  # unchanged globals keep their objects
        if isinstance(node, Vmap):
            module = lowered(module)  # batching rules may call lowered operators (logsumexp)
    return module, made


def with_vmap(module: Module, name: str, new_name: str, in_axes: tuple[int | None, ...]) -> Module:
    """``module`` with ``@new_name`` = the expanded ``Vmap(@name, in_axes)``."""
    if new_name in module:
        raise ValueError(f"the module already has a global @{new_name}")
    module, made = _expanded(module, lower=True)
    ctx = BatchContext(module, made)
    ctx.expansion(Vmap(GlobalVar(name), in_axes, span=module[name].span), new_name)
    return infer(module.with_functions({**module.functions, **ctx.build_pending()}))


def with_transform(module: Module, name: str, new_name: str, cotangent: bool = False, mode: Mode = REVERSE) -> Module:
    """``module`` with ``@new_name`` = the expanded ``Grad(@name)`` (or its vjp), or ``Jvp(@name)``."""
    if new_name in module:
        raise ValueError(f"the module already has a global @{new_name}")
    module, made = _expanded(module, lower=True)  # differentiated below: its lowered operators expanded
    ctx = Context(module, made, mode)
    if mode.forward:
        fn = ctx.forward_expansion(GlobalVar(name), module[name].span)
    else:
        fn = ctx.expansion(GlobalVar(name), module[name].span, cotangent=cotangent)
    fn = Function(fn.params, fn.body, fn.ret_type, module[name].type_params, span=fn.span)
    return infer(with_dual_types(module.with_functions({**module.functions, **ctx.build_pending(), new_name: fn})))
