"""The evaluator's own runtime values: activation frames and closures.

A ``Closure`` is a ``runtime.values.FunctionValue`` (what the argument check accepts for a
function type); the values both backends share (``RefCell``) and the check of arguments
against types are in ``runtime.values``.
"""

from __future__ import annotations

from typing import Any

from relayish.expr import Function
from relayish.types import TypeVar
from runtime.values import FunctionValue


class Frame:
    """The variables of one function activation; closures keep their defining frame."""

    __slots__ = ("values", "parent", "dims", "global_name")

    def __init__(self, parent: Frame | None, global_name: str, dims: dict[TypeVar, int] | None = None):
        self.values: dict[int, Any] = {}
        self.parent = parent
        self.global_name = global_name
        self.dims = dims if dims is not None else (parent.dims if parent is not None else {})  # shared unless new

    def lookup(self, var: Any) -> Any:
        frame: Frame | None = self
        key = id(var)
        while frame is not None:
            if key in frame.values:
                return frame.values[key]
            frame = frame.parent
        raise KeyError(var)


class Closure(FunctionValue):
    """A function value. Calling it from Python runs it in the evaluator."""

    __slots__ = ("fn", "frame", "global_name", "evaluator")

    def __init__(self, fn: Function, frame: Frame | None, global_name: str, evaluator: Any):
        self.fn, self.frame, self.global_name, self.evaluator = fn, frame, global_name, evaluator

    def __call__(self, *args: Any) -> Any:
        return self.evaluator.call_from_python(self, args)

    def __repr__(self) -> str:
        return f"<closure of {len(self.fn.params)} arguments from @{self.global_name}>"
