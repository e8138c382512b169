"""Data types on the CUDA target (the simulator in CI): tensors inside data values cross to the
device and back, and the tree of tanh cells of tests/ad/test_data_type_grads.py and its gradient
agree with the evaluator."""

from __future__ import annotations

import numpy as np

import relayish
from tests.ad.test_data_type_grads import TREE, inputs

DOUBLE = """
def @double(%l: List[Tensor(FloatType(64), Shape(4))]) -> List[Tensor(FloatType(64), Shape(4))] {
  @map(fn (%x: Tensor(FloatType(64), Shape(4))) { %x * 2f64 }, %l)
}
"""


def test_a_list_of_tensors_goes_to_the_device_and_back() -> None:
    module = relayish.parse(DOUBLE, prelude=True)
    data = relayish.DataValue("Cons", (np.arange(4.0), relayish.DataValue("Cons", (np.ones(4), relayish.DataValue("Nil")))))
    out = relayish.compile(module, "double", target="cuda")(data)
    assert out.ctor == "Cons" and isinstance(out.fields[0], np.ndarray)
    np.testing.assert_array_equal(out.fields[0], 2 * np.arange(4.0))
    np.testing.assert_array_equal(out.fields[1].fields[0], 2 * np.ones(4))
    assert out.fields[1].fields[1].ctor == "Nil"


def test_the_tree_of_cells_and_its_gradient() -> None:
    module = relayish.parse(TREE, prelude=True)
    args = inputs(4, 5)
    value, grads = relayish.compile(module, "vg", target="cuda")(*args)
    expected_value, expected_grads = relayish.evaluate(module, "vg", *args)
    np.testing.assert_allclose(value, expected_value, rtol=1e-12)
    for got, want in zip(grads, expected_grads, strict=True):
        np.testing.assert_allclose(got, want, rtol=1e-12)
