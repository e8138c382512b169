"""`relayish run FILE.rly [--entry NAME] [ARG ...]` on the shipped example."""

import pathlib

import numpy as np

from relayish.cli import main

EXAMPLE = str(pathlib.Path(__file__).resolve().parents[2] / "examples/loop.rly")


def expected(x: np.ndarray, steps: int) -> np.ndarray:
    for _ in range(steps):
        x = x * np.float32(0.5) + np.float32(1.0)
    return x


def test_run_with_literal_arguments(capsys):
    assert main(["run", EXAMPLE, "[1.0, 2.0, 3.0]", "10"]) == 0
    out = capsys.readouterr().out
    assert out.strip() == repr((expected(np.array([1, 2, 3], np.float32), 10), np.array(10, np.int32)))


def test_run_with_a_npy_argument(tmp_path, capsys):
    x = np.array([4.0, -2.0, 0.5], np.float32)
    np.save(tmp_path / "x.npy", x)
    assert main(["run", EXAMPLE, str(tmp_path / "x.npy"), "3", "--entry", "main"]) == 0
    assert repr(expected(x, 3)) in capsys.readouterr().out


def test_run_reports_bad_arguments_and_unknown_entries(capsys):
    assert main(["run", EXAMPLE, "[1.0, 2.0]", "10"]) == 1
    assert "argument %x of @main: expected Tensor(FloatType(32), Shape(3)), got Tensor(FloatType(32), Shape(2))" in capsys.readouterr().err
    assert main(["run", EXAMPLE, "[1.0, 2.0, 3.0]", "10", "--entry", "nope"]) == 1
    assert "the module has no global @nope" in capsys.readouterr().err
    assert main(["run", EXAMPLE, "not-a-literal", "10"]) == 1
    assert "neither a .npy file nor a literal" in capsys.readouterr().err
