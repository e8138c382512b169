"""dyn_reshape, Relay's dyn.reshape: a reshape whose new shape is a tensor known when the program runs.

Oracles: the shapes of TVM's documentation of dyn.reshape's codes, written out by hand, with
NumPy's C-order reshape for the values; the evaluator for the JIT (values and errors alike);
central finite differences for the gradient, through programs that compute the shape when they run.
"""

from __future__ import annotations

import numpy as np
import pytest

import relayish
from relayish import Int64, Tensor, relay
from relayish.testing import check_grad
from tests.ops.test_shape_forms import RESHAPES
from tests.typecheck.test_dynamic_dims import both

F = "Tensor(FloatType(64), Shape())"


def T(dtype: str, *dims: object) -> str:
    return f"Tensor({dtype}, Shape({', '.join(map(str, dims))}))"


def leaves(value) -> list[np.ndarray]:
    if isinstance(value, tuple):
        return [leaf for v in value for leaf in leaves(v)]
    return [np.asarray(value)]


def reshaper(data_shape: tuple[int, ...], length: int, dtype: str = "IntType(64)") -> relayish.Module:
    """``@main(%x, %s) = dyn_reshape(%x, %s)`` for float32 data of ``data_shape``."""
    return relayish.parse(f"def @main(%x: {T('FloatType(32)', *data_shape)}, %s: {T(dtype, length)}) {{\n"
                          "  @dyn_reshape(%x, %s)\n}\n", "r.rly")


# (data shape, newshape, result shape by hand): reshape's cases without its codes -2 and -4, the first
# ones the examples of TVM's documentation of dyn.reshape (src/relay/op/dyn/tensor/transform.cc), and more
RELAY_EXAMPLES = [case for case in RESHAPES if not {-2, -4} & set(case[1])] + [
    ((1, 1), (), ()),
    ((), (1, 1), (1, 1)),
    ((0, 3), (5, -1), (5, 0)),
    ((2, 3), (1, 6, 1), (1, 6, 1)),  # sizes past the input's rank use no input dimension
]


@pytest.mark.parametrize("dtype", ["IntType(32)", "IntType(64)"])
@pytest.mark.parametrize("data_shape, newshape, expected", RELAY_EXAMPLES)
def test_relays_codes_give_relays_shapes(data_shape, newshape, expected, dtype) -> None:
    x = np.arange(np.prod(data_shape), dtype=np.float32).reshape(data_shape)
    s = np.array(newshape, dtype=np.int32 if dtype == "IntType(32)" else np.int64)
    result = both(reshaper(data_shape, len(newshape), dtype), "main", x, s)
    assert result.shape == expected and result.dtype == np.float32
    np.testing.assert_array_equal(result, x.reshape(expected))  # C order, as NumPy's reshape


def test_the_type_has_unknown_sizes_but_a_vectors_length_is_the_element_count() -> None:
    src = f"""
def @f[n: Dim](%x: {T('FloatType(32)', 'n', 6)}, %s: {T('IntType(32)', 2)}) {{ @dyn_reshape(%x, %s) }}
def @g[n: Dim](%x: {T('FloatType(32)', 'n', 6)}, %s: {T('IntType(64)', 1)}) {{ @dyn_reshape(%x, %s) }}
"""
    typed = relayish.astext(relayish.infer_types(relayish.parse(src)))
    assert f"-> {T('FloatType(32)', '?', '?')}" in typed
    assert f"-> {T('FloatType(32)', '6*n')}" in typed
    assert relayish.astext(relayish.parse(typed)) == typed


BAD = [
    ((2, 3), (4, 2), "cannot reshape Shape(2, 3) (6 elements) to Shape(4, 2) (8 elements)"),
    ((2, 3), (-1, -1), "newshape (-1, -1) has more than one -1"),
    ((2, 3), (-5, 6), "newshape[0] is -5, but newshape holds sizes (>= 1) and the codes 0 (copy), -1 (infer)"),
    ((2, 3), (6, -2), "newshape[1] is -2"),
    ((2, 3), (-4, 2, 3), "newshape[0] is -4"),
    ((2, 3), (0, 0, 0), "newshape[2] is 0, which copies input dimension 2, but the input has rank 2"),
    ((2, 3), (1, -3), "newshape[1] is -3, which merges input dimensions 1 and 2, but the input has rank 2"),
    ((2, 3), (4, -1), "cannot reshape Shape(2, 3) (6 elements) to (4, -1): 6 is not a multiple of 4"),
    ((0, 3), (0, -1), "cannot infer the -1 in newshape (0, -1) for Shape(0, 3): the other dimensions hold 0"),
    ((6,), (), "cannot reshape Shape(6) (6 elements) to Shape() (1 elements)"),
    ((0,), (2**62, -1), "the shape (4611686018427387904, 0) is too large for an array of float32"),
]


@pytest.mark.parametrize("data_shape, newshape, message", BAD)
def test_bad_values_are_the_same_error_in_both_backends(data_shape, newshape, message) -> None:
    x = np.zeros(data_shape, np.float32)
    module = reshaper(data_shape, len(newshape))
    with pytest.raises(relayish.RelayRuntimeError, match=r"r.rly:2:3: @dyn_reshape failed in @main: dyn_reshape: ") as err:
        both(module, "main", x, np.array(newshape, np.int64))
    assert message in str(err.value)


def test_the_reference_says_what_it_expected() -> None:
    op = relayish.ops.get_op("dyn_reshape")
    np.testing.assert_array_equal(op(np.arange(6), np.array([3, -1])), np.arange(6).reshape(3, 2))
    with pytest.raises(TypeError, match="integer"):
        op(np.arange(6), np.array([3.0, 2.0]))
    with pytest.raises(ValueError, match=r"dyn_reshape: newshape must be a vector, not of shape \(1, 2\)"):
        op(np.arange(6), np.array([[3, 2]]))


# Shapes computed when the program runs: @f's rows from the element count (n * 6 / 2), its columns -1;
# @g's (n, 3, 2) copies n, infers 3 and has 6 / 3 columns, then merges the first two.
COMPUTED = f"""
def @f[n: Dim](%x: {T('FloatType(64)', 'n', 6)}, %w: {T('FloatType(64)', '?', 2)}) -> {F} {{
  let %rows = @ndarray_size(%x, dtype=IntType(32)) / 2 in
  let %y = @dyn_reshape(@tanh(%x), @stack(%rows, -1)) in
  @sum(%y * %y * %w)
}}
def @g[n: Dim](%x: {T('FloatType(64)', 'n', 6)}, %w: {T('FloatType(64)', '?', 2)}) -> {F} {{
  let %y = @dyn_reshape(%x * %x, @stack(0i64, -1i64, @ndarray_size(%x, axis=1, dtype=IntType(64)) / 3i64)) in
  @sum(@sin(@dyn_reshape(%y, tensor(IntType(64), Shape(2), [-3, 0]))) * %w)
}}
def @vf[n: Dim](%x: {T('FloatType(64)', 'n', 6)}, %w: {T('FloatType(64)', '?', 2)}) {{ Grad(@f)(%x, %w) }}
def @vg[n: Dim](%x: {T('FloatType(64)', 'n', 6)}, %w: {T('FloatType(64)', '?', 2)}) {{ Grad(@g)(%x, %w) }}
"""


@pytest.mark.parametrize("n", [1, 2])
def test_a_shape_computed_at_run_time_runs_and_differentiates(n: int) -> None:
    module = relayish.parse(COMPUTED)
    rng = np.random.default_rng(n)
    x, w = rng.uniform(-1, 1, (n, 6)), rng.uniform(-1, 1, (3 * n, 2))
    y = np.tanh(x).reshape(3 * n, 2)
    assert both(module, "f", x, w) == pytest.approx(np.sum(y * y * w), rel=1e-12)
    for name in ("f", "g"):
        check_grad(module, [x, w], name=name)  # the evaluator's Grad against finite differences
        jit_grad = relayish.compile(module, f"v{name}", tiered=False)
        check_grad(module, [x, w], name=name, grad=lambda *a: jit_grad(*a))
        both(module, f"v{name}", x, w)
    with pytest.raises(relayish.RelayRuntimeError, match=r"@mul in @f: cannot broadcast Shape\(3, 2\) with Shape\(4, 2\)"):
        both(module, "f", rng.uniform(-1, 1, (1, 6)), rng.uniform(-1, 1, (4, 2)))


def test_constant_arguments_are_not_folded_into_a_type_error() -> None:
    """Folding a call of constants would give its value a known shape where its type has ?: the
    check of the result's (wrong) shape would become a type error in the optimizer, while the
    evaluator raises when the program runs."""
    src = f"""def @main(%b: {T('FloatType(32)')}) -> {T('FloatType(32)', 3, 2)} {{
  %b + @dyn_reshape(tensor(FloatType(32), Shape(6), [0.0, 1.0, 2.0, 3.0, 4.0, 5.0]), tensor(IntType(64), Shape(2), SIZES))
}}"""
    right = relayish.parse(src.replace("SIZES", "[3, 2]"))
    np.testing.assert_array_equal(both(right, "main", np.float32(1)), np.arange(1, 7, dtype=np.float32).reshape(3, 2))
    with pytest.raises(relayish.RelayRuntimeError, match=r"expected .*Shape\(3, 2\)\), got .*Shape\(2, 3\)"):
        both(relayish.parse(src.replace("SIZES", "[2, 3]")), "main", np.float32(1))


def test_the_check_of_an_inlined_parameter_survives_partial_evaluation() -> None:
    """No type written in the program has ?, yet dyn_reshape's result is checked where it meets @k's
    parameter; partial evaluation took such a program for one whose ascriptions check nothing and
    dropped the check, so the JIT returned a value where the evaluator raises."""
    src = f"""
def @k(%p: {T('FloatType(32)', 3, 2)}) -> {T('FloatType(32)')} {{ @sum(%p) }}
def @main(%x: {T('FloatType(32)', 6)}, %s: {T('IntType(64)', 2)}) -> {T('FloatType(32)')} {{
  @k(@dyn_reshape(%x, %s))
}}
"""
    module = relayish.parse(src, "k.rly")
    x = np.arange(6, dtype=np.float32)
    assert both(module, "main", x, np.array([3, 2])) == 15.0
    with pytest.raises(relayish.RelayRuntimeError, match=r"k.rly:4:6: expected .*Shape\(3, 2\)\), got .*Shape\(2, 3\)"):
        both(module, "main", x, np.array([2, 3]))


def test_the_frontend_calls_it_and_runs_it_as_numpy() -> None:
    @relay
    def rows(x: Tensor[Int64, (2, 6)], s: Tensor[Int64, 2]) -> Tensor[Int64, (3, 4)]:
        return relay.dyn_reshape(x + 1, s)

    x, s = np.arange(12).reshape(2, 6), np.array([3, -1])
    np.testing.assert_array_equal(rows(x, s), x.reshape(3, 4) + 1)
    np.testing.assert_array_equal(rows.python(x, s), x.reshape(3, 4) + 1)
    assert "@dyn_reshape" in str(rows.ir)
    with pytest.raises(relayish.RelayRuntimeError, match=r"expected .*Shape\(3, 4\)\), got .*Shape\(4, 3\)"):
        rows(x, np.array([4, 3]))

    @relay
    def columns(x: Tensor[Int64, (2, 6)]):
        return relay.dyn_reshape(x, relay.stack(relay.ndarray_size(x, axis=1, dtype=Int64), Int64(-1)))

    assert "Shape(?, ?)" in str(columns.ir)
    np.testing.assert_array_equal(columns(x), x.reshape(6, 2))
    np.testing.assert_array_equal(columns.python(x), x.reshape(6, 2))
