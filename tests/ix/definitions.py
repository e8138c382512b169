"""Operators of the library written as index expressions, for the tests (registered under ``ix_`` names)."""

from __future__ import annotations

import numpy as np

from relayish import ix


def matmul(A, B):
    k = ix.axis(A.shape[1], "k")
    return ix.tensor((A.shape[0], B.shape[1]), lambda i, j: ix.sum(A[i, k] * B[k, j], k))


def batched_matmul(A, B):
    k = ix.axis(A.shape[2], "k")
    return ix.tensor((A.shape[0], A.shape[1], B.shape[2]), lambda b, i, j: ix.sum(A[b, i, k] * B[b, k, j], k))


def dense(X, W):
    """X @ W.T: rows of X against rows of W."""
    k = ix.axis(X.shape[1], "k")
    return ix.tensor((X.shape[0], W.shape[0]), lambda i, j: ix.sum(X[i, k] * W[j, k], k))


def squared_distances(A, B):
    """|A[i] - B[j]|^2 for rows of A and B: a sum that is not a product."""
    k = ix.axis(A.shape[1], "k")

    def element(i, j):
        d = A[i, k] - B[j, k]
        return ix.sum(d * d, k)

    return ix.tensor((A.shape[0], B.shape[0]), element)


def conv2d(stride: int, pad: int):
    """NCHW convolution of X (n, c, h, w) with W (f, c, kh, kw), zero padding ``pad`` on every side."""

    def conv(X, W):
        c, ky, kx = ix.axis(X.shape[1], "c"), ix.axis(W.shape[2], "ky"), ix.axis(W.shape[3], "kx")
        height = (X.shape[2] + 2 * pad - W.shape[2]) // stride + 1
        width = (X.shape[3] + 2 * pad - W.shape[3]) // stride + 1

        def element(n, f, y, x):
            row, col = y * stride + ky - pad, x * stride + kx - pad
            inside = (row >= 0) & (row < X.shape[2]) & (col >= 0) & (col < X.shape[3])
            value = X[n, c, row, col] if pad == 0 else ix.where(inside, X[n, c, row, col], 0.0)  # no padding: no guard
            return ix.sum(value * W[f, c, ky, kx], c, ky, kx)

        return ix.tensor((X.shape[0], W.shape[0], height, width), element)

    return conv


def max_pool2d(X):
    """2 x 2 windows, stride 2."""
    ky, kx = ix.axis(2, "ky"), ix.axis(2, "kx")
    return ix.tensor((X.shape[0], X.shape[1], X.shape[2] // 2, X.shape[3] // 2),
                     lambda n, c, y, x: ix.max(X[n, c, 2 * y + ky, 2 * x + kx], ky, kx))


def batched_trace(X):
    k = ix.axis(X.shape[1], "k")
    return ix.tensor((X.shape[0],), lambda b: ix.sum(X[b, k, k], k))


def diag(X):
    return ix.tensor((X.shape[0],), lambda i: X[i, i])


def transpose(X):
    return ix.tensor((X.shape[1], X.shape[0]), lambda i, j: X[j, i])


def stencil(x):
    """0.25 x[i-1] + 0.5 x[i] + 0.25 x[i+1], zero outside."""
    n = x.shape[0]
    return ix.tensor((n,), lambda i: 0.25 * ix.where(i > 0, x[i - 1], 0.0) + 0.5 * x[i]
                     + 0.25 * ix.where(i < n - 1, x[i + 1], 0.0))


def softmax(X):
    """Along the last axis, shifted by the row's maximum."""
    k, m, q = ix.axis(X.shape[1], "k"), ix.axis(X.shape[1], "m"), ix.axis(X.shape[1], "q")

    def element(i, j):
        return ix.exp(X[i, j] - ix.max(X[i, k], k)) / ix.sum(ix.exp(X[i, m] - ix.max(X[i, q], q)), m)

    return ix.tensor((X.shape[0], X.shape[1]), element)


def gather(X, idx):
    """Rows of X at the indices idx (take along axis 0)."""
    return ix.tensor((idx.shape[0], X.shape[1]), lambda i, j: X[idx[i], j])


def unguarded_stencil(x):
    return ix.tensor((x.shape[0],), lambda i: x[i - 1] + x[i])


DEFINITIONS = {
    "ix_matmul": matmul, "ix_bmm": batched_matmul, "ix_dense": dense, "ix_sqdist": squared_distances,
    "ix_conv_s1p0": conv2d(1, 0), "ix_conv_s2p1": conv2d(2, 1), "ix_max_pool2d": max_pool2d,
    "ix_batched_trace": batched_trace, "ix_diag": diag, "ix_transpose": transpose, "ix_stencil": stencil,
    "ix_softmax": softmax, "ix_gather": gather, "ix_unguarded": unguarded_stencil,
}


def register() -> dict:
    """Register every definition; returns name -> record."""
    return {name: ix.operator(fn, name=name) for name, fn in DEFINITIONS.items()}


# operator -> its arguments' shapes (an int64 second argument for gather), whether it is smooth
CASES = {
    "ix_matmul": ([(3, 4), (4, 2)], True),
    "ix_bmm": ([(2, 3, 4), (2, 4, 2)], True),
    "ix_dense": ([(3, 4), (2, 4)], True),
    "ix_sqdist": ([(3, 4), (2, 4)], True),
    "ix_conv_s1p0": ([(2, 2, 5, 5), (3, 2, 3, 3)], True),
    "ix_conv_s2p1": ([(1, 2, 5, 6), (2, 2, 3, 3)], True),
    "ix_max_pool2d": ([(1, 2, 4, 6)], False),
    "ix_batched_trace": ([(2, 3, 3)], True),
    "ix_diag": ([(4, 4)], True),
    "ix_transpose": ([(3, 5)], True),
    "ix_stencil": ([(7,)], True),
    "ix_softmax": ([(3, 4)], True),
    "ix_gather": ([(4, 3), (5,)], True),
}


def tensor(shape: tuple[int, ...], dtype: str = "FloatType(64)") -> str:
    return f"Tensor({dtype}, Shape({', '.join(map(str, shape))}))"


def arguments(name: str, rng: np.random.Generator) -> list[np.ndarray]:
    shapes, _ = CASES[name]
    args = [rng.standard_normal(s) for s in shapes]
    if name == "ix_gather":
        args[1] = np.array([3, 0, 3, 1, 2])
    return args
