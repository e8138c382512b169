"""Datasets for the LeNet demo (the Relay paper's Figure 4 trained on handwritten digits).

Two sources give the same 28x28 single-channel shape, so one model definition serves both:
scikit-learn's bundled 8x8 digits (no download, upsampled here) and MNIST read from IDX files
the user already has (nothing is fetched from the network).
"""

from __future__ import annotations

import gzip
import os
from collections.abc import Iterator
from pathlib import Path
from typing import IO

import attrs
import numpy as np

__all__ = ["Dataset", "load_digits", "load_mnist", "read_idx", "write_idx"]

SIDE = 28
CLASSES = 10

# IDX type code -> big-endian element dtype, as the MNIST page specifies.
_IDX_DTYPES: dict[int, np.dtype] = {
    0x08: np.dtype(">u1"),
    0x09: np.dtype(">i1"),
    0x0B: np.dtype(">i2"),
    0x0C: np.dtype(">i4"),
    0x0D: np.dtype(">f4"),
    0x0E: np.dtype(">f8"),
}
_IDX_CODES: dict[np.dtype, int] = {dtype.newbyteorder("="): code for code, dtype in _IDX_DTYPES.items()}

_MNIST_FILES = {
    "train_images": "train-images-idx3-ubyte",
    "train_labels": "train-labels-idx1-ubyte",
    "test_images": "t10k-images-idx3-ubyte",
    "test_labels": "t10k-labels-idx1-ubyte",
}


@attrs.frozen(eq=False)
class Dataset:
    """Images and labels checked once here, so the training loop can rely on static shapes.

    ``eq=False``: element-wise ``==`` on arrays has no single truth value, so identity equality is used.
    """

    images: np.ndarray  # float32 (n, 1, 28, 28), values in [0, 1]
    labels: np.ndarray  # int64 (n,), values 0..9

    def __attrs_post_init__(self) -> None:
        images, labels = self.images, self.labels
        if images.dtype != np.float32 or images.ndim != 4 or images.shape[1:] != (1, SIDE, SIDE):
            raise ValueError(
                f"images must be float32 of shape (n, 1, {SIDE}, {SIDE}), got {images.dtype} {images.shape}"
            )
        if labels.dtype != np.int64 or labels.shape != images.shape[:1]:
            raise ValueError(f"labels must be int64 of shape ({len(images)},), got {labels.dtype} {labels.shape}")
        if images.size and (images.min() < 0 or images.max() > 1):
            raise ValueError("image values must lie in [0, 1]")
        if labels.size and (labels.min() < 0 or labels.max() >= CLASSES):
            raise ValueError(f"labels must lie in 0..{CLASSES - 1}")

    def __len__(self) -> int:
        return len(self.labels)

    def one_hot(self) -> np.ndarray:
        """Labels as float32 (n, 10) rows, the target form a softmax cross-entropy loss takes."""
        return np.eye(CLASSES, dtype=np.float32)[self.labels]

    def batches(self, size: int, rng: np.random.Generator) -> Iterator[tuple[np.ndarray, np.ndarray]]:
        """One shuffled epoch of ``(images, one_hot)`` batches of exactly ``size`` examples.

        The last incomplete batch is dropped so every batch has the same static shape, which a
        statically typed program compiled for one batch size requires.
        """
        if not 1 <= size <= len(self):
            raise ValueError(f"batch size must be between 1 and {len(self)} (the dataset size), got {size}")
        order = rng.permutation(len(self))
        targets = self.one_hot()
        for start in range(0, len(self) - size + 1, size):
            chosen = order[start : start + size]
            yield self.images[chosen], targets[chosen]


def load_digits(test_fraction: float = 0.2, seed: int = 0) -> tuple[Dataset, Dataset]:
    """scikit-learn's 1797 bundled 8x8 digits at 28x28, split ``(train, test)`` by a seeded permutation.

    Bundled with scikit-learn, so the demo trains without downloading anything.
    """
    if not 0 < test_fraction < 1:
        raise ValueError(f"test_fraction must lie strictly between 0 and 1, got {test_fraction}")
    try:
        from sklearn.datasets import load_digits as sklearn_load_digits
    except ImportError as error:
        raise ImportError(
            "the digits dataset needs scikit-learn: install it with "
            '`python3 -m pip install "relayish[examples]"` (or `pip install scikit-learn`), '
            "or pass --mnist DIR with MNIST IDX files"
        ) from error
    digits = sklearn_load_digits()
    images = _upsample(digits.images / 16.0, SIDE).astype(np.float32)[:, None]
    labels = digits.target.astype(np.int64)
    order = np.random.default_rng(seed).permutation(len(labels))
    n_test = min(max(round(len(labels) * test_fraction), 1), len(labels) - 1)
    test, train = order[:n_test], order[n_test:]
    return Dataset(images[train], labels[train]), Dataset(images[test], labels[test])


def _interpolation_matrix(source: int, target: int) -> np.ndarray:
    """(target, source) weights of 1-D linear interpolation with pixel centres aligned (half-pixel offset).

    Each row holds at most two non-negative weights summing to 1, so constants are preserved exactly.
    """
    position = np.clip((np.arange(target) + 0.5) * (source / target) - 0.5, 0, source - 1)
    low = np.floor(position).astype(np.int64)
    high = np.minimum(low + 1, source - 1)
    frac = position - low
    weights = np.zeros((target, source))
    rows = np.arange(target)
    np.add.at(weights, (rows, low), 1 - frac)
    np.add.at(weights, (rows, high), frac)
    return weights


def _upsample(images: np.ndarray, side: int) -> np.ndarray:
    """Bilinear resize of (n, h, w) images to (n, side, side), done as two separable matrix products."""
    rows = _interpolation_matrix(images.shape[1], side)
    cols = _interpolation_matrix(images.shape[2], side)
    return rows @ images @ cols.T


def _open(path: Path, mode: str) -> IO[bytes]:
    """Open ``path`` in binary ``mode``, through gzip when the name ends in ``.gz`` as MNIST downloads do."""
    return gzip.open(path, mode) if path.name.endswith(".gz") else open(path, mode)


def read_idx(path: str | os.PathLike[str]) -> np.ndarray:
    """Read an IDX file (gunzipped when the name ends in ``.gz``) into a native-byte-order array."""
    path = Path(path)
    try:
        with _open(path, "rb") as stream:
            data = stream.read()
    except (gzip.BadGzipFile, EOFError) as error:
        raise ValueError(f"{path}: not a valid gzip file ({error})") from error
    if len(data) < 4:
        raise ValueError(f"{path}: truncated IDX header: {len(data)} bytes, need at least 4")
    if data[0] != 0 or data[1] != 0:
        raise ValueError(f"{path}: bad IDX magic: first two bytes are {data[:2].hex()}, expected 0000")
    code, rank = data[2], data[3]
    if code not in _IDX_DTYPES:
        known = ", ".join(f"0x{known:02X}" for known in _IDX_DTYPES)
        raise ValueError(f"{path}: unknown IDX type code 0x{code:02X} (known: {known})")
    header = 4 + 4 * rank
    if len(data) < header:
        raise ValueError(f"{path}: truncated IDX header: {len(data)} bytes, need {header} for {rank} dimensions")
    shape = tuple(int(d) for d in np.frombuffer(data, dtype=">u4", count=rank, offset=4))
    dtype = _IDX_DTYPES[code]
    expected = int(np.prod(shape, dtype=np.int64)) * dtype.itemsize
    actual = len(data) - header
    if actual < expected:
        raise ValueError(f"{path}: truncated IDX data: {actual} bytes, header {shape} of {dtype.name} needs {expected}")
    if actual > expected:
        raise ValueError(
            f"{path}: {actual - expected} trailing bytes after IDX data (header {shape} of {dtype.name} "
            f"needs {expected})"
        )
    return np.frombuffer(data, dtype=dtype, offset=header).reshape(shape).astype(dtype.newbyteorder("="))


def write_idx(path: str | os.PathLike[str], array: np.ndarray) -> None:
    """Write ``array`` as an IDX file (gzipped when the name ends in ``.gz``)."""
    path = Path(path)
    array = np.asarray(array)
    code = _IDX_CODES.get(array.dtype.newbyteorder("="))
    if code is None:
        known = ", ".join(sorted(dtype.name for dtype in _IDX_CODES))
        raise ValueError(f"{path}: IDX cannot store dtype {array.dtype} (supported: {known})")
    if any(d >= 2**32 for d in array.shape):
        raise ValueError(f"{path}: IDX cannot store shape {array.shape} (each dimension must be below 2**32)")
    header = bytes([0, 0, code, array.ndim]) + np.asarray(array.shape, dtype=">u4").tobytes()
    with _open(path, "wb") as stream:
        stream.write(header + np.ascontiguousarray(array, dtype=_IDX_DTYPES[code]).tobytes())


def _mnist_path(directory: Path, name: str) -> Path:
    for candidate in (directory / name, directory / f"{name}.gz"):
        if candidate.is_file():
            return candidate
    expected = ", ".join(_MNIST_FILES.values())
    raise FileNotFoundError(
        f"{directory}: no {name} or {name}.gz; an MNIST directory holds {expected} (each optionally .gz)"
    )


def _mnist_split(directory: Path, images_name: str, labels_name: str, limit: int | None) -> Dataset:
    images_path = _mnist_path(directory, images_name)
    labels_path = _mnist_path(directory, labels_name)
    images, labels = read_idx(images_path), read_idx(labels_path)
    if images.dtype != np.uint8 or images.ndim != 3 or images.shape[1:] != (SIDE, SIDE):
        raise ValueError(
            f"{images_path}: expected uint8 images of shape (n, {SIDE}, {SIDE}), got {images.dtype} {images.shape}"
        )
    if labels.dtype != np.uint8 or labels.ndim != 1:
        raise ValueError(f"{labels_path}: expected uint8 labels of shape (n,), got {labels.dtype} {labels.shape}")
    if len(labels) != len(images):
        raise ValueError(f"{labels_path}: {len(labels)} labels but {images_path} holds {len(images)} images")
    if labels.size and labels.max() >= CLASSES:
        bad = int(np.argmax(labels >= CLASSES))
        raise ValueError(f"{labels_path}: label {labels[bad]} at index {bad} is outside 0..{CLASSES - 1}")
    images, labels = images[:limit], labels[:limit]
    return Dataset((images / np.float32(255)).astype(np.float32)[:, None], labels.astype(np.int64))


def load_mnist(directory: str | os.PathLike[str], limit: int | None = None) -> tuple[Dataset, Dataset]:
    """MNIST ``(train, test)`` from the four IDX files in ``directory``, keeping the first ``limit`` of each.

    Reads local files only, so the demo never touches the network; ``limit`` keeps quick runs quick.
    """
    if limit is not None and limit < 1:
        raise ValueError(f"limit must be a positive number of examples, got {limit}")
    directory = Path(directory)
    train = _mnist_split(directory, _MNIST_FILES["train_images"], _MNIST_FILES["train_labels"], limit)
    test = _mnist_split(directory, _MNIST_FILES["test_images"], _MNIST_FILES["test_labels"], limit)
    return train, test
