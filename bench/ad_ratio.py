"""The cheap-gradient ratio in the reference evaluator: time(value + gradient) / time(value).

Run: python bench/ad_ratio.py [--repeats 5] [--min-time 0.1]

Two float32 losses, inputs from np.random.default_rng(0):
- MLP: ``@mlp_loss`` of examples/mlp.rly (784 -> 256 tanh -> 10, softmax cross-entropy,
  halved), batch 64;
- LeNet: 1x28x28 images -> conv 20 5x5, tanh, max-pool 2 -> conv 50 5x5, tanh, max-pool 2
  -> dense 500, tanh -> dense 10 -> softmax cross-entropy, batch 8 (written below).

For each, ``ad.grad(module, name)`` adds ``@<name>_grad`` (the expansion of ``Grad(@name)``).
Modules are type-checked once and run by an ``interp.Evaluator``, so the times are of
running, not of checking or expanding (the one-time cost of adding ``@<name>_grad``,
expanding and checking it is the last column).
``value`` calls the loss, ``value + gradient`` calls ``@<name>_grad``. Each is run once to
warm up, then timed ``--repeats`` times (default 5) with ``time.perf_counter``; one timing
is the mean of as many back-to-back calls as fill ``--min-time`` seconds (default 0.1, so
that a few milliseconds of scheduling noise do not decide the result), and the table shows
the median timing per call. BLAS runs on one thread unless OPENBLAS_NUM_THREADS (or
OMP_NUM_THREADS, MKL_NUM_THREADS) is set: threads fighting for shared cores make the
ratio meaningless. The reverse-mode bound says the ratio is a small constant (Griewank:
about 5 at most for these operators); the evaluator adds the interpretation overhead of
the backpropagator closures and references. The default run takes a few seconds.
"""

from __future__ import annotations

import argparse
import os

for _var in ("OPENBLAS_NUM_THREADS", "OMP_NUM_THREADS", "MKL_NUM_THREADS"):
    os.environ.setdefault(_var, "1")  # before NumPy loads its BLAS

import statistics
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import numpy as np

import ad
import relayish
from interp import Evaluator

ROOT = Path(__file__).resolve().parent.parent
MLP_BATCH = 64
LENET_BATCH = 8


def tensor(*dims: object) -> str:
    return f"Tensor(FloatType(32), Shape({', '.join(map(str, dims))}))"


LENET = f"""
def @lenet_loss[n: Dim](%x: {tensor('n', 1, 28, 28)},
                        %k1: {tensor(20, 1, 5, 5)}, %c1: {tensor(20, 1, 1)},
                        %k2: {tensor(50, 20, 5, 5)}, %c2: {tensor(50, 1, 1)},
                        %w3: {tensor(500, 800)}, %b3: {tensor(500)},
                        %w4: {tensor(10, 500)}, %b4: {tensor(10)},
                        %y: {tensor('n', 10)}) -> {tensor()} {{
  let %a1 = @max_pool2d(@tanh(@conv2d(%x, %k1) + %c1), pool_size=2) in
  let %a2 = @max_pool2d(@tanh(@conv2d(%a1, %k2) + %c2), pool_size=2) in
  let %hidden = @tanh(@dense(@flatten(%a2), %w3, %b3)) in
  @softmax_cross_entropy(@dense(%hidden, %w4, %b4), %y, axis=1)
}}
"""


def f32(rng: np.random.Generator, *shape: int, scale: float = 1.0) -> np.ndarray:
    return (rng.standard_normal(shape) * scale).astype(np.float32)


def one_hot(rng: np.random.Generator, n: int) -> np.ndarray:
    return np.eye(10, dtype=np.float32)[rng.integers(0, 10, n)]


def mlp_case() -> tuple[str, relayish.Module, str, tuple]:
    path = ROOT / "examples" / "mlp.rly"
    module = relayish.parse(path.read_text(), filename=str(path))
    rng = np.random.default_rng(0)
    args = (f32(rng, MLP_BATCH, 784), f32(rng, 784, 256, scale=784**-0.5), f32(rng, 256, scale=0.1),
            f32(rng, 256, 10, scale=256**-0.5), f32(rng, 10, scale=0.1), one_hot(rng, MLP_BATCH))
    return f"MLP 784-256-10, batch {MLP_BATCH}", module, "mlp_loss", args


def lenet_case() -> tuple[str, relayish.Module, str, tuple]:
    module = relayish.parse(LENET, filename="lenet.rly")
    rng = np.random.default_rng(0)
    args = (f32(rng, LENET_BATCH, 1, 28, 28), f32(rng, 20, 1, 5, 5, scale=0.2), f32(rng, 20, 1, 1, scale=0.1),
            f32(rng, 50, 20, 5, 5, scale=0.045), f32(rng, 50, 1, 1, scale=0.1), f32(rng, 500, 800, scale=800**-0.5),
            f32(rng, 500, scale=0.1), f32(rng, 10, 500, scale=500**-0.5), f32(rng, 10, scale=0.1),
            one_hot(rng, LENET_BATCH))
    return f"LeNet 1x28x28, batch {LENET_BATCH}", module, "lenet_loss", args


def median_seconds(run: Callable[[], Any], repeats: int, min_time: float) -> float:
    """Seconds per call: the median of ``repeats`` timings, each the mean over enough calls
    to last ``min_time`` (the count is set by the warm-up call)."""
    start = time.perf_counter()
    run()  # warm-up
    calls = max(1, int(min_time / max(time.perf_counter() - start, 1e-9)))
    timings = []
    for _ in range(repeats):
        start = time.perf_counter()
        for _ in range(calls):
            run()
        timings.append((time.perf_counter() - start) / calls)
    return statistics.median(timings)


def measure_value(module: relayish.Module, name: str, args: tuple, repeats: int, min_time: float) -> float:
    """Seconds per call of the loss itself."""
    evaluator = Evaluator(relayish.infer_types(module))
    return median_seconds(lambda: evaluator.run(name, args), repeats, min_time)


def measure_grad(module: relayish.Module, name: str, args: tuple, repeats: int, min_time: float) -> tuple[float, float]:
    """(seconds per call of ``@<name>_grad``, one-time seconds to add, expand and check it)."""
    start = time.perf_counter()
    evaluator = Evaluator(relayish.infer_types(ad.grad(module, name)))
    prepare = time.perf_counter() - start
    return median_seconds(lambda: evaluator.run(f"{name}_grad", args), repeats, min_time), prepare


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeats", type=int, default=5, help="timings per measurement (the median is shown)")
    parser.add_argument("--min-time", type=float, default=0.1, help="seconds of back-to-back calls per timing")
    options = parser.parse_args()
    print(f"{'loss (float32)':<30} {'value (ms)':>11} {'value+grad (ms)':>16} {'ratio':>7} {'prepare (s)':>12}")
    for label, module, name, args in (mlp_case(), lenet_case()):
        value = measure_value(module, name, args, options.repeats, options.min_time)
        print(f"{label:<30} {value * 1e3:>11.2f}", end="", flush=True)
        try:
            both, prepare = measure_grad(module, name, args, options.repeats, options.min_time)
        except Exception:
            print()  # end the row before the traceback
            raise
        print(f" {both * 1e3:>16.2f} {both / value:>7.2f} {prepare:>12.2f}")


if __name__ == "__main__":
    main()
