"""The optimizer's levels: each keeps the corpus's results (evaluated before and after), the
default is 3, bad levels are refused, and ``explain`` / ``relayish explain`` show the groups."""

from __future__ import annotations

import functools

import pytest

import relayish
from interp.evaluator import prepared
from jit.passes import DEFAULT_OPT_LEVEL, optimize
from relayish.cli import main
from relayish.testing import check_pass
from tests.jit.passes.corpus import corpus

SOURCE = """
def @f(%x: Tensor(FloatType(32), Shape(3))) -> Tensor(FloatType(32), Shape()) { @sum(@tanh(%x) * 2.0) }
"""


@pytest.mark.parametrize("level", [1, 2, 3])
def test_every_level_preserves_the_corpus(level):
    for program in corpus():
        check_pass(functools.partial(lambda m, entry: optimize(prepared(m), entry, level), entry=program.entry),
                   program.module, program.entry, program.args)


def test_the_default_level_and_a_bad_level():
    assert DEFAULT_OPT_LEVEL == 3 and relayish.compile(relayish.parse(SOURCE), "f").opt_level == 3
    with pytest.raises(ValueError, match="opt_level must be one of"):
        relayish.compile(relayish.parse(SOURCE), "f", opt_level=4)


def test_explain_shows_the_fused_kernel(tmp_path, capsys):
    text = relayish.compile(relayish.parse(SOURCE), "f").explain()
    assert "fn primitive" in text and "1. in @f: 1 inputs, 3 operators: tanh, mul, sum" in text
    assert "fused kernels:\n#   none" in relayish.compile(relayish.parse(SOURCE), "f", opt_level=2).explain()
    path = tmp_path / "f.rly"
    path.write_text(SOURCE)
    assert main(["explain", str(path), "--entry", "f"]) == 0
    assert "operators: tanh, mul, sum" in capsys.readouterr().out
    assert main(["explain", str(path), "--entry", "nope"]) == 1
    assert "no global @nope" in capsys.readouterr().err
