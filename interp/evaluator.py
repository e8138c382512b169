"""The reference evaluator: the definition of what every relayish program means.

An explicit machine, not Python recursion: evaluation rules are generators run by the
trampoline, so non-tail recursion is not limited by Python's stack (a limit below keeps it
within memory), and calls in tail position (the body of a function, the branches of an
``if``, the body of a ``let``) reuse one machine frame, so a tail-recursive loop of a
million steps runs in constant memory.
Operators run their NumPy reference semantics from the registry (``runtime.operators.run_op``,
which the JIT's constant folding calls too); dtypes stay as typed. ``evaluate`` runs the module
as ``runtime.prepare.prepared`` makes it (typed, Grad expanded), as the JIT does.

Limits, each a ``RelayRuntimeError`` that says which and how to raise it: ``max_calls``
(optional: calls of functions, each loop iteration one, a ``StepLimitError``); nested
non-tail calls, ``RELAYISH_MAX_DEPTH`` (default ``MAX_DEPTH``, a million: each pending
call keeps about 3 KB, so runaway recursion stops at about 3 GB instead of exhausting
memory, which aborts the process); and the bytes of each tensor an operator or ``Zero``
makes, ``RELAYISH_MAX_TENSOR_BYTES`` (relayish/ops/limits.py), checked before it is made.
"""

from __future__ import annotations

from typing import Any, Iterator, Sequence

import numpy as np

from relayish.tracebacks import user_facing
from relayish.dims import Dim
from relayish.errors import RelayRuntimeError, Span
from relayish.expr import (
    Ascribe, Call, Constant, Construct, Expr, Function, GlobalVar, Grad, If, IsCtor, Jvp, Let, Match, Op, Vmap,
    PatternCtor, PatternTuple, PatternVar, Proj, RefNew, RefRead, RefWrite, Tuple, Unpack, Var, Zero,
)  # fmt: skip
from relayish.module import Module
from relayish.ops.limits import check_tensor, max_tensor_bytes, setting
from relayish.ops.registry import OpDef, lookup_op
from relayish.traverse import trampoline
from relayish.types import Shape, TensorType, TupleType, Type
from runtime.limits import step_limit
from runtime.operators import run_op
from runtime.prepare import prepared
from runtime.values import DataValue, RefCell, check_arguments, check_ascribed, unpacked

from .values import Closure, Frame

UNIT_VALUE = ()
MAX_DEPTH = 1_000_000  # nested non-tail calls, unless RELAYISH_MAX_DEPTH says otherwise


class _TailCall:
    """A call in tail position, handed back to the ``apply`` loop instead of nesting."""

    __slots__ = ("closure", "args", "span", "checks")

    def __init__(self, closure: Closure, args: list[Any], span: Span | None):
        self.closure, self.args, self.span = closure, args, span
        self.checks: dict[int, tuple[Ascribe, Frame]] | None = None  # ascriptions around it (see ``apply``)


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
        pending: dict[int, tuple[Ascribe, Frame]] | None = None
        while True:  # tail calls come back here instead of growing the machine's stack
            fn = closure.fn
            self.count_call(closure, span)
            outer = closure.frame
            dims = dict(outer.dims) if outer is not None and fn.type_params else None
            frame = Frame(outer, closure.global_name, dims)
            if check or fn.type_params:  # bind dimension variables of polymorphic functions
                args = check_arguments(fn.params, args, frame.dims, closure.global_name, self.module.type_defs)
            for param, arg in zip(fn.params, args):
                frame.values[id(param)] = arg
            result = yield self.eval(fn.body, frame, tail=True)
            if not isinstance(result, _TailCall):
                for e, at in (pending or {}).values():
                    check_ascribed(e.type, result, at.dims, e.span, at.global_name)
                return result
            if result.checks:  # ascriptions around tail calls check the final result: one entry per node, so a loop runs in constant memory
                pending = {**(pending or {}), **result.checks}
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
        if isinstance(e, Ascribe):  # checked: where the value's type had ?, nothing else checked its sizes
            value = yield self.eval(e.expr, frame, tail)
            if isinstance(value, _TailCall):  # checked once the call returns, keeping the call a tail call
                value.checks = {**(value.checks or {}), id(e): (e, frame)}
                return value
            return check_ascribed(e.type, value, frame.dims, e.span, frame.global_name)
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
        if isinstance(e, Construct):
            fields = []
            for field in e.fields:
                value = self.quick(field, frame)
                fields.append(value if value is not self else (yield self.eval(field, frame)))
            return DataValue(e.ctor, tuple(fields))
        if isinstance(e, IsCtor):
            return np.array((yield self.eval(e.value, frame)).ctor == e.ctor)
        if isinstance(e, Unpack):
            return unpacked((yield self.eval(e.value, frame)), e.ctor, e.span, frame.global_name)
        if isinstance(e, Match):
            value = yield self.eval(e.value, frame)
            for pattern, body in zip(e.patterns, e.bodies):
                if _bind(pattern, value, frame):
                    return (yield self.eval(body, frame, tail))
            raise RelayRuntimeError(f"no clause of this match matches a {value.ctor if isinstance(value, DataValue) else 'tuple'} "
                                    f"value, in @{frame.global_name} (the type checker warned of it)", e.span)
        if isinstance(e, (Grad, Jvp, Vmap)):  # evaluate() expands every Grad, Jvp and Vmap before running
            raise RelayRuntimeError(f"{type(e).__name__} must be expanded (ad.expand) before the Evaluator runs it", e.span)
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


def _bind(pattern: Any, value: Any, frame: Frame) -> bool:
    """Whether ``value`` matches ``pattern``; if so, its variables are bound in ``frame``."""
    bindings = []
    stack = [(pattern, value)]
    while stack:
        p, v = stack.pop()
        if isinstance(p, PatternVar):
            bindings.append((p.var, v))
        elif isinstance(p, PatternCtor):
            if v.ctor != p.ctor:
                return False
            stack.extend(zip(p.patterns, v.fields))
        elif isinstance(p, PatternTuple):
            stack.extend(zip(p.patterns, v))
    for var, v in bindings:
        frame.values[id(var)] = v
    return True


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


@user_facing
def evaluate(module: Module, name: str, *args: Any, max_calls: int | None = None) -> Any:
    """Type-check ``module`` and run its global ``@name`` on NumPy arguments.

    ``max_calls`` (optional) bounds the number of function calls, to stop runaway recursion
    with a ``StepLimitError`` (a ``RelayRuntimeError``) instead of running forever.
    """
    return Evaluator(prepared(module), max_calls).run(name, args)


def run_prepared(module: Module, name: str, args: Sequence[Any], max_calls: int | None = None) -> Any:
    """Run ``@name`` of a module that is ``prepared`` already (type-checked, Grad expanded; the
    JIT's optimized modules are) on ``args``: the first tier ``relayish.compile`` gives the JIT
    (jit/tiers.py), which does not import the evaluator itself."""
    return Evaluator(module, max_calls).run(name, args)
