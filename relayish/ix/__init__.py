"""Operators defined by index expressions (docs/index-expressions.md).

``@ix.operator`` turns a Python function describing an operator's output element into an
operator like the standard ones: the type checker runs the relation derived from it, the
evaluator its NumPy semantics, and AD its derived adjoints::

    from relayish import ix

    @ix.operator
    def mm(A, B):
        k = ix.axis(A.shape[1])
        return ix.tensor((A.shape[0], B.shape[1]), lambda i, j: ix.sum(A[i, k] * B[k, j], k))
"""

from .define import REDUCERS, SCALAR_FUNCTIONS, axis, cast, maximum, minimum, operator, tensor, trace, where
from .language import Definition
from .semantics import evaluate

sum, prod, max, min = (REDUCERS[k] for k in ("sum", "prod", "max", "min"))  # noqa: A001 (ix.sum, as numpy.sum)
exp, log, tanh, sqrt, abs, sin, cos, sigmoid = (SCALAR_FUNCTIONS[k] for k in (  # noqa: A001
    "exp", "log", "tanh", "sqrt", "abs", "sin", "cos", "sigmoid"))

__all__ = ["Definition", "abs", "axis", "cast", "cos", "evaluate", "exp", "log", "max", "maximum", "min", "minimum",
           "operator", "prod", "sigmoid", "sin", "sqrt", "sum", "tanh", "tensor", "trace", "where"]
