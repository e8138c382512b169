"""A module as both backends run it: type-checked, with every ``Grad`` expanded.

The evaluator runs the prepared module; the JIT optimizes and lowers it. Preparing once, here,
is what makes the two run the same program (the expansion decides what a gradient computes).
"""

from __future__ import annotations

import collections

from ad import expand
from relayish.module import Module


_PREPARED: collections.OrderedDict = collections.OrderedDict()
PREPARED_CACHE_SIZE = 16


def prepared(module: Module) -> Module:
    """``module`` type-checked, with every Grad expanded (Grad runs as its expansion: closures
    and references). The last few are cached: modules and functions are immutable, so their
    objects identify them, and evaluating one program again (a training loop, a benchmark)
    does not expand it again."""
    key = (tuple(module.functions.items()), tuple(module.op_decls.items()), tuple(module.type_defs.items()))
    if key in _PREPARED:
        _PREPARED.move_to_end(key)
        return _PREPARED[key]
    typed = _PREPARED[key] = expand(module)  # type-checks first; a module without Grad stays as it is
    if len(_PREPARED) > PREPARED_CACHE_SIZE:
        _PREPARED.popitem(last=False)
    return typed
