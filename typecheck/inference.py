"""Type inference for modules (the Relay paper's Figure 6, extended per docs/design.md).

Annotated globals (every parameter and the result) have their declared type from the
start; unannotated ones are inferred after the globals they call. Unannotated globals that
call each other (a recursive global, a mutually recursive group) are inferred together:
each member's type is one unknown while the group's bodies are checked, as Hindley-Milner
checks a recursive binding (monomorphic within the group, as Relay is).
Operator calls are solved by the operator's type relation once its argument types are
known, re-run until nothing changes (the way Relay solves shapes). Errors carry the span
of the user's construct; independent errors in several globals are all reported.
"""

from __future__ import annotations

import warnings
import weakref
from typing import Any, Iterator

from relayish.dims import Dim, as_dim, dim_text
from relayish.errors import KindError, NonExhaustiveMatch, RelayError, RelayTypeError
from relayish.expr import (
    Ascribe, Call, Constant, Construct, Expr, Function, GlobalVar, Grad, If, IsCtor, Jvp, Let, Match, Op, Vmap,
    Pattern, PatternCtor, PatternTuple, PatternVar, Proj, RefNew, RefRead, RefWrite, Tuple, Unpack, Var, Zero,
)  # fmt: skip
from relayish.graphs import strongly_connected
from relayish.module import Module, RelationDecl
from relayish.ops.user import RELATIONS
from relayish.ops.registry import lookup_op
from relayish.traverse import ExprMutator, bound_vars, post_order, trampoline, with_children
from relayish.types import (
    UNIT, BoolType, DataType, FloatType, ForallType, FuncType, Kind, RefType, Shape, TensorType,
    TupleType, Type, TypeVar, has_unknown_dim, mapped_type,
)  # fmt: skip

from .kinds import check_type, interface_kind_errors
from .patterns import missing_case
from .solver import Hole, Mismatch, Solver, substitute

BOOL_SCALAR = TensorType(BoolType(), Shape())


def declared_type(fn: Function) -> Type | None:
    """The type a fully annotated function declares, or None if anything is missing."""
    if fn.ret_type is None or any(p.type_annotation is None for p in fn.params):
        return None
    ty = FuncType([p.type_annotation for p in fn.params], fn.ret_type)
    return ForallType(fn.type_params, ty) if fn.type_params else ty


class FunctionChecker:
    """Infers the types inside one global function."""

    def __init__(self, module: Module, global_types: dict[str, Type], record: bool = False):
        self.module = module
        self.global_types = global_types
        self.solver = Solver()
        self.node_types: dict[int, Type] = {}  # id(expr) -> type, when recording (expr_types)
        self.type_args: dict[int, dict[TypeVar, Any]] = {}  # id(global var) -> its instantiation (type_arguments)
        if record:
            self.infer = self.infer_recorded  # type: ignore[method-assign]
        self.types: dict[int, Type] = {}  # id(var or function) -> type, for the annotations
        self.env: dict[int, Type] = {}  # id(var) -> type
        self.scope: set[TypeVar] = set()
        self.relations: list[tuple[Call, Any, list[Type], Hole]] = []
        self.projections: list[tuple[Proj, Type, Hole]] = []  # waiting for their tuple's type
        self.grads: list[tuple[Grad, Type]] = []  # Grad result types still to check
        # where a value flows into a place of a declared type: (parent, child index, expected, actual),
        # for the run-time checks of ``?`` dimensions (``dynamic_checks``)
        self.flows: list[tuple[Expr, int, Type, Type]] = []
        self.matches: list[tuple[Match, Type]] = []  # with their scrutinee's type: checked for missing cases
        self.keep_alive: list[Expr] = []

    # errors ---------------------------------------------------------------------------
    def fail(self, node: Expr, message: str, parent: Expr | None = None) -> RelayTypeError:
        """An error at ``node``; a variable's span is its binding, so uses report at ``parent``."""
        site = parent if isinstance(node, Var) and parent is not None else node
        return RelayTypeError(message, site.span)

    def unify(self, node: Expr, construct: str, expected: Type, actual: Type, parent: Expr | None = None) -> None:
        if isinstance(self.solver.shallow(actual), ForallType) and isinstance(self.solver.shallow(expected), FuncType):
            actual = self.solver.instantiate(actual)  # a polymorphic function used at one type: `(b) -> b` as `(T) -> T`
        try:
            self.solver.unify(expected, actual)
        except Mismatch as err:
            r = self.solver.resolve
            raise self.fail(node, f"{construct}: expected {r(expected)}, found {r(actual)} ({err.detail})", parent) from None
        except RelayError as err:  # a dimension past the limits of relayish.dims
            raise self.fail(node, f"{construct}: {err.message}", parent) from None

    def check_annotation(self, ty: Type, node: Expr, what: str) -> None:
        try:
            check_type(ty, self.scope, node.span, what, self.module.type_defs)
        except KindError as err:
            raise KindError(err.message, node.span) from None

    # entry ----------------------------------------------------------------------------
    def check(self, fn: Function, expected: Type | None) -> Type:
        ty = trampoline(self.infer(fn))
        if expected is not None:
            self.unify(fn, "the definition", expected, ty)
        self.settle()
        self.default_unconstrained([ty])
        return self.solver.resolve(ty)

    def check_group(self, fns: list[Function], unknowns: list[Hole]) -> list[Type]:
        """Globals that call each other, each with ``unknowns[i]`` as its type meanwhile."""
        types = []
        for fn, unknown in zip(fns, unknowns):
            ty = trampoline(self.infer(fn))
            self.unify(fn, "the definition (as its recursive calls use it)", unknown, ty)
            types.append(ty)
        self.settle()
        self.default_unconstrained(types)
        return [self.solver.resolve(ty) for ty in types]

    def default_unconstrained(self, interface: list[Type]) -> None:
        """Bind to ``()`` every hole of kind Type that nothing constrained once the group is solved
        (the element type of a list that is only ever empty, the parameter of a function never
        called): any type is correct there, and a concrete one lets the typed program print,
        parse back and compile. Holes in ``interface`` (the types of the globals being checked)
        are left for the caller's "cannot infer the type of @f" error: defaulting them would fix
        a global's type that its callers may need otherwise."""
        keep = set()
        stack = list(interface)
        while stack:
            ty = self.solver.shallow(stack.pop())
            if isinstance(ty, Hole):
                keep.add(ty)
            elif not isinstance(ty, (TypeVar, Shape)):
                stack.extend(item for item in ty._items() if isinstance(item, Type))
        stack = list(self.types.values())
        while stack:
            ty = self.solver.shallow(stack.pop())
            if isinstance(ty, Hole):
                if ty.kind is Kind.TYPE and ty not in keep:
                    self.solver.bind(ty, UNIT)
            elif not isinstance(ty, (TypeVar, Shape)):
                stack.extend(item for item in ty._items() if isinstance(item, Type))

    def settle(self) -> None:
        """Run postponed relations and dimension equations until nothing changes."""
        progress = True
        while progress:
            try:
                progress = self.solver.retry_pending()
            except Mismatch as err:
                raise RelayTypeError(f"shapes do not agree: {err.detail}") from None
            waiting, self.relations = self.relations, []
            for entry in waiting:
                progress |= self.run_relation(*entry)
            progress |= self.run_projections()
            progress |= self.check_grads(final=False)
        if self.relations:
            call = self.relations[0][0]
            args = ", ".join(str(self.solver.resolve(t)) for t in self.relations[0][2])
            raise self.fail(call, f"cannot infer the types of the arguments of @{call.callee.name} ({args}): annotate the parameters they come from")
        self.check_grads(final=True)
        if self.projections:
            e, ty, _ = self.projections[0]
            raise self.fail(e, f"projection [{e.index}]: cannot infer the type of the tuple ({self.solver.resolve(ty)}): "
                               "annotate the parameter it comes from")
        if self.solver.pending_dims:
            a, b, where = self.solver.pending_dims[0]
            raise RelayTypeError(f"cannot show that {where} is equal: {a} vs {b}")

    def run_relation(self, call: Call, relation: Any, args: list[Type], result: Hole) -> bool:
        resolved = [self.solver.resolve(t) for t in args]
        if any(self.solver.holes_in(t) for t in resolved):
            self.relations.append((call, relation, args, result))
            return False
        try:
            out = relation(resolved, self.op_attrs(call))
        except RelayError as err:  # a type error, or a dimension past the limits of relayish.dims
            raise self.fail(call, f"@{call.callee.name}: {err.message}") from None
        self.unify(call, f"the result of @{call.callee.name}", result, out)
        return True

    @staticmethod
    def op_attrs(call: Call) -> dict[str, Any]:
        op = lookup_op(call.callee.name)
        return op.full_attrs(call.attrs) if op is not None else dict(call.attrs)

    # expressions ------------------------------------------------------------------------
    def infer_recorded(self, e: Expr) -> Iterator[Any]:
        ty = yield FunctionChecker.infer(self, e)
        self.node_types[id(e)] = ty
        return ty

    def infer(self, e: Expr) -> Iterator[Any]:
        if isinstance(e, Var):
            if id(e) not in self.env:
                raise self.fail(e, f"unbound variable %{e.name_hint}")
            return self.env[id(e)]
        if isinstance(e, GlobalVar):
            if e.name not in self.global_types:
                if e.name in self.module.functions:
                    raise self.fail(e, f"the type of @{e.name} is not known: checking it failed (its own error says why)")
                raise self.fail(e, f"unknown global @{e.name}")
            ty = self.global_types[e.name]
            if not isinstance(ty, ForallType):
                return ty
            mapping = {tv: Hole.fresh(tv.kind) for tv in ty.params}
            self.type_args[id(e)] = mapping
            return substitute(ty.body, mapping)
        if isinstance(e, Constant):
            return TensorType(e.dtype, Shape(*e.value.shape))
        if isinstance(e, Tuple):
            fields = []
            for f in e.fields:
                fields.append((yield self.infer(f)))
            return TupleType(fields)
        if isinstance(e, Proj):
            return (yield self.proj(e))
        if isinstance(e, Let):
            return (yield self.let_chain(e))
        if isinstance(e, If):
            cond = yield self.infer(e.cond)
            self.unify(e.cond, "the condition of if", BOOL_SCALAR, cond, e)
            then_type = yield self.infer(e.then_branch)
            else_type = yield self.infer(e.else_branch)
            joined = self.joined(then_type, else_type)
            self.unify(e.else_branch, "the else branch (it must have the type of the then branch)", joined, else_type, e)
            self.flows += [(e, 1, joined, then_type), (e, 2, joined, else_type)]
            return joined
        if isinstance(e, Call):
            return (yield self.call(e))
        if isinstance(e, Function):
            return (yield self.function(e))
        if isinstance(e, Ascribe):
            self.check_annotation(e.type, e, "ascribed type")
            actual = yield self.infer(e.expr)
            self.unify(e, "the ascription", e.type, actual)
            return e.type
        if isinstance(e, Zero):
            self.check_annotation(e.type, e, "type of Zero")
            self.check_zeroable(e)
            return e.type
        if isinstance(e, (Grad, Jvp)):
            return (yield self.transformed(e))
        if isinstance(e, Vmap):
            return (yield self.vmapped(e))
        if isinstance(e, RefNew):
            return RefType((yield self.infer(e.value)))
        if isinstance(e, RefRead):
            content = Hole.fresh()
            self.unify(e, "the operand of !", RefType(content), (yield self.infer(e.ref)))
            return content
        if isinstance(e, RefWrite):
            ref = yield self.infer(e.ref)
            value = yield self.infer(e.value)
            self.unify(e, "the reference written by :=", RefType(value), ref)
            self.flows.append((e, 1, ref, value))  # the expected type is the reference's content's
            return UNIT
        if isinstance(e, Construct):
            fields, result = self.constructor(e, e.ctor, len(e.fields))
            for i, (field, node) in enumerate(zip(fields, e.fields)):
                actual = yield self.infer(node)
                self.unify(node, f"field {i + 1} of {e.ctor}", field, actual, e)
                self.flows.append((e, i, field, actual))
            return result
        if isinstance(e, (IsCtor, Unpack)):
            fields, data = self.constructor(e, e.ctor, None)
            self.unify(e, f"the operand of {type(e).__name__}[{e.ctor}]", data, (yield self.infer(e.value)))
            return BOOL_SCALAR if isinstance(e, IsCtor) else TupleType(fields)
        if isinstance(e, Match):
            return (yield self.match(e))
        raise self.fail(e, f"{type(e).__name__} cannot appear here")

    def constructor(self, node: Any, name: str, arity: int | None) -> tuple[list[Type], DataType]:
        """A fresh instance of constructor ``name``: its field types and its data type (the
        type's parameters new unknowns). ``arity``: the number of fields written, if any."""
        found = self.module.ctor(name)
        if found is None:
            known = ", ".join(c.name for td in self.module.type_defs.values() for c in td.ctors) or "none"
            raise RelayTypeError(f"unknown constructor {name} (the module's constructors: {known})", node.span)
        definition, index = found
        ctor = definition.ctors[index]
        if arity is not None and arity != len(ctor.fields):
            count = len(ctor.fields)
            raise RelayTypeError(f"{name} takes {count} field{'s' * (count != 1)}, not {arity} "
                                 f"(type {definition.name}: {name}({', '.join(map(str, ctor.fields))}))", node.span)
        mapping = {tv: Hole.fresh(tv.kind) for tv in definition.params}
        return [substitute(f, mapping) for f in ctor.fields], DataType(definition.name, [mapping[tv] for tv in definition.params])

    def match(self, e: Match) -> Iterator[Any]:
        scrutinee = yield self.infer(e.value)
        result: Type | None = None
        first_body = 1 + len(e.bound())  # the index of the first body among the match's children
        for k, (pattern, body) in enumerate(zip(e.patterns, e.bodies)):
            self.bind_pattern(pattern, scrutinee, e)
            ty = yield self.infer(body)
            if result is None:
                result = ty
            else:
                self.unify(body, f"clause {k + 1} of the match (it must have the type of the first)", result, ty, e)
                self.flows.append((e, first_body + k, result, ty))
        self.matches.append((e, scrutinee))
        return result

    def bind_pattern(self, pattern: Pattern, ty: Type, e: Match) -> None:
        """Give the variables of ``pattern``, matched against a value of type ``ty``, their types."""
        stack = [(pattern, ty)]
        while stack:
            p, t = stack.pop()
            site = p if p.span is not None else e
            if isinstance(p, PatternVar):
                self.env[id(p.var)] = self.types[id(p.var)] = t
                self.keep_alive.append(p.var)
            elif isinstance(p, PatternCtor):
                fields, data = self.constructor(site, p.ctor, len(p.patterns))
                self.unify(e, f"the pattern {p.ctor}(...)", data, t)
                stack.extend(zip(p.patterns, fields))
            elif isinstance(p, PatternTuple):
                fields = [Hole.fresh() for _ in p.patterns]
                self.unify(e, f"a tuple pattern of {len(fields)} fields", TupleType(fields), t)
                stack.extend(zip(p.patterns, fields))

    def warn_missing_cases(self) -> None:
        """A warning per match that some value of its scrutinee's type falls through (at run time,
        an error), naming one such value."""
        for e, ty in self.matches:
            case = missing_case(list(e.patterns), self.solver.resolve(ty), self.module.type_defs)
            if case is not None:
                where = f"{e.span.file}:{e.span.line}:{e.span.col}: " if e.span is not None else ""
                warnings.warn(NonExhaustiveMatch(f"{where}this match has no clause for {case}"), stacklevel=2)

    def joined(self, a: Type, b: Type) -> Type:
        """The type of an ``if`` with branches of types ``a`` and ``b``: ``a``, except that where one
        branch's tensor has ``?`` and the other's a known size, ``?`` (so neither needs a check)."""
        ra, rb = self.solver.resolve(a), self.solver.resolve(b)
        if not (has_unknown_dim(ra) or has_unknown_dim(rb)):
            return a
        return trampoline(_join(ra, rb))

    def proj(self, e: Proj) -> Iterator[Any]:
        ty = yield self.infer(e.tuple_value)
        if isinstance(self.solver.shallow(ty), Hole):  # not known yet (an unannotated parameter):
            result = Hole.fresh()  # decided once the tuple's type is, like a relation
            self.projections.append((e, ty, result))
            return result
        return self.project(e, ty)

    def project(self, e: Proj, ty: Type) -> Type:
        ty = self.solver.shallow(ty)
        if not isinstance(ty, TupleType):
            raise self.fail(e, f"projection [{e.index}]: expected a tuple, found {self.solver.resolve(ty)}")
        if e.index >= len(ty.fields):
            raise self.fail(e, f"projection [{e.index}]: the tuple has {len(ty.fields)} fields {self.solver.resolve(ty)}")
        return ty.fields[e.index]

    def run_projections(self) -> bool:
        waiting, self.projections = self.projections, []
        progress = False
        for e, ty, result in waiting:
            if isinstance(self.solver.shallow(ty), Hole):
                self.projections.append((e, ty, result))
            else:
                self.unify(e, f"projection [{e.index}]", result, self.project(e, ty))
                progress = True
        return progress

    def let_chain(self, e: Let) -> Iterator[Any]:
        while isinstance(e, Let):  # one frame for a whole chain
            var = e.var
            if var.type_annotation is not None:
                self.check_annotation(var.type_annotation, var, f"annotation of %{var.name_hint}")
            declared = var.type_annotation or Hole.fresh()
            if isinstance(e.value, Function):  # recursive: the function may call itself,
                # with the type its literal declares (so a recursive call's result is known)
                if var.type_annotation is None:
                    declared = declared_type(e.value) or declared
                self.env[id(var)] = declared
            value = yield self.infer(e.value)
            self.unify(e, f"the value bound to %{var.name_hint}", declared, value)
            self.flows.append((e, 1, declared, value))
            self.env[id(var)] = declared if var.type_annotation is not None else value
            self.types[id(var)] = self.env[id(var)]
            self.keep_alive.append(var)
            e = e.body
        return (yield self.infer(e))

    def call(self, e: Call) -> Iterator[Any]:
        args = []
        for a in e.args:
            args.append((yield self.infer(a)))
        callee = e.callee
        if isinstance(callee, Op):
            op = lookup_op(callee.name)
            if op is not None:
                expected = op.check_arity(len(args))
                if expected is not None:
                    raise self.fail(e, f"@{callee.name} takes {expected}, not {len(args)}")
                result = Hole.fresh()
                self.run_relation(e, op.type_relation, args, result)
                return result
            if callee.name not in self.module.op_decls:
                raise self.fail(callee, f"unknown operator @{callee.name}")
            declared = self.module.op_decls[callee.name]
            if isinstance(declared, RelationDecl):
                relation, arity = RELATIONS[declared.relation]
                if len(args) != arity:
                    raise self.fail(e, f"@{callee.name} takes {arity} argument{'s' * (arity != 1)}, not {len(args)}")
                result = Hole.fresh()
                self.run_relation(e, relation, args, result)
                return result
            fn_type = self.solver.instantiate(declared)
        else:
            fn_type = self.solver.instantiate(self.solver.shallow((yield self.infer(callee))))
        fn_type = self.solver.shallow(fn_type)
        if isinstance(fn_type, Hole):
            result = Hole.fresh()
            self.unify(e, "the callee", fn_type, FuncType(args, result))
            return result
        if not isinstance(fn_type, FuncType):
            raise self.fail(e, f"call: expected a function, found {self.solver.resolve(fn_type)}")
        if len(fn_type.params) != len(args):
            count = len(fn_type.params)
            raise self.fail(e, f"call: the function takes {count} argument{'s' * (count != 1)}, not {len(args)} ({self.solver.resolve(fn_type)})")
        for i, (param, arg_node, arg) in enumerate(zip(fn_type.params, e.args, args)):
            self.unify(arg_node, f"argument {i + 1} of the call", param, arg, e)
            self.flows.append((e, i + 1, param, arg))
        try:  # what the arguments decided, put in now: a division by zero is an error here
            return self.solver.resolve(fn_type.ret)
        except RelayError as err:  # or a dimension past the limits of relayish.dims
            raise self.fail(e, f"the result of the call: {err.message}") from None

    def function(self, fn: Function) -> Iterator[Any]:
        added = set(fn.type_params) - self.scope
        self.scope |= added
        try:
            params = []
            for p in fn.params:
                if p.type_annotation is not None:
                    self.check_annotation(p.type_annotation, p, f"annotation of parameter %{p.name_hint}")
                ty = p.type_annotation or Hole.fresh()
                self.env[id(p)] = self.types[id(p)] = ty
                self.keep_alive.append(p)
                params.append(ty)
            if fn.ret_type is not None:
                self.check_annotation(fn.ret_type, fn, "return type")
            body = yield self.infer(fn.body)
            ret = fn.ret_type or body
            self.unify(fn.body, "the function body (it must have the return type)", ret, body, fn)
            self.flows.append((fn, len(fn.params), ret, body))
        finally:
            self.scope -= added
        self.types[id(fn)] = ret
        self.keep_alive.append(fn)
        ty = FuncType(params, ret)
        return ForallType(fn.type_params, ty) if fn.type_params else ty

    def transformed(self, e: Grad | Jvp) -> Iterator[Any]:
        """``Grad(f)``: ``(params) -> (ret, (params))``; ``Jvp(f)``: ``(params, tangents) -> (ret, ret)``,
        a tangent of each parameter's type."""
        node = type(e).__name__
        ty = self.solver.resolve((yield self.infer(e.func)))
        if isinstance(ty, ForallType):
            raise self.fail(e, f"{node} needs a function of one concrete type, not the polymorphic {ty}: call it through a monomorphic wrapper")
        if not isinstance(ty, FuncType):
            raise self.fail(e, f"{node}: expected a function, found {ty}")
        if isinstance(e, Jvp):
            return FuncType([*ty.params, *ty.params], TupleType([ty.ret, ty.ret]))
        self.grads.append((e, ty.ret))  # checked once known (a lambda's result may not be yet)
        return FuncType(ty.params, TupleType([ty.ret, TupleType(ty.params)]))

    def vmapped(self, e: Vmap) -> Iterator[Any]:
        """``Vmap(f, in_axes)``: ``f``'s type with a batch dimension (a fresh ``Dim``, found from the
        arguments) inserted at each mapped parameter's axis and at the front of the result."""
        ty = self.solver.resolve((yield self.infer(e.func)))
        if not isinstance(ty, FuncType):
            raise self.fail(e, f"Vmap: expected a function of one concrete type, found {ty}")
        for axis, param in zip(e.in_axes, ty.params):
            if axis is not None and self.solver.holes_in(param):
                raise self.fail(e, f"Vmap: a mapped parameter's type is not known ({param}): annotate it")
        try:
            return mapped_type(list(ty.params), ty.ret, e.in_axes, Dim.atom(Hole.fresh(Kind.DIM)))
        except ValueError as err:
            raise self.fail(e, f"Vmap: {err}") from None

    def check_grads(self, final: bool) -> bool:
        """The function of each Grad returns a floating-point scalar (when its type is known)."""
        waiting, self.grads = self.grads, []
        for e, ret in waiting:
            ret = self.solver.resolve(ret)
            if self.solver.holes_in(ret) and not final:
                self.grads.append((e, ret))
                continue
            if not (isinstance(ret, TensorType) and isinstance(ret.dtype, FloatType) and ret.shape == Shape()):
                raise self.fail(e, f"Grad: the function must return a floating-point scalar, but it returns {ret}")
        return len(self.grads) < len(waiting)

    def check_zeroable(self, e: Zero) -> None:
        stack = [e.type]
        while stack:
            t = stack.pop()
            if isinstance(t, TupleType):
                stack.extend(t.fields)
            elif not isinstance(t, TensorType):
                raise self.fail(e, f"Zero: expected a tensor type or a tuple of them, found {t}")
            elif has_unknown_dim(t):
                raise self.fail(e, f"Zero of {t}: a ? dimension has no size to make zeros of (zeros_like of a value has)")

    def dynamic_checks(self) -> dict[int, list[tuple[int, Type]]]:
        """Where a value whose type has ``?`` flows into a place that expects a known dimension
        there: by ``id`` of the parent expression, the child's index and the type to check it
        against at run time (as an ``Ascribe``). Inside a function type such a meeting cannot be
        checked where it happens, so it is a type error unless it is safe: a function returning a
        known size where ``?`` is expected, or taking ``?`` where a known size will be passed.
        A reference's content is not checked (docs/design.md, "Dynamic dimensions", says why)."""
        checks: dict[int, list[tuple[int, Type]]] = {}
        if not self.solver.met_unknown:
            return checks
        for parent, index, expected, actual in self.flows:
            expected, actual = self.solver.resolve(expected), self.solver.resolve(actual)
            if isinstance(parent, RefWrite):
                expected = expected.value if isinstance(expected, RefType) else actual
            if _needs_check(expected, actual, parent, self.fail):
                checks.setdefault(id(parent), []).append((index, expected))
        return checks


def _join(a: Type, b: Type) -> Iterator[Any]:
    """``a`` with ``?`` wherever its tensors or ``b``'s have ``?`` (``FunctionChecker.joined``)."""
    if isinstance(a, TensorType) and isinstance(b, TensorType) and isinstance(a.shape, Shape) \
            and isinstance(b.shape, Shape) and a.shape.rank == b.shape.rank:
        dims = [Dim.unknown() if x.is_unknown or y.is_unknown else x for x, y in zip(a.shape.dims, b.shape.dims)]
        return TensorType(a.dtype, Shape(*dims))
    if isinstance(a, TupleType) and isinstance(b, TupleType) and len(a.fields) == len(b.fields):
        fields = []
        for x, y in zip(a.fields, b.fields):
            fields.append((yield _join(x, y)))
        return TupleType(fields)
    return a


def _needs_check(expected: Type, actual: Type, site: Expr, fail: Any) -> bool:
    """Whether ``actual`` has ``?`` where ``expected`` has a known dimension, outside function
    and reference types; raises where such a meeting inside a function type is unsafe
    (``dynamic_checks``)."""
    needed = False
    stack: list[tuple[Type, Type, str]] = [(expected, actual, "value")]
    while stack:
        exp, act, place = stack.pop()
        if isinstance(exp, TensorType) and isinstance(act, TensorType):
            if not (isinstance(exp.shape, Shape) and isinstance(act.shape, Shape)):
                continue
            for i, (de, da) in enumerate(zip(exp.shape.dims, act.shape.dims)):
                if de.is_unknown == da.is_unknown:
                    continue
                unsafe = {"value": False, "result": da.is_unknown, "parameter": de.is_unknown}[place]
                if place == "value" and da.is_unknown:
                    needed = True
                elif unsafe:
                    raise fail(site, f"{exp} and {act} meet in a function's {place} (dimension {i}: {dim_text(de)} vs "
                                     f"{dim_text(da)}): a ? dimension there cannot be checked where the function is "
                                     "passed; ascribe the known size inside the function instead")
        elif isinstance(exp, TupleType) and isinstance(act, TupleType):
            stack.extend((e, a, place) for e, a in zip(exp.fields, act.fields))
        elif isinstance(exp, FuncType) and isinstance(act, FuncType):
            flipped = "result" if place == "parameter" else "parameter"
            stack.append((exp.ret, act.ret, "result" if place == "value" else place))
            stack.extend((e, a, flipped) for e, a in zip(exp.params, act.params))
    return needed


class _Annotate(ExprMutator):
    """Rebuilds a function with every binding and every function's result annotated, and with
    the run-time checks of ``?`` dimensions (``FunctionChecker.dynamic_checks``) as ascriptions."""

    def __init__(self, checker: FunctionChecker):
        super().__init__()
        self.types = {k: checker.solver.resolve(t) for k, t in checker.types.items()}
        self.checks = checker.dynamic_checks()
        self.new_vars: dict[int, Var] = {}

    def annotate_vars(self, fn: Function) -> None:
        for var in bound_vars(fn):
            ty = self.types.get(id(var))
            if ty is not None and var.type_annotation != ty:
                self.new_vars[id(var)] = Var(var.name_hint, ty, span=var.span)

    def rewrite(self, old: Expr, new: Expr) -> Expr:
        if isinstance(old, Var):
            return self.new_vars.get(id(old), new)
        checks = self.checks.get(id(old))
        if checks:
            children = list(new.children())
            for index, ty in checks:
                if not (isinstance(children[index], Ascribe) and children[index].type == ty):
                    child = children[index]  # a variable's span is its binding: a use reports at its parent
                    children[index] = Ascribe(child, ty, span=old.span if isinstance(child, Var) else child.span)
            new = with_children(new, children)
        if isinstance(new, Function) and new.ret_type is None:
            ret = self.types.get(id(old))
            if ret is not None:
                return Function(new.params, new.body, ret, new.type_params, span=new.span, primitive=new.primitive)
        return new


def infer(module: Module) -> Module:
    """Type-check ``module``; return it with every binding and result annotated.

    Raises ``RelayTypeError`` (``KindError`` for kind errors) listing every failing
    global with the span of the user's construct.
    """
    kind_errors = interface_kind_errors(module)
    if kind_errors:
        raise _all_of(kind_errors)
    global_types: dict[str, Type] = {}
    for name, fn in module.functions.items():
        ty = declared_type(fn)
        if ty is not None:
            global_types[name] = ty
    errors: list[RelayTypeError] = []
    annotated: dict[str, Function] = {}
    callees = {name: _callees(fn) for name, fn in module.functions.items()}
    for group in _check_groups(module, global_types, callees):
        name, fn = group[0], module.functions[group[0]]
        try:
            if len(group) == 1 and name not in callees[name] or name in global_types:
                checked = {name: _check_global(module, name, fn, global_types, callees[name])}
            else:
                checked = _check_recursive(module, group, global_types)
        except RelayTypeError as err:
            errors.append(err)
            continue
        except RelayError as err:  # a dimension past the limits of relayish.dims, met where no construct is at hand
            errors.append(RelayTypeError(f"while checking @{name}: {err.message}", err.span or fn.span))
            continue
        except Exception as err:  # a checker bug must still reach the user as a type error
            errors.append(RelayTypeError(f"internal error while checking @{name} ({err!r}); please report it", fn.span))
            continue
        for member, (ty, annotated[member]) in checked.items():
            global_types.setdefault(member, ty)
    if errors:
        raise _all_of(errors)
    return module.with_functions({name: annotated[name] for name in module.functions})


def _all_of(errors: list[RelayTypeError]) -> RelayTypeError:
    """One error, or one that lists them all."""
    return errors[0] if len(errors) == 1 else RelayTypeError("", None, errors)


# Incremental checking: a global is re-checked only when it, the operator declarations or
# the types of the globals it refers to have changed. Functions are immutable, so a
# function object together with those types determines the result.
_CACHE: weakref.WeakKeyDictionary = weakref.WeakKeyDictionary()


def _check_global(
    module: Module, name: str, fn: Function, global_types: dict[str, Type], callees: list[str]
) -> tuple[Type, Function]:
    key = (tuple(sorted(module.op_decls.items())), tuple(module.type_defs.items()),
           tuple((n, global_types.get(n)) for n in callees))
    cached = _CACHE.get(fn)
    if cached is not None and cached[0] == key:
        return cached[1]
    checker = FunctionChecker(module, global_types)
    ty = checker.check(fn, global_types.get(name))
    result = _annotated(checker, name, fn, ty, _Annotate(checker))
    checker.warn_missing_cases()
    _CACHE[fn] = (key, result)
    return result


def _check_recursive(module: Module, group: list[str], global_types: dict[str, Type]) -> dict[str, tuple[Type, Function]]:
    """Unannotated globals that call each other (one recursive global, or a cycle), checked
    together; not cached, as their types depend on each other."""
    fns = [module.functions[name] for name in group]
    unknowns = [Hole.fresh() for _ in group]
    checker = FunctionChecker(module, {**global_types, **dict(zip(group, unknowns))})
    types = checker.check_group(fns, unknowns)
    mutator = _Annotate(checker)  # one for the group: what the checker found is resolved once
    result = {name: _annotated(checker, name, fn, ty, mutator) for name, fn, ty in zip(group, fns, types)}
    checker.warn_missing_cases()
    return result


def _annotated(checker: FunctionChecker, name: str, fn: Function, ty: Type, mutator: _Annotate) -> tuple[Type, Function]:
    """``fn`` with every binding and result annotated from what ``checker`` found."""
    if checker.solver.holes_in(ty):
        raise RelayTypeError(f"cannot infer the type of @{name} ({ty}): annotate its parameters", fn.span)
    mutator.annotate_vars(fn)
    return ty, mutator.mutate(fn)


def expr_types(module: Module) -> dict[int, Type]:
    """The type of every expression of a type-checked module, by ``id`` of the node.

    ``module`` must be what ``infer`` returned (every binding annotated), so its node
    objects are the ones checked here; the nodes of a ``let`` chain's spine are not listed
    (their variables carry their types). Raises ``RelayTypeError`` like ``infer``.
    """
    global_types = {name: ty for name, fn in module.functions.items() if (ty := declared_type(fn)) is not None}
    missing = [name for name in module.functions if name not in global_types]
    if missing:
        raise RelayTypeError(f"expr_types needs a module returned by infer; @{missing[0]} is not fully annotated")
    table: dict[int, Type] = {}
    for name, fn in module.functions.items():
        checker = FunctionChecker(module, global_types, record=True)
        checker.check(fn, global_types[name])
        table.update((key, checker.solver.resolve(ty)) for key, ty in checker.node_types.items())
    return table


def type_arguments(module: Module) -> dict[int, dict[TypeVar, Any]]:
    """What each reference to a polymorphic global instantiates its type parameters with, by
    ``id`` of the ``GlobalVar`` node: a type, shape or base type, or a dimension, in terms of
    the enclosing global's own type parameters. A parameter nothing determines (it appears in
    no argument or result type the call constrains) is left out. ``module`` must be what
    ``infer`` returned; this is what lets the optimizer inline polymorphic globals."""
    global_types = {name: ty for name, fn in module.functions.items() if (ty := declared_type(fn)) is not None}
    table: dict[int, dict[TypeVar, Any]] = {}
    for name, fn in module.functions.items():
        if name not in global_types:
            raise RelayTypeError(f"type_arguments needs a module returned by infer; @{name} is not fully annotated")
        checker = FunctionChecker(module, global_types)
        checker.check(fn, global_types[name])
        for key, mapping in checker.type_args.items():
            solved = {}
            for tv, hole in mapping.items():
                if tv.kind is Kind.DIM:
                    value = checker.solver.dim(as_dim(hole))
                    unsolved = any(isinstance(v, Hole) for v in value.free_vars())
                else:
                    value = checker.solver.resolve(hole)
                    unsolved = checker.solver.holes_in(value)
                if not unsolved:
                    solved[tv] = value
            table[key] = solved
    return table


def _callees(fn: Function) -> list[str]:
    return sorted({n.name for n in post_order(fn) if isinstance(n, GlobalVar)})


def _check_groups(module: Module, global_types: dict[str, Type], callees: dict[str, list[str]]) -> list[list[str]]:
    """The globals in groups to check one after another: each unannotated global after the
    unannotated globals it calls, and those that call each other (strongly connected through
    calls of unannotated globals) in one group."""
    calls = {name: [n for n in names if n in module.functions and n not in global_types] for name, names in callees.items()}
    position = {name: k for k, name in enumerate(module.functions)}
    return [sorted(group, key=position.__getitem__) for group in strongly_connected(module.functions, calls.__getitem__)]
