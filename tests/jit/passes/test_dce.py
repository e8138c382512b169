"""Dead code elimination: effects kept (a write whose reference is read later stays), dead
local references removed with their writes, depth, and preservation."""

from __future__ import annotations

import sys


from ad import expand
from jit.passes.anf import to_anf
from jit.passes.dce import eliminate_dead_code
from jit.passes.fold import fold_constants
from relayish import alpha_equal, parse
from typecheck import infer
from relayish.expr import RefNew
from relayish.traverse import post_order
from relayish.testing import assert_pass_preserves
from tests.core.test_deep import default_recursion_limit, let_chain  # noqa: F401  (fixture)
from tests.jit.passes.corpus import EXAMPLES, assert_preserved

F32 = "Tensor(FloatType(32), Shape())"
I32 = "Tensor(IntType(32), Shape())"


def test_preserves_the_corpus_and_generated_programs():
    assert_preserved(eliminate_dead_code, in_anf=False)


def typed(text: str):
    return infer(parse(text))


def dce(text: str):
    """The pass on the program as ``infer`` gives it (annotations tell which operators cannot
    fail), type-checked again."""
    return infer(eliminate_dead_code(typed(text)))




def test_preserves_generated_programs_in_anf_after_folding():
    def pipeline(m):
        return eliminate_dead_code(infer(fold_constants(infer(to_anf(expand(m))))))

    assert_pass_preserves(pipeline, max_examples=EXAMPLES)


def test_write_to_a_reference_read_later_stays():
    text = f"""
def @main(%x: {F32}) {{
  let %r = Ref(0.0) in
  let %u = %r := %x in
  !%r
}}"""
    assert alpha_equal(dce(text), typed(text))


def test_write_through_an_escaping_reference_stays():
    text = f"""
def @main(%x: {F32}, %f: (RefType({F32})) -> ()) {{
  let %r = Ref(0.0) in
  let %u = %r := %x in
  let %v = %f(%r) in
  %x
}}"""
    assert alpha_equal(dce(text), typed(text))


def test_write_only_local_reference_goes_with_its_writes():
    out = dce(f"""
def @main(%x: {F32}) {{
  let %r = Ref(@zeros_like(%x)) in
  let %unused = @exp(%x) in
  let %t = !%r in
  let %u = %r := %t + %x in
  let %k = fn () {{ %r := !%r * 2.0 }} in
  %x * 3.0
}}""")
    assert alpha_equal(out, typed(f"def @main(%x: {F32}) {{ %x * 3.0 }}"))


def test_effects_and_operators_that_may_fail_stay():
    text = f"""
def @main(%x: {I32}, %f: ({I32}) -> {I32}, %v: Tensor(FloatType(32), Shape(3))) {{
  let %a = %f(%x) in
  let %b = 1 / %x in
  let %c = @take(%v, %x) in
  let %e = @strided_slice(%v, begin=(0,), end=(0,)) in
  let %d = @max(%e) in
  %x
}}"""
    assert alpha_equal(dce(text), typed(text))


def T(dims: str) -> str:
    return f"Tensor(FloatType(32), Shape({dims}))"


def test_operators_on_a_symbolic_batch_that_cannot_fail_go():
    """The types guarantee these succeed for every size of n: products check only equal inner
    dimensions, windows slide over static spatial sizes, constant indices fall in a static axis."""
    out = dce(f"""
def @main[n: Dim](%x: {T('n, 4')}, %w: {T('4, 3')}, %img: {T('n, 1, 8, 8')}, %k: {T('2, 1, 3, 3')},
                  %xs: {T('5, n, 4')}) {{
  let %a = @matmul(%x, %w) in
  let %t = @transpose(%x) in
  let %b = @matmul(%t, %x) in
  let %cv = @conv2d(%img, %k) in
  let %c = @max_pool2d(%cv, pool_size=2) in
  let %d = @take(%xs, 4, axis=0) in
  let %e = @softmax_cross_entropy(%x, %x) in
  %w
}}""")
    assert alpha_equal(out, typed(f"def @main[n: Dim](%x: {T('n, 4')}, %w: {T('4, 3')}, %img: {T('n, 1, 8, 8')}, "
                                  f"%k: {T('2, 1, 3, 3')}, %xs: {T('5, n, 4')}) {{ %w }}"))


def test_operators_whose_success_depends_on_a_symbolic_size_stay():
    """A window over a symbolic image size (too small an image raises), an index into a
    symbolic axis, the maximum of a possibly empty vector."""
    text = f"""
def @main[h: Dim](%img: {T('1, 1, h, 8')}, %k: {T('2, 1, 3, 3')}, %v: {T('h')}) {{
  let %c = @conv2d(%img, %k) in
  let %d = @take(%v, 4, axis=0) in
  let %e = @max(%v) in
  %k
}}"""
    assert alpha_equal(dce(text), typed(text))


def test_a_dead_write_keeps_the_effects_of_its_value():
    out = dce(f"""
def @main(%x: {F32}, %f: ({F32}) -> {F32}) {{
  let %r = Ref(%x) in
  let %u = %r := %f(%x) in
  %x
}}""")
    assert alpha_equal(out, typed(f"""
def @main(%x: {F32}, %f: ({F32}) -> {F32}) {{
  let %u = (let %w = %f(%x) in ()) in
  %x
}}"""))


def test_grad_adjoints_of_constants_go():
    """In A-normal form, folded and typed (as the optimizer runs passes), the adjoint cell
    Grad makes for the free %x is never read: it goes."""
    m = expand(parse("""
def @main(%x: Tensor(FloatType(32), Shape(3)), %w: Tensor(FloatType(32), Shape(3))) {
  Grad(fn (%v: Tensor(FloatType(32), Shape(3))) { @sum(%x * %v) })(%w)
}"""))
    before = infer(fold_constants(infer(to_anf(m))))
    after = eliminate_dead_code(before)
    cells = [n for n in post_order(after["main"]) if isinstance(n, RefNew)]
    assert len(cells) == len([n for n in post_order(before["main"]) if isinstance(n, RefNew)]) - 1


def test_deep_let_chain():
    assert sys.getrecursionlimit() <= 1000
    eliminate_dead_code(let_chain(20_000))
