"""Decorated functions over algebraic data types, for tests/frontend/test_data_types.py: data
types declared with ``relayish.data``, the Prelude's (``List``, ``Option``, ``Tree``), Python's
``match`` and the Prelude's functions as ``relay.map`` and co. Nothing is translated at import.
Every function also runs undecorated (``f.python``), which the tests use as the oracle."""

import numpy as np

import relayish
from relayish import Bool, Cons, Dim, Float, Float64, Int, List, Nil, Nothing, Option, Some, Tensor, data, relay

N = Dim("N")

# The brief's tree: float64 here, so that finite differences can check its gradient.
Tree = data("Tree", Leaf=[Tensor[Float64, (4,)]], Node=["Tree", "Tree"])
Leaf, Node = Tree.Leaf, Tree.Node

Figure = data("Figure", Circle=[Float64], Rect=[Float64, Float64], Empty=[])
Pair = data("Pair", params=["a"], MkPair=["a", "a"])
Rose = data("Rose", params=["a"], Rose=["a", "List[Rose[a]]"])  # a type named like its constructor, through List
Even = data("Even", Nought=[], NextOdd=["Odd"])  # mutually recursive: Odd is defined below
Odd = data("Odd", NextEven=[Even])


# A tree of tanh cells over a tree built inside from the rows of a tensor --------------------------
@relay
def build(xs: Tensor[Float64, (6, 4)], lo: Int, n: Int) -> Tree:
    if n == 1:
        return Leaf(relay.take(xs, lo, axis=0))
    half = n // 2
    return Node(build(xs, lo, half), build(xs, lo + half, n - half))


@relay
def cell(t: Tree, w: Tensor[Float64, (4,)], u: Tensor[Float64, (4,)]) -> Tensor[Float64, (4,)]:
    match t:
        case Leaf(x):
            return relay.tanh(x * u)
        case Node(left, right):
            return relay.tanh(cell(left, w, u) * w + cell(right, w, u))


@relay
def tree_loss(xs: Tensor[Float64, (6, 4)], w: Tensor[Float64, (4,)], u: Tensor[Float64, (4,)]) -> Float64:
    return relay.sum(cell(build(xs, 0, 6), w, u))


def tree_value(xs: np.ndarray, lo: int, n: int, w: np.ndarray, u: np.ndarray) -> np.ndarray:
    """The same tree in NumPy, recursively: the oracle of tree_loss."""
    if n == 1:
        return np.tanh(xs[lo] * u)
    half = n // 2
    return np.tanh(tree_value(xs, lo, half, w, u) * w + tree_value(xs, lo + half, n - half, w, u))


@relay
def tree_input_loss(t: Tree, w: Tensor[Float64, (4,)], u: Tensor[Float64, (4,)]) -> Float64:
    return relay.sum(cell(t, w, u))


# map and foldl over a list built inside from a tensor ------------------------------------------
@relay
def rows(xs: Tensor[Float64, (5, 3)], i: Int) -> List[Tensor[Float64, (3,)]]:
    if i == 5:
        return Nil()
    return Cons(relay.take(xs, i, axis=0), rows(xs, i + 1))


@relay
def list_loss(xs: Tensor[Float64, (5, 3)], w: Tensor[Float64, (3,)]) -> Float64:
    squashed = relay.map(lambda r: relay.tanh(r * w), rows(xs, 0))

    def step(acc, r):
        return acc * 0.5 + r * w
    return relay.sum(relay.foldl(step, relay.zeros_like(w), squashed))


# lists in and out ---------------------------------------------------------------------------------
@relay
def decayed_sines(xs: List[Float64]) -> Float64:
    return relay.foldl(lambda acc, x: acc * 0.5 + relay.sin(x), Float64(0.0), xs)


@relay
def scaled(xs: List[Tensor[Float, (N,)]], k: Float) -> List[Tensor[Float, (N,)]]:
    return relay.map(lambda x: x * k, xs)


# match statements ---------------------------------------------------------------------------------
@relay
def area(f: Figure) -> Float64:
    match f:
        case Figure.Circle(r):
            return 3.0 * r * r
        case Figure.Rect(a, b):
            return a * b
    return Float64(-1.0)  # Empty: no case matches, and the code after the match runs


@relay
def get_or_zero(o: Option[Float64]) -> Float64:
    y = Float64(0.0)
    match o:
        case Some(x):
            y = x
    return y * 2.0


@relay
def first_two(xs: List[Float64]) -> Float64:
    total = Float64(0.0)
    match xs:
        case Cons(a, Cons(b, _)):
            total = total + a
            last = b
        case Cons(a, Nil()):
            last = a
        case Nil():
            return Float64(-5.0)
    return total + last * 10.0


@relay
def heads(xs: List[Float64], ys: List[Float64]) -> Float64:
    match (xs, ys):
        case (Cons(x, _), Cons(y, _)):
            return x + y
        case (Cons(x, _), _):
            return x
        case _:
            return Float64(-1.0)


@relay
def tail_or_self(xs: List[Float64]) -> List[Float64]:
    match xs:
        case Cons(_, Nil()) as single:
            return single
        case Cons(_, rest):
            return rest
        case Nil():
            return xs


@relay
def sum_somes(xs: List[Option[Float64]], n: Int) -> Float64:
    total = Float64(0.0)
    rest = xs
    for i in range(n):
        match rest:
            case Cons(Some(x), tail):
                total = total + x
                rest = tail
            case Cons(_, tail):
                rest = tail
    return total


@relay
def any_cons(xs: List[Float64]) -> Int:
    match xs:
        case Cons():
            return 1
        case _:
            return 0


@relay
def swap(p: Pair[Float64]) -> Pair[Float64]:
    match p:
        case Pair.MkPair(a, b):
            return Pair.MkPair(b, a)


@relay
def rose_sum(t: Rose[Float64]) -> Float64:
    match t:
        case Rose.Rose(x, children):
            return x + relay.foldl(lambda acc, c: acc + rose_sum(c), Float64(0.0), children)


@relay
def parity(e: Even) -> Int:
    match e:
        case Even.Nought():
            return 0
        case Even.NextOdd(Odd.NextEven(rest)):
            return 2 + parity(rest)


@relay
def sign_of_first(xs: List[Float64]) -> Float64:
    if xs_empty(xs):
        return Float64(0.0)
    match xs:
        case Cons(h, _):
            result = relay.sign(h)
        case Nil():
            result = Float64(7.0)
    return result


@relay
def xs_empty(xs: List[Float64]) -> Bool:
    match xs:
        case Nil():
            return True
        case _:
            return False


# the Prelude's functions ------------------------------------------------------------------------
@relay
def wrapped(xs: List[Float64]) -> List[Option[Float64]]:
    return relay.map(Some, xs)


@relay
def prelude_tour(xs: List[Float64], ys: List[Float64], o: Option[Float64]) -> tuple[Int, Float64, Float64, Float64]:
    both = relay.append(relay.rev(xs), ys)
    pairs = relay.zip(xs, ys)
    products = relay.foldr(lambda p, acc: acc + p[0] * p[1], Float64(0.0), pairs)
    return relay.length(both), relay.nth(both, 1), products, relay.get_or(o, Float64(-1.0))


@relay
def tree_tour(t: relayish.Tree[Float64]) -> Float64:
    doubled = relay.tree_map(lambda x: x * 2.0, t)
    return relay.tree_fold(lambda x: x, lambda a, b: a - b, doubled)


@relay
def lengths(xs: List[List[Float64]]) -> Int:
    return relay.foldl(lambda n, k: n + k, 0, relay.map(relay.length, xs))


@relay
def map(xs: List[Float64]) -> List[Float64]:  # noqa: A001 - named like the Prelude's @map on purpose
    return relay.map(lambda x: x + 1.0, xs)


@relay
def nothing_or_some(flag: Bool, x: Float64) -> Option[Float64]:
    if flag:
        return Some(x)
    return Nothing()

