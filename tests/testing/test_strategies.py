"""The well-typed program generator (relayish.testing.strategies) and its operator rules.

Oracles: the generator decides every type itself (relayish.ops.generation, written from the operators'
documented semantics), so the type checker, the evaluator (whose results must have the
declared type) and the printer/parser round trip all check it and are checked by it.
1,000 programs in the default profile; RELAYISH_HYPOTHESIS=heavy runs 5,000.
"""

from __future__ import annotations

import collections
import itertools
import os
import warnings

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from hypothesis.statistics import collector

import relayish
from relayish.errors import NonExhaustiveMatch
from relayish.expr import (
    EXPR_CLASSES, Ascribe, Call, Construct, Function, Grad, If, IsCtor, Match, Op, PatternCtor,
    PatternTuple, Unpack, Var,
)  # fmt: skip
from relayish.ops import all_ops, get_op
from relayish.ops.generation import Indices, Sizes
from relayish.parser import prelude_module
from relayish.testing.choices import Stream
from relayish.testing.inputs import example_inputs
from relayish.testing.strategies import Features, _Generator, coverage, modules, planned_call, programs, random_programs
from relayish.traverse import post_order
from relayish.types import DataType, FloatType, IntType, TensorType, TypeVar, has_unknown_dim
from runtime.values import check_value

HEAVY = os.environ.get("RELAYISH_HYPOTHESIS") == "heavy"
PROGRAMS = 5000 if HEAVY else 1000
ALL_NODES = {cls.__name__ for cls in EXPR_CLASSES}
ALL_OPS = {"@" + name for name in all_ops()}


def run_counting(test, examples: int) -> dict:
    """Run a @given test; return hypothesis's statistics of its generate phase."""
    stats: list[dict] = []
    with collector.with_value(stats.append):
        settings(max_examples=examples, database=None)(test)()
    cases = stats[0]["generate-phase"]["test-cases"]
    statuses = collections.Counter(case["status"] for case in cases)
    return {"valid": statuses["valid"], "rejected": statuses["invalid"] + statuses["overrun"]}


def assert_round_trips(typed: relayish.Module) -> None:
    text = relayish.astext(typed)
    back = relayish.parse(text)
    assert relayish.alpha_equal(back, typed), text
    assert relayish.astext(back) == text


def test_generated_programs_type_check_evaluate_and_round_trip():
    """The acceptance property: every generated program type-checks (its matches cover every
    value: no warning), evaluates without an error to a value of its declared type, and
    round-trips through the printer and parser; the generator rejects nothing (it builds
    well-typed programs, it does not filter)."""
    seen: collections.Counter = collections.Counter()

    @given(programs())
    def check(program):
        module = program.module
        with warnings.catch_warnings():
            warnings.simplefilter("error", NonExhaustiveMatch)
            typed = relayish.infer_types(module)
        result = relayish.evaluate(module, "main", *program.args)
        main = typed["main"]
        dims: dict = {}
        for param, arg in zip(main.params, program.args):
            check_value(param.type_annotation, arg, dims, "argument", type_defs=module.type_defs)
        check_value(main.ret_type, result, dims, "result of @main", type_defs=module.type_defs)  # the generator's declared type
        assert_round_trips(typed)
        seen.update(coverage(module))

    stats = run_counting(check, PROGRAMS)
    assert stats["valid"] >= PROGRAMS
    assert stats["rejected"] <= 0.05 * stats["valid"], stats
    missing = sorted((ALL_NODES - {"Grad", "Jvp", "Vmap"} | ALL_OPS) - set(seen))
    assert not missing, f"never generated: {missing}"


def test_coverage_table_reaches_every_node_and_operator():
    """With Grad enabled, 1,000 modules contain every expression node and every operator
    (tests/ad evaluates generated programs with Grad)."""
    seen: collections.Counter = collections.Counter()

    @given(modules(grad=True))
    def check(module):
        assert_round_trips(relayish.infer_types(module))
        seen.update(coverage(module))

    run_counting(check, 1000)
    table = {name: seen[name] for name in sorted(ALL_NODES | ALL_OPS)}
    missing = [name for name, count in table.items() if count == 0]
    assert not missing, f"never generated: {missing}\ncoverage table: {table}"


@settings(max_examples=300)
@given(st.sampled_from(sorted(all_ops())), st.binary(min_size=64, max_size=64), st.booleans())
def test_each_rule_gives_exactly_its_result_type(name, data, symbolic):
    """Per operator: the checker's relation and the NumPy semantics both give the target type
    from the arguments and attributes the rule chose (dyn_reshape's type has ``?`` for the sizes
    its newshape gives: the checker checks them where the result is returned)."""
    rule, hint = get_op(name).rule, get_op(name).hint
    gen = _Generator(Stream(data), Features())
    n = TypeVar("n", relayish.ir.Kind.DIM)
    gen.scope_dims = (n,) if symbolic else ()
    target = gen.hinted_type(hint)
    plan = rule(gen, target) if target is not None else None
    if plan is None:
        return  # this operator cannot make that type: fine, the generator tries another
    params = [Var(f"a{i}", arg.type) for i, arg in enumerate(plan.args)]
    fn = Function(params, planned_call(name, params, plan), target, (n,) if symbolic else ())
    typed = relayish.infer_types(relayish.Module({"main": fn}))
    assert typed["main"].ret_type == target
    args = list(example_inputs(fn, seed=0, dims={n: 2}))
    for i, arg in enumerate(plan.args):
        if isinstance(arg, Indices):
            args[i] = np.zeros_like(args[i])  # in range for any size >= 1
        elif isinstance(arg, Sizes):
            args[i] = arg.value({n: relayish.ir.Dim.const(2)})  # the shape the values give at that size
    result = relayish.evaluate(typed, "main", *args)
    check_value(target, result, {}, f"@{name}'s result")


def test_features_switch_constructs_off():
    plain = Features(lets=True, tuples=False, ifs=False, closures=False, recursion=False, refs=False,
                     symbolic=False, ops=("add", "mul"), dtypes=(FloatType(32),))

    @given(modules(plain))
    def check(module):
        counts = coverage(module)
        assert not {"If", "RefNew", "RefRead", "RefWrite", "Grad", "Jvp", "Vmap", "Proj", "Tuple"} & set(counts)
        assert {name for name in counts if name.startswith("@")} <= {"@add", "@mul"}
        functions = [node for fn in module.functions.values() for node in post_order(fn) if isinstance(node, Function)]
        assert len(functions) == len(module.functions)  # no closures: only the globals
        assert all(not fn.type_params for fn in module.functions.values())
        relayish.infer_types(module)

    run_counting(check, 100)


def test_the_same_bytes_give_the_same_module():
    data = bytes(range(256)) * 16
    first = _Generator(Stream(data), Features()).module()
    second = _Generator(Stream(data), Features()).module()
    assert relayish.alpha_equal(first, second)


def test_zero_bytes_give_the_simplest_program():
    module = _Generator(Stream(b""), Features()).module()
    assert list(module.functions) == ["main"]
    assert relayish.astext(module) == (
        "def @main(%x: Tensor(FloatType(32), Shape())) -> Tensor(FloatType(32), Shape()) {\n  %x\n}\n"
    )


def test_symbolic_dimensions_are_bound_by_tensor_parameters():
    """Every dimension variable of a global occurs alone in a tensor parameter (not only in a
    closure's, a reference's or a data type's), so the evaluator learns its size from the
    arguments. (The Prelude's globals, called now and then, have type parameters: Type.)"""

    @given(modules())
    def check(module):
        for fn in module.functions.values():
            bare = set()
            for param in fn.params:
                stack = [param.type_annotation]
                while stack:
                    ty = stack.pop()
                    if isinstance(ty, TensorType):
                        bare |= {atom for d in ty.shape.dims for atom in d.atoms() if d == relayish.ir.Dim.atom(atom)}
                    elif isinstance(ty, relayish.ir.TupleType):
                        stack += ty.fields
            assert {tv for tv in fn.type_params if tv.kind is relayish.ir.Kind.DIM} <= bare

    run_counting(check, 200)


def test_unknown_operator_in_features_is_a_clear_error():
    with pytest.raises(ValueError, match="no generator rule for operator"):
        _Generator(Stream(b""), Features(ops=("add", "frobnicate"))).module()


def test_grad_nodes_only_with_the_flag():
    @given(modules(grad=True, max_nodes=60))
    def check(module):
        for node in (n for fn in module.functions.values() for n in post_order(fn) if isinstance(n, Grad)):
            assert isinstance(node.func, relayish.ir.Expr)
        relayish.infer_types(module)

    run_counting(check, 100)

    @given(modules())
    def never(module):
        assert not {"Grad", "Jvp", "Vmap"} & set(coverage(module))

    run_counting(never, 100)


def test_refs_are_written_and_read():
    @given(modules(max_nodes=60))
    def check(module):
        seen.update(coverage(module))

    seen: collections.Counter = collections.Counter()
    run_counting(check, 300)
    assert seen["RefWrite"] >= 10 and seen["RefRead"] >= 10 and seen["RefNew"] >= 10, seen


def test_integer_division_and_powers_are_guarded():
    """An integer divisor is made nonzero and a signed integer exponent nonnegative."""
    ops_seen = []

    @given(modules(ops=("div", "pow"), dtypes=(IntType(32),), recursion=False))
    def check(module):
        for fn in module.functions.values():
            for node in post_order(fn):
                if isinstance(node, Call) and isinstance(node.callee, Op) and node.callee.name in ("div", "pow"):
                    guard = node.args[1]
                    expected = "where" if node.callee.name == "div" else "relu"
                    assert isinstance(guard, Call) and guard.callee.name == expected, relayish.astext(node)
                    ops_seen.append(node.callee.name)
        relayish.evaluate(module, "main", *example_inputs(module["main"], type_defs=module.type_defs))

    run_counting(check, 200)
    assert {"div", "pow"} <= set(ops_seen)


def test_programs_refuse_no_generated_module():
    """Programs come with arguments for @main that the evaluator accepts, none rejected."""

    @given(programs(max_nodes=10))
    def check(program):
        relayish.evaluate(program.module, program.entry, *program.args)

    stats = run_counting(check, 100)
    assert stats["rejected"] == 0



def test_some_operator_arguments_are_seen_through_unknown_dimensions():
    """With ``unknown_dims`` (the default), a share of the operator calls take an argument ascribed
    a type with ``?``; the call is ascribed its known type again, so the program's types do not change."""
    seen = 0
    for program in itertools.islice(random_programs(4, Features(grad=True)), 60):
        checks = [node for fn in program.module.functions.values() for node in post_order(fn)
                  if isinstance(node, Ascribe) and has_unknown_dim(node.type)]
        seen += bool(checks)
        for check in checks:
            assert any(d.is_unknown for d in check.type.shape.dims)
    assert seen >= 5
    plain = random_programs(4, Features(grad=True, unknown_dims=False))
    assert not any("?" in str(p.module) for p in itertools.islice(plain, 60))


def test_some_entry_parameters_have_unknown_sizes_that_their_arguments_fit():
    """In programs (not in modules, which come without arguments), a share of @main's parameters
    have ``?`` for known sizes, as a user writes them; the body binds each to its known type, the
    arguments have the sizes the body was written for (the program runs), and another size for a
    ``?`` is refused where the body binds it."""
    widened = 0
    for program in itertools.islice(random_programs(6, Features(max_nodes=12)), 100):
        main = program.module["main"]
        unknown = [k for k, p in enumerate(main.params) if has_unknown_dim(p.type_annotation)]
        if not unknown:
            continue
        widened += 1
        relayish.evaluate(program.module, "main", *program.args)
        k = unknown[0]
        ty, arg = main.params[k].type_annotation, program.args[k]
        if isinstance(ty, TensorType):
            axis = next(i for i, d in enumerate(ty.shape.dims) if d.is_unknown)
            wrong = np.concatenate([arg, arg.take([0], axis=axis)], axis=axis)
            args = (*program.args[:k], wrong, *program.args[k + 1:])
            with pytest.raises(relayish.RelayRuntimeError, match=rf"expected .*\(dimension {axis} "):
                relayish.evaluate(program.module, "main", *args)
    assert widened >= 8
    for program in itertools.islice(random_programs(6, Features(unknown_dims=False, max_nodes=12)), 50):
        assert not any(has_unknown_dim(p.type_annotation) for p in program.module["main"].params)

    @given(modules())
    def never(module):
        assert not any(has_unknown_dim(p.type_annotation) for p in module["main"].params)

    run_counting(never, 30)


# -- algebraic data types -------------------------------------------------------------------------


PRELUDE_GLOBALS = set(prelude_module().functions)


def unchecked_unpacks(fn: Function) -> list[Unpack]:
    """The ``Unpack[C]``s in ``fn`` of a value that neither ``C`` builds right there nor an
    enclosing ``if Is[C](%v)`` tested (``%v`` the very variable unpacked)."""
    tested: set[int] = set()
    for node in post_order(fn):
        if isinstance(node, If) and isinstance(node.cond, IsCtor) and isinstance(node.cond.value, Var):
            tested |= {id(u) for u in post_order(node.then_branch)
                       if isinstance(u, Unpack) and u.value is node.cond.value and u.ctor == node.cond.ctor}

    def built(u: Unpack) -> bool:
        value = u.value.expr if isinstance(u.value, Ascribe) else u.value
        return isinstance(value, Construct) and value.ctor == u.ctor

    return [u for u in post_order(fn) if isinstance(u, Unpack) and id(u) not in tested and not built(u)]


def data_features(program) -> set[str]:
    """What a program does with data types, in words (``unchecked unpack`` must never occur)."""
    module = program.module
    found = {f"type {name}" if name in ("List", "Option") else "random type" for name in module.type_defs}
    for td in module.type_defs.values():
        found |= {"type parameters"} if td.params else set()
        found |= {"recursive type"} if any(td.name in relayish.astext(t) for c in td.ctors for t in c.fields) else set()
    for name, fn in module.functions.items():
        if name in PRELUDE_GLOBALS:
            found.add(f"prelude @{name}")
            continue
        found |= {"unchecked unpack"} if unchecked_unpacks(fn) else set()
        found |= {"build global"} if name.startswith("build") else set()
        found |= {"fold global"} if name.startswith("fold") else set()
        for node in post_order(fn):
            if isinstance(node, Match):
                patterns = list(node.patterns)
                while patterns:
                    p = patterns.pop()
                    if isinstance(p, (PatternCtor, PatternTuple)):
                        found.add("tuple pattern" if isinstance(p, PatternTuple) else "constructor pattern")
                        found |= {"nested constructor pattern"} if any(isinstance(q, PatternCtor) for q in p.patterns) else set()
                        patterns.extend(p.patterns)
            elif isinstance(node, Grad) and any(isinstance(n, (Construct, Match)) for n in post_order(node.func)):
                found.add("data inside Grad")
    main = module["main"]
    for param, arg in zip(main.params, program.args):
        if isinstance(param.type_annotation, DataType):
            assert isinstance(arg, relayish.DataValue), arg
            found.add("@main takes a data value")
    found |= {"@main returns a data value"} if isinstance(main.ret_type, DataType) else set()
    return found


def test_data_types_are_defined_built_taken_apart_and_folded():
    """Modules define the Prelude's List and Option and random data types (with parameters,
    recursive); programs match values with nested and tuple patterns, test and unpack them (an
    ``Unpack`` only of a value its constructor built or ``Is`` tested), call the Prelude's globals,
    build and fold recursive values in globals of their own, pass data values to @main and get
    them back; and ``Grad`` differentiates code that does all this."""
    seen: collections.Counter = collections.Counter()
    for program in itertools.islice(random_programs(8, Features(grad=True)), 400):
        seen.update(data_features(program))
    assert not seen["unchecked unpack"], seen
    expected = {
        "type List", "type Option", "random type", "type parameters", "recursive type", "constructor pattern",
        "nested constructor pattern", "tuple pattern", "build global", "fold global", "prelude @foldl",
        "prelude @get_or", "@main takes a data value", "@main returns a data value", "data inside Grad",
    }  # fmt: skip
    rare = sorted(name for name in expected if seen[name] < 3)
    assert not rare, f"seldom or never generated: {rare}\n{seen}"
    assert 0.2 < sum(1 for p in itertools.islice(random_programs(8), 300) if p.module.type_defs) / 300 < 0.45


def test_without_adts_there_are_no_data_types():
    for program in itertools.islice(random_programs(9, Features(adts=False)), 100):
        assert not program.module.type_defs
        assert not {"Construct", "IsCtor", "Unpack", "Match"} & set(coverage(program.module))


def test_coverage_counts_patterns():
    module = relayish.parse("""
def @main(%l: List[Tensor(FloatType(32), Shape())]) -> Tensor(FloatType(32), Shape()) {
  match (%l, 1.0) { (Cons(%h, Cons(_, _)), %x) => %h + %x, _ => 0.0 }
}
""", prelude=True)
    counts = coverage(module.with_functions({"main": module["main"]}))
    assert (counts["Match"], counts["PatternTuple"], counts["PatternCtor"], counts["PatternVar"], counts["PatternWildcard"]) \
        == (1, 1, 2, 2, 3)
