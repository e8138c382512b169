"""The optimizer's levels: each keeps the corpus's results (evaluated before and after), the
default is 3, bad levels are refused, and ``explain`` / ``relayish explain`` show the groups."""

from __future__ import annotations

import functools
from collections import Counter

import numpy as np
import pytest

import relayish
from jit.passes import DEFAULT_OPT_LEVEL, optimize
from typecheck import infer
from relayish.cli import main
from relayish.testing import check_pass
from runtime.prepare import prepared
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


def test_the_w1_benchmark_program_runs_as_one_kernel_forward_and_one_with_its_gradient():
    """W1 exactly as bench/programs.py writes it (Grad, 10^6 elements), through the default
    pipeline: partial evaluation, clean-up and fusion leave one kernel launch for each."""
    from bench.programs import module
    from tests.jit.test_fused_kernels import kernel_calls

    rng = np.random.default_rng(0)
    x, w, b = (rng.standard_normal(1_000_000).astype(np.float32) for _ in range(3))
    assert kernel_calls(relayish.compile(module(), "w1_loss"), x, w, b) == Counter({"k_fused": 1})
    assert kernel_calls(relayish.compile(module(), "w1_vg"), x, w, b) == Counter({"k_fused": 1})


def test_a_pass_that_changes_nothing_is_not_type_checked_again(monkeypatch):
    """Type inference is most of the optimizer's time: it follows a pass only where the pass rewrote a
    function (passes return the functions they keep as they were)."""
    import jit.passes as passes
    from jit.passes.anf import to_anf
    from jit.passes.dce import eliminate_dead_code

    checked = []
    monkeypatch.setattr(passes, "infer", lambda m: checked.append(m) or infer(m))
    module = prepared(relayish.parse(SOURCE))
    assert passes._applied(lambda m: m.with_functions(dict(m.functions)), module) is module and checked == []
    rewritten = passes._applied(to_anf, module)
    assert rewritten is not module and len(checked) == 1
    assert passes._applied(eliminate_dead_code, rewritten) is rewritten and len(checked) == 1  # nothing dead
