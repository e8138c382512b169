"""The reference evaluator, the definition of every program's meaning (docs/design.md).

``interp.evaluate(module, name, *args)`` (re-exported as ``relayish.evaluate``) type-checks
the module and runs global ``@name``: NumPy arrays in and out, tuples as Python tuples,
closures as callables, references as ``RefCell``s (``runtime.values``, shared with the JIT).
``interp.run_prepared`` is the first tier ``relayish.compile`` gives the JIT (jit/tiers.py).
"""

from runtime.values import RefCell

from .evaluator import Evaluator, evaluate, run_prepared
from .values import Closure

__all__ = ["Closure", "Evaluator", "RefCell", "evaluate", "run_prepared"]
