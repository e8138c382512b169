"""Kernels derived from index expressions against the JIT's built-in kernels, at W3's sizes.

Run:  python3 bench/ix_kernels.py [--repeats 5]

Each row compiles one operator call with ``relayish.compile`` twice, once written with
``@ix.operator`` (docs/index-expressions.md) and once as the built-in operator, checks that the
two agree, and prints their best time per call (over ``--repeats`` rounds of 20 calls) and the
ratio. A second table does the same in the form users write: ``@relay`` functions whose first
axis is a ``Dim`` batch, on the default backend (the first calls warm it up). Issue 23's
targets: matmul within 3x, conv2d within 2x.
"""

from __future__ import annotations

import argparse
import time
from typing import Any, Callable

import numpy as np

import relayish
from relayish import Dim, Float, Tensor, ix, relay


@ix.operator(name="bench_ix_matmul")
def matmul(A, B):
    k = ix.axis(A.shape[1], "k")
    return ix.tensor((A.shape[0], B.shape[1]), lambda i, j: ix.sum(A[i, k] * B[k, j], k))


@ix.operator(name="bench_ix_conv2d")
def conv2d(X, W):
    """NCHW, stride 1, no padding."""
    c, ky, kx = ix.axis(X.shape[1], "c"), ix.axis(W.shape[2], "ky"), ix.axis(W.shape[3], "kx")
    return ix.tensor((X.shape[0], W.shape[0], X.shape[2] - W.shape[2] + 1, X.shape[3] - W.shape[3] + 1),
                     lambda n, f, y, x: ix.sum(X[n, c, y + ky, x + kx] * W[f, c, ky, kx], c, ky, kx))


N = Dim("N")


@relay
def decorated_mine_mm(a: Tensor[Float, (N, 800)], b: Tensor[Float, (800, 500)]):
    return relay.bench_ix_matmul(a, b)


@relay
def decorated_builtin_mm(a: Tensor[Float, (N, 800)], b: Tensor[Float, (800, 500)]):
    return relay.matmul(a, b)


@relay
def decorated_mine_conv1(x: Tensor[Float, (N, 1, 28, 28)], w: Tensor[Float, (20, 1, 5, 5)]):
    return relay.bench_ix_conv2d(x, w)


@relay
def decorated_builtin_conv1(x: Tensor[Float, (N, 1, 28, 28)], w: Tensor[Float, (20, 1, 5, 5)]):
    return relay.conv2d(x, w)


@relay
def decorated_mine_conv2(x: Tensor[Float, (N, 20, 12, 12)], w: Tensor[Float, (50, 20, 5, 5)]):
    return relay.bench_ix_conv2d(x, w)


@relay
def decorated_builtin_conv2(x: Tensor[Float, (N, 20, 12, 12)], w: Tensor[Float, (50, 20, 5, 5)]):
    return relay.conv2d(x, w)


DECORATED = [decorated_mine_mm, decorated_builtin_mm, decorated_mine_conv1, decorated_builtin_conv1,
             decorated_mine_conv2, decorated_builtin_conv2]

ROWS = [  # (label, index operator, built-in operator, argument shapes, target ratio)
    ("matmul (16, 800) x (800, 500)", "bench_ix_matmul", "matmul", [(16, 800), (800, 500)], 3.0),
    ("conv2d (16, 1, 28, 28) * (20, 1, 5, 5)", "bench_ix_conv2d", "conv2d", [(16, 1, 28, 28), (20, 1, 5, 5)], 2.0),
    ("conv2d (16, 20, 12, 12) * (50, 20, 5, 5)", "bench_ix_conv2d", "conv2d", [(16, 20, 12, 12), (50, 20, 5, 5)], 2.0),
]


def best(fn: Callable[..., Any], args: list[np.ndarray], repeats: int) -> float:
    fn(*args)
    times = []
    for _ in range(repeats):
        start = time.perf_counter()
        for _ in range(20):
            fn(*args)
        times.append((time.perf_counter() - start) / 20)
    return min(times)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeats", type=int, default=5)
    repeats = parser.parse_args().repeats
    rng = np.random.default_rng(0)
    print("| operator | index expression | built-in | ratio | target |\n|---|---|---|---|---|")
    rows = []
    for (label, mine, builtin, shapes, target), forms in zip(ROWS, zip(DECORATED[::2], DECORATED[1::2])):
        args = [rng.standard_normal(s).astype(np.float32) for s in shapes]
        rows.append((label, args, target, forms))
        types = [f"Tensor(FloatType(32), Shape({', '.join(map(str, s))}))" for s in shapes]
        params = ", ".join(f"%a{k}: {t}" for k, t in enumerate(types))
        module = relayish.parse(f"def @mine({params}) {{ @{mine}(%a0, %a1) }}\n"
                                f"def @builtin({params}) {{ @{builtin}(%a0, %a1) }}")
        ours, theirs = (relayish.compile(module, name, tiered=False) for name in ("mine", "builtin"))
        compare(label, ours, theirs, args, target, repeats)
    print("\n# the form users write: @relay, a Dim batch, the default backend\n"
          "| operator | index expression | built-in | ratio | target |\n|---|---|---|---|---|")
    for label, args, target, (ours, theirs) in rows:
        for _ in range(5):  # the first calls may run on the evaluator while the kernels compile
            ours(*args), theirs(*args)
        compare(label, ours, theirs, args, target, repeats)


def compare(label: str, ours: Callable[..., Any], theirs: Callable[..., Any], args: list[np.ndarray], target: float,
            repeats: int) -> None:
    """Check that the two agree, then print one row of times and their ratio."""
    np.testing.assert_allclose(ours(*args), theirs(*args), rtol=1e-4, atol=1e-4)
    a, b = best(ours, args, repeats), best(theirs, args, repeats)
    print(f"| {label} | {a * 1e6:.0f} us | {b * 1e6:.0f} us | {a / b:.1f}x | {target:.0f}x |")


if __name__ == "__main__":
    main()
