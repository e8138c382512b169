"""Inlining: a call of a known, non-recursive function becomes a copy of its body.

Inlined are calls of globals that are not part of a recursive cycle of the call graph,
calls of variables bound by ``let`` to a function literal that does not call itself, and
direct calls of function literals ``(fn (%x) {..})(a)``. The call becomes
``let %x' = a in body'``: the arguments are still evaluated first and in order (the
callee, a variable or literal, has no effect), and the copy has fresh binders
(``util.fresh_copy``). A polymorphic global is inlined as its instance at the call site:
its type parameters replaced, in every annotation of the copy, by what the type checker
instantiated them with there (``typecheck.type_arguments``), so a program written over a
batch ``Dim`` is optimized as its static twin is. Left alone: fusion groups (``fn primitive``),
a polymorphic global whose call site leaves a type parameter undetermined, and functions
whose body has more than ``MAX_INLINED_NODES`` nodes (each call would copy it). Globals are processed callees
first, so what is inlined is already inlined inside. Every global stays in the module,
used or not: any of them may be the entry.
"""

from __future__ import annotations

from relayish.expr import Call, Expr, Function, GlobalVar, Let, Var
from relayish.errors import RelayTypeError
from relayish.module import Module
from relayish.traverse import globals_reached, post_order
from typecheck import type_arguments

from .util import ScopedRewriter, instantiated, lets

MAX_INLINED_NODES = 2000


def inline_functions(module: Module) -> Module:
    """``module`` with calls of non-recursive functions replaced by their bodies."""
    done: dict[str, Function] = {}
    type_args = polymorphic_call_sites(module)
    for name in _callees_first(module):
        done[name] = _Inliner(module, done, type_args).rewrite_function(module[name])
    return module.with_functions({name: done[name] for name in module.functions})


def polymorphic_call_sites(module: Module) -> dict:
    """``typecheck.type_arguments`` of a module that has polymorphic globals (else nothing to
    look up); a module without every annotation gives none, and its polymorphic calls stay."""
    if not any(fn.type_params for fn in module.functions.values()):
        return {}
    try:
        return type_arguments(module)
    except RelayTypeError:
        return {}


def _callees_first(module: Module) -> list[str]:
    """Every global, each after the globals it calls (except around a recursive cycle)."""
    order: list[str] = []
    state: set[str] = set()
    for root in module.functions:
        if root in state:
            continue
        state.add(root)
        stack = [(root, iter(_callees(module[root])))]
        while stack:
            name, callees = stack[-1]
            child = next(callees, None)
            if child is None:
                stack.pop()
                order.append(name)
            elif child in module.functions and child not in state:
                state.add(child)
                stack.append((child, iter(_callees(module[child]))))
    return order


def _callees(fn: Function) -> list[str]:
    return sorted({n.name for n in post_order(fn) if isinstance(n, GlobalVar)})


class _Inliner(ScopedRewriter):
    def __init__(self, module: Module, done: dict[str, Function], type_args: dict) -> None:
        super().__init__()
        self.module = module
        self.done = done  # globals already processed (callees come first)
        self.type_args = type_args  # id(global var) -> its type arguments (the module's own nodes)
        self.recursive: dict[str, bool] = {}
        self.local: dict[int, Function] = {}  # id(var) -> the non-recursive literal it is bound to
        self.used: set[int] = set()  # variables seen so far: a let's own variable in its value means recursion
        self.sizes: dict[int, tuple[Function, bool]] = {}  # id(function) -> (it, small enough to copy)

    def use(self, var: Var) -> Expr:
        self.used.add(id(var))
        return super().use(var)

    def bind(self, let: Let, value: Expr) -> Expr | None:
        if isinstance(value, Function) and id(let.var) not in self.used:
            self.local[id(let.var)] = value
        return value

    def rebuild(self, old: Expr, new: Expr) -> Expr:
        if not isinstance(new, Call):
            return new
        fn = self.target(new.callee)
        if fn is None or fn.primitive or len(fn.params) != len(new.args) or not self.small(fn):
            return new
        copy = instantiated(fn, self.type_args.get(id(old.callee)))
        if copy is None:
            return new
        return lets([(p, a, new.span) for p, a in zip(copy.params, new.args)], copy.body)

    def target(self, callee: Expr) -> Function | None:
        if isinstance(callee, Function):
            return callee
        if isinstance(callee, Var):
            return self.local.get(id(callee))
        if isinstance(callee, GlobalVar) and callee.name in self.done and not self.is_recursive(callee.name):
            return self.done[callee.name]
        return None

    def is_recursive(self, name: str) -> bool:
        if name not in self.recursive:
            self.recursive[name] = name in globals_reached(self.module, self.module[name])
        return self.recursive[name]

    def small(self, fn: Function) -> bool:
        if id(fn) not in self.sizes:
            count = 0
            for _ in post_order(fn.body):
                count += 1
                if count > MAX_INLINED_NODES:
                    break
            self.sizes[id(fn)] = (fn, count <= MAX_INLINED_NODES)
        return self.sizes[id(fn)][1]
