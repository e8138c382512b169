"""A-normal form: exact output, evaluation order, depth, and preservation on the corpus and
on generated programs (with Grad expanded, and as written)."""

from __future__ import annotations

import sys


from jit.passes.anf import to_anf
from relayish import alpha_equal, parse
from relayish.expr import Call, Function, If, Let, Tuple
from relayish.traverse import post_order
from tests.core.test_deep import default_recursion_limit, let_chain  # noqa: F401  (fixture)
from tests.jit.passes.corpus import assert_preserved

F32 = "Tensor(FloatType(32), Shape())"


def test_preserves_the_corpus_and_generated_programs():
    assert_preserved(to_anf, in_anf=False)




def test_nested_calls_are_named_in_evaluation_order():
    m = parse(f"""
def @main(%f: ({F32}) -> {F32}, %x: {F32}, %r: RefType({F32})) {{
  (%f(@tanh(%x) + !%r), %r := %x * 2.0)
}}""")
    expected = parse(f"""
def @main(%f: ({F32}) -> {F32}, %x: {F32}, %r: RefType({F32})) {{
  let %a = @tanh(%x) in
  let %b = !%r in
  let %c = %a + %b in
  let %d = %f(%c) in
  let %e = %x * 2.0 in
  let %u = %r := %e in
  (%d, %u)
}}""")
    assert alpha_equal(to_anf(m), expected)


def test_arguments_before_callee_and_scopes_stay_scopes():
    m = parse(f"""
def @main(%g: ({F32}) -> ({F32}) -> {F32}, %x: {F32}) {{
  let %y = (let %z = -%x in %z * %z) in
  if %y > 0.0 then %g(%y)(sq %y) else %g(%x)(%x)
}}""")
    expected = parse(f"""
def @main(%g: ({F32}) -> ({F32}) -> {F32}, %x: {F32}) {{
  let %z = -%x in
  let %y = %z * %z in
  let %c = %y > 0.0 in
  if %c then (let %a = sq %y in let %f = %g(%y) in %f(%a))
  else (let %h = %g(%x) in %h(%x))
}}""")
    assert alpha_equal(to_anf(m), expected)


def test_operands_are_atoms_and_tail_calls_stay_unbound():
    m = parse(f"""
def @loop(%i: Tensor(IntType(32), Shape()), %acc: {F32}) -> {F32} {{
  if %i == 0 then %acc else @loop(%i - 1, %acc + @sum((%acc, %acc * 2.0)[1]))
}}""")
    body = to_anf(m)["loop"].body
    for node in post_order(body):
        if isinstance(node, (Call, Tuple)):
            operands = node.args if isinstance(node, Call) else node.fields
            assert not any(isinstance(o, (Call, Tuple, Let, If)) for o in operands)
    tail = body
    while isinstance(tail, Let):
        tail = tail.body
    assert isinstance(tail, If)
    else_tail = tail.else_branch
    while isinstance(else_tail, Let):
        else_tail = else_tail.body
    assert isinstance(else_tail, Call) and not isinstance(else_tail.callee, Function)


def test_deep_let_chain():
    assert sys.getrecursionlimit() <= 1000
    out = to_anf(let_chain(20_000))
    assert isinstance(out["main"].body, Let)
