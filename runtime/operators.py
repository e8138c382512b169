"""An operator call on NumPy values, as both backends make it: the operator's reference
semantics (its ``compute``, from the registry), with its failures turned into
``RelayRuntimeError`` at the call and its results' sizes checked against
``RELAYISH_MAX_TENSOR_BYTES`` before they are made.

The evaluator calls every operator through ``run_op``; the JIT's optimizer computes operator
calls on constants with it (jit/passes/fold.py, jit/passes/partial_eval.py), so a folded
constant is exactly what the evaluator would compute.
"""

from __future__ import annotations

import operator
from typing import Any

import numpy as np

from relayish.errors import RelayError, RelayRuntimeError, Span
from relayish.ops.limits import check_tensor, max_tensor_bytes, tensor_bytes, tensor_types
from relayish.ops.registry import OpDef, is_user_op
from relayish.types import BaseType, Shape, TensorType


def run_op(op: OpDef | None, name: str, args: list[Any], attrs: Any, span: Span | None, global_name: str,
           limit: int | None = None) -> Any:
    """An operator's NumPy semantics; its failures become RelayRuntimeError at the call, and so does
    a result of more than ``limit`` bytes (default ``RELAYISH_MAX_TENSOR_BYTES``), before it is made."""
    if op is None:
        raise RelayRuntimeError(f"operator @{name} is declared but has no implementation (in @{global_name})", span)
    if limit is None:
        limit = max_tensor_bytes()
    results, refused = _results(op, args, attrs)
    if refused is not None:  # a ? dimension the checker could not check
        raise RelayRuntimeError(f"@{name} in @{global_name}: {refused}", span)
    for shape, dtype, size in results:
        if not 0 <= size <= limit:
            check_tensor(shape, dtype, limit, f"@{name} in @{global_name}", span)
    try:
        result = op.compute(*args, **op.full_attrs(attrs))  # operators silence float warnings themselves
    except (ZeroDivisionError, IndexError, ValueError, TypeError, FloatingPointError, OverflowError) as err:
        raise op_failure(name, global_name, err, span) from None
    except MemoryError:  # working memory (conv2d's window copy), not the result: that was checked above
        raise RelayRuntimeError(f"@{name} ran out of memory in @{global_name}: its working memory does not fit, "
                                f"though its result does (arguments {_shapes(args)})", span) from None
    if is_user_op(name):  # code of the user's: what it returns must be what its relation says
        result = _checked_result(name, result, results, span, global_name)
    return result


def op_failure(name: str, global_name: str, err: Exception, span: Span | None) -> RelayRuntimeError:
    """The error an operator's failure is at its call: the evaluator's (``run_op``), and the JIT's
    where the host computes an operator (``dyn_reshape``), so both say the same."""
    return RelayRuntimeError(f"@{name} failed in @{global_name}: {err}", span)


def _checked_result(name: str, result: Any, expected: list[tuple[tuple[int, ...], np.dtype, int]], span: Span | None,
                    global_name: str) -> Any:
    """A registered operator's result as arrays, each of the shape and dtype its relation gives."""
    parts = list(result) if isinstance(result, tuple) else [result]
    arrays = [np.asarray(p) for p in parts]
    got = [(a.shape, a.dtype) for a in arrays]
    want = [(shape, dtype) for shape, dtype, _ in expected]
    if got != want:
        raise RelayRuntimeError(f"@{name} in @{global_name}: its implementation returned {_described(got)}, but its "
                                f"relation gives {_described(want)}", span)
    return tuple(arrays) if isinstance(result, tuple) else arrays[0]


def _described(parts: list[tuple[tuple[int, ...], np.dtype]]) -> str:
    return ", ".join(f"{dtype} {shape}" for shape, dtype in parts) or "nothing"


def _shapes(args: list[Any]) -> str:
    return ", ".join(str(np.shape(a)) for a in args)


def check_shapes(op: OpDef, args: list[Any], attrs: Any, span: Span | None, global_name: str) -> None:
    """Raise where ``op``'s type relation refuses the actual arguments. The compiled code calls
    this before an operator whose arguments have a ``?`` dimension: their sizes were not checked
    when the program was (docs/design.md, "Dynamic dimensions")."""
    refused = _results(op, args, attrs)[1]
    if refused is not None:
        raise RelayRuntimeError(f"@{op.name} in @{global_name}: {refused}", span)


_Results = tuple[list[tuple[tuple[int, ...], np.dtype, int]], "str | None"]
_RESULTS: dict[tuple, _Results] = {}
RESULTS_CACHE_SIZE = 4096
_SHAPE_AND_DTYPE = operator.attrgetter("shape", "dtype")


def _results(op: OpDef, args: list[Any], attrs: Any) -> _Results:
    """Each tensor ``op`` makes from ``args`` (shape, dtype and bytes, -1 for a negative dimension)
    by its type relation, and why the relation refuses the arguments' actual shapes and dtypes (None
    when it does not). Cached by those: ``run_op`` asks before every operator call."""
    try:
        key = (op.name, attrs, *map(_SHAPE_AND_DTYPE, args))
    except AttributeError:  # not arrays (an operator value called from Python with numbers): not checked
        return [], None
    cached = _RESULTS.get(key)
    if cached is not None:
        return cached
    found, refused = [], None
    try:
        types = [TensorType(BaseType.from_numpy(a.dtype), Shape(*a.shape)) for a in args]
        result = op.type_relation(types, op.full_attrs(attrs))
    except RelayError as err:
        result, refused = (), err.message
    except (TypeError, ValueError):
        result = ()
    for ty in tensor_types(result):
        shape, dtype = tuple(d.value for d in ty.shape.dims), ty.dtype.to_numpy()
        if None not in shape:
            found.append((shape, dtype, tensor_bytes(shape, dtype)))
    if len(_RESULTS) >= RESULTS_CACHE_SIZE:
        _RESULTS.clear()
    _RESULTS[key] = found, refused
    return found, refused
