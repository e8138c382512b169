"""Every operator is one record (relayish.ops.record.OpDef) holding all its parts."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from relayish.ops import OpDef, Pattern, Raises, all_ops
from relayish.ops import arithmetic, broadcast, composite, elementwise, grad_ops, nn, reduce, shape
from relayish.ops.element import parse
from relayish.ops.generation import Hint

FAMILIES = (elementwise, broadcast, nn, shape, grad_ops, reduce, arithmetic, composite)
RECORDS = [op for family in FAMILIES for op in family.OPS]
ROOT = Path(__file__).resolve().parents[2]
PRODUCT = ("relayish", "typecheck", "ad", "runtime", "interp", "jit", "frontend")


def test_no_two_records_share_a_name() -> None:
    names = [op.name for op in RECORDS]
    assert len(names) == len(set(names))
    assert all_ops() == {op.name: op for op in RECORDS}


@pytest.mark.parametrize("op", RECORDS, ids=lambda op: op.name)
def test_every_record_is_complete(op: OpDef) -> None:
    assert callable(op.type_relation)
    assert callable(op.rule) and isinstance(op.hint, Hint)
    assert isinstance(op.raises, Raises)
    if op.differentiable:
        assert op.gradient is not None or op.lowering is not None
    if op.pattern in (Pattern.ELEMWISE, Pattern.BROADCAST) and op.name not in ("cast", "cast_like"):
        assert op.element is not None
        parse(op.element)
    else:
        assert op.element is None


@pytest.mark.parametrize("name, module", [("rsqrt", "relayish/ops/arithmetic.py"),
                                          ("leaky_relu", "relayish/ops/composite.py")])
def test_a_new_operator_is_its_record_alone(name: str, module: str) -> None:
    """Two operators this issue added (one elementwise, one lowered): no source file but the
    record's own names them, so nothing else (kernels, fuser, passes, AD, generator) was
    touched to add them. The only other file is the generated docs/operators.md."""
    pattern = re.compile(rf"\b{name}\b")
    naming = sorted(str(path.relative_to(ROOT)) for package in PRODUCT for path in (ROOT / package).rglob("*.py")
                    if pattern.search(path.read_text()))
    assert naming == [module]

