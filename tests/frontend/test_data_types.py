"""Algebraic data types in decorated Python (frontend/data.py, frontend/patterns.py,
frontend/prelude.py): ``relayish.data`` declarations and the Prelude's types, constructors
called inside and outside ``@relay``, Python's ``match`` translated to ``match``, the Prelude's
functions as ``relay.map`` and co., data values passed in and returned, gradients through
trees and lists (against finite differences, in the JIT and the evaluator), and every error
the frontend gives for them, at the file, line and column of the user's code.

The functions are in ``data_functions.py`` and ``data_error_cases.py``; the values expected
were worked out by hand (in the comments) or by NumPy, and every function's undecorated
Python (``f.python``) must agree with it.
"""

from __future__ import annotations

import inspect
import warnings
from pathlib import Path
from typing import Any

import numpy as np
import pytest

import relayish
from relayish import (
    Cons, DataValue, FrontendError, Leaf, List, Nil, Node, Nothing, RelayRuntimeError, Some, relay,
)  # fmt: skip
from relayish.module import CtorDef, TypeDef
from relayish.testing import check_grad
from relayish.types import DataType, FloatType, Kind, Shape, TensorType, TypeVar

from . import data_error_cases as E
from . import data_functions as D

F64 = TensorType(FloatType(64), Shape())
BACKENDS = ["interp", "jit"]


def listed(*items: Any) -> Any:
    """A List value of ``items``, built by the constructors as a user would."""
    result = Nil()
    for item in reversed(items):
        result = Cons(item, result)
    return result


def items_of(value: Any) -> list:
    """The elements of a List value, taken apart by Python's match (as a user would)."""
    found = []
    while True:
        match value:
            case Cons(head, tail):
                found.append(head)
                value = tail
            case Nil():
                return found
            case _:
                raise AssertionError(f"not a list: {value!r}")


def on(backend: str, fn: Any) -> Any:
    """``fn`` on a backend (the tests' default is the evaluator: tests/conftest.py)."""
    return relay(backend=backend)(fn.python_function)


# declarations and values in ordinary Python ------------------------------------------------------
def test_a_declaration_is_an_ir_type_definition():
    assert D.Tree.definition() == TypeDef("Tree", [], [
        CtorDef("Leaf", [TensorType(FloatType(64), Shape(4))]), CtorDef("Node", [DataType("Tree"), DataType("Tree")])])
    a = TypeVar("a", Kind.TYPE)
    pair = D.Pair.definition()
    assert pair.name == "Pair" and [p.name for p in pair.params] == ["a"] and pair.params[0].kind is Kind.TYPE
    assert pair.ctors == (CtorDef("MkPair", [pair.params[0], pair.params[0]]),)
    rose = D.Rose.definition().ctors[0]
    assert rose.name == "Rose" and rose.fields[1].name == "List" and rose.fields[1].args[0].name == "Rose"
    assert D.Even.definition().ctors[1].fields == (DataType("Odd"),)  # named before Odd existed
    assert repr(D.Pair) == "Pair[a]" and repr(relayish.List) == "List[a]" and a.kind is Kind.TYPE


def test_constructors_build_the_values_the_backends_take():
    leaf = D.Leaf(np.ones(4))
    node = D.Tree.Node(leaf, leaf)
    assert isinstance(node, DataValue) and node.ctor == "Node" and node.fields == (leaf, leaf)
    assert isinstance(node, D.Node) and not isinstance(node, D.Leaf)
    assert isinstance(DataValue("Leaf", (np.ones(4),)), D.Leaf)  # a plain one, as a backend returns
    assert Nothing().ctor == "None" and repr(Nothing()) == "Nothing()" and isinstance(DataValue("None"), Nothing)
    assert repr(listed(1.0, 2.0)) == "Cons(1.0, Cons(2.0, Nil()))"
    assert repr(Some) == "<constructor Some of Option[a]>"
    assert relayish.Tree.Leaf is Leaf and relayish.Node is Node


def test_python_match_takes_constructed_values_apart():
    match listed(1.0, 2.0, 3.0):
        case Cons(a, Cons(b, rest)):
            assert (a, b) == (1.0, 2.0) and items_of(rest) == [3.0]
        case _:
            raise AssertionError("no case matched")
    match D.Figure.Rect(2.0, 3.0):
        case D.Figure.Circle(r):
            raise AssertionError(f"a Rect matched Circle({r})")
        case D.Figure.Rect(w):  # fewer fields than the constructor: the rest are not matched
            assert w == 2.0


def test_constructor_mistakes_in_python_are_type_errors_that_say_the_fields():
    with pytest.raises(TypeError, match=r"Cons takes 2 fields, given 1: write Cons\(a, List\[a\]\)"):
        Cons(1.0)
    with pytest.raises(TypeError, match=r"Leaf takes 1 field, given 2: write Leaf\(Tensor\[Float64, \(4,\)\]\)"):
        D.Leaf(1.0, 2.0)
    with pytest.raises(TypeError, match="constructor fields are positional"):
        Cons(head=1.0, tail=Nil())
    with pytest.raises(AttributeError, match="has no constructor Leef: did you mean Leaf?"):
        D.Tree.Leef  # noqa: B018
    with pytest.raises(TypeError, match=r"List\[a\] takes 1 type argument, given 2"):
        List[F64, F64]


def test_a_field_type_string_is_read_where_data_was_called():
    element = relayish.Tensor[relayish.Float64, (2,)]  # noqa: F841 - read by the string "element"
    box = relayish.data("Box", params=["a"], Mk=["element", "tuple[a, Box[a]]"], Empty=[])
    a = box.definition().params[0]
    assert box.definition().ctors[0].fields == (TensorType(FloatType(64), Shape(2)),
                                                relayish.ir.TupleType([a, DataType("Box", [a])]))


@pytest.mark.parametrize("call, phrase", [
    (lambda: relayish.data("T"), "needs at least one constructor"),
    (lambda: relayish.data("T", Mk=relayish.Float), "give the list of the fields' types"),
    (lambda: relayish.data("T", Mk="Float"), "give the list of the fields' types"),
    (lambda: relayish.data("T", params="a", Mk=[]), "the parameters are a list of names"),
    (lambda: relayish.data("T", params=["a", "a"], Mk=[]), "named twice"),
    (lambda: relayish.data("match", Mk=[]), "'match' cannot name a data type: it is a word of the text format"),
    (lambda: relayish.data("T", Tensor=[]), "'Tensor' cannot name a constructor"),
    (lambda: relayish.data("T", definition=[]), "'definition' cannot name a constructor: data types have an attribute"),
    (lambda: relayish.data("T", params=["2x"], Mk=[]), "'2x' cannot name a type parameter: it is not an identifier"),
])  # fmt: skip
def test_declaration_mistakes_are_type_errors_at_once(call, phrase):
    with pytest.raises(TypeError, match=phrase):
        call()


# translation: IR and types -----------------------------------------------------------------------
def test_a_match_is_translated_to_a_match_with_a_clause_for_what_falls_through():
    """get_or_zero's match misses None: Python goes on after it, so a last clause ``_`` does."""
    text = D.get_or_zero.astext()
    assert text.startswith("type Option[a: Type] {\n  Some(a),\n  None\n}\n")
    assert """match %o {
    Some(%x) =>
      let %y_2: Tensor(FloatType(64), Shape()) = %x in
      %y_2,
    _ =>
      %y
  }""" in text
    assert "List" not in text and "@map" not in text  # only what it uses
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # no NonExhaustiveMatch: the added clause covers the rest
        D.area.ir  # noqa: B018


def test_a_module_holds_the_data_types_and_prelude_globals_it_uses():
    module = D.lengths.ir
    assert list(module.type_defs) == ["List"]
    assert list(module.functions) == ["lengths", "map", "foldl", "length"]  # @length calls @foldl
    tree = D.tree_loss.ir
    assert list(tree.type_defs) == ["Tree"] and set(tree.functions) == {"tree_loss", "cell", "build"}
    assert tree["cell"].params[0].type_annotation == DataType("Tree")
    assert list(D.rose_sum.ir.type_defs) == ["List", "Rose"]  # Rose's field names List
    assert list(D.parity.ir.type_defs) == ["Even", "Odd"]


def test_a_function_named_like_a_prelude_global_is_renamed():
    module = D.map.ir
    assert set(module.functions) == {"map_2", "map"}
    assert items_of(D.map(listed(1.0, 2.0))) == [2.0, 3.0]


def test_the_checked_types_of_data_values():
    prelude_tour = D.prelude_tour.ir["prelude_tour"]
    assert prelude_tour.params[0].type_annotation == DataType("List", [F64])
    wrapped = D.wrapped.ir["wrapped"]
    assert wrapped.ret_type == DataType("List", [DataType("Option", [F64])])
    scaled = D.scaled.ir["scaled"]  # polymorphic in the Dim N of its element type
    assert [t.name for t in scaled.type_params] == ["N"]
    assert scaled.params[0].type_annotation.args[0].shape.dims[0].lone_atom() == scaled.type_params[0]


# values, each against the undecorated Python ------------------------------------------------------
VALUE_CASES = [
    (D.area, (D.Figure.Circle(2.0),), 12.0),  # 3 r^2
    (D.area, (D.Figure.Rect(2.0, 3.0),), 6.0),
    (D.area, (D.Figure.Empty(),), -1.0),  # no case: the code after the match
    (D.get_or_zero, (Some(3.0),), 6.0),
    (D.get_or_zero, (Nothing(),), 0.0),
    (D.first_two, (listed(1.0, 2.0, 3.0),), 21.0),  # total 1, last 2: 1 + 20
    (D.first_two, (listed(4.0),), 40.0),  # total 0, last 4
    (D.first_two, (listed(),), -5.0),
    (D.heads, (listed(1.0), listed(2.0)), 3.0),
    (D.heads, (listed(1.0), listed()), 1.0),
    (D.heads, (listed(), listed(2.0)), -1.0),
    (D.sum_somes, (listed(Some(1.0), Nothing(), Some(3.0)), 5), 4.0),  # the match in a loop; Nil: no case
    (D.sum_somes, (listed(Some(1.0), Nothing(), Some(3.0)), 1), 1.0),
    (D.any_cons, (listed(1.0),), 1),
    (D.any_cons, (listed(),), 0),
    (D.rose_sum, (D.Rose.Rose(1.0, listed(D.Rose.Rose(2.0, listed()), D.Rose.Rose(3.0, listed(D.Rose.Rose(4.0, listed()))))),), 10.0),
    (D.parity, (D.Even.NextOdd(D.Odd.NextEven(D.Even.NextOdd(D.Odd.NextEven(D.Even.Nought())))),), 4),
    (D.sign_of_first, (listed(-2.0),), -1.0),
    (D.sign_of_first, (listed(),), 0.0),
    (D.decayed_sines, (listed(0.5, 1.0),), np.sin(0.5) * 0.5 + np.sin(1.0)),
    # both = rev([1, 2, 3]) ++ [10, 20] = [3, 2, 1, 10, 20]; zip: (1, 10), (2, 20): 10 + 40
    (D.prelude_tour, (listed(1.0, 2.0, 3.0), listed(10.0, 20.0), Some(5.0)), (5, 2.0, 50.0, 5.0)),
    (D.prelude_tour, (listed(), listed(7.0, 8.0), Nothing()), (2, 8.0, 0.0, -1.0)),
    # leaves doubled: 10, 2, 4; folded with -: 10 - (2 - 4)
    (D.tree_tour, (Node(Leaf(5.0), Node(Leaf(1.0), Leaf(2.0))),), 12.0),
    (D.lengths, (listed(listed(1.0), listed(), listed(1.0, 2.0)),), 3),
]  # fmt: skip


@pytest.mark.parametrize("backend", BACKENDS)
@pytest.mark.parametrize("fn, args, expected", VALUE_CASES, ids=[f"{c[0].__name__}-{i}" for i, c in enumerate(VALUE_CASES)])
def test_values(fn, args, expected, backend):
    got = on(backend, fn)(*args)
    expected = expected if isinstance(expected, tuple) else (expected,)
    got_tuple = got if isinstance(got, tuple) else (got,)
    python = fn.python(*args)
    python = python if isinstance(python, tuple) else (python,)
    for g, p, e in zip(got_tuple, python, expected, strict=True):
        assert np.isclose(g, e, rtol=1e-12) and np.isclose(p, e, rtol=1e-12), (got, python, expected)


@pytest.mark.parametrize("backend", BACKENDS)
def test_data_values_in_and_out(backend):
    """A list goes in (Python numbers converted to the element dtype), a list comes out, and
    Python's match takes it apart; so do a returned Option and a tree."""
    scaled = on(backend, D.scaled)
    out = scaled(listed(np.arange(3, dtype=np.float32), [1, 2, 3]), 2.0)
    got = items_of(out)
    assert [g.dtype for g in got] == [np.float32] * 2
    np.testing.assert_array_equal(np.stack(got), [[0, 2, 4], [2, 4, 6]])
    assert items_of(scaled(listed(np.ones(5, np.float32)), 1.0))[0].shape == (5,)  # another N
    match on(backend, D.nothing_or_some)(True, 2.0):
        case Some(x):
            assert x == 2.0
        case _:
            raise AssertionError("expected Some")
    assert isinstance(on(backend, D.nothing_or_some)(False, 2.0), Nothing)
    tail = on(backend, D.tail_or_self)(listed(1.0, 2.0))
    assert items_of(tail) == [2.0] and type(tail) is Cons
    wrapped = items_of(on(backend, D.wrapped)(listed(1.0, 2.0)))
    assert [type(w) for w in wrapped] == [Some, Some] and [w.fields[0] for w in wrapped] == [1.0, 2.0]
    pair = on(backend, D.swap)(D.Pair.MkPair(1.0, 2.0))
    assert isinstance(pair, D.Pair.MkPair) and pair.fields == (2.0, 1.0)


# gradients ----------------------------------------------------------------------------------------
@pytest.mark.parametrize("backend", BACKENDS)
def test_a_tree_of_tanh_cells_built_from_a_tensor(backend):
    rng = np.random.default_rng(11)
    xs, w, u = rng.normal(size=(6, 4)), rng.normal(size=4), rng.normal(size=4)
    loss = on(backend, D.tree_loss)
    expected = D.tree_value(xs, 0, 6, w, u).sum()
    assert np.isclose(loss(xs, w, u), expected, rtol=1e-12)
    assert np.isclose(D.tree_loss.python(xs, w, u), expected, rtol=1e-12)
    grad = relay.grad(loss)
    check_grad(loss, [xs, w, u], grad=grad)
    value, (gx, gw, gu) = grad(xs, w, u)
    assert np.isclose(value, expected, rtol=1e-12) and gx.shape == (6, 4) and gw.shape == (4,)


@pytest.mark.parametrize("backend", BACKENDS)
def test_the_gradient_with_respect_to_a_tree_is_a_tree(backend):
    """The tree of tree_loss passed in: its leaves' gradients are the rows' gradients there."""
    rng = np.random.default_rng(13)
    xs, w, u = rng.normal(size=(6, 4)), rng.normal(size=4), rng.normal(size=4)
    tree = D.build.python(xs, 0, 6)
    value, (gt, gw, gu) = relay.grad(on(backend, D.tree_input_loss))(tree, w, u)
    expected, (gx, gw_built, gu_built) = relay.grad(on(backend, D.tree_loss))(xs, w, u)
    assert np.isclose(value, expected, rtol=1e-12)
    np.testing.assert_allclose(gw, gw_built, rtol=1e-12)
    np.testing.assert_allclose(gu, gu_built, rtol=1e-12)
    leaves, stack = [], [gt]
    while stack:  # left to right, as build takes the rows
        match stack.pop():
            case D.Leaf(g):
                leaves.append(g)
            case D.Node(left, right):
                stack.extend([right, left])
    np.testing.assert_allclose(np.stack(leaves), gx, rtol=1e-12)


@pytest.mark.parametrize("backend", BACKENDS)
def test_map_and_foldl_with_a_lambda_and_a_local_def(backend):
    rng = np.random.default_rng(12)
    xs, w = rng.normal(size=(5, 3)), rng.normal(size=3)
    acc = np.zeros(3)
    for row in np.tanh(xs * w):
        acc = acc * 0.5 + row * w
    loss = on(backend, D.list_loss)
    assert np.isclose(loss(xs, w), acc.sum(), rtol=1e-12)
    assert np.isclose(D.list_loss.python(xs, w), acc.sum(), rtol=1e-12)
    check_grad(loss, [xs, w], grad=relay.grad(loss))


@pytest.mark.parametrize("backend", BACKENDS)
def test_the_gradient_with_respect_to_a_list_is_a_list(backend):
    """decayed_sines(x) = sum_i 0.5^(n-1-i) sin(x_i), so d/dx_i = 0.5^(n-1-i) cos(x_i)."""
    xs = np.array([0.3, -1.2, 2.0, 0.7])
    value, (grad,) = relay.grad(on(backend, D.decayed_sines))(listed(*xs))
    weights = 0.5 ** np.arange(len(xs) - 1, -1, -1)
    assert np.isclose(value, (weights * np.sin(xs)).sum(), rtol=1e-12)
    np.testing.assert_allclose(items_of(grad), weights * np.cos(xs), rtol=1e-12)


# errors -------------------------------------------------------------------------------------------
FILE = Path(E.__file__).resolve()


def position(needle: str, function: Any = None, offset: int = 0) -> tuple[int, int]:
    """(line, column), 1-based, of the first ``needle`` in ``function``'s source from its
    ``def`` line on (in the whole file when ``function`` is None), plus ``offset`` columns."""
    if function is None:
        lines, first = FILE.read_text().splitlines(), 1
    else:
        lines, first = inspect.getsourcelines(function.python_function)
    start = next(i for i, line in enumerate(lines) if line.lstrip().startswith("def ")) if function else 0
    for k in range(start, len(lines)):
        col = lines[k].find(needle)
        if col >= 0:
            return first + k, col + 1 + offset
    raise AssertionError(f"{needle!r} is not in {getattr(function, '__name__', FILE.name)}")


ERRORS = [
    # patterns
    (E.uses_guard, "h > 0.0", "a guard (case ... if condition) is not supported"),
    (E.uses_keyword_pattern, "h)", "keyword patterns are not supported: constructor fields are positional, a pattern "
                                   "for each in order: Cons(a, List[a])"),
    (E.uses_starred_pattern, "*rest", "a starred pattern is not supported"),
    (E.uses_nested_as, "Cons(_, _) as tail", "a nested as pattern is not supported"),
    (E.uses_alternatives, "Nil() | Cons", "alternatives (|) are not supported: write one case for each"),
    (E.uses_python_none, "None:", "the Prelude's Option constructor is Nothing(), write case Nothing():"),
    (E.uses_dotted_constructor_value, "relayish.Nil:", "write case relayish.Nil():"),
    (E.uses_literal_pattern, "0.5:", "literal and value patterns are not supported"),
    (E.uses_mapping_pattern, '{"key": v}', "mapping patterns are not supported"),
    (E.captures_a_constructor_name, "Nil:", "case Nil: would capture the value in a new variable named Nil"),
    (E.class_pattern_of_a_python_class, "float(y)", "float is not a constructor"),
    (E.too_many_fields_in_pattern, "Cons(a, b, c)", "Cons takes 2 fields, given 3"),
    (E.match_misses_a_value, "match xs", "no case of this match matches Cons(_, Cons(_, _)), and the function would "
                                         "end there without a return"),
    (E.assigned_on_some_paths_of_a_case, "match xs", "y is not assigned on every path through the match"),
    # constructors, data types and the Prelude's functions in code
    (E.constructor_keyword_field, "tail=", "constructor fields are positional: write Cons(a, List[a])"),
    (E.constructor_wrong_arity, "Cons(x)", "Cons takes 2 fields, given 1: write Cons(a, List[a])"),
    (E.constructor_without_fields_as_value, "= Nil", "Nil is a constructor: write Nil() for its value", 2),
    (E.data_type_as_value, "= Option", "Option is a data type, which is no value: build one with a constructor "
                                       "(Some(a), Nothing())", 2),
    (E.prelude_keyword_argument, "l=xs", "relay.map takes its arguments by position: relay.map(f, l)"),
    (E.prelude_wrong_arity, "relay.map(xs)", "relay.map takes 2 arguments (f, l), given 1"),
    # annotations and definitions
    (E.data_type_without_arguments, "List)", "the data type List takes 1 type argument"),
    (E.two_types_named_alike, "relayish.Tree[Float64]", "two data types are named Tree (the one at"),
    (E.two_types_named_alike_in_code, "relayish.Leaf(", "two data types are named Tree"),
]  # fmt: skip


ERRORS = [(*case, 0)[:4] for case in ERRORS]  # (function, needle, phrase, offset of the construct in the needle)


@pytest.mark.parametrize("fn, needle, phrase, offset", ERRORS, ids=[c[0].__name__ for c in ERRORS])
def test_frontend_errors_point_at_the_construct(fn, needle, phrase, offset):
    with pytest.raises(FrontendError) as info:
        fn.ir  # noqa: B018
    assert_located(info.value, *position(needle, fn, offset), phrase)


def assert_located(err: FrontendError, line: int, col: int, phrase: str) -> None:
    """At data_error_cases.py:line:col, quoting the line with a caret there, saying ``phrase``."""
    assert Path(err.span.file).resolve() == FILE
    assert (err.span.line, err.span.col) == (line, col), f"at {err.span.line}:{err.span.col}, not {line}:{col}: {err}"
    assert str(err).startswith(f"{err.span.file}:{line}:{col}: ")
    assert f"\n    {' ' * (col - 1)}^" in str(err)
    assert phrase in err.message, err.message


@pytest.mark.parametrize("fn, needle, phrase", [
    (E.field_type_undefined, 'data("Unresolved"', "data type Unresolved, field 0 of Mk: cannot evaluate the field "
                                                  "type 'Undefined' where data(...) was called: name 'Undefined'"),
    (E.field_type_with_dim, 'data("WithDim"', "a field cannot have a Dim (M)"),
    (E.constructor_names_clash, 'data("Shrub"', "the data types Tree and Shrub both have a constructor Leaf (the "
                                                "Prelude's and the one at"),
])  # fmt: skip
def test_errors_in_a_definition_point_at_the_data_call(fn, needle, phrase):
    with pytest.raises(FrontendError) as info:
        fn.ir  # noqa: B018
    assert_located(info.value, *position(needle), phrase)


@pytest.mark.parametrize("backend", BACKENDS)
def test_a_wrong_data_value_names_the_parameter_and_the_field(backend):
    fn = on(backend, E.takes_a_list)
    assert fn(listed(np.ones(3), [1, 2, 3])) == 9.0
    line, col = position("xs: List", E.takes_a_list)
    cases = [
        (Some(np.ones(3)), "got the Some Some(array([1., 1., 1.])), which is not a value of the data type "
                           "List[Tensor(FloatType(64), Shape(3))]: build one with its constructors"),
        (listed(np.ones(3), np.ones(3, np.float32)), "field 1 of Cons: field 0 of Cons: got a float32 array of shape "
                                                     "(3,): pass np.float64 values (x.astype(np.float64))"),
        (listed(*[np.ones(3)] * 4, np.ones(2)), "field 1 of Cons (4 times): field 0 of Cons: got a float64 array of "
                                                "shape (2,): dimension 0 must be 3"),
        (listed([1, 2]), "field 0 of Cons: got a float64 array of shape (2,): dimension 0 must be 3"),
        (listed(np.ones(3), [1, "a", 2]), "field 1 of Cons: field 0 of Cons: got [1, 'a', 2], which is not a number"),
    ]  # fmt: skip
    for value, phrase in cases:
        with pytest.raises(RelayRuntimeError) as info:
            fn(value)
        err = info.value
        assert (Path(err.span.file).resolve(), err.span.line, err.span.col) == (FILE, line, col), str(err)
        assert err.message.startswith("argument xs of takes_a_list: expected List[Tensor[Float64, (3,)]]"), err.message
        assert phrase in err.message, err.message
