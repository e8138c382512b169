"""Fusion: connected elementwise and broadcasting operator calls, with the reductions that consume
them, become one ``fn primitive`` group that the JIT compiles into one loop over memory.

Input: a typed module (``typecheck.infer``'s output), normally straight-line let chains after
partial evaluation. Only let chains are fused; closures, references, ``if`` and recursion stay as
they are (the chains inside them are fused on their own). Within a chain, bindings whose values
are trees of operator calls (also the fields of a tuple: several results) are split into one call
per node, and each node is

- *elementwise* (unary math, casts, broadcasting arithmetic and comparisons, ``where``,
  ``broadcast_to[_like]``; not integer ``div``/``pow``, which raise) with a result of rank >= 1
  whose arguments broadcast to it statically (each dimension equal or the constant 1);
- a *reduction* (``sum``, ``mean``) of a tensor of rank >= 1;
- a *source*: ``zeros_like``/``ones_like`` of a statically known shape (or ``full``). They
  depend on no value, so a group reads them as constants; a source that stays outside groups is
  written as an argument-free ``full`` (or a scalar constant) so it can move freely. Of a
  symbolic shape (a batch ``Dim``) they are elementwise, reading their argument's shape only;
- anything else, which fusion leaves alone.

Grouping, in chain order: an elementwise node joins the groups of its elementwise producers of
the *same shape* (a smaller broadcast operand is an input of the group, read with stride 0), and a
reduction joins the group of its producer, so a group has one iteration shape. Merging is refused
when it would make the group run after a node that uses one of its values (a group runs where its
last member was), when a member would read a reduction of its own group (a reduction is known only
after the loop; using its shape is fine), or past ``MAX_GROUP`` members. Then groups of one iteration shape that read a common input merge
under the same rules (multi-output fusion: one pass over the input). Members used outside the
group are its outputs (a tuple when several): W1's value and gradient, whose backward nodes share
``tanh(x * w + b)`` with the forward ones, are one group with outputs (loss, dw, db). Members
nothing needs are dropped; a group of fewer than two members is not worth a kernel and stays as
plain calls. Every new variable is annotated, so the result type-checks.
"""

from __future__ import annotations

from typing import Any

import attrs
import numpy as np

from relayish.expr import Call, Constant, Expr, Function, If, Let, Op, Proj, Tuple, Var
from relayish.module import Module
from relayish.ops.element import fill_value
from relayish.ops.record import OpDef, Raises
from relayish.ops.registry import lookup_op
from relayish.traverse import ExprMutator, free_vars, post_order
from relayish.types import BaseType, FloatType, Shape, TensorType, TupleType, Type, has_unknown_dim

from ..kernels.fused import REDUCTIONS, Unsupported, fused_source, not_read

MAX_GROUP = 48  # members: Numba compiles a kernel in time that grows with its body

CONVERSIONS = frozenset({"cast", "cast_like", "broadcast_to", "broadcast_to_like"})  # the fused kernels' own
HALF = FloatType(16)


def fill_of(op: OpDef) -> int | float | bool | None:
    """The constant an operator's elements all are (``zeros_like``: 0), or None."""
    return None if op.element is None else fill_value(op.element)


def tensor_type(ty: Type | None) -> TensorType | None:
    """``ty`` when it is a tensor of a concrete dtype (not float16: Numba has none) and rank, and no
    ``?`` dimension (a group's loops take equal dimensions for equal sizes)."""
    if isinstance(ty, TensorType) and isinstance(ty.dtype, BaseType) and isinstance(ty.shape, Shape) \
            and ty.dtype != HALF and not has_unknown_dim(ty):
        return ty
    return None


def broadcasts_statically(arg: TensorType, result: TensorType) -> bool:
    """Whether ``arg`` broadcasts to ``result`` with every dimension equal or the constant 1."""
    a, r = arg.shape.dims, result.shape.dims
    if len(a) > len(r):
        return False
    return all(d == e or d.value == 1 for d, e in zip(a, r[len(r) - len(a):]))


def atom_type(atom: Expr) -> Type | None:
    if isinstance(atom, Var):
        return atom.type_annotation
    if isinstance(atom, Constant):
        return TensorType(atom.dtype, Shape(*atom.value.shape))
    return None


@attrs.define(eq=False)
class Node:
    """One operator call of a chain, its arguments atoms (variables or constants)."""

    var: Var
    call: Call
    pos: int
    kind: str = "other"  # "elementwise", "reduce", "source" or "other"
    data: list[int] = attrs.Factory(list)  # nodes whose values this one reads
    shape_only: list[int] = attrs.Factory(list)  # nodes whose shapes only this one uses
    users: list[int] = attrs.Factory(list)  # positions of the items using this node's variable
    group: Group | None = None

    @property
    def type(self) -> TensorType:
        return self.var.type_annotation


@attrs.define(eq=False)
class Group:
    members: list[int]  # node positions, in chain order

    @property
    def slot(self) -> int:
        return self.members[-1]


def classify(call: Call, result: Type | None) -> str:
    """The fusion kind of an operator call (see the module docstring)."""
    op = lookup_op(call.callee.name)
    result = tensor_type(result)
    arg_types = [tensor_type(atom_type(a)) for a in call.args]
    if op is None or result is None or any(t is None for t in arg_types):
        return "other"
    name = op.name
    if name == "full" or fill_of(op) is not None and result.shape.static() is not None:
        return "source"
    if name in REDUCTIONS:
        return "reduce" if arg_types[0].shape.rank >= 1 else "other"
    if result.shape.rank == 0:
        return "other"  # scalars are cheap Python expressions in compiled code
    if op.raises == Raises.ON_INTEGERS and not all(t.dtype.to_numpy().kind == "f" for t in arg_types):
        return "other"  # ZeroDivisionError, negative exponents: keep their order
    if op.element is not None or name in CONVERSIONS:
        skipped = not_read(name, len(arg_types))
        if all(broadcasts_statically(t, result) for k, t in enumerate(arg_types) if k not in skipped):
            return "elementwise"
    return "other"


def source_expr(node: Node) -> Expr:
    """A source as an expression of no variable: a scalar constant or ``full``."""
    call, ty = node.call, node.type
    attrs_ = lookup_op(call.callee.name).full_attrs(call.attrs)
    value = attrs_["fill_value"] if call.callee.name == "full" else fill_of(lookup_op(call.callee.name))
    if ty.shape.rank == 0:
        return Constant(np.array(value).astype(ty.dtype.to_numpy()))
    if call.callee.name == "full":
        return call
    return Call(Op("full"), [], {"shape": ty.shape.static(), "fill_value": float(value), "dtype": ty.dtype})


def typed_calls(e: Expr, result: Type | None) -> list[tuple[Call, Type]] | None:
    """The calls of an operator-call tree over variables and constants, children first, with
    their types (from the operators' type relations; ``result`` is the root's when known); None
    for anything else."""
    if not (isinstance(e, Call) and isinstance(e.callee, Op)):
        return None
    found: list[tuple[Call, Type]] = []
    types: dict[int, Type] = {}
    stack: list[tuple[Call, bool]] = [(e, False)]
    while stack:
        call, ready = stack.pop()
        if ready:
            if id(call) in types:
                continue  # a shared subtree: computed once
            op = lookup_op(call.callee.name)
            arg_types = [types.get(id(a)) or atom_type(a) for a in call.args]
            if call is e and result is not None:
                ty = result
            elif op is None or any(t is None for t in arg_types):
                return None
            else:
                ty = op.type_relation(arg_types, op.full_attrs(call.attrs))
            types[id(call)] = ty
            found.append((call, ty))
            continue
        stack.append((call, True))
        for a in reversed(call.args):
            if isinstance(a, Call) and isinstance(a.callee, Op):
                stack.append((a, False))
            elif not isinstance(a, (Var, Constant)):
                return None
    return found


class Chain:
    """One let chain: its bindings as nodes (operator calls) and barriers (anything else)."""

    def __init__(self, head: Expr):
        self.items: list[tuple[Var, Expr, Any]] = []  # (variable, value, span) in order
        self.nodes: dict[int, Node] = {}  # position -> node
        e = head
        while isinstance(e, Let):
            self.add(e.var, self.lifted(e.value), e.span, typed_calls(e.value, e.var.type_annotation))
            e = e.body
        self.tail = self.lifted(e)
        calls = typed_calls(self.tail, None)
        if calls is not None:
            tree, self.tail = self.tail, Var("r", calls[-1][1])
            self.add(self.tail, tree, None, calls)
        self.bound = {id(node.var): pos for pos, node in self.nodes.items()}

    def lifted(self, e: Expr) -> Expr:
        """A tuple's operator trees bound before it (what several results look like), else ``e``."""
        if not isinstance(e, Tuple):
            return e
        fields = []
        for f in e.fields:
            calls = typed_calls(f, None)
            if calls is not None:
                var = Var("t", calls[-1][1])
                self.add(var, f, None, calls)
                f = var
            fields.append(f)
        return Tuple(fields, span=e.span) if any(a is not b for a, b in zip(fields, e.fields)) else e

    def add(self, var: Var, value: Expr, span: Any, calls: list[tuple[Call, Type]] | None) -> None:
        """A binding: one node per call of an operator tree (children first), else a barrier."""
        if calls is None:
            self.items.append((var, value, span))
            return
        rebuilt: dict[int, Var] = {}
        for n, ty in calls:
            call = Call(n.callee, [rebuilt.get(id(a), a) for a in n.args], n.attrs, span=n.span)
            target = rebuilt[id(n)] = var if n is value else Var("t", ty)
            self.nodes[len(self.items)] = Node(target, call, len(self.items))
            self.items.append((target, call, span if n is value else None))

    def link(self) -> None:
        """Kinds, producers and users of every node."""
        bound = self.bound
        for pos, (var, value, _) in enumerate(self.items):
            node = self.nodes.get(pos)
            if node is None:
                used = free_vars(value) if not isinstance(value, Var) else [value]
                for v in used:
                    if id(v) in bound:
                        self.nodes[bound[id(v)]].users.append(pos)
                continue
            node.kind = classify(node.call, var.type_annotation)
            if node.kind == "source":
                continue  # it depends on no value: its argument gives a static shape
            skipped = not_read(node.call.callee.name, len(node.call.args))
            for k, arg in enumerate(node.call.args):
                producer = bound.get(id(arg)) if isinstance(arg, Var) else None
                if producer is None:
                    continue
                self.nodes[producer].users.append(pos)
                (node.shape_only if k in skipped else node.data).append(producer)
        for v in free_vars(self.tail) if not isinstance(self.tail, Var) else [self.tail]:
            if id(v) in bound:
                self.nodes[bound[id(v)]].users.append(len(self.items))

    def group(self) -> list[Group]:
        """Greedy grouping in chain order (module docstring)."""
        for pos, node in self.nodes.items():
            if node.kind not in ("elementwise", "reduce"):
                continue
            candidates: list[Group] = []
            # a fill of a symbolic shape joins the group of what gives it its shape
            for p in node.data + (node.shape_only if fill_of(lookup_op(node.call.callee.name)) is not None else []):
                producer = self.nodes[p]
                same = node.kind == "reduce" or producer.type.shape == node.type.shape
                if producer.kind == "elementwise" and same and producer.group and producer.group not in candidates:
                    candidates.append(producer.group)
            merged = self.merge(candidates, pos)
            if merged is None:  # all at once failed: one at a time, latest first
                merged = [pos]
                for g in sorted(candidates, key=lambda g: -g.slot):
                    merged = self.merge_members(merged, g.members, pos) or merged
            group = Group(sorted(merged))
            for m in group.members:
                self.nodes[m].group = group
        groups = {id(n.group): n.group for n in self.nodes.values() if n.group is not None}
        for g in groups.values():
            if len(g.members) < 2:
                self.nodes[g.members[0]].group = None
        return self.siblings([g for g in groups.values() if len(g.members) >= 2])

    def siblings(self, groups: list[Group]) -> list[Group]:
        """Groups of one iteration shape that read a common input merge (multi-output fusion: one
        pass over that input instead of several), where the merge rules allow."""
        kept: list[Group] = []
        for g in sorted(groups, key=lambda g: g.slot):
            for h in kept:
                if self.iteration_shape(h) == self.iteration_shape(g) and self.inputs(h) & self.inputs(g):
                    union = self.merge_members(h.members, g.members, g.slot)
                    if union is not None:
                        h.members = sorted(union)
                        for m in g.members:
                            self.nodes[m].group = h
                        break
            else:
                kept.append(g)
        return kept

    def iteration_shape(self, group: Group) -> Shape:
        return next(self.nodes[m].type.shape for m in group.members if self.nodes[m].kind == "elementwise")

    def inputs(self, group: Group) -> set[int]:
        """The variables a group reads from outside (ids)."""
        inside = {id(self.nodes[m].var) for m in group.members}
        return {id(a) for m in group.members for a in self.nodes[m].call.args
                if isinstance(a, Var) and id(a) not in inside}

    def merge(self, candidates: list[Group], pos: int) -> list[int] | None:
        members = [pos]
        for g in candidates:
            members = self.merge_members(members, g.members, pos)
            if members is None:
                return None
        return members

    def merge_members(self, members: list[int], more: list[int], pos: int) -> list[int] | None:
        """``members + more`` when they may run as one group at ``pos`` (module docstring)."""
        union = members + more
        if len(union) > MAX_GROUP:
            return None
        inside = set(union)
        for m in union:
            node = self.nodes[m]
            if any(u < pos and u not in inside for u in node.users):
                return None  # someone uses it before the group would run
            if any(p in inside and self.nodes[p].kind == "reduce" for p in node.data):
                return None  # a reduction's value is known only after the loop
        return union

    def outputs(self, group: Group) -> list[int]:
        inside = set(group.members)
        return [m for m in group.members if any(u not in inside for u in self.nodes[m].users)]

    def needed(self, group: Group, outputs: list[int]) -> list[int]:
        """The members the outputs depend on (the others are dead)."""
        inside = set(group.members)
        keep, stack = set(outputs), list(outputs)
        while stack:
            node = self.nodes[stack.pop()]
            for p in node.data + node.shape_only:
                if p in inside and p not in keep:
                    keep.add(p)
                    stack.append(p)
        return [m for m in group.members if m in keep]

    def fused(self, group: Group, outputs: list[int]) -> tuple[Function, list[Expr]]:
        """The group as ``fn primitive`` and the atoms it is called with."""
        renamed: dict[int, Expr] = {}  # id(outer atom) -> its name inside
        params: list[Var] = []
        args: list[Expr] = []
        lets: list[tuple[Var, Expr]] = []
        for m in group.members:
            node = self.nodes[m]
            new_args = []
            for arg in node.call.args:
                producer = self.nodes.get(self.bound.get(id(arg), -1))
                if id(arg) not in renamed:
                    if producer is not None and producer.kind == "source":
                        inner = Var(arg.name_hint, arg.type_annotation)
                        lets.append((inner, source_expr(producer)))
                    elif isinstance(arg, Constant) and arg.value.ndim == 0:
                        inner = arg
                    else:
                        inner = Var(arg.name_hint if isinstance(arg, Var) else "c", atom_type(arg))
                        params.append(inner)
                        args.append(arg)
                    renamed[id(arg)] = inner
                new_args.append(renamed[id(arg)])
            inner = renamed[id(node.var)] = Var(node.var.name_hint, node.type)
            lets.append((inner, Call(node.call.callee, new_args, node.call.attrs, span=node.call.span)))
        results = [renamed[id(self.nodes[m].var)] for m in outputs]
        body: Expr = results[0] if len(results) == 1 else Tuple(results)
        for var, value in reversed(lets):
            body = Let(var, value, body)
        ret = results[0].type_annotation if len(results) == 1 else TupleType([r.type_annotation for r in results])
        return Function(params, body, ret, primitive=True), args

    def rewrite(self) -> Expr | None:
        """The chain with its groups fused, or None when no group forms."""
        self.link()
        placed: dict[int, tuple[Group, list[int], Function, list[Expr]]] = {}  # slot -> group
        for group in self.group():
            members, outputs = group.members, self.outputs(group)
            group.members = self.needed(group, outputs)  # the others compute nothing used: dropped
            try:
                if not outputs or len(group.members) < 2:
                    raise Unsupported("not worth a kernel")
                fn, args = self.fused(group, outputs)
                fused_source(fn)
            except Unsupported:  # its members stay plain calls
                for m in members:
                    self.nodes[m].group = None
                continue
            placed[group.slot] = (group, outputs, fn, args)
        if not placed:
            return None
        bindings: list[tuple[Var, Expr, Any]] = []
        for pos, (var, value, span) in enumerate(self.items):
            node = self.nodes.get(pos)
            if node is None or node.group is None and node.kind != "source":
                bindings.append((var, value, span))
            elif node.group is None:  # a source: kept when an ungrouped item uses it
                if any(u not in self.nodes or self.nodes[u].group is None for u in node.users):
                    bindings.append((var, source_expr(node), span))
            elif pos in placed:
                group, outputs, fn, args = placed[pos]
                call = Call(fn, args)
                if len(outputs) == 1:
                    bindings.append((self.nodes[outputs[0]].var, call, None))
                    continue
                tuple_var = Var("fused", fn.ret_type)
                bindings.append((tuple_var, call, None))
                bindings.extend((self.nodes[m].var, Proj(tuple_var, k), None) for k, m in enumerate(outputs))
        body = self.tail
        for var, value, span in reversed(bindings):
            body = Let(var, value, body, span=span)
        return body


class Fuser(ExprMutator):
    """Fuses every let chain of a function, bottom-up, leaving primitive functions alone."""

    def __init__(self, root: Expr):
        super().__init__()
        self.bodies: set[int] = set()  # Lets that continue a chain (the chain is fused at its head)
        self.frozen: set[int] = set()  # nodes inside primitive functions
        for node in post_order(root):
            if isinstance(node, Let):
                self.bodies.add(id(node.body))
            elif isinstance(node, Function) and node.primitive:
                self.frozen.update(id(n) for n in post_order(node.body))

    def block(self, e: Expr) -> Expr:
        """``e`` fused as a chain (``e`` itself when nothing fuses)."""
        fused = Chain(e).rewrite()
        return e if fused is None else fused

    def rewrite(self, old: Expr, new: Expr) -> Expr:
        if id(old) in self.frozen:
            return new
        if isinstance(old, Let) and id(old) not in self.bodies:
            return self.block(new)
        if isinstance(new, Function) and not new.primitive and not isinstance(new.body, Let):
            body = self.block(new.body)
            return new if body is new.body else attrs.evolve(new, body=body)
        if isinstance(new, If):
            branches = [b if isinstance(b, Let) else self.block(b) for b in (new.then_branch, new.else_branch)]
            if branches[0] is not new.then_branch or branches[1] is not new.else_branch:
                return attrs.evolve(new, then_branch=branches[0], else_branch=branches[1])
        return new


def fuse(module: Module) -> Module:
    """``module`` (typed, as ``typecheck.infer`` returns it) with its fusion groups marked ``fn primitive``."""
    functions = {}
    for name, fn in module.functions.items():
        fuser = Fuser(fn)
        body = fuser.mutate(fn.body)
        if not isinstance(fn.body, Let):
            body = fuser.block(body)
        functions[name] = fn if body is fn.body else attrs.evolve(fn, body=body)
    return module.with_functions(functions)
