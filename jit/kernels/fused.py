"""Kernels of fusion groups (``fn primitive`` literals, made by jit/passes/fuse.py): one Numba
function per group, one pass over memory.

The group's body is a let chain of elementwise operator calls and reductions sharing one
iteration shape S (the elementwise results' shape). The kernel loops over S once: each statement
becomes one line of per-element code written as the elementwise kernels write it (the operator's
element expression through ``element_code``, casts through ``_conversion``: the same expressions and
vectorizable approximations of tanh, exp, log, ...), each result rounded to its dtype; elementwise outputs are
stored, reductions accumulated. Broadcasting is static (the pass admits only dimensions equal to
S's or the constant 1): every array is made C-contiguous and walks the axes of S where its
dimension is not 1; neighbouring axes that every array walks alike are merged at generation time,
so W1 is one flat loop and a bias add one loop per row with the bias read as a contiguous slice.
Operands constant along the innermost axis are read once per row.

Reductions accumulate in float64 (int64/uint64 for integers, which wrap to the dtype at the end as
NumPy's sums do). Where the innermost axis is reduced, the loop runs in tiles of ``TILE`` elements:
a tile's floats are summed in their own dtype with ``_lane_add`` (jit/kernels/vectorize.py), which
LLVM adds in vector lanes (some 32 partial sums of 32 elements each for float32), and the tile's sum
joins the float64 total; a reduction over kept inner positions adds rows elementwise. The error is
that of NumPy's pairwise sum, which also adds float32 values in short float32 runs; a tile's sum
in float64 instead (values stored to a buffer, then converted and added) made W1's forward loop
1.5x slower.

Vectors. The loops (``_part``, ``_fused``) prefer 512-bit vectors where the machine has them
(jit/kernels/vector_width.py: LLVM's default for these cores is 256; W1's loop is 12% faster).

Threads. The loops are a function ``_part(arrays, outputs, lo, hi)`` over ``[lo, hi)`` of the
outermost merged axis, compiled ``nogil``, returning its own accumulators; ``_finish`` makes the
results of the outputs and the accumulators. For large groups (W1's million elements) ``kernel``
splits the range into chunks (jit/threads.py: whole tiles when that axis is the innermost one) that
run ``_part`` on every core, and adds the chunks' float64 accumulators in chunk order. Chunks depend
on the sizes alone, so the result is the same bits on any number of threads. A smaller group runs in
one call of ``_fused``, the same loops over the whole range and the same finish written out in one
function: Numba compiles only the functions a program calls, and one function instead of three
(``_fused`` calling the other two) more than halves a fused kernel's compile time.

log, sin and cos need libm for some arguments (see elementwise.py): the loop flags such elements,
and only when one occurred the whole group runs again with the exact per-element choice.

A kernel is keyed by its source, which holds everything it depends on (statements, attributes,
dtypes, ranks and broadcast pattern; not the sizes), cached in memory and on disk by the registry.
Generation raises ``Unsupported`` for a group outside these rules; the pass leaves such a group
unfused.
"""

from __future__ import annotations

import re
from typing import Any, Callable

from relayish.expr import Call, Constant, Expr, Function, Let, Tuple, Var
from relayish.ops.element import arguments_used
from relayish.ops.registry import lookup_op
from relayish.types import BaseType, Shape, TensorType, Type

from .elementwise import _HEADER, _Code, _conversion, _decorator, element_code
from .reduce import literal, numpy_type, product, shape_tuple
from .registry import kernel_from_source
from .vectorize import SOURCE as VECTORIZE

TILE = 1024  # elements per tile of a loop whose innermost axis is reduced (summed in the dtype)
REDUCTIONS = ("sum", "mean")
COPIES = ("broadcast_to", "broadcast_to_like")
NOT_READ = {"broadcast_to_like": (1,), "cast_like": (1,)}  # shape or dtype only


def not_read(op: str, nargs: int) -> tuple[int, ...]:
    """The arguments whose values ``op`` does not read (only their shapes or dtypes)."""
    record = lookup_op(op)
    if record is None or record.element is None:  # None: an operator only declared (not fused: no kernel)
        return NOT_READ.get(op, ())
    used = arguments_used(record.element)
    return tuple(k for k in range(nargs) if k not in used)


class Unsupported(Exception):
    """A group this generator does not compile (the pass leaves it unfused)."""


def _tensor(ty: Type | None) -> TensorType:
    if isinstance(ty, TensorType) and isinstance(ty.dtype, BaseType) and isinstance(ty.shape, Shape):
        dtype = ty.dtype.to_numpy().name
        if dtype != "float16":
            return ty
    raise Unsupported(f"not a tensor of a concrete dtype and rank, or float16: {ty}")


def _dtype(ty: Type | None) -> str:
    return _tensor(ty).dtype.to_numpy().name


def _atom_dtype(atom: Expr) -> str:
    return atom.value.dtype.name if isinstance(atom, Constant) else _dtype(atom.type_annotation)


def _substitute(expr: str, operands: list[str]) -> str:
    """An element expression of ``x`` (unary) or ``x0, x1, x2`` with the operands' names put in."""
    return re.sub(r"\bx([0-2]?)\b", lambda m: operands[int(m.group(1) or 0)], expr)


class _Group:
    """What the kernel of one group needs, read off the ``fn primitive`` literal."""

    def __init__(self, fn: Function):
        self.fn = fn
        self.statements: list[tuple[Var, Expr]] = []
        e = fn.body
        while isinstance(e, Let):
            self.statements.append((e.var, e.value))
            e = e.body
        self.results = list(e.fields) if isinstance(e, Tuple) else [e]
        if not all(isinstance(r, Var) for r in self.results):
            raise Unsupported("a group returns variables")
        elementwise = [v for v, value in self.statements if isinstance(value, Call) and
                       value.callee.name not in REDUCTIONS and value.args]
        if not elementwise:
            raise Unsupported("a group has an elementwise statement")
        self.shape = _tensor(elementwise[0].type_annotation).shape.dims
        if not self.shape:
            raise Unsupported("rank-0 groups are scalar code")
        self.rank = len(self.shape)
        self.params = list(fn.params)
        self.read: set[int] = set()  # ids of parameters read by value
        for var, value in self.statements:
            if isinstance(value, Call):
                skipped = not_read(value.callee.name, len(value.args))
                self.read.update(id(a) for k, a in enumerate(value.args) if k not in skipped)

    def walks(self, ty: Type) -> tuple[bool, ...]:
        """Per axis of S: whether a value of type ``ty`` varies along it (else it broadcasts)."""
        dims = _tensor(ty).shape.dims
        lead = self.rank - len(dims)
        if lead < 0:
            raise Unsupported(f"{ty} has a higher rank than the group's shape")
        flags = []
        for d in range(self.rank):
            if d < lead or dims[d - lead].value == 1:
                flags.append(False)
            elif dims[d - lead] == self.shape[d]:
                flags.append(True)
            else:
                raise Unsupported(f"{ty} does not broadcast statically to the group's shape")
        return tuple(flags)

    def size(self, d: int) -> str:
        """Source of the size of axis ``d`` of S: read off a parameter (sizes stay out of the
        kernel, so that one kernel serves every size), else a constant."""
        for k, p in enumerate(self.params):
            dims = _tensor(p.type_annotation).shape.dims
            lead = self.rank - len(dims)
            if d >= lead and dims[d - lead] == self.shape[d]:
                return f"a{k}.shape[{d - lead}]"
        if self.shape[d].value is not None:
            return str(self.shape[d].value)
        raise Unsupported(f"no argument has the group's dimension {self.shape[d]}")


def _reduced_axes(call: Call, rank: int) -> tuple[int, ...]:
    axis = lookup_op(call.callee.name).full_attrs(call.attrs)["axis"]
    if axis is None:
        return tuple(range(rank))
    return tuple(sorted(a % rank for a in ((axis,) if isinstance(axis, int) else axis)))


def fused_source(fn: Function) -> str:
    """The kernel module of group ``fn`` (module docstring); raises ``Unsupported``."""
    g = _Group(fn)
    code = _Code()
    names: dict[int, str] = {}  # id(var) -> element value name
    helpers: list[str] = []
    element: list[tuple[str, str, str, tuple[str, str] | None]] = []  # (name, dtype, expression, fixup)
    reductions: list[tuple[Var, Call, str, tuple[int, ...]]] = []  # (var, call, input name, reduced axes)
    for k, p in enumerate(g.params):
        names[id(p)] = f"e{k}"
    for i, (var, value) in enumerate(g.statements):
        name = f"v{i}"
        if isinstance(value, Constant):
            names[id(var)] = name
            element.append((name, numpy_type(value.value.dtype.name), literal(value.value[()], value.value.dtype.name),
                            None))
            continue
        if not isinstance(value, Call):
            raise Unsupported(f"a statement that is not an operator call: {value}")
        op, args = value.callee.name, value.args
        out = _dtype(var.type_annotation)
        if op in REDUCTIONS:
            if _tensor(args[0].type_annotation).shape.dims != g.shape:
                raise Unsupported("a reduction of a tensor of another shape than the group's")
            reductions.append((var, value, names[id(args[0])], _reduced_axes(value, g.rank)))
            continue
        names[id(var)] = name
        if _tensor(var.type_annotation).shape.dims != g.shape and op != "full":
            raise Unsupported("elementwise results of different shapes")
        operands = [literal(a.value[()], a.value.dtype.name) if isinstance(a, Constant) else names.get(id(a), "")
                    for a in args]
        fixup = None
        if op == "full":
            expr = literal(lookup_op("full").full_attrs(value.attrs)["fill_value"], out)
        elif op in ("cast", "cast_like"):
            expr = _conversion(_atom_dtype(args[0]), out)
        elif op in COPIES:
            expr = "x"
        else:  # the record's element expression
            parts = element_code(op, [_atom_dtype(a) for a in args],
                                 ["x"] if len(args) == 1 else [f"x{k}" for k in range(len(args))])
            if parts.divisor is not None or parts.exponent is not None:
                raise Unsupported(f"{op} on these dtypes can raise: not fused")
            expr, fixup = parts.expr, parts.fixup
            helpers.append(parts.helpers)
        if any(not operands[k] for k in range(len(args)) if k not in not_read(op, len(args))):
            raise Unsupported("a statement reads a reduction's value")
        fix = None if fixup is None else (_substitute(fixup[0], operands), _substitute(fixup[1], operands))
        element.append((name, numpy_type(out), _substitute(expr, operands), fix))
    reduced_vars = {id(v) for v, *_ in reductions}
    outputs = [r for r in g.results if id(r) not in reduced_vars]
    if any(_tensor(r.type_annotation).shape.dims != g.shape for r in outputs):
        raise Unsupported("an output of another shape than the group's")

    # Entities walking the iteration space, and their walk flags per axis of S.
    read = [k for k, p in enumerate(g.params) if id(p) in g.read]
    entities: dict[str, tuple[bool, ...]] = {f"f{k}": g.walks(g.params[k].type_annotation) for k in read}
    full = tuple(d.value != 1 for d in g.shape)
    entities.update({f"g{q}": full for q in range(len(outputs))})
    entities.update({f"acc{r}": tuple(d not in axes and full[d] for d in range(g.rank))
                     for r, (_, _, _, axes) in enumerate(reductions)})
    # Axes merged where every entity walks alike; axes of constant size 1 dropped.
    merged: list[list[int]] = []
    for d in range(g.rank):
        if not full[d]:
            continue
        if merged and all(w[merged[-1][-1]] == w[d] for w in entities.values()):
            merged[-1].append(d)
        else:
            merged.append([d])
    if not merged:
        merged = [[]]
    axes = range(len(merged))
    walk = {e: [bool(m) and w[m[0]] for m in merged] for e, w in entities.items()}
    if merged == [[]]:  # every axis has size 1: the outputs still store their one element
        walk.update({e: [True] for e in entities if e.startswith("g")})

    def stride(e: str, c: int) -> str:
        return product([f"n{x}" for x in axes if x > c and walk[e][x]])

    inner = len(merged) - 1
    tiled = [r for r, *_ in enumerate(reductions) if not walk[f"acc{r}"][inner]]
    accumulators, tile_sums = [], []  # the sums' types; a tile of floats is summed in lanes of its own dtype
    for var, call, _, _ in reductions:
        dtype = _dtype(call.args[0].type_annotation)
        accumulators.append("np.float64" if dtype.startswith("float") else
                            "np.uint64" if dtype.startswith("uint") else "np.int64")
        tile_sums.append(numpy_type(dtype) if dtype.startswith("float") else accumulators[-1])
    fixups = any(fix for *_, fix in element)
    sizes = [f"N{d} = {g.size(d)}" for d in range(g.rank)] + \
        [f"n{c} = {product([f'N{d}' for d in m])}" for c, m in enumerate(merged)]
    shape = shape_tuple([f"N{d}" for d in range(g.rank)])
    allocations = [f"o{q} = np.empty({shape}, {numpy_type(_dtype(r.type_annotation))})" for q, r in enumerate(outputs)]
    arrays = [f"a{k}" for k in range(len(g.params))]
    params = ", ".join(arrays)
    contiguous = [f"c{k} = np.ascontiguousarray(a{k})" for k in read]
    outs = [f"o{q}" for q in range(len(outputs))]
    part_args = ", ".join([f"c{k}" if k in read else f"a{k}" for k in range(len(g.params))] + outs)
    accs = [f"acc{r}" for r in range(len(reductions))]

    # The loops over [lo, hi) of the outermost merged axis, from the contiguous operands c* into the
    # outputs o* and accumulators acc* (zero outside the range): the body of _part (one chunk) and of
    # _fused (the whole range, so that a group run in one call compiles one function, not three).
    code(1, *(f"f{k} = c{k}.reshape(-1)" for k in read))
    code(1, *(f"g{q} = o{q}.reshape(-1)" for q in range(len(outputs))))
    for r in range(len(reductions)):
        kept = product([f"n{c}" for c in axes if walk[f"acc{r}"][c]])
        code(1, f"acc{r} = np.zeros({kept}, {accumulators[r]})")

    def nest(level: int, exact: bool) -> None:
        """The loops over the merged axes; ``exact``: the elements approximations do not cover go to libm."""
        base = {e: "0" for e in entities}
        for c in range(inner):
            code(level, f"for i{c} in range({'lo, hi' if c == 0 else f'n{c}'}):")
            level += 1
            for e in entities:
                if walk[e][c]:
                    code(level, f"b{e}_{c} = {base[e]} + i{c} * {stride(e, c)}")
                    base[e] = f"b{e}_{c}"
        code(level, *(f"e{k} = f{k}[{base[f'f{k}']}]" for k in read if not walk[f"f{k}"][inner]))
        code(level, *(f"q{r} = {accumulators[r]}(0)" for r in tiled))
        start, end = ("lo", "hi") if inner == 0 else ("0", f"n{inner}")
        count, offset = f"{end} - {start}", f" + {start}"
        if tiled:
            code(level, f"for t in range({start}, {end}, {TILE}):")
            level += 1
            code(level, f"m = min({TILE}, {end} - t)", *(f"p{r} = {tile_sums[r]}(0)" for r in tiled))
            count, offset = "m", " + t"
        views = {"f": "w", "g": "u", "acc": "s"}
        for e in entities:
            if walk[e][inner]:
                prefix = e.rstrip("0123456789")
                first = f"{base[e]}{offset}"
                code(level, f"{views[prefix]}{e[len(prefix):]} = {e}[{first}:{first} + {count}]")
        code(level, "for j in range(" + count + "):")
        body = [f"e{k} = w{k}[j]" for k in read if walk[f"f{k}"][inner]]
        for name, wrap, expr, fix in element:
            if fix and exact:
                body.append(f"{name} = {wrap}({fix[1]}) if {fix[0]} else {wrap}({expr})")
            else:
                body.append(f"{name} = {wrap}({expr})")
                if fix:
                    body.append(f"redo |= {fix[0]}")
        body += [f"u{q}[j] = {names[id(r)]}" for q, r in enumerate(outputs)]
        for r, (_, _, source, _) in enumerate(reductions):
            if r not in tiled:
                body.append(f"s{r}[j] += {accumulators[r]}({source})")
            elif tile_sums[r].startswith("np.float"):
                body.append(f"p{r} = _lane_add(p{r}, {tile_sums[r]}({source}))")
            else:
                body.append(f"p{r} += {tile_sums[r]}({source})")
        code(level + 1, *body)
        code(level, *(f"q{r} += {accumulators[r]}(p{r})" for r in tiled))
        if tiled:
            level -= 1
        code(level, *(f"acc{r}[{base[f'acc{r}']}] += q{r}" for r in tiled))

    if fixups:
        code(1, "redo = False")
    nest(1, exact=False)
    if fixups:
        code(1, "if redo:")
        code(2, *(f"acc{r}[:] = 0" for r in range(len(reductions))))
        nest(2, exact=True)
    loops = code.text()

    # The results from the outputs and the (combined) accumulators: the end of _finish and of _fused.
    code = _Code()
    returned = []
    for r in g.results:
        if id(r) not in reduced_vars:
            returned.append(f"o{outputs.index(r)}")
            continue
        k = next(i for i, (v, *_) in enumerate(reductions) if v is r)
        _, call, _, reduced = reductions[k]
        out = numpy_type(_dtype(r.type_annotation))
        count = product([f"N{d}" for d in reduced])
        value = f"acc{k}[z] / ({count})" if call.callee.name == "mean" else f"acc{k}[z]"
        code(1, f"r{k} = np.empty(acc{k}.size, {out})", f"for z in range(acc{k}.size):")
        code(2, f"r{k}[z] = {out}({value})")
        dims = _tensor(r.type_annotation).shape.dims
        if dims:
            keep = lookup_op(call.callee.name).full_attrs(call.attrs)["keepdims"]
            kept_sizes = [("1" if d in reduced else f"N{d}") for d in range(g.rank) if keep or d not in reduced]
            code(1, f"r{k} = r{k}.reshape({shape_tuple(kept_sizes)})")
        returned.append(f"r{k}")
    code(1, f"return {shape_tuple(returned) if len(returned) > 1 else returned[0]}")
    finish = code.text()
    finish_args = ", ".join(arrays + outs + accs)
    head = "".join(f"    {line}\n" for line in sizes)
    part_head = head + "".join(f"    c{k} = a{k}\n" for k in read)  # _part is given contiguous operands
    serial_head = "".join(f"    {line}\n" for line in [*sizes, *contiguous, *allocations, "lo, hi = 0, n0"])

    # kernel: _fused, the whole group in one call, or chunks on every thread when they pay.
    per_unit = product([f"n{c}" for c in axes if c > 0])
    code = _Code()
    code(1, *sizes)
    for k in read:  # the loops index every operand with the group's sizes: they must be its own
        ty = g.params[k].type_annotation
        flags = g.walks(ty)
        expected = shape_tuple([f"N{d}" if flags[d] else "1" for d in range(g.rank - _tensor(ty).shape.rank, g.rank)])
        code(1, f"if a{k}.shape != {expected}:",
             f"    raise ValueError(f'a fused kernel got an operand of shape {{a{k}.shape}} for {{{expected}}}')")
    code(1, f"bounds = None if n0 * {per_unit} < 2 * threads.CHUNK else "
            f"threads.chunk_bounds(n0, {per_unit}, {TILE if inner == 0 else 1})")
    code(1, "if bounds is None:")
    code(2, f"out = _fused({params})")
    code(1, "else:")
    code(2, *contiguous, *allocations, f"parts = threads.run_chunks(_part, ({part_args},), bounds)")
    code(2, *(f"acc{r} = sum(p[{r}] for p in parts)" for r in range(len(reductions))))
    code(2, f"out = _finish({finish_args})")
    wrapper_head = code.text()

    unique_helpers = "".join(dict.fromkeys(h for h in helpers if h))
    scalars = [i for i, r in enumerate(g.results) if not _tensor(r.type_annotation).shape.dims]
    results = ", ".join(f"out[{i}][0]" if i in scalars else f"out[{i}]" for i in range(len(g.results)))
    wrapper = ("    return out[0]\n" if scalars else "    return out\n") if len(g.results) == 1 else \
        f"    return ({results},)\n"
    loop_decorator = _decorator(fastmath=bool(unique_helpers), nogil=True)
    returned_accs = f"    return {shape_tuple(accs)}\n" if accs else "    return None\n"
    return (f"{_HEADER}from jit import threads\n{VECTORIZE}{unique_helpers}\n\n"
            f"{loop_decorator}\ndef _part({', '.join(arrays + outs + ['lo', 'hi'])}):\n"
            f"    _wide_vectors()\n{part_head}{loops}{returned_accs}\n\n"
            f"{_decorator(nogil=True)}\ndef _finish({finish_args}):\n{head}{finish}\n\n"
            f"{loop_decorator}\ndef _fused({params}):\n    _wide_vectors()\n{serial_head}{loops}{finish}\n\n"
            f"def kernel({params}):\n{wrapper_head}{wrapper}")


def fused_kernel(fn: Function) -> Callable[..., Any]:
    """The compiled kernel of group ``fn``: arrays in (rank 0 as 0-d arrays), its results out (a
    tuple when it has several; rank-0 results as NumPy scalars)."""
    return kernel_from_source("fused", fused_source(fn))
