"""The reference evaluator, the definition of every program's meaning (docs/design.md).

``interp.evaluate(module, name, *args)`` (re-exported as ``relayish.evaluate``) type-checks
the module and runs global ``@name``: NumPy arrays in and out, tuples as Python tuples,
closures as callables, references as ``RefCell``s.
"""

from .evaluator import Evaluator, evaluate
from .values import Closure, RefCell

__all__ = ["Closure", "Evaluator", "RefCell", "evaluate"]
