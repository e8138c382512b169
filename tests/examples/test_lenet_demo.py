"""The main job: the paper's Figure 4 LeNet, as decorated Python, trained on the digits.

The full default run is the acceptance check (at least 95% test accuracy with the fixed
seed), in a process of its own with the default backend (the JIT; its first step runs on the
evaluator, the second compiles the kernels); it takes some 30-40 s on two cores with an empty kernel cache. The README's frontend example runs as a script
(``@relay`` reads source, so it must live in a file).
"""

from __future__ import annotations

import os
import pathlib
import re
import subprocess
import sys

import numpy as np
import pytest

import relayish
from relayish.examples import lenet
from relayish.examples.data import write_idx

ROOT = pathlib.Path(__file__).resolve().parents[2]


def test_the_demo_reaches_95_percent_on_the_digits():
    """The README's main job as a user runs it: its own process, the default backend (the JIT)."""
    pytest.importorskip("sklearn")  # the test extra installs it; CI runs this test
    env = {k: v for k, v in os.environ.items() if k not in ("RELAYISH_BACKEND", "RELAYISH_TIERED")}
    proc = subprocess.run([sys.executable, "-m", "relayish.examples.lenet"], cwd=ROOT, env=env,
                          capture_output=True, text=True, timeout=1200)
    out = proc.stdout
    assert proc.returncode == 0, out[-3000:] + proc.stderr[-3000:]
    assert "# backend: jit" in out
    assert "def @loss[N: Dim](%x: Tensor(FloatType(32), Shape(N, 1, 28, 28))" in out
    steps = re.findall(r"step +(\d+)/(\d+) +loss ([0-9.]+) +(\d+) examples/s", out)
    assert len(steps) >= 10 and steps[-1][0] == steps[-1][1]
    assert float(steps[-1][2]) < float(steps[0][2])
    accuracy = float(re.search(r"test accuracy: ([0-9.]+)%", out).group(1))
    assert accuracy >= 95.0, out[-2000:]


def test_the_printed_ir_of_loss_parses_back():
    text = relayish.astext(lenet.loss.ir)
    assert relayish.alpha_equal(relayish.parse(text), lenet.loss.ir)


def write_mnist(directory: pathlib.Path, n_train: int, n_test: int) -> None:
    """Tiny IDX files: digit k is a bright k-th row band, so the classes are separable."""
    rng = np.random.default_rng(0)
    for prefix, n in (("train", n_train), ("t10k", n_test)):
        labels = rng.integers(0, 10, n).astype(np.uint8)
        images = rng.integers(0, 40, (n, 28, 28)).astype(np.uint8)
        for i, k in enumerate(labels):
            images[i, 2 + 2 * k: 4 + 2 * k, 4:24] = 255
        write_idx(directory / f"{prefix}-images-idx3-ubyte", images)
        write_idx(directory / f"{prefix}-labels-idx1-ubyte.gz", labels)


def test_the_demo_trains_on_mnist_idx_files_and_saves_the_model(tmp_path, capsys):
    write_mnist(tmp_path, 96, 40)
    saved = tmp_path / "lenet.npz"
    args = ["--mnist", str(tmp_path), "--epochs", "3", "--batch", "16", "--log-every", "1", "--save", str(saved)]
    assert lenet.main(args) == 0
    out = capsys.readouterr().out
    assert "MNIST from" in out and "96 training and 40 test images" in out
    assert len(re.findall(r"step +\d+/18 ", out)) == 18
    accuracy = float(re.search(r"test accuracy: ([0-9.]+)%", out).group(1))
    assert accuracy >= 90.0
    model = relayish.relay.load_model(lenet.lenet, saved)
    assert model.params["conv1_weight"].shape == (20, 1, 5, 5)


def test_the_demo_reports_a_missing_mnist_directory(tmp_path, capsys):
    assert lenet.main(["--mnist", str(tmp_path / "nowhere")]) == 1
    assert "error:" in capsys.readouterr().err
