"""The operator catalogue as specified: names, patterns, differentiability, docs, attributes."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from relayish.errors import AttributeSchemaError
from relayish.ops import Pattern, all_ops, get_op
from relayish.types import FloatType, IntType

# The specification: every standard operator by pattern.
SPEC = {
    Pattern.ELEMWISE: (
        "neg sq exp log sqrt tanh sigmoid relu abs sin cos logical_not cast zeros_like ones_like "
        "erf tan atan asin acos sinh cosh rsqrt log1p expm1 ceil floor trunc round sign"
    ),
    Pattern.BROADCAST: (
        "add sub mul div pow maximum minimum equal not_equal less less_equal greater greater_equal "
        "logical_and logical_or where floor_divide floor_mod"
    ),
    Pattern.REDUCE: "sum mean max min argmax variance std all any logsumexp argmin prod",
    Pattern.OPAQUE: (
        "reshape dyn_reshape transpose expand_dims squeeze broadcast_to broadcast_to_like sum_to concatenate stack "
        "take gather strided_slice reverse pad flatten full one_hot cast_like ndarray_size cumsum "
        "matmul dense conv2d conv2d_transpose max_pool2d avg_pool2d softmax log_softmax softmax_cross_entropy "
        "reshape_like conv2d_backward_input conv2d_backward_weight max_pool2d_backward max_pool2d_gather avg_pool2d_backward "
        "strided_slice_backward take_backward scatter_add gather_backward concatenate_backward pad_backward "
        "clip leaky_relu bias_add full_like zeros ones arange tile repeat split global_avg_pool2d global_max_pool2d "
        "layer_norm batch_norm"
    ),
}
NOT_DIFFERENTIABLE = set(
    "logical_not equal not_equal less less_equal greater greater_equal logical_and logical_or "
    "argmax zeros_like ones_like one_hot ndarray_size "
    "ceil floor trunc round sign floor_divide all any argmin zeros ones arange".split()
)
NAMES = [name for names in SPEC.values() for name in names.split()]


def test_the_specified_operators_are_registered() -> None:
    assert len(NAMES) == len(set(NAMES)) == 116
    assert sorted(all_ops()) == sorted(NAMES)


@pytest.mark.parametrize("pattern", list(SPEC), ids=lambda p: p.name)
def test_patterns_differentiability_and_docs(pattern: Pattern) -> None:
    for name in SPEC[pattern].split():
        op = get_op(name)
        assert op.name == name
        assert op.pattern is pattern, name
        assert op.differentiable == (name not in NOT_DIFFERENTIABLE), name
        assert op.doc.strip() and "\n" not in op.doc, name


def test_every_operator_is_in_the_operator_table() -> None:
    table = (Path(__file__).parents[2] / "docs" / "operators.md").read_text()
    rows = {line.split("|")[1].strip(" `") for line in table.splitlines() if line.startswith("| `")}
    assert rows == set(NAMES)


@pytest.mark.parametrize(
    ("name", "count", "expected"),
    [("neg", 1, None), ("neg", 2, "1 argument"), ("where", 2, "3 arguments"), ("full", 0, None),
     ("concatenate", 0, "at least 1"), ("concatenate", 5, None), ("dense", 4, "2 to 3 arguments")],
)
def test_arity(name: str, count: int, expected: str | None) -> None:
    """None when the count is fine, else a message saying what was expected."""
    problem = get_op(name).check_arity(count)
    if expected is None:
        assert problem is None
    else:
        assert problem is not None and expected in problem


def test_unknown_attribute_is_named() -> None:
    with pytest.raises(AttributeSchemaError, match="axs"):
        get_op("sum").normalize_attrs({"axs": 1})


def test_attribute_of_the_wrong_kind() -> None:
    with pytest.raises(AttributeSchemaError, match="keepdims"):
        get_op("sum").normalize_attrs({"keepdims": 3})
    with pytest.raises(AttributeSchemaError, match="pool_size"):
        get_op("max_pool2d").normalize_attrs({"pool_size": (1, 2, 3)})


@pytest.mark.parametrize(("name", "attr"), [("cast", "dtype"), ("reshape", "newshape"), ("max_pool2d", "pool_size"),
                                            ("strided_slice", "begin"), ("one_hot", "depth"), ("full", "shape")])
def test_missing_required_attribute(name: str, attr: str) -> None:
    with pytest.raises(AttributeSchemaError, match=attr):
        get_op(name).normalize_attrs({})


def test_canonical_attributes_drop_defaults() -> None:
    assert get_op("sum").normalize_attrs({"keepdims": False}) == ()
    assert get_op("sum").normalize_attrs({"axis": [0, -1], "keepdims": True}) == (
        ("axis", (0, -1)),
        ("keepdims", True),
    )
    assert get_op("conv2d").normalize_attrs({"strides": 1, "padding": 0, "dilation": (1, 1)}) == ()
    assert get_op("conv2d").normalize_attrs({"padding": 2}) == (("padding", (2, 2)),)
    assert get_op("full").normalize_attrs({"shape": [2], "dtype": FloatType(32), "fill_value": None}) == (
        ("shape", (2,)),
    )
    assert get_op("pad").normalize_attrs({"pad_width": [1, 1], "pad_value": 0, "pad_mode": "constant"}) == (
        ("pad_width", (1, 1)),
    )
    assert get_op("cast").normalize_attrs({"dtype": "int32"}) == (("dtype", IntType(32)),)


def test_compute_receives_every_attribute_filled_in() -> None:
    op = get_op("avg_pool2d")
    assert op.full_attrs(op.normalize_attrs({"pool_size": 2})) == {
        "pool_size": (2, 2),
        "strides": None,
        "padding": (0, 0),
        "count_include_pad": True,
    }


@pytest.mark.parametrize(
    ("name", "args", "attrs"),
    [
        ("exp", [np.arange(3, dtype=np.int32)], {}),
        ("mean", [np.arange(3, dtype=np.int32)], {}),
        ("softmax", [np.arange(3, dtype=np.int32)], {}),
        ("add", [np.ones(2, dtype=bool), np.ones(2, dtype=bool)], {}),
        ("logical_and", [np.ones(2, dtype=np.float32), np.ones(2, dtype=np.float32)], {}),
        ("logical_not", [np.ones(2, dtype=np.int32)], {}),
        ("where", [np.ones(2, dtype=np.int32), np.ones(2), np.ones(2)], {}),
        ("take", [np.ones(3), np.zeros(2)], {}),
        ("one_hot", [np.zeros(2)], {"depth": 3}),
    ],
)
def test_unsupported_dtypes_are_refused(name: str, args: list[np.ndarray], attrs: dict) -> None:
    with pytest.raises(TypeError, match=name):
        get_op(name)(*args, **attrs)


SCALAR_OPS = [name for p in (Pattern.ELEMWISE, Pattern.BROADCAST, Pattern.REDUCE) for name in SPEC[p].split()]
LOGICAL = {"logical_not", "logical_and", "logical_or", "all", "any"}


@pytest.mark.parametrize("name", SCALAR_OPS)
def test_scalar_results_are_arrays(name: str) -> None:
    """On rank-0 arguments the result is a 0-d ndarray, never a NumPy scalar."""
    op = get_op(name)
    x = np.asarray(name in LOGICAL or np.float32(0.5))
    args = [np.asarray(True), x, x] if name == "where" else [x] * op.num_args
    attrs = {"cast": {"dtype": "int32"}}.get(name, {})
    result = op(*args, **attrs)
    assert isinstance(result, np.ndarray) and result.shape == ()
