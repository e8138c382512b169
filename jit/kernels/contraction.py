"""Index-expression sums of products as one BLAS matrix product per batch entry.

A float definition ``out[I] = sum(K, F(..) * G(..))`` whose factors split the output's indices
(each index is read by F only: a row; by G only: a column; by both: a batch index) is a matrix
product: F over (rows, K) and G over (K, columns) are gathered into matrices (im2col, for a
convolution), one gemm multiplies them, and the product's elements move to their places in
``out``. A factor that reads a 2-D input at (row, k) or (k, column) is used as a view of that
input, not copied (matmul copies nothing). The factors are any expressions (``where`` included),
written and checked as the loop kernels write them (jit/kernels/index_expr.py); BLAS adds in its
own order, so the sums differ from the loops' in their last bits, as the built-in products' do.

Why: loops over the output with the sum inside stream the second operand once per output row
(matmul (16, 800) x (800, 500): 4.6x the built-in gemm), and convolutions with short rows spend
their time entering short inner loops (9.4x at LeNet's second size); the gemm runs at the
built-in kernels' speed.
"""

from __future__ import annotations

from typing import Any

import attrs
import numpy as np

from relayish.ix.language import Bin, Definition, Node, Read, Reduce, Var, free_variables
from relayish.ix.relation import realized

from .blas import gemm_import


@attrs.frozen
class Contraction:
    """How a definition is matrix products: for each position of the ``outer`` output indices,
    ``out[outer]`` viewed as a (``first``, ``second``) matrix is ``a`` gathered over (``first``, ``inner``)
    times ``b`` gathered over (``inner``, ``second``)."""

    a: Node
    b: Node
    outer: tuple[Var, ...]
    first: tuple[Var, ...]
    second: tuple[Var, ...]
    inner: tuple[Var, ...]


def contraction(defn: Definition, found: dict[int, Any], out_dtype: np.dtype) -> Contraction | None:
    """``defn`` as matrix products, or None when it is not a sum of a product whose factors split the
    output's indices, or its dtype has no BLAS. The outer indices are the fewest leading ones after
    which the rest are one run of one factor's indices, then one of the other's: each product then
    writes a contiguous part of ``out`` (a convolution's ``out[n]``, (filters, pixels))."""
    body = defn.body
    if out_dtype.name not in ("float32", "float64") or not isinstance(body, Reduce) or body.kind != "sum":
        return None
    product = body.body
    if not isinstance(product, Bin) or product.op != "*":
        return None
    if realized(found[id(body)]) != out_dtype or realized(found[id(product)]) != out_dtype:
        return None
    free = free_variables(product)
    left, right = free[id(product.a)], free[id(product.b)]
    roles = [(id(v) in left) + 2 * (id(v) in right) for v in defn.indices]  # 1 left only, 2 right only, 3 both
    if 0 in roles:
        return None
    for start in range(len(roles)):
        rest = roles[start:]
        cut = next((k for k in range(1, len(rest)) if rest[k] != rest[0]), None)
        if 3 in rest or cut is None or len(set(rest[cut:])) != 1:
            continue
        a, b = (product.a, product.b) if rest[0] == 1 else (product.b, product.a)
        indices = defn.indices
        return Contraction(a, b, indices[:start], indices[start:start + cut], indices[start + cut:], body.axes)
    return None


def contraction_source(writer: Any, plan: Contraction, out_dtype: np.dtype, params: str, sizes: str, jit: str) -> str:
    """The kernel module's function ``kernel`` (decorated by ``jit``): the gathers and a gemm per
    position of the outer indices. A factor that does not depend on them is gathered once.
    ``writer`` is the loop kernels' statement writer (jit/kernels/index_expr.py)."""
    defn, dtype = writer.defn, f"np.{out_dtype.name}"
    extents = {id(v): writer.dim(v.extent) for v in (*defn.indices, *plan.inner)}
    names = {id(v): writer.name(v) for v in (*defn.indices, *plan.inner)}
    outer = {id(v) for v in plan.outer}

    def count(group: tuple[Var, ...]) -> str:
        return " * ".join(extents[id(v)] for v in group) or "1"

    def flat(group: tuple[Var, ...]) -> str:
        at = ""
        for v in group:
            at = f"({at}) * {extents[id(v)]} + {names[id(v)]}" if at else names[id(v)]
        return at or "0"

    def loops(lines: list[str], depth: int, group: tuple[Var, ...]) -> int:
        return writer.loops(lines, depth, [(names[id(v)], extents[id(v)]) for v in group])

    once: list[str] = []  # before the outer loops
    each: list[str] = []  # inside them
    depth = loops(each, 1, plan.outer)
    operands = []
    for name, factor, rows, columns in (("a", plan.a, plan.first, plan.inner), ("b", plan.b, plan.inner, plan.second)):
        fixed = not (free_variables(factor)[id(factor)] & outer)
        view = _view(writer, factor, rows, columns, out_dtype, extents) if fixed else None
        if view is not None:
            operands.append(view)
            continue
        lines, level = (once, 1) if fixed else (each, depth)
        once.append(f"    {name} = np.empty(({count(rows)}, {count(columns)}), {dtype})\n")
        inside = loops(lines, level, (*rows, *columns))
        value = writer.expression(lines, inside, factor)
        lines.append(f"{'    ' * inside}{name}[{flat(rows)}, {flat(columns)}] = {dtype}({value})\n")
        operands.append(name)
    part = f"out[{', '.join(names[id(v)] for v in plan.outer)}]" if plan.outer else "out"
    each.append(f"{'    ' * depth}_mm({operands[0]}, {operands[1]}, {part}.reshape(({count(plan.first)}, {count(plan.second)})))\n")
    checks = list(dict.fromkeys(writer.checks))
    check = f"    if not ({' and '.join(checks)}):\n        return out, 1\n" if checks else ""
    shape = "".join(f"{extents[id(v)]}, " for v in defn.indices)
    return f"{gemm_import(out_dtype.name, ('_mm',))}\n\n{jit}" \
        f"def kernel({params}):\n{sizes}    out = np.empty(({shape}), {dtype})\n{check}    bad = 0\n" \
        f"{''.join(once)}{''.join(each)}    return out, bad\n"


def _view(writer: Any, factor: Node, first: tuple[Var, ...], second: tuple[Var, ...], out_dtype: np.dtype,
          extents: dict[int, str]) -> str | None:
    """A factor that reads a 2-D input of the output's dtype at (first, second) or (second, first),
    each one index variable: that input's part the product reads, as a view (None otherwise)."""
    if not isinstance(factor, Read) or len(first) != 1 or len(second) != 1 or len(factor.indices) != 2:
        return None
    if realized(writer.found[id(factor)]) != out_dtype or writer.arg_dtypes[factor.input] != out_dtype:
        return None
    a, b = first[0], second[0]
    if not (_same(factor.indices, (a, b)) or _same(factor.indices, (b, a))):
        return None
    for axis, index in enumerate(factor.indices):
        writer.checks.append(writer.range_check(index, f"S{factor.input}_{axis}"))
    window = f"a{factor.input}[:{extents[id(factor.indices[0])]}, :{extents[id(factor.indices[1])]}]"
    return window if factor.indices[0] is a else f"{window}.T"


def _same(xs: tuple[Node, ...], ys: tuple[Node, ...]) -> bool:
    """The same nodes in the same order (nodes compare by identity: ``==`` builds a node)."""
    return len(xs) == len(ys) and all(x is y for x, y in zip(xs, ys))


__all__ = ["Contraction", "contraction", "contraction_source"]
