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


def test_run_refuses_literals_that_do_not_fit_the_parameters_dtype(capsys):
    """2.5 for an int32 parameter was run as 3 steps, 99999999999 as 1215752192 (minutes of looping)."""
    line = next(i for i, text in enumerate(pathlib.Path(EXAMPLE).read_text().splitlines(), 1)
                if text.startswith("def @main"))
    for literal, phrase in [("2.5", "got the float 2.5: int32 parameters take ints"),
                            ("2.0", "got the float 2.0: int32 parameters take ints, and relayish turns no float into "
                                    "an int: write 2"),
                            ("99999999999", "got the int 99999999999, which does not fit in int32"),
                            ("True", "got the bool True: a bool is not a number here")]:
        assert main(["run", EXAMPLE, "[1.0, 2.0, 3.0]", literal]) == 1
        err = capsys.readouterr().err
        assert err.startswith(f"{EXAMPLE}:{line}:48: argument 2 of @main, {literal}, for %steps of type "
                              "Tensor(IntType(32), Shape()): "), err
        assert phrase in err and "Traceback" not in err
    assert main(["run", EXAMPLE, "[1, 2, 3]", "10"]) == 0  # ints for a float32 tensor fit
    assert capsys.readouterr().out.strip() == repr((expected(np.array([1, 2, 3], np.float32), 10), np.array(10, np.int32)))


def test_run_refuses_arguments_that_are_not_numbers(capsys):
    for literal, phrase in [("{}", "got the dict {}, which is not a number"),
                            ("'s'", "got the str 's', which is not a number"),
                            ("None", "got None, which is not a number"),
                            ("[[1], [2, 3]]", "whose rows have different lengths")]:
        assert main(["run", EXAMPLE, literal, "10"]) == 1
        err = capsys.readouterr().err
        assert f"argument 1 of @main, {literal}, for %x" in err and phrase in err and "Traceback" not in err, err


def test_run_checks_the_argument_count_and_npy_files(tmp_path, capsys):
    assert main(["run", EXAMPLE, "[1.0, 2.0, 3.0]"]) == 1
    assert capsys.readouterr().err == "relayish run: @main takes 2 arguments (%x, %steps), given 1\n"
    (tmp_path / "text.npy").write_text("not an array")
    assert main(["run", EXAMPLE, str(tmp_path / "text.npy"), "10"]) == 1
    assert capsys.readouterr().err.startswith(f"relayish run: {tmp_path / 'text.npy'} is not a .npy file of numbers: ")
    np.save(tmp_path / "f64.npy", np.ones(3))
    assert main(["run", EXAMPLE, str(tmp_path / "f64.npy"), "10"]) == 1
    assert "expected Tensor(FloatType(32), Shape(3)), got Tensor(FloatType(64), Shape(3))" in capsys.readouterr().err
