"""The docs' module, the shipped examples, the CLI and the README's test command work as
documented (the README's code blocks themselves: tests/core/test_readme.py)."""

import pathlib
import subprocess
import sys

import relayish
from relayish.cli import main

ROOT = pathlib.Path(__file__).resolve().parents[2]


def _fenced(text: str, after: str, language: str = "") -> str:
    return text.split(after, 1)[1].split("```" + language, 1)[1].split("```", 1)[0]


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


def test_ci_runs_the_readmes_test_command():
    install, run = _fenced((ROOT / "README.md").read_text(), "**Tests**", "sh").strip().split(" && ")
    script = (ROOT / ".ci" / "run").read_text().splitlines()
    assert install.replace("pip install", "pip install -q") in script and run in script
