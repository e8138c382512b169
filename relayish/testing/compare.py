"""Structural comparison of evaluator results, reporting the first difference.

``difference(actual, expected)`` is None when the two are equal, else one message about the
first differing leaf (left to right; within an array, the first differing element in C
order): its path (``result[1][0]``, ``result.Cons[1].Cons[0]`` inside data values), both values,
and for arrays the element index and how many elements differ. Tuples compare by position,
data values (``DataValue``) by constructor and then field by field, ``RefCell``s by content, arrays by dtype,
shape and value: integers and bools exactly; floats within ``atol + rtol * max(|a|, |e|)``
(symmetric, so neither side is privileged), NaN equal to NaN, an infinity equal only to the
infinity of the same sign. Functions cannot be compared: a result holding one never
compares equal, and the message says so.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from runtime.values import DataValue, RefCell

DEFAULT_RTOL = {np.dtype(np.float16): 1e-3, np.dtype(np.float32): 1e-5, np.dtype(np.float64): 1e-12}


def _kind(value: Any) -> str:
    """What a value is, in the words of a mismatch message."""
    if isinstance(value, tuple):
        return f"a tuple of {len(value)}"
    if isinstance(value, np.ndarray):
        return f"an array of {value.dtype} {value.shape}"
    if isinstance(value, RefCell):
        return "a reference"
    if isinstance(value, DataValue):
        return f"a {value.ctor} value"
    if callable(value):
        return "a function"
    return f"a {type(value).__name__} {value!r}"


class _Path:
    """Where a compared value sits (``result[1].Cons[0]``), written out only for a message: built
    as strings, the paths into a long list would take time quadratic in its length."""

    __slots__ = ("parent", "step")

    def __init__(self, parent: _Path | None, step: str):
        self.parent, self.step = parent, step

    def __str__(self) -> str:
        steps: list[str] = []
        node: _Path | None = self
        while node is not None:
            steps.append(node.step)
            node = node.parent
        return "".join(reversed(steps))


def _data_kind(value: DataValue) -> str:
    return f"{value.ctor} of {len(value.fields)} field{'' if len(value.fields) == 1 else 's'}"


def _category(value: Any) -> type | str:
    for cls in (tuple, np.ndarray, RefCell, DataValue):
        if isinstance(value, cls):
            return cls
    return "function" if callable(value) else type(value)


def _close(a: np.ndarray, e: np.ndarray, rtol: float, atol: float) -> np.ndarray:
    """Elementwise float equality within tolerance; NaN matches NaN, inf only itself."""
    x, y = a.astype(np.float64), e.astype(np.float64)
    with np.errstate(invalid="ignore", over="ignore"):
        near = np.abs(x - y) <= atol + rtol * np.maximum(np.abs(x), np.abs(y))
    return (x == y) | (np.isnan(x) & np.isnan(y)) | (near & np.isfinite(x) & np.isfinite(y))


def _array_difference(path: _Path, a: np.ndarray, e: np.ndarray, rtol: float | None, atol: float) -> str | None:
    if a.dtype != e.dtype:
        return f"{path}: dtype differs: actual {a.dtype}, expected {e.dtype}"
    if a.shape != e.shape:
        return f"{path}: shape differs: actual {a.shape}, expected {e.shape}"
    if a.dtype.kind == "f":
        tol = DEFAULT_RTOL[a.dtype] if rtol is None else rtol
        same, how = _close(a, e, tol, atol), f" ({a.dtype}, rtol={tol:g}, atol={atol:g})"
    else:
        same, how = a == e, f" ({a.dtype}, exact)"
    bad = np.argwhere(~same)
    if not len(bad):
        return None
    first = tuple(int(i) for i in bad[0])
    values = f"actual {a[first]!s}, expected {e[first]!s}{how}"
    if a.ndim == 0:
        return f"{path}: {values}"
    index = ", ".join(map(str, first))
    return f"{path}: {len(bad)} of {a.size} elements differ; first at index [{index}]: {values}"


def _node_difference(path: _Path, a: Any, e: Any, rtol: float | None, atol: float) -> tuple[str | None, list]:
    """The difference at this node itself, and the child pairs still to compare."""
    if callable(a) and callable(e):
        return f"cannot compare functions at {path}", []
    if _category(a) != _category(e):
        return f"{path}: kind differs: actual is {_kind(a)}, expected {_kind(e)}", []
    if isinstance(a, tuple):
        if len(a) != len(e):
            return f"{path}: tuple length differs: actual has {len(a)} fields, expected {len(e)}", []
        return None, [(_Path(path, f"[{k}]"), x, y) for k, (x, y) in enumerate(zip(a, e))]
    if isinstance(a, RefCell):
        return None, [(_Path(path, ".value"), a.value, e.value)]
    if isinstance(a, DataValue):
        if a.ctor != e.ctor or len(a.fields) != len(e.fields):
            return f"{path}: constructor differs: actual is {_data_kind(a)}, expected {_data_kind(e)}", []
        return None, [(_Path(path, f".{a.ctor}[{k}]"), x, y) for k, (x, y) in enumerate(zip(a.fields, e.fields))]
    if isinstance(a, np.ndarray):
        return _array_difference(path, a, e, rtol, atol), []
    return (None if a == e else f"{path}: actual {a!r}, expected {e!r}"), []


def difference(actual: Any, expected: Any, *, rtol: float | None = None, atol: float = 0.0) -> str | None:
    """None when ``actual`` equals ``expected``, else a message about the first difference.

    ``rtol`` defaults per float dtype: float16 1e-3, float32 1e-5, float64 1e-12.
    """
    stack = [(_Path(None, "result"), actual, expected)]
    while stack:
        path, a, e = stack.pop()
        message, children = _node_difference(path, a, e, rtol, atol)
        if message is not None:
            return message
        stack.extend(reversed(children))
    return None


def assert_same(actual: Any, expected: Any, *, rtol: float | None = None, atol: float = 0.0) -> None:
    """Raise AssertionError with ``difference``'s message unless the two are equal."""
    message = difference(actual, expected, rtol=rtol, atol=atol)
    if message is not None:
        raise AssertionError(message)
