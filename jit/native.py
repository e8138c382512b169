"""Whole scalar functions compiled natively with Numba.

Scalar code (counters, recursion, loops over rank-0 tensors, W6) run as generated Python
costs a NumPy scalar operation per IR operation, about 50x Numba. A global whose
parameters and result are rank-0 tensors, and whose body is lets, ifs, scalar operators,
let-bound local functions that are only called (loops), calls of itself and calls of other
such globals, is emitted once more, by ``NativeLowering``, as a ``numba.njit`` function
with an explicit signature (cached on disk like every kernel); the program calls that
instead of the Python version.

Only operators whose native result is bit-for-bit NumPy's are taken: IEEE-exact float
arithmetic (``+ - * /``, ``sqrt``, comparisons), integer ``+ - *``, ``maximum``, ``minimum`` (computed
wide and wrapped back to the dtype, as NumPy's fixed-width integers wrap), bool logic,
``where`` and exact casts. Transcendental functions (libm and NumPy's SIMD routines can
differ in the last bit), integer division (NumPy raises, LLVM traps on ``MIN // -1``) and
float-to-integer casts (undefined out of range) keep a function in Python.

Non-tail recursion uses the C stack, which cannot grow: native globals take a depth
counter, and every native function returns ``(value, stopped)``. Past ``MAX_DEPTH``
nested calls the flag is set and every caller returns at once; the program then runs the
call again as the Python version (the function is pure, so nothing is done twice that
could be seen), whose own recursion limit gives the clear error. (Raising
RecursionError instead measured 1.6x slower on W6's fib: a function that can raise
loses LLVM's recursion optimizations; the flag costs 1.4x.)

Native code holds the GIL and never returns to the interpreter, so Python's SIGINT handler
cannot run in it: a loop asks CPython every ``INTERRUPT_EVERY`` iterations whether SIGINT
arrived (``interrupted``), and if so leaves the same way as a call too deep; the entry then
calls the Python version, at whose first instruction Python's handler runs (raising
KeyboardInterrupt; a handler that returns lets the Python version compute the result). The
check also gives every loop an exit, which Numba needs to compile a loop that has none. It
costs an increment and a test per iteration, nothing measurable on W6's loop; non-tail
recursion is not checked (a check per call made W6's fib 25% slower), so a native recursion
without a loop that runs for minutes (fib of 50) cannot be interrupted.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from relayish.expr import Call, Constant, Expr, Function, GlobalVar, Let, Op, Var
from relayish.module import Module
from relayish.ops.element import translate
from relayish.ops.registry import lookup_op
from relayish.traverse import globals_reached
from relayish.types import BaseType, TensorType, Type

from .kernels.registry import kernel_from_source, shared
from .lower import Emitter, Lowering

MAX_DEPTH = 5_000  # nested native calls; frames of a few hundred bytes stay well inside an 8 MB stack
INTERRUPT_EVERY = 256  # loop iterations between checks for SIGINT (3 nested loops of 255 still check every 0.1 s)

# ``interrupted()``: whether SIGINT arrived since the last check, leaving it pending for Python's
# handler (PyOS_InterruptOccurred clears the flag, PyErr_SetInterruptEx sets it again). Both are
# called by their names from the interpreter itself, so the machine code caches on disk like any.
INTERRUPTS_SOURCE = """import numba as _nb
from numba.core import types as _nbt

_occurred = _nbt.ExternalFunction("PyOS_InterruptOccurred", _nbt.intc())
_set_again = _nbt.ExternalFunction("PyErr_SetInterruptEx", _nbt.intc(_nbt.intc))


@_nb.njit(cache=True)
def interrupted():
    return _occurred() != 0 and _set_again(2) == 0  # 2: SIGINT
"""


class NativeUnsupported(Exception):
    """Something that keeps a function in Python."""


def scalar_signature(fn: Function) -> bool:
    """Whether ``fn`` takes and returns rank-0 tensors of dtypes Numba computes exactly."""
    return not fn.type_params and native_dtype(fn.ret_type) is not None and \
        all(native_dtype(p.type_annotation) is not None for p in fn.params)


def native_functions(module: Module, types: dict[int, Type], roots: list[str]) -> dict[str, Any]:
    """The native version of each of ``roots`` that can have one (see the module docstring)."""
    native = {name for name in roots if scalar_signature(module[name])}
    while True:
        sources: dict[str, str] = {}
        for name in sorted(native):
            try:
                sources[name] = NativeLowering(module, types, native).source(name)
            except NativeUnsupported:
                native.discard(name)  # and those calling it fail in turn: start again
                break
        else:
            break
    return {name: kernel_from_source(f"native_{name}", source) for name, source in sources.items()}


def native_dtype(ty: Type | None) -> str | None:
    """The NumPy dtype name of a rank-0 tensor type Numba computes exactly (no float16)."""
    if not (isinstance(ty, TensorType) and ty.shape.rank == 0 and isinstance(ty.dtype, BaseType)):
        return None
    name = ty.dtype.to_numpy().name
    return None if name == "float16" else name


def native_expression(op: str, args: list[str], arg_types: list[Type | None], result: Type | None) -> str:
    """Numba source computing ``op`` on the scalars ``args`` exactly as NumPy does: the record's
    element expression, when every construct in it is exact in Numba (``ExactDialect``)."""
    dtypes = [native_dtype(t) for t in arg_types]
    out = native_dtype(result)
    if out is None or None in dtypes:
        raise NativeUnsupported(f"{op} on {arg_types}")
    if op in ("cast", "cast_like"):
        return conversion(args, dtypes, out)
    definition = lookup_op(op)
    if definition is None or definition.element is None:
        raise NativeUnsupported(f"operator {op} is not computed natively")
    text = translate(definition.element, ExactDialect(args, next((d for d in dtypes if d != "bool"), "bool")))
    # integers wrap to their width, as NumPy's do; floats are rounded to their width once
    return text if out == "bool" else f"_np.{out}({text})"


class ExactDialect:
    """Element expressions in Numba, refusing (NativeUnsupported) what Numba does not compute
    bit for bit as NumPy (see the module docstring)."""

    def __init__(self, args: list[str], dtype: str):
        self.args, self.dtype, self.kind = args, dtype, np.dtype(dtype).kind

    def arg(self, index: int) -> str:
        return self.args[index]

    def literal(self, value: int | float | bool) -> str:
        return f"_np.{'bool_' if self.dtype == 'bool' else self.dtype}({value!r})"

    def unary(self, op: str, x: str) -> str:
        return f"(not {x})" if op == "not" else self._numbers(f"(-{x})")

    def binary(self, op: str, x: str, y: str) -> str:
        if op in ("==", "!=", "<", "<=", ">", ">=", "and", "or"):
            return f"({x} {op} {y})"
        if op in ("+", "-", "*") or op == "/" and self.kind == "f":
            return self._numbers(f"({x} {op} {y})")
        raise NativeUnsupported(f"{op} on {self.dtype}: integer division and powers raise in NumPy, float "
                                "powers and remainders may differ in the last bit")

    def call(self, name: str, args: list[str]) -> str:
        if name == "where":
            return f"({args[1]} if {args[0]} else {args[2]})"
        if name in ("sqrt", "abs") and self.kind == "f":
            return f"_np.sqrt({args[0]})" if name == "sqrt" else f"abs({args[0]})"
        if name in ("maximum", "minimum") and self.kind != "f":  # NumPy's float maximum(0.0, -0.0) is -0.0, Numba's 0.0
            return f"_np.{name}({args[0]}, {args[1]})"
        raise NativeUnsupported(f"{name} on {self.dtype} is not computed natively (libm and NumPy's SIMD "
                                "routines can differ in the last bit)")

    def _numbers(self, text: str) -> str:
        if self.kind == "b":
            raise NativeUnsupported("arithmetic on bools")
        return text


def conversion(args: list[str], dtypes: list[str], out: str) -> str:
    """``cast`` and ``cast_like``: exact conversions only."""
    source = np.dtype(dtypes[0]).kind
    if source == "f" and np.dtype(out).kind != "f":
        raise NativeUnsupported("float-to-integer casts are undefined out of range")
    if out == "bool":
        return f"({args[0]} != 0)"
    return f"_np.{out}({args[0]})"


def literal(value: np.generic) -> str:
    """Source text of a scalar that reads back exactly."""
    if isinstance(value, np.bool_):
        return f"_np.bool_({bool(value)})"
    if isinstance(value, np.floating):
        return f"_np.{value.dtype.name}(float.fromhex({float(value).hex()!r}))"
    return f"_np.{value.dtype.name}({int(value)})"


class NativeLowering(Lowering):
    """Emits scalar globals as Numba source; raises NativeUnsupported on anything else."""

    def __init__(self, module: Module, types: dict[int, Type], native: set[str]):
        super().__init__(module, types, "cpu")
        self.native = native
        self.header: list[str] = []
        self.local_fns: set[int] = set()  # let-bound local functions already emitted (callable)
        self.results: list[str] = []  # the return dtypes of the functions being emitted, innermost last
        self.depth_name = self.fresh("depth")  # the name of the depth counter
        self.loops = False  # emitted a loop: the module imports ``interrupted``
        self.used.add("interrupted")
        self.reached: dict[str, set[str]] = {}  # global -> the globals it reaches (once per global, not per call)

    def source(self, root: str) -> str:
        """A module defining ``kernel``, the native version of ``@root``, and its native callees."""
        em = Emitter()
        for name in callees_first(self.module, root, self.native):
            fn = self.module[name]
            params = ", ".join(native_dtype(p.type_annotation) for p in fn.params)
            signature = f"Tuple(({native_dtype(fn.ret_type)}, boolean))({params}{', ' if params else ''}int64)"
            em.line(f'@_nb.njit("{signature}", cache=True, error_model="numpy")')
            self.function(self.global_names[name], fn, ("global", name), em)
        head = ["import numpy as _np", "import numba as _nb", *self.header]
        if self.loops:
            head.append(shared(INTERRUPTS_SOURCE, "interrupts", ["interrupted"]).rstrip())
        return "\n".join(head) + "\n\n" + em.source() + f"\nkernel = {self.global_names[root]}\n"

    def function(self, pyname: str, fn: Function, self_ref: tuple, em: Emitter) -> None:
        if self.in_loop:
            raise NativeUnsupported("a function defined inside a loop")
        if not scalar_signature(fn):
            raise NativeUnsupported("a function of non-scalar type")
        self.results.append(native_dtype(fn.ret_type))
        super().function(pyname, fn, self_ref, em)
        self.results.pop()

    def returning(self, value: str) -> str:
        return f"return {value}, False"

    def stop(self) -> str:
        """The statement leaving the current function when a call went too deep or SIGINT arrived."""
        return f"return _np.{self.results[-1]}(0), True"

    def loop(self, em: Emitter) -> None:
        """A loop that checks for SIGINT every ``INTERRUPT_EVERY`` iterations (module docstring)."""
        self.loops = True
        ticks = self.fresh("ticks")
        em.line(f"{ticks} = 0")
        super().loop(em)
        em.line(f"    {ticks} += 1")
        em.line(f"    if {ticks} & {INTERRUPT_EVERY - 1} == 0 and interrupted():")
        em.line(f"        {self.stop()}")

    def define(self, pyname: str, params: list[str], self_ref: tuple, em: Emitter) -> None:
        """Globals take the depth counter and check it on entry."""
        if self_ref[0] != "global":
            super().define(pyname, params, self_ref, em)
            return
        super().define(pyname, params + [self.depth_name], self_ref, em)
        em.line(f"    if {self.depth_name} > {MAX_DEPTH}:")
        em.line(f"        {self.stop()}")

    def let(self, e: Let, em: Emitter) -> Expr:
        rest = super().let(e, em)
        if isinstance(e.value, Function):
            self.local_fns.add(id(e.var))
        return rest

    def constant(self, value: Any, hint: str) -> str:
        if not isinstance(value, np.generic):
            raise NativeUnsupported(f"a constant of type {type(value).__name__}")
        name = self.fresh(hint)
        self.header.append(f"{name} = {literal(value)}")
        return name

    def atom(self, e: Expr, em: Emitter) -> str:
        if isinstance(e, Var) and id(e) in self.local_fns:
            raise NativeUnsupported("a local function used as a value")
        if isinstance(e, (Function, GlobalVar)):
            raise NativeUnsupported("a function used as a value")
        if isinstance(e, Constant) and e.value.ndim != 0:
            raise NativeUnsupported("a tensor constant")
        return super().atom(e, em)

    def reaches(self, name: str) -> set[str]:
        if name not in self.reached:
            self.reached[name] = globals_reached(self.module, self.module[name])
        return self.reached[name]

    def compound(self, e: Expr, em: Emitter) -> str:
        if not isinstance(e, Call):
            raise NativeUnsupported(f"{type(e).__name__} in scalar code")
        if isinstance(e.callee, Op):
            return self.op_call(e, em)
        args = [self.atom(a, em) for a in e.args]
        callee = e.callee
        if isinstance(callee, Var) and id(callee) in self.local_fns:
            call = f"{self.names[id(callee)]}({', '.join(args)})"  # not itself: local non-tail recursion fails here
        elif isinstance(callee, GlobalVar) and callee.name in self.native and \
                (callee.name == self.current or self.current not in self.reaches(callee.name)):
            call = f"{self.global_names[callee.name]}({''.join(a + ', ' for a in args)}{self.depth_name} + 1)"
        else:
            raise NativeUnsupported("a call of something not compiled natively")
        value, deep = self.fresh("t"), self.fresh("deep")
        em.line(f"{value}, {deep} = {call}")
        em.line(f"if {deep}:")
        em.line(f"    {self.stop()}")
        return value

    def op_call(self, e: Call, em: Emitter) -> str:
        types = [self.types.get(id(a)) for a in e.args]
        args = [self.atom(a, em) for a in e.args]
        return native_expression(e.callee.name, args, types, self.types.get(id(e)))


def callees_first(module: Module, root: str, native: set[str]) -> list[str]:
    """``root`` and the native globals it calls, each after those it calls (on a cycle, in
    some order: the lowering refuses calls around it)."""
    order: list[str] = []
    entered: set[str] = set()
    stack = [(root, False)]
    while stack:
        name, done = stack.pop()
        if done:
            order.append(name)
        elif name not in entered:
            entered.add(name)
            stack.append((name, True))
            stack.extend((callee, False) for callee in sorted(globals_reached(module, module[name]) & native - entered))
    return order
