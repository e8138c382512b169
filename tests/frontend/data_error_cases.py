"""Decorated functions (and data types) that the frontend must reject, one mistake each, for
tests/frontend/test_data_types.py: it finds where each error must point by searching the
function's own source for a substring, so editing this file needs no test change as long as
those substrings stay. Nothing is translated at import.
"""

# ruff: noqa: F841

import relayish
from relayish import Cons, Dim, Float64, List, Nil, Option, Tensor, data, relay

M = Dim("M")

Unresolved = data("Unresolved", Mk=["Undefined"])  # field: Undefined is defined nowhere
WithDim = data("WithDim", Mk=[Tensor[Float64, (M,)]])  # field: a Dim
Tree = data("Tree", Leaf=[Float64])  # the Prelude's Tree has this name
Shrub = data("Shrub", Leaf=[Float64], Bush=["Shrub", "Shrub"])  # the Prelude's Tree has a Leaf too


@relay
def uses_guard(xs: List[Float64]) -> Float64:
    match xs:
        case Cons(h, _) if h > 0.0:
            return h
        case _:
            return Float64(0.0)


@relay
def uses_keyword_pattern(xs: List[Float64]) -> Float64:
    match xs:
        case Cons(head=h):
            return h
        case _:
            return Float64(0.0)


@relay
def uses_starred_pattern(p: tuple[Float64, Float64, Float64]) -> Float64:
    match p:
        case (a, *rest):
            return a


@relay
def uses_nested_as(xs: List[Float64]) -> Float64:
    match xs:
        case Cons(h, (Cons(_, _) as tail)):
            return h
        case _:
            return Float64(0.0)


@relay
def uses_alternatives(xs: List[Float64]) -> Float64:
    match xs:
        case Nil() | Cons(_, Nil()):
            return Float64(1.0)
        case _:
            return Float64(0.0)


@relay
def uses_python_none(o: Option[Float64]) -> Float64:
    match o:
        case None:
            return Float64(1.0)
        case _:
            return Float64(0.0)


@relay
def uses_dotted_constructor_value(xs: List[Float64]) -> Float64:
    match xs:
        case relayish.Nil:
            return Float64(1.0)
        case _:
            return Float64(0.0)


@relay
def uses_literal_pattern(x: Float64) -> Float64:
    match x:
        case 0.5:
            return Float64(1.0)
        case _:
            return Float64(0.0)


@relay
def uses_mapping_pattern(x: Float64) -> Float64:
    match x:
        case {"key": v}:
            return v
        case _:
            return x


@relay
def captures_a_constructor_name(xs: List[Float64]) -> Float64:
    match xs:
        case Cons(h, _):
            return h
        case Nil:
            return Float64(0.0)


@relay
def class_pattern_of_a_python_class(x: Float64) -> Float64:
    match x:
        case float(y):
            return y
        case _:
            return x


@relay
def too_many_fields_in_pattern(xs: List[Float64]) -> Float64:
    match xs:
        case Cons(a, b, c):
            return a
        case _:
            return Float64(0.0)


@relay
def match_misses_a_value(xs: List[Float64]) -> Float64:
    match xs:
        case Cons(h, Nil()):
            return h
        case Nil():
            return Float64(0.0)


@relay
def assigned_on_some_paths_of_a_case(xs: List[Float64]) -> Float64:
    match xs:
        case Cons(h, _):
            if h > 0.0:
                y = h
        case Nil():
            y = Float64(0.0)
    return y


@relay
def constructor_keyword_field(x: Float64) -> List[Float64]:
    return Cons(x, tail=Nil())


@relay
def constructor_wrong_arity(x: Float64) -> List[Float64]:
    return Cons(x)


@relay
def constructor_without_fields_as_value(x: Float64) -> List[Float64]:
    empty = Nil
    return Cons(x, empty())


@relay
def data_type_as_value(x: Float64) -> Float64:
    kind = Option
    return x


@relay
def prelude_keyword_argument(xs: List[Float64]) -> List[Float64]:
    return relay.map(lambda v: v, l=xs)


@relay
def prelude_wrong_arity(xs: List[Float64]) -> List[Float64]:
    return relay.map(xs)


@relay
def data_type_without_arguments(xs: List) -> Float64:
    return Float64(0.0)


@relay
def two_types_named_alike(t: Tree, u: relayish.Tree[Float64]) -> Float64:
    return Float64(0.0)


@relay
def two_types_named_alike_in_code(t: Tree) -> Float64:
    other = relayish.Leaf(Float64(1.0))
    return Float64(0.0)


@relay
def field_type_undefined(u: Unresolved) -> Float64:
    return Float64(0.0)


@relay
def field_type_with_dim(w: WithDim) -> Float64:
    return Float64(0.0)


@relay
def constructor_names_clash(s: Shrub) -> Float64:
    return relay.tree_fold(lambda x: x, lambda a, b: a + b, relayish.Leaf(Float64(1.0)))


@relay
def takes_a_list(xs: List[Tensor[Float64, (3,)]]) -> Float64:
    return relay.foldl(lambda acc, x: acc + relay.sum(x), Float64(0.0), xs)
