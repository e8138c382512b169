"""Whole programs: LeNet over a symbolic batch, polymorphism, kinds, incremental checking."""

import pytest

import relayish
from relayish import ir
from typecheck import inference as infer_module
from typecheck.inference import declared_type

F32 = "FloatType(32)"


def lenet_source(dense_inputs: int = 800) -> str:
    t = lambda *dims: f"Tensor({F32}, Shape({', '.join(map(str, dims))}))"  # noqa: E731
    return f"""
def @lenet[n: Dim](%x: {t('n', 1, 28, 28)},
                   %k1: {t(20, 1, 5, 5)}, %c1: {t(20, 1, 1)},
                   %k2: {t(50, 20, 5, 5)}, %c2: {t(50, 1, 1)},
                   %w3: {t(500, dense_inputs)}, %b3: {t(500)},
                   %w4: {t(10, 500)}, %b4: {t(10)}) {{
  let %a1 = @max_pool2d(@tanh(@conv2d(%x, %k1) + %c1), pool_size=2) in
  let %a2 = @max_pool2d(@tanh(@conv2d(%a1, %k2) + %c2), pool_size=2) in
  let %flat = @flatten(%a2) in
  let %hidden = @tanh(@dense(%flat, %w3, %b3)) in
  @dense(%hidden, %w4, %b4)
}}
"""


def test_lenet_over_a_symbolic_batch():
    module = relayish.infer_types(relayish.parse(lenet_source(), "lenet.rly"))
    fn = module["lenet"]
    assert str(fn.ret_type) == "Tensor(FloatType(32), Shape(n, 10))"
    text = relayish.astext(module)
    assert "let %a1: Tensor(FloatType(32), Shape(n, 20, 12, 12)) =" in text
    assert "let %a2: Tensor(FloatType(32), Shape(n, 50, 4, 4)) =" in text
    assert "let %flat: Tensor(FloatType(32), Shape(n, 800)) =" in text


def test_lenet_with_a_wrong_dense_layer_names_both_sizes_and_the_line():
    with pytest.raises(relayish.RelayTypeError) as info:
        relayish.infer_types(relayish.parse(lenet_source(dense_inputs=784), "lenet.rly"))
    err = info.value
    assert (err.span.file, err.span.line) == ("lenet.rly", 10)
    assert "784" in err.message and "800" in err.message
    assert "@dense(%flat, %w3, %b3)" in str(err)


def test_matmul_of_symbolic_shapes():
    src = """
def @mm[n: Dim, k: Dim, m: Dim](%a: Tensor(FloatType(32), Shape(n, k)), %b: Tensor(FloatType(32), Shape(k, m))) {
  @matmul(%a, %b)
}
def @use(%a: Tensor(FloatType(32), Shape(7, 3)), %b: Tensor(FloatType(32), Shape(3, 2))) { @mm(%a, %b) }
"""
    module = relayish.infer_types(relayish.parse(src))
    assert str(module["mm"].ret_type) == "Tensor(FloatType(32), Shape(n, m))"
    assert str(module["use"].ret_type) == "Tensor(FloatType(32), Shape(7, 2))"


def test_flatten_of_symbolic_batch():
    src = "def @f[n: Dim](%x: Tensor(FloatType(32), Shape(n, 50, 4, 4))) { @flatten(%x) }"
    assert str(relayish.infer_types(relayish.parse(src))["f"].ret_type) == "Tensor(FloatType(32), Shape(n, 800))"


def test_broadcasting_at_check_time():
    ok = "def @f(%a: Tensor(FloatType(32), Shape(3, 4, 1)), %b: Tensor(FloatType(32), Shape(1, 5))) { %a + %b }"
    assert str(relayish.infer_types(relayish.parse(ok))["f"].ret_type) == "Tensor(FloatType(32), Shape(3, 4, 5))"
    bad = "def @f(%a: Tensor(FloatType(32), Shape(3)), %b: Tensor(FloatType(32), Shape(4))) { %a + %b }"
    with pytest.raises(relayish.RelayTypeError, match="dimension 0: 3 vs 4"):
        relayish.infer_types(relayish.parse(bad))


def test_one_polymorphic_global_at_two_dtypes_and_shapes():
    src = """
def @double[t: BaseType, s: Shape](%x: Tensor(t, s)) -> Tensor(t, s) { %x + %x }
def @main(%a: Tensor(FloatType(32), Shape(2, 3)), %b: Tensor(FloatType(64), Shape(5))) { (@double(%a), @double(%b)) }
"""
    module = relayish.infer_types(relayish.parse(src))
    assert str(module["main"].ret_type) == "(Tensor(FloatType(32), Shape(2, 3)), Tensor(FloatType(64), Shape(5)))"


def test_symbolic_dimension_arithmetic_is_solved_at_calls():
    src = """
def @grow[n: Dim](%x: Tensor(FloatType(32), Shape(n))) -> Tensor(FloatType(32), Shape(n + 2)) {
  @pad(%x, pad_width=(1, 1))
}
def @main(%x: Tensor(FloatType(32), Shape(5))) { @grow(@grow(%x)) }
"""
    module = relayish.infer_types(relayish.parse(src))
    assert str(module["main"].ret_type) == "Tensor(FloatType(32), Shape(9))"


KIND_ERRORS = [
    ("a shape where a type belongs", "def @f(%x: Shape(3)) { %x }", 1, 8,
     "kind error: the annotation of parameter %x must be of kind Type, but Shape(3) is of kind Shape"),
    ("a shape where a base type belongs", "def @f(%x: Tensor(Shape(3), Shape(3))) { %x }", 1, 8,
     "kind error: the element type of a tensor must be of kind BaseType, but Shape(3) is of kind Shape"),
    ("a base type where a shape belongs", "def @f(%x: Tensor(FloatType(32), FloatType(32))) { %x }", 1, 8,
     "kind error: the shape of a tensor must be of kind Shape, but FloatType(32) is of kind BaseType"),
    ("a shape variable as a base type", "def @f[s: Shape](%x: Tensor(s, s)) { %x }", 1, 18,
     "kind error: the element type of a tensor must be of kind BaseType, but s is of kind Shape"),
]


@pytest.mark.parametrize("name, src, line, col, message", KIND_ERRORS, ids=[k[0] for k in KIND_ERRORS])
def test_kind_errors(name, src, line, col, message):
    with pytest.raises(relayish.KindError) as info:
        relayish.infer_types(relayish.parse(src, "k.rly"))
    assert (info.value.span.line, info.value.span.col) == (line, col)
    assert info.value.message == message


def test_forall_over_an_unknown_kind_is_a_kind_error():
    bad = ir.TypeVar("a", "Foo")
    x = ir.Var("x", ir.ForallType([bad], ir.TensorType(ir.FloatType(32), ir.Shape())))
    module = ir.Module({"f": ir.Function([x], x)})
    with pytest.raises(relayish.KindError, match="forall over unknown kind 'Foo'"):
        relayish.infer_types(module)


def test_adding_a_global_rechecks_only_the_new_one(monkeypatch):
    src = "def @a(%x: Tensor(FloatType(32), Shape(3))) { %x * %x }\ndef @b() { @a(tensor(FloatType(32), Shape(3), [1.0, 2.0, 3.0])) }"
    module = relayish.parse(src)
    relayish.infer_types(module)
    checked = []
    original = infer_module.FunctionChecker.check
    monkeypatch.setattr(infer_module.FunctionChecker, "check", lambda self, fn, expected: checked.append(fn) or original(self, fn, expected))
    extra = relayish.parse("def @c() { 2.0 }")["c"]
    bigger = module.with_function("c", extra)
    typed = relayish.infer_types(bigger)
    assert checked == [extra]
    assert str(declared_type(typed["c"])) == "() -> Tensor(FloatType(32), Shape())"
    changed = bigger.with_function("a", relayish.parse("def @a(%x: Tensor(FloatType(32), Shape(3))) { %x }")["a"])
    checked.clear()
    relayish.infer_types(changed)
    assert [fn for fn in checked] == [changed["a"]]  # @b's callee kept its type, so @b is reused


@pytest.mark.parametrize("name, src, line, col, message", KIND_ERRORS, ids=[k[0] for k in KIND_ERRORS])
def test_check_kinds_alone_reports_the_same_kind_errors(name, src, line, col, message):
    from typecheck import check_kinds

    with pytest.raises(relayish.KindError) as info:
        check_kinds(relayish.parse(src, "k.rly"))
    assert (info.value.span.line, info.value.span.col) == (line, col)
    assert info.value.message == message


def test_equal_strided_output_sizes_written_two_ways_agree():
    # A stride-2 3x3 convolution on height h gives (h - 3) // 2 + 1; users write (h - 1) // 2.
    src = """
def @f[h: Dim](%x: Tensor(FloatType(32), Shape(1, 1, h, h)), %w: Tensor(FloatType(32), Shape(1, 1, 3, 3)))
    -> Tensor(FloatType(32), Shape(1, 1, (h - 1) // 2, (h - 1) // 2)) {
  @conv2d(%x, %w, strides=2)
}
"""
    module = relayish.infer_types(relayish.parse(src))
    assert str(module["f"].ret_type) == "Tensor(FloatType(32), Shape(1, 1, (h + 1) // 2 - 1, (h + 1) // 2 - 1))"
