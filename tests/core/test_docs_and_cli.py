"""The README's example, the docs' module and the shipped examples work as documented."""

import math
import pathlib
import subprocess
import sys

import relayish
from relayish.cli import main

ROOT = pathlib.Path(__file__).resolve().parents[2]


def _fenced(text: str, after: str, language: str = "") -> str:
    return text.split(after, 1)[1].split("```" + language, 1)[1].split("```", 1)[0]


def test_readme_first_example_runs(capsys):
    code = _fenced((ROOT / "README.md").read_text(), "## A first example", "python")
    exec(compile(code, "README.md", "exec"), {})
    printed = capsys.readouterr().out
    assert "def @scale[n: Dim](%x: Tensor(FloatType(32), Shape(n, 3)))" in printed
    assert "@sum(@tanh(%x), axis=1)" in printed


def test_text_format_doc_module_is_canonical():
    text = _fenced((ROOT / "docs/text-format.md").read_text(), "## A whole module").lstrip("\n")
    assert relayish.astext(relayish.parse(text)) == text


def test_examples_parse_and_format_idempotently():
    for path in sorted((ROOT / "examples").glob("*.rly")):
        once = relayish.astext(relayish.parse(path.read_text(), filename=str(path)))
        assert relayish.astext(relayish.parse(once)) == once


def test_cli_fmt_prints_canonical_form(capsys):
    assert main(["fmt", str(ROOT / "examples/mlp.rly")]) == 0
    out = capsys.readouterr().out
    assert out.startswith("def @dense_tanh[n: Dim, i: Dim, o: Dim](")
    assert "Grad(@mlp_loss)(%x, %w1, %b1, %w2, %b2, %y)[1][1]" in out


def test_cli_fmt_reports_parse_error_with_exit_1(tmp_path, capsys):
    bad = tmp_path / "bad.rly"
    bad.write_text("def @f(%x) {\n  %x +\n}\n")
    assert main(["fmt", str(bad)]) == 1
    err = capsys.readouterr().err
    assert f"{bad}:3:1: expected an expression, found '}}'" in err
    assert "    ^" in err


def test_cli_fmt_missing_file(tmp_path, capsys):
    assert main(["fmt", str(tmp_path / "nope.rly")]) == 1
    assert "cannot read" in capsys.readouterr().err


def test_console_script_entry_point_runs_as_module():
    result = subprocess.run(
        [sys.executable, "-m", "relayish", "fmt", str(ROOT / "examples/mlp.rly")],
        capture_output=True, text=True, check=False,
    )
    assert result.returncode == 0, result.stderr
    assert "def @mlp_loss[n: Dim]" in result.stdout


def test_readme_type_checking_example_runs(capsys):
    code = _fenced((ROOT / "README.md").read_text(), "## Type checking", "python")
    exec(compile(code, "README.md", "exec"), {})
    printed = capsys.readouterr().out
    assert printed.startswith("layer.rly:3:")
    assert "784" in printed and "800" in printed and "@dense(%x, %w)" in printed


def test_readme_running_programs_example_runs(capsys, monkeypatch):
    monkeypatch.chdir(ROOT)
    code = _fenced((ROOT / "README.md").read_text(), "## Running programs", "python")
    exec(compile(code, "README.md", "exec"), {})
    assert capsys.readouterr().out.startswith("(array([1.9990234, 2.       , 2.0009766], dtype=float32), array(10, dtype=int32))")


def test_cli_check_prints_typed_ir(capsys):
    assert main(["check", str(ROOT / "examples/mlp.rly")]) == 0
    out = capsys.readouterr().out
    assert "let %z: Tensor(FloatType(32), Shape(n, 10)) = @matmul(%h, %w2) + %b2 in" in out
    assert relayish.astext(relayish.parse(out)) == out


def test_cli_check_reports_type_errors_with_exit_1(tmp_path, capsys):
    bad = tmp_path / "bad.rly"
    bad.write_text("def @f(%x: Tensor(FloatType(32), Shape(3))) -> Tensor(FloatType(32), Shape(4)) {\n  %x\n}\n")
    assert main(["check", str(bad)]) == 1
    assert "(dimension 0: 4 vs 3)" in capsys.readouterr().err


def test_readme_gradients_example_runs(capsys):
    code = _fenced((ROOT / "README.md").read_text(), "## Gradients", "python")
    exec(compile(code, "README.md", "exec"), {})
    printed = capsys.readouterr().out
    assert printed.startswith("((array(8.), (array(12.),)), array(12.))")  # x^3, 3x^2 and 6x at 2
    assert "@cube__ad(%bp, %dx)" in printed and "(!%bp)()" in printed


def test_readme_jit_example_runs(capsys):
    code = _fenced((ROOT / "README.md").read_text(), "## Compiling: the JIT", "python")
    exec(compile(code, "README.md", "exec"), {})
    printed = capsys.readouterr().out.splitlines()
    assert abs(float(printed[0]) - 3 * 2 * math.tanh(1.0)) < 1e-6
    assert printed[1].startswith("def g_f(x):")


def test_ci_runs_the_readmes_test_command():
    install, run = _fenced((ROOT / "README.md").read_text(), "**Tests**", "sh").strip().split(" && ")
    script = (ROOT / ".ci" / "run").read_text().splitlines()
    assert install.replace("pip install", "pip install -q") in script and run in script
