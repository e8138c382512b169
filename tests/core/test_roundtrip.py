"""Printing and parsing: ``parse(astext(m))`` is alpha-equivalent to ``m`` and prints the same.

The property runs on generated modules (``relayish.testing.ir_strategies``); a coverage test
checks that the generator really produces every construct the round trip must survive;
fixed examples check that the text means what it says (precedence, literals, attributes).
"""

from __future__ import annotations

import collections
import math

import numpy as np
from hypothesis import given, settings

from relayish import alpha_equal, astext, free_vars, parse
from relayish.dims import FloorDiv
from relayish.expr import (
    EXPR_CLASSES, Ascribe, Call, Constant, Expr, Function, GlobalVar, Grad, If, Jvp, Let, Op, Proj, RefRead, Vmap,
    RefWrite, Tuple, Var, Zero,
)  # fmt: skip
from relayish.module import Module
from relayish.ops.registry import get_op, lookup_op
from relayish.printer import BINARY_OPS, UNARY_OPS, expr_level
from relayish.testing.ir_strategies import BASE_TYPES, modules, registered_ops
from relayish.traverse import post_order
from relayish.types import (
    FloatType, ForallType, FuncType, IntType, Kind, RefType, Shape, TensorType, TupleType, Type, TypeVar,
)  # fmt: skip


def assert_round_trip(m: Module) -> Module:
    text = astext(m)
    back = parse(text)
    assert alpha_equal(back, m), f"parse(astext(m)) is not alpha-equal to m; the text:\n{text}"
    again = astext(back)
    assert again == text, f"printing the parsed module changed the text:\n{text}\n--- became ---\n{again}"
    return back


@settings(max_examples=500)
@given(modules())
def test_round_trip_of_generated_modules(m):
    assert_round_trip(m)


# -- what the generator covers ----------------------------------------------------------------


def _type_roots(m: Module) -> list[Type]:
    roots = list(m.op_decls.values())
    for fn in m.functions.values():
        for node in post_order(fn):
            if isinstance(node, Var) and node.type_annotation is not None:
                roots.append(node.type_annotation)
            elif isinstance(node, Function) and node.ret_type is not None:
                roots.append(node.ret_type)
            elif isinstance(node, (Ascribe, Zero)):
                roots.append(node.type)
    return roots


def _type_features(root: Type, found: set[str]) -> None:
    stack = [root]
    while stack:
        t = stack.pop()
        name = type(t).__name__
        found.add(f"type:{name}")
        if isinstance(t, (IntType, FloatType)) or name == "UIntType":
            found.add(f"type:{name}({t.bits})")
        elif isinstance(t, TypeVar):
            found.add(f"kind-used:{t.kind.value}")
        elif isinstance(t, Shape):
            for d in t.dims:
                _dim_features(d, found)
        elif isinstance(t, TensorType):
            if isinstance(t.dtype, TypeVar):
                found.add("type:tensor-dtype-var")
            if isinstance(t.shape, TypeVar):
                found.add("type:tensor-shape-var")
            stack += [t.dtype, t.shape]
        elif isinstance(t, TupleType):
            found.add({0: "type:unit", 1: "type:1-tuple"}.get(len(t.fields), "type:n-tuple"))
            stack += t.fields
        elif isinstance(t, FuncType):
            if isinstance(t.ret, FuncType):
                found.add("type:func-returns-func")
            if any(isinstance(p, FuncType) for p in t.params):
                found.add("type:func-takes-func")
            stack += [*t.params, t.ret]
        elif isinstance(t, RefType):
            stack.append(t.value)
        elif isinstance(t, ForallType):
            found.update(f"kind:{tv.kind.value}" for tv in t.params)
            if len(t.params) >= 2:
                found.add("type:forall-several")
            stack.append(t.body)


def _dim_features(d, found: set[str]) -> None:
    if d.is_const:
        return
    found.add("dim:symbolic")
    for mono, coeff in d.terms.items():
        if coeff < 0:
            found.add("dim:negative-term")
        if sum(power for _, power in mono) >= 2:
            found.add("dim:product")
        for atom, _ in mono:
            if isinstance(atom, TypeVar):
                found.add(f"kind-used:{atom.kind.value}")
            elif isinstance(atom, FloorDiv):
                found.add("dim:floordiv" if atom.den.is_const else "dim:floordiv-symbolic-divisor")


def _constant_features(c: Constant, found: set[str]) -> None:
    found.add(f"const:{c.value.dtype}:{'scalar' if c.value.ndim == 0 else 'tensor'}")
    if c.value.size == 0:
        found.add("const:empty-tensor")
    for x in c.value.reshape(-1).tolist():
        if isinstance(x, float):
            if math.isnan(x):
                found.add("const:nan")
            elif math.isinf(x):
                found.add("const:inf" if x > 0 else "const:-inf")
            elif x == 0 and math.copysign(1, x) < 0:
                found.add("const:-0.0")
        if c.value.ndim == 0 and not isinstance(x, bool) and x < 0:
            found.add("const:negative-scalar")


def _call_features(call: Call, m: Module, found: set[str]) -> None:
    callee = call.callee
    if isinstance(callee, Op):
        if callee.name in m.op_decls:
            found.add("call:declared-op")
        elif expr_level(call) != expr_level(Var("x")):  # printed infix or prefix
            symbol = BINARY_OPS.get(callee.name) if len(call.args) == 2 else UNARY_OPS.get(callee.name)
            found.add(f"{'infix' if len(call.args) == 2 else 'prefix'}:{symbol}")
            if any(expr_level(arg) < expr_level(call) for arg in call.args):
                found.add("operator:parenthesized-operand")
            if any(isinstance(arg, Call) and expr_level(arg) != expr_level(Var("x")) for arg in call.args):
                found.add("operator:nested")
        else:
            found.add("call:op")
        if call.attrs:
            found.add("call:attributes")
            specs = {spec.name: spec for spec in get_op(callee.name).attrs}
            for name, value in call.attrs:
                found.add(f"attr-kind:{specs[name].kind}")
                if isinstance(value, float) and math.isnan(value):
                    found.add("attr:nan")
    else:
        found.add(f"call:{type(callee).__name__}")


def features(m: Module) -> set[str]:
    """Names of the constructs that occur in ``m`` (what the coverage test counts)."""
    found: set[str] = set()
    if m.op_decls:
        found.add("module:operator-declaration")
    references = {}
    hints: collections.Counter[str] = collections.Counter()
    for name, fn in m.functions.items():
        references[name] = set()
        for node in post_order(fn):
            found.add(f"expr:{type(node).__name__}")
            if isinstance(node, (Let, Function)):
                bound = [node.var] if isinstance(node, Let) else list(node.params)
                hints.update(v.name_hint for v in bound)
            if isinstance(node, GlobalVar):
                references[name].add(node.name)
            elif isinstance(node, Constant):
                _constant_features(node, found)
            elif isinstance(node, Tuple) and len(node.fields) < 2:
                found.add(f"tuple:{len(node.fields)}")
            elif isinstance(node, Let):
                found.add("let:annotated" if node.var.type_annotation is not None else "let:plain")
                if isinstance(node.value, Function) and node.var in free_vars(node.value):
                    found.add("let:recursive")
            elif isinstance(node, Call):
                _call_features(node, m, found)
            elif isinstance(node, Op) and lookup_op(node.name) is not None:
                found.add("op:registered")
            elif isinstance(node, Function):
                found.update(f"kind:{tv.kind.value}" for tv in node.type_params)
                if node is not fn:
                    found.add("fn:closure-capturing" if free_vars(node) else "fn:closure")
                found.add("fn:type-params" if node.type_params else "fn:no-type-params")
                found.add("fn:ret-type" if node.ret_type is not None else "fn:no-ret-type")
                for param in node.params:
                    found.add("fn:annotated-param" if param.type_annotation is not None else "fn:plain-param")
            elif isinstance(node, Proj) and isinstance(node.tuple_value, Proj):
                found.add("proj:nested")
    if any(count > 1 for count in hints.values()):
        found.add("names:reused-hint")
    for name, refs in references.items():
        if name in refs:
            found.add("module:self-recursion")
        if any(name in references.get(other, ()) for other in refs if other != name):
            found.add("module:mutual-recursion")
    for root in _type_roots(m):
        _type_features(root, found)
    return found


def required_features() -> set[str]:
    required = {f"expr:{cls.__name__}" for cls in EXPR_CLASSES}
    required |= {f"kind:{kind.value}" for kind in Kind} | {f"kind-used:{kind.value}" for kind in Kind}
    for t in BASE_TYPES:
        dtype = t.to_numpy()
        required |= {f"const:{dtype}:scalar", f"const:{dtype}:tensor", f"type:{astext(t)}"}
    required |= {f"type:{name}" for name in (
        "Shape", "TensorType", "TupleType", "FuncType", "RefType", "TypeVar", "ForallType",
    )}  # fmt: skip
    required |= {f"infix:{symbol}" for symbol in BINARY_OPS.values()} | {f"prefix:{s}" for s in UNARY_OPS.values()}
    kinds_in_schemas = {spec.kind for op in registered_ops() for spec in op.attrs}
    required |= {f"attr-kind:{kind}" for kind in kinds_in_schemas}
    required |= {
        "const:nan", "const:inf", "const:-inf", "const:-0.0", "const:negative-scalar", "const:empty-tensor",
        "tuple:0", "tuple:1", "let:annotated", "let:plain", "let:recursive",
        "call:declared-op", "call:op", "call:attributes", "call:GlobalVar", "call:Var", "call:Function",
        "attr:nan", "op:registered", "operator:parenthesized-operand", "operator:nested",
        "fn:closure", "fn:closure-capturing", "fn:type-params", "fn:no-type-params", "fn:ret-type",
        "fn:no-ret-type", "fn:annotated-param", "fn:plain-param", "proj:nested",
        "names:reused-hint", "module:self-recursion", "module:mutual-recursion",
        "module:operator-declaration",
        "type:unit", "type:1-tuple", "type:n-tuple", "type:func-returns-func", "type:func-takes-func",
        "type:tensor-dtype-var", "type:tensor-shape-var", "type:forall-several",
        "dim:symbolic", "dim:negative-term", "dim:product", "dim:floordiv", "dim:floordiv-symbolic-divisor",
    }  # fmt: skip
    return required


def test_generator_covers_every_construct():
    seen: collections.Counter[str] = collections.Counter()

    @settings(max_examples=500, database=None)
    @given(modules())
    def collect(m):
        seen.update(features(m))

    collect()
    missing = sorted(required_features() - set(seen))
    assert not missing, f"the generator never produced: {missing}"


# -- fixed examples ---------------------------------------------------------------------------

F32 = FloatType(32)
SCALAR = TensorType(F32, Shape())

MLP_LOSS = """\
operator @my_relu : forall (s: Shape), (Tensor(FloatType(32), s)) -> Tensor(FloatType(32), s)

def @mlp_loss[n: Dim](%x: Tensor(FloatType(32), Shape(n, 784)), %w: Tensor(FloatType(32), Shape(784, 10)),
                      %y: Tensor(FloatType(32), Shape(n, 10))) -> Tensor(FloatType(32), Shape()) {
  let %h: Tensor(FloatType(32), Shape(n, 10)) = @tanh(@matmul(%x, %w)) in
  let %half: (Tensor(FloatType(32), Shape())) -> Tensor(FloatType(32), Shape()) =
    fn (%s: Tensor(FloatType(32), Shape())) -> Tensor(FloatType(32), Shape()) { %s * 0.5 } in
  %half(@softmax_cross_entropy(@my_relu(%h), %y, axis=1))
}
"""


def op(name: str, *args: Expr, **attributes) -> Call:
    return Call(Op(name), args, attributes)


def mlp_loss_module() -> Module:
    """The typed-IR example of the design (a small MLP loss with a closure), built with the constructors."""
    n, s = TypeVar("n", Kind.DIM), TypeVar("s", Kind.SHAPE)
    relu_type = ForallType([s], FuncType([TensorType(F32, s)], TensorType(F32, s)))
    x = Var("x", TensorType(F32, Shape(n, 784)))
    w = Var("w", TensorType(F32, Shape(784, 10)))
    y = Var("y", TensorType(F32, Shape(n, 10)))
    h = Var("h", TensorType(F32, Shape(n, 10)))
    half = Var("half", FuncType([SCALAR], SCALAR))
    p = Var("s", SCALAR)
    body = Let(
        h,
        op("tanh", op("matmul", x, w)),
        Let(
            half,
            Function([p], op("mul", p, Constant(0.5)), SCALAR),
            Call(half, [op("softmax_cross_entropy", Call(Op("my_relu"), [h]), y, axis=1)]),
        ),
    )
    return Module({"mlp_loss": Function([x, w, y], body, SCALAR, [n])}, {"my_relu": relu_type})


def test_design_example_reads_as_written_and_round_trips():
    m = parse(MLP_LOSS)
    assert alpha_equal(m, mlp_loss_module())
    back = assert_round_trip(m)
    assert astext(back).startswith("operator @my_relu : forall (s: Shape), (Tensor(FloatType(32), s)) ->")
    assert_round_trip(mlp_loss_module())


A, B, C = Var("a"), Var("b"), Var("c")


def print_body(body: Expr) -> str:
    """The printed body of ``def @main(%a, %b, %c) { body }``, after checking its round trip."""
    m = assert_round_trip(Module({"main": Function([A, B, C], body)}))
    lines = astext(m).splitlines()
    assert lines[0] == "def @main(%a, %b, %c) {" and lines[-1] == "}"
    return "\n".join(line[2:] for line in lines[1:-1])


def read_body(text: str) -> Module:
    return parse("def @main(%a, %b, %c) {\n  " + text + "\n}\n")


def as_main(body: Expr) -> Module:
    return Module({"main": Function([A, B, C], body)})


ONE, MINUS_ONE = Constant(1.0), Constant(-1.0)
# (expression, its canonical text): each prints exactly so and reads back to itself.
FAITHFUL = [
    (MINUS_ONE, "-1.0"),
    (op("neg", ONE), "- 1.0"),
    (op("neg", MINUS_ONE), "- -1.0"),
    (op("neg", A), "-%a"),
    (op("neg", op("neg", A)), "--%a"),
    (op("sub", A, MINUS_ONE), "%a - -1.0"),
    (op("sub", A, op("neg", ONE)), "%a - - 1.0"),
    (op("mul", op("add", A, B), C), "(%a + %b) * %c"),
    (op("add", A, op("mul", B, C)), "%a + %b * %c"),
    (op("sub", op("sub", A, B), C), "%a - %b - %c"),
    (op("sub", A, op("sub", B, C)), "%a - (%b - %c)"),
    (op("div", A, op("mul", B, C)), "%a / (%b * %c)"),
    (op("equal", op("less", A, B), C), "(%a < %b) == %c"),
    (op("less", A, op("equal", B, C)), "%a < (%b == %c)"),
    (op("neg", op("add", A, B)), "-(%a + %b)"),
    (op("sq", op("neg", A)), "sq -%a"),
    (op("neg", op("sq", A)), "-sq %a"),
    (op("add", op("neg", A), op("sq", B)), "-%a + sq %b"),
    (Proj(MINUS_ONE, 0), "(-1.0)[0]"),
    (op("neg", Proj(ONE, 0)), "- 1.0[0]"),
    (Proj(Proj(A, 1), 0), "%a[1][0]"),
    (Proj(op("add", A, B), 0), "(%a + %b)[0]"),
    (Call(Proj(A, 0), [B]), "%a[0](%b)"),
    (RefRead(RefRead(A)), "!!%a"),
    (op("not_equal", A, RefRead(B)), "%a != !%b"),
    (RefRead(MINUS_ONE), "!-1.0"),
    (RefWrite(A, op("add", RefRead(A), ONE)), "%a := !%a + 1.0"),
    (op("add", RefWrite(A, B), C), "(%a := %b) + %c"),
    (Ascribe(op("neg", ONE), TupleType(())), "(()) - 1.0"),
    (op("sub", Tuple(()), ONE), "() - 1.0"),
    (Ascribe(A, TupleType([TupleType(()), TupleType(())])), "(((), ())) %a"),
    (op("sub", Tuple([Tuple(()), Tuple(())]), A), "((), ()) - %a"),
    (Tuple([A]), "(%a,)"),
    (Ascribe(A, TupleType([SCALAR])), "((Tensor(FloatType(32), Shape()),)) %a"),
    (Ascribe(A, FuncType([FuncType([], SCALAR)], FuncType([], TupleType(())))),
     "((() -> Tensor(FloatType(32), Shape())) -> () -> ()) %a"),
    (op("add", If(A, B, C), ONE), "(if %a then\n  %b\nelse\n  %c) + 1.0"),
    (op("sum", A, axis=1), "@sum(%a, axis=1)"),
    (op("sum", A, axis=(1,), keepdims=True), "@sum(%a, axis=(1,), keepdims=true)"),
    (op("sum", A, keepdims=False), "@sum(%a)"),
    (op("cast", A, dtype=FloatType(16)), "@cast(%a, dtype=FloatType(16))"),
    (op("full", shape=(2, 3), fill_value=-2.5), "@full(shape=(2, 3), fill_value=-2.5)"),
    (op("add", A), "@add(%a)"),
    (Op("neg"), "@neg"),
    (Call(Grad(A), [B]), "Grad(%a)(%b)"),
    (Call(Jvp(A), [B, A]), "Jvp(%a)(%b, %a)"),
    (Call(Vmap(A, (0, None)), [B, A]), "Vmap(%a, in_axes=(0, none))(%b, %a)"),
    (Vmap(A, (2,)), "Vmap(%a, in_axes=(2,))"),
    (Constant(np.int8(-5)), "-5i8"),
    (Constant(np.uint64(2**64 - 1)), "18446744073709551615u64"),
    (Constant(np.float16(0.1)), "0.1f16"),
    (Constant(np.float64(-0.0)), "-0.0f64"),
    (Constant(np.array([np.nan, -np.inf, -0.0], dtype=np.float32)),
     "tensor(FloatType(32), Shape(3), [nan, -inf, -0.0])"),
    (Constant(np.zeros((0, 2), dtype=bool)), "tensor(BoolType, Shape(0, 2), [])"),
]  # fmt: skip


def test_printing_is_faithful():
    for expr, text in FAITHFUL:
        assert print_body(expr) == text


def test_text_means_what_it_says():
    """Hand-written text parses to the intended tree (an oracle independent of the printer)."""
    readings = [
        ("%a + %b * %c", op("add", A, op("mul", B, C))),
        ("(%a + %b) * %c", op("mul", op("add", A, B), C)),
        ("%a - %b - %c", op("sub", op("sub", A, B), C)),
        ("-1.0", MINUS_ONE),
        ("- 1.0", op("neg", ONE)),
        ("-(1.0)", op("neg", ONE)),
        ("-%a * %b", op("mul", op("neg", A), B)),
        ("(%a < %b) == %c", op("equal", op("less", A, B), C)),
        ("@sum(%a, axis=1)", op("sum", A, axis=1)),
        ("@sum(%a, keepdims=false)", op("sum", A)),
        ("%a := !%a + 1.0", RefWrite(A, op("add", RefRead(A), ONE))),
        ("1", Constant(np.int32(1))),
        ("1.0", Constant(np.float32(1.0))),
        ("2i64", Constant(np.int64(2))),
        ("0.5f64", Constant(np.float64(0.5))),
        ("nanf16", Constant(np.float16(np.nan))),
        ("-inf", Constant(np.float32(-np.inf))),
    ]
    for text, expected in readings:
        assert alpha_equal(read_body(text), as_main(expected)), text
    assert not alpha_equal(read_body("- 1.0"), as_main(MINUS_ONE))
    assert not alpha_equal(read_body("-1.0"), as_main(op("neg", ONE)))
    assert not alpha_equal(read_body("%a + %b * %c"), as_main(op("mul", op("add", A, B), C)))


def test_attribute_kept_through_round_trip():
    m = parse(print_body(op("softmax", A, axis=1)).join(["def @main(%a, %b, %c) {\n  ", "\n}\n"]))
    call = m["main"].body
    assert isinstance(call, Call) and call.attrs == (("axis", 1),)


def test_example_file_round_trips():
    import pathlib

    path = pathlib.Path(__file__).resolve().parents[2] / "examples" / "mlp.rly"
    m = parse(path.read_text(), filename=str(path))
    assert set(m.functions) == {"dense_tanh", "mlp_loss", "mlp_grad_w1"}
    assert_round_trip(m)


def test_primitive_function_round_trips_and_differs_from_plain():
    """Fusion groups print as ``fn primitive``; the mark survives the round trip and counts for
    alpha-equivalence and the structural hash."""
    from relayish.alpha import structural_hash

    text = """def @main(%a: Tensor(FloatType(32), Shape(3))) {
  let %g: (Tensor(FloatType(32), Shape()), Tensor(FloatType(32), Shape(3))) = fn primitive (%p: Tensor(FloatType(32), Shape(3))) -> (Tensor(FloatType(32), Shape()), Tensor(FloatType(32), Shape(3))) {
    let %t: Tensor(FloatType(32), Shape(3)) = @tanh(%p) in
    (@sum(%t), %t * 2.0)
  }(%a) in
  %g[0]
}
"""
    m = assert_round_trip(parse(text))
    assert astext(m) == text
    plain = parse(text.replace("fn primitive", "fn"))
    assert not alpha_equal(m, plain) and structural_hash(m) != structural_hash(plain)
    assert "primitive" not in astext(plain)
