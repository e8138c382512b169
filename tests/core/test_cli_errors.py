"""Every error of the ``relayish`` command is one message on stderr, never a traceback:
``FILE:LINE:COL: ...`` where it has a place in a file, else ``relayish COMMAND: ...``; exit
status 2 for a malformed command line, 1 for everything else (relayish/cli.py)."""

from __future__ import annotations

import pathlib
import subprocess
import sys

import pytest

from relayish import cli
from relayish.cli import main

ROOT = pathlib.Path(__file__).resolve().parents[2]
LOOP = str(ROOT / "examples/loop.rly")


@pytest.fixture
def files(tmp_path: pathlib.Path) -> pathlib.Path:
    (tmp_path / "binary.rly").write_bytes(b"\xff\xfe\x00binary")
    (tmp_path / "latin1.rly").write_bytes("def @main() {\n  1.0 # caf\xe9\n}\n".encode("latin-1"))
    (tmp_path / "empty.rly").write_text("")
    (tmp_path / "folder.rly").mkdir()
    (tmp_path / "other.rly").write_text("def @f(%x: Tensor(FloatType(32), Shape())) { %x }\n")
    return tmp_path


CASES = [
    # (argv, status, the start of stderr), {d} standing for the folder of the files above
    (["fmt", "{d}/binary.rly"], 1, "{d}/binary.rly:1:1: not UTF-8 text (byte 0xff): save the file as UTF-8"),
    (["check", "{d}/latin1.rly"], 1, "{d}/latin1.rly:2:12: not UTF-8 text (byte 0xe9)"),
    (["run", "{d}/binary.rly"], 1, "{d}/binary.rly:1:1: not UTF-8 text"),
    (["explain", "{d}/binary.rly"], 1, "{d}/binary.rly:1:1: not UTF-8 text"),
    (["fmt", "{d}/missing.rly"], 1, "relayish fmt: cannot read {d}/missing.rly: No such file or directory"),
    (["check", "{d}/folder.rly"], 1, "relayish check: cannot read {d}/folder.rly: Is a directory"),
    (["run", "{d}/folder.rly"], 1, "relayish run: cannot read {d}/folder.rly: Is a directory"),
    (["explain", "{d}/missing.rly"], 1, "relayish explain: cannot read {d}/missing.rly"),
    (["run", "{d}/empty.rly"], 1, "relayish run: the module has no global @main (the file defines no globals)"),
    (["explain", "{d}/empty.rly"], 1, "relayish explain: the module has no global @main (the file defines no globals)"),
    (["run", "{d}/other.rly", "1.0"], 1, "relayish run: the module has no global @main (it has: @f; choose one with "
                                         "--entry)"),
    (["explain", LOOP, "--entry", "nope"], 1, "relayish explain: the module has no global @nope (it has: @main"),
    (["run", LOOP, "[1.0, 2.0, 3.0]", "1", "2"], 1, "relayish run: @main takes 2 arguments (%x, %steps), given 3"),
    (["run", LOOP, "{}", "10"], 1, f"{LOOP}:3:11: argument 1 of @main, {{}}, for %x of type Tensor(FloatType(32), "
                                   "Shape(3)): got the dict {}, which is not a number"),
    (["run", LOOP, "[1.0,", "10"], 1, "relayish run: argument '[1.0,' is neither a .npy file nor a literal"),
    (["run", LOOP, "{d}/missing.npy", "10"], 1, "relayish run: cannot read {d}/missing.npy: No such file"),
    # usage errors: argparse's, on one line
    ([], 2, "relayish: the following arguments are required: command (see relayish --help)"),
    (["bogus"], 2, "relayish: argument command: invalid choice: 'bogus'"),
    (["fmt", "a.rly", "b.rly"], 2, "relayish: unrecognized arguments: b.rly (see relayish --help)"),
    (["run", LOOP, "--entry"], 2, "relayish run: argument --entry: expected one argument (see relayish run --help)"),
    (["explain", LOOP, "--opt-level", "9"], 2, "relayish explain: argument --opt-level: invalid choice: 9"),
    (["difftest", "--examples", "-1"], 2, "relayish difftest: argument --examples: -1 is not a positive number"),
    (["difftest", "--examples", "x"], 2, "relayish difftest: argument --examples: 'x' is not a whole number"),
    (["difftest", "--pass", "nope"], 2, "relayish difftest: --pass needs MODULE:FUNCTION"),
    (["difftest", "--out", "{d}/other.rly"], 2, "relayish difftest: --out {d}/other.rly is not a directory"),
]  # fmt: skip


@pytest.mark.parametrize("argv, status, start", CASES, ids=[" ".join(c[0]).replace(LOOP, "loop.rly") for c in CASES])
def test_each_error_is_one_message_with_its_exit_status(files, capsys, argv, status, start):
    assert main([a.replace("{d}", str(files)) for a in argv]) == status
    out, err = capsys.readouterr()
    assert err.startswith(start.replace("{d}", str(files))), err
    assert "Traceback" not in err and out == ""
    lines = err.splitlines()
    # one line, or a file position followed by the quoted source line and its caret
    assert len(lines) == 1 or (len(lines) == 3 and lines[2].strip() == "^"), err


def test_a_binary_file_gives_no_traceback_from_the_installed_command(files):
    result = subprocess.run([sys.executable, "-m", "relayish", "check", str(files / "binary.rly")],
                            capture_output=True, text=True, check=False)
    assert result.returncode == 1
    assert result.stderr == f"{files}/binary.rly:1:1: not UTF-8 text (byte 0xff): save the file as UTF-8\n"


def test_an_empty_file_is_an_empty_module(files, capsys):
    assert main(["fmt", str(files / "empty.rly")]) == 0
    assert main(["check", str(files / "empty.rly")]) == 0
    assert capsys.readouterr() == ("", "")


def test_a_bug_in_relayish_is_still_one_line_unless_asked(monkeypatch, capsys):
    def broken(args):
        raise ZeroDivisionError("division by zero")
    monkeypatch.setattr(cli, "_fmt", broken)
    assert main(["fmt", LOOP]) == 1
    assert capsys.readouterr().err == ("relayish fmt: internal error, ZeroDivisionError: division by zero (a bug in "
                                       "relayish: please report it; RELAYISH_TRACEBACK_FILTERING=off shows the "
                                       "traceback)\n")
    monkeypatch.setenv("RELAYISH_TRACEBACK_FILTERING", "off")
    with pytest.raises(ZeroDivisionError):
        main(["fmt", LOOP])
