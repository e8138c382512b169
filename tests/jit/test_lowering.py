"""The program around the kernels: generated Python, tail calls as loops, references in
evaluation order, specializations, argument checks, and scalar code with the operators'
exact semantics (checked against the NumPy reference of each operator)."""

from __future__ import annotations

import warnings

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import relayish
from jit import scalars
from jit.lower import HOST_OPS
from jit.kernels.registry import kernel_operators
from relayish.errors import RelayRuntimeError
from relayish.ops import all_ops, get_op
from relayish.types import BaseType, Shape, TensorType

F32 = "Tensor(FloatType(32), Shape())"
I32 = "Tensor(IntType(32), Shape())"

LOOP = f"""
def @loop(%i: {I32}, %x: {F32}) -> {F32} {{
  if %i < 1000000 then @loop(%i + 1, %x * 0.999f + 0.001f) else %x
}}
def @local_loop(%n: {I32}) -> {I32} {{
  let %go = fn (%i: {I32}, %acc: {I32}) -> {I32} {{ if %i < %n then %go(%i + 1, %acc + 2) else %acc }} in
  %go(0, 0)
}}
""".replace("0.999f", "0.999").replace("0.001f", "0.001")


def test_every_operator_has_a_kernel_or_runs_on_the_host_or_is_lowered():
    """An operator with a kernel may have a lowering too: a partial one, for its other forms
    (conv2d's groups and out_dtype)."""
    lowered = {name for name, op in all_ops().items() if op.lowering is not None}
    assert kernel_operators("cpu") | HOST_OPS | lowered == set(all_ops())
    assert not HOST_OPS & (kernel_operators("cpu") | lowered)


def test_a_million_step_recursive_loop_runs_compiled_as_a_loop():
    mod = relayish.parse(LOOP)
    loop = relayish.compile(mod, "loop")
    assert "while True:" in loop.source and "continue" in loop.source
    x = np.float32(0.5)
    for _ in range(1_000_000):  # the same float32 arithmetic, step by step
        x = np.float32(x * np.float32(0.999) + np.float32(0.001))
    result = loop(np.int32(0), np.float32(0.5))
    assert result.dtype == np.float32 and result.shape == () and result == x
    assert int(relayish.compile(mod, "local_loop")(np.int32(1_000_000))) == 2_000_000


REFS = f"""
def @main(%x: {F32}) -> ({F32}, {F32}) {{
  let %r = Ref(%x) in
  let %a = (!%r, %r := !%r * 2.0f, !%r) in
  let %f = fn () {{ let %u = %r := !%r + 1.0f in !%r }} in
  (%a[0] + %a[2], %f() + %f() + !%r)
}}
""".replace("2.0f", "2.0").replace("1.0f", "1.0")


def test_references_are_read_and_written_in_evaluation_order():
    mod = relayish.parse(REFS)
    expected = relayish.evaluate(mod, "main", np.float32(3.0))
    assert [float(v) for v in expected] == [3.0 + 6.0, 7.0 + 8.0 + 8.0]
    result = relayish.compile(mod, "main")(np.float32(3.0))
    assert [float(v) for v in result] == [9.0, 23.0] and all(v.shape == () for v in result)


BATCH = """
def @scale[n: Dim](%x: Tensor(FloatType(32), Shape(n, 3))) -> Tensor(FloatType(32), Shape(n, 3)) { %x * 2.0 }
"""


def test_one_specialization_per_argument_type_and_the_evaluators_argument_checks():
    f = relayish.compile(relayish.parse(BATCH), "scale")
    for n in (1, 4, 4):
        np.testing.assert_array_equal(f(np.ones((n, 3), np.float32)), np.full((n, 3), 2.0, np.float32))
    assert len(f.specializations) == 2
    with pytest.raises(RelayRuntimeError, match="argument %x of @scale"):
        f(np.ones((2, 3), np.float64))
    with pytest.raises(RelayRuntimeError, match="takes 1 arguments, got 2"):
        f(np.ones((2, 3), np.float32), 1)


def test_arguments_seen_before_skip_the_checks_and_new_ones_are_checked():
    vec = "Tensor(FloatType(32), Shape(n))"
    mod = relayish.parse(f"def @main[n: Dim](%x: {vec}, %y: {vec}) -> {vec} {{ %x + %y }}")
    f = relayish.compile(mod, "main")
    a, b = np.ones(3, np.float32), np.ones(4, np.float32)
    for _ in range(2):
        np.testing.assert_array_equal(f(a, a), np.full(3, 2.0, np.float32))
    with pytest.raises(RelayRuntimeError, match="argument %y of @main"):  # n is 3 from %x
        f(a, b)
    with pytest.raises(RelayRuntimeError, match="argument %x of @main"):
        f(a.astype(np.float64), a)


def test_runtime_errors_are_relayish_errors():
    mod = relayish.parse(f"def @main(%a: {I32}, %b: {I32}) -> {I32} {{ %a / %b }}")
    with pytest.raises(RelayRuntimeError, match="ZeroDivisionError"):
        relayish.compile(mod, "main")(np.int32(1), np.int32(0))


def test_straight_line_programs_skip_the_guard_and_keep_its_errors():
    """A program of kernel calls alone (no Python calls, closures or NumPy scalar code) runs its
    entry without the recursion guard, and its kernels' errors are still relayish errors; a
    program whose functions call each other keeps the guard."""
    T = "Tensor(FloatType(32), Shape(3))"
    mod = relayish.parse(f"""
def @straight(%x: {T}, %i: {I32}) {{ @take(@tanh(%x) * %x, %i, axis=0) }}
def @calls(%x: {T}, %n: {I32}) -> {T} {{ if %n == 0 then %x else @calls(%x, %n - 1) + %x }}""")
    straight, calls = relayish.compile(mod, "straight"), relayish.compile(mod, "calls")
    x = np.array([0.5, -1.0, 2.0], np.float32)
    np.testing.assert_array_equal(straight(x, np.int32(2)), (np.tanh(x) * x)[2])
    expected = x.copy()
    for _ in range(3000):  # deeper than Python's default recursion limit: the guard makes room
        expected = expected + x
    np.testing.assert_array_equal(calls(x, np.int32(3000)), expected)
    assert straight.bare and not calls.bare
    with pytest.raises(RelayRuntimeError, match="IndexError"):
        straight(x, np.int32(7))


SCALAR_DTYPES = ["float16", "float32", "float64", "int8", "int32", "int64", "uint8", "bool"]
KINDS = {"float": "f", "numeric": "fiu", "bool": "b", "any": "fiub"}


def scalar_values(dtype: str):
    dt = np.dtype(dtype)
    if dt.kind == "b":
        return st.booleans().map(np.bool_)
    if dt.kind == "f":
        specials = st.sampled_from([0.0, -0.0, np.inf, -np.inf, np.nan, 1.0, -1.5])
        return st.one_of(st.floats(-50, 50, width=min(dt.itemsize * 8, 64)), specials).map(dt.type)
    info = np.iinfo(dt)
    return st.integers(int(info.min), int(info.max)).map(dt.type)


@settings(max_examples=300, deadline=None)
@given(data=st.data())
def test_scalar_expressions_have_each_operators_reference_semantics(data):
    elementwise = {name for name, op in all_ops().items() if op.element is not None}
    name = data.draw(st.sampled_from(sorted(elementwise | {"cast", "cast_like"})), label="op")
    op = get_op(name)
    count = op.num_args
    dtype = data.draw(st.sampled_from(SCALAR_DTYPES), label="dtype")
    values = [data.draw(scalar_values("bool" if name == "where" and i == 0 else dtype)) for i in range(count)]
    attrs = {}
    if name == "cast":
        attrs = {"dtype": BaseType.from_numpy(np.dtype(data.draw(st.sampled_from(SCALAR_DTYPES))))}
    if name == "cast_like":
        values[1] = np.dtype(data.draw(st.sampled_from(SCALAR_DTYPES))).type(0)
    with np.errstate(all="ignore"):
        try:
            expected = op(*values, **attrs)
        except TypeError:
            return  # a dtype the operator does not accept (the type checker rejects it)
        except (ZeroDivisionError, ValueError) as err:
            expected = err
    types = [TensorType(BaseType.from_numpy(np.asarray(v).dtype), Shape()) for v in values]
    full = op.full_attrs(op.normalize_attrs(attrs))
    text = scalars.expression(name, [f"v{i}" for i in range(count)], types, full)
    namespace = {**scalars.NAMESPACE, **{f"v{i}": v for i, v in enumerate(values)}}
    with np.errstate(all="ignore"):
        if isinstance(expected, Exception):
            with pytest.raises(type(expected)):
                eval(text, namespace)  # noqa: S307 - the expression under test
            return
        result = eval(text, namespace)  # noqa: S307
    result = np.asarray(result)
    assert result.dtype == expected.dtype, (name, values, text)
    np.testing.assert_array_equal(result, expected, err_msg=f"{name}{tuple(values)} via {text}")



def test_float_scalar_pow_is_numpys_ufunc_not_libm():
    # NumPy's scalar ** (libm powf) gives 4.3546486 here, np.power 4.354648: a CI failure.
    a, b = np.float32(0.375), np.float32(-1.5)
    ty = TensorType(BaseType.from_numpy(np.dtype("float32")), Shape())
    text = scalars.expression("pow", ["a", "b"], [ty, ty], {})
    assert eval(text, {**scalars.NAMESPACE, "a": a, "b": b}) == np.power(np.asarray(a), np.asarray(b))  # noqa: S307


CLOSURES_IN_A_LOOP = f"""
def @main(%n: {I32}) -> {F32} {{
  let %go = fn (%i: {I32}, %fs: () -> {F32}) -> () -> {F32} {{
    if %i < %n then
      let %prev = %fs in
      let %c = @cast(%i, dtype=FloatType(32)) in
      %go(%i + 1, fn () {{ %prev() + %c }})
    else %fs
  }} in
  %go(0, fn () {{ 0.0 }})()
}}
"""


def test_closures_made_in_a_loop_keep_the_values_of_their_iteration():
    """A tail call is a loop that rebinds names; Python closures would see the last binding
    (the backpropagator chain of a recurrent network called itself forever)."""
    mod = relayish.parse(CLOSURES_IN_A_LOOP)
    assert float(relayish.evaluate(mod, "main", np.int32(5))) == 10.0  # 0 + 1 + 2 + 3 + 4
    assert float(relayish.compile(mod, "main")(np.int32(5))) == 10.0


POLY_HALF = """
def @double[t: BaseType, s: Shape](%x: Tensor(t, s)) -> Tensor(t, s) { %x + %x }
def @widen[s: Shape](%x: Tensor(FloatType(16), s)) -> Tensor(FloatType(32), s) { @cast(%x, dtype=FloatType(32)) }
def @main(%x: Tensor(FloatType(16), Shape(3))) { (@double(%x), @widen(%x)) }
"""


def test_float16_in_polymorphic_functions_rounds_to_the_dtype_the_operator_gives():
    mod = relayish.parse(POLY_HALF)
    x = np.array([1.5, 2.25, 65504.0], np.float16)
    expected = relayish.evaluate(mod, "main", x)
    result = relayish.compile(mod, "main")(x)
    for got, want in zip(result, expected):
        assert got.dtype == want.dtype
        np.testing.assert_array_equal(got, want)


def test_no_numpy_warning_escapes_with_or_without_scalar_code():
    """Overflow, 0 * inf and integer wrap-around warn in NumPy; the evaluator's semantics have
    no warnings, and a program of kernels alone runs without NumPy's error state set."""
    source = f"""
    def @kernels(%x: Tensor(FloatType(32), Shape(3))) -> Tensor(FloatType(32), Shape(3)) {{ @exp(%x) * 0.0 }}
    def @scalars(%a: {I32}, %x: {F32}) -> ({I32}, {F32}) {{ (%a * %a, @exp(%x) * 0.0) }}
    """
    mod = relayish.parse(source)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        out = relayish.compile(mod, "kernels")(np.full(3, 1000, np.float32))
        a, x = relayish.compile(mod, "scalars")(np.int32(2**20), np.float32(1000))
    assert np.isnan(out).all() and np.isnan(x) and a == 0


def test_transposes_and_takes_of_a_constant_index_are_numpy_views():
    """No kernel call; the evaluator's values; an index outside the static size still goes to the
    kernel and raises there (bad transpose axes are a type error)."""
    module = relayish.parse("""
    def @main(%x: Tensor(FloatType(32), Shape(3, 4, 5))) {
      (@transpose(%x), @transpose(%x, axes=(0, 2, 1)), @take(%x, 2, axis=0), @take(%x, 3, axis=-2),
       @take(@take(%x, 1, axis=0), 4, axis=1), @take(%x, 0, axis=2) * 2.0)
    }
    def @far(%x: Tensor(FloatType(32), Shape(3, 4, 5))) { @take(%x, 3, axis=0) }""")
    x = np.arange(60, dtype=np.float32).reshape(3, 4, 5)
    compiled = relayish.compile(module, "main")
    assert "k_transpose" not in compiled.source and "k_take" not in compiled.source
    assert ".transpose((2, 1, 0))" in compiled.source and "[:, 3]" in compiled.source
    got, expected = compiled(x), relayish.evaluate(module, "main", x)
    for a, b in zip(got, expected):
        np.testing.assert_array_equal(a, b, strict=True)
    assert got[0].base is not None and got[2].base is not None  # views of x
    far = relayish.compile(module, "far")
    assert "k_take" in far.source
    with pytest.raises(RelayRuntimeError, match="take: an index is out of range for axis 0"):
        far(x)


def test_ndarray_size_of_symbolic_dimensions_is_read_from_the_shape():
    """What the gradient of a mean over a ``Dim`` batch divides by: an expression of the argument's
    shape, no call of the operator's semantics; its value and dtype are the evaluator's (a size
    that overflows int8 wraps as NumPy's astype does)."""
    module = relayish.parse("""
    def @main[n: Dim, m: Dim](%x: Tensor(FloatType(32), Shape(n, 3, m))) {
      (@ndarray_size(%x), @ndarray_size(%x, axis=(0, 2), dtype=FloatType(64)),
       @ndarray_size(%x, axis=1, exclude=true, dtype=IntType(8)), @ndarray_size(%x, axis=(0, 1, 2), exclude=true))
    }""")
    compiled = relayish.compile(module, "main", tiered=False)
    assert "ndarray_size" not in compiled.source
    for shape in [(2, 3, 5), (0, 3, 4), (50, 3, 7)]:
        x = np.ones(shape, np.float32)
        got, expected = compiled(x), relayish.evaluate(module, "main", x)
        for a, b in zip(got, expected):
            np.testing.assert_array_equal(a, b, strict=True)


def test_a_transpose_read_more_than_once_is_copied_into_row_order_once():
    """W4's backward multiplies by Wh^T at every step: one C-ordered copy instead of a view each
    product reads in column order; a transpose read once stays a view."""
    module = relayish.parse("""
    def @main(%w: Tensor(FloatType(32), Shape(3, 3)), %x: Tensor(FloatType(32), Shape(2, 3))) {
      let %wt = @transpose(%w) in
      let %once = @transpose(%x) in
      (@matmul(%x, %wt), @matmul(@matmul(%x, %wt), %wt), %once)
    }""")
    w, x = np.arange(9, dtype=np.float32).reshape(3, 3), np.arange(6, dtype=np.float32).reshape(2, 3) - 2
    compiled = relayish.compile(module, "main", opt_level=0)
    assert compiled.source.count("_np.ascontiguousarray(") == 1
    got, expected = compiled(w, x), relayish.evaluate(module, "main", w, x)
    for a, b in zip(got, expected):
        np.testing.assert_allclose(a, b, rtol=1e-6)
    assert got[2].base is not None  # the transpose read once: a view of x


def test_a_rank_zero_transpose_read_twice_stays_rank_zero():
    """Found by difftest (seed 701): the copy into row order, ``np.ascontiguousarray``, made a NumPy
    scalar a 1-element vector, returned with shape (1,) instead of ()."""
    module = relayish.parse("""
    def @main(%x: Tensor(FloatType(32), Shape())) {
      let %v = @transpose(@add(%x, 1f32), axes=()) in
      (%v, @mul(%v, %v))
    }""")
    got = relayish.compile(module, "main", opt_level=0, tiered=False)(np.float32(2))
    assert [(a.shape, float(a)) for a in got] == [((), 3.0), ((), 9.0)]


def test_a_scalar_fill_is_a_numpy_scalar_not_a_kernel_call():
    """What AD writes for every scalar adjoint (``full(shape=())``, once per loop step)."""
    module = relayish.parse(f"""
    def @main(%x: {F32}) {{
      (%x * @full(shape=(), fill_value=2.5), @full(shape=(), fill_value=7, dtype=IntType(8)), @full(shape=(2,)))
    }}""")
    for level in (0, 3):
        compiled = relayish.compile(module, "main", opt_level=level)
        assert compiled.source.count("k_full") == 1  # the vector's
        for a, b in zip(compiled(np.float32(2)), relayish.evaluate(module, "main", np.float32(2))):
            np.testing.assert_array_equal(a, b, strict=True)


@st.composite
def one_index(draw):
    """Data of rank 1-3 (sizes 0-4), an axis (None on vectors, negative ones too), an index
    sometimes out of range, and an update of the slice's shape."""
    dtype = draw(st.sampled_from([np.float32, np.float64, np.int32, np.uint8]))
    shape = draw(st.lists(st.integers(0, 4), min_size=1, max_size=3))
    data = np.arange(int(np.prod(shape)), dtype=dtype).reshape(shape) + dtype(1)
    axis = None if len(shape) == 1 and draw(st.booleans()) else draw(st.integers(-len(shape), len(shape) - 1))
    normal = 0 if axis is None else axis % len(shape)
    index = draw(st.integers(-1, shape[normal]))
    rest = shape[:normal] + shape[normal + 1:]
    update = (np.arange(int(np.prod(rest)), dtype=dtype) + dtype(3)).reshape(rest)
    return data, np.int32(index), update, axis, normal


def outcome(fn, *args, **kwargs):
    try:
        return np.asarray(fn(*args, **kwargs))
    except IndexError as err:
        return f"IndexError: {err}"


@given(case=one_index())
def test_take_and_scatter_add_of_one_index_are_the_operators_reference(case):
    """jit/lower.py's NumPy indexing for a rank-0 index (no kernel call) against relayish.ops."""
    from jit.lower import scatter_add_at, scatter_add_at_in_place, take_at

    data, index, update, axis, normal = case
    want = outcome(get_op("take"), data, index, axis=axis)
    got = outcome(take_at, data, index, normal)
    if isinstance(want, str):
        assert isinstance(got, str) and f"index {index} is out of range" in got
    else:
        np.testing.assert_array_equal(got, want, strict=True)
    want = outcome(get_op("scatter_add"), data, index, update, axis=axis)
    kept = data.copy()
    got = outcome(scatter_add_at, data, index, update, normal)
    np.testing.assert_array_equal(data, kept)  # the copying version leaves data alone
    target = data.copy()
    in_place = outcome(scatter_add_at_in_place, target, index, update, normal)
    if isinstance(want, str):
        assert isinstance(got, str) and isinstance(in_place, str)
        np.testing.assert_array_equal(target, kept)  # nothing written before the range check fails
    else:
        np.testing.assert_array_equal(got, want, strict=True)
        np.testing.assert_array_equal(in_place, want, strict=True)
        np.testing.assert_array_equal(target, want)  # written into the array itself


def test_a_loop_reading_one_element_per_step_indexes_without_kernels():
    """take and its adjoint with an index known at run time: NumPy indexing in the generated
    Python; the evaluator's values and its error for an index out of range."""
    module = relayish.parse(f"""
    def @loss(%x: Tensor(FloatType(32), Shape(5)), %n: {I32}) -> {F32} {{
      let %loop = fn (%i: {I32}, %acc: {F32}) -> {F32} {{
        if %i == %n then %acc else %loop(%i + 1, %acc + @sin(@take(%x, %i)))
      }} in
      %loop(0, 0.0)
    }}
    def @vg(%x: Tensor(FloatType(32), Shape(5)), %n: {I32}) {{
      Grad(fn (%y: Tensor(FloatType(32), Shape(5))) -> {F32} {{ @loss(%y, %n) }})(%x)
    }}""")
    compiled = relayish.compile(module, "vg")
    assert "k_take" not in compiled.source and "k_scatter_add" not in compiled.source
    assert "_take_at(" in compiled.source and "_scatter_add_at_in_place" in compiled.source
    x = np.linspace(-1, 1, 5, dtype=np.float32)
    value, (grad,) = compiled(x, np.int32(4))
    want_value, (want_grad,) = relayish.evaluate(module, "vg", x, np.int32(4))
    np.testing.assert_allclose(value, want_value, rtol=1e-6)
    np.testing.assert_allclose(grad, want_grad, rtol=1e-6)
    with pytest.raises(RelayRuntimeError, match="take: index 5 is out of range for axis 0 of size 5"):
        compiled(x, np.int32(6))


def test_scatter_add_of_one_index_overflows_without_a_warning():
    """NumPy warns where its addition of one element overflows; the evaluator's semantics
    wrap integers and give IEEE infinities, without warnings."""
    module = relayish.parse(f"""
    def @ints(%x: Tensor(IntType(32), Shape(3)), %i: {I32}, %u: {I32}) {{ @scatter_add(%x, %i, %u) }}
    def @floats(%x: Tensor(FloatType(32), Shape(3)), %i: {I32}, %u: {F32}) {{ @scatter_add(%x, %i, %u) }}""")
    big = np.iinfo(np.int32).max
    cases = {"ints": (np.full(3, big, np.int32), np.int32(1), np.int32(big)),
             "floats": (np.full(3, 3e38, np.float32), np.int32(2), np.float32(3e38))}
    for name, args in cases.items():
        compiled = relayish.compile(module, name)
        assert "_scatter_add_at(" in compiled.source
        with warnings.catch_warnings():
            warnings.simplefilter("error")
            got = compiled(*args)
        np.testing.assert_array_equal(got, relayish.evaluate(module, name, *args), strict=True)


def test_a_declared_operator_is_a_compile_error_at_its_call():
    """An operator declared in the text and never defined has no kernel: compiling a program that
    calls it is a CompileError at the call, which the optimizer's passes (partial evaluation, fusion
    beside an elementwise neighbour) reach without failing themselves; the evaluator raises at the call."""
    module = relayish.parse("operator @g : (Tensor(FloatType(32), Shape(2))) -> Tensor(FloatType(32), Shape(2))\n"
                            "def @main(%x: Tensor(FloatType(32), Shape(2))) { @g(%x) * 2f32 }")
    x = np.ones(2, np.float32)
    with pytest.raises(RelayRuntimeError, match="operator @g has no kernel") as info:
        relayish.compile(module, "main", tiered=False)(x)
    assert (info.value.span.line, info.value.span.col) == (2, 50)
    with pytest.raises(RelayRuntimeError, match="operator @g is declared but has no implementation"):
        relayish.evaluate(module, "main", x)
