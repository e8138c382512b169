"""docs/operators.md's operator table is what ``relayish.ops.catalog`` generates from the records:
CI runs this file, so a record changed without regenerating the table fails it."""

from __future__ import annotations

import subprocess
import sys

import attrs
import pytest

from relayish.ops import OpDef, all_ops
from relayish.ops.catalog import BEGIN, DOC_PATH, END, current_table, main, operator_table, render, row

STALE = "docs/operators.md is stale: run python -m relayish.ops.catalog"


def test_the_documented_table_is_the_generated_one() -> None:
    text = DOC_PATH.read_text(encoding="utf-8")
    assert current_table(text).strip("\n") == operator_table().strip("\n"), STALE
    assert render(text) == text, STALE


def test_the_table_has_a_row_per_operator_in_registry_order() -> None:
    lines = operator_table().splitlines()
    assert lines[0].startswith("| name | arguments | attributes (defaults) | pattern | dtypes | differentiable |")
    assert [line.split(" | ")[0].strip("| `") for line in lines[2:]] == list(all_ops())


def test_render_is_idempotent() -> None:
    text = DOC_PATH.read_text(encoding="utf-8")
    once = render(text)
    assert render(once) == once
    stale = f"# Operators\n\nprose\n\n{BEGIN}\n| old |\n{END}\n\nmore prose\n"
    once = render(stale)
    assert once != stale and render(once) == once
    assert once.startswith("# Operators\n\nprose\n\n" + BEGIN + "\n") and once.endswith(END + "\n\nmore prose\n")


def test_a_stale_table_is_detected(tmp_path, capsys) -> None:
    text = render(DOC_PATH.read_text(encoding="utf-8"))
    row = next(line for line in operator_table().splitlines() if line.startswith("| `add` |"))
    stale = text.replace(row, row.replace("a + b", "a plus b"))
    assert stale != text and render(stale) == text
    path = tmp_path / "operators.md"
    path.write_text(stale, encoding="utf-8")
    assert main(["--check", str(path)]) == 1
    assert "is stale: run python -m relayish.ops.catalog" in capsys.readouterr().err
    assert path.read_text(encoding="utf-8") == stale  # --check changes nothing
    assert main([str(path)]) == 0
    assert "rewrote" in capsys.readouterr().out
    assert path.read_text(encoding="utf-8") == text
    assert main(["--check", str(path)]) == 0


def test_the_markers_are_required(tmp_path, capsys) -> None:
    with pytest.raises(ValueError, match="missing"):
        render("# Operators\n")
    with pytest.raises(ValueError, match="before"):
        render(f"{END}\n{BEGIN}\n")
    path = tmp_path / "operators.md"
    path.write_text("no markers\n", encoding="utf-8")
    assert main(["--check", str(path)]) == 1
    assert "missing" in capsys.readouterr().err


def test_pipes_in_text_are_escaped() -> None:
    op = attrs.evolve(all_ops()["add"], doc="a | b", signature="a|b")
    assert row(op).endswith(" | a\\|b | — | BROADCAST | numeric | yes | a \\| b |")


@pytest.mark.parametrize("op", list(all_ops().values()), ids=lambda op: op.name)
def test_every_record_has_its_table_columns(op: OpDef) -> None:
    for column in ("doc", "signature", "dtypes"):
        value = getattr(op, column)
        assert value.strip() and "\n" not in value, f"{op.name}: {column} {value!r}"


def test_the_module_runs_as_a_script() -> None:
    result = subprocess.run([sys.executable, "-m", "relayish.ops.catalog", "--check"], capture_output=True,
                            text=True, check=False)
    assert result.returncode == 0, result.stderr
    assert "up to date" in result.stdout
