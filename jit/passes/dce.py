"""Dead code elimination that respects effects.

``let x = e in body`` is dropped when ``x`` is not needed and ``e`` has no effect and
cannot fail (``util.removable_nodes``: no calls of functions, which may write references,
loop forever or fail; no ``:=``; no operator that may raise, such as integer division,
``take`` or a reduction over a possibly empty axis). A write ``r := v`` is kept whenever
the reference may be read: it is dropped only for a *dead* reference, one created by
``let r = Ref(..)`` that no kept code reads (``!r``) or uses as a value (passes, stores,
captures in a closure that is kept, returns), only as the target of ``:=``. Such a cell is
invisible: its writes go (their values too when removable, else they are still evaluated)
and its creation goes. A read whose value only flows back into the same dead cell,
``r := !r + g`` (the adjoints ``Grad`` accumulates for constants), does not make the cell
live, and neither does a use in code that is itself dropped.

Liveness is a mark phase from what must run (the result of every function that runs,
every effect) over a worklist, then a sweep; both iterative. Dropping a binding never
drops an effect, so one run reaches the fixpoint.
"""

from __future__ import annotations

from relayish.expr import Expr, Function, Let, RefNew, RefWrite, Tuple, Var
from relayish.module import Module
from relayish.traverse import post_order

from .util import ScopedRewriter, let_values, map_functions, removable_nodes


def eliminate_dead_code(module: Module) -> Module:
    """``module`` without the bindings, writes and references nothing needs."""
    return map_functions(module, _eliminate)


def _eliminate(fn: Function) -> Function:
    liveness = _Liveness(fn)
    if not liveness.waiting and liveness.values.keys() <= liveness.live:
        return fn  # nothing to drop: no dead binding, no write to a dead cell
    return _Sweep(liveness).rewrite_function(fn)


class _Liveness:
    """Marks every variable whose value is needed, from the function's result and its effects.

    A variable bound to ``Ref(..)`` is a *cell*: a write to it waits until the cell is needed
    (read, or used as a value, by kept code), and is dropped if that never happens."""

    def __init__(self, fn: Function) -> None:
        nodes = list(post_order(fn))
        self.removable = removable_nodes(nodes)
        self.cells = {id(n.var) for n in nodes if isinstance(n, Let) and isinstance(n.value, RefNew)}
        self.values = let_values(nodes)
        self.live: set[int] = set()
        self.waiting: dict[int, list[RefWrite]] = {}  # writes to a cell, needed once the cell is
        self.visited: set[int] = set()
        self.stack: list[Expr] = [fn.body]
        while self.stack:
            self.visit(self.stack.pop())

    def dead_cell(self, ref: Expr) -> bool:
        return isinstance(ref, Var) and id(ref) in self.cells and id(ref) not in self.live

    def need(self, var: Var) -> None:
        if id(var) in self.live:
            return
        self.live.add(id(var))
        if id(var) in self.values:
            self.stack.append(self.values[id(var)])
        self.stack.extend(self.waiting.pop(id(var), ()))

    def visit(self, e: Expr) -> None:
        """``e`` is kept: what it uses is needed, except removable bindings and dead cells' writes."""
        if id(e) in self.visited:
            return
        self.visited.add(id(e))
        if isinstance(e, Var):
            self.need(e)
        elif isinstance(e, Let):
            while isinstance(e, Let):
                if id(e.value) not in self.removable:  # kept for its effect (a write to a cell: see below)
                    self.stack.append(e.value)
                e = e.body
            self.stack.append(e)
        elif isinstance(e, Function):
            self.stack.append(e.body)
        elif isinstance(e, RefWrite) and self.dead_cell(e.ref):
            self.waiting.setdefault(id(e.ref), []).append(e)
            self.visited.discard(id(e))  # visited again, whole, if the cell turns out live
            if id(e.value) not in self.removable:
                self.stack.append(e.value)
        else:
            self.stack.extend(e.children())


class _Sweep(ScopedRewriter):
    """Drops the bindings nothing needs and the writes to dead cells."""

    def __init__(self, liveness: _Liveness) -> None:
        super().__init__()
        self.liveness = liveness

    def dead_write(self, e: Expr) -> bool:
        return isinstance(e, RefWrite) and self.liveness.dead_cell(e.ref)

    def bind(self, let: Let, value: Expr) -> Expr | None:
        if id(let.var) in self.liveness.live:
            return value
        old = let.value
        if id(old) in self.liveness.removable or self.dead_write(old) and id(old.value) in self.liveness.removable:
            return None
        return value

    def rebuild(self, old: Expr, new: Expr) -> Expr:
        if not self.dead_write(old):
            return new
        unit = Tuple([], span=old.span)
        if id(old.value) in self.liveness.removable:
            return unit
        return Let(Var("u", span=old.span), new.value, unit, span=old.span)

