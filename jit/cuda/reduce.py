"""CUDA kernels of the reductions (sum, prod, mean, max, min, argmax), cumsum and the softmax family
(softmax, log_softmax, softmax_cross_entropy).

One thread per output element loops over the elements it reduces, in C order (a nested loop per
reduced axis); a softmax element loops twice over its row (its max, then the sum of the shifted
exponentials), so a row of n costs O(n^2) work spread over n threads: correct, not tuned. cumsum
runs one thread per line along its axis (the other indices), adding in order.

Precision and tolerances (what ``tests/cuda/test_cuda_reduce.py`` checks):

- sum and mean of floats add in float64 inside the thread (float32 elements widened), then round
  once to the dtype; NumPy adds pairwise in the dtype, so the results differ by rounding only:
  ``|kernel - reference| <= rtol * sum(|x|)`` (mean: divided by the count), rtol 1e-5 for float32
  and 1e-12 for float64. A float32 sum whose float32 partial sums overflow to inf in NumPy may stay
  finite in float64 (only near float32's largest values). A mean of nothing is NaN, as NumPy's.
- integer sums add in int64 (uint64 for unsigned) and the store truncates: wrapping exactly as
  NumPy's sum in the dtype wraps. max, min and argmax are exact: NaN wins (argmax: the first NaN),
  argmax gives the first index of the maximum, int32 (over several axes, the index in their
  row-major flattening: the loops over them count it).
- prod and cumsum compute floats in the dtype, in the reference's order (a product element by
  element in C order, each running sum the previous plus the next element), so they are exact for
  C-contiguous input (the reference's prod follows memory order); integers in 64 bits, truncated
  at the store, wrapping as NumPy's do.
- softmax family: ``s = x - max`` is computed in the dtype exactly as the reference does, then exp,
  the sums and log in float64, rounded once at the store. softmax within ``rtol * |reference|``
  (plus the dtype's smallest normal, for subnormal results), log_softmax within ``rtol * (1 +
  |reference|)``, softmax_cross_entropy within ``rtol * (1 + m)`` with m the mean over positions of
  ``log(n + 1) + sum(|y * s|) + |max| * (1 + sum(|y|))`` (the magnitudes the reference's float
  sums round); rtol as above.

Errors: max and min of an empty reduction raise ValueError, argmax of an empty axis (or empty
tensor, axis None) ValueError, softmax_cross_entropy with an empty axis ValueError, as the
reference does; a thread reports it through ``err``. Where the result itself is empty no thread
runs and the launcher asks the reference (max of a (0, 0) tensor along axis 1 raises, as in
NumPy; likewise argmax, and softmax/log_softmax of an empty axis). Bad attributes (an axis out
of range, a repeated axis) raise when the kernel is generated (the type checker rejects them
first). float16 has no CUDA kernel.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from typing import Any

import numpy as np
from numpy.lib.array_utils import normalize_axis_index, normalize_axis_tuple

from relayish.ops.reduce import reduced_axes
from relayish.types import BaseType

from ..kernels.registry import ArgType, generator
from .launch import element_body, kernel_module, read

EMPTY_MAX = {1: ("ValueError", "zero-size array to reduction operation maximum which has no identity")}
EMPTY_MIN = {1: ("ValueError", "zero-size array to reduction operation minimum which has no identity")}
EMPTY_ARGMAX = {1: ("ValueError", "attempt to get argmax of an empty sequence")}

Loop = tuple[str, str]  # (loop variable, its bound)


# --- source helpers shared with shape.py --------------------------------------------------------


def is_float(dtype: str) -> bool:
    """Floats need the NaN cases (comparisons with NaN are false)."""
    return np.dtype(dtype).kind == "f"


def literal(value: Any, dtype: str) -> str:
    """Source of the scalar ``value`` (already of ``dtype``) as a constant of that dtype, exact
    (a bare Python float would widen float32 arithmetic to float64)."""
    if dtype == "bool":
        return repr(bool(value))
    if is_float(dtype):
        v = float(value)
        text = "math.nan" if math.isnan(v) else ("math.inf" if v > 0 else "-math.inf") if math.isinf(v) else repr(v)
        return f"np.{dtype}({text})"
    return f"np.{dtype}({int(value)})"


def nest(loops: Sequence[Loop], inner: Sequence[str]) -> list[str]:
    """``inner`` inside one ``for`` per loop, outermost first (run once when there are none)."""
    lines = [f"{'    ' * depth}for {var} in range({bound}):" for depth, (var, bound) in enumerate(loops)]
    return lines + ["    " * len(loops) + line for line in inner]


def fail_if(condition: str, code: int = 1) -> list[str]:
    """Lines reporting error ``code`` and ending the thread when ``condition`` holds."""
    return [f"if {condition}:", f"    err[0] = {code}", "    return"]


def product(terms: Sequence[str]) -> str:
    """Source of the product of ``terms`` (``1`` for none: an empty reduction counts one element)."""
    return " * ".join(terms) or "1"


def sum_lines(dtype: str, element: str, loops: Sequence[Loop]) -> list[str]:
    """Lines leaving in ``acc`` the sum of ``element`` over ``loops``: floats in float64, integers
    in 64 bits (wrapping), bools as logical or (NumPy's add on bools)."""
    if dtype == "bool":
        return ["acc = False", *nest(loops, [f"acc = acc or {element}"])]
    wide = {"f": "np.float64", "i": "np.int64", "u": "np.uint64"}[np.dtype(dtype).kind]
    return [f"acc = {wide}(0)", *nest(loops, [f"acc = acc + {wide}({element})"])]


def running_type(dtype: str) -> str:
    """The scalar type a product or running sum accumulates in: a float's own (the reference's
    rounding), 64 bits for integers (the store truncates, wrapping as the reference wraps)."""
    kind = np.dtype(dtype).kind
    return f"np.{dtype}" if kind == "f" else {"i": "np.int64", "u": "np.uint64"}[kind]


def stored(dtype: str, value: str) -> str:
    """``value`` converted to ``dtype`` explicitly: the GPU's store would truncate a 64-bit
    accumulator by itself, but the simulator's NumPy refuses to store an out-of-range integer."""
    return value if dtype == "bool" else f"np.{dtype}({value})"


def extreme_lines(op: str, dtype: str, first: str, element: str, loops: Sequence[Loop], name: str = "m") -> list[str]:
    """Lines leaving in ``name`` the max (or min) of ``element`` over ``loops``, starting from
    ``first``; a NaN, once met, stays."""
    cmp = ">" if op == "max" else "<"
    better = f"v {cmp} {name} or v != v" if is_float(dtype) else f"v {cmp} {name}"
    return [f"{name} = {first}", *nest(loops, [f"v = {element}", f"if {better}:", f"    {name} = v"])]


# --- sum, mean, max, min, argmax ----------------------------------------------------------------


def _reduced_axes(axis: Any, rank: int) -> tuple[int, ...]:
    """The normalized reduced axes (None: all), ascending (the loops then run in C order, as the
    reference's prod and argmax's flattening do), with NumPy's errors for bad ones."""
    return tuple(range(rank)) if axis is None else tuple(sorted(normalize_axis_tuple(axis, rank)))


def _source_index(rank: int, axes: Sequence[int], keepdims: bool) -> list[str]:
    """x's index for output element ``o0, o1, ...``: ``r{a}`` along each reduced axis a."""
    index, k = [], 0
    for a in range(rank):
        if a in axes:
            index.append(f"r{a}")
            k += keepdims
        else:
            index.append(f"o{k}")
            k += 1
    return index


def _first(index: Sequence[str], axes: Sequence[int]) -> list[str]:
    """``index`` at the first element of the reduction (each ``r{a}`` 0)."""
    return ["0" if a in axes else part for a, part in enumerate(index)]


def _frame(x: ArgType, axes: Sequence[int], keepdims: bool) -> tuple[int, list[str], list[Loop], str]:
    """What every reduction over ``axes`` needs: the output rank, x's index at loop position
    ``r{a}``, the loops over the reduced axes, and the source of their element count."""
    out_rank = x.rank if keepdims else x.rank - len(axes)
    loops = [(f"r{a}", f"x0.shape[{a}]") for a in axes]
    return out_rank, _source_index(x.rank, axes, keepdims), loops, product([bound for _, bound in loops])


def _reduction(op: str, attrs: dict, args: Sequence[ArgType]) -> str:
    """sum, prod, mean, max or min: each thread loops over the reduced axes of its output element."""
    (x,) = args
    axes = _reduced_axes(attrs["axis"], x.rank)
    out_rank, index, loops, count = _frame(x, axes, attrs["keepdims"])
    errors = None
    if op == "prod":
        wide = running_type(x.dtype)
        lines = [f"acc = {wide}(1)", *nest(loops, [f"acc = acc * {wide}({read(0, x, index)})"])]
        value = "acc"
    elif op in ("sum", "mean"):
        lines = sum_lines(x.dtype, read(0, x, index), loops)
        value = "acc" if op == "sum" else "acc / n if n else math.nan"
        if op == "mean":
            lines.append(f"n = {count}")
    else:
        errors = EMPTY_MAX if op == "max" else EMPTY_MIN
        lines = fail_if(f"{count} == 0") + extreme_lines(op, x.dtype, read(0, x, _first(index, axes)),
                                                         read(0, x, index), loops)
        value = "m"
    body = element_body("body", args, out_rank, lines, stored(x.dtype, value))
    return kernel_module([body], ["body"], errors=errors)


def _reduction_generator(op: str) -> Callable[[dict, Sequence[ArgType]], str]:
    def generate(attrs: dict, args: Sequence[ArgType]) -> str:
        return _reduction(op, attrs, args)

    generate.__name__ = f"generate_cuda_{op}"
    generate.__doc__ = f"{op} over ``axis`` (None: all axes), one thread per output element."
    return generate


for _op in ("sum", "prod", "mean", "max", "min"):
    generator(_op, target="cuda")(_reduction_generator(_op))


@generator("argmax", target="cuda")
def generate_argmax(attrs: dict, args: Sequence[ArgType]) -> str:
    """The int32 position of the first maximum (first NaN) along axis, in the flattened tensor for
    axis None, over several axes (or with exclude the others) in their row-major flattening: the
    loops run in C order and count the position ``c``."""
    (x,) = args
    axes = reduced_axes("argmax", attrs["axis"], attrs["exclude"], x.rank)
    out_rank, index, loops, count = _frame(x, axes, attrs["keepdims"])
    better = "v > best or (v != v and best == best)" if is_float(x.dtype) else "v > best"
    lines = [*fail_if(f"{count} == 0"),
             f"best = {read(0, x, _first(index, axes))}", "at = 0", "c = 0",
             *nest(loops, [f"v = {read(0, x, index)}", f"if {better}:", "    best = v", "    at = c", "c += 1"])]
    body = element_body("body", args, out_rank, lines, "np.int32(at)")
    return kernel_module([body], ["body"], errors=EMPTY_ARGMAX)


@generator("cumsum", target="cuda")
def generate_cumsum(attrs: dict, args: Sequence[ArgType]) -> str:
    """One thread per line along axis: each running sum is the previous one plus the next element
    (the element before it when exclusive, which starts from 0) in ``running_type``. axis None and
    another dtype have no kernel: cumsum's lowering turns them into a reshape and a cast."""
    (x,) = args
    if attrs["axis"] is None or attrs["dtype"] not in (None, BaseType.from_numpy(np.dtype(x.dtype))):
        raise NotImplementedError("cumsum: axis None and a dtype other than the data's have no kernel (the "
                                  "operator's lowering makes them a reshape and a cast)")
    axis = normalize_axis_index(attrs["axis"], x.rank)
    others = [a for a in range(x.rank) if a != axis]
    shift = int(attrs["exclusive"])
    wide = running_type(x.dtype)

    def at(k: str) -> str:
        return ", ".join(k if a == axis else f"o{a}" for a in range(x.rank))

    lines = ["@cuda.jit", "def body(x0, out, err):", "    i = cuda.grid(1)",
             f"    if i >= out.size // out.shape[{axis}]:", "        return"]
    for a in reversed(others[1:]):
        lines += [f"    o{a} = i % out.shape[{a}]", f"    i = i // out.shape[{a}]"]
    if others:
        lines.append(f"    o{others[0]} = i")
    lines += [f"    acc = {wide}(0)",
              f"    for k in range(out.shape[{axis}]):",
              f"        if k == {shift}:",
              f"            acc = {wide}(x0[{at(f'k - {shift}')}])",
              f"        elif k > {shift}:",
              f"            acc = acc + {wide}(x0[{at(f'k - {shift}')}])",
              f"        out[{at('k')}] = {stored(x.dtype, 'acc')}"]
    return kernel_module(["\n".join(lines) + "\n"], ["body"])


# --- softmax, log_softmax, softmax_cross_entropy ------------------------------------------------


def _along(index: Sequence[str], axis: int, var: str = "k") -> list[str]:
    """``index`` with ``var`` at ``axis``."""
    return [var if a == axis else part for a, part in enumerate(index)]


def _row_lines(x: ArgType, index: Sequence[str], axis: int) -> list[str]:
    """Lines leaving ``m``, the max of the row through ``index`` along ``axis`` (the reference's
    shift), and ``total``, the float64 sum of ``exp(x - m)`` over the row."""
    n = f"x0.shape[{axis}]"
    return [*extreme_lines("max", x.dtype, read(0, x, _along(index, axis, "0")), read(0, x, _along(index, axis)),
                           [("k", n)]),
            "total = np.float64(0)",
            f"for k in range({n}):",
            f"    total = total + math.exp(np.float64({read(0, x, _along(index, axis))} - m))"]


def _softmax_generator(op: str) -> Callable[[dict, Sequence[ArgType]], str]:
    def generate(attrs: dict, args: Sequence[ArgType]) -> str:
        (x,) = args
        axis = normalize_axis_index(attrs["axis"], x.rank)
        index = [f"o{a}" for a in range(x.rank)]
        lines = _row_lines(x, index, axis) + [f"s = np.float64({read(0, x, index)} - m)"]
        value = "math.exp(s) / total" if op == "softmax" else "s - math.log(total)"
        return kernel_module([element_body("body", args, x.rank, lines, stored(x.dtype, value))], ["body"])

    generate.__name__ = f"generate_cuda_{op}"
    generate.__doc__ = f"{op} along axis, each element recomputing its row's max and sum of exponentials."
    return generate


for _op in ("softmax", "log_softmax"):
    generator(_op, target="cuda")(_softmax_generator(_op))


@generator("softmax_cross_entropy", target="cuda")
def generate_softmax_cross_entropy(attrs: dict, args: Sequence[ArgType]) -> str:
    """One thread: the mean over the positions off the axis of ``log(sum(exp(s))) - sum(y * s) +
    m * (1 - sum(y))`` with ``s = z - m``, m the max along the axis, as the reference computes it."""
    z, y = args
    axis = normalize_axis_index(attrs["axis"], z.rank)
    rest = [a for a in range(z.rank) if a != axis]
    index = [f"r{a}" for a in range(z.rank)]
    row = _along(index, axis)
    per_position = [
        *_row_lines(z, index, axis),
        "dot = np.float64(0)",
        "mass = np.float64(0)",
        f"for k in range(x0.shape[{axis}]):",
        f"    label = np.float64({read(1, y, row)})",
        f"    dot = dot + label * np.float64({read(0, z, row)} - m)",
        "    mass = mass + label",
        "loss = loss + ((math.log(total) - dot) + np.float64(m) * (1 - mass))",
    ]
    lines = [*fail_if(f"x0.shape[{axis}] == 0"), "loss = np.float64(0)",
             *nest([(f"r{a}", f"x0.shape[{a}]") for a in rest], per_position),
             f"count = {product([f'x0.shape[{a}]' for a in rest])}"]
    value = stored(z.dtype, "loss / count if count else math.nan")
    errors = {1: ("ValueError", ("softmax_cross_entropy: zero-size array to reduction operation maximum "
                                 "which has no identity"))}
    return kernel_module([element_body("body", args, 0, lines, value)], ["body"], errors=errors)
