"""``relayish difftest``: the figures it prints, and a broken pass caught and minimized."""

from __future__ import annotations

import re
import textwrap
import time

import numpy as np

import relayish
from relayish.cli import main

BROKEN_PASS = textwrap.dedent('''
    from relayish.expr import Call, Op
    from relayish.traverse import ExprMutator

    class _Swap(ExprMutator):
        def rewrite(self, old, new):
            if isinstance(new, Call) and isinstance(new.callee, Op) and new.callee.name == "sub":
                return Call(new.callee, new.args[::-1], span=new.span)
            return new

    def swap_sub(module):
        return module.with_functions({n: _Swap().mutate(f) for n, f in module.functions.items()})

    def identity(module):
        return module

    class _SwapArguments(ExprMutator):
        def rewrite(self, old, new):
            if isinstance(new, Call) and isinstance(new.callee, Op) and new.callee.name.startswith("ixgen_"):
                return Call(new.callee, new.args[::-1], span=new.span)
            return new

    def swap_index_operator_arguments(module):
        return module.with_functions({n: _SwapArguments().mutate(f) for n, f in module.functions.items()})

    def die(module):
        import os
        os._exit(3)
''')


def test_difftest_prints_its_figures(capsys, tmp_path):
    assert main(["difftest", "--examples", "40", "--seed", "3", "--out", str(tmp_path)]) == 0
    out = capsys.readouterr().out
    assert "interp (reference) against roundtrip" in out
    assert "programs checked      40" in out
    assert "failures              0" in out
    assert "operators             " in out and "expression nodes      " in out
    assert not list(tmp_path.iterdir())


def test_difftest_catches_a_broken_pass_and_writes_a_minimized_program(capsys, tmp_path, monkeypatch):
    (tmp_path / "user_passes.py").write_text(BROKEN_PASS)
    monkeypatch.syspath_prepend(str(tmp_path))
    out_dir = tmp_path / "failures"
    code = main(["difftest", "--examples", "200", "--seed", "0", "--pass", "user_passes:swap_sub", "--out", str(out_dir)])
    printed = capsys.readouterr().out
    assert code == 1
    assert "failures              1" in printed
    written = out_dir / "difftest-seed0.rly"
    assert f"the program (minimized where it ends) written to {written}" in printed
    text = written.read_text()
    assert "# @main differs" in text and "# arguments of @main:" in text
    module = relayish.parse(text, filename=str(written))  # comments and all, it reads back
    program = relayish.astext(module)
    before, after = map(int, re.search(r"# minimized from a program of (\d+) lines to (\d+)", text).groups())
    assert after == len(program.splitlines()) and after < before, (before, after)
    assert program.count("def @") <= 2 and after <= 20, program  # a few lines (a loop counter, say)
    assert " - " in program


def test_difftest_of_index_expression_operators_checks_the_jit_and_writes_failures_with_the_definition(
        capsys, tmp_path, monkeypatch):
    """``--index-expressions``: each program defines a random operator (its value and derived
    gradient returned); the JIT agrees, the operators are forgotten after their programs, and a
    failure's file holds the operator's definition, so it parses and runs again."""
    from relayish.ops.registry import user_op_names

    assert main(["difftest", "--index-expressions", "--examples", "4", "--backend", "jit", "--out", str(tmp_path)]) == 0
    assert "programs checked      4" in capsys.readouterr().out
    assert not [name for name in user_op_names() if name.startswith("ixgen_")]
    (tmp_path / "user_passes.py").write_text(BROKEN_PASS)
    monkeypatch.syspath_prepend(str(tmp_path))
    out_dir = tmp_path / "failures"
    code = main(["difftest", "--index-expressions", "--examples", "20", "--seed", "1",
                 "--pass", "user_passes:swap_index_operator_arguments", "--out", str(out_dir)])
    assert code == 1 and "failures              1" in capsys.readouterr().out
    text = (out_dir / "difftest-seed1.rly").read_text()
    assert re.search(r"^operator @ixgen_1_\d+\(%x0, %x1\) = compute\(", text, re.MULTILINE), text
    module = relayish.parse(text)
    shape = tuple(d.value for d in module["main"].params[0].type_annotation.shape.dims)
    relayish.evaluate(module, "main", *[np.ones(shape, np.float32)] * 3)  # minimized: the operator's call remains


def test_difftest_with_a_correct_pass_passes(capsys, tmp_path, monkeypatch):
    (tmp_path / "user_passes.py").write_text(BROKEN_PASS)
    monkeypatch.syspath_prepend(str(tmp_path))
    assert main(["difftest", "--examples", "30", "--pass", "user_passes:identity", "--out", str(tmp_path)]) == 0
    assert "pass:user_passes:identity" in capsys.readouterr().out


def test_difftest_reports_a_pass_it_cannot_load(capsys):
    assert main(["difftest", "--examples", "1", "--pass", "no_such_module_here:f"]) == 2
    assert "cannot load the pass 'no_such_module_here:f'" in capsys.readouterr().err
    assert main(["difftest", "--examples", "1", "--pass", "nocolon"]) == 2
    assert "--pass needs MODULE:FUNCTION" in capsys.readouterr().err


def test_jobs_split_the_programs_over_processes_with_consecutive_seeds(tmp_path):
    """Two processes with seeds 5 and 6 check exactly the programs of two one-process runs."""
    from relayish.testing.difftest import run, run_jobs

    both = run_jobs(9, 5, ["roundtrip"], tmp_path, jobs=2)
    alone = [run(5, 5, ["roundtrip"], tmp_path), run(4, 6, ["roundtrip"], tmp_path)]
    assert both.checked == 9 and both.jobs == 2 and both.failure is None
    assert sorted(both.sizes) == sorted(alone[0].sizes + alone[1].sizes)
    assert both.coverage == alone[0].coverage + alone[1].coverage
    assert "seeds 5-6 (2 processes)" in both.lines()[0]


def test_programs_for_cuda_leave_out_float16_which_it_refuses():
    from relayish.testing.difftest import default_features
    from relayish.types import FloatType

    assert FloatType(16) in default_features(["interp", "jit"]).dtypes
    assert FloatType(16) not in default_features(["interp", "cuda"]).dtypes
    assert default_features(["interp", "cuda"]).grad


def test_a_job_whose_process_dies_fails_the_run(capsys, tmp_path, monkeypatch):
    (tmp_path / "user_passes.py").write_text(BROKEN_PASS)
    monkeypatch.syspath_prepend(str(tmp_path))
    assert main(["difftest", "--examples", "4", "--jobs", "2", "--pass", "user_passes:die", "--out", str(tmp_path)]) == 1
    printed = capsys.readouterr().out
    assert "failures              1" in printed and "ended without a report: BrokenProcessPool" in printed


def test_wrong_arguments_change_one_tensor_and_nothing_else():
    import numpy as np

    from relayish.testing.difftest import wrong_arguments

    rng = np.random.default_rng(0)
    args = (np.ones((2, 3), np.float32), np.int32(4), (np.zeros(2, np.float32),), np.ones(5, np.int64))
    for _ in range(50):
        changed = wrong_arguments(args, rng)
        differs = [i for i, (a, b) in enumerate(zip(args, changed)) if a is not b]
        assert len(differs) == 1 and differs[0] in (0, 3)
        old, new = args[differs[0]], changed[differs[0]]
        assert (old.shape != new.shape) != (old.dtype != new.dtype)  # one of the two
        assert new.ndim == old.ndim
    assert wrong_arguments((np.int32(1), (np.ones(3, np.float32),)), rng) is None


def test_wrong_arguments_are_refused_alike_by_the_evaluator_and_compiled_code(tmp_path):
    """Generated programs called with an argument of another size or dtype than their types:
    the evaluator and the JIT both raise RelayRuntimeError (compiled code read past arrays whose
    sizes broke a relation like n + 1). In a child process: a crash fails the test, not pytest."""
    import os
    import subprocess
    import sys

    env = dict(os.environ, RELAYISH_TIERED="0")
    result = subprocess.run([sys.executable, "-m", "relayish", "difftest", "--backend", "jit", "--examples", "30",
                             "--wrong-arguments", "1", "--seed", "11", "--out", str(tmp_path)],
                            capture_output=True, text=True, env=env, timeout=900)
    assert result.returncode == 0, result.stdout + result.stderr[-3000:]
    wrong, refused = map(int, re.search(r"wrong arguments +(\d+) programs; (\d+) refused", result.stdout).groups())
    assert wrong >= 10 and refused >= wrong // 2, result.stdout


def test_a_program_past_the_time_limit_is_a_failure_naming_the_backend(capsys, tmp_path, monkeypatch):
    """A backend that does not return (here a pass that sleeps) fails the run after --time-limit
    seconds instead of hanging it, and the program is written as generated."""
    (tmp_path / "sleepy_passes.py").write_text("import time\n\ndef sleepy(module):\n    time.sleep(60)\n    return module\n")
    monkeypatch.syspath_prepend(str(tmp_path))
    started = time.monotonic()
    code = main(["difftest", "--examples", "3", "--pass", "sleepy_passes:sleepy", "--time-limit", "1", "--out", str(tmp_path)])
    printed = capsys.readouterr().out
    assert code == 1 and time.monotonic() - started < 30
    assert "the program took more than 1 s (running: pass:sleepy_passes:sleepy)" in printed
    relayish.parse((tmp_path / "difftest-seed0.rly").read_text())  # the program, readable


def test_a_program_the_evaluator_does_not_finish_is_a_failure(tmp_path, monkeypatch):
    """Generated programs end by construction: one past the evaluator's step limit is reported,
    before any other backend runs it (a program that never ends would hang compiled code)."""
    from relayish.testing import difftest

    monkeypatch.setattr(difftest, "STEP_LIMIT", 0)  # every program with a call is past it
    report = difftest.run(20, 4, ["jit"], tmp_path)
    assert report.failure is not None and "did not end within 0 calls in the evaluator" in report.failure
    assert "(running: interp)" in report.failure and report.backend_seconds["jit"] == 0
