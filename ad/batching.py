"""The Vmap transform: a function written for one example, run on a batch of them.

``Vmap(f, in_axes)(x...)`` expands to code on batched values: a batched tensor has the examples
along a new leading axis; a value that is the same for every example (an unmapped argument, a
constant, what is computed from them alone) stays as it is, so a weight matrix is not copied per
example. Each expression's *pattern* records which: True (batched), False (not), or a tuple of
patterns for a tuple value. Functions, references and what they hold are always batched: a
closure may be called by any example, a reference written by some examples and not others.

- An operator call with a batched argument becomes its batched form (``ad.batch_rules``).
- Every batched function takes one more argument, the *mask*: a boolean per example, true for
  the examples that run the call. It matters where an example does not: a reference write keeps
  the old content for the examples outside the mask.
- ``if`` on a condition that differs per example runs the branch each example needs under the
  mask of those examples, only when some example needs it, and merges the results with
  ``where``: so recursion whose depth differs per example runs until every example is done,
  the finished ones frozen by the mask. Functions chosen per example merge into a function that
  runs both under their masks, references likewise (a reference is its reader and writers,
  functions); data values cannot be merged (an error).
- A call of a global with a batched argument calls its batched global ``@g__vm`` (polymorphic in
  the batch size, taking the mask); with none it calls ``@g`` itself.

Limits (RelayTypeErrors at the ``Vmap``): data types are not batched yet; an operator without a
batching rule (``ad.batch_rules``); a free variable of function type whose code is not visible
(as for Grad). Operators run on every example of a batched call, including examples outside the
mask, whose values are the other branch's: one that can raise (an integer division by zero, an
index out of range) may raise there.
"""

from __future__ import annotations

from typing import Any, Callable, Iterator

from relayish.dims import Dim
from relayish.errors import RelayTypeError, Span
from relayish.expr import (
    Ascribe, Call, Constant, Construct, Expr, Function, GlobalVar, If, IsCtor, Let, Op, Proj, RefNew, RefRead,
    RefWrite, Tuple, Unpack, Var, Vmap, Zero, lets,
)  # fmt: skip
from relayish.module import Module
from relayish.ops.registry import lookup_op
from relayish.traverse import trampoline
from relayish.types import (
    UNIT, BoolType, FuncType, Kind, RefType, Shape, TensorType, TupleType, Type, TypeVar, is_first_order, mapped_type,
    with_axis,
)  # fmt: skip
from typecheck import expr_types
from typecheck.solver import Hole

from .batch_rules import BatchSite, batched_call, op
from .literals import free_in_order, let_literals

SUFFIX = "__vm"
Pattern = Any  # bool, or a tuple of patterns for a tuple value


def mask_type(batch: Dim) -> TensorType:
    return TensorType(BoolType(), Shape(batch))


def batched_type(ty: Type, batch: Dim, span: Span | None = None) -> Type:
    """The type of a batch of values of ``ty``: tensors with the batch in front; functions take the
    batched arguments and the mask; references hold batches."""
    if isinstance(ty, TensorType):
        if not isinstance(ty.shape, Shape):
            raise RelayTypeError(f"Vmap cannot batch a tensor of unknown rank ({ty})", span)
        return with_axis(ty, 0, batch)
    if isinstance(ty, TupleType):
        return TupleType([batched_type(f, batch, span) for f in ty.fields])
    if isinstance(ty, FuncType):
        return FuncType([*(batched_type(p, batch, span) for p in ty.params), mask_type(batch)], batched_type(ty.ret, batch, span))
    if isinstance(ty, RefType):
        return batched_type(accessors(ty), batch, span)
    raise RelayTypeError(f"Vmap cannot batch a value of type {ty} yet: mapped code may use tensors, tuples, functions "
                         "and references, not data types or type variables", span)


def accessors(ty: RefType) -> TupleType:
    """A reference in batched code: its reader, its writer (which keeps the old content outside the
    mask) and its writer for code run by every example (which needs no mask), functions taking the
    mask as every batched function does; so an ``if`` that differs per example can merge two
    references as it merges functions: reads take each example's content from its own reference,
    writes go to each example's own."""
    return TupleType([FuncType([], ty.value), FuncType([ty.value], UNIT), FuncType([ty.value], UNIT)])


def _canonical(pattern: Pattern, ty: Type) -> Pattern:
    """One spelling per pattern: a tuple pattern whose parts agree is their bool; a value holding
    functions or references is batched whatever the pattern says of its other parts' types."""
    if isinstance(ty, TupleType):
        if not isinstance(pattern, tuple):
            return pattern
        parts = tuple(_canonical(p, f) for p, f in zip(pattern, ty.fields))
        if not parts:
            return False
        if all(p is True for p in parts) or all(p is False for p in parts):
            return parts[0]
        return parts
    return bool(pattern)


def _field(pattern: Pattern, i: int) -> Pattern:
    return pattern[i] if isinstance(pattern, tuple) else pattern


def _unbatched(pattern: Pattern) -> bool:
    return not any(_leaves(pattern))


def _leaves(pattern: Pattern) -> Iterator[bool]:
    stack = [pattern]
    while stack:
        p = stack.pop()
        if isinstance(p, tuple):
            stack.extend(p)
        else:
            yield p


def _joined(a: Pattern, b: Pattern, ty: Type) -> Pattern:
    """The pattern both of two values fit: batched where either is."""
    if isinstance(ty, TupleType) and (isinstance(a, tuple) or isinstance(b, tuple)):
        return tuple(_joined(_field(a, i), _field(b, i), f) for i, f in enumerate(ty.fields))
    return bool(any(_leaves(a)) or any(_leaves(b)))


def _annotated_mask(batch: Dim | None) -> Type | None:
    return None if batch is None else mask_type(batch)


def _annotated(ty: Type, batch: Dim | None) -> Type | None:
    return None if batch is None else batched_type(ty, batch)


def _rank(ty: Type) -> int:
    return ty.shape.rank


def spread(mask: Expr, rank: int) -> Expr:
    """A per-example boolean with axes of size 1 after the batch, to select tensors of ``rank`` per example."""
    return mask if rank == 0 else op("expand_dims", mask, axis=1, num_newaxis=rank)


def _bound(bindings: list[tuple[Var, Expr]], name: str, value: Expr) -> Expr:
    if isinstance(value, (Var, Constant, GlobalVar)):
        return value
    var = Var(name)
    bindings.append((var, value))
    return var


class Context:
    """One type-checked module without Grad, Jvp or Vmap nodes inside the function being batched:
    its types, the function literals its lets bind and the batched globals made so far."""

    def __init__(self, module: Module, made: dict[str, tuple[Function, str]]):
        self.module = module
        self.types = expr_types(module)
        self.literals = let_literals(module)
        self.made = made
        self.pending: list[tuple[str, str, tuple[Pattern, ...], bool]] = []  # (global, its batched one, patterns, full)
        self.new_globals: dict[str, Function] = {}

    def type_of(self, e: Expr) -> Type:
        return self.types[id(e)]

    def batched_global(self, name: str, patterns: tuple[Pattern, ...] | None = None, full: bool = False) -> str:
        """The name of ``@name``'s batched global for arguments of ``patterns`` (None: all batched),
        made on demand: ``@name__vm`` for batched arguments under any mask, others numbered. With
        ``full`` it runs only under the mask of all examples (its reference writes need no masking)."""
        fn = self.module[name]
        if patterns is None:
            patterns = (True,) * len(fn.params)
        patterns = tuple(_canonical(p, q.type_annotation) for p, q in zip(patterns, fn.params))
        key = f"{name}{SUFFIX}{patterns!r}{full}"
        known = self.made.get(key)
        if known is not None and known[0] is fn:
            return known[1]
        taken = {v[1] for v in self.made.values()} | set(self.module.functions)
        new = name + SUFFIX
        count = 0
        while new in taken:
            count += 1
            new = f"{name}{SUFFIX}{count}"
        self.made[key] = (fn, new)
        self.pending.append((name, new, patterns, full))
        return new

    def build_pending(self) -> dict[str, Function]:
        while self.pending:
            name, new, patterns, full = self.pending.pop()
            fn = self.module[name]
            size = TypeVar("b", Kind.DIM)
            batch = Dim.atom(size)
            mask = Var("mask", mask_type(batch))
            batcher = Batcher(self, batch, mask, full=full)
            params = []
            for p, pattern in zip(fn.params, patterns):
                params.append(batcher.bind(p, Var(p.name_hint, batcher.typed(p.type_annotation, pattern)), pattern))
            body = batcher.run(fn.body, fn.ret_type)
            ret = batched_type(fn.ret_type, batch, fn.span)
            self.new_globals[new] = Function([*params, mask], body, ret, (*fn.type_params, size), span=fn.span)
        return self.new_globals

    # the expansion of one Vmap ---------------------------------------------------------------
    def expansion(self, node: Vmap, name: str | None = None) -> Expr:
        """``Vmap(f, in_axes)`` as a function: a new global where ``f`` is one (named ``name``, by
        default ``@f__vmap``)."""
        f = node.func
        if isinstance(f, GlobalVar):
            fn = self.module[f.name]
            size = TypeVar("b", Kind.DIM)
            batch = Dim.atom(size)
            types = [p.type_annotation for p in fn.params]
            try:
                fty = mapped_type(types, fn.ret_type, node.in_axes, batch)
            except ValueError as err:
                raise RelayTypeError(f"Vmap of @{f.name}: {err}", node.span) from None
            params = [Var(p.name_hint, t) for p, t in zip(fn.params, fty.params)]
            body = self.entry(node, fn, params, types, fn.ret_type, batch)
            if name is None:
                name = f"{f.name}__vmap"
                while name in self.module.functions or name in self.new_globals:
                    name += "_"
            self.new_globals[name] = Function(params, body, fty.ret, (*fn.type_params, size), span=node.span)
            return GlobalVar(name, span=node.span)
        site = self.type_of(node)  # the batch size as the checker found it at this Vmap
        batch = _batch_size(site, node.in_axes)
        fty = self.type_of(f)
        params = [Var(f.params[i].name_hint if isinstance(f, Function) else f"x{i}", None if batch is None else t)
                  for i, t in enumerate(site.params)]
        body = self.entry(node, f, params, fty.params, fty.ret, batch)
        return Function(params, body, None if batch is None else site.ret, span=node.span)

    def entry(self, node: Vmap, f: Expr, params: list[Var], types: list[Type], ret: Type, batch: Dim | None) -> Expr:
        """The body of ``Vmap(f)``'s expansion on ``params`` (of a function of ``types`` to ``ret``):
        mapped axes moved to the front, the mask of all examples, then ``f``'s body batched (a
        global's or a literal's: unmapped parameters stay as they are), or ``f`` batched and called."""
        bindings: list[tuple[Var, Expr]] = []
        moved: list[tuple[Expr, bool]] = []
        for p, axis, ty in zip(params, node.in_axes, types):
            moved.append((p, False) if axis is None else (_to_front(bindings, p, ty, axis), True))
        first, first_type = next((e, t) for (e, batched), t in zip(moved, types) if batched)
        mask = _bound(bindings, "mask", _everyone(first, first_type))
        batcher = Batcher(self, batch, mask, full=True)
        if isinstance(f, Function):
            for p, (e, batched) in zip(f.params, moved):
                batcher.env[id(p)] = (e, batched)
            bindings += batcher.free(f, node.span)
            return lets(bindings, batcher.run(f.body, ret))
        bindings += batcher.free(f, node.span)
        callee = batcher.run(f, self.type_of(f))
        args = [batcher.lifted(e, t, batched) for (e, batched), t in zip(moved, types)]
        return lets(bindings, Call(callee, [*args, mask]))


def _batch_size(site: FuncType, in_axes: tuple[int | None, ...]) -> Dim | None:
    for ty, axis in zip(site.params, in_axes):
        if axis is not None:
            while isinstance(ty, TupleType):
                ty = ty.fields[0]
            size = ty.shape.dims[axis]
            return None if any(isinstance(v, Hole) for v in size.free_vars()) else size
    return None


def _to_front(bindings: list[tuple[Var, Expr]], e: Expr, ty: Type, axis: int) -> Expr:
    """A mapped argument with its mapped axis moved to the front."""
    if axis == 0:
        return e
    if isinstance(ty, TupleType):
        e = _bound(bindings, "t", e)
        return Tuple([_to_front(bindings, Proj(e, i), f, axis) for i, f in enumerate(ty.fields)])
    rank = _rank(ty) + 1
    return op("transpose", e, axes=(axis, *range(axis), *range(axis + 1, rank)))


def _everyone(e: Expr, ty: Type) -> Expr:
    """The mask of every example of the batch ``e`` (of a batch of ``ty``): true per example."""
    while isinstance(ty, TupleType):
        e, ty = Proj(e, 0), ty.fields[0]
    flag = op("cast", e, dtype=BoolType())
    rank = _rank(ty)
    return op("ones_like", flag if rank == 0 else op("all", flag, axis=tuple(range(1, rank + 1))))


class Batcher:
    """The batched form of code run under one mask: ``mask`` (a boolean per example), known to be
    all true where ``full``."""

    def __init__(self, ctx: Context, batch: Dim | None, mask: Expr, full: bool, env: dict | None = None):
        self.ctx = ctx
        self.batch = batch
        self.mask = mask
        self.full = full
        self.env: dict[int, tuple[Expr, Pattern]] = {} if env is None else env

    def bind(self, old: Var, new: Var, pattern: Pattern) -> Var:
        self.env[id(old)] = (new, pattern)
        return new

    def under(self, mask: Expr) -> Batcher:
        return Batcher(self.ctx, self.batch, mask, False, self.env)

    def run(self, e: Expr, ty: Type) -> Expr:
        """``e`` batched, every part of its result batched."""
        return trampoline(self.whole(e, ty))

    def whole(self, e: Expr, ty: Type) -> Iterator[Any]:
        value, pattern = yield self.expr(e)
        return self.lifted(value, ty, pattern)

    def free(self, f: Expr, span: Span | None) -> list[tuple[Var, Expr]]:
        """Bindings for ``f``'s free variables: tensors are the same for every example; functions
        bound by a ``let`` to a literal are batched (their own free variables first)."""
        bindings: list[tuple[Var, Expr]] = []
        for var in free_in_order(f, self.ctx.literals, set(self.env)):
            literal = self.ctx.literals.get(id(var))
            ty = var.type_annotation if var.type_annotation is not None else self.ctx.types.get(id(var))
            if literal is not None:
                new = self.bind(var, Var(var.name_hint), True)
                bindings.append((new, self.run(literal, self.ctx.type_of(literal))))
            elif ty is not None and is_first_order(ty):
                self.env[id(var)] = (var, False)
            else:
                raise RelayTypeError(f"Vmap: the mapped function uses %{var.name_hint} ({ty}) from outside it, whose code "
                                     "Vmap cannot see; define it inside the function, bind it with let to a function "
                                     "literal, or make it a global", span)
        return bindings

    # values ------------------------------------------------------------------------------------
    def lifted(self, e: Expr, ty: Type, pattern: Pattern, target: Pattern = True) -> Expr:
        """``e`` (of ``pattern``) with the parts ``target`` batches batched (by default every part): a
        value the same for every example copied per example."""
        if pattern is True or pattern == target:
            return e
        if isinstance(ty, TupleType):
            bindings: list[tuple[Var, Expr]] = []
            e = _bound(bindings, "t", e)
            return lets(bindings, Tuple([self.lifted(Proj(e, i), f, _field(pattern, i), _field(target, i))
                                         for i, f in enumerate(ty.fields)]))
        if pattern or not target:
            return e
        one = op("expand_dims", e, axis=0)
        bindings = []
        one = _bound(bindings, "one", one)
        return lets(bindings, op("where", spread(self.mask, _rank(ty)), one, one))

    def merged(self, cond: Expr, a: Expr, b: Expr, ty: Type, span: Span | None) -> Expr:
        """Per example, ``a`` (batched) where ``cond`` and ``b`` elsewhere."""
        if isinstance(ty, TensorType):
            return op("where", spread(cond, _rank(ty)), a, b)
        if isinstance(ty, TupleType):
            bindings: list[tuple[Var, Expr]] = []
            a, b = _bound(bindings, "a", a), _bound(bindings, "b", b)
            return lets(bindings, Tuple([self.merged(cond, Proj(a, i), Proj(b, i), f, span) for i, f in enumerate(ty.fields)]))
        if isinstance(ty, FuncType):
            bindings = []
            a, b = _bound(bindings, "f", a), _bound(bindings, "g", b)
            params = [Var(f"x{i}", _annotated(t, self.batch)) for i, t in enumerate(ty.params)]
            mask = Var("mask", _annotated_mask(self.batch))
            body = self.under(mask).chosen(cond, lambda m: Call(a, [*params, m]), lambda m: Call(b, [*params, m]), ty.ret, span)
            return lets(bindings, Function([*params, mask], body, _annotated(ty.ret, self.batch)))
        if isinstance(ty, RefType):  # a write by every example is a masked write to each of the two
            bindings = []
            a, b = _bound(bindings, "r", a), _bound(bindings, "s", b)
            read, write = accessors(ty).fields[:2]
            writes = _bound(bindings, "write", self.merged(cond, Proj(a, 1), Proj(b, 1), write, span))
            return lets(bindings, Tuple([self.merged(cond, Proj(a, 0), Proj(b, 0), read, span), writes, writes]))
        raise RelayTypeError(f"Vmap: an if whose condition differs per example chooses between values of type {ty}, "
                             "which cannot be merged per example (tensors, tuples and functions can)", span)

    def chosen(self, cond: Expr, then: Callable[[Expr], Expr], otherwise: Callable[[Expr], Expr], ty: Type,
               span: Span | None) -> Expr:
        """Per example, ``then``'s value where ``cond`` holds, ``otherwise``'s elsewhere; each runs
        under the mask of its examples, and only when it has some."""
        bindings: list[tuple[Var, Expr]] = []
        c = _bound(bindings, "c", cond)
        yes = _bound(bindings, "yes", c if self.full else op("logical_and", self.mask, c))
        no = _bound(bindings, "no", op("logical_not", c) if self.full else op("logical_and", self.mask, op("logical_not", c)))
        ret = _annotated(ty, self.batch)
        first = Var("then_part")
        second = Var("else_part")
        bindings += [(first, Function([], then(yes), ret)), (second, Function([], otherwise(no), ret))]
        both = self.merged(c, Call(first, []), Call(second, []), ty, span)
        inner = If(op("any", no), both, Call(first, []), span=span)
        return lets(bindings, If(op("any", yes), inner, Call(second, []), span=span))

    # expressions -------------------------------------------------------------------------------
    def expr(self, e: Expr) -> Iterator[Any]:
        if isinstance(e, Var):
            return self.env[id(e)]
        if isinstance(e, (Constant, Zero)):
            return e, False
        if isinstance(e, GlobalVar):
            return self.global_value(e), True
        if isinstance(e, Tuple):
            fields, patterns = [], []
            for f in e.fields:
                value, pattern = yield self.expr(f)
                fields.append(value)
                patterns.append(pattern)
            return Tuple(fields, span=e.span), tuple(patterns)
        if isinstance(e, Proj):
            value, pattern = yield self.expr(e.tuple_value)
            return Proj(value, e.index, span=e.span), _field(pattern, e.index)
        if isinstance(e, Let):
            return (yield self.let_chain(e))
        if isinstance(e, If):
            return (yield self.branch(e))
        if isinstance(e, Function):
            return (yield self.function(e)), True
        if isinstance(e, Call):
            return (yield self.call(e))
        if isinstance(e, Ascribe):
            value, pattern = yield self.expr(e.expr)
            if self.batch is None:
                return value, pattern
            return Ascribe(value, self.typed(e.type, pattern), span=e.span), pattern
        if isinstance(e, RefNew):
            return (yield self.ref_new(e)), True
        if isinstance(e, RefRead):
            return Call(Proj((yield self.expr(e.ref))[0], 0), [self.mask], span=e.span), True
        if isinstance(e, RefWrite):
            return (yield self.ref_write(e)), ()
        if isinstance(e, (Construct, IsCtor, Unpack)):
            raise RelayTypeError("Vmap cannot batch code using data types yet (constructors and matches)", e.span)
        if isinstance(e, Op):
            raise RelayTypeError(f"Vmap: operator @{e.name} used as a value: call it instead", e.span)
        raise AssertionError(f"unexpanded {type(e).__name__} in batched code")  # Grad, Jvp, Vmap: expanded first

    def typed(self, ty: Type, pattern: Pattern) -> Type:
        if isinstance(ty, TupleType) and isinstance(pattern, tuple):
            return TupleType([self.typed(f, p) for f, p in zip(ty.fields, pattern)])
        return batched_type(ty, self.batch) if pattern else ty

    def let_chain(self, e: Let) -> Iterator[Any]:
        bindings: list[tuple[Var, Expr]] = []
        while isinstance(e, Let):
            new = Var(e.var.name_hint)
            if isinstance(e.value, Function):  # bound first: a let-bound function may call itself
                self.bind(e.var, new, True)
            value, pattern = yield self.expr(e.value)
            self.bind(e.var, new, pattern)
            bindings.append((new, value))
            e = e.body
        value, pattern = yield self.expr(e)
        return lets(bindings, value), pattern

    def branch(self, e: If) -> Iterator[Any]:
        cond, batched = yield self.expr(e.cond)
        ty = self.ctx.type_of(e)
        if not batched:
            then_value, then_pattern = yield self.expr(e.then_branch)
            else_value, else_pattern = yield self.expr(e.else_branch)
            pattern = _joined(then_pattern, else_pattern, ty)
            return If(cond, self.lifted(then_value, ty, then_pattern, pattern),
                      self.lifted(else_value, ty, else_pattern, pattern), span=e.span), pattern
        return self.chosen(cond, lambda m: self.under(m).run(e.then_branch, ty),
                           lambda m: self.under(m).run(e.else_branch, ty), ty, e.span), True

    def function(self, fn: Function) -> Iterator[Any]:
        fty = self.ctx.type_of(fn)
        mask = Var("mask", _annotated_mask(self.batch))
        inner = self.under(mask)
        params = [inner.bind(p, Var(p.name_hint, _annotated(t, self.batch)), True) for p, t in zip(fn.params, fty.params)]
        body = yield inner.whole(fn.body, fty.ret)
        return Function([*params, mask], body, _annotated(fty.ret, self.batch), span=fn.span)

    def global_value(self, g: GlobalVar) -> Function:
        """``@g`` used as a value: a closure calling its batched global."""
        fty = self.ctx.type_of(g)
        params = [Var(f"x{i}", _annotated(t, self.batch)) for i, t in enumerate(fty.params)]
        mask = Var("mask", _annotated_mask(self.batch))
        return Function([*params, mask], Call(GlobalVar(self.ctx.batched_global(g.name)), [*params, mask]),
                        _annotated(fty.ret, self.batch))

    def call(self, e: Call) -> Iterator[Any]:
        args, patterns = [], []
        for a in e.args:
            value, pattern = yield self.expr(a)
            args.append(value)
            patterns.append(pattern)
        if all(map(_unbatched, patterns)) and (isinstance(e.callee, Op) or
                                               isinstance(e.callee, GlobalVar) and is_first_order(self.ctx.type_of(e))):
            # the same for every example: pure data in, so the call is too (its effects stay inside it)
            return Call(e.callee, args, e.attrs, span=e.span), False
        types = [self.ctx.type_of(a) for a in e.args]
        if isinstance(e.callee, Op):
            return self.primitive(e, args, patterns, types)
        if isinstance(e.callee, Function):  # applied where it is written (Grad's and Jvp's expansions): its
            # parameters bound to the arguments as they are, so what is the same for all stays so
            bindings = [(self.bind(p, Var(p.name_hint), pattern), a) for p, a, pattern in zip(e.callee.params, args, patterns)]
            value, pattern = yield self.expr(e.callee.body)
            return lets(bindings, value), pattern
        if isinstance(e.callee, GlobalVar):  # a version for these patterns: what is the same for all stays so
            name = self.ctx.batched_global(e.callee.name, tuple(patterns), self.full)
            return Call(GlobalVar(name, span=e.callee.span), [*args, self.mask], span=e.span), True
        lifted = [self.lifted(a, t, p) for a, t, p in zip(args, types, patterns)]
        callee = (yield self.expr(e.callee))[0]
        return Call(callee, [*lifted, self.mask], span=e.span), True

    def primitive(self, e: Call, args: list[Expr], patterns: list[Pattern], types: list[Type]) -> tuple[Expr, Pattern]:
        definition = lookup_op(e.callee.name)
        if definition is None:
            raise RelayTypeError(f"Vmap: the declared operator @{e.callee.name} has no implementation to batch", e.span)
        bindings: list[tuple[Var, Expr]] = []
        bound = [_bound(bindings, f"a{i}", a) for i, a in enumerate(args)]
        lifts: dict[int, Expr] = {}

        def lift(i: int) -> Expr:
            if i not in lifts:
                lifts[i] = _bound(bindings, f"l{i}", self.lifted(bound[i], types[i], patterns[i]))
            return lifts[i]

        site = BatchSite(e.callee.name, definition.full_attrs(e.attrs), tuple(bound), tuple(bool(p) for p in patterns),
                         tuple(types), self.ctx.type_of(e), lift, e.span)
        result, pattern = batched_call(site)
        return lets(bindings, result), pattern

    def ref_new(self, e: RefNew) -> Iterator[Any]:
        """A new reference and its accessors (``accessors``): the writer keeps the old content for the
        examples outside the mask it is called with."""
        ty = self.ctx.type_of(e.value)
        cell = Var("cell")
        value, mask = Var("value", _annotated(ty, self.batch)), Var("mask", _annotated_mask(self.batch))
        read = Function([Var("mask", _annotated_mask(self.batch))], RefRead(cell), _annotated(ty, self.batch))
        kept = self.under(mask).merged(mask, value, RefRead(cell), ty, e.span)
        write = Function([value, mask], RefWrite(cell, kept, span=e.span), UNIT)
        everyone = Var("value", _annotated(ty, self.batch))
        write_all = Function([everyone, Var("mask", _annotated_mask(self.batch))], RefWrite(cell, everyone, span=e.span), UNIT)
        return Let(cell, RefNew((yield self.whole(e.value, ty)), span=e.span), Tuple([read, write, write_all]))

    def ref_write(self, e: RefWrite) -> Iterator[Any]:
        ref = (yield self.expr(e.ref))[0]
        value = yield self.whole(e.value, self.ctx.type_of(e.value))
        return Call(Proj(ref, 2 if self.full else 1), [value, self.mask], span=e.span)

