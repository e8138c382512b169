"""The optimizer: IR-to-IR passes run by ``relayish.compile(..., opt_level=N)`` before lowering.

Calls of operators defined by other operators (a record's ``lowering``: ``layer_norm``,
``logsumexp``, ...) are first replaced by what they stand for (``ad.lowered``), at every level.
Each pass maps a typed module (``Grad`` expanded, ``match`` lowered to ``if``s: ``ad.lowered``) to a
module that type-checks and computes what its input computes (``relayish.testing.assert_pass_preserves`` checks each on the corpus
and on generated programs). The levels (docs/optimizer.md):

- 0: none; the program ``Grad`` wrote is lowered as it is;
- 1: local clean-up, on the A-normal form: constant folding, algebraic simplification of zeros and ones, common
  subexpression elimination, dead code elimination (effects respected);
- 2: level 1 after inlining and partial evaluation, which remove the references and
  backpropagator closures of gradients wherever control flow is static;
- 3 (the default): level 2, then accumulated products (``c + a @ b`` as one gemm) and fusion of
  elementwise chains into single kernels.
"""

from __future__ import annotations

from typing import Callable

from ad import lowered
from relayish.alpha import alpha_equal
from relayish.expr import Call, Function, Op
from relayish.module import Module
from relayish.ops.registry import lookup_op
from relayish.printer import astext
from relayish.traverse import globals_reached, post_order
from relayish.types import BaseType, Kind, TensorType
from typecheck import expr_types, infer

from ..kernels.index_expr import kernel_plan

from .anf import to_anf
from .cse import eliminate_common_subexpressions
from .dce import eliminate_dead_code
from .fold import fold_constants
from .fuse import fuse
from .inline import inline_functions
from .partial_eval import partially_evaluate
from .products import accumulate_products
from .simplify import simplify_algebra

Pass = Callable[[Module], Module]

DEFAULT_OPT_LEVEL = 3
OPT_LEVELS = (0, 1, 2, 3)
CLEANUP_ROUNDS = 3  # at most; each can expose more for the next (a simplified sum feeds CSE, CSE leaves dead code)
CLEANUP: list[Pass] = [fold_constants, simplify_algebra, eliminate_common_subexpressions, eliminate_dead_code]


def optimize(module: Module, name: str, opt_level: int = DEFAULT_OPT_LEVEL) -> Module:
    """The globals ``@name`` reaches in ``module`` (type-checked, ``Grad`` expanded) after the
    passes of ``opt_level`` (each followed by type inference), type-checked. The clean-up
    rounds stop early when one changes nothing. Globals that inlining left unreached are dropped."""
    if opt_level not in OPT_LEVELS:
        raise ValueError(f"opt_level must be one of {OPT_LEVELS}, not {opt_level!r}")
    module = lowered(reached(module, name))  # at every level: a lowered operator has no kernel of its own
    if opt_level >= 1:  # the clean-up wants every value named: partial evaluation names them, or A-normal form
        for run in [inline_functions, partially_evaluate] if opt_level >= 2 else [to_anf]:
            module = _applied(run, module)
        for _ in range(CLEANUP_ROUNDS):
            before = module
            for run in CLEANUP:
                module = _applied(run, module)
            if module is before or alpha_equal(before, module):
                break
    if opt_level >= 3:
        module = _applied(fuse, _applied(accumulate_products, module))
    return reached(module, name)


def _applied(run: Pass, module: Module) -> Module:
    """``run(module)`` type-checked again, or ``module`` itself where the pass changed nothing. Passes
    return the functions they do not rewrite as they were, so a pass that changed nothing returns every
    function of ``module`` itself; type inference is most of the optimizer's time (W4: 3.3 of 6.3 s in
    16 calls, 5 of them after a pass that changed nothing)."""
    after = run(module)
    if after.functions.keys() == module.functions.keys() and all(after[n] is module[n] for n in module.functions):
        return module
    return infer(after)


def reached(module: Module, name: str) -> Module:
    """The globals ``@name`` can call: the only ones worth optimizing and lowering."""
    names = globals_reached(module, module[name]) | {name}
    return module.with_functions({n: fn for n, fn in module.functions.items() if n in names})


def explain(module: Module, name: str, opt_level: int) -> str:
    """The optimized program of ``@name`` as text, then one line per fused kernel (its operators)."""
    lines = [f"# @{name} at opt_level {opt_level}"]
    dims = [tv.name for tv in module[name].type_params if tv.kind is Kind.DIM]
    if dims:
        lines.append(f"# optimized once for every size of {', '.join(dims)}: a new size compiles nothing")
    lines += [astext(module).rstrip(), "", "# fused kernels:"]
    count = 0
    for global_name, fn in module.functions.items():
        for node in post_order(fn):
            if isinstance(node, Call) and isinstance(node.callee, Function) and node.callee.primitive:
                count += 1
                ops = [n.callee.name for n in post_order(node.callee.body) if isinstance(n, Call) and isinstance(n.callee, Op)]
                lines.append(f"#   {count}. in @{global_name}: {len(node.args)} inputs, {len(ops)} operators: {', '.join(ops)}")
    if not count:
        lines.append("#   none")
    lines += _index_operators(module)
    return "\n".join(lines) + "\n"


def _index_operators(module: Module) -> list[str]:
    """One line per call of an index-expression operator: how its CPU kernel computes."""
    types = expr_types(module)
    found = []
    for global_name, fn in module.functions.items():
        for node in post_order(fn):
            op = lookup_op(node.callee.name) if isinstance(node, Call) and isinstance(node.callee, Op) else None
            if op is None or op.definition is None:
                continue
            arg_types = [types.get(id(a)) for a in node.args]
            if all(isinstance(t, TensorType) and isinstance(t.dtype, BaseType) for t in arg_types):
                how = kernel_plan(op.definition, [t.dtype.to_numpy() for t in arg_types])
            else:
                how = "its semantics (the argument types are polymorphic)"
            found.append(f"#   @{op.name} in @{global_name}: {how}")
    return ["", "# index-expression operators (docs/index-expressions.md):", *found] if found else []
