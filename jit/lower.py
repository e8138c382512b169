"""Lowering: a typed module becomes Python source that calls kernels directly.

Every global becomes a Python function, every closure a nested ``def``, references
one-element lists, tuples Python tuples. Code is in A-normal form (each intermediate
result gets a name, in evaluation order), so effects on references happen exactly in the
order the evaluator performs them. A function that calls itself in tail position (a
global, or a let-bound local function, which is what loops become) gets its body in a
``while True:`` loop and the call becomes parameter reassignment, so a million-step
recursive loop runs in constant stack. Operator calls go to kernels chosen from the
static types of their arguments (dtype and rank), with the attributes baked in.

Limits: a tensor past ``RELAYISH_MAX_TENSOR_BYTES`` (relayish/ops/limits.py) is refused
before its kernel runs: a static shape is checked here, once, and only a shape known at run
time costs a line (``check_size``). With ``max_calls`` (a ``CallBudget``), every function
entry and loop iteration counts itself, as the evaluator counts calls; without, nothing is
emitted.
"""

from __future__ import annotations

import functools

import keyword
import re
import sys
from typing import Any, Iterator, Sequence

import numpy as np

from relayish.dims import as_dim, dim_source
from relayish.errors import RelayRuntimeError
from relayish.expr import (
    Ascribe, Call, Constant, Construct, Expr, Function, GlobalVar, If, IsCtor, Let, Op, Proj, RefNew, RefRead,
    RefWrite, Tuple, Unpack, Var, Zero,
)  # fmt: skip
from relayish.module import Module
from relayish.ops.limits import check_tensor, max_tensor_bytes, tensor_bytes, tensor_types
from relayish.ops.reduce import counted_axes
from relayish.ops.registry import is_user_op, lookup_op
from relayish.traverse import free_vars, post_order, use_counts
from relayish.types import BaseType, FloatType, Kind, Shape, TensorType, TupleType, Type, TypeVar, has_unknown_dim
from runtime.limits import step_limit
from runtime.operators import check_shapes, run_op
from runtime.values import DataValue, check_ascribed, unpacked

from . import scalars
from .host import HostRuntime
from .kernels.fused import Unsupported, fused_kernel
from .kernels.nn import matmul_add_source
from .kernels.registry import ArgType, kernel, kernel_from_source
from .kernels.shape import permutation
from .passes.products import is_matmul_add
from .passes.util import checks_sizes


class CompileError(RelayRuntimeError):
    """A program the JIT cannot compile (the evaluator can still run it)."""


class Emitter:
    """Lines of Python source with indentation."""

    def __init__(self) -> None:
        self.lines: list[str] = []
        self.depth = 0

    def line(self, text: str) -> None:
        self.lines.append("    " * self.depth + text)

    def source(self) -> str:
        return "\n".join(self.lines) + "\n"


class Lowering:
    """Generates the Python source of a module's globals and the namespace it runs in."""

    def __init__(self, module: Module, types: dict[int, Type], target: str = "cpu", budget: CallBudget | None = None):
        self.module = module
        self.types = types
        self.target = target
        self.runtime = target_runtime(target)
        self.budget = budget
        self.max_tensor_bytes = max_tensor_bytes()
        self.namespace: dict[str, Any] = {"_unit": (), "_zeros": self.runtime.zeros, "_asarray": np.asarray,
                                          "_dyn_reshape": self.runtime.dyn_reshape,
                                          "_accumulate_into": accumulate_into, "_take_at": take_at,
                                          "_in_python": in_python, "_check_tensor": check_tensor, "_count_call": budget,
                                          "_check_shapes": check_shapes, "_check_ascribed": check_ascribed, "_run_op": run_op,
                                          "_DataValue": DataValue, "_unpacked": unpacked, "_bool": np.bool_,
                                          "_scatter_add_at": scatter_add_at, "_scatter_add_at_in_place": scatter_add_at_in_place,
                                          **scalars.NAMESPACE}
        self.uses = use_counts(*module.functions.values())
        self.names: dict[int, str] = {}
        self.used: set[str] = set(self.namespace)
        self.constant_names: dict[int, str] = {}  # id(object) -> its name; the namespace keeps the object alive
        self.in_loop = False  # emitting the body of a while-True loop (a function's tail calls)
        self.return_checks: list[Ascribe] = []  # checked ascriptions around the tail being emitted
        self.owed: dict[int, tuple[Ascribe, str]] = {}  # those around a loop's tail calls: their flags
        self.numpy_scalars = False  # emitted NumPy scalar arithmetic, which warns unless told not to
        self.heap_objects = False  # defines closures or makes references: objects the cyclic GC tracks (jit/collector.py)
        self.python_calls = False  # calls a function of the program (or a closure): Python recursion is possible
        # each kernel call's argument types and predicted layouts (jit/precompile.py)
        self.kernel_calls: list[tuple[Any, tuple[ArgType, ...], str]] = []
        self.transposed: set[int] = set()  # variables bound to a transposed view of a matrix: F-ordered
        self.dim_names: list[str] = []  # dimension variables bound by the enclosing functions
        self.made: list[set[int]] = [set()]  # per function being emitted: the variables its lets bind
        self.current = ""  # the global being emitted
        self.global_names = {name: self.fresh(f"g_{name}") for name in module.functions}

    # names -----------------------------------------------------------------------------
    def fresh(self, hint: str) -> str:
        base = re.sub(r"\W", "_", hint) or "v"
        if base[0].isdigit() or keyword.iskeyword(base):
            base = f"v_{base}"
        name, k = base, 1
        while name in self.used:
            k += 1
            name = f"{base}_{k}"
        self.used.add(name)
        return name

    def bind(self, var: Var) -> str:
        name = self.names[id(var)] = self.fresh(var.name_hint)
        return name

    def constant(self, value: Any, hint: str) -> str:
        """The name of ``value`` in the namespace (one name per object: a kernel called often is named once)."""
        name = self.constant_names.get(id(value))
        if name is None:
            name = self.constant_names[id(value)] = self.fresh(hint)
            self.namespace[name] = value
        return name

    # the program -----------------------------------------------------------------------
    def program(self, roots: list[str], native: dict[str, Any]) -> str:
        """The source of ``roots``; those in ``native`` (jit/native.py) call their native
        version, and their Python version when it recurses too deep."""
        em = Emitter()
        for name in roots:
            pyname = self.global_names[name]
            if name not in native:
                self.function(pyname, self.module[name], ("global", name), em)
                continue
            python = self.global_names[name] = self.fresh(f"{pyname}_python")
            self.function(python, self.module[name], ("global", name), em)
            self.global_names[name] = pyname
            self.native_entry(pyname, python, self.module[name], native[name], em)
        return em.source()

    def native_entry(self, pyname: str, python: str, fn: Function, compiled: Any, em: Emitter) -> None:
        params = [self.fresh(p.name_hint) for p in fn.params]
        kernel = self.constant(compiled, f"k_native_{pyname}")
        result = fn.ret_type.dtype.to_numpy().type.__name__  # Numba returns Python numbers
        value, deep = self.fresh("value"), self.fresh("deep")
        em.line(f"def {pyname}({', '.join(params)}):")
        em.line(f"    {value}, {deep} = {kernel}({''.join(p + ', ' for p in params)}0)")
        em.line(f"    return _in_python({python}, {''.join(p + ', ' for p in params)}) if {deep} else _np.{result}({value})")

    def function(self, pyname: str, fn: Function, self_ref: tuple, em: Emitter) -> None:
        self.heap_objects = self.heap_objects or self_ref[0] != "global"
        if self_ref[0] == "global":
            self.current = self_ref[1]
        factory = None
        if self.in_loop:  # Python closures read variables when called; a loop rebinds them: capture now
            own = self_ref[1] if self_ref[0] == "local" else None
            free = [self.names[id(v)] for v in free_vars(fn) if v is not own and id(v) in self.names]
            free = sorted(set(free) | set(self.dim_names))
            factory = self.fresh(f"make_{pyname}")
            em.line(f"def {factory}({', '.join(free)}):")
            em.depth += 1
        params = [self.bind(p) for p in fn.params]
        self.define(pyname, params, self_ref, em)
        em.depth += 1
        loops = any(self.is_self_call(e, self_ref) for e in tail_positions(fn.body))
        # the checks around the enclosing function's tail are its own: a function defined there returns its own value
        saved_owed, saved_checks, self.owed, self.return_checks = self.owed, self.return_checks, {}, []
        if loops:  # a checked ascription around a call of itself checks what the loop finally returns
            for ascription in checked_around(fn.body, lambda c: self.is_self_call(c, self_ref), self.checked):
                self.owed[id(ascription)] = (ascription, self.fresh("owed"))
                em.line(f"{self.owed[id(ascription)][1]} = False")
            self.loop(em)
            em.depth += 1
        if self.budget is not None and not fn.primitive:  # a fusion group is operators, not a call
            em.line(f"_count_call({self.current!r})")
        saved = self.in_loop, len(self.dim_names)
        self.in_loop = loops
        self.made.append(set())
        self.bind_dims(fn, params, em)  # in the loop: a tail call may instantiate other sizes
        self.tail(fn.body, em, self_ref if loops else None, params)
        self.made.pop()
        self.owed, self.return_checks = saved_owed, saved_checks
        self.in_loop = saved[0]
        del self.dim_names[saved[1]:]
        em.depth -= 2 if loops else 1
        if factory is not None:
            em.line(f"return {pyname}")
            em.depth -= 1
            em.line(f"{pyname} = {factory}({', '.join(free)})")

    def define(self, pyname: str, params: list[str], self_ref: tuple, em: Emitter) -> None:
        """The ``def`` line of a function."""
        em.line(f"def {pyname}({', '.join(params)}):")

    def loop(self, em: Emitter) -> None:
        """The head of the loop a function's tail calls become."""
        em.line("while True:")

    def bind_dims(self, fn: Function, params: list[str], em: Emitter) -> None:
        """Polymorphic functions read their dimension variables off their arguments."""
        for tv in fn.type_params:
            if tv.kind is not Kind.DIM:
                continue  # dtypes and whole types need no value at run time
            path = dim_path(fn, tv)
            if path is None:
                continue  # a dimension seen only inside closures' types: Zero of it fails, as in the evaluator
            index, fields, axis = path
            access = params[index] + "".join(f"[{i}]" for i in fields)
            self.names[id(tv)] = name = self.fresh(tv.name)
            self.dim_names.append(name)
            em.line(f"{name} = {access}.shape[{axis}]")

    @staticmethod
    def is_self_call(e: Expr, self_ref: tuple) -> bool:
        if not isinstance(e, Call):
            return False
        kind, ref = self_ref
        callee = e.callee
        return (isinstance(callee, GlobalVar) and kind == "global" and callee.name == ref) or \
            (isinstance(callee, Var) and kind == "local" and callee is ref)

    # statements: an expression in tail position -----------------------------------------
    def tail(self, e: Expr, em: Emitter, self_ref: tuple | None, params: list[str]) -> None:
        while isinstance(e, Let):
            e = self.let(e, em)
        if isinstance(e, If):
            cond = self.atom(e.cond, em)
            em.line(f"if {cond}:")
            em.depth += 1
            self.tail(e.then_branch, em, self_ref, params)
            em.depth -= 1
            em.line("else:")
            em.depth += 1
            self.tail(e.else_branch, em, self_ref, params)
            em.depth -= 1
            return
        if isinstance(e, Ascribe) and self.checked(e):  # checks what the function returns from inside it
            self.return_checks.append(e)
            self.tail(e.expr, em, self_ref, params)
            self.return_checks.pop()
            return
        if isinstance(e, Ascribe):
            self.tail(e.expr, em, self_ref, params)
            return
        if self_ref is not None and self.is_self_call(e, self_ref):
            args = [self.atom(a, em) for a in e.args]
            if params:
                em.line(f"{', '.join(params)}, = {', '.join(args)},")
            for ascription in self.return_checks:  # the final result owes its check
                em.line(f"{self.owed[id(ascription)][1]} = True")
            em.line("continue")
            return
        value = self.atom(e, em)
        for ascription in reversed(self.return_checks):
            em.line(self.ascription_check(ascription, value))
        lexical = {id(a) for a in self.return_checks}
        for ascription, flag in self.owed.values():
            if id(ascription) not in lexical:
                em.line(f"if {flag}:")
                em.line(f"    {self.ascription_check(ascription, value)}")
        em.line(self.returning(value))

    def checked(self, e: Ascribe) -> bool:
        return checks_sizes(e, lambda x: x.type_annotation if isinstance(x, Var) else self.types.get(id(x)))

    def ascription_check(self, e: Ascribe, value: str) -> str:
        """The statement checking ``value`` against ``e``'s type (``runtime.values.check_ascribed``)."""
        dims = {tv: self.names[id(tv)] for tv in free_dims(e.type) if id(tv) in self.names}
        sizes = "{" + ", ".join(f"{self.constant(tv, 'tv')}: {name}" for tv, name in dims.items()) + "}"
        return f"_check_ascribed({self.constant(e.type, 'ascribed')}, {value}, {sizes}, " \
               f"{self.constant(e.span, 'span')}, {self.current!r})"

    def returning(self, value: str) -> str:
        """The statement returning ``value`` from the function being emitted."""
        return f"return {value}"

    def let(self, e: Let, em: Emitter) -> Expr:
        """Emits the binding ``e`` (or the accumulation it starts); returns what follows."""
        if isinstance(e.value, Function):
            name = self.bind(e.var)
            self.function(name, e.value, ("local", e.var), em)
            return e.body
        accumulation = self.accumulation(e)
        if accumulation is not None:
            ref, between, call, rest = accumulation
            for pure in between:  # what computes the addend: no effect, so the read can follow it
                self.let(pure, em)
            self.accumulate(self.atom(ref, em), call, em)
            return rest
        if self.updates_own_array(e):  # the cell holds the only reference, so the update can be in place
            data, cell = self.names[id(e.value.args[0])], self.fresh("cell")
            em.line(f"{cell} = [{data}]")
            em.line(f"del {data}")
            self.accumulate(cell, e.value, em)
            value = f"{cell}.pop()"  # the cell lets go of it: the next update may be in place too
        elif isinstance(e.value, (Var, Constant, GlobalVar, Ascribe, Let, Function, If)):
            value = self.atom(e.value, em)
        else:
            value = self.compound(e.value, em)  # named by the let itself, without a temporary
            self.check_size(e.value, em)
            transpose = self.target == "cpu" and isinstance(e.value, Call) and isinstance(e.value.callee, Op) \
                and e.value.callee.name == "transpose"
            if transpose and self.uses[id(e.var)] > 1 and not scalars.is_scalar(self.types.get(id(e.value))):
                # a transpose read again and again (W4's Wh^T, once per step) is copied into row order
                # once: BLAS reads the copy faster than the transposed view (13.6 against 10.2 us for
                # (32, 128) @ (128, 128)^T)
                value = f"_np.ascontiguousarray({value})"
            elif transpose and _matrix(self.types.get(id(e.value))):
                self.transposed.add(id(e.var))
        em.line(f"{self.bind(e.var)} = {value}")
        self.made[-1].add(id(e.var))
        return e.body

    def accumulate(self, cell: str, call: Call, em: Emitter) -> None:
        """``cell := call``, in place where the cell's array is not shared (``in_place_kernel``); for
        an index-expression adjoint's call (``scatter_addend``), ``cell := !cell + call``."""
        op = lookup_op(call.callee.name) if isinstance(call.callee, Op) else None
        if op is not None and op.definition is not None:
            found = self.index_kernel(call)
            arrays = [self.array(a, em) for a in call.args]
            names = [self.constant(found.accumulate, f"k_{op.name}_in_place"), self.constant(found.added, f"k_{op.name}_added")]
            em.line(f"_accumulate_into({', '.join([cell, *names, *arrays])})")
            return
        axis = self.scatter_add_axis(call)
        if axis is not None:  # a scalar's adjoint in a loop reading x[i]: NumPy adds it, no kernel call
            self.numpy_scalars = True  # NumPy's addition of one element warns on overflow
            index, update = (self.atom(a, em) for a in call.args[1:])
            em.line(f"_accumulate_into({cell}, _scatter_add_at_in_place, _scatter_add_at, {index}, {update}, {axis})")
            return
        fn = self.in_place_kernel(call)
        in_place = fn.py_func.__globals__["accumulate"]
        arrays = [self.array(a, em) for a in call.args[1:]]
        name = call.callee.name if isinstance(call.callee, Op) else "matmul_add"
        args = [cell, self.constant(in_place, f"k_{name}_in_place"), self.constant(fn, f"k_{name}")]
        em.line(f"_accumulate_into({', '.join(args + arrays)})")

    def scatter_add_axis(self, call: Call) -> int | None:
        """The axis of a CPU ``scatter_add`` of one index (``one_index_axis``), None for other calls."""
        if not (self.target == "cpu" and isinstance(call.callee, Op) and call.callee.name == "scatter_add"):
            return None
        data, index = (self.types.get(id(a)) for a in call.args[:2])
        if not (isinstance(data, TensorType) and isinstance(data.dtype, BaseType) and data.dtype != HALF):
            return None
        return one_index_axis(data, index, lookup_op("scatter_add").full_attrs(call.attrs)["axis"])

    def in_place_kernel(self, call: Call) -> Any | None:
        """The kernel of a call that can also update its first argument in place (its module's
        ``accumulate``): ``scatter_add`` (take's adjoint; ``scatter_add_at`` for one index, which
        NumPy adds) and a ``c + a @ b`` group (jit/passes/products.py); None for any other call or
        where the CPU kernels cannot."""
        types = [self.types.get(id(a)) for a in call.args]
        if not (self.target == "cpu" and all(isinstance(t, TensorType) and isinstance(t.dtype, BaseType)
                                             and t.dtype != HALF for t in types) and types[0].shape.rank > 0):
            return None
        if self.scatter_add_axis(call) is not None:
            return scatter_add_at
        if isinstance(call.callee, Op) and call.callee.name == "scatter_add":
            arg_types = [ArgType.of(t) for t in types]
            return kernel("scatter_add", lookup_op("scatter_add").full_attrs(call.attrs), arg_types, self.target)
        if isinstance(call.callee, Function) and is_matmul_add(call.callee):
            dtype = ArgType.of(types[0]).dtype
            return kernel_from_source(f"matmul_add_{dtype}", matmul_add_source(dtype), self.target)
        return None

    def updates_own_array(self, e: Let) -> bool:
        """``let s = f(a, ...)`` (``in_place_kernel``) where ``a`` was made in this function and
        nothing else reads it: an adjoint accumulated in straight-line code (an unrolled loop)."""
        call = e.value
        return isinstance(call, Call) and bool(call.args) and isinstance(call.args[0], Var) and \
            self.uses[id(call.args[0])] == 1 and id(call.args[0]) in self.made[-1] and \
            self.in_place_kernel(call) is not None

    def accumulation(self, e: Let) -> tuple[Var, list[Let], Call, Expr] | None:
        """``let a = !r in <pure lets> in let s = f(a, ...) in let _ = r := s in rest`` (``f`` with an
        ``in_place_kernel``) where the lets between bind operator calls, projections, tuples or
        atoms, and nothing else reads ``a``, ``s`` or the unit: ``(r, the lets between, the call,
        rest)``, run as one update in place when the array is not shared (``accumulate_into``).
        What AD writes for ``take``'s adjoint, and a weight's adjoint in a loop once
        ``r := !r + a @ b`` is a gemm group. (The same for ``r := !r + c`` measured slower in W4: 11 ms
        against 7 ms with a new array per addition.)"""
        between, call = [], e.body
        while isinstance(call, Let) and not (isinstance(call.value, Call) and call.value.args[:1] == (e.var,)) \
                and is_pure_binding(call.value):
            between.append(call)
            call = call.body
        write = getattr(call, "body", None)
        if not (isinstance(e.value, RefRead) and isinstance(e.value.ref, Var)
                and isinstance(call, Let) and isinstance(call.value, Call)
                and call.value.args[:1] and call.value.args[0] is e.var
                and isinstance(write, Let) and isinstance(write.value, RefWrite)
                and write.value.ref is e.value.ref and write.value.value is call.var):
            return None
        if (self.uses[id(e.var)], self.uses[id(call.var)], self.uses[id(write.var)]) != (1, 1, 0):
            return None
        if self.in_place_kernel(call.value) is not None:
            return e.value.ref, between, call.value, write.body
        addend = self.scatter_addend(call.value, between)
        if addend is None:
            return None
        return e.value.ref, [b for b in between if b is not addend], addend.value, write.body

    def scatter_addend(self, call: Call, between: list[Let]) -> Let | None:
        """In ``a + c``, the let among ``between`` binding ``c``, read nowhere else, to a call of an
        index-expression operator's adjoint of ``a``'s type (a sum of scatters, which its kernel
        adds into ``a`` in place: work of the scatters' grids, not of ``a``'s size); else None."""
        if not (self.target == "cpu" and isinstance(call.callee, Op) and call.callee.name == "add"):
            return None
        a, c = call.args
        binding = next((b for b in between if b.var is c), None)
        if binding is None or self.uses[id(c)] != 1 or not isinstance(binding.value, Call):
            return None
        callee = binding.value.callee
        op = lookup_op(callee.name) if isinstance(callee, Op) else None
        if op is None or op.definition is None or op.definition.target is None:
            return None
        ty = self.types.get(id(a))
        if ty != self.types.get(id(c)) or not (isinstance(ty, TensorType) and isinstance(ty.shape, Shape) and ty.shape.rank):
            return None
        return binding if self.index_kernel(binding.value) is not None else None

    def index_kernel(self, call: Call) -> Any | None:
        """The kernel of a call of an index-expression operator (jit/kernels/index_expr.py), None
        where its argument types are polymorphic in a dtype or a rank (it runs on the host then)."""
        try:
            arg_types = [ArgType.of(self.types.get(id(a))) for a in call.args]
        except TypeError:
            return None
        return self.runtime.index_kernel(lookup_op(call.callee.name).definition, [t.dtype for t in arg_types],
                                         [t.rank for t in arg_types])

    # expressions: each result gets a name, in evaluation order ----------------------------
    def atom(self, e: Expr, em: Emitter) -> str:
        if isinstance(e, Var):
            if id(e) not in self.names:
                raise CompileError(f"unbound variable %{e.name_hint}", e.span)
            return self.names[id(e)]
        if isinstance(e, Constant):
            return self.constant(e.value[()] if e.value.ndim == 0 else self.runtime.constant(e.value), "c")
        if isinstance(e, GlobalVar):
            return self.global_names[e.name]
        if isinstance(e, Ascribe):
            value = self.atom(e.expr, em)
            if self.checked(e):
                em.line(self.ascription_check(e, value))
            return value
        if isinstance(e, Let):
            while isinstance(e, Let):
                e = self.let(e, em)
            return self.atom(e, em)
        if isinstance(e, Function):
            name = self.fresh("fn")
            self.function(name, e, ("none", None), em)
            return name
        if isinstance(e, If):
            cond = self.atom(e.cond, em)
            result = self.fresh("t")
            em.line(f"if {cond}:")
            em.depth += 1
            em.line(f"{result} = {self.atom(e.then_branch, em)}")
            em.depth -= 1
            em.line("else:")
            em.depth += 1
            em.line(f"{result} = {self.atom(e.else_branch, em)}")
            em.depth -= 1
            return result
        value = self.compound(e, em)
        self.check_size(e, em)
        return self.assign(value, em)

    def array(self, e: Expr, em: Emitter) -> str:
        """``e`` as a kernel argument: a rank-0 value is a NumPy scalar here, which kernels take as an array."""
        ty = self.types.get(id(e))
        text = self.atom(e, em)
        return text if isinstance(ty, TensorType) and isinstance(ty.shape, Shape) and ty.shape.rank > 0 \
            else f"_asarray({text})"

    def assign(self, text: str, em: Emitter) -> str:
        name = self.fresh("t")
        em.line(f"{name} = {text}")
        return name

    def compound(self, e: Expr, em: Emitter) -> str:
        """The Python expression computing ``e`` from atoms (emitted first, in order)."""
        if isinstance(e, Tuple):
            return "(" + "".join(f"{self.atom(f, em)}, " for f in e.fields) + ")"
        if isinstance(e, Proj):
            return f"{self.atom(e.tuple_value, em)}[{e.index}]"
        if isinstance(e, Call):
            if isinstance(e.callee, Op):
                return self.op_call(e, em)
            if isinstance(e.callee, Function) and e.callee.primitive and self.target == "cpu":
                fused = self.fused_call(e, em)
                if fused is not None:
                    return fused
            self.python_calls = True
            callee = self.atom(e.callee, em)
            return f"{callee}({', '.join(self.atom(a, em) for a in e.args)})"
        if isinstance(e, RefNew):
            self.heap_objects = True
            return f"[{self.atom(e.value, em)}]"
        if isinstance(e, RefRead):
            return f"{self.atom(e.ref, em)}[0]"
        if isinstance(e, RefWrite):
            ref, value = self.atom(e.ref, em), self.atom(e.value, em)
            em.line(f"{ref}[0] = {value}")
            return "_unit"
        if isinstance(e, Construct):
            return f"_DataValue({e.ctor!r}, (" + "".join(f"{self.atom(f, em)}, " for f in e.fields) + "))"
        if isinstance(e, IsCtor):
            return f"_bool({self.atom(e.value, em)}.ctor == {e.ctor!r})"
        if isinstance(e, Unpack):
            span = self.constant(e.span, "span")
            return f"_unpacked({self.atom(e.value, em)}, {e.ctor!r}, {span}, {self.current!r})"
        if isinstance(e, Zero):
            dims = {tv: self.names[id(tv)] for tv in free_dims(e.type) if id(tv) in self.names}
            ty = self.constant(e.type, "zero_type")
            tvs = self.constant(list(dims), "zero_dims")
            return f"_zeros({ty}, {tvs}, ({''.join(v + ', ' for v in dims.values())}))"
        raise CompileError(f"the JIT cannot compile {type(e).__name__} here (the evaluator runs it)", e.span)

    def check_size(self, e: Expr, em: Emitter) -> None:
        """Refuse each tensor that the operator call, fusion group or ``Zero`` ``e`` makes past
        ``RELAYISH_MAX_TENSOR_BYTES``, before it is made (relayish/ops/limits.py): a static shape
        within the limit needs nothing, any other shape a line checking it when ``e`` is computed."""
        if isinstance(e, Zero):
            made, ty = "Zero", e.type
        elif isinstance(e, Call) and isinstance(e.callee, Op):
            made, ty = f"@{e.callee.name}", self.types.get(id(e))
        elif isinstance(e, Call) and isinstance(e.callee, Function) and e.callee.primitive:
            ops = dict.fromkeys(f"@{n.name}" for n in post_order(e.callee.body) if isinstance(n, Op))
            made, ty = f"fused {', '.join(ops)}", self.types.get(id(e))
        else:
            return
        for t in tensor_types(ty):
            dtype = t.dtype.to_numpy()
            shape = tuple(d.value for d in t.shape.dims)
            if None not in shape and 0 <= tensor_bytes(shape, dtype) <= self.max_tensor_bytes:
                continue
            dims = [dim_source(d, lambda atom: self.names.get(id(atom))) for d in t.shape.dims]
            if None in dims:
                continue  # a size this function cannot compute: the kernel's own allocation fails
            # compared inline (a call would cost ~0.7 us per kernel call), then _check_tensor says what failed;
            # a dimension variable is read off an array's shape and a digit string is a size: neither is negative
            negative = [f"{d} < 0" for d in dict.fromkeys(dims) if not (d.isidentifier() or d.isdigit())]
            refused = negative + [f"{' * '.join(dims)} * {dtype.itemsize} > {self.max_tensor_bytes}"]
            args = [f"({''.join(d + ', ' for d in dims)})", self.constant(dtype, "dtype"), str(self.max_tensor_bytes),
                    repr(f"{made} in @{self.current}"), self.constant(e.span, "span")]
            em.line(f"if {' or '.join(refused)}:")
            em.line(f"    _check_tensor({', '.join(args)})")

    def fused_call(self, e: Call, em: Emitter) -> str | None:
        """A fusion group (``fn primitive``) as one kernel call; None where the kernel generator
        does not take it (the group then runs as a closure, an operator kernel per statement:
        what the CUDA target always does)."""
        if is_matmul_add(e.callee):
            found = self.in_place_kernel(e)
            if found is None:
                return None
            return f"{self.constant(found, 'k_matmul_add')}({', '.join(self.array(a, em) for a in e.args)})"
        try:
            found = fused_kernel(e.callee)
        except Unsupported:
            return None
        name = self.constant(found, "k_fused")
        args = [self.atom(a, em) for a in e.args]
        arg_types = tuple(ArgType.of(p.type_annotation) for p in e.callee.params)
        self.kernel_calls.append((found, arg_types, self.layouts(e.args)))
        ranks = [t.rank for t in arg_types]
        return f"{name}({', '.join(f'_asarray({a})' if r == 0 else a for a, r in zip(args, ranks))})"

    def layouts(self, args: Sequence[Expr]) -> str:
        """The predicted layout of each argument of a kernel call: F for a transposed matrix view, else C."""
        return "".join("F" if id(a) in self.transposed else "C" for a in args)

    def check_unknown_sizes(self, op: Any, e: Call, args: list[str], types: list[Type | None], em: Emitter) -> None:
        """Sizes the checker could not check (``?``): the relation runs on the arguments when the call does."""
        if any(has_unknown_dim(t) for t in types):
            em.line(f"_check_shapes({self.constant(op, 'op')}, [{', '.join(args)}], {self.constant(e.attrs, 'attrs')}, "
                    f"{self.constant(e.span, 'span')}, {self.current!r})")

    def op_call(self, e: Call, em: Emitter) -> str:
        op = lookup_op(e.callee.name)
        if op is None:
            raise CompileError(f"operator @{e.callee.name} has no kernel (a declared operator is not compiled)", e.span)
        attrs = op.full_attrs(e.attrs)
        types = [self.types.get(id(a)) for a in e.args]
        args = [self.atom(a, em) for a in e.args]
        found = self.index_kernel(e) if op.definition is not None else None
        if found is not None:  # an index-expression operator: its kernel
            self.check_unknown_sizes(op, e, args, types, em)
            if self.target == "cuda":  # scalars pass by value and come back as scalars
                return f"{self.constant(found, f'k_{op.name}')}({', '.join(args)})"
            ranks = [ArgType.of(t).rank for t in types]
            call = f"{self.constant(found, f'k_{op.name}')}({', '.join(f'_asarray({a})' if r == 0 else a for a, r in zip(args, ranks))})"
            return f"{call}[()]" if scalars.is_scalar(self.types.get(id(e))) else call
        if is_user_op(op.name):  # registered from Python: its implementation runs on the host, checked
            if self.target != "cpu":
                raise CompileError(f"operator @{op.name} is registered from Python: the {self.target} target has no "
                                   "kernel for it (compile for the CPU)", e.span)
            call = f"_run_op({self.constant(op, 'op')}, {op.name!r}, [{', '.join(args)}], {self.constant(e.attrs, 'attrs')}, " \
                   f"{self.constant(e.span, 'span')}, {self.current!r})"
            return f"{call}[()]" if scalars.is_scalar(self.types.get(id(e))) else call
        self.check_unknown_sizes(op, e, args, types, em)
        if op.name == "dyn_reshape":
            return f"_dyn_reshape({', '.join(args)}, {self.constant(e.span, 'span')}, {self.current!r})"
        if op.name == "ndarray_size" and isinstance(types[0], TensorType) and isinstance(types[0].shape, Shape):
            return size_expression(args[0], types[0].shape.rank, attrs)
        if op.name in HOST_OPS:
            return f"{self.constant(functools.partial(op.compute, **attrs), op.name)}({', '.join(args)})[()]"
        try:
            arg_types = [ArgType.of(t) for t in types]
        except TypeError:  # inside a function polymorphic in a dtype or a shape: chosen at run time
            self.numpy_scalars = True  # its float16 conversions
            name = self.constant(DynamicKernel(op.name, attrs, self.target), f"k_{op.name}")
            return f"{name}({', '.join(args)})"
        if op.name == "squeeze" and attrs["axis"] is None:  # name the axes: a kernel's rank is fixed
            attrs = {**attrs, "axis": tuple(i for i, d in enumerate(types[0].shape.dims) if d.value == 1)}
        result = self.types.get(id(e))
        if not args and scalars.is_scalar(result):  # a rank-0 fill (AD's zero adjoints): a NumPy scalar, not a call
            return self.constant(op.compute(**attrs)[()], "c")
        if args and all(t.rank == 0 for t in arg_types):
            inline = scalars.expression(op.name, args, types, attrs)
            self.numpy_scalars = True
            if inline is not None:
                return inline
        if self.target == "cpu":
            view = view_expression(op.name, attrs, e.args, args, types)
            if view is not None:
                return view
        axis = self.scatter_add_axis(e)
        if axis is not None:
            self.numpy_scalars = True  # NumPy's addition of one element warns on overflow
            return f"_scatter_add_at({', '.join(args)}, {axis})"
        layouts = self.layouts(e.args)
        if op.name == "mul" and args[0] == args[1]:  # x * x (what AD writes for tanh's derivative): one read
            op, args, arg_types, layouts = lookup_op("sq"), args[:1], arg_types[:1], layouts[:1]
        half = isinstance(result, TensorType) and result.dtype == HALF
        if any(t.dtype == "float16" for t in arg_types) or attrs.get("dtype") == HALF:
            if self.target == "cuda":
                raise CompileError(f"operator {op.name} on float16: the CUDA target has no float16 kernels", e.span)
            self.numpy_scalars = True  # float16 conversions
            args = [f"{a}.astype(_np.float32)" if t.dtype == "float16" else a for a, t in zip(args, arg_types)]
            attrs, arg_types = widened(attrs, arg_types)
        found = kernel(op.name, attrs, arg_types, self.target)
        self.kernel_calls.append((found, tuple(arg_types), layouts))
        name = self.constant(found, f"k_{op.name}")
        if self.target == "cuda":  # scalars pass by value and come back as scalars
            return f"{name}({', '.join(args)})"
        call = f"{name}({', '.join(f'_asarray({a})' if t.rank == 0 else a for a, t in zip(args, arg_types))})"
        if half:
            call = f"{call}.astype(_np.float16)"
        return f"{call}[()]" if scalars.is_scalar(result) else call


HALF = FloatType(16)


def _matrix(ty: Type | None) -> bool:
    return isinstance(ty, TensorType) and isinstance(ty.shape, Shape) and ty.shape.rank == 2
RECURSION_LIMIT = 200_000  # non-tail calls deep; each costs a Python frame (~0.5 KB), not C stack


class python_guard:  # noqa: N801 - used as a context manager, like a function
    """Around generated Python: room for its non-tail recursion (Python-to-Python calls use no C
    stack in 3.11), and NumPy's warnings off where it computes scalars (the evaluator's semantics
    have no warnings). A class, not a generator: it runs on every call of a compiled function."""

    __slots__ = ("errors", "limit")

    def __init__(self, warnings_off: bool):
        self.errors = np.errstate(all="ignore") if warnings_off else None

    def __enter__(self) -> None:
        self.limit = sys.getrecursionlimit()
        sys.setrecursionlimit(max(self.limit, RECURSION_LIMIT))
        if self.errors is not None:
            self.errors.__enter__()

    def __exit__(self, *exc: Any) -> None:
        if self.errors is not None:
            self.errors.__exit__(*exc)
        sys.setrecursionlimit(self.limit)


def in_python(fn: Any, *args: Any) -> Any:
    """A native global's Python version, run after the native one recursed too deep or saw SIGINT
    (left pending, so Python's handler runs as this function starts; jit/native.py). The
    program's entry skips the guard when it is native (jit/compile.py)."""
    with python_guard(True):
        return fn(*args)
# Operators computed on the host, with no kernel on any target: ndarray_size from its argument's shape
# alone, by its reference semantics (a NumPy or device array's shape is on the host); dyn_reshape by the
# target's runtime, which reads newshape's values and reshapes the data (a view) without moving it.
HOST_OPS = frozenset({"ndarray_size", "dyn_reshape"})


def size_expression(arg: str, rank: int, attrs: dict) -> str:
    """``ndarray_size`` of ``arg`` (of rank ``rank``) from its shape: the product of the counted sizes,
    converted as the operator's NumPy semantics converts it (0.2 us; calling those semantics took 6 us
    of W2's gradient with a ``Dim`` batch, where the static program has a constant)."""
    sizes = " * ".join(f"{arg}.shape[{a}]" for a in counted_axes(attrs["axis"], attrs["exclude"], rank)) or "1"
    dtype = attrs["dtype"].to_numpy()
    if dtype.kind == "f":  # a size is below 2**53: exact in float64, rounded once to the dtype
        return f"_np.{dtype.name}({sizes})"
    return f"_np.int64({sizes}).astype(_np.{dtype.name})"  # wraps as the semantics' astype does


def view_expression(name: str, attrs: dict, nodes: list[Expr], args: list[str], types: list[Type]) -> str | None:
    """NumPy's own view for ``transpose`` and for ``take`` of one constant index inside the static
    size: what the kernel computes, without a kernel call (~1-2 us each; W4's gradient has 100
    transposes and 50 takes of ``xs[t]``); ``take`` of one index known only at run time is the
    same after a range check (``take_at``). A view is safe to hand on: values are immutable, and
    ``accumulate_into`` updates in place only an array that owns its memory. None otherwise."""
    if name not in ("transpose", "take"):
        return None
    ty = types[0]
    if not (isinstance(ty, TensorType) and isinstance(ty.shape, Shape)):
        return None
    rank = ty.shape.rank
    if name == "transpose" and rank >= 2:  # the type checker has checked the axes
        return f"{args[0]}.transpose({permutation(attrs['axes'], rank)})"
    if name == "take" and isinstance(nodes[1], Constant) and nodes[1].value.ndim == 0 and rank >= 1:
        axis, index = attrs["axis"], int(nodes[1].value)
        if axis is None or not -rank <= axis < rank:
            return None
        size = ty.shape.dims[axis % rank].value
        if size is None or not 0 <= index < size:
            return None
        return f"{args[0]}[{':, ' * (axis % rank)}{index}]"
    axis = one_index_axis(ty, types[1], attrs["axis"]) if name == "take" else None
    if axis is not None and not isinstance(nodes[1], Constant):
        return f"_take_at({args[0]}, {args[1]}, {axis})"
    return None


def one_index_axis(data: Type | None, index: Type | None, axis: int | None) -> int | None:
    """The axis (normalized) along which a rank-0 ``index`` picks one position of ``data``, for
    ``take`` and ``scatter_add`` (``axis`` None is the flattened data: one axis only for a vector);
    None otherwise. The type checker has checked the axis."""
    if not (scalars.is_scalar(index) and isinstance(data, TensorType) and isinstance(data.shape, Shape)
            and (axis is not None or data.shape.rank == 1)):
        return None
    return (axis or 0) % data.shape.rank


def one_index(op: str, data: np.ndarray, index: Any, axis: int) -> tuple:
    """The NumPy index of position ``index`` along ``axis``, checked as the kernels check it (no wrap-around)."""
    size = data.shape[axis]
    if not 0 <= index < size:
        raise IndexError(f"{op}: index {index} is out of range for axis {axis} of size {size}")
    return (slice(None),) * axis + (index,)


def take_at(data: np.ndarray, index: Any, axis: int) -> Any:
    """``take`` of one index: NumPy's indexing, a view (or a NumPy scalar of a vector) for ~0.3 us
    instead of a kernel call's ~1 us, what a loop reading ``x[i]`` pays per step
    (bench/cheap_gradient.py's b and c)."""
    return data[one_index("take", data, index, axis)]


def scatter_add_at(data: np.ndarray, index: Any, update: Any, axis: int) -> np.ndarray:
    """``scatter_add`` of one index (take_at's adjoint): a copy of ``data`` with ``update`` added there."""
    out = data.copy()
    out[one_index("scatter_add", data, index, axis)] += update
    return out


def scatter_add_at_in_place(data: np.ndarray, index: Any, update: Any, axis: int) -> np.ndarray:
    """``scatter_add_at`` into ``data`` itself (``accumulate_into`` calls it where nothing else sees ``data``)."""
    data[one_index("scatter_add", data, index, axis)] += update
    return data


def widened(attrs: dict, arg_types: list[ArgType]) -> tuple[dict, list[ArgType]]:
    """Numba has no float16: a float16 operation computes in float32 (the caller converts
    the arguments and rounds the result back), as NumPy's float16 loops do."""
    if attrs.get("dtype") == HALF:
        attrs = {**attrs, "dtype": FloatType(32)}
    return attrs, [ArgType("float32", t.rank) if t.dtype == "float16" else t for t in arg_types]


class DynamicKernel:
    """An operator call whose argument types are known only at run time (in a function
    polymorphic over a dtype or a shape): the kernel is looked up per call."""

    def __init__(self, name: str, attrs: dict, target: str):
        self.name, self.attrs, self.target = name, attrs, target

    def __call__(self, *values: Any) -> Any:
        if self.target == "cuda":  # device arrays and scalars, as the kernels take them
            arg_types = [ArgType(np.dtype(v.dtype).name, np.ndim(v)) for v in values]
            if any(t.dtype == "float16" for t in arg_types):
                raise CompileError(f"operator {self.name} on float16: the CUDA target has no float16 kernels")
            return kernel(self.name, squeeze_axes(self.name, self.attrs, values), arg_types, self.target)(*values)
        arrays = [np.asarray(v) for v in values]
        attrs = squeeze_axes(self.name, self.attrs, arrays)
        arg_types = [ArgType(a.dtype.name, a.ndim) for a in arrays]
        result = None
        if any(t.dtype == "float16" for t in arg_types) or attrs.get("dtype") == HALF:
            types = [TensorType(BaseType.from_numpy(a.dtype), Shape(*a.shape)) for a in arrays]
            result = lookup_op(self.name).type_relation(types, attrs).dtype.to_numpy()  # what to round to
            arrays = [a.astype(np.float32) if a.dtype == np.float16 else a for a in arrays]
            attrs, arg_types = widened(attrs, arg_types)
        out = kernel(self.name, attrs, arg_types, self.target)(*arrays)
        if result is not None:
            out = out.astype(result)
        return out[()] if out.ndim == 0 else out


def squeeze_axes(name: str, attrs: dict, values: list) -> dict:
    """``squeeze`` without axes names the axes of size 1: a kernel's rank is fixed."""
    if name == "squeeze" and attrs["axis"] is None:
        return {**attrs, "axis": tuple(i for i, n in enumerate(np.shape(values[0])) if n == 1)}
    return attrs


def is_pure_binding(value: Expr) -> bool:
    """A let value that cannot touch a reference: an operator call, projection or tuple of atoms, an atom."""
    if isinstance(value, (Call, Proj, Tuple)):
        children = value.args if isinstance(value, Call) else value.children()
        return (not isinstance(value, Call) or isinstance(value.callee, Op)) and \
            all(isinstance(c, (Var, Constant, GlobalVar)) for c in children)
    return isinstance(value, (Var, Constant, GlobalVar))


def accumulate_into(cell: list, in_place: Any, copy: Any, *args: Any) -> None:
    """``cell := f(!cell, *args)`` (``copy`` computes ``f``), with ``in_place`` writing into
    ``!cell`` when nothing else can see the array; the value is the same either way. With the
    cell's slot cleared, ``data`` here and getrefcount's argument must be its only Python
    references (a NumPy view of it holds one through its base), and its memory must be its
    own: NumPy's (no base), or a Numba allocation no other array shares (the allocation's
    count is 1; an array Numba returns as a view of an input has that input as its parent)."""
    data = cell[0]
    cell[0] = None
    try:
        base = data.base
        own = base is None or (type(base).__name__ == "_MemInfo" and base.parent is None and base.refcount == 1)
        exclusive = sys.getrefcount(data) == 2 and own and data.flags.writeable and data.flags.c_contiguous
        cell[0] = (in_place if exclusive else copy)(data, *args)
    except BaseException:
        cell[0] = data
        raise


def checked_around(body: Expr, is_self_call: Any, checked: Any) -> list[Ascribe]:
    """The checked ascriptions (``checked``) that enclose a tail call of the function itself."""
    found: dict[int, Ascribe] = {}
    stack: list[tuple[Expr, tuple[Ascribe, ...]]] = [(body, ())]
    while stack:
        e, around = stack.pop()
        while isinstance(e, (Let, Ascribe)):
            if isinstance(e, Ascribe) and checked(e):
                around += (e,)
            e = e.body if isinstance(e, Let) else e.expr
        if isinstance(e, If):
            stack += [(e.then_branch, around), (e.else_branch, around)]
        elif is_self_call(e):
            found.update((id(a), a) for a in around)
    return list(found.values())


def tail_positions(e: Expr) -> Iterator[Expr]:
    """The expressions whose value is the function's result (through lets, ifs and ascriptions)."""
    stack = [e]
    while stack:
        e = stack.pop()
        while isinstance(e, (Let, Ascribe)):
            e = e.body if isinstance(e, Let) else e.expr
        if isinstance(e, If):
            stack.extend((e.then_branch, e.else_branch))
        else:
            yield e


def free_dims(ty: Type) -> list[TypeVar]:
    found: list[TypeVar] = []
    stack = [ty]
    while stack:
        t = stack.pop()
        if isinstance(t, TupleType):
            stack.extend(t.fields)
        elif isinstance(t, TensorType) and isinstance(t.shape, Shape):
            for d in t.shape.dims:
                found.extend(v for v in d.free_vars() if v not in found)
    return found


def dim_path(fn: Function, tv: TypeVar) -> tuple[int, tuple[int, ...], int] | None:
    """Where a dimension variable can be read: (parameter, tuple path, axis) of a tensor
    parameter whose shape has it as a plain dimension."""
    target = as_dim(tv)
    for index, p in enumerate(fn.params):
        stack: list[tuple[Type, tuple[int, ...]]] = [(p.type_annotation, ())]
        while stack:
            t, path = stack.pop()
            if isinstance(t, TupleType):
                stack.extend((f, path + (i,)) for i, f in enumerate(t.fields))
            elif isinstance(t, TensorType) and isinstance(t.shape, Shape):
                for axis, d in enumerate(t.shape.dims):
                    if d == target:
                        return index, path, axis
    return None


class CallBudget:
    """``max_calls`` in compiled code: the generated Python counts each function entry and loop
    iteration (a tail call), as the evaluator counts calls; ``reset`` before each call of the program."""

    __slots__ = ("limit", "left")

    def __init__(self, limit: int):
        self.limit = self.left = limit

    def reset(self) -> None:
        self.left = self.limit

    def __call__(self, global_name: str) -> None:
        self.left -= 1
        if self.left < 0:
            raise step_limit(self.limit, global_name)


def target_runtime(target: str) -> HostRuntime:
    if target == "cpu":
        return HostRuntime()
    if target == "cuda":
        from .cuda.runtime import DeviceRuntime  # lazy: it imports numba.cuda, which only the CUDA target needs

        return DeviceRuntime()
    raise ValueError(f"unknown target {target!r} (targets: cpu, cuda)")
