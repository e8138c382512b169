"""Partial evaluation: the references and backpropagator closures that ``Grad`` writes disappear
where control flow is static.

Each global's body is run abstractly, in the evaluator's order, over *static* values (tuples,
closures with their environments, references created in the code being specialized, globals)
and *dynamic* ones (atoms of the residual program). What cannot be computed now is emitted as
a residual ``let``, in order, so effects keep their order:

- a call of a known closure or of a non-recursive global is inlined (its body run with the
  arguments' values; a polymorphic global's body as its instance at the call site: the
  environment carries the type arguments, ``typecheck.type_arguments``, which every type the
  residual code takes from that body is rewritten with); a recursive function stays a residual function, except that a
  loop (a let-bound recursive closure) entered with a constant scalar argument (a counter,
  possibly in a tuple) is *unrolled*, all or nothing: its calls are inlined, and if one is
  reached under a dynamic branch entered since, or past ``MAX_UNROLLED`` nested calls, the
  unrolling is undone (the residual code emitted and the static references written since
  are put back) and the loop stays a residual function. So a loop with static bounds
  becomes straight-line code (W4's 50 steps; what JAX does with a Python loop in ``jit``),
  and any other loop runs as a loop from its first step;
- an operator call on scalar constants is computed (``runtime.operators.run_op``), so a
  counter and the test on it stay static; a call that raises is left to raise at run time;
- a reference created here lives in a static store while its contents are known: ``!r`` is
  its contents, ``r := v`` replaces them, and nothing is emitted;
- ``if`` on a constant takes its branch; ``if`` on a dynamic condition is emitted with each
  branch specialized in a scope of its own.

A static value is *reified* when residual code needs it: a tuple becomes a tuple expression,
a closure a residual function, a reference a residual ``Ref`` holding its current contents.
A residual function or branch may run at any time, so before one is emitted every reference
still in the static store that it can reach (through its free variables, the closures and
tuples they hold, the contents of references) is reified ("materialized"): from then on its
reads and writes are residual. A dynamic call can only reach the references reachable from its arguments (those
are reified with the arguments) or captured by residual closures (already materialized).

On ``Grad``'s code with static control flow the whole backpropagator chain is inlined: the
result is straight-line code over operator calls, with dead zero adjoints left for
``eliminate_dead_code`` and ``zeros + g`` for ``simplify_algebra``. Where the pass meets what
it does not model (a reference cycle through a closure, a residual program past
``MAX_BINDINGS``) it leaves that global as it was.
"""

from __future__ import annotations

from typing import Any, Iterator

import attrs

from relayish.expr import (
    Ascribe, Call, Constant, Expr, Function, GlobalVar, If, Let, Op, Proj, RefNew, RefRead, RefWrite, Tuple,
    Var, Zero,
)  # fmt: skip
from relayish.errors import RelayRuntimeError
from relayish.graphs import strongly_connected
from relayish.module import Module
from relayish.ops.registry import lookup_op
from relayish.traverse import free_vars, post_order, trampoline
from runtime.operators import run_op

from .inline import polymorphic_call_sites
from .util import checks_sizes, compose_types, mentions_unknown_dim, retyped

MAX_BINDINGS = 200_000  # residual lets per global: inlining past this is not specialization any more
MAX_UNROLLED = 256  # nested inlined calls of one loop; past it the loop is a residual function


class _GiveUp(Exception):
    """This global is left as it was."""


class _Undo(Exception):
    """The unrolling of the loop ``loop`` (an ``id``) is undone."""

    def __init__(self, loop: int):
        super().__init__(loop)
        self.loop = loop


UNDONE = object()  # what ``unroll`` returns when it undid the unrolling


@attrs.define(eq=False)
class Dyn:
    """A value known only at run time: an atom (variable, constant, global) of the residual code."""

    atom: Expr


@attrs.define(eq=False)
class STuple:
    fields: tuple


@attrs.define(eq=False)
class SGlobal:
    name: str
    type_args: dict | None = None  # a polymorphic global's instantiation where it was named


@attrs.define(eq=False)
class SClosure:
    """A function literal and the environment it was created in."""

    fn: Function
    env: "Env"
    self_var: Var | None = None  # the let variable a recursive literal calls itself by


@attrs.define(eq=False)
class Cell:
    """A reference created in the code being specialized: contents known until materialized."""

    contents: Any
    residual: Var | None = None
    materializing: bool = False


@attrs.define(eq=False)
class SRef:
    cell: Cell


UNIT = STuple(())


class Env:
    """Variables' values; a closure keeps the scope it was created in. ``types`` instantiates
    the type parameters of the polymorphic global whose body runs in this scope."""

    __slots__ = ("values", "parent", "types")

    def __init__(self, parent: Env | None = None, types: dict | None = None):
        self.values: dict[int, Any] = {}
        self.parent = parent
        self.types: dict = types if types is not None else parent.types if parent is not None else {}

    def lookup(self, var: Var) -> Any:
        env: Env | None = self
        while env is not None:
            if id(var) in env.values:
                return env.values[id(var)]
            env = env.parent
        return Dyn(var)  # bound outside what is specialized


class Scope:
    """Residual bindings of one block (a function body, a branch)."""

    def __init__(self) -> None:
        self.bindings: list[tuple[Var, Expr]] = []

    def close(self, result: Expr) -> Expr:
        bindings = self.bindings
        if bindings and bindings[-1][0] is result and not isinstance(bindings[-1][1], Function):
            # `let t = f(x) in t` is `f(x)`: a tail call stays one (a function may call itself by its name)
            bindings, result = bindings[:-1], bindings[-1][1]
        if isinstance(result, Ascribe) and bindings and bindings[-1][0] is result.expr \
                and not isinstance(bindings[-1][1], Function):  # and `let t = f(x) in (T) t` is `(T) f(x)`
            bindings, result = bindings[:-1], Ascribe(bindings[-1][1], result.type, span=result.span)
        for var, value in reversed(bindings):
            result = Let(var, value, result)
        return result


def recursive_globals(module: Module) -> set[str]:
    """Globals on a cycle of the call graph."""
    calls = {name: sorted({n.name for n in post_order(fn) if isinstance(n, GlobalVar) and n.name in module})
             for name, fn in module.functions.items()}
    return {member for component in strongly_connected(calls, calls.__getitem__)
            if len(component) > 1 or component[0] in calls[component[0]] for member in component}


class Specializer:
    """Partially evaluates the globals of one module."""

    def __init__(self, module: Module):
        self.module = module
        self.recursive = recursive_globals(module)
        self.type_args = polymorphic_call_sites(module)  # id(global var) -> its instantiation
        self.unknown_dims = mentions_unknown_dim(module)  # else no ascription checks anything
        self.scopes: list[Scope] = []
        self.bindings = 0
        self.reified: dict[int, tuple[SClosure, Var, Scope]] = {}  # closures already residual functions (kept alive)
        self.dynamic = 0  # dynamic branches and residual function bodies being specialized, nested
        self.unrolling: dict[int, tuple[int, int]] = {}  # id(loop closure) -> (self.dynamic when entered, calls inlined)
        self.journal: list[tuple[Cell, Any, Var | None, bool]] = []  # cells as they were, while unrolling

    # residual code ------------------------------------------------------------------------
    def emit(self, value: Expr, hint: str = "t") -> Var:
        self.bindings += 1
        if self.bindings > MAX_BINDINGS:
            raise _GiveUp
        var = Var(hint)
        self.scopes[-1].bindings.append((var, value))
        return var

    def block(self, run: Iterator[Any]) -> Iterator[Any]:
        """Runs ``run`` (which returns a value) in a scope of its own; returns the block's expression."""
        scope = Scope()
        self.scopes.append(scope)
        try:
            value = yield run
            atom = yield self.reify(value)
        finally:
            self.scopes.pop()
        return scope.close(atom)

    def materialize_reachable(self, exprs: list[Expr], env: Env) -> Iterator[Any]:
        """Before code that may run later or more than once (a residual function or branch):
        every static reference that code can reach through its free variables becomes residual."""
        stack = [env.lookup(v) for e in exprs for v in free_vars(e)]
        seen: set[int] = set()
        while stack:
            value = stack.pop()
            if id(value) in seen:
                continue
            seen.add(id(value))
            if isinstance(value, STuple):
                stack.extend(value.fields)
            elif isinstance(value, SClosure):
                stack.extend(value.env.lookup(v) for v in free_vars(value.fn))
            elif isinstance(value, SRef) and value.cell.residual is None:
                stack.append(value.cell.contents)
                yield self.materialize(value.cell)

    def materialize(self, cell: Cell) -> Iterator[Any]:
        if cell.residual is not None:
            return cell.residual
        if cell.materializing:  # a closure stored in the reference it captures
            raise _GiveUp
        self.changing(cell)
        cell.materializing = True
        atom = yield self.reify(cell.contents)
        cell.residual = self.emit(RefNew(atom), "r")
        return cell.residual

    def reify(self, value: Any) -> Iterator[Any]:
        """An atom of the residual code holding ``value`` (or a tuple of such atoms)."""
        if isinstance(value, Dyn):
            return value.atom
        if isinstance(value, SGlobal):
            return GlobalVar(value.name)
        if isinstance(value, SRef):
            return (yield self.materialize(value.cell))
        if isinstance(value, STuple):
            fields = []
            for field in value.fields:
                fields.append((yield self.reify(field)))
            return Tuple(fields)  # of atoms: cheap to repeat, and the result reads as written
        return (yield self.residual_function(value))

    def residual_function(self, closure: SClosure) -> Iterator[Any]:
        known = self.reified.get(id(closure))
        if known is not None and any(s is known[2] for s in self.scopes):
            return known[1]
        yield self.materialize_reachable([closure.fn], closure.env)
        self.dynamic += 1
        try:
            return (yield self.emit_function(closure))
        finally:
            self.dynamic -= 1

    def emit_function(self, closure: SClosure) -> Iterator[Any]:
        fn = closure.fn
        types = closure.env.types
        params = [Var(p.name_hint, retyped(p.type_annotation, types), span=p.span) for p in fn.params]
        env = Env(closure.env)
        env.values.update((id(p), Dyn(q)) for p, q in zip(fn.params, params))
        name = Var(closure.self_var.name_hint if closure.self_var else "fn")
        if closure.self_var is not None:
            env.values[id(closure.self_var)] = Dyn(name)
        self.reified[id(closure)] = (closure, name, self.scopes[-1])
        body = yield self.block(self.eval(fn.body, env))
        residual = Function(params, body, retyped(fn.ret_type, types), fn.type_params, span=fn.span)
        self.scopes[-1].bindings.append((name, residual))
        return name

    # evaluation -----------------------------------------------------------------------------
    def eval(self, e: Expr, env: Env, hint: str = "t") -> Iterator[Any]:
        while isinstance(e, Let):
            if isinstance(e.value, Function) and any(v is e.var for v in free_vars(e.value)):
                env.values[id(e.var)] = SClosure(e.value, env, e.var)  # a loop: unrolled or residual where called
            else:
                env.values[id(e.var)] = yield self.eval(e.value, env, e.var.name_hint)
            e = e.body
        if isinstance(e, Var):
            return env.lookup(e)
        if isinstance(e, (Constant, Op)):
            return Dyn(e)
        if isinstance(e, GlobalVar):
            found = self.type_args.get(id(e))
            return SGlobal(e.name, None if found is None else compose_types(found, env.types))
        if isinstance(e, Function):
            return SClosure(e, env)
        if isinstance(e, Tuple):
            fields = []
            for field in e.fields:
                fields.append((yield self.eval(field, env)))
            return STuple(tuple(fields))
        if isinstance(e, Proj):
            value = yield self.eval(e.tuple_value, env)
            if isinstance(value, STuple):
                return value.fields[e.index]
            return Dyn(self.emit(Proj((yield self.reify(value)), e.index, span=e.span), hint))
        if isinstance(e, Ascribe):
            value = yield self.eval(e.expr, env, hint)
            if not (self.unknown_dims and checks_sizes(e, lambda x: x.type_annotation if isinstance(x, Var) else None)):
                return value
            checked = Ascribe((yield self.reify(value)), retyped(e.type, env.types), span=e.span)
            return Dyn(self.emit(checked, hint))  # a size check of a ? dimension stays
        if isinstance(e, Zero):
            return Dyn(self.emit(Zero(retyped(e.type, env.types), span=e.span) if env.types else e, hint))
        if isinstance(e, If):
            return (yield self.branch(e, env, hint))
        if isinstance(e, Call):
            return (yield self.call(e, env, hint))
        if isinstance(e, RefNew):
            return SRef(Cell((yield self.eval(e.value, env))))
        if isinstance(e, RefRead):
            ref = yield self.eval(e.ref, env)
            if isinstance(ref, SRef) and ref.cell.residual is None:
                return ref.cell.contents
            return Dyn(self.emit(RefRead((yield self.reify(ref)), span=e.span), hint))
        if isinstance(e, RefWrite):
            ref = yield self.eval(e.ref, env)
            value = yield self.eval(e.value, env)
            if isinstance(ref, SRef) and ref.cell.residual is None:
                self.changing(ref.cell)
                ref.cell.contents = value
            else:
                target = yield self.reify(ref)
                self.emit(RefWrite(target, (yield self.reify(value)), span=e.span), "u")
            return UNIT
        raise _GiveUp  # Grad (expanded before optimizing) and anything else not modelled

    def branch(self, e: If, env: Env, hint: str) -> Iterator[Any]:
        cond = yield self.eval(e.cond, env)
        if isinstance(cond, Dyn) and isinstance(cond.atom, Constant):
            return (yield self.eval(e.then_branch if bool(cond.atom.value) else e.else_branch, env, hint))
        atom = yield self.reify(cond)
        yield self.materialize_reachable([e.then_branch, e.else_branch], env)
        self.dynamic += 1
        try:
            then = yield self.block(self.eval(e.then_branch, env))
            other = yield self.block(self.eval(e.else_branch, env))
        finally:
            self.dynamic -= 1
        return Dyn(self.emit(If(atom, then, other, span=e.span), hint))

    def call(self, e: Call, env: Env, hint: str) -> Iterator[Any]:
        args = []
        for arg in e.args:
            args.append((yield self.eval(arg, env)))
        if isinstance(e.callee, Op):
            folded = scalar_constant(e, args)
            if folded is not None:
                return folded
            atoms = []
            for arg in args:
                atoms.append((yield self.reify(arg)))
            return Dyn(self.emit(Call(e.callee, atoms, e.attrs, span=e.span), hint))
        callee = yield self.eval(e.callee, env)
        if isinstance(callee, SClosure) and callee.self_var is None:
            return (yield self.inline(callee.fn, Env(callee.env), args, hint))
        if isinstance(callee, SClosure) and self.unrolls(callee, args):
            value = yield self.unroll(callee, args, hint)
            if value is not UNDONE:
                return value
        if isinstance(callee, SGlobal) and callee.name not in self.recursive:
            fn = self.module[callee.name]
            types = instance_types(fn, callee.type_args)
            if types is not None:
                return (yield self.inline(fn, Env(types=types), args, hint))
        target = yield self.reify(callee)
        atoms = []
        for arg in args:
            atoms.append((yield self.reify(arg)))
        return Dyn(self.emit(Call(target, atoms, span=e.span), hint))

    def unrolls(self, loop: SClosure, args: list) -> bool:
        """Whether this call of a loop is inlined (see the module docstring); raises ``_Undo``
        where the unrolling it continues has to be undone."""
        entered = self.unrolling.get(id(loop))
        if entered is None:
            return any(map(holds_scalar_constant, args))
        dynamic, calls = entered
        if dynamic != self.dynamic or calls >= MAX_UNROLLED:
            raise _Undo(id(loop))
        return True

    def unroll(self, loop: SClosure, args: list, hint: str) -> Iterator[Any]:
        """The loop's call inlined, or UNDONE where the unrolling it starts was undone."""
        key = id(loop)
        if key in self.unrolling:
            dynamic, calls = self.unrolling[key]
            self.unrolling[key] = (dynamic, calls + 1)
            return (yield self.inline(loop.fn, Env(loop.env), args, hint))
        saved = (self.bindings, [(s, len(s.bindings)) for s in self.scopes], dict(self.reified), len(self.journal))
        self.unrolling[key] = (self.dynamic, 1)
        try:
            return (yield self.inline(loop.fn, Env(loop.env), args, hint))
        except _Undo as undo:
            if undo.loop != key:
                raise
            self.restore(*saved)
            return UNDONE
        finally:
            del self.unrolling[key]
            if not self.unrolling:
                self.journal.clear()

    def changing(self, cell: Cell) -> None:
        """Before a static reference changes: how it was, for an unrolling that may be undone."""
        if self.unrolling:
            self.journal.append((cell, cell.contents, cell.residual, cell.materializing))

    def restore(self, bindings: int, scopes: list[tuple[Scope, int]], reified: dict, journal: int) -> None:
        """The residual code and the static references as they were (``unroll``)."""
        self.bindings, self.reified = bindings, reified
        for scope, length in scopes:
            del scope.bindings[length:]
        while len(self.journal) > journal:
            cell, cell.contents, cell.residual, cell.materializing = self.journal.pop()

    def inline(self, fn: Function, env: Env, args: list, hint: str) -> Iterator[Any]:
        env.values.update((id(p), a) for p, a in zip(fn.params, args))
        return (yield self.eval(fn.body, env, hint))

    def specialize(self, fn: Function) -> Function:
        self.scopes, self.bindings, self.reified, self.dynamic, self.unrolling, self.journal = [], 0, {}, 0, {}, []
        params = [Var(p.name_hint, p.type_annotation, span=p.span) for p in fn.params]
        env = Env()
        env.values.update((id(p), Dyn(q)) for p, q in zip(fn.params, params))
        body = trampoline(self.block(self.eval(fn.body, env)))
        return Function(params, body, fn.ret_type, fn.type_params, span=fn.span)


def instance_types(fn: Function, type_args: dict | None) -> dict | None:
    """The type arguments ``fn``'s body runs with (none for a monomorphic ``fn``), or None
    where the call site leaves one undetermined (the call stays)."""
    if not fn.type_params:
        return {}
    if type_args is None or any(tv not in type_args for tv in fn.type_params):
        return None
    return type_args


def holds_scalar_constant(value: Any) -> bool:
    """A scalar constant, or a tuple holding one (``Grad`` pairs values with their adjoints)."""
    stack = [value]
    while stack:
        value = stack.pop()
        if isinstance(value, STuple):
            stack.extend(value.fields)
        elif isinstance(value, Dyn) and isinstance(value.atom, Constant) and value.atom.value.ndim == 0:
            return True
    return False


def scalar_constant(e: Call, args: list) -> Dyn | None:
    """The constant an operator computes from scalar constants (None if it raises)."""
    if not args or not all(isinstance(a, Dyn) and isinstance(a.atom, Constant) and a.atom.value.ndim == 0
                            for a in args):
        return None
    op = lookup_op(e.callee.name)
    if op is None:
        return None
    try:
        value = run_op(op, e.callee.name, [a.atom.value for a in args], e.attrs, e.span, "")
    except (RelayRuntimeError, TypeError):  # raises at run time, or a dtype no constant can hold
        return None
    return Dyn(Constant(value, span=e.span)) if value.ndim == 0 else None


def partially_evaluate(module: Module) -> Module:
    """``module`` with each global's static references, closures and calls evaluated away
    (a global the pass cannot specialize is kept as it was)."""
    specializer = Specializer(module)
    functions = {}
    for name, fn in module.functions.items():
        try:
            functions[name] = specializer.specialize(fn)
        except _GiveUp:
            functions[name] = fn
    return module.with_functions(functions)
