"""Arguments drawn for a function's parameters: accepted by the evaluator's own argument
check and by whole runs, with the documented value ranges and one size per dimension variable."""

from __future__ import annotations

import collections

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

import relayish
from relayish import ir
from relayish.testing.inputs import example_inputs, inputs, leaves
from runtime.values import check_value

MIXED = """
def @main[n: Dim](%x: Tensor(FloatType(32), Shape(n, 3)),
                  %y: (Tensor(IntType(32), Shape()), Tensor(FloatType(64), Shape(n + 1)))) {
  (@sum(%x, axis=1), %y[0] * 2, @log(%y[1]))
}
"""

POLYNOMIAL = """
def @main[n: Dim, m: Dim](%a: Tensor(FloatType(16), Shape(2*n, m)),
                          %b: (Tensor(UIntType(8), Shape((n + 1) // 2)), (Tensor(IntType(64), Shape(n*m)),)),
                          %c: Tensor(BoolType, Shape(m, 1)), %d: Tensor(IntType(8), Shape())) {
  (%a, %b, %c, %d)
}
"""

# Every base type once, for the value ranges.
ALL_DTYPES = """
def @main(%f16: Tensor(FloatType(16), Shape(5)), %f32: Tensor(FloatType(32), Shape(5)),
          %f64: Tensor(FloatType(64), Shape(5)), %i8: Tensor(IntType(8), Shape(5)),
          %i64: Tensor(IntType(64), Shape(5)), %u16: Tensor(UIntType(16), Shape(5)),
          %b: Tensor(BoolType, Shape(5)), %s: Tensor(FloatType(32), Shape())) {
  %s
}
"""


def main(text: str) -> ir.Function:
    return relayish.parse(text)["main"]


def arrays(args: tuple) -> list[np.ndarray]:
    return [leaf for _, leaf in leaves(args)]


def assert_accepted(fn: ir.Function, args: tuple) -> dict:
    """The evaluator's argument check accepts every argument; returns the sizes it bound."""
    assert len(args) == len(fn.params)
    dims: dict = {}
    for param, arg in zip(fn.params, args):
        check_value(param.type_annotation, arg, dims, f"%{param.name_hint}")
    for leaf in arrays(args):
        assert type(leaf) is np.ndarray  # never a NumPy scalar, even for rank 0
    return dims


@given(st.data())
def test_drawn_arguments_pass_the_evaluators_check_and_run(data):
    module = relayish.parse(MIXED)
    fn = module["main"]
    x, (i, v) = args = data.draw(inputs(fn))
    dims = assert_accepted(fn, args)
    (n,) = fn.type_params
    assert dims[n] == x.shape[0] and v.shape == (x.shape[0] + 1,)
    sums, doubled, logs = relayish.evaluate(module, "main", *args)
    np.testing.assert_allclose(sums, x.sum(axis=1), rtol=1e-5)
    assert doubled == 2 * i
    np.testing.assert_allclose(logs, np.log(v), rtol=1e-12)


@given(st.data())
def test_polynomial_dimensions_use_one_size_per_variable(data):
    fn = main(POLYNOMIAL)
    a, (b, (c_long,)), c, d = args = data.draw(inputs(fn, min_dim=1, max_dim=5))
    n, m = a.shape[0] // 2, a.shape[1]
    assert 1 <= n <= 5 and 1 <= m <= 5
    assert a.shape == (2 * n, m) and b.shape == ((n + 1) // 2,) and c_long.shape == (n * m,)
    assert c.shape == (m, 1) and d.shape == ()
    assert [x.dtype for x in arrays(args)] == [np.float16, np.uint8, np.int64, np.bool_, np.int8]
    assert_accepted(fn, args)


@given(st.data())
def test_values_stay_in_the_documented_ranges(data):
    args = data.draw(inputs(main(ALL_DTYPES)))
    for leaf in arrays(args):
        if leaf.dtype.kind == "f":
            assert np.all((leaf >= 0.5) & (leaf <= 2.0)), leaf
        elif leaf.dtype.kind in "iu":
            assert np.all((leaf >= 1) & (leaf <= 5)), leaf
        else:
            assert leaf.dtype == np.bool_


@given(st.integers(1, 6))
def test_given_dims_fix_the_sizes(size):
    fn = main(MIXED)
    (n,) = fn.type_params
    x, (_, v) = example_inputs(fn, seed=size, dims={n: size})
    assert x.shape == (size, 3) and v.shape == (size + 1,)


def test_sizes_cover_the_range_and_stay_in_it():
    fn = main(MIXED)
    sizes = {example_inputs(fn, seed=seed, min_dim=2, max_dim=3)[0].shape[0] for seed in range(40)}
    assert sizes == {2, 3}


def test_each_unknown_dimension_gets_a_size_of_its_own_in_the_range():
    """``?`` sizes are drawn like a dimension variable's, but each where it occurs: two ``?``, or a
    ``?`` beside ``n``, need not be equal (the type says nothing relating them)."""
    fn = main("""
def @main[n: Dim](%x: Tensor(FloatType(32), Shape(?, n)), %y: (Tensor(IntType(32), Shape(?, 2, ?)), Tensor(BoolType, Shape(n)))) {
  %x
}
""")
    seen = collections.Counter()
    for seed in range(60):
        args = example_inputs(fn, seed=seed, min_dim=1, max_dim=3)
        assert_accepted(fn, args)
        (x, (y, b)) = args
        assert x.shape[1] == b.shape[0] and y.shape[1] == 2
        sizes = (x.shape[0], y.shape[0], y.shape[2])
        assert all(1 <= k <= 3 for k in sizes)
        seen[len(set(sizes)) > 1] += 1
    assert seen[True] and seen[False]


def test_example_inputs_are_deterministic_per_seed_and_accepted():
    fn = main(POLYNOMIAL)
    first, again, other = (example_inputs(fn, seed=s) for s in (7, 7, 8))
    for a, b in zip(arrays(first), arrays(again)):
        assert a.dtype == b.dtype
        np.testing.assert_array_equal(a, b)
    assert any(a.shape != b.shape or not np.array_equal(a, b) for a, b in zip(arrays(first), arrays(other)))
    assert_accepted(fn, first)
    args = example_inputs(main(ALL_DTYPES), seed=3)
    assert [x.dtype.name for x in args] == ["float16", "float32", "float64", "int8", "int64", "uint16", "bool", "float32"]
    assert args[-1].shape == () and type(args[-1]) is np.ndarray
    assert all(np.all((x >= 0.5) & (x <= 2.0)) for x in args[:3]) and all(np.all((x >= 1) & (x <= 5)) for x in args[3:6])


def test_a_function_type_works_like_a_function():
    t = ir.TensorType(ir.IntType(32), ir.Shape(2, 2))
    args = example_inputs(ir.FuncType([t, ir.TupleType([t, ir.UNIT])], t), seed=1)
    assert args[0].shape == (2, 2) and args[1][0].dtype == np.int32 and args[1][1] == ()


def test_a_negative_dimension_is_rejected():
    fn = main("def @main[n: Dim](%x: Tensor(FloatType(32), Shape(n - 2))) { %x }")
    (n,) = fn.type_params
    with pytest.raises(ValueError, match="negative dimension"):
        example_inputs(fn, dims={n: 1})
    assert example_inputs(fn, dims={n: 3})[0].shape == (1,)


@given(st.data())
def test_draws_with_a_negative_dimension_are_skipped(data):
    (x,) = data.draw(inputs(main("def @main[n: Dim](%x: Tensor(FloatType(32), Shape(n - 2))) { %x }")))
    assert x.shape[0] in (0, 1, 2)


@pytest.mark.parametrize(
    "source, param",
    [
        ("def @main(%f: (Tensor(FloatType(32), Shape())) -> Tensor(FloatType(32), Shape())) { 0 }", "%f"),
        ("def @main(%x: Tensor(FloatType(32), Shape()), %r: RefType(Tensor(FloatType(32), Shape()))) { 0 }", "%r"),
        ("def @main[a: Type](%v: (a, Tensor(FloatType(32), Shape()))) { 0 }", "%v"),
        ("def @main[t: BaseType](%v: Tensor(t, Shape(2))) { 0 }", "%v"),
        ("def @main[s: Shape](%v: Tensor(FloatType(32), s)) { 0 }", "%v"),
        ("def @main(%x: Tensor(FloatType(32), Shape()), %free) { %free }", "%free"),
    ],
)
def test_unsupported_parameters_raise_value_error_naming_them(source, param):
    fn = main(source)
    for make in (inputs, example_inputs):
        with pytest.raises(ValueError, match=f"{param}.*tensors of a concrete dtype and shape"):
            make(fn)


# -- data types ---------------------------------------------------------------------------------

DATA = """
type Rose[a] { RoseA(a, List[Rose[a]]) }
type Pair { PairA((Tensor(IntType(8), Shape(2)), Option[Tensor(BoolType, Shape())])) }

def @main[n: Dim](%l: List[Tensor(FloatType(32), Shape(n, 2))], %x: Tensor(FloatType(32), Shape(n)),
                  %t: (Tree[Tensor(FloatType(64), Shape())], Rose[List[Tensor(UIntType(8), Shape(n))]]), %p: Pair) {
  (%l, %x, %t, %p)
}
"""


def data_parts(value) -> tuple[list[np.ndarray], collections.Counter]:
    """The arrays in ``value`` (tuples and data values), and how many constructors built each of
    the data values in its tuples (by their path), counted by name."""
    arrays, parts, stack = [], collections.Counter(), [(value, "")]
    while stack:
        v, path = stack.pop()
        if isinstance(v, relayish.DataValue):
            parts[path] += 1
            parts[v.ctor] += 1
            stack.extend((field, path) for field in v.fields)
        elif isinstance(v, tuple):
            stack.extend((item, f"{path}[{k}]") for k, item in enumerate(v))
        else:
            arrays.append(v)
    return arrays, parts


def data_module() -> relayish.Module:
    return relayish.parse(DATA, prelude=True)


def test_data_values_fit_their_types_and_stay_small():
    """DataValues of every constructor, their tensors sized by the same dimension variables as
    the other parameters, accepted by the evaluator's check of data values, and bounded: past
    DATA_PARTS constructors each value is finished the shortest way."""
    from relayish.testing.inputs import DATA_PARTS

    module = data_module()
    fn = module["main"]
    ctors: collections.Counter = collections.Counter()
    lengths = set()
    for seed in range(60):
        args = example_inputs(fn, seed=seed, type_defs=module.type_defs)
        dims: dict = {}
        for param, arg in zip(fn.params, args):
            check_value(param.type_annotation, arg, dims, f"%{param.name_hint}", type_defs=module.type_defs)
        n = args[1].shape[0]
        arrays, parts = data_parts(args)
        assert all(type(a) is np.ndarray for a in arrays)
        assert all(count <= 3 * DATA_PARTS for path, count in parts.items() if path.startswith("["))
        assert all(a.shape == (n, 2) and a.dtype == np.float32 for a in data_parts(args[0])[0])
        ctors.update(name for name in parts if not name.startswith("["))
        length, cell = 0, args[0]
        while cell.ctor == "Cons":
            length, cell = length + 1, cell.fields[1]
        lengths.add(length)
        assert relayish.evaluate(module, "main", *args)[1] is not None
    assert set(ctors) == {"Cons", "Nil", "Leaf", "Node", "RoseA", "PairA", "Some", "None"}
    assert {0, 1, 2} <= lengths and max(lengths) <= DATA_PARTS


def test_data_values_are_deterministic_per_seed_and_drawn_by_hypothesis_too():
    module = data_module()
    fn = module["main"]
    first, again = (example_inputs(fn, seed=4, type_defs=module.type_defs) for _ in range(2))
    assert repr(first) == repr(again)

    @given(inputs(fn, type_defs=module.type_defs))
    def check(args):
        dims: dict = {}
        for param, arg in zip(fn.params, args):
            check_value(param.type_annotation, arg, dims, f"%{param.name_hint}", type_defs=module.type_defs)

    check()


@pytest.mark.parametrize(
    "source, message",
    [
        ("def @main(%l: List[Tensor(FloatType(32), Shape())]) { 0 }", "%l.*data type List is not in type_defs"),
        ("type Box { Box((Tensor(FloatType(32), Shape())) -> Tensor(FloatType(32), Shape())) }\n"
         "def @main(%b: Box) { 0 }", "%b.*a constructor of a data type in it holds"),
        ("def @main[a: Type](%o: Option[a]) { 0 }", "%o.*a is not a tensor"),
    ],
)
def test_data_types_that_cannot_be_made_raise_value_error_naming_the_parameter(source, message):
    module = relayish.parse(source, prelude=True)
    with pytest.raises(ValueError, match=message):
        example_inputs(module["main"], type_defs=None if "List" in source else module.type_defs)


def test_a_data_type_without_finite_values_is_refused():
    module = relayish.parse("type Stream { More(Tensor(FloatType(32), Shape()), Stream) }\ndef @main(%s: Stream) { 0 }")
    with pytest.raises(ValueError, match="cannot make a value of Stream"):
        example_inputs(module["main"], type_defs=module.type_defs)
