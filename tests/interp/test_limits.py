"""Tensors the evaluator refuses to make: past ``RELAYISH_MAX_TENSOR_BYTES`` (default the
machine's memory) or with a negative dimension, a ``RelayRuntimeError`` naming the shape and the
limit, raised before anything is allocated (not NumPy's ``MemoryError`` or ``ValueError``).
tests/jit/test_limits.py holds compiled code to the same errors on these programs."""

from __future__ import annotations

import os

import numpy as np
import pytest

import relayish
from relayish.ops.limits import max_tensor_bytes

F32 = "FloatType(32)"
HUGE = f"Tensor({F32}, Shape(100000, 100000))"  # 40 GB
GIB = 2**30
TOO_LARGE = {
    "full": (f"def @main() -> {HUGE} {{ @full(shape=(100000, 100000), fill_value=1.0) }}", ()),
    "broadcast": (f"def @main(%a: Tensor({F32}, Shape(100000, 1)), %b: Tensor({F32}, Shape(1, 100000))) -> {HUGE} "
                  "{ %a + %b }", (np.zeros((100000, 1), np.float32), np.zeros((1, 100000), np.float32))),
    "Zero": (f"def @main() -> {HUGE} {{ Zero({HUGE}) }}", ()),
    # constant folding computes this sum while compiling: it must not allocate either
    "folded": (f"def @main() -> {HUGE} {{ @full(shape=(100000, 100000), fill_value=1.0) + 1.0 }}", ()),
    "negative Zero": (f"def @main[n: Dim](%x: Tensor({F32}, Shape(n))) -> Tensor({F32}, Shape(n - 5)) "
                      f"{{ Zero(Tensor({F32}, Shape(n - 5))) }}", (np.zeros(3, np.float32),)),
}


def expected_message(case: str) -> str:
    if case == "negative Zero":
        return "Zero in @main: a tensor of shape (-2,) has a negative dimension"
    return (f"in @main: a tensor of shape (100000, 100000) and dtype float32 would take 40,000,000,000 bytes, more "
            f"than the limit of {GIB:,} bytes per tensor: set RELAYISH_MAX_TENSOR_BYTES to allow larger tensors")


@pytest.mark.parametrize("case", TOO_LARGE)
def test_a_tensor_past_the_limit_is_refused(case, monkeypatch):
    monkeypatch.setenv("RELAYISH_MAX_TENSOR_BYTES", str(GIB))  # refused before it is made, whatever the memory
    source, args = TOO_LARGE[case]
    with pytest.raises(relayish.RelayRuntimeError, match="^<string>:1:") as info:
        relayish.evaluate(relayish.parse(source), "main", *args)
    assert expected_message(case) in str(info.value)


def test_the_limit_is_read_from_the_environment(monkeypatch):
    module = relayish.parse(f"def @main(%a: Tensor({F32}, Shape(16))) -> Tensor({F32}, Shape(16, 16)) "
                            "{ @broadcast_to(%a, shape=(16, 16)) }")
    a = np.ones(16, np.float32)
    assert relayish.evaluate(module, "main", a).shape == (16, 16)
    monkeypatch.setenv("RELAYISH_MAX_TENSOR_BYTES", "1000")
    with pytest.raises(relayish.RelayRuntimeError, match=r"@broadcast_to in @main: a tensor of shape \(16, 16\)"):
        relayish.evaluate(module, "main", a)
    monkeypatch.setenv("RELAYISH_MAX_TENSOR_BYTES", "lots")
    with pytest.raises(ValueError, match="RELAYISH_MAX_TENSOR_BYTES='lots' is not a positive integer"):
        relayish.evaluate(module, "main", a)


def test_the_default_limit_is_the_machines_memory(monkeypatch):
    monkeypatch.delenv("RELAYISH_MAX_TENSOR_BYTES", raising=False)
    assert max_tensor_bytes() == os.sysconf("SC_PAGE_SIZE") * os.sysconf("SC_PHYS_PAGES")
