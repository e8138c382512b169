"""Accumulated products: ``let p = a @ b in ... let s = c + p`` becomes the group
``let s = fn primitive (%c, %a, %b) { %c + @matmul(%a, %b) }(c, a, b)``, which the JIT runs as one
BLAS gemm adding into ``c`` (in place when nothing else can see ``c``: jit/lower.py).

A weight gradient summed over the steps of an unrolled loop (W4's ``dWh = sum_t h_t^T d_t``) is a
chain of such additions: without this pass every product is a new array and fusion adds the fifty of
them in one pass at the end (3 MB read for W4's two weights); with it each product lands in one buffer.
``x @ Wx + h @ Wh`` becomes one product added into the other.

Rewritten, within one let chain, when ``s``, ``c`` and ``p`` have one type (a float32 or float64
matrix: no broadcast), ``p`` is read only by this addition, and the product cannot fail (both
operands are matrices whose inner dimensions the types say are equal), so computing it later, at the
addition, changes nothing but the order of the float additions (the gemm adds the product's terms
to ``c``). Addition commutes exactly, so ``p + c`` is rewritten too. Runs before fusion, which leaves
the groups alone.
"""

from __future__ import annotations

from collections import Counter

import attrs

from relayish.expr import Call, Expr, Function, Let, Op, Var
from relayish.module import Module
from relayish.traverse import ExprMutator, post_order, use_counts
from relayish.types import FloatType, Shape, TensorType, Type, has_unknown_dim

from .util import lets, map_functions

FLOATS = (FloatType(32), FloatType(64))


def accumulate_products(module: Module) -> Module:
    """``module`` (typed) with each ``c + a @ b`` of a let chain as a ``matmul_add`` group."""
    return map_functions(module, _rewrite_function)


def is_matmul_add(fn: Function) -> bool:
    """Whether ``fn`` is the group this pass makes: ``fn primitive (%c, %a, %b) { %c + @matmul(%a, %b) }``."""
    body = fn.body
    if not (fn.primitive and len(fn.params) == 3 and _op_call(body, "add")):
        return False
    c, product = body.args
    return c is fn.params[0] and _op_call(product, "matmul") and list(product.args) == list(fn.params[1:])


def _op_call(e: Expr, name: str) -> bool:
    return isinstance(e, Call) and isinstance(e.callee, Op) and e.callee.name == name and not e.attrs


def _matrix(ty: Type | None) -> TensorType | None:
    if isinstance(ty, TensorType) and ty.dtype in FLOATS and isinstance(ty.shape, Shape) and ty.shape.rank == 2 \
            and not has_unknown_dim(ty):
        return ty
    return None


def _product(value: Expr) -> bool:
    """``a @ b`` of two matrices of one float dtype whose inner dimensions are equal by their types."""
    if not (_op_call(value, "matmul") and all(isinstance(a, Var) for a in value.args)):
        return False
    a, b = (_matrix(v.type_annotation) for v in value.args)
    return a is not None and b is not None and a.dtype == b.dtype and a.shape.dims[1] == b.shape.dims[0]


def _rewrite_function(fn: Function) -> Function:
    uses = use_counts(fn)
    bodies, frozen = set(), set()  # Lets that continue a chain; nodes inside primitive functions
    for node in post_order(fn):
        if isinstance(node, Let):
            bodies.add(id(node.body))
        elif isinstance(node, Function) and node.primitive:
            frozen.update(id(n) for n in post_order(node.body))

    class Rewrite(ExprMutator):
        def rewrite(self, old: Expr, new: Expr) -> Expr:
            if isinstance(old, Let) and id(old) not in bodies and id(old) not in frozen:
                return _rewrite_chain(new, uses)
            return new

    body = Rewrite().mutate(fn.body)
    return fn if body is fn.body else attrs.evolve(fn, body=body)


def _rewrite_chain(head: Let, uses: Counter[int]) -> Expr:
    """The chain starting at ``head`` with its accumulations grouped (``head`` when none is)."""
    items, e = [], head
    while isinstance(e, Let):
        items.append((e.var, e.value, e.span))
        e = e.body
    products = {id(var): k for k, (var, value, _) in enumerate(items) if uses[id(var)] == 1 and _product(value)}
    dropped: set[int] = set()
    for k, (var, value, span) in enumerate(items):
        if not (_op_call(value, "add") and all(isinstance(a, Var) for a in value.args)
                and _matrix(var.type_annotation) is not None
                and all(a.type_annotation == var.type_annotation for a in value.args)):
            continue
        u, v = value.args
        pick = v if id(v) in products else u if id(u) in products else None
        if pick is None or u is v:
            continue
        c = u if pick is v else v
        j = products.pop(id(pick))
        dropped.add(j)
        items[k] = (var, Call(_group(c, value, items[j][1], var.type_annotation), [c, *items[j][1].args]), span)
    if not dropped:
        return head
    return lets([item for k, item in enumerate(items) if k not in dropped], e)


def _group(c: Var, add: Call, product: Call, result: Type) -> Function:
    """``fn primitive (%c, %a, %b) { %c + @matmul(%a, %b) }`` for ``c + a @ b``."""
    params = [Var(x.name_hint, x.type_annotation) for x in (c, *product.args)]
    body = Call(add.callee, [params[0], Call(product.callee, params[1:], span=product.span)], span=add.span)
    return Function(params, body, result, primitive=True)
