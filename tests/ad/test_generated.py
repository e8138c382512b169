"""AD on generated programs.

1. ``modules(grad=True)``: well-typed modules with ``Grad``, ``Jvp`` and ``Vmap`` nodes anywhere (every dtype and
   feature). Each type-checks, its expansion (``ad.expand``) type-checks, binds each variable
   once (``bound_twice``: a dual copied into two places once made a backpropagator call itself) and round-trips
   through the printer and parser, and ``@main`` evaluates on ``example_inputs(seed=0)`` without
   an error (the generator guarantees no runtime error by construction, so any error is
   the type checker's or AD's). 200 examples (2,000 with RELAYISH_HYPOTHESIS=heavy).
2. The same generator restricted to float64 and smooth operators (data types included): the
   loss ``sum_k (k + 1) * sum(leaf_k(@main(args)))`` over the tensors of @main's result, those
   inside data values too, has ``Grad`` agreeing with ``check_grad``'s central differences, for
   every tensor of the arguments (inside data values too); and, where the arguments are tensors
   and tuples, ``Jvp`` of the loss agreeing with ``check_jvp``'s.
3. A generator of our own (below) for smooth scalar float64 programs over a scalar, a
   vector and a matrix, with closures called twice, ``let``, input-dependent ``if``,
   ``exp`` of bounded values, ``sum``/``mean``/``matmul``, and ``Grad`` inside: ``Grad``
   against ``check_grad``'s central differences.
4. Generated functions (no data types) mapped over three examples by ``Vmap``, some parameters
   shared, against the loop over the examples (``check_vmap``).

Tolerances are ``check_grad``'s defaults (eps 1e-6, rtol 1e-5, atol 1e-7) with at most 8
elements per input checked one by one and 4 random projections for larger ones, which keeps
each example at a few dozen evaluations. Programs whose value is not finite or beyond 1e4
are skipped with ``assume`` (central differences lose ``1e-16 |f| / eps`` to rounding); in
generated modules, NaN and infinite constants become finite ones first (``0 * inf`` in an
adjoint is NaN where the derivative is 0, and central differences of NaN are NaN).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import os

import numpy as np
from hypothesis import HealthCheck, assume, given, settings
from hypothesis import strategies as st

import ad
import relayish
from relayish import ir
from relayish.expr import Match, PatternCtor, PatternVar
from relayish.testing import check_grad, check_jvp, check_vmap, example_inputs
from relayish.testing.strategies import modules
from relayish.traverse import ExprMutator, bound_twice, post_order
from relayish.types import DataType, is_first_order
from typecheck.solver import map_type, substitute

HEAVY = os.environ.get("RELAYISH_HYPOTHESIS") == "heavy"
SCALAR = ir.TensorType(ir.FloatType(64), ir.Shape())
SMOOTH_OPS = ("add", "sub", "mul", "neg", "sq", "tanh", "sin", "cos", "sigmoid", "sum", "mean", "matmul")
GRAD_CHECK = {"max_elements": 8, "projections": 4}
LARGEST_VALUE = 1e4
HEALTH = [HealthCheck.too_slow, HealthCheck.data_too_large, HealthCheck.filter_too_much]


# -- 1. every generated module with Grad type-checks and evaluates -------------------------------


@settings(max_examples=2000 if HEAVY else 200, deadline=None, suppress_health_check=HEALTH)
@given(modules(grad=True))
def test_generated_modules_with_grad_type_check_and_evaluate(module):
    relayish.infer_types(module)
    expanded = ad.expand(module)  # the transform's output: an ordinary program, Grad-free
    assert not any(isinstance(node, (ir.Grad, ir.Jvp, ir.Vmap)) for fn in expanded.functions.values() for node in post_order(fn))
    assert not [v.name_hint for fn in expanded.functions.values() for v in bound_twice(fn)]
    text = relayish.astext(expanded)
    back = relayish.infer_types(relayish.parse(text))
    assert relayish.alpha_equal(back, expanded) and relayish.astext(back) == text
    relayish.evaluate(module, "main", *example_inputs(module["main"], seed=0, type_defs=module.type_defs))


# -- 2. the generator, smooth and in float64, against finite differences ----------------------------


class _Loss:
    """Weighted sums of the tensors in values of given types, as IR: each tensor's place in a type
    (a tuple field, a constructor's field) gets its own weight ``k + 1``, and a value of a data type is
    summed by a global of its own (``@loss_<k>``, one per data type met, with its arguments), which
    matches each constructor and calls itself, or another such global, on the fields that hold data."""

    def __init__(self, module: relayish.Module):
        self.module = module
        self.names: dict[DataType, str] = {}
        self.todo: list[DataType] = []
        self.weights = 0

    def total(self, parts: list[tuple[ir.Expr, ir.Type]]) -> ir.Expr:
        """``sum_k (k + 1) * sum(tensor_k)`` over the tensors of ``parts`` (expressions and their types)."""
        terms: list[ir.Expr] = []
        stack = list(reversed(parts))
        while stack:
            value, ty = stack.pop()
            if isinstance(ty, ir.TupleType):
                stack.extend(reversed([(ir.Proj(value, k), field) for k, field in enumerate(ty.fields)]))
            elif isinstance(ty, DataType):
                terms.append(ir.Call(ir.GlobalVar(self.summer(ty)), [value]))
            else:
                self.weights += 1
                terms.append(ir.Call(ir.Op("mul"), [ir.Call(ir.Op("sum"), [value]), ir.Constant(np.float64(self.weights))]))
        total = terms[0] if terms else ir.Constant(np.float64(0))
        for term in terms[1:]:
            total = ir.Call(ir.Op("add"), [total, term])
        return total

    def summer(self, ty: DataType) -> str:
        """The name of the global that sums a value of ``ty``, made later (``functions``)."""
        if ty not in self.names:  # generated globals are main and g<k>
            self.names[ty] = f"loss_{len(self.names)}"
            self.todo.append(ty)
        return self.names[ty]

    def functions(self) -> dict[str, ir.Function]:
        """The globals ``summer`` named, each a match over its type's constructors."""
        made: dict[str, ir.Function] = {}
        while self.todo:
            ty = self.todo.pop()
            definition = self.module.type_defs[ty.name]
            mapping = dict(zip(definition.params, ty.args))
            value = ir.Var("v", ty)
            patterns, bodies = [], []
            for ctor in definition.ctors:
                fields = [ir.Var(f"f{k}") for k in range(len(ctor.fields))]
                patterns.append(PatternCtor(ctor.name, [PatternVar(f) for f in fields]))
                bodies.append(self.total([(f, substitute(t, mapping)) for f, t in zip(fields, ctor.fields)]))
            dims: set[ir.TypeVar] = set()  # the global is polymorphic over those of @main's dimensions that ty has
            map_type(ty, lambda v: v, lambda d: dims.update(d.free_vars()) or d)  # visits every dimension, changes none
            made[self.names[ty]] = ir.Function([value], Match(value, patterns, bodies), SCALAR,
                                               sorted(dims, key=lambda tv: tv.serial))
        return made


def with_loss(module: relayish.Module) -> relayish.Module:
    """``module`` with ``@loss(params) = let %r = @main(params) in sum_k (k + 1) * sum(tensor_k of %r)``,
    data values in the result summed by globals of their own (``_Loss``)."""
    main = module["main"]
    params = [ir.Var(p.name_hint, p.type_annotation) for p in main.params]
    result = ir.Var("r", main.ret_type)
    loss = _Loss(module)
    body = ir.Let(result, ir.Call(ir.GlobalVar("main"), params), loss.total([(result, main.ret_type)]))
    functions = {**loss.functions(), "loss": ir.Function(params, body, SCALAR, main.type_params)}
    return module.with_functions({**module.functions, **functions})


class _FiniteConstants(ExprMutator):
    def rewrite(self, old: ir.Expr, new: ir.Expr) -> ir.Expr:
        if isinstance(new, ir.Constant) and new.value.dtype.kind == "f" and not np.all(np.isfinite(new.value)):
            return ir.Constant(np.nan_to_num(new.value, nan=0.5, posinf=2.0, neginf=-2.0), span=new.span)
        return new


def with_finite_constants(module: relayish.Module) -> relayish.Module:
    """``module`` with NaN and infinite constants replaced (NaN by 0.5, +-inf by +-2)."""
    return module.with_functions({name: _FiniteConstants().mutate(fn) for name, fn in module.functions.items()})


def usable_value(value: Any) -> bool:
    return bool(np.isfinite(value)) and abs(float(value)) <= LARGEST_VALUE


SMOOTH_MODULES = modules(grad=True, dtypes=(ir.FloatType(64),), ops=SMOOTH_OPS, max_nodes=24)


@settings(deadline=None, suppress_health_check=HEALTH)
@given(SMOOTH_MODULES)
def test_generated_smooth_modules_grad_matches_finite_differences(module):
    module = with_loss(with_finite_constants(module))
    relayish.infer_types(module)
    args = example_inputs(module["main"], seed=0, type_defs=module.type_defs)
    assume(usable_value(relayish.evaluate(module, "loss", *args)))
    check_grad(module, args, name="loss", **GRAD_CHECK)


@settings(deadline=None, suppress_health_check=HEALTH)
@given(SMOOTH_MODULES)
def test_generated_smooth_modules_jvp_matches_finite_differences(module):
    """Forward mode of the same loss (its parameters tensors and tuples) along random tangents."""
    module = with_loss(with_finite_constants(module))
    assume(all(is_first_order(p.type_annotation) for p in module["loss"].params))
    relayish.infer_types(module)
    args = example_inputs(module["main"], seed=0, type_defs=module.type_defs)
    assume(usable_value(relayish.evaluate(module, "loss", *args)))
    check_jvp(module, args, name="loss")


# -- 3. our own generator of smooth programs -----------------------------------------------------

S = "Tensor(FloatType(64), Shape())"
V = "Tensor(FloatType(64), Shape(3))"
M = "Tensor(FloatType(64), Shape(3, 3))"
SHAPES = {S: (), V: (3,), M: (3, 3)}
UNARY = ("tanh", "sin", "cos", "sigmoid", "neg", "sq")
Scope = tuple[tuple[str, str], ...]


class SmoothProgram:
    """Draws one expression of a requested type (S, V or M) from hypothesis choices.

    Every compound expression is parenthesized, so the text never depends on precedence.
    Names are numbered, so closures never shadow what they capture.
    """

    def __init__(self, draw: Callable[[st.SearchStrategy], Any]):
        self.draw = draw
        self.count = 0

    def fresh(self, hint: str) -> str:
        self.count += 1
        return f"%{hint}{self.count}"

    def pick(self, options: list[tuple[int, Callable[[], str]]]) -> str:
        weighted = [make for weight, make in options for _ in range(weight)]
        return self.draw(st.sampled_from(weighted))()

    def number(self) -> str:
        return f"{self.draw(st.integers(-6, 6)) / 4}f64"

    def constant(self, ty: str) -> str:
        shape = SHAPES[ty]
        if not shape:
            return self.number()
        values = [str(self.draw(st.integers(-6, 6)) / 4) for _ in range(int(np.prod(shape)))]
        return f"tensor(FloatType(64), Shape({', '.join(map(str, shape))}), [{', '.join(values)}])"

    def any_type(self) -> str:
        return self.draw(st.sampled_from((S, S, V, M)))

    def expr(self, ty: str, scope: Scope, depth: int) -> str:
        names = [name for name, t in scope if t == ty]
        leaves = [(4 if names else 0, lambda: self.draw(st.sampled_from(names))), (1, lambda: self.constant(ty))]
        if depth <= 0:
            return self.pick(leaves)
        d = depth - 1
        return self.pick(leaves + [
            (3, lambda: self.unary(ty, scope, d)),
            (4, lambda: self.binary(ty, scope, d)),
            (2, lambda: self.reduction(ty, scope, d)),
            (2, lambda: self.let(ty, scope, d)),
            (2, lambda: self.branch(ty, scope, d)),
            (2, lambda: self.closure(ty, scope, d)),
            (1 if depth >= 2 else 0, lambda: self.gradient(ty, scope, d)),
        ])  # fmt: skip

    def unary(self, ty: str, scope: Scope, depth: int) -> str:
        arg = self.expr(ty, scope, depth)
        if self.draw(st.integers(0, len(UNARY))) == len(UNARY):
            return f"@exp(@tanh({arg}))"  # exp of a value in (-1, 1)
        return f"@{self.draw(st.sampled_from(UNARY))}({arg})"

    def binary(self, ty: str, scope: Scope, depth: int) -> str:
        op = self.draw(st.sampled_from("+-*"))
        other = self.draw(st.sampled_from((ty, ty, S)))  # a scalar broadcasts
        a, b = self.expr(ty, scope, depth), self.expr(other, scope, depth)
        return f"({b} {op} {a})" if self.draw(st.booleans()) else f"({a} {op} {b})"

    def reduction(self, ty: str, scope: Scope, depth: int) -> str:
        if ty == S:
            op = self.draw(st.sampled_from(("sum", "mean")))
            return f"@{op}({self.expr(self.draw(st.sampled_from((V, M))), scope, depth)})"
        if ty == V:
            return f"@sum({self.expr(M, scope, depth)}, axis={self.draw(st.integers(0, 1))})"
        return f"@matmul({self.expr(M, scope, depth)}, {self.expr(M, scope, depth)})"

    def let(self, ty: str, scope: Scope, depth: int) -> str:
        var, var_type = self.fresh("t"), self.any_type()
        value = self.expr(var_type, scope, depth)
        body = self.expr(ty, scope + ((var, var_type),), depth)
        return f"(let {var} = {value} in {body})"

    def branch(self, ty: str, scope: Scope, depth: int) -> str:
        compare = self.draw(st.sampled_from(("<", ">")))
        operand = self.expr(self.draw(st.sampled_from((S, V))), scope, depth)
        condition = f"@sum({operand}) {compare} {self.number()}"
        return f"(if {condition} then {self.expr(ty, scope, depth)} else {self.expr(ty, scope, depth)})"

    def closure(self, ty: str, scope: Scope, depth: int) -> str:
        """A closure over the scope, called twice: its captured values get two adjoints."""
        fn, param, param_type = self.fresh("f"), self.fresh("p"), self.any_type()
        body = self.expr(ty, scope + ((param, param_type),), depth)
        first, second = self.expr(param_type, scope, depth), self.expr(param_type, scope, depth)
        return f"(let {fn} = fn ({param}: {param_type}) -> {ty} {{ {body} }} in ({fn}({first}) * {fn}({second})))"

    def gradient(self, ty: str, scope: Scope, depth: int) -> str:
        """``Grad(fn (q: ty) { a scalar over q and the scope })(arg)[1][0]``, of type ty."""
        param = self.fresh("q")
        body = self.expr(S, scope + ((param, ty),), depth)
        arg = self.expr(ty, scope, depth)
        return f"Grad(fn ({param}: {ty}) -> {S} {{ {body} }})({arg})[1][0]"


@st.composite
def smooth_programs(draw: Callable[[st.SearchStrategy], Any], depth: int = 4) -> tuple[str, tuple]:
    """The text of ``@main(%x: S, %v: V, %m: M) -> S`` and arguments in [-1.5, 1.5]."""
    body = SmoothProgram(draw).expr(S, (("%x", S), ("%v", V), ("%m", M)), depth)
    text = f"def @main(%x: {S}, %v: {V}, %m: {M}) -> {S} {{\n  {body}\n}}\n"
    rng = np.random.default_rng(draw(st.integers(0, 2**32 - 1)))
    args = tuple(rng.uniform(-1.5, 1.5, shape) for shape in ((), (3,), (3, 3)))
    return text, args


@settings(deadline=None, suppress_health_check=HEALTH)
@given(smooth_programs())
def test_own_smooth_programs_type_check(program):
    text, _ = program
    module = relayish.infer_types(relayish.parse(text, filename="smooth.rly"))
    assert relayish.astext(module["main"].ret_type) == S


@settings(deadline=None, suppress_health_check=HEALTH)
@given(smooth_programs())
def test_own_smooth_programs_grad_matches_finite_differences(program):
    text, args = program
    module = relayish.parse(text, filename="smooth.rly")
    assume(usable_value(relayish.evaluate(module, "main", *args)))
    check_grad(module, args, name="main", **GRAD_CHECK)


# -- 4. generated functions batched, against the loop over examples ------------------------------


@settings(max_examples=2000 if HEAVY else 100, deadline=None, suppress_health_check=HEALTH)
@given(modules(grad=True, adts=False), st.data())
def test_generated_functions_batched_equal_the_loop_over_examples(module, data):
    main = relayish.infer_types(module)["main"]
    assume(is_first_order(main.ret_type))
    mappable = [is_first_order(p.type_annotation) for p in main.params]
    assume(any(mappable))
    axes = tuple(0 if can and data.draw(st.booleans()) else None for can in mappable)
    axes = axes if any(a is not None for a in axes) else tuple(0 if can else None for can in mappable)
    sizes = {tv: 2 for tv in main.type_params}
    examples = [example_inputs(main, seed=k, dims=sizes) for k in range(3)]
    try:
        for example in examples:
            relayish.evaluate(module, "main", *example)
    except relayish.RelayRuntimeError:
        assume(False)  # an example the function itself fails on (a step limit, say)
    try:
        ad.vmap(module, "main", axes)
    except relayish.RelayTypeError as err:  # the documented refusals: operators without a batched form here
        assert "has no batched form" in str(err) or "has no batching rule" in str(err), err
        assume(False)
    args = [np.stack([e[i] for e in examples]) if axis == 0 and not isinstance(examples[0][i], tuple)
            else tuple(np.stack(parts) for parts in zip(*(e[i] for e in examples))) if axis == 0
            else examples[0][i] for i, axis in enumerate(axes)]
    check_vmap(module, args, axes, atol=1e-5)
