"""The reference evaluator: the definition of what every relayish program means.

An explicit machine, not Python recursion: evaluation rules are generators run by the
trampoline, so non-tail recursion is limited by memory only, and calls in tail position
(the body of a function, the branches of an ``if``, the body of a ``let``) reuse one
machine frame, so a tail-recursive loop of a million steps runs in constant memory.
Operators run their NumPy reference semantics from the registry; dtypes stay as typed.
"""

from __future__ import annotations

import collections

from typing import Any, Iterator, Sequence

import numpy as np

from relayish.dims import Dim
from relayish.errors import RelayRuntimeError, Span, StepLimitError
from relayish.expr import (
    Ascribe, Call, Constant, Expr, Function, GlobalVar, Grad, If, Let, Op, Proj, RefNew,
    RefRead, RefWrite, Tuple, Var, Zero,
)  # fmt: skip
from relayish.module import Module
from relayish.ops.registry import OpDef, lookup_op
from relayish.traverse import trampoline
from relayish.types import Shape, TensorType, TupleType, Type

from .values import Closure, Frame, RefCell, check_arguments

UNIT_VALUE = ()


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
        self.calls += 1
        if self.max_calls is not None and self.calls > self.max_calls:
            raise StepLimitError(f"step limit exceeded: more than {self.max_calls} calls (in @{closure.global_name})", span)

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
                return run_op(lookup_op(e.callee.name), e.callee.name, args, e.attrs, e.span, frame.global_name)
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
            return _zeros(e.type, frame, e.span)
        if isinstance(e, RefNew):
            return RefCell((yield self.eval(e.value, frame)))
        if isinstance(e, RefRead):
            return (yield self.eval(e.ref, frame)).value
        if isinstance(e, RefWrite):
            cell = yield self.eval(e.ref, frame)
            cell.value = yield self.eval(e.value, frame)
            return UNIT_VALUE
        if isinstance(e, Op):
            return _OpValue(lookup_op(e.name), e, frame.global_name)
        if isinstance(e, Grad):  # evaluate() expands every Grad before running
            raise RelayRuntimeError("Grad must be expanded (ad.expand) before the Evaluator runs it", e.span)
        raise RelayRuntimeError(f"cannot evaluate {type(e).__name__}", getattr(e, "span", None))

    def call(self, e: Call, frame: Frame, tail: bool) -> Iterator[Any]:
        args = []
        for arg in e.args:
            value = self.quick(arg, frame)
            args.append(value if value is not self else (yield self.eval(arg, frame)))
        if isinstance(e.callee, Op):
            return run_op(lookup_op(e.callee.name), e.callee.name, args, e.attrs, e.span, frame.global_name)
        callee = self.leaf(e.callee, frame)
        if callee is self:
            callee = yield self.eval(e.callee, frame)
        if isinstance(callee, _OpValue):
            return callee(*args)
        if tail:
            return _TailCall(callee, args, e.span)
        return (yield self.apply(callee, args, e.span))



def _zeros(ty: Type, frame: Frame, span: Span | None) -> Any:
    if isinstance(ty, TupleType):
        return tuple(_zeros(f, frame, span) for f in ty.fields)
    if not isinstance(ty, TensorType) or not isinstance(ty.shape, Shape):
        raise RelayRuntimeError(f"Zero of {ty} needs a concrete tensor type", span)
    shape = []
    for dim in ty.shape.dims:
        size = dim.substitute({tv: Dim.const(n) for tv, n in frame.dims.items()}).value
        if size is None:
            raise RelayRuntimeError(f"Zero of {ty}: the size of {dim} is not known here", span)
        shape.append(size)
    return np.zeros(shape, dtype=ty.dtype.to_numpy())


class _OpValue:
    """An operator used as a first-class function value."""

    def __init__(self, op: OpDef | None, node: Op, global_name: str):
        self.op, self.node, self.global_name = op, node, global_name

    def __call__(self, *args: Any) -> Any:
        return run_op(self.op, self.node.name, list(args), (), self.node.span, self.global_name)


def run_op(op: OpDef | None, name: str, args: list[Any], attrs: Any, span: Span | None, global_name: str) -> Any:
    """An operator's NumPy semantics; its failures become RelayRuntimeError at the call."""
    if op is None:
        raise RelayRuntimeError(f"operator @{name} is declared but has no implementation (in @{global_name})", span)
    try:
        result = op.compute(*args, **op.full_attrs(attrs))  # operators silence float warnings themselves
    except (ZeroDivisionError, IndexError, ValueError, TypeError, FloatingPointError, OverflowError) as err:
        raise RelayRuntimeError(f"@{name} failed in @{global_name}: {err}", span) from None
    return result


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
