"""The Grad transform: reverse mode through backpropagator closures and references.

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

What the transform cannot see it refuses with a RelayTypeError at the ``Grad``: a free
variable of function type that is not bound by an enclosing ``let`` to a function literal
(its code is unknown), a free reference, or a type variable of kind Type.
"""

from __future__ import annotations

from typing import Any, Iterator

from relayish.errors import RelayTypeError, Span
from relayish.expr import (
    Ascribe, Call, Constant, Expr, Function, GlobalVar, Grad, If, Let, Op, Proj, RefNew,
    RefRead, RefWrite, Tuple, Var, Zero,
)  # fmt: skip
from relayish.module import Module
from relayish.ops.expand import expand_lowered, has_lowered
from relayish.ops.registry import is_user_op, lookup_op
from relayish.ops.sites import Site
from relayish.traverse import free_vars, globals_reached, post_order, reads, replace, trampoline
from relayish.types import (
    UNIT, FloatType, ForallType, FuncType, RefType, TensorType, TupleType, Type, is_first_order,
)  # fmt: skip
from typecheck import expr_types, infer
from typecheck.inference import declared_type

BACKPROP = RefType(FuncType([], UNIT))


def op(name: str, *args: Expr) -> Call:
    return Call(Op(name), args)


def dual_type(ty: Type) -> Type:
    """The type of a value's dual: tensors become (value, adjoint reference) pairs."""
    if isinstance(ty, TensorType):
        return TupleType([ty, RefType(ty)])
    if isinstance(ty, TupleType):
        return TupleType([dual_type(f) for f in ty.fields])
    if isinstance(ty, FuncType):
        return FuncType([dual_type(p) for p in ty.params], dual_type(ty.ret))
    if isinstance(ty, RefType):
        return RefType(dual_type(ty.value))
    if isinstance(ty, ForallType):
        return ForallType(ty.params, dual_type(ty.body))
    raise RelayTypeError(f"Grad cannot differentiate through a value of type {ty} (a type variable of kind Type)")


def lift(e: Expr, ty: Type) -> Expr:
    """A constant's dual: each tensor paired with a fresh zero adjoint that nobody reads."""
    if isinstance(ty, TupleType):
        return Tuple([lift(Proj(e, i), f) for i, f in enumerate(ty.fields)])
    return lift_tensor(e)


def lift_tensor(e: Expr) -> Expr:
    return Tuple([e, RefNew(op("zeros_like", e))])


def adjoints(d: Expr, ty: Type) -> Expr:
    """The adjoints held by a dual of type ``dual_type(ty)``, shaped like ``ty``."""
    if isinstance(ty, TupleType):
        return Tuple([adjoints(Proj(d, i), f) for i, f in enumerate(ty.fields)])
    return RefRead(Proj(d, 1))


def primal(d: Expr, ty: Type) -> Expr:
    """The value of a dual, shaped like ``ty``."""
    if isinstance(ty, TupleType):
        return Tuple([primal(Proj(d, i), f) for i, f in enumerate(ty.fields)])
    return Proj(d, 0)


def seed(d: Expr, ty: Type, cotangent: Expr | None) -> list[Expr]:
    """Stores that seed a result's adjoints: ones, or the given cotangent."""
    if isinstance(ty, TupleType):
        return [w for i, f in enumerate(ty.fields) for w in seed(Proj(d, i), f, None if cotangent is None else Proj(cotangent, i))]
    value = op("ones_like", Proj(d, 0)) if cotangent is None else cotangent
    return [RefWrite(Proj(d, 1), value)]


def lets(bindings: list[tuple[Var, Expr]], body: Expr) -> Expr:
    for var, value in reversed(bindings):
        body = Let(var, value, body)
    return body


def _is_float(ty: Type) -> bool:
    return isinstance(ty, TensorType) and isinstance(ty.dtype, FloatType)


class Context:
    """One type-checked, Grad-free module being differentiated: its types, the function
    literals its lets bind, and the dual globals made so far."""

    def __init__(self, module: Module, made: dict[str, tuple[Function, str]] | None = None):
        self.module = module
        self.types = expr_types(module)
        self.literals: dict[int, Function] = {}
        for fn in module.functions.values():
            for node in post_order(fn):
                if isinstance(node, Let) and isinstance(node.value, Function):
                    self.literals[id(node.var)] = node.value
        self.made = made if made is not None else {}
        self.pending: list[tuple[str, str]] = []
        self.new_globals: dict[str, Function] = {}

    def hint(self, f: Expr, index: int) -> str:
        """A name for parameter ``index`` of an expansion of ``Grad(f)``: ``f``'s own when known."""
        fn = self.module[f.name] if isinstance(f, GlobalVar) else f
        if isinstance(fn, Function) and index < len(fn.params):
            return fn.params[index].name_hint
        return f"x{index}"

    def type_of(self, e: Expr) -> Type:
        return self.types[id(e)]

    def dual_global(self, name: str) -> str:
        """The name of ``@name``'s dual global, made on demand (and reused while ``@name`` is unchanged)."""
        known = self.made.get(name)
        if known is not None and known[0] is self.module[name]:
            return known[1]
        dual = f"{name}__ad"
        while dual in self.module.functions and self.made.get(name, (None, None))[1] != dual:
            dual += "_"
        self.made[name] = (self.module[name], dual)
        self.pending.append((name, dual))
        return dual

    def build_pending(self) -> dict[str, Function]:
        """Every dual global asked for so far (their bodies may ask for more)."""
        while self.pending:
            name, dual = self.pending.pop()
            fn = self.module[name]
            bp = Var("bp", BACKPROP)
            dualizer = Dualizer(self, bp)
            params = [dualizer.bind(p, Var(p.name_hint, dual_type(p.type_annotation))) for p in fn.params]
            body = dualizer.run(fn.body)
            self.new_globals[dual] = Function([bp, *params], body, dual_type(fn.ret_type), fn.type_params, span=fn.span)
        return self.new_globals

    # expansions ---------------------------------------------------------------------------
    def expansion(self, f: Expr, span: Span | None, cotangent: bool = False) -> Function:
        """``Grad(f)`` (or, with ``cotangent``, its vector-Jacobian product) as a closure."""
        # at a Grad site, f's type as instantiated there; a global on its own (ad.grad): its
        # generic type, whose type parameters the new global takes over
        fty = self.types[id(f)] if id(f) in self.types else declared_type(self.module[f.name])
        if isinstance(fty, ForallType):
            fty = fty.body
        params = [Var(self.hint(f, i), t) for i, t in enumerate(fty.params)]
        ct = Var("ct", fty.ret) if cotangent else None
        bp = Var("bp", BACKPROP)
        dualizer = Dualizer(self, bp)
        prelude: list[tuple[Var, Expr]] = [(bp, RefNew(Function([], Tuple([]), UNIT)))]
        prelude += dualizer.lift_free(f, span)
        duals = [Var("d" + p.name_hint, dual_type(t)) for p, t in zip(params, fty.params)]
        prelude += [(d, lift(p, t)) for d, p, t in zip(duals, params, fty.params)]
        out = Var("out", dual_type(fty.ret))
        if isinstance(f, GlobalVar):
            result = Call(GlobalVar(self.dual_global(f.name)), [bp, *duals])
        else:
            result = Call(dualizer.run(f), duals)
        prelude.append((out, result))
        prelude += [(Var("u", UNIT), store) for store in seed(out, fty.ret, ct)]
        prelude.append((Var("u", UNIT), Call(RefRead(bp), [])))
        gradients = Tuple([adjoints(d, t) for d, t in zip(duals, fty.params)])
        body = lets(prelude, Tuple([primal(out, fty.ret), gradients]))
        ret = TupleType([fty.ret, TupleType(fty.params)])
        return Function(params + ([ct] if ct is not None else []), body, ret, span=span)


class Dualizer:
    """The dual of code inside one backpropagator chain ``bp``."""

    def __init__(self, ctx: Context, bp: Expr):
        self.ctx = ctx
        self.bp = bp
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
        order: list[Var] = []
        seen: set[int] = set()
        stack: list[tuple[Var, bool]] = [(v, False) for v in reversed(free_vars(f))]
        while stack:  # dependencies first: a literal's free variables before the literal
            var, ready = stack.pop()
            if id(var) in seen:
                continue
            literal = self.ctx.literals.get(id(var))
            if ready or literal is None:
                seen.add(id(var))
                order.append(var)
                continue
            stack.append((var, True))
            stack += [(v, False) for v in reversed(free_vars(literal)) if v is not var and id(v) not in seen]
        for var in order:
            ty = var.type_annotation
            new = self.bind(var, Var(var.name_hint, None))
            literal = self.ctx.literals.get(id(var))
            if ty is not None and is_first_order(ty):
                bindings.append((new, lift(var, ty)))
            elif literal is not None:
                bindings.append((new, self.run(literal)))
            else:
                what = ("reads %{}, a reference from outside it" if isinstance(ty, RefType)
                        else "calls %{}, a function from outside it whose code Grad cannot see").format(var.name_hint)
                raise RelayTypeError(
                    f"Grad: the differentiated function {what}; define it inside the function, "
                    "bind it with let to a function literal, or make it a global",
                    span,
                )
        return bindings

    # expressions ------------------------------------------------------------------------------
    def expr(self, e: Expr) -> Iterator[Any]:
        if isinstance(e, Var):
            return self.env[id(e)]
        if isinstance(e, Constant):
            return lift_tensor(e)
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
            return Ascribe((yield self.expr(e.expr)), dual_type(e.type), span=e.span)
        if isinstance(e, Zero):
            return _lift_zero(e.type)
        if isinstance(e, RefNew):
            return RefNew((yield self.expr(e.value)), span=e.span)
        if isinstance(e, RefRead):
            return RefRead((yield self.expr(e.ref)), span=e.span)
        if isinstance(e, RefWrite):
            ref = yield self.expr(e.ref)
            return RefWrite(ref, (yield self.expr(e.value)), span=e.span)
        if isinstance(e, Op):
            raise RelayTypeError(f"Grad: operator @{e.name} used as a value: call it instead", e.span)
        raise AssertionError(f"unexpanded {type(e).__name__} in differentiated code")  # Grad: expanded first

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
        params = [self.bind(p, Var(p.name_hint, dual_type(self.param_type(p)))) for p in fn.params]
        body = yield self.expr(fn.body)
        ret = dual_type(fn.ret_type) if fn.ret_type is not None else None
        return Function(params, body, ret, fn.type_params, span=fn.span)

    def param_type(self, p: Var) -> Type:
        return p.type_annotation if p.type_annotation is not None else self.ctx.type_of(p)

    def global_value(self, g: GlobalVar) -> Function:
        """``@g`` used as a value: a closure calling its dual global with this chain."""
        fty = self.ctx.type_of(g)
        params = [Var(f"x{i}", dual_type(t)) for i, t in enumerate(fty.params)]
        return Function(params, Call(GlobalVar(self.ctx.dual_global(g.name)), [self.bp, *params]), dual_type(fty.ret))

    def call(self, e: Call, linked: bool = True) -> Iterator[Any]:
        args = []
        for a in e.args:
            dead = not linked and isinstance(a, Call) and isinstance(a.callee, Op)  # read only by dead code
            args.append((yield self.call(a, linked=False) if dead else self.expr(a)))
        if isinstance(e.callee, Op):
            return self.primitive(e, args, linked)
        if isinstance(e.callee, GlobalVar):
            return Call(GlobalVar(self.ctx.dual_global(e.callee.name)), [self.bp, *args], span=e.span)
        return Call((yield self.expr(e.callee)), args, span=e.span)

    def primitive(self, e: Call, duals: list[Expr], linked: bool = True) -> Expr:
        """An operator call: its primal call, a zero adjoint, and (``linked``) a link in the chain."""
        name = e.callee.name
        definition = lookup_op(name)
        if definition is None:
            raise RelayTypeError(f"Grad: the declared operator @{name} has no implementation to differentiate", e.span)
        bindings: list[tuple[Var, Expr]] = []
        pairs, primals = [], []
        for i, d in enumerate(duals):
            if not isinstance(d, Var):
                d = _bound(bindings, Var(f"a{i}"), d)
            pairs.append(d)
            primals.append(_bound(bindings, Var(f"p{i}"), Proj(d, 0)))
        y, yb = Var("y"), Var("yb")
        bindings.append((y, Call(Op(name), primals, e.attrs, span=e.span)))
        bindings.append((yb, RefNew(op("zeros_like", y))))
        types = [self.ctx.type_of(a) for a in e.args]
        out_type = self.ctx.type_of(e)
        differentiated = linked and _is_float(out_type) and any(map(_is_float, types))
        if differentiated and definition.gradient is None and is_user_op(name):
            raise RelayTypeError(f"Grad: @{name} was registered without a vjp, so nothing says how to differentiate it "
                                 "(relayish.register_operator(..., vjp=...))", e.span)
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


def _lift_zero(ty: Type) -> Expr:
    if isinstance(ty, TupleType):
        return Tuple([_lift_zero(f) for f in ty.fields])
    return Tuple([Zero(ty), RefNew(Zero(ty))])


# whole modules --------------------------------------------------------------------------------


def _next_grad(module: Module) -> tuple[str, Grad] | None:
    """A Grad with no Grad inside it and none in the globals it reaches (those go first)."""
    grads = {name: [node for node in post_order(fn) if isinstance(node, Grad)] for name, fn in module.functions.items()}
    with_grads = {name for name, found in grads.items() if found}
    blocked = False
    for name, found in grads.items():
        for node in found:
            inner = any(isinstance(n, Grad) for n in post_order(node.func))
            if inner:
                continue
            if globals_reached(module, node.func) & with_grads:
                blocked = True
                continue
            return name, node
    if blocked:
        raise RelayTypeError("Grad: a differentiated function reaches a global that itself differentiates it "
                             "(a cycle of Grad through globals), which has no finite expansion")
    return None


def expand(module: Module) -> Module:
    """``module`` type-checked, with every ``Grad`` replaced by its expansion (innermost
    first) and the dual globals they need added."""
    return _expanded(module)[0]


def lowered(module: Module) -> Module:
    """``module`` (type-checked) with every call of a lowered operator replaced by the
    operator calls it stands for (relayish/ops/expand.py): what AD differentiates and the
    compiler compiles. Type-checked again; a module without such calls is returned as it is.
    Lowerings may call lowered operators: rounds repeat until none is left to expand."""
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


def _expanded(module: Module, lower: bool = False) -> tuple[Module, dict[str, tuple[Function, str]]]:
    """The expanded module, and the dual globals made: source name -> (source, dual name).
    A module with a Grad (or with ``lower``) gets its lowered operators expanded first, once."""
    module = infer(module)
    if lower or _next_grad(module) is not None:
        module = lowered(module)
    made: dict[str, tuple[Function, str]] = {}
    while (found := _next_grad(module)) is not None:
        owner, node = found
        ctx = Context(module, made)
        replacement = ctx.expansion(node.func, node.span)
        functions = {**module.functions, owner: replace(module[owner], node, replacement)}
        functions.update(ctx.build_pending())
        module = infer(Module(functions, module.op_decls))  # unchanged globals keep their objects
    return module, made


def with_transform(module: Module, name: str, new_name: str, cotangent: bool) -> Module:
    """``module`` with ``@new_name`` = the expanded ``Grad(@name)`` (or its vjp)."""
    if new_name in module:
        raise ValueError(f"the module already has a global @{new_name}")
    module, made = _expanded(module, lower=True)  # differentiated below: its lowered operators expanded
    ctx = Context(module, made)
    fn = ctx.expansion(GlobalVar(name), module[name].span, cotangent=cotangent)
    fn = Function(fn.params, fn.body, fn.ret_type, module[name].type_params, span=fn.span)
    return infer(Module({**module.functions, **ctx.build_pending(), new_name: fn}, module.op_decls))
