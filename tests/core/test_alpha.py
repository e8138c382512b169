"""Alpha-equivalence, structural hashing, free variables and the expression mutator."""

from __future__ import annotations

import attrs
import numpy as np
from hypothesis import given, settings

from relayish import alpha_equal, astext, free_vars, parse, structural_hash
from relayish.dims import Dim, as_dim
from relayish.expr import (
    Ascribe, Call, Constant, Expr, Function, GlobalVar, Let, Op, Proj, Tuple, Var, Zero,
)  # fmt: skip
from relayish.module import Module
from relayish.testing.ir_strategies import exprs, modules
from relayish.traverse import ExprMutator, post_order
from relayish.types import (
    DataType, BaseType, FloatType, ForallType, FuncType, Kind, RefType, Shape, TensorType, TupleType, Type, TypeVar,
)  # fmt: skip

F32 = FloatType(32)
SCALAR = TensorType(F32, Shape())


def op(name: str, *args: Expr, **attributes) -> Call:
    return Call(Op(name), args, attributes)


def identity(hint: str) -> Function:
    x = Var(hint, SCALAR)
    return Function([x], x)


def assert_alpha(a, b) -> None:
    assert alpha_equal(a, b) and alpha_equal(b, a)
    assert structural_hash(a) == structural_hash(b)


def assert_not_alpha(a, b) -> None:
    assert not alpha_equal(a, b) and not alpha_equal(b, a)


# -- equal up to renaming ------------------------------------------------------------------


def test_renamed_bound_variables_are_alpha_equal():
    assert_alpha(identity("x"), identity("y"))
    assert_alpha(identity("x"), identity("x"))
    a, b = Var("a"), Var("b")
    assert_alpha(Let(a, Constant(1.0), op("add", a, a)), Let(b, Constant(1.0), op("add", b, b)))
    f, g, n, m = Var("f"), Var("g"), Var("n"), Var("m")
    assert_alpha(
        Let(f, Function([n], Call(f, [n])), f),
        Let(g, Function([m], Call(g, [m])), g),
    )


def typed_identity(dim_name: str, type_name: str) -> Function:
    n, t = TypeVar(dim_name, Kind.DIM), TypeVar(type_name, Kind.BASE_TYPE)
    x = Var("x", TensorType(t, Shape(n, 2 * n + 1, (n + 1) // 2)))
    return Function([x], Ascribe(x, TensorType(t, Shape(n, 2 * n + 1, (n + 1) // 2))), x.type_annotation, [n, t])


def test_renamed_type_variables_are_alpha_equal():
    assert_alpha(typed_identity("n", "t"), typed_identity("m", "s"))
    a, b = TypeVar("a"), TypeVar("b")
    assert_alpha(ForallType([a], FuncType([a], a)), ForallType([b], FuncType([b], b)))
    # Structural equality of types does not rename: distinct variables are distinct.
    assert ForallType([a], FuncType([a], a)) != ForallType([b], FuncType([b], b))


def test_alpha_equal_nan_constants_and_attributes():
    assert_alpha(Constant(np.float32(np.nan)), Constant(np.float32(-np.nan)))
    nan_fill = lambda: op("full", shape=(2,), fill_value=float("nan"))  # noqa: E731
    assert_alpha(nan_fill(), nan_fill())


# -- different -----------------------------------------------------------------------------


def test_different_constants_are_not_alpha_equal():
    pairs = [
        (Constant(0.0), Constant(-0.0)),
        (Constant(np.float32(1.0)), Constant(np.float64(1.0))),
        (Constant(np.int32(1)), Constant(np.int64(1))),
        (Constant(np.int8(1)), Constant(np.uint8(1))),
        (Constant(1), Constant(True)),
        (Constant(1.0), Constant(np.array([1.0], dtype=np.float32))),
        (Constant(np.zeros((2, 0), np.float32)), Constant(np.zeros((0, 2), np.float32))),
        (Constant(np.float32(np.nan)), Constant(np.float32(np.inf))),
        (Constant(np.array([1, 2], np.int32)), Constant(np.array([2, 1], np.int32))),
    ]
    for a, b in pairs:
        assert_not_alpha(a, b)


def test_different_attributes_are_not_alpha_equal():
    x = Var("x")
    assert_not_alpha(op("sum", x, axis=0), op("sum", x, axis=1))
    assert_not_alpha(op("sum", x, axis=0), op("sum", x))
    assert_not_alpha(op("sum", x, axis=0), op("sum", x, axis=(0,)))
    assert_not_alpha(op("sum", x, keepdims=True), op("sum", x))
    assert_not_alpha(op("cast", x, dtype=F32), op("cast", x, dtype=FloatType(64)))
    assert_not_alpha(op("full", shape=(1,), fill_value=1.0), op("full", shape=(1,), fill_value=2.0))
    assert_alpha(op("sum", x, keepdims=False), op("sum", x))


def test_structure_differences_are_not_alpha_equal():
    x, y = Var("x"), Var("y")
    assert_not_alpha(op("sub", x, y), op("sub", y, x))
    assert_not_alpha(Var("x"), Var("x"))  # different free variables with the same name
    assert_alpha(x, x)
    p, q = Var("p"), Var("q")
    assert_not_alpha(Function([p, q], p), Function([p, q], q))
    r, s = Var("r"), Var("s")
    assert_not_alpha(Function([r], r), Function([s], x))  # bound vs free
    assert_not_alpha(Let(Var("a", SCALAR), x, x), Let(Var("a"), x, x))  # annotation or not
    assert_not_alpha(Function([], x, SCALAR), Function([], x))  # return type or not
    assert_not_alpha(Proj(x, 0), Proj(x, 1))
    assert_not_alpha(GlobalVar("f"), Op("f"))
    assert_not_alpha(GlobalVar("f"), GlobalVar("g"))
    assert_not_alpha(Tuple([x]), x)
    assert_not_alpha(Tuple([x, Tuple([])]), Tuple([x]))
    assert_not_alpha(Call(GlobalVar("f"), [x]), Call(GlobalVar("f"), [x, x]))
    assert_not_alpha(Zero(SCALAR), Zero(TensorType(F32, Shape(1))))
    n, m = TypeVar("n", Kind.DIM), TypeVar("m", Kind.DIM)
    v, w = Var("v", TensorType(F32, Shape(n))), Var("w", TensorType(F32, Shape(m)))
    assert_not_alpha(Function([v], v, None, [n, m]), Function([w], w, None, [n, m]))
    k, t = TypeVar("k", Kind.DIM), TypeVar("t", Kind.SHAPE)
    assert_not_alpha(Function([], x, None, [k]), Function([], x, None, [t]))  # kinds differ
    assert_not_alpha(Function([], x, None, [k]), Function([], x))


def test_alpha_equal_types_and_modules():
    n = TypeVar("n", Kind.DIM)
    assert_not_alpha(TensorType(F32, Shape(n)), TensorType(F32, Shape(TypeVar("n", Kind.DIM))))
    assert_not_alpha(RefType(SCALAR), TupleType([SCALAR]))
    assert_not_alpha(FuncType([], SCALAR), FuncType([SCALAR], SCALAR))
    assert_alpha(Module({"f": identity("x")}), Module({"f": identity("y")}))
    assert_not_alpha(Module({"f": identity("x")}), Module({"g": identity("x")}))
    assert_not_alpha(Module({"f": identity("x")}, {"op": SCALAR}), Module({"f": identity("x")}))


# -- hypothesis: renaming, hashing, perturbation ------------------------------------------------


class Renamer(ExprMutator):
    """A copy with a fresh object (and hint) for every variable and type variable."""

    def __init__(self) -> None:
        super().__init__()
        self.tvars: dict[int, TypeVar] = {}

    def tvar(self, tv: TypeVar) -> TypeVar:
        if id(tv) not in self.tvars:
            self.tvars[id(tv)] = TypeVar("renamed", tv.kind)
        return self.tvars[id(tv)]

    def dim(self, d: Dim) -> Dim:
        return d.substitute({tv: as_dim(self.tvar(tv)) for tv in d.free_vars()})

    def type(self, t: Type | None) -> Type | None:
        if t is None or isinstance(t, BaseType):
            return t
        if isinstance(t, TypeVar):
            return self.tvar(t)
        if isinstance(t, Shape):
            return Shape(*(self.dim(d) for d in t.dims))
        if isinstance(t, TensorType):
            return TensorType(self.type(t.dtype), self.type(t.shape))
        if isinstance(t, TupleType):
            return TupleType([self.type(f) for f in t.fields])
        if isinstance(t, FuncType):
            return FuncType([self.type(p) for p in t.params], self.type(t.ret))
        if isinstance(t, RefType):
            return RefType(self.type(t.value))
        if isinstance(t, DataType):
            return DataType(t.name, [self.type(a) for a in t.args])
        assert isinstance(t, ForallType)
        return ForallType([self.tvar(p) for p in t.params], self.type(t.body))

    def rewrite(self, old: Expr, new: Expr) -> Expr:
        if isinstance(old, Var):
            return Var("renamed", self.type(old.type_annotation))
        if isinstance(new, Function):
            type_params = [self.tvar(tv) for tv in new.type_params]
            return attrs.evolve(new, type_params=type_params, ret_type=self.type(new.ret_type))
        if isinstance(new, (Ascribe, Zero)):
            return attrs.evolve(new, type=self.type(new.type))
        return new

    def module(self, m: Module) -> Module:
        return Module(
            {name: self.mutate(fn) for name, fn in m.functions.items()},
            {name: self.type(t) for name, t in m.op_decls.items()},
            m.type_defs,
        )


def variables(m: Module) -> set[int]:
    return {id(node) for fn in m.functions.values() for node in post_order(fn) if isinstance(node, Var)}


@settings(max_examples=150)
@given(modules())
def test_renamed_copy_is_alpha_equal_and_hashes_equal(m):
    copy = Renamer().module(m)
    assert not variables(copy) & variables(m)
    assert_alpha(copy, m)


@settings(max_examples=150)
@given(modules())
def test_structural_hash_agrees_with_alpha_equal_on_parsed_modules(m):
    back = parse(astext(m))
    assert alpha_equal(back, m)
    assert structural_hash(back) == structural_hash(m)


def changed_constant(c: Constant) -> Constant | None:
    """The constant with its first element changed to a value alpha-equivalence must see."""
    if c.value.size == 0:
        return None
    value = c.value.copy()
    flat = value.reshape(-1)
    first = flat[0]
    if value.dtype.kind == "b":
        flat[0] = not first
    elif value.dtype.kind == "f":
        flat[0] = 0.0 if np.isnan(first) else -first  # 0.0 becomes -0.0
    else:
        flat[0] = first - 1 if first != np.iinfo(value.dtype).min else first + 1
    return Constant(value)


class ChangeFirst(ExprMutator):
    """Changes the first constant (post order) that can be changed."""

    def __init__(self) -> None:
        super().__init__()
        self.done = False

    def rewrite(self, old: Expr, new: Expr) -> Expr:
        if not self.done and isinstance(new, Constant):
            changed = changed_constant(new)
            if changed is not None:
                self.done = True
                return changed
        return new


@settings(max_examples=150)
@given(exprs())
def test_changing_a_constant_breaks_alpha_equality(e):
    mutator = ChangeFirst()
    changed = mutator.mutate(e)
    if mutator.done:
        assert_not_alpha(changed, e)
    else:
        assert changed is e


# -- free variables -------------------------------------------------------------------------


def test_free_vars():
    x, y, z = Var("x"), Var("y"), Var("z")
    assert free_vars(x) == [x]
    assert free_vars(Function([x], op("add", x, y))) == [y]
    assert free_vars(Let(x, y, x)) == [y]
    assert free_vars(op("mul", op("add", z, y), z)) == [z, y]
    shared = op("add", y, z)
    assert free_vars(Tuple([shared, shared, x])) == [y, z, x]
    f, n = Var("f"), Var("n")
    assert free_vars(Let(f, Function([n], Call(f, [n])), Call(f, [y]))) == [y]
    closure = Function([n], op("add", n, x))
    assert free_vars(Function([x], closure)) == []
    assert free_vars(closure) == [x]
    assert free_vars(Function([], GlobalVar("g"))) == []


@settings(max_examples=100)
@given(modules())
def test_generated_definitions_are_closed(m):
    for fn in m.functions.values():
        assert free_vars(fn) == []


# -- the mutator ------------------------------------------------------------------------------


class OneToTwo(ExprMutator):
    def rewrite(self, old: Expr, new: Expr) -> Expr:
        if isinstance(new, Constant) and new.value.dtype == np.int32 and new.value.shape == () and new.value == 1:
            return Constant(2)
        return new


def test_mutator_replaces_constants_and_keeps_sharing():
    x, y = Var("x"), Var("y")
    one = Constant(1)
    shared = op("add", x, one)
    untouched = op("mul", y, Constant(3))
    e = Tuple([shared, shared, untouched, Let(y, one, op("sub", y, Constant(1)))])
    result = OneToTwo().mutate(e)
    assert result.fields[0] is result.fields[1]
    assert result.fields[2] is untouched
    assert result.fields[0].args[0] is x
    assert result.fields[3].var is y
    values = [int(n.value) for n in post_order(result) if isinstance(n, Constant)]
    assert sorted(values) == [2, 2, 3]  # one shared 1 (rewritten once) and a second 1
    assert alpha_equal(result.fields[0], op("add", x, Constant(2)))
    assert [int(n.value) for n in post_order(e) if isinstance(n, Constant)].count(1) == 2  # e unchanged
    assert OneToTwo().mutate(untouched) is untouched


class CopyConstants(ExprMutator):
    def rewrite(self, old: Expr, new: Expr) -> Expr:
        return Constant(new.value) if isinstance(new, Constant) else new


@settings(max_examples=150)
@given(exprs())
def test_mutator_rebuilds_exactly_the_paths_to_changes(e):
    result = CopyConstants().mutate(e)
    assert alpha_equal(result, e)
    has_constant: dict[int, bool] = {}
    for node in post_order(e):
        has_constant[id(node)] = isinstance(node, Constant) or any(has_constant[id(c)] for c in node.children())
    kept = {id(node) for node in post_order(result)}
    for node in post_order(e):
        assert (id(node) in kept) != has_constant[id(node)]


def test_a_type_parameter_shared_by_two_definitions_compares_like_two():
    """Transforms may reuse a global's type parameters for a new global (AD's dual globals
    do); the module must still equal its printed and parsed form, where they are distinct."""
    n = TypeVar("n", Kind.DIM)
    x = Var("x", TensorType(FloatType(32), Shape(n)))
    y = Var("y", TensorType(FloatType(32), Shape(n)))
    shared = Module({"f": Function([x], x, type_params=[n]), "g": Function([y], y, type_params=[n])})
    assert alpha_equal(parse(astext(shared)), shared)
    m = TypeVar("m", Kind.DIM)
    z = Var("z", TensorType(FloatType(32), Shape(m)))
    other = Module({"f": Function([x], x, type_params=[n]), "g": Function([z], x, type_params=[m])})
    assert not alpha_equal(other, shared)  # g returning f's x is not g returning its own
