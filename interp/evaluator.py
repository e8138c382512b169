"""The reference evaluator: the definition of what every relayish program means.

An explicit machine, not Python recursion: evaluation rules are generators run by the
trampoline, so non-tail recursion is not limited by Python's stack (a limit below keeps it
within memory), and calls in tail position (the body of a function, the branches of an
``if``, the body of a ``let``) reuse one machine frame, so a tail-recursive loop of a
million steps runs in constant memory.
Operators run their NumPy reference semantics from the registry; dtypes stay as typed.

Limits, each a ``RelayRuntimeError`` that says which and how to raise it: ``max_calls``
(optional: calls of functions, each loop iteration one, a ``StepLimitError``); nested
non-tail calls, ``RELAYISH_MAX_DEPTH`` (default ``MAX_DEPTH``, a million: each pending
call keeps about 3 KB, so runaway recursion stops at about 3 GB instead of exhausting
memory, which aborts the process); and the bytes of each tensor an operator or ``Zero``
makes, ``RELAYISH_MAX_TENSOR_BYTES`` (relayish/ops/limits.py), checked before it is made.
"""

from __future__ import annotations

import collections
import operator

from typing import Any, Iterator, Sequence

import numpy as np

from relayish.tracebacks import user_facing
from relayish.dims import Dim
from relayish.errors import RelayError, RelayRuntimeError, Span, StepLimitError
from relayish.expr import (
    Ascribe, Call, Constant, Expr, Function, GlobalVar, Grad, If, Let, Op, Proj, RefNew,
    RefRead, RefWrite, Tuple, Var, Zero,
)  # fmt: skip
from relayish.module import Module
from relayish.ops.limits import check_tensor, max_tensor_bytes, setting, tensor_bytes, tensor_types
from relayish.ops.registry import OpDef, lookup_op
from relayish.traverse import trampoline
from relayish.types import BaseType, Shape, TensorType, TupleType, Type

from .values import Closure, Frame, RefCell, check_arguments

UNIT_VALUE = ()
MAX_DEPTH = 1_000_000  # nested non-tail calls, unless RELAYISH_MAX_DEPTH says otherwise


class _TailCall:
    """A call in tail position, handed back to the ``apply`` loop instead of nesting."""

    __slots__ = ("closure", "args", "span")

    def __init__(self, closure: Closure, args: list[Any], span: Span | None):
        self.closure, self.args, self.span = closure, args, span


class Evaluator:
    """Runs the globals of one type-checked module."""

    def __init__(self, module: Module, max_calls: int | None = None):
        self.module = module
        self.max_calls = max_calls
        self.calls = 0
        self.depth = 0  # non-tail calls pending
        self.max_depth = setting("RELAYISH_MAX_DEPTH", MAX_DEPTH)
        self.max_tensor_bytes = max_tensor_bytes()
        self.globals = {name: Closure(fn, None, name, self) for name, fn in module.functions.items()}

    # entry points -----------------------------------------------------------------------
    def run(self, name: str, args: Sequence[Any]) -> Any:
        if name not in self.globals:
            raise RelayRuntimeError(f"the module has no global @{name} (it has: {', '.join('@' + n for n in self.globals)})")
        return self.call_from_python(self.globals[name], args)

    def call_from_python(self, closure: Closure, args: Sequence[Any]) -> Any:
        fn = closure.fn
        if len(args) != len(fn.params):
            raise RelayRuntimeError(f"@{closure.global_name} takes {len(fn.params)} arguments, got {len(args)}")
        return trampoline(self.apply(closure, list(args), None, check=True))

    # calls ------------------------------------------------------------------------------
    def apply(self, closure: Closure, args: list[Any], span: Span | None, check: bool = False) -> Iterator[Any]:
        while True:  # tail calls come back here instead of growing the machine's stack
            fn = closure.fn
            self.count_call(closure, span)
            outer = closure.frame
            dims = dict(outer.dims) if outer is not None and fn.type_params else None
            frame = Frame(outer, closure.global_name, dims)
            if check or fn.type_params:  # bind dimension variables of polymorphic functions
                args = check_arguments(fn.params, args, frame.dims, closure.global_name)
            for param, arg in zip(fn.params, args):
                frame.values[id(param)] = arg
            result = yield self.eval(fn.body, frame, tail=True)
            if not isinstance(result, _TailCall):
                return result
            closure, args, span, check = result.closure, result.args, result.span, False

    def count_call(self, closure: Closure, span: Span | None) -> None:
        if closure.fn.primitive:
            return  # a fusion group (what the JIT's optimizer makes of operators) is no call, there or here
        self.calls += 1
        if self.max_calls is not None and self.calls > self.max_calls:
            raise step_limit(self.max_calls, closure.global_name, span)

    # expressions -------------------------------------------------------------------------
    def leaf(self, e: Expr, frame: Frame) -> Any:
        """The value of a variable, constant or global, or ``self`` for anything else."""
        if isinstance(e, Var):
            return frame.lookup(e)
        if isinstance(e, Constant):
            return e.value
        if isinstance(e, GlobalVar):
            return self.globals[e.name]
        return self

    def quick(self, e: Expr, frame: Frame) -> Any:
        """Leaves, and operator calls on leaves, without a machine step; else ``self``."""
        value = self.leaf(e, frame)
        if value is self and isinstance(e, Call) and isinstance(e.callee, Op):
            args = [self.leaf(arg, frame) for arg in e.args]
            if all(a is not self for a in args):
                return run_op(lookup_op(e.callee.name), e.callee.name, args, e.attrs, e.span, frame.global_name,
                              self.max_tensor_bytes)
        return value

    def eval(self, e: Expr, frame: Frame, tail: bool = False) -> Iterator[Any]:
        while isinstance(e, Let):  # a chain is one machine step per binding, in one frame
            frame.values[id(e.var)] = yield self.eval(e.value, frame)
            e = e.body
        value = self.quick(e, frame)
        if value is not self:
            return value
        if isinstance(e, If):
            cond = self.quick(e.cond, frame)
            if cond is self:
                cond = yield self.eval(e.cond, frame)
            branch = e.then_branch if bool(cond) else e.else_branch
            return (yield self.eval(branch, frame, tail))
        if isinstance(e, Call):
            return (yield self.call(e, frame, tail))
        if isinstance(e, Function):
            return Closure(e, frame, frame.global_name, self)
        if isinstance(e, Tuple):
            fields = []
            for field in e.fields:
                value = self.quick(field, frame)
                fields.append(value if value is not self else (yield self.eval(field, frame)))
            return tuple(fields)
        if isinstance(e, Proj):
            return (yield self.eval(e.tuple_value, frame))[e.index]
        if isinstance(e, Ascribe):
            return (yield self.eval(e.expr, frame, tail))
        if isinstance(e, Zero):
            return _zeros(e.type, frame, e.span, self.max_tensor_bytes)
        if isinstance(e, RefNew):
            return RefCell((yield self.eval(e.value, frame)))
        if isinstance(e, RefRead):
            return (yield self.eval(e.ref, frame)).value
        if isinstance(e, RefWrite):
            cell = yield self.eval(e.ref, frame)
            cell.value = yield self.eval(e.value, frame)
            return UNIT_VALUE
        if isinstance(e, Op):
            return _OpValue(lookup_op(e.name), e, frame.global_name, self.max_tensor_bytes)
        if isinstance(e, Grad):  # evaluate() expands every Grad before running
            raise RelayRuntimeError("Grad must be expanded (ad.expand) before the Evaluator runs it", e.span)
        raise RelayRuntimeError(f"cannot evaluate {type(e).__name__}", getattr(e, "span", None))

    def call(self, e: Call, frame: Frame, tail: bool) -> Iterator[Any]:
        args = []
        for arg in e.args:
            value = self.quick(arg, frame)
            args.append(value if value is not self else (yield self.eval(arg, frame)))
        if isinstance(e.callee, Op):
            return run_op(lookup_op(e.callee.name), e.callee.name, args, e.attrs, e.span, frame.global_name,
                          self.max_tensor_bytes)
        callee = self.leaf(e.callee, frame)
        if callee is self:
            callee = yield self.eval(e.callee, frame)
        if isinstance(callee, _OpValue):
            return callee(*args)
        if tail:
            return _TailCall(callee, args, e.span)
        if self.depth >= self.max_depth:
            raise RelayRuntimeError(f"non-tail recursion deeper than {self.max_depth:,} calls (in "
                                    f"@{frame.global_name}): each pending call is kept in memory; write the recursion "
                                    "as a loop (a call in tail position runs in constant memory), or set "
                                    "RELAYISH_MAX_DEPTH to allow more", e.span)
        self.depth += 1
        try:
            return (yield self.apply(callee, args, e.span))
        finally:
            self.depth -= 1


def step_limit(max_calls: int, global_name: str, span: Span | None = None) -> StepLimitError:
    """The error of a run past its ``max_calls`` (the JIT's too, jit/lower.py)."""
    return StepLimitError(f"step limit exceeded: more than {max_calls} calls (in @{global_name}): pass a larger "
                          "max_calls if the program should run longer", span)


def _zeros(ty: Type, frame: Frame, span: Span | None, limit: int) -> Any:
    if isinstance(ty, TupleType):
        return tuple(_zeros(f, frame, span, limit) for f in ty.fields)
    if not isinstance(ty, TensorType) or not isinstance(ty.shape, Shape):
        raise RelayRuntimeError(f"Zero of {ty} needs a concrete tensor type", span)
    shape = []
    for dim in ty.shape.dims:
        size = dim.substitute({tv: Dim.const(n) for tv, n in frame.dims.items()}).value
        if size is None:
            raise RelayRuntimeError(f"Zero of {ty}: the size of {dim} is not known here", span)
        shape.append(size)
    check_tensor(tuple(shape), ty.dtype.to_numpy(), limit, f"Zero in @{frame.global_name}", span)
    return np.zeros(shape, dtype=ty.dtype.to_numpy())


class _OpValue:
    """An operator used as a first-class function value."""

    def __init__(self, op: OpDef | None, node: Op, global_name: str, limit: int):
        self.op, self.node, self.global_name, self.limit = op, node, global_name, limit

    def __call__(self, *args: Any) -> Any:
        return run_op(self.op, self.node.name, list(args), (), self.node.span, self.global_name, self.limit)


def run_op(op: OpDef | None, name: str, args: list[Any], attrs: Any, span: Span | None, global_name: str,
           limit: int | None = None) -> Any:
    """An operator's NumPy semantics; its failures become RelayRuntimeError at the call, and so does
    a result of more than ``limit`` bytes (default ``RELAYISH_MAX_TENSOR_BYTES``), before it is made."""
    if op is None:
        raise RelayRuntimeError(f"operator @{name} is declared but has no implementation (in @{global_name})", span)
    if limit is None:
        limit = max_tensor_bytes()
    for shape, dtype, size in result_tensors(op, args, attrs):
        if not 0 <= size <= limit:
            check_tensor(shape, dtype, limit, f"@{name} in @{global_name}", span)
    try:
        result = op.compute(*args, **op.full_attrs(attrs))  # operators silence float warnings themselves
    except (ZeroDivisionError, IndexError, ValueError, TypeError, FloatingPointError, OverflowError) as err:
        raise RelayRuntimeError(f"@{name} failed in @{global_name}: {err}", span) from None
    except MemoryError:  # working memory (conv2d's window copy), not the result: that was checked above
        raise RelayRuntimeError(f"@{name} ran out of memory in @{global_name}: its working memory does not fit, "
                                f"though its result does (arguments {_shapes(args)})", span) from None
    return result


def _shapes(args: list[Any]) -> str:
    return ", ".join(str(np.shape(a)) for a in args)


_RESULTS: dict[tuple, list[tuple[tuple[int, ...], np.dtype, int]]] = {}
RESULTS_CACHE_SIZE = 4096
_SHAPE_AND_DTYPE = operator.attrgetter("shape", "dtype")


def result_tensors(op: OpDef, args: list[Any], attrs: Any) -> list[tuple[tuple[int, ...], np.dtype, int]]:
    """Each tensor ``op`` makes from ``args``: shape, dtype and bytes (-1 for a negative dimension),
    by its type relation; none where the relation refuses the arguments (``compute`` says why).
    Cached by the arguments' shapes and dtypes: ``run_op`` asks before every operator call."""
    try:
        key = (op.name, attrs, *map(_SHAPE_AND_DTYPE, args))
    except AttributeError:  # not arrays (an operator value called from Python with numbers): not checked
        return []
    found = _RESULTS.get(key)
    if found is None:
        found = []
        try:
            types = [TensorType(BaseType.from_numpy(a.dtype), Shape(*a.shape)) for a in args]
            result = op.type_relation(types, op.full_attrs(attrs)) if op.type_relation is not None else ()
        except (RelayError, TypeError, ValueError):
            result = ()
        for ty in tensor_types(result):
            shape, dtype = tuple(d.value for d in ty.shape.dims), ty.dtype.to_numpy()
            if None not in shape:
                found.append((shape, dtype, tensor_bytes(shape, dtype)))
        if len(_RESULTS) >= RESULTS_CACHE_SIZE:
            _RESULTS.clear()
        _RESULTS[key] = found
    return found


@user_facing
def evaluate(module: Module, name: str, *args: Any, max_calls: int | None = None) -> Any:
    """Type-check ``module`` and run its global ``@name`` on NumPy arguments.

    ``max_calls`` (optional) bounds the number of function calls, to stop runaway recursion
    with a ``StepLimitError`` (a ``RelayRuntimeError``) instead of running forever.
    """
    return Evaluator(prepared(module), max_calls).run(name, args)


_PREPARED: collections.OrderedDict = collections.OrderedDict()
PREPARED_CACHE_SIZE = 16


def prepared(module: Module) -> Module:
    """``module`` type-checked, with every Grad expanded (Grad runs as its expansion: closures
    and references). The last few are cached: modules and functions are immutable, so their
    objects identify them, and evaluating one program again (a training loop, a benchmark)
    does not expand it again."""
    from ad import expand

    key = (tuple(module.functions.items()), tuple(module.op_decls.items()))
    if key in _PREPARED:
        _PREPARED.move_to_end(key)
        return _PREPARED[key]
    typed = _PREPARED[key] = expand(module)  # type-checks first; a module without Grad stays as it is
    if len(_PREPARED) > PREPARED_CACHE_SIZE:
        _PREPARED.popitem(last=False)
    return typed
