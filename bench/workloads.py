"""The benchmark workloads W1-W8 of docs/workloads.md, side by side: hand-written NumPy,
relayish's reference evaluator, relayish's JIT on static text programs, decorated Python
through ``@relay``, Numba (W6), and JAX / PyTorch when installed.

Run:  python3 bench/workloads.py [--only W1,W2.vg,W7] [--impl numpy,relayish-jit] [--quick] [--rounds R]
                                  [--json PATH] [--timeout S] [--mem-limit GB] [--jit-cache DIR]

It prints the machine facts, then one Markdown table: a row per workload (W1.fwd, W1.vg,
W2.vg, W2.pex, W3.vg, W4.vg, W5.gradgrad, W5.hvp, W6.fib, W6.loop, W8.step, W7.cold, W7.warm,
W7.import), a column per implementation with the median time per call and, in parentheses,
the min (in the same unit), then the ratios and first calls:

* ``jit/best``: relayish-jit's median over the best median of the non-relayish columns
  (numpy, numba, jax, jax-scan, torch);
* ``relay/text`` and ``relay/best`` (when the relayish-relay column is shown): relayish-relay's
  median over relayish-jit's, which is what writing the decorated Python instead of the text
  costs, and over the same best non-relayish median;
* ``jit 1st / 2nd call``: ``relayish.compile`` plus the first call (type checking, Grad
  expansion, optimization, lowering; a straight-line program's first call then runs on the
  evaluator, jit/tiers.py, others compile their kernels), then the second call alone (where the
  first ran on the evaluator: kernel compilation); ``relay 1st / 2nd call``: the same for the
  decorated function (translation first; W8: the demo's first and second training steps).

A cell ends with ✓ when every output (value and each gradient) is within
``err = max|out - ref| / max|ref| <= 1e-4`` of the float64 reference, checked on the first
call's outputs and on the last timed call's (W8: the first call's, and relayish's first call
again after timing, on a fresh model: see below);
otherwise it shows FAIL and the error. A cell whose implementation raised, crashed or timed
out shows ERROR / TIMEOUT and the start of the message; the full messages are listed under
the table. ``--json PATH`` writes every measurement (all repeat times, first call, errors
per output, messages). The references must reproduce docs/workloads.md's reference table
(parsed from the file: ``spec_reference``); the header warns where they do not.

Implementations (columns):

* ``numpy``: NumPy forward and hand-derived backward in float32 (im2col convolutions,
  backpropagation through time for W4); for W5 the closed forms (a lower bound, not AD);
  for W6 plain Python recursion and loop over Python floats (float64, marked †); for W8
  W3's derivation on LeNet's parameter layouts, then the SGD update in place.
* ``relayish-interp``: ``relayish.evaluate(module, name, *args)`` on the programs of
  ``bench/programs.py`` (no W8).
* ``relayish-jit``: ``f = relayish.compile(module, name)`` once, then ``f(*args)``, on the same
  static text programs (no W8). The kernel cache (``RELAYISH_CACHE_DIR``) is a fresh empty
  directory per measurement unless ``--jit-cache DIR`` names one, so the first call includes
  compiling every kernel.
* ``relayish-relay``: the form users write: the decorated functions of ``bench/decorated.py``
  (a fresh copy of the file per cell, so nothing is translated before the first call),
  called with the arguments relayish-jit gets (converted before timing), on ``@relay``'s
  default backend, the JIT (worker processes run without ``RELAYISH_BACKEND``, so a setting
  in the caller's environment does not change the column); the kernel cache as for
  relayish-jit. W8 is the demo's own code path (``relayish/examples/lenet.py``):
  ``model = relay.create_model(lenet, seed=0)`` before timing, as the demo creates it before
  its first step, then per call ``g = relay.grad(model, loss, (x, y))`` and
  ``relay.update_model_params(model, g, 0.1)``.
* ``numba`` (W6 only): a hand-written ``@numba.njit`` recursive fib and loop, float32.
* ``jax`` / ``jax-scan`` / ``torch``, when importable: ``jax.jit`` of the loss or of
  ``jax.value_and_grad`` with ``block_until_ready`` (W4: the Python loop unrolled in jit;
  ``jax-scan``: ``lax.scan``; W5 hvp forward-over-reverse; W6 fib host recursion over 0-d
  arrays, W6 loop ``lax.fori_loop`` in jit; W8 one jitted function doing value_and_grad and
  the update, returning the new parameters); PyTorch eager, ``torch.no_grad()`` for forward
  rows, ``torch.autograd.grad`` for gradients (reverse-over-reverse for W5; W8 then the
  update in place under ``torch.no_grad()``).
* ``torch-compile`` (W7.cold and W7.warm only, docs/workloads.md's two ``torch.compile``
  rows): the W2 loss under ``torch.compile`` (inductor, C++ on the CPU), gradients by
  ``torch.autograd.grad``; cold with an empty inductor cache (``TORCHINDUCTOR_CACHE_DIR``)
  on every run, warm with the cache an earlier run filled.

Timing protocol (docs/workloads.md, W1-W6 and W8): inputs are converted and marked before
timing; the first call is timed alone; warm-up runs at least 2 more calls and 0.2 s (cheap
functions stop after 30 calls and 0.05 s); ``number`` is chosen so that one repeat of
``number`` back-to-back calls takes at least 50 ms; 9 repeats; time per call = repeat time /
number; median and min. A W8 call is one training step: the parameters change with every
call (successive calls train), so only the first call's outputs, the loss at the initial
parameters and the parameters after exactly one step, can be checked (relayish-relay's first
step runs on the evaluator tier, so after timing a fresh model takes one step on the compiled
kernels, checked the same way); the JSON keeps the
loss the last timed call returned (``last_loss``). Each (implementation, workload) cell runs
in a fresh process of its own (``--worker``), with default thread settings, so no cell's
imports, threads or compiled kernels affect another's; a process past ``--timeout`` seconds
or ``--mem-limit`` GB of resident memory is killed and its cell says so. ``--rounds R`` runs every
W1-W6 and W8 cell R times, in rounds over all cells (every other round backwards), and reports the
median of its rounds' medians and the least min: on a shared machine a busy spell then falls on
one round of each cell instead of on a whole column (``interleaved``, ``combine_rounds``). W7 times fresh
``python3 -c`` processes (one untimed run, then 3 timed; median and min): ``W7.cold`` with an
empty relayish cache directory on every run, ``W7.warm`` with the directory an earlier run
filled (the same program for the implementations that keep no disk cache), ``W7.import`` the
import alone; with Python's default bytecode caching even where the environment sets
``PYTHONDONTWRITEBYTECODE`` (the untimed run writes what a source checkout lacks, as pip does
when it installs a package).

``--quick`` (for tests and smoke runs; its figures are not the protocol's): warm-up of 1
call, 10 ms repeats, 3 repeats, 1 timed W7 run.
"""

from __future__ import annotations

import argparse
import functools
import importlib.util
import inspect
import json
import math
import os
import platform
import re
import shutil
import statistics
import subprocess
import sys
import tempfile
import textwrap
import time
import traceback
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np

BENCH = Path(__file__).resolve().parent
REPO = BENCH.parent
if str(REPO) not in sys.path:
    sys.path.insert(0, str(REPO))


def load_programs() -> Any:
    """``bench/programs.py`` as a module (bench/ is not a package)."""
    name = "relayish_bench_programs"
    if name not in sys.modules:
        spec = importlib.util.spec_from_file_location(name, BENCH / "programs.py")
        module = importlib.util.module_from_spec(spec)
        sys.modules[name] = module
        spec.loader.exec_module(module)
    return sys.modules[name]


ROWS = ("W1.fwd", "W1.vg", "W2.vg", "W2.pex", "W3.vg", "W4.vg", "W5.gradgrad", "W5.hvp", "W6.fib", "W6.loop", "W8.step",
        "W7.cold", "W7.warm", "W7.import")
TIMED_ROWS = tuple(r for r in ROWS if not r.startswith("W7"))  # the in-process timing protocol
W7_ROWS = tuple(r for r in ROWS if r.startswith("W7"))
IMPLS = ("numpy", "relayish-interp", "relayish-jit", "relayish-relay", "numba", "jax", "jax-scan", "torch",
         "torch-compile")
RELAYISH = ("relayish-interp", "relayish-jit", "relayish-relay")
OPTIONAL = {"jax": "jax", "jax-scan": "jax", "torch": "torch", "torch-compile": "torch"}  # implementation -> module it needs
TOLERANCE = 1e-4

# LeNet's parameters (W8) as relay.create_model(lenet) names and shapes them, in layer order:
# conv weights OIHW, conv biases (F, 1, 1), linear weights (out, in) as relay.linear stores them.
LENET_PARAMS = {"conv1_weight": (20, 1, 5, 5), "conv1_bias": (20, 1, 1), "conv2_weight": (50, 20, 5, 5),
                "conv2_bias": (50, 1, 1), "fc1_weight": (500, 800), "fc1_bias": (500,),
                "linear4_weight": (10, 500), "linear4_bias": (10,)}
W8_LR = 0.1

# The outputs of each row, in the order every implementation returns them (W8: the loss at the
# initial parameters, then every parameter after one step).
OUTPUTS = {
    "W1.fwd": ("L",),
    "W1.vg": ("L", "dL/dw", "dL/db"),
    "W2.vg": ("L", "dW1", "db1", "dW2", "db2"),
    "W2.pex": ("L_n", "dW1_n", "db1_n", "dW2_n", "db2_n"),  # per example n: each with the batch in front
    "W3.vg": ("L", "dK1", "dc1", "dK2", "dc2", "dW3", "db3", "dW4", "db4"),
    "W4.vg": ("L", "dWx", "dWh", "db"),
    "W5.gradgrad": ("gradgrad",),
    "W5.hvp": ("hvp",),
    "W6.fib": ("fib(20)",),
    "W6.loop": ("x_10000",),
    "W8.step": ("L", *LENET_PARAMS),
}
CHECK_FIRST_ONLY = ("W8.step",)  # the state changes with every call: only the first call's outputs are known

WORKLOADS_MD = REPO / "docs" / "workloads.md"
SPEC_DIGITS = 1e-6  # the table's values carry 8 to 10 significant digits
SPEC_STATS = {"‖·‖₂": "norm", "Σ": "sum"}
REMARK = re.compile(r"\s+\([^()]*\)$")  # "gradgrad (= 6x)", "0.9999774133 (float64)"
STAT_SEPARATOR = re.compile(r"\s*,\s*(?=(?:‖·‖₂|Σ)\s*=)")  # "‖·‖₂ = 1895.1607, Σ = 546.37682"

# -------------------------------------------------------------------------------------------
# Inputs (exact: PCG64, drawn in the order docs/workloads.md lists them)


def normal(rng, shape, scale=1.0):
    return (rng.standard_normal(shape) * scale).astype(np.float32)


def one_hot(labels, k):
    return np.eye(k, dtype=np.float32)[labels]


def w1_inputs():
    rng = np.random.default_rng(1)
    n = 1_000_000
    x = normal(rng, n)
    w = normal(rng, n)
    b = normal(rng, n)
    return {"x": x, "w": w, "b": b}


def w2_inputs():
    rng = np.random.default_rng(2)
    X = normal(rng, (64, 784))
    labels = rng.integers(0, 10, size=64)
    Y = one_hot(labels, 10)
    W1 = normal(rng, (784, 256), 1 / np.sqrt(784))
    b1 = normal(rng, (256,), 0.1)
    W2 = normal(rng, (256, 10), 1 / np.sqrt(256))
    b2 = normal(rng, (10,), 0.1)
    return {"X": X, "Y": Y, "W1": W1, "b1": b1, "W2": W2, "b2": b2}


def w3_inputs():
    rng = np.random.default_rng(3)
    X = normal(rng, (16, 1, 28, 28))
    labels = rng.integers(0, 10, size=16)
    Y = one_hot(labels, 10)
    K1 = normal(rng, (20, 1, 5, 5), 1 / np.sqrt(25))
    c1 = normal(rng, (20,), 0.1)
    K2 = normal(rng, (50, 20, 5, 5), 1 / np.sqrt(500))
    c2 = normal(rng, (50,), 0.1)
    W3 = normal(rng, (800, 500), 1 / np.sqrt(800))
    b3 = normal(rng, (500,), 0.1)
    W4 = normal(rng, (500, 10), 1 / np.sqrt(500))
    b4 = normal(rng, (10,), 0.1)
    return {"X": X, "Y": Y, "K1": K1, "c1": c1, "K2": K2, "c2": c2, "W3": W3, "b3": b3, "W4": W4, "b4": b4}


def w4_inputs():
    rng = np.random.default_rng(4)
    xs = normal(rng, (50, 32, 64))
    Wx = normal(rng, (64, 128), 1 / np.sqrt(64))
    Wh = normal(rng, (128, 128), 1 / np.sqrt(128))
    b = normal(rng, (128,), 0.1)
    h0 = np.zeros((32, 128), np.float32)
    return {"xs": xs, "h0": h0, "Wx": Wx, "Wh": Wh, "b": b}


def w5_inputs():
    rng = np.random.default_rng(5)
    n = 100_000
    x = normal(rng, n)
    v = normal(rng, n)
    return {"x": x, "v": v}


def w6_inputs():
    return {"n": 20, "a": 0.0, "b": 1.0, "x0": 0.5, "steps": 10_000}


def w8_inputs():
    rng = np.random.default_rng(8)
    x = normal(rng, (32, 1, 28, 28))
    labels = rng.integers(0, 10, size=32)
    Y = one_hot(labels, 10)
    return {"x": x, "Y": Y, **lenet_initial_params()}


def lenet_initial_params() -> dict[str, np.ndarray]:
    """W8's initial parameters, by definition the demo's: ``relay.create_model(lenet, seed=0)``.
    Raises if the demo's model no longer has the parameters docs/workloads.md defines."""
    from relayish import relay
    from relayish.examples.lenet import lenet

    params = dict(relay.create_model(lenet, seed=0).params)
    found = {name: p.shape for name, p in params.items()}
    if list(found.items()) != list(LENET_PARAMS.items()) or any(p.dtype != np.float32 for p in params.values()):
        raise RuntimeError(f"relayish/examples/lenet.py's model has the parameters {found}, W8 defines {LENET_PARAMS} "
                           "(float32)")
    return params


INPUTS = {"W1": w1_inputs, "W2": w2_inputs, "W3": w3_inputs, "W4": w4_inputs, "W5": w5_inputs, "W6": w6_inputs,
          "W8": w8_inputs}


def inputs(row: str) -> dict[str, Any]:
    """The workload's inputs by name, in draw order (W6: Python numbers; W8: the data, then
    LeNet's initial parameters)."""
    return INPUTS[row.split(".")[0]]()


# -------------------------------------------------------------------------------------------
# Hand-written NumPy (the `numpy` column). Dtype-generic: float32 inputs give float32 all
# the way; the float64 references are the same derivations on float64 copies of the inputs,
# validated against docs/workloads.md's reference table (spec_reference).


def np_w1_fwd(x, w, b):
    t = np.tanh(x * w + b)
    return np.sum(t * t)


def np_w1_vg(x, w, b):
    t = np.tanh(x * w + b)
    db = 2 * t * (1 - t * t)
    return np.sum(t * t), x * db, db


def np_sce_rows(Z, Y):
    """The softmax cross-entropy of each row and its gradient in the row."""
    m = Z.max(axis=1, keepdims=True)
    e = np.exp(Z - m)
    s = e.sum(axis=1, keepdims=True)
    lse = m[:, 0] + np.log(s[:, 0])
    return lse - np.sum(Y * Z, axis=1), e / s - Y


def np_sce(Z, Y):
    """Mean softmax cross-entropy over the rows and its gradient in Z."""
    rows, dZ = np_sce_rows(Z, Y)
    n = Z.shape[0]
    return np.sum(rows) / n, dZ / n


def np_w2_vg(X, Y, W1, b1, W2, b2):
    H = np.tanh(X @ W1 + b1)
    Z = H @ W2 + b2
    L, dZ = np_sce(Z, Y)
    dW2 = H.T @ dZ
    db2 = dZ.sum(axis=0)
    dA = (dZ @ W2.T) * (1 - H * H)
    dW1 = X.T @ dA
    db1 = dA.sum(axis=0)
    return L, dW1, db1, dW2, db2


def np_w2_pex(X, Y, W1, b1, W2, b2):
    """Per example n: the loss of example n alone and its gradients (outer products per example)."""
    H = np.tanh(X @ W1 + b1)
    L, dZ = np_sce_rows(H @ W2 + b2, Y)
    dA = (dZ @ W2.T) * (1 - H * H)
    return L, X[:, :, None] * dA[:, None, :], dA, H[:, :, None] * dZ[:, None, :], dZ


def np_conv(A, K, c):
    """Valid stride-1 cross-correlation (NCHW, OIHW) plus bias, by im2col; also the columns."""
    N, C, H, W = A.shape
    O, _, kh, kw = K.shape
    OH, OW = H - kh + 1, W - kw + 1
    cols = np.lib.stride_tricks.sliding_window_view(A, (kh, kw), axis=(2, 3))  # N, C, OH, OW, kh, kw
    cols = cols.transpose(0, 2, 3, 1, 4, 5).reshape(N * OH * OW, C * kh * kw)
    out = (cols @ K.reshape(O, -1).T).reshape(N, OH, OW, O).transpose(0, 3, 1, 2) + c[:, None, None]
    return out, cols


def np_conv_backward(dY, cols, A_shape, K, need_input=True):
    """Gradients of np_conv in K, c and (when asked) A."""
    N, O, OH, OW = dY.shape
    _, C, kh, kw = K.shape
    dYm = dY.transpose(0, 2, 3, 1).reshape(-1, O)
    dK = (dYm.T @ cols).reshape(K.shape)
    dc = dY.sum(axis=(0, 2, 3))
    if not need_input:
        return dK, dc, None
    dcols = (dYm @ K.reshape(O, -1)).reshape(N, OH, OW, C, kh, kw)
    dA = np.zeros(A_shape, dY.dtype)
    for p in range(kh):
        for q in range(kw):
            dA[:, :, p:p + OH, q:q + OW] += dcols[:, :, :, :, p, q].transpose(0, 3, 1, 2)
    return dK, dc, dA


def np_pool(A):
    """2x2 stride-2 max pooling and the position (row-major in the window) of each maximum."""
    N, C, H, W = A.shape
    win = A.reshape(N, C, H // 2, 2, W // 2, 2).transpose(0, 1, 2, 4, 3, 5).reshape(N, C, H // 2, W // 2, 4)
    idx = win.argmax(axis=-1)
    return np.take_along_axis(win, idx[..., None], axis=-1)[..., 0], idx


def np_pool_backward(dP, idx, shape):
    N, C, H, W = shape
    dwin = np.zeros((N, C, H // 2, W // 2, 4), dP.dtype)
    np.put_along_axis(dwin, idx[..., None], dP[..., None], axis=-1)
    return dwin.reshape(N, C, H // 2, W // 2, 2, 2).transpose(0, 1, 2, 4, 3, 5).reshape(N, C, H, W)


def np_w3_vg(X, Y, K1, c1, K2, c2, W3, b3, W4, b4):
    C1, cols1 = np_conv(X, K1, c1)
    T1 = np.tanh(C1)
    A1, i1 = np_pool(T1)
    C2, cols2 = np_conv(A1, K2, c2)
    T2 = np.tanh(C2)
    A2, i2 = np_pool(T2)
    F = A2.reshape(A2.shape[0], -1)
    H = np.tanh(F @ W3 + b3)
    Z = H @ W4 + b4
    L, dZ = np_sce(Z, Y)
    dW4 = H.T @ dZ
    db4 = dZ.sum(axis=0)
    dHa = (dZ @ W4.T) * (1 - H * H)
    dW3 = F.T @ dHa
    db3 = dHa.sum(axis=0)
    dA2 = (dHa @ W3.T).reshape(A2.shape)
    dC2 = np_pool_backward(dA2, i2, T2.shape) * (1 - T2 * T2)
    dK2, dc2, dA1 = np_conv_backward(dC2, cols2, A1.shape, K2)
    dC1 = np_pool_backward(dA1, i1, T1.shape) * (1 - T1 * T1)
    dK1, dc1, _ = np_conv_backward(dC1, cols1, X.shape, K1, need_input=False)
    return L, dK1, dc1, dK2, dc2, dW3, db3, dW4, db4


def np_w8_vg(x, Y, K1, c1, K2, c2, W3, b3, W4, b4):
    """LeNet's loss and its gradients in the parameters' own layouts (conv biases (F, 1, 1),
    linear weights (out, in)): W3's derivation on views of them (flat biases, (in, out) weights)."""
    L, dK1, dc1, dK2, dc2, dW3, db3, dW4, db4 = np_w3_vg(x, Y, K1, c1.reshape(-1), K2, c2.reshape(-1), W3.T, b3,
                                                         W4.T, b4)
    return L, (dK1, dc1.reshape(c1.shape), dK2, dc2.reshape(c2.shape), dW3.T, db3, dW4.T, db4)


def np_w8_step(x, Y, *params):
    """One W8 training step without mutation: the loss and the parameters after ``p - lr * g``."""
    L, grads = np_w8_vg(x, Y, *params)
    return L, tuple(p - W8_LR * g for p, g in zip(params, grads))


def np_w4_vg(xs, h0, Wx, Wh, b):
    hs = [h0]
    for t in range(xs.shape[0]):
        hs.append(np.tanh(xs[t] @ Wx + hs[-1] @ Wh + b))
    h = hs[-1]
    L = np.sum(h * h)
    dh = 2 * h
    dWx, dWh, db = np.zeros_like(Wx), np.zeros_like(Wh), np.zeros_like(b)
    for t in range(xs.shape[0] - 1, -1, -1):
        da = dh * (1 - hs[t + 1] * hs[t + 1])
        dWx += xs[t].T @ da
        dWh += hs[t].T @ da
        db += da.sum(axis=0)
        dh = da @ Wh.T
    return L, dWx, dWh, db


def np_w5_gradgrad(x):
    return 6 * x


def np_w5_hvp(x, v):
    return (2 * np.cos(x) - x * np.sin(x)) * v


def py_fib(n, a, b):
    if n == 0:
        return a
    if n == 1:
        return b
    return py_fib(n - 1, a, b) + py_fib(n - 2, a, b)


def py_loop(x0, steps):
    x = x0
    for _ in range(steps):
        x = x * 0.999 + 0.001
    return x


# the hand-written NumPy of each row that has one function (W6's are Python loops)
NUMPY_ROWS = {"W1.fwd": np_w1_fwd, "W1.vg": np_w1_vg, "W2.vg": np_w2_vg, "W2.pex": np_w2_pex, "W3.vg": np_w3_vg,
              "W4.vg": np_w4_vg, "W5.gradgrad": np_w5_gradgrad, "W5.hvp": np_w5_hvp, "W8.step": np_w8_step}


def reference(row: str) -> list[np.ndarray]:
    """The float64 evaluation of the float32 inputs, one array per output of the row."""
    inp = inputs(row)
    if row == "W6.fib":
        return [np.asarray(6765.0)]
    if row == "W6.loop":
        return [np.asarray(py_loop(0.5, 10_000))]  # Python floats: float64
    f64 = [np.asarray(a, np.float64) for a in inp.values()]
    fn = NUMPY_ROWS[row]
    if row == "W5.gradgrad":
        f64 = f64[:1]
    return flatten(fn(*f64))


STATISTICS: dict[str, Callable[[np.ndarray], float]] = {
    "value": lambda a: float(a), "norm": lambda a: float(np.linalg.norm(a)), "sum": lambda a: float(np.sum(a))}


@functools.cache
def spec_reference(path: Path = WORKLOADS_MD) -> dict[str, tuple[tuple[str, str, float], ...]]:
    """docs/workloads.md's reference table, per row: (output, statistic, value) triples, read
    from the file so that the table users see is the one checked. A table line names a
    workload (W1), its outputs (``∂L/∂w, ∂L/∂b``, read as OUTPUTS' ``dL/dw``...; a trailing
    parenthesis is a remark) and either one value or ``‖·‖₂ = a, b; Σ = c, d`` (norms, sums:
    one per output; a comma may stand for the semicolon); it applies to every row of the
    workload with those outputs (W1's L to W1.fwd and W1.vg). Raises ValueError on a line it
    cannot read."""
    text = path.read_text(encoding="utf-8")
    section = text.split("## Reference values", 1)[1]
    lines = [line for line in section.splitlines() if line.startswith("|")][2:]  # header, rule
    found: dict[str, list[tuple[str, str, float]]] = {}

    def fail(line: str, why: str) -> ValueError:
        return ValueError(f"{path.name}: cannot read the reference line {line!r}: {why}")

    for line in lines:
        cells = [c.strip() for c in line.strip().strip("|").split("|")]
        if len(cells) != 3:
            raise fail(line, "expected 3 cells")
        workload, names, values = cells
        names = [n.strip().replace("∂", "d") for n in REMARK.sub("", names).split(",")]
        values = REMARK.sub("", values)
        if "=" in values:
            stats = []
            for part in STAT_SEPARATOR.sub(";", values).split(";"):
                symbol, numbers = (x.strip() for x in part.split("=", 1))
                if symbol not in SPEC_STATS or len(numbers.split(",")) != len(names):
                    raise fail(line, f"{part.strip()!r} is not a statistic with a value per output")
                stats += [(name, SPEC_STATS[symbol], float(v)) for name, v in zip(names, numbers.split(","))]
        elif len(names) == 1:
            stats = [(names[0], "value", float(values))]
        else:
            raise fail(line, "one value for several outputs")
        for name, stat, value in stats:
            rows = [r for r in TIMED_ROWS if r.split(".")[0] == workload and name in OUTPUTS[r]]
            if not rows:
                raise fail(line, f"{workload} has no output {name}")
            for row in rows:
                found.setdefault(row, []).append((name, stat, value))
    return {row: tuple(entries) for row, entries in found.items()}


def spec_mismatches(row: str, refs: list[np.ndarray] | None = None) -> list[str]:
    """Where this harness's float64 references differ from docs/workloads.md's table."""
    refs = reference(row) if refs is None else refs
    found = []
    for output, stat, expected in spec_reference().get(row, ()):
        got = STATISTICS[stat](refs[OUTPUTS[row].index(output)])
        if abs(got - expected) > SPEC_DIGITS * abs(expected):
            found.append(f"{row} {output} {stat}: {got:.10g}, docs/workloads.md says {expected:.10g}")
    return found


# -------------------------------------------------------------------------------------------
# Implementations: each gives, for a row and its inputs, a Prepared (everything converted
# before timing).


class Unsupported(Exception):
    """The implementation has no version of this row."""


@dataclass
class Prepared:
    first: Callable[[], Any]  # the first invocation (compiles, where there is compiling)
    call: Callable[[], Any]  # every later invocation
    # the first invocation again from a fresh state, run after the timed calls: a row checked on its
    # first outputs only (W8) is then checked on compiled kernels too, where the first call ran on
    # relayish's evaluator tier (jit/tiers.py)
    again: Callable[[], Any] | None = None
    outputs: Callable[[Any], list[np.ndarray]] = None  # framework results -> NumPy arrays
    python_floats: bool = False  # W6 in plain Python: float64 by the spec's exception
    info: dict = field(default_factory=dict)  # extra facts for the JSON (compile seconds, ...)


def flatten(value: Any) -> list[np.ndarray]:
    if isinstance(value, (tuple, list)):
        return [a for v in value for a in flatten(v)]
    return [np.asarray(value)]


def simple(fn: Callable[[], Any], outputs: Callable[[Any], list[np.ndarray]] = flatten, **kw: Any) -> Prepared:
    return Prepared(first=fn, call=fn, outputs=outputs, **kw)


def numpy_impl(row: str, inp: dict) -> Prepared:
    a = list(inp.values())
    if row == "W6.fib":
        return simple(lambda: py_fib(inp["n"], float(inp["a"]), float(inp["b"])), python_floats=True)
    if row == "W6.loop":
        return simple(lambda: py_loop(float(inp["x0"]), inp["steps"]), python_floats=True)
    if row == "W8.step":
        x, Y = inp["x"], inp["Y"]
        params = [inp[name].copy() for name in LENET_PARAMS]

        def step():
            L, grads = np_w8_vg(x, Y, *params)
            for p, g in zip(params, grads):
                p -= W8_LR * g
            return L
        return Prepared(first=lambda: (step(), [p.copy() for p in params]), call=step, outputs=flatten)
    fn = NUMPY_ROWS[row]
    if row == "W5.gradgrad":
        a = a[:1]
    return simple(lambda: fn(*a))


def relayish_args(row: str, inp: dict) -> tuple[str, list]:
    programs = load_programs()
    name, params = programs.ENTRIES[row]
    if row.startswith("W6"):
        dtypes = {"n": np.int32, "steps": np.int32}
        return name, [np.asarray(inp[p], dtypes.get(p, np.float32)) for p in params]
    return name, [inp[p] for p in params]


def relayish_interp_impl(row: str, inp: dict) -> Prepared:
    import relayish

    module = load_programs().module()
    name, args = relayish_args(row, inp)
    return simple(lambda: relayish.evaluate(module, name, *args))


def relayish_jit_impl(row: str, inp: dict) -> Prepared:
    import relayish

    module = load_programs().module()
    name, args = relayish_args(row, inp)
    info: dict = {}
    state: dict = {}

    def first():
        start = time.perf_counter()
        state["f"] = relayish.compile(module, name)
        info["compile_object_s"] = time.perf_counter() - start  # relayish.compile() alone
        return state["f"](*args)

    def call():
        return state["f"](*args)

    return Prepared(first=first, call=call, outputs=flatten, info=info)


def load_decorated() -> Any:
    """A fresh copy of ``bench/decorated.py``: its functions not yet translated, so that a cell's
    first call includes the translation (one copy per cell, never shared through sys.modules)."""
    spec = importlib.util.spec_from_file_location("relayish_bench_decorated", BENCH / "decorated.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def relayish_relay_impl(row: str, inp: dict) -> Prepared:
    if row == "W8.step":
        from relayish import relay
        from relayish.examples.lenet import lenet, loss

        x, y = inp["x"], inp["Y"]

        def step(model: Any) -> Any:
            g = relay.grad(model, loss, (x, y))
            relay.update_model_params(model, g, W8_LR)  # in place, as the other columns update
            return g.value

        def first(model: Any) -> tuple:
            return step(model), [p.copy() for p in model.params.values()]
        model = relay.create_model(lenet, seed=0)
        return Prepared(first=lambda: first(model), call=lambda: step(model), outputs=flatten,
                        again=lambda: first(relay.create_model(lenet, seed=0)), info={"backend": loss.backend})
    fn = load_decorated().ENTRIES[row]
    _, args = relayish_args(row, inp)
    return simple(lambda: fn(*args), info={"backend": fn.backend})


NUMBA_W6 = '''
@numba.njit
def fib(n, a, b):
    if n == 0:
        return a
    if n == 1:
        return b
    return fib(n - 1, a, b) + fib(n - 2, a, b)


@numba.njit
def loop(x0, steps):
    x = x0
    for _ in range(steps):
        x = x * np.float32(0.999) + np.float32(0.001)
    return x
'''


def numba_impl(row: str, inp: dict) -> Prepared:
    if row not in ("W6.fib", "W6.loop"):
        raise Unsupported(row)
    import numba

    namespace = {"numba": numba, "np": np}
    exec(NUMBA_W6, namespace)  # noqa: S102 - our own source; fib must be a global to recurse

    def outputs(out):  # Numba boxes its float32 result as a Python float (exactly)
        return [np.asarray(out, np.float32)]

    if row == "W6.fib":
        fib, n, a, b = namespace["fib"], int(inp["n"]), np.float32(inp["a"]), np.float32(inp["b"])
        return simple(lambda: fib(n, a, b), outputs)
    loop, x0, steps = namespace["loop"], np.float32(inp["x0"]), int(inp["steps"])
    return simple(lambda: loop(x0, steps), outputs)


def jax_impl(row: str, inp: dict, scan: bool = False) -> Prepared:
    import jax
    import jax.numpy as jnp
    from jax import lax

    if scan and row != "W4.vg":
        raise Unsupported(row)

    def block(out):
        if hasattr(jax, "block_until_ready"):
            return jax.block_until_ready(out)
        return jax.tree_util.tree_map(lambda a: a.block_until_ready(), out)

    def outputs(out):
        return [np.asarray(a) for a in jax.tree_util.tree_leaves(out)]

    def sce(Z, Y):
        return jnp.mean(jax.nn.logsumexp(Z, axis=1) - jnp.sum(Y * Z, axis=1))

    args = [jax.device_put(jnp.asarray(a)) for a in inp.values()] if not row.startswith("W6") else None

    def jitted(fn, *argnums):
        f = jax.jit(jax.value_and_grad(fn, argnums=argnums) if argnums else fn)
        return Prepared(first=lambda: block(f(*args)), call=lambda: block(f(*args)), outputs=outputs)

    def conv(A, K):  # valid, stride 1, no kernel flip
        return lax.conv_general_dilated(A, K, window_strides=(1, 1), padding="VALID",
                                        dimension_numbers=("NCHW", "OIHW", "NCHW"))

    def pool(A):
        N, C, H, W = A.shape
        return A.reshape(N, C, H // 2, 2, W // 2, 2).max(axis=(3, 5))

    if row in ("W1.fwd", "W1.vg"):
        def w1(x, w, b):
            t = jnp.tanh(x * w + b)
            return jnp.sum(t * t)
        return jitted(w1) if row == "W1.fwd" else jitted(w1, 1, 2)
    if row == "W2.vg":
        def w2(X, Y, W1, b1, W2, b2):
            H = jnp.tanh(X @ W1 + b1)
            return sce(H @ W2 + b2, Y)
        return jitted(w2, 2, 3, 4, 5)
    if row == "W2.pex":
        def w2_example(x, y, W1, b1, W2, b2):
            z = jnp.tanh(x @ W1 + b1) @ W2 + b2
            return jax.nn.logsumexp(z) - jnp.sum(y * z)
        pex = jax.jit(jax.vmap(jax.value_and_grad(w2_example, argnums=(2, 3, 4, 5)),
                               in_axes=(0, 0, None, None, None, None)))
        return Prepared(first=lambda: block(pex(*args)), call=lambda: block(pex(*args)), outputs=outputs)
    if row == "W3.vg":
        def w3(X, Y, K1, c1, K2, c2, W3, b3, W4, b4):
            A1 = pool(jnp.tanh(conv(X, K1) + c1[:, None, None]))
            A2 = pool(jnp.tanh(conv(A1, K2) + c2[:, None, None]))
            H = jnp.tanh(A2.reshape(A2.shape[0], -1) @ W3 + b3)
            return sce(H @ W4 + b4, Y)
        return jitted(w3, *range(2, 10))
    if row == "W8.step":
        def lenet_loss(params, x, Y):
            K1, c1, K2, c2, W3, b3, W4, b4 = params
            A1 = pool(jnp.tanh(conv(x, K1) + c1))
            A2 = pool(jnp.tanh(conv(A1, K2) + c2))
            H = jnp.tanh(A2.reshape(A2.shape[0], -1) @ W3.T + b3)
            return sce(H @ W4.T + b4, Y)

        def train_step(params, x, Y):
            L, grads = jax.value_and_grad(lenet_loss)(params, x, Y)
            return L, tuple(p - W8_LR * g for p, g in zip(params, grads))

        f = jax.jit(train_step)
        x, Y = args[:2]
        state = {"params": tuple(args[2:])}

        def step():
            L, state["params"] = block(f(state["params"], x, Y))
            return L, state["params"]
        return simple(step, outputs)
    if row == "W4.vg":
        def w4_loop(xs, h0, Wx, Wh, b):
            h = h0
            for t in range(xs.shape[0]):
                h = jnp.tanh(xs[t] @ Wx + h @ Wh + b)
            return jnp.sum(h * h)

        def w4_scan(xs, h0, Wx, Wh, b):
            def step(h, x):
                return jnp.tanh(x @ Wx + h @ Wh + b), None
            h, _ = lax.scan(step, h0, xs)
            return jnp.sum(h * h)
        return jitted(w4_scan if scan else w4_loop, 2, 3, 4)
    if row == "W5.gradgrad":
        def f(x):
            return jnp.sum(x * x * x)
        gg = jax.jit(jax.grad(lambda x: jnp.sum(jax.grad(f)(x))))
        x = args[0]
        return Prepared(first=lambda: block(gg(x)), call=lambda: block(gg(x)), outputs=outputs)
    if row == "W5.hvp":
        def f2(x):
            return jnp.sum(jnp.sin(x) * x)
        hvp = jax.jit(lambda x, v: jax.jvp(jax.grad(f2), (x,), (v,))[1])
        x, v = args
        return Prepared(first=lambda: block(hvp(x, v)), call=lambda: block(hvp(x, v)), outputs=outputs)
    if row == "W6.fib":
        a = jax.device_put(jnp.asarray(inp["a"], jnp.float32))
        b = jax.device_put(jnp.asarray(inp["b"], jnp.float32))
        n = int(inp["n"])

        def fib(k, a, b):  # the recursion on the host; additions on JAX 0-d arrays
            if k == 0:
                return a
            if k == 1:
                return b
            return fib(k - 1, a, b) + fib(k - 2, a, b)
        return simple(lambda: block(fib(n, a, b)), outputs)
    if row == "W6.loop":
        x0 = jax.device_put(jnp.asarray(inp["x0"], jnp.float32))
        steps = int(inp["steps"])
        loop = jax.jit(lambda x: lax.fori_loop(0, steps, lambda k, x: x * 0.999 + 0.001, x))
        return Prepared(first=lambda: block(loop(x0)), call=lambda: block(loop(x0)), outputs=outputs)
    raise Unsupported(row)


def jax_scan_impl(row: str, inp: dict) -> Prepared:
    return jax_impl(row, inp, scan=True)


def torch_impl(row: str, inp: dict) -> Prepared:
    import torch
    import torch.nn.functional as F

    def outputs(out):
        return [t.detach().cpu().numpy() if isinstance(t, torch.Tensor) else np.asarray(t) for t in flatten_t(out)]

    def flatten_t(value):
        if isinstance(value, (tuple, list)):
            return [a for v in value for a in flatten_t(v)]
        return [value]

    def sce(Z, Y):
        return (torch.logsumexp(Z, dim=1) - (Y * Z).sum(dim=1)).mean()

    if row.startswith("W6"):
        if row == "W6.fib":
            a = torch.tensor(inp["a"], dtype=torch.float32)
            b = torch.tensor(inp["b"], dtype=torch.float32)
            n = int(inp["n"])

            def fib(k, a, b):
                if k == 0:
                    return a
                if k == 1:
                    return b
                return fib(k - 1, a, b) + fib(k - 2, a, b)

            def run():
                with torch.no_grad():
                    return fib(n, a, b)
            return simple(run, outputs)
        x0 = torch.tensor(inp["x0"], dtype=torch.float32)
        steps = int(inp["steps"])

        def loop():
            with torch.no_grad():
                x = x0
                for _ in range(steps):
                    x = x * 0.999 + 0.001
                return x
        return simple(loop, outputs)

    t = {k: torch.from_numpy(np.ascontiguousarray(v)) for k, v in inp.items()}
    if row == "W8.step":
        x, Y = t["x"], t["Y"]
        lenet_params = [t[name].clone().requires_grad_(True) for name in LENET_PARAMS]

        def step():
            K1, c1, K2, c2, W3, b3, W4, b4 = lenet_params
            A1 = F.max_pool2d(torch.tanh(F.conv2d(x, K1, c1.view(-1))), 2)
            A2 = F.max_pool2d(torch.tanh(F.conv2d(A1, K2, c2.view(-1))), 2)
            H = torch.tanh(F.linear(A2.flatten(1), W3, b3))
            L = sce(F.linear(H, W4, b4), Y)
            grads = torch.autograd.grad(L, lenet_params)
            with torch.no_grad():
                for p, g in zip(lenet_params, grads):
                    p -= W8_LR * g
            return L.detach()
        return Prepared(first=lambda: (step(), [p.detach().clone() for p in lenet_params]), call=step,
                        outputs=outputs)

    if row == "W2.pex":
        from torch.func import grad_and_value, vmap

        def w2_example(x, y, W1, b1, W2, b2):
            z = torch.tanh(x @ W1 + b1) @ W2 + b2
            return torch.logsumexp(z, dim=0) - (y * z).sum()
        pex = vmap(grad_and_value(w2_example, argnums=(2, 3, 4, 5)), in_dims=(0, 0, None, None, None, None))
        plain = list(t.values())

        def per_example():
            grads, value = pex(*plain)
            return (value, *grads)
        return simple(per_example, outputs)

    names = list(inp)
    params = {"W1.fwd": (), "W1.vg": ("w", "b"), "W2.vg": ("W1", "b1", "W2", "b2"),
              "W3.vg": ("K1", "c1", "K2", "c2", "W3", "b3", "W4", "b4"), "W4.vg": ("Wx", "Wh", "b"),
              "W5.gradgrad": ("x",), "W5.hvp": ("x",)}[row]
    for k in params:
        t[k].requires_grad_(True)
    args = [t[k] for k in names]
    grads_of = [t[k] for k in params]

    def value_and_grad(loss_fn):
        def run():
            L = loss_fn(*args)
            grads = torch.autograd.grad(L, grads_of)
            return (L.detach(), *grads)
        return simple(run, outputs)

    if row == "W1.fwd":
        def fwd():
            with torch.no_grad():
                x, w, b = args
                u = torch.tanh(x * w + b)
                return (u * u).sum()
        return simple(fwd, outputs)
    if row == "W1.vg":
        def w1(x, w, b):
            u = torch.tanh(x * w + b)
            return (u * u).sum()
        return value_and_grad(w1)
    if row == "W2.vg":
        def w2(X, Y, W1, b1, W2, b2):
            H = torch.tanh(X @ W1 + b1)
            return sce(H @ W2 + b2, Y)
        return value_and_grad(w2)
    if row == "W3.vg":
        def w3(X, Y, K1, c1, K2, c2, W3, b3, W4, b4):
            A1 = F.max_pool2d(torch.tanh(F.conv2d(X, K1, c1)), 2)
            A2 = F.max_pool2d(torch.tanh(F.conv2d(A1, K2, c2)), 2)
            H = torch.tanh(A2.reshape(A2.shape[0], -1) @ W3 + b3)
            return sce(H @ W4 + b4, Y)
        return value_and_grad(w3)
    if row == "W4.vg":
        def w4(xs, h0, Wx, Wh, b):
            h = h0
            for step in range(xs.shape[0]):
                h = torch.tanh(xs[step] @ Wx + h @ Wh + b)
            return (h * h).sum()
        return value_and_grad(w4)
    if row == "W5.gradgrad":
        x = t["x"]

        def gradgrad():
            g, = torch.autograd.grad((x * x * x).sum(), x, create_graph=True)
            h, = torch.autograd.grad(g.sum(), x)
            return h
        return simple(gradgrad, outputs)
    if row == "W5.hvp":
        x, v = t["x"], t["v"]

        def hvp():
            g, = torch.autograd.grad((torch.sin(x) * x).sum(), x, create_graph=True)
            hv, = torch.autograd.grad((g * v).sum(), x)
            return hv
        return simple(hvp, outputs)
    raise Unsupported(row)


BUILDERS: dict[str, Callable[[str, dict], Prepared]] = {
    "numpy": numpy_impl,
    "relayish-interp": relayish_interp_impl,
    "relayish-jit": relayish_jit_impl,
    "relayish-relay": relayish_relay_impl,
    "numba": numba_impl,
    "jax": jax_impl,
    "jax-scan": jax_scan_impl,
    "torch": torch_impl,
}


def supported(impl: str, row: str) -> bool:
    if impl == "numba":
        return row in ("W6.fib", "W6.loop")
    if impl == "jax-scan":
        return row == "W4.vg"
    if impl == "torch-compile":
        return row in ("W7.cold", "W7.warm")
    if row == "W8.step":  # no static text program of the training step (interp would take long anyway)
        return impl in ("numpy", "relayish-relay", "jax", "torch")
    if impl == "relayish-relay":
        return row in TIMED_ROWS
    return True


def available(impl: str) -> bool:
    module = OPTIONAL.get(impl)
    return module is None or importlib.util.find_spec(module) is not None


# -------------------------------------------------------------------------------------------
# Correctness and timing


def check_outputs(row: str, outs: list[np.ndarray], refs: list[np.ndarray], python_floats: bool = False) -> dict:
    """``err`` per output (max|out - ref| / max|ref|), the worst, and whether it passes
    (every error <= 1e-4, right count and shapes, float32 unless plain-Python W6)."""
    names = OUTPUTS[row]
    problems = []
    if len(outs) != len(refs):
        return {"ok": False, "err": math.inf, "errs": {}, "dtypes": [],
                "problem": f"{len(outs)} outputs, expected {len(refs)} ({', '.join(names)})"}
    errs = {}
    dtypes = []
    for name, out, ref in zip(names, outs, refs):
        out = np.asarray(out)
        dtypes.append(out.dtype.name)
        if out.shape != ref.shape:
            problems.append(f"{name} has shape {out.shape}, expected {ref.shape}")
            errs[name] = math.inf
            continue
        if out.dtype != np.float32 and not python_floats:
            problems.append(f"{name} is {out.dtype.name}, expected float32")
        scale = float(np.max(np.abs(ref)))
        err = float(np.max(np.abs(out.astype(np.float64) - ref))) / scale
        errs[name] = err if math.isfinite(err) else math.inf
        if not errs[name] <= TOLERANCE:
            problems.append(f"{name}: err {errs[name]:.2e}")
    worst = max(errs.values(), default=0.0)
    return {"ok": not problems, "err": worst, "errs": errs, "dtypes": dtypes, "problem": "; ".join(problems)}


@dataclass
class Protocol:
    warmup_min_calls: int = 2
    warmup_min_s: float = 0.2
    cheap_min_calls: int = 30
    cheap_min_s: float = 0.05
    repeat_min_s: float = 0.05
    repeats: int = 9


DEFAULT = Protocol()
QUICK = Protocol(warmup_min_calls=1, warmup_min_s=0.0, cheap_min_calls=1, cheap_min_s=0.0,
                 repeat_min_s=0.01, repeats=3)


def repeat(call: Callable[[], Any], number: int) -> tuple[float, Any]:
    """``number`` back-to-back calls: (seconds, the last output)."""
    result = None
    start = time.perf_counter()
    for _ in range(number):
        result = call()
    return time.perf_counter() - start, result


def calibrate(call: Callable[[], Any], protocol: Protocol = DEFAULT) -> tuple[int, int, Any]:
    """After the first call: the warm-up, then ``number`` (calls per repeat) grown until one repeat
    lasts ``repeat_min_s``, those runs counting as more warm-up. Returns (number, calls made, the
    last output)."""
    perf = time.perf_counter
    # warm-up: >= 2 calls and >= 0.2 s, or (cheap) >= 30 calls and >= 0.05 s
    calls, start = 0, perf()
    while True:
        out = call()
        calls += 1
        elapsed = perf() - start
        if calls >= protocol.warmup_min_calls and elapsed >= protocol.warmup_min_s:
            break
        if calls >= protocol.cheap_min_calls and elapsed >= protocol.cheap_min_s:
            break
    per_call = elapsed / calls
    number = max(1, math.ceil(protocol.repeat_min_s / max(per_call, 1e-9)))
    while True:
        seconds, out = repeat(call, number)
        calls += number
        if seconds >= protocol.repeat_min_s:
            return number, calls, out
        number = max(number + 1, math.ceil(number * 1.2 * protocol.repeat_min_s / max(seconds, 1e-9)))


def time_calls(prep: Prepared, protocol: Protocol = DEFAULT) -> dict:
    """The timing protocol on a Prepared: first call, warm-up, ``number``, repeats. Returns
    the figures and the first and last outputs (framework values)."""
    first_s, first_out = repeat(prep.first, 1)
    second_s, _ = repeat(prep.call, 1)
    number, calls, out = calibrate(prep.call, protocol)
    times = []
    for _ in range(protocol.repeats):
        seconds, out = repeat(prep.call, number)
        times.append(seconds / number)
    return {"first_s": first_s, "second_s": second_s, "median_s": statistics.median(times), "min_s": min(times), "number": number,
            "repeats": len(times), "times_s": times, "warmup_calls": calls,
            "first_out": first_out, "last_out": out}


def run_cell(impl: str, row: str, quick: bool = False, timing: bool = True) -> dict:
    """Measure (or, with ``timing=False``, run once and check) one cell, in this process; the
    first call's outputs and the last timed call's are checked (W8: the first call's only).
    Never raises: a failure becomes ``status`` "error" with its message."""
    cell: dict = {"impl": impl, "row": row, "status": "error"}
    start = time.perf_counter()
    try:
        if not supported(impl, row):
            raise Unsupported(row)
        refs = reference(row)
        prep = BUILDERS[impl](row, inputs(row))
        if timing:
            figures = time_calls(prep, QUICK if quick else DEFAULT)
            outs = [figures.pop("first_out"), figures.pop("last_out")]
            cell.update(figures)
            if row in CHECK_FIRST_ONLY:  # the last call's outputs have no reference: keep its loss
                cell["last_loss"] = float(prep.outputs(outs.pop())[0])
                if prep.again is not None:
                    outs.append(prep.again())
        else:
            t0 = time.perf_counter()
            outs = [prep.first()]
            cell["first_s"] = time.perf_counter() - t0
        checks = [check_outputs(row, prep.outputs(o), refs, prep.python_floats) for o in outs]
        bad = [c for c in checks if not c["ok"]]
        worst = max(checks, key=lambda c: c["err"])
        cell.update(status="ok" if not bad else "fail", err=worst["err"], errs=worst["errs"],
                    dtypes=worst["dtypes"], python_floats=prep.python_floats, **prep.info)
        if bad:
            cell["message"] = bad[0]["problem"]
    except Unsupported:
        cell.update(status="n/a")
    except BaseException as err:  # a failing implementation is a cell, not a crash
        if isinstance(err, KeyboardInterrupt):
            raise
        cell.update(status="error", message=f"{type(err).__name__}: {err}",
                    traceback=traceback.format_exc(limit=-8))
    cell["wall_s"] = time.perf_counter() - start
    return cell


# -------------------------------------------------------------------------------------------
# W7: cold start of fresh processes

W7_W2_INPUTS = textwrap.dedent(inspect.getsource(normal)) + textwrap.dedent(inspect.getsource(one_hot)) + \
    textwrap.dedent(inspect.getsource(w2_inputs))


def w7_script(impl: str, row: str) -> str:
    """The ``python3 -c`` program of a W7 row for an implementation."""
    if row == "W7.import":
        return {"numpy": "import numpy", "relayish-interp": "import relayish", "relayish-jit": "import relayish",
                "jax": "import jax", "torch": "import torch"}[impl]
    head = "import numpy as np\n" + W7_W2_INPUTS + "inp = w2_inputs()\n"
    if impl == "numpy":
        sources = "".join(textwrap.dedent(inspect.getsource(fn)) for fn in (np_sce_rows, np_sce, np_w2_vg))
        return (head + sources
                + "L = np_w2_vg(*inp.values())[0]\nprint(repr(float(L)))\n")
    if impl in RELAYISH:
        text = load_programs().W2_TEXT
        run = "relayish.evaluate(module, 'w2_vg', *inp.values())" if impl == "relayish-interp" else \
            "relayish.compile(module, 'w2_vg')(*inp.values())"
        return ("import relayish\n" + head + f"module = relayish.parse({text!r})\n"
                f"L, grads = {run}\nprint(repr(float(L)))\n")
    if impl == "jax":
        return ("import jax\nimport jax.numpy as jnp\n" + head + textwrap.dedent("""
            def loss(X, Y, W1, b1, W2, b2):
                H = jnp.tanh(X @ W1 + b1)
                Z = H @ W2 + b2
                return jnp.mean(jax.nn.logsumexp(Z, axis=1) - jnp.sum(Y * Z, axis=1))
            f = jax.jit(jax.value_and_grad(loss, argnums=(2, 3, 4, 5)))
            L, grads = f(*[jnp.asarray(a) for a in inp.values()])
            jax.block_until_ready(grads)
            print(repr(float(L)))
            """))
    if impl in ("torch", "torch-compile"):
        return ("import torch\n" + head + textwrap.dedent("""
            X, Y, W1, b1, W2, b2 = [torch.from_numpy(a) for a in inp.values()]
            params = [W1, b1, W2, b2]
            for p in params:
                p.requires_grad_(True)
            def loss(X, Y, W1, b1, W2, b2):
                Z = torch.tanh(X @ W1 + b1) @ W2 + b2
                return (torch.logsumexp(Z, dim=1) - (Y * Z).sum(dim=1)).mean()
            """) + ("loss = torch.compile(loss)\n" if impl == "torch-compile" else "") + textwrap.dedent("""
            L = loss(X, Y, W1, b1, W2, b2)
            grads = torch.autograd.grad(L, params)
            print(repr(float(L.detach())))
            """))
    raise Unsupported(row)


def w7_environment(cache_dir: str) -> dict[str, str]:
    """A W7 run's environment: the disk caches in ``cache_dir``, and bytecode cached as Python
    does by default (``PYTHONDONTWRITEBYTECODE`` dropped): the other frameworks load the bytecode
    pip compiled when it installed them, and a source checkout of relayish would otherwise
    compile its modules again in every run (about 50 ms of W7 here)."""
    env = dict(os.environ, RELAYISH_CACHE_DIR=cache_dir, TORCHINDUCTOR_CACHE_DIR=cache_dir)
    env.pop("PYTHONDONTWRITEBYTECODE", None)
    return env


def run_w7_once(impl: str, row: str, cache_dir: str, timeout: float,
                memory_gb: float | None = None) -> tuple[float, subprocess.CompletedProcess]:
    """One fresh ``python3 -c`` run of the row's program: (wall seconds, the finished process)."""
    start = time.perf_counter()
    proc = run_limited([sys.executable, "-c", w7_script(impl, row)], w7_environment(cache_dir), timeout, memory_gb)
    return time.perf_counter() - start, proc


def measure_w7(impl: str, row: str, quick: bool = False, timeout: float = 600.0,
               memory_gb: float | None = None) -> dict:
    """One untimed run, then 3 timed (1 with quick): median and min wall seconds. W7.cold gets
    a fresh empty cache directory every run; W7.warm one directory that the untimed run fills."""
    cell: dict = {"impl": impl, "row": row, "status": "error"}
    start = time.perf_counter()
    dirs: list[str] = []

    def fresh() -> str:
        dirs.append(tempfile.mkdtemp(prefix="relayish-bench-w7-"))
        return dirs[-1]

    try:
        if not supported(impl, row):
            raise Unsupported(row)
        w7_script(impl, row)
        warm_dir = fresh()
        times, losses = [], []
        for k in range(1 + (1 if quick else 3)):
            seconds, proc = run_w7_once(impl, row, warm_dir if row == "W7.warm" else fresh(), timeout, memory_gb)
            if proc.returncode != 0:
                raise RuntimeError(f"exit status {proc.returncode}: {tail(proc.stderr, 1)}")
            if k > 0:
                times.append(seconds)
            if row != "W7.import":
                losses.append(float(proc.stdout.strip().splitlines()[-1]))
        cell.update(median_s=statistics.median(times), min_s=min(times), times_s=times, repeats=len(times),
                    status="ok", checked=row != "W7.import")
        if row != "W7.import":
            ref = float(reference("W2.vg")[0])
            err = max(abs(loss - ref) / abs(ref) for loss in losses)
            cell.update(err=err, errs={"L": err})
            if not err <= TOLERANCE:
                cell.update(status="fail", message=f"L: err {err:.2e}")
    except Unsupported:
        cell.update(status="n/a")
    except subprocess.TimeoutExpired:
        cell.update(status="timeout", message=f"a run took longer than {timeout:g} s")
    except MemoryLimitExceeded as err:
        cell.update(status="error", message=f"a run {err}")
    except Exception as err:  # noqa: BLE001
        cell.update(status="error", message=f"{type(err).__name__}: {err}")
    finally:
        for d in dirs:
            shutil.rmtree(d, ignore_errors=True)
    cell["wall_s"] = time.perf_counter() - start
    return cell


class MemoryLimitExceeded(Exception):
    """A benchmark process grew past the memory limit and was killed."""


MEMORY_LIMIT_GB = min(8.0, 0.4 * (os.sysconf("SC_PAGE_SIZE") * os.sysconf("SC_PHYS_PAGES")) / 2**30) \
    if hasattr(os, "sysconf") else 8.0


def rss_bytes(pid: int) -> int:
    """Resident memory of a process (0 when it cannot be read)."""
    try:
        for line in Path(f"/proc/{pid}/status").read_text().splitlines():
            if line.startswith("VmRSS:"):
                return int(line.split()[1]) * 1024
    except (OSError, ValueError, IndexError):
        pass
    return 0


def run_limited(command: list[str], env: dict, timeout: float, memory_gb: float | None = None) -> subprocess.CompletedProcess:
    """``subprocess.run`` with a wall-clock limit (TimeoutExpired) and a watchdog that kills
    the process when its resident memory passes ``memory_gb`` (MemoryLimitExceeded), so a
    runaway implementation cannot take the machine's memory from everything else."""
    limit = (memory_gb or MEMORY_LIMIT_GB) * 2**30
    with tempfile.TemporaryFile("w+") as out, tempfile.TemporaryFile("w+") as err:
        proc = subprocess.Popen(command, cwd=REPO, env=env, stdout=out, stderr=err, text=True)
        deadline = time.monotonic() + timeout
        try:
            while proc.poll() is None:
                if time.monotonic() > deadline:
                    raise subprocess.TimeoutExpired(command, timeout)
                if rss_bytes(proc.pid) > limit:
                    raise MemoryLimitExceeded(f"used more than {limit / 2**30:.1f} GB of memory and was killed "
                                              "(--mem-limit)")
                time.sleep(0.05)
        finally:
            if proc.poll() is None:
                proc.kill()
                proc.wait()
        out.seek(0)
        err.seek(0)
        return subprocess.CompletedProcess(command, proc.returncode, out.read(), err.read())


def tail(text: str, lines: int = 3) -> str:
    return " / ".join(line.strip() for line in text.strip().splitlines()[-lines:])


# -------------------------------------------------------------------------------------------
# Orchestration: every W1-W6 and W8 cell in a fresh worker process


def run_worker_process(impl: str, row: str, quick: bool, timeout: float, jit_cache: str | None,
                       memory_gb: float | None = None, timing: bool = True) -> dict:
    """``run_cell`` in a fresh process (killed past ``timeout`` seconds or ``memory_gb``)."""
    return run_worker_batch(impl, [row], quick, timeout, jit_cache, memory_gb, timing)[row]


def run_worker_batch(impl: str, rows: list[str], quick: bool, timeout: float, jit_cache: str | None,
                     memory_gb: float | None = None, timing: bool = True) -> dict[str, dict]:
    """``run_cell`` for each row, one after another in a worker process (the harness gives every
    cell a process of its own; tests batch rows to share compiled kernels). A process that dies,
    passes ``timeout`` seconds per row or ``memory_gb`` is killed: the row it was running gets
    that error and the rows after it run in a new process."""
    cells: dict[str, dict] = {}
    remaining = list(rows)
    cache = jit_cache or tempfile.mkdtemp(prefix="relayish-bench-cache-")
    env = dict(os.environ, RELAYISH_CACHE_DIR=cache)
    env.pop("RELAYISH_BACKEND", None)  # relayish-relay measures @relay's default backend
    try:
        while remaining:
            fd, result_path = tempfile.mkstemp(prefix="relayish-bench-", suffix=".jsonl")
            os.close(fd)
            command = [sys.executable, str(Path(__file__).resolve()), "--worker", f"{impl}:{','.join(remaining)}",
                       "--result", result_path]
            if quick:
                command.append("--quick")
            if not timing:
                command.append("--check-only")
            start = time.perf_counter()
            failure = None
            try:
                proc = run_limited(command, env, timeout * len(remaining), memory_gb)
                if proc.returncode != 0:
                    how = f"exit status {proc.returncode}"
                    if proc.returncode < 0:
                        import signal
                        how = f"killed by {signal.Signals(-proc.returncode).name}"
                    failure = ("error", f"worker died ({how}): {tail(proc.stderr or proc.stdout, 2) or 'no output'}")
            except subprocess.TimeoutExpired:
                failure = ("timeout", f"took longer than {timeout:g} s")
            except MemoryLimitExceeded as err:
                failure = ("error", f"the process {err}")
            try:
                done = [json.loads(line) for line in Path(result_path).read_text().splitlines() if line.strip()]
            except (OSError, ValueError):
                done = []
            finally:
                Path(result_path).unlink(missing_ok=True)
            for cell in done:
                cells[cell["row"]] = cell
            if len(rows) == 1 and done:
                done[0]["process_wall_s"] = time.perf_counter() - start
            remaining = [r for r in remaining if r not in cells]
            if remaining:
                status, message = failure or ("error", "the worker wrote no result")
                cells[remaining[0]] = {"impl": impl, "row": remaining[0], "status": status, "message": message,
                                       "process_wall_s": time.perf_counter() - start}
                remaining = remaining[1:]
    finally:
        if jit_cache is None:
            shutil.rmtree(cache, ignore_errors=True)
    return cells


def interleaved(jobs: list[tuple[str, str]], rounds: int) -> list[tuple[str, str]]:
    """The order cells run in: W1-W6 and W8 cells once per round, every other round backwards, so
    that a cell and its neighbours meet the machine's quiet and busy spells alike (the ratios
    relay/text and */best compare cells measured minutes apart); W7 rows, which repeat their own
    process runs, once at the end."""
    timed = [job for job in jobs if job[1] in TIMED_ROWS]
    order: list[tuple[str, str]] = []
    for r in range(rounds):
        order += timed if r % 2 == 0 else timed[::-1]
    return order + [job for job in jobs if job[1] not in TIMED_ROWS]


def combine_rounds(runs: list[dict]) -> dict:
    """One cell from its rounds' cells: the median of the rounds' medians, the least min, every
    repeat time, the median first call; a round that failed or erred makes the cell that round's."""
    bad = [cell for cell in runs if cell.get("status") != "ok"]
    if len(runs) == 1 or bad:
        return bad[0] if bad else runs[0]
    cell = dict(runs[-1])
    cell.update(median_s=statistics.median(c["median_s"] for c in runs), min_s=min(c["min_s"] for c in runs),
                times_s=[t for c in runs for t in c["times_s"]], round_medians_s=[c["median_s"] for c in runs],
                first_s=statistics.median(c["first_s"] for c in runs),
                second_s=statistics.median(c.get("second_s", math.nan) for c in runs))
    return cell


def worker_main(spec: str, result: str, quick: bool, timing: bool = True) -> None:
    """Run the cells of ``impl:row1,row2,...``, appending each one's JSON line to ``result``."""
    impl, rows = spec.split(":", 1)
    for row in rows.split(","):
        cell = run_cell(impl, row, quick=quick, timing=timing)
        with open(result, "a", encoding="utf-8") as handle:
            handle.write(json.dumps(cell, default=_json_default) + "\n")


def _json_default(value: Any) -> Any:
    if isinstance(value, np.generic):
        return value.item()
    raise TypeError(f"not JSON: {type(value).__name__}")


# -------------------------------------------------------------------------------------------
# Machine facts and the table


def machine_facts() -> dict:
    facts: dict = {"python": platform.python_version(), "platform": platform.platform(),
                   "cpu_count": os.cpu_count()}
    if hasattr(os, "sched_getaffinity"):
        facts["cores_usable"] = len(os.sched_getaffinity(0))
    try:
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("model name"):
                facts["cpu"] = line.split(":", 1)[1].strip()
                break
    except OSError:
        pass
    if hasattr(os, "getloadavg"):
        facts["load_average"] = [round(x, 2) for x in os.getloadavg()]
    facts["numpy"] = np.__version__
    try:
        blas = np.show_config(mode="dicts")["Build Dependencies"]["blas"]
        facts["blas"] = f"{blas.get('name')} {blas.get('version', '')}".strip()
    except Exception:  # noqa: BLE001 - older NumPy
        facts["blas"] = None
    threads = {k: os.environ[k] for k in ("OPENBLAS_NUM_THREADS", "OMP_NUM_THREADS", "MKL_NUM_THREADS",
                                           "NUMBA_NUM_THREADS") if k in os.environ}
    facts["thread_env"] = threads or "default"
    for name in ("numba", "jax", "jaxlib", "torch"):
        spec = importlib.util.find_spec(name)
        if spec is None:
            facts[name] = None
            continue
        try:
            from importlib.metadata import version
            facts[name] = version(name)
        except Exception:  # noqa: BLE001
            facts[name] = "installed"
    try:
        commit = subprocess.run(["git", "rev-parse", "--short", "HEAD"], cwd=REPO, capture_output=True, text=True,
                                timeout=10, check=False).stdout.strip()
        dirty = subprocess.run(["git", "status", "--porcelain", "--untracked-files=no"], cwd=REPO,
                               capture_output=True, text=True, timeout=10, check=False).stdout.strip()
        facts["relayish_commit"] = commit + (" (with uncommitted changes)" if dirty else "")
    except (OSError, subprocess.SubprocessError):
        pass
    return facts


def format_facts(facts: dict) -> str:
    cores = f"{facts.get('cpu_count')} cores"
    if facts.get("cores_usable") not in (None, facts.get("cpu_count")):
        cores += f" ({facts['cores_usable']} usable)"
    lines = [
        f"machine: {facts.get('cpu', 'unknown CPU')}, {cores}, {facts.get('platform')}",
        f"python {facts.get('python')}, numpy {facts.get('numpy')}"
        + (f" ({facts['blas']})" if facts.get("blas") else "")
        + f", numba {facts.get('numba') or 'not installed'}",
        "jax " + (facts.get("jax") or "not installed") + ", torch " + (facts.get("torch") or "not installed")
        + f"; threads: {facts.get('thread_env')}",
    ]
    if facts.get("load_average"):
        lines[0] += f"; load average {' '.join(str(x) for x in facts['load_average'])} (1, 5, 15 min)"
    if facts.get("relayish_commit"):
        lines.append(f"relayish {facts['relayish_commit']}")
    return "\n".join(lines)


def fmt_time(seconds: float | None, unit: tuple[str, float] | None = None) -> str:
    if seconds is None or not math.isfinite(seconds):
        return "—"
    name, scale = unit or time_unit(seconds)
    v = seconds / scale
    digits = 0 if v >= 100 else 1 if v >= 10 else 2
    return f"{v:.{digits}f} {name}"


def time_unit(seconds: float) -> tuple[str, float]:
    for name, scale in (("s", 1.0), ("ms", 1e-3), ("µs", 1e-6)):
        if seconds >= scale * 0.9995:
            return name, scale
    return "ns", 1e-9


def cell_text(cell: dict | None, note: dict) -> str:
    if cell is None or cell.get("status") == "n/a":
        return "—"
    status = cell.get("status")
    if status in ("error", "timeout"):
        message = " ".join(str(cell.get("message", "")).split())
        number = note.setdefault(message, len(note) + 1)
        short = message if len(message) <= 48 else message[:45] + "..."
        return f"{status.upper()} [{number}] {short}".replace("|", "/")
    unit = time_unit(cell["median_s"])
    text = f"{fmt_time(cell['median_s'], unit)} ({fmt_time(cell['min_s'], unit).split()[0]})"
    if cell.get("python_floats"):
        text += " †"
    if status == "ok":
        return text + (" ✓" if cell.get("checked", True) else "")
    return f"{text} FAIL err={cell.get('err', math.inf):.1e}"


def correct_median(impl: str, row: str, cells: dict) -> float | None:
    cell = cells.get((impl, row))
    return cell["median_s"] if cell and cell.get("status") == "ok" else None


def over_best(impl: str, row: str, cells: dict) -> tuple[float, str] | None:
    """``impl``'s median / the best median among the non-relayish columns (correct ones), and
    which column that is."""
    mine = correct_median(impl, row, cells)
    others = [(correct_median(other, row, cells), other) for other in IMPLS if other not in RELAYISH]
    others = [(median, other) for median, other in others if median is not None]
    if mine is None or not others:
        return None
    best, other = min(others)
    return mine / best, other


def ratio_text(ratio: float) -> str:
    return f"{ratio:.{2 if ratio < 10 else 1 if ratio < 100 else 0}f}×"


def best_text(impl: str, row: str, cells: dict) -> str:
    found = over_best(impl, row, cells)
    return f"{ratio_text(found[0])} ({found[1]})" if found else "—"


def first_calls(impl: str, row: str, cells: dict) -> str:
    """The first call's time and the second's (the evaluator tier, then the kernels)."""
    cell = cells.get((impl, row))
    if not cell or cell.get("status") not in ("ok", "fail"):
        return fmt_time(None)
    return f"{fmt_time(cell.get('first_s'))} / {fmt_time(cell.get('second_s'))}"


def format_table(cells: dict, rows: list[str], impls: list[str], w7_timed_runs: int = 3) -> str:
    """The README table: one row per workload, median (min) per implementation, jit/best,
    relay/text and relay/best (with a relayish-relay column), the first calls of relayish-jit
    (and relayish-relay); error messages and footnotes underneath."""
    notes: dict[str, int] = {}
    relay = "relayish-relay" in impls
    header = ["workload", *impls, "jit/best", *(["relay/text", "relay/best"] if relay else []), "jit 1st / 2nd call",
              *(["relay 1st / 2nd call"] if relay else [])]
    body = []
    for row in rows:
        line = [row] + [cell_text(cells.get((impl, row)), notes) for impl in impls]
        line.append(best_text("relayish-jit", row, cells))
        if relay:
            relay_s, text_s = correct_median("relayish-relay", row, cells), correct_median("relayish-jit", row, cells)
            line.append(ratio_text(relay_s / text_s) if relay_s is not None and text_s is not None else "—")
            line.append(best_text("relayish-relay", row, cells))
        line.append(first_calls("relayish-jit", row, cells))
        if relay:
            line.append(first_calls("relayish-relay", row, cells))
        body.append(line)
    widths = [max(len(r[i]) for r in [header, *body]) for i in range(len(header))]

    def render(r: list[str]) -> str:
        return "| " + " | ".join(c.ljust(w) for c, w in zip(r, widths)) + " |"

    out = [render(header), "|" + "|".join("-" * (w + 2) for w in widths) + "|"] + [render(r) for r in body]
    out.append("")
    out.append("Cells: median time per call (min in the same unit) over the repeats; ✓ = every output within "
               f"{TOLERANCE:g} relative error of the float64 reference; FAIL = outside it; — = not applicable.")
    out.append("jit/best: relayish-jit's median over the best correct median of the non-relayish columns. "
               "jit 1st / 2nd call: relayish.compile + the first call (straight-line programs: on the evaluator), "
               "then the second call (compiling the kernels the first did not), kernel cache empty unless "
               "--jit-cache.")
    if relay:
        out.append("relay/text: relayish-relay's median (decorated Python through @relay) over relayish-jit's "
                   "(the same workload as static text); relay/best: relayish-relay's median over the best correct "
                   "non-relayish median. relay 1st / 2nd call: the same for the decorated function, translation "
                   "included, kernel cache empty unless --jit-cache.")
    if "W8.step" in rows:
        out.append("W8: one LeNet training step per call (value+grad and the SGD update); the parameters train "
                   "across calls, so only the first call's outputs are checked (relayish's also on a fresh model "
                   "after timing, compiled); its first calls are the demo's first and second steps.")
    if any(c.get("python_floats") for c in cells.values()):
        out.append("†: plain Python floats (float64), the spec's exception for W6.")
    if any(row.startswith("W7") for row in rows):
        out.append(f"W7: wall time of a fresh `python3 -c` process (one untimed run, then {w7_timed_runs} timed); "
                   "cold = empty "
                   "relayish cache every run, warm = a cache an earlier run filled (the same runs again for "
                   "columns without a disk cache); import = `import <framework>` alone (relayish loads its "
                   "layers, NumPy included, lazily at first use: that cost is in W7.cold; relayish's one call runs "
                   "on the evaluator tier, without Numba, docs/jit.md); "
                   "bytecode cached as Python does by default (PYTHONDONTWRITEBYTECODE dropped).")
    for message, number in notes.items():
        out.append(f"[{number}] {message}")
    return "\n".join(out)


# -------------------------------------------------------------------------------------------
# Command line


def select_rows(only: str | None) -> list[str]:
    if not only:
        return list(ROWS)
    chosen = []
    for token in (t.strip() for t in only.split(",") if t.strip()):
        matches = [r for r in ROWS if r == token or r.split(".")[0] == token]
        if not matches:
            raise SystemExit(f"--only: unknown workload {token!r} (choose from {', '.join(ROWS)} or W1..W8)")
        chosen.extend(m for m in matches if m not in chosen)
    return [r for r in ROWS if r in chosen]


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0],
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--only", help="comma-separated workloads: W1, W2.vg, W7.cold, ... (default all)")
    parser.add_argument("--impl", help=f"comma-separated implementations (default all available: {', '.join(IMPLS)})")
    parser.add_argument("--quick", action="store_true", help="fewer repeats and shorter targets (not the protocol)")
    parser.add_argument("--json", metavar="PATH", help="write every measurement to PATH")
    parser.add_argument("--timeout", type=float, default=None,
                        help="seconds per cell process (default 1800; 600 with --quick)")
    parser.add_argument("--mem-limit", type=float, metavar="GB", default=None,
                        help=f"kill a cell's process past this resident memory (default {MEMORY_LIMIT_GB:.1f})")
    parser.add_argument("--jit-cache", metavar="DIR",
                        help="relayish kernel cache for the W1-W6 and W8 cells (default: a fresh empty one per cell)")
    parser.add_argument("--rounds", type=int, default=1,
                        help="run every W1-W6 and W8 cell this many times, rounds interleaved (default 1)")
    parser.add_argument("--worker", help=argparse.SUPPRESS)
    parser.add_argument("--result", help=argparse.SUPPRESS)
    parser.add_argument("--check-only", action="store_true", help=argparse.SUPPRESS)
    options = parser.parse_args(argv)
    if options.worker:
        worker_main(options.worker, options.result, options.quick, not options.check_only)
        return 0

    started = time.perf_counter()
    rows = select_rows(options.only)
    wanted = [i.strip() for i in options.impl.split(",")] if options.impl else list(IMPLS)
    for impl in wanted:
        if impl not in IMPLS:
            raise SystemExit(f"--impl: unknown implementation {impl!r} (choose from {', '.join(IMPLS)})")
    impls = [i for i in IMPLS if i in wanted and available(i) and any(
        supported(i, r) for r in rows)]
    missing = [i for i in IMPLS if i in wanted and not available(i)]
    timeout = options.timeout or (600.0 if options.quick else 1800.0)

    facts = machine_facts()
    print(f"# relayish benchmarks: bench/workloads.py{' --quick' if options.quick else ''}")
    print(format_facts(facts))
    if missing:
        print(f"not installed (columns left out): {', '.join(missing)}")
    spec_notes = []
    for row in rows:
        if row in TIMED_ROWS:
            spec_notes += spec_mismatches(row)
    for note in spec_notes:
        print(f"WARNING: reference differs from docs/workloads.md: {note}")
    print(flush=True)

    if options.rounds < 1:
        raise SystemExit("--rounds: at least 1")
    cells: dict[tuple[str, str], dict] = {}
    jobs = [(impl, row) for row in rows for impl in impls
            if supported(impl, row)]
    runs = interleaved(jobs, options.rounds)
    measured: dict[tuple[str, str], list[dict]] = {}
    for k, (impl, row) in enumerate(runs, 1):
        print(f"[{k:2d}/{len(runs)}] {row:<12} {impl:<16}", end=" ", file=sys.stderr, flush=True)
        if row in TIMED_ROWS:
            cell = run_worker_process(impl, row, options.quick, timeout, options.jit_cache, options.mem_limit)
        else:
            cell = measure_w7(impl, row, options.quick, timeout, options.mem_limit)
        measured.setdefault((impl, row), []).append(cell)
        cells[(impl, row)] = combine_rounds(measured[(impl, row)])
        shown = cell_text(cell, {}) if cell["status"] not in ("error", "timeout") else \
            f"{cell['status'].upper()}: {' '.join(str(cell.get('message')).split())[:120]}"
        print(shown, f"(first {fmt_time(cell.get('first_s'))}, "
              f"{cell.get('process_wall_s', cell.get('wall_s', 0)):.1f} s)", file=sys.stderr, flush=True)

    print(format_table(cells, rows, impls, 1 if options.quick else 3))
    total = time.perf_counter() - started
    print(f"\n(whole run: {total:.0f} s)")
    if options.json:
        record = {"facts": facts, "quick": options.quick, "rows": rows, "impls": impls, "missing": missing,
                  "spec_mismatches": spec_notes, "total_s": total, "tolerance": TOLERANCE,
                  "cells": [cells[k] for k in jobs]}
        Path(options.json).write_text(json.dumps(record, indent=1, default=_json_default))
    return 0


if __name__ == "__main__":
    sys.exit(main())
