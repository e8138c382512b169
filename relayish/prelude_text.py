"""The Prelude: the standard data types (List, Option, Tree) and the functions over them.

Written in the text format; the parser reads it once (``relayish.prelude()``), and
``relayish.parse(text, prelude=True)`` reads a module that uses it. docs/text-format.md lists
them. Every function is polymorphic over the element types, and those over lists are tail calls
where they can be (``foldl``, ``length``, ``rev`` and ``nth`` run as loops).
"""

PRELUDE_TEXT = """\
type List[a: Type] { Cons(a, List[a]), Nil }
type Option[a: Type] { Some(a), None }
type Tree[a: Type] { Leaf(a), Node(Tree[a], Tree[a]) }

def @map[a: Type, b: Type](%f: (a) -> b, %l: List[a]) -> List[b] {
  match %l { Cons(%h, %t) => Cons(%f(%h), @map(%f, %t)), Nil => Nil }
}

def @foldl[a: Type, b: Type](%f: (a, b) -> a, %acc: a, %l: List[b]) -> a {
  match %l { Cons(%h, %t) => @foldl(%f, %f(%acc, %h), %t), Nil => %acc }
}

def @foldr[a: Type, b: Type](%f: (a, b) -> b, %acc: b, %l: List[a]) -> b {
  match %l { Cons(%h, %t) => %f(%h, @foldr(%f, %acc, %t)), Nil => %acc }
}

def @length[a: Type](%l: List[a]) -> Tensor(IntType(32), Shape()) {
  @foldl(fn (%n: Tensor(IntType(32), Shape()), %x: a) -> Tensor(IntType(32), Shape()) { %n + 1 }, 0, %l)
}

def @nth[a: Type](%l: List[a], %i: Tensor(IntType(32), Shape())) -> a {
  let %c = Unpack[Cons](%l) in if %i == 0 then %c[0] else @nth(%c[1], %i - 1)
}

def @rev[a: Type](%l: List[a]) -> List[a] {
  @foldl(fn (%acc: List[a], %x: a) -> List[a] { Cons(%x, %acc) }, Nil, %l)
}

def @append[a: Type](%xs: List[a], %ys: List[a]) -> List[a] {
  @foldr(fn (%x: a, %acc: List[a]) -> List[a] { Cons(%x, %acc) }, %ys, %xs)
}

def @zip[a: Type, b: Type](%xs: List[a], %ys: List[b]) -> List[(a, b)] {
  match (%xs, %ys) { (Cons(%x, %xt), Cons(%y, %yt)) => Cons((%x, %y), @zip(%xt, %yt)), _ => Nil }
}

def @get_or[a: Type](%o: Option[a], %default: a) -> a {
  match %o { Some(%x) => %x, None => %default }
}

def @tree_map[a: Type, b: Type](%f: (a) -> b, %t: Tree[a]) -> Tree[b] {
  match %t { Leaf(%x) => Leaf(%f(%x)), Node(%l, %r) => Node(@tree_map(%f, %l), @tree_map(%f, %r)) }
}

def @tree_fold[a: Type, b: Type](%leaf: (a) -> b, %node: (b, b) -> b, %t: Tree[a]) -> b {
  match %t {
    Leaf(%x) => %leaf(%x),
    Node(%l, %r) => %node(@tree_fold(%leaf, %node, %l), @tree_fold(%leaf, %node, %r)),
  }
}
"""

