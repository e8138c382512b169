"""The LeNet demo's datasets: the IDX reader/writer against the MNIST spec, MNIST and digits loading, batching."""

from __future__ import annotations

import gzip
import re
import sys
from pathlib import Path

import numpy as np
import pytest

from relayish.examples.data import Dataset, load_digits, load_mnist, read_idx, write_idx

IDX_DTYPES = {0x08: np.uint8, 0x09: np.int8, 0x0B: np.int16, 0x0C: np.int32, 0x0D: np.float32, 0x0E: np.float64}
SHAPES = [(), (5,), (2, 3), (2, 3, 4), (0, 3), (1, 2, 1, 2)]


def named(path: Path) -> str:
    return re.escape(str(path))


# --- IDX -------------------------------------------------------------------------------------------------------------


@pytest.mark.parametrize("suffix", ["", ".gz"])
@pytest.mark.parametrize("shape", SHAPES, ids=str)
@pytest.mark.parametrize("dtype", IDX_DTYPES.values(), ids=lambda d: np.dtype(d).name)
def test_idx_round_trip(tmp_path: Path, dtype: type, shape: tuple[int, ...], suffix: str) -> None:
    if np.issubdtype(dtype, np.integer):
        info = np.iinfo(dtype)
        pool = [info.min, info.max, 0, 1, info.max // 3]
    else:
        info = np.finfo(dtype)
        pool = [info.min, info.max, 0.0, -1.5, info.smallest_subnormal, np.inf, -np.inf, np.nan, np.pi]
    array = np.resize(np.array(pool, dtype=dtype), shape)
    path = tmp_path / f"a{suffix}"
    write_idx(path, array)
    back = read_idx(path)
    assert back.dtype == np.dtype(dtype) and back.dtype.isnative
    assert back.shape == shape
    np.testing.assert_array_equal(back, array)


def test_idx_gz_is_really_gzipped(tmp_path: Path) -> None:
    write_idx(tmp_path / "a.gz", np.arange(3, dtype=np.uint8))
    assert gzip.decompress((tmp_path / "a.gz").read_bytes()) == b"\0\0\x08\x01\0\0\0\x03\x00\x01\x02"


def test_idx_bytes_written_match_the_spec(tmp_path: Path) -> None:
    path = tmp_path / "a"
    write_idx(path, np.array([[1, 2, -3], [256, 5, 6]], dtype=np.int16))
    expected = (
        b"\x00\x00\x0b\x02"  # magic: two zero bytes, type code 0x0B (int16), 2 dimensions
        b"\x00\x00\x00\x02\x00\x00\x00\x03"  # dimensions as big-endian uint32
        b"\x00\x01\x00\x02\xff\xfd\x01\x00\x00\x05\x00\x06"  # data big-endian, C order
    )
    assert path.read_bytes() == expected


def test_idx_hand_written_file_reads_per_spec(tmp_path: Path) -> None:
    path = tmp_path / "a"
    path.write_bytes(b"\x00\x00\x0d\x01\x00\x00\x00\x02" + b"\x3f\x80\x00\x00" + b"\xc0\x00\x00\x00")
    back = read_idx(path)
    assert back.dtype == np.float32 and back.dtype.isnative
    np.testing.assert_array_equal(back, [1.0, -2.0])


def test_write_idx_rejects_unsupported_dtype(tmp_path: Path) -> None:
    with pytest.raises(ValueError, match=named(tmp_path / "a") + ".*int64"):
        write_idx(tmp_path / "a", np.zeros(3, dtype=np.int64))


@pytest.mark.parametrize(
    "content, message",
    [
        (b"\x00\x01\x08\x01\x00\x00\x00\x01\x07", "bad IDX magic"),
        (b"\x00\x00\x0a\x01\x00\x00\x00\x01\x07", "unknown IDX type code 0x0A"),
        (b"\x00\x00", "truncated IDX header"),
        (b"\x00\x00\x08\x03\x00\x00\x00\x01", "truncated IDX header"),
        (b"\x00\x00\x0c\x01\x00\x00\x00\x02\x00\x00\x00\x01\x00\x00", "truncated IDX data"),
        (b"\x00\x00\x08\x01\x00\x00\x00\x01\x07\x08", "1 trailing bytes"),
    ],
    ids=["bad-magic", "unknown-code", "short-magic", "short-dims", "truncated", "trailing"],
)
def test_read_idx_errors_name_the_file(tmp_path: Path, content: bytes, message: str) -> None:
    path = tmp_path / "bad"
    path.write_bytes(content)
    with pytest.raises(ValueError, match=named(path) + ".*" + message):
        read_idx(path)


def test_read_idx_bad_gzip_names_the_file(tmp_path: Path) -> None:
    path = tmp_path / "bad.gz"
    path.write_bytes(b"not gzip at all")
    with pytest.raises(ValueError, match=named(path)):
        read_idx(path)


def test_read_idx_missing_file(tmp_path: Path) -> None:
    with pytest.raises(FileNotFoundError):
        read_idx(tmp_path / "absent")


# --- MNIST -----------------------------------------------------------------------------------------------------------


def write_mnist(directory: Path, n_train: int = 6, n_test: int = 3, suffix: str = "") -> None:
    """Image k of each split is filled with 51 * k (so image 5 is the brightest, 255), and its label is k."""
    for prefix, n in (("train", n_train), ("t10k", n_test)):
        images = np.broadcast_to((51 * np.arange(n, dtype=np.uint8))[:, None, None], (n, 28, 28))
        write_idx(directory / f"{prefix}-images-idx3-ubyte{suffix}", images)
        write_idx(directory / f"{prefix}-labels-idx1-ubyte{suffix}", np.arange(n, dtype=np.uint8))


@pytest.mark.parametrize("suffix", ["", ".gz"])
def test_load_mnist(tmp_path: Path, suffix: str) -> None:
    write_mnist(tmp_path, suffix=suffix)
    train, test = load_mnist(tmp_path)
    assert (len(train), len(test)) == (6, 3)
    for split in (train, test):
        assert split.images.dtype == np.float32 and split.images.shape == (len(split), 1, 28, 28)
        assert split.labels.dtype == np.int64
        np.testing.assert_array_equal(split.labels, np.arange(len(split)))
        for k in range(len(split)):
            np.testing.assert_allclose(split.images[k], 51 * k / 255, rtol=1e-6)
    assert train.images.max() == 1.0 and train.images.min() == 0.0


def test_load_mnist_limit(tmp_path: Path) -> None:
    write_mnist(tmp_path)
    train, test = load_mnist(tmp_path, limit=2)
    np.testing.assert_array_equal(train.labels, [0, 1])
    np.testing.assert_array_equal(test.labels, [0, 1])
    with pytest.raises(ValueError, match="limit"):
        load_mnist(tmp_path, limit=0)


def test_load_mnist_missing_file_names_path_and_expected_files(tmp_path: Path) -> None:
    write_mnist(tmp_path)
    (tmp_path / "t10k-labels-idx1-ubyte").unlink()
    with pytest.raises(FileNotFoundError, match=named(tmp_path) + ".*t10k-labels-idx1-ubyte") as caught:
        load_mnist(tmp_path)
    for name in ("train-images-idx3-ubyte", "train-labels-idx1-ubyte", "t10k-images-idx3-ubyte"):
        assert name in str(caught.value)


@pytest.mark.parametrize(
    "name, array, message",
    [
        ("train-images-idx3-ubyte", np.zeros((6, 28, 27), np.uint8), r"uint8 images of shape \(n, 28, 28\)"),
        ("train-images-idx3-ubyte", np.zeros((6, 28, 28), np.int16), r"uint8 images"),
        ("train-labels-idx1-ubyte", np.zeros((6, 1), np.uint8), r"uint8 labels"),
        ("train-labels-idx1-ubyte", np.array([0, 1, 10, 3, 4, 5], np.uint8), r"label 10 at index 2 is outside 0\.\.9"),
        ("t10k-labels-idx1-ubyte", np.zeros(4, np.uint8), r"4 labels but .* holds 3 images"),
    ],
    ids=["image-shape", "image-dtype", "label-shape", "label-range", "counts"],
)
def test_load_mnist_bad_content_names_the_file(tmp_path: Path, name: str, array: np.ndarray, message: str) -> None:
    write_mnist(tmp_path)
    write_idx(tmp_path / name, array)
    with pytest.raises(ValueError, match=named(tmp_path / name) + ".*" + message):
        load_mnist(tmp_path)


# --- digits ----------------------------------------------------------------------------------------------------------


def reference_bilinear(images: np.ndarray, side: int) -> np.ndarray:
    """Per-pixel bilinear resize of (..., h, w) with pixel centres aligned, independent of the module's matrices."""
    height, width = images.shape[-2:]
    out = np.empty(images.shape[:-2] + (side, side))
    for i in range(side):
        y = min(max((i + 0.5) * height / side - 0.5, 0.0), height - 1.0)
        y0 = int(y)
        y1, fy = min(y0 + 1, height - 1), y - y0
        for j in range(side):
            x = min(max((j + 0.5) * width / side - 0.5, 0.0), width - 1.0)
            x0 = int(x)
            x1, fx = min(x0 + 1, width - 1), x - x0
            top = images[..., y0, x0] * (1 - fx) + images[..., y0, x1] * fx
            bottom = images[..., y1, x0] * (1 - fx) + images[..., y1, x1] * fx
            out[..., i, j] = top * (1 - fy) + bottom * fy
    return out


@pytest.fixture(scope="module")
def digits() -> tuple[Dataset, Dataset]:
    pytest.importorskip("sklearn")
    return load_digits()


@pytest.fixture(scope="module")
def originals() -> tuple[np.ndarray, np.ndarray]:
    datasets = pytest.importorskip("sklearn.datasets")
    raw = datasets.load_digits()
    return raw.images / 16.0, raw.target


def test_load_digits_shapes_and_values(digits: tuple[Dataset, Dataset]) -> None:
    train, test = digits
    assert (len(train), len(test)) == (1797 - 359, 359)
    for split in digits:
        assert split.images.dtype == np.float32 and split.images.shape == (len(split), 1, 28, 28)
        assert split.labels.dtype == np.int64 and split.labels.shape == (len(split),)
        assert split.images.min() >= 0 and split.images.max() <= 1
        assert set(np.unique(split.labels)) == set(range(10))


def test_load_digits_split_is_disjoint_and_covers_everything(
    digits: tuple[Dataset, Dataset], originals: tuple[np.ndarray, np.ndarray]
) -> None:
    images, targets = originals
    references = reference_bilinear(images, 28).astype(np.float32)
    expected = sorted(
        (int(label), reference.round(5).tobytes()) for reference, label in zip(references, targets, strict=True)
    )
    got = sorted(
        (int(label), image[0].round(5).tobytes())
        for split in digits
        for image, label in zip(split.images, split.labels, strict=True)
    )
    assert got == expected


def test_load_digits_is_deterministic_under_the_seed(digits: tuple[Dataset, Dataset]) -> None:
    again = load_digits()
    other = load_digits(seed=1)
    for split, same in zip(digits, again, strict=True):
        np.testing.assert_array_equal(split.images, same.images)
        np.testing.assert_array_equal(split.labels, same.labels)
    assert not np.array_equal(digits[1].labels, other[1].labels)
    assert len(load_digits(test_fraction=0.5)[1]) == round(1797 * 0.5)
    with pytest.raises(ValueError, match="test_fraction"):
        load_digits(test_fraction=1.0)


def test_upsampling_preserves_mean_and_constants(
    digits: tuple[Dataset, Dataset], originals: tuple[np.ndarray, np.ndarray]
) -> None:
    images, _ = originals
    upsampled = np.concatenate([split.images[:, 0] for split in digits])
    assert abs(upsampled.mean() - images.mean()) < 1e-4
    np.testing.assert_allclose(np.sort(upsampled.mean(axis=(1, 2))), np.sort(images.mean(axis=(1, 2))), atol=1e-4)
    np.testing.assert_allclose(reference_bilinear(np.full((8, 8), 0.375), 28), 0.375)  # the reference itself


def test_upsampling_matches_reference_on_a_constant_and_a_ramp() -> None:
    from relayish.examples.data import _upsample

    ramp = np.add.outer(np.arange(8.0), 2 * np.arange(8.0))[None] / 22
    constant = np.full((1, 8, 8), 0.6)
    np.testing.assert_allclose(_upsample(constant, 28), 0.6, rtol=1e-12)
    np.testing.assert_allclose(_upsample(ramp, 28), reference_bilinear(ramp, 28), rtol=1e-12)


def test_load_digits_without_sklearn_explains_how_to_install(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setitem(sys.modules, "sklearn", None)
    monkeypatch.setitem(sys.modules, "sklearn.datasets", None)
    with pytest.raises(ImportError, match=re.escape('python3 -m pip install "relayish[examples]"')) as caught:
        load_digits()
    assert "pip install scikit-learn" in str(caught.value) and "--mnist DIR" in str(caught.value)


# --- Dataset ---------------------------------------------------------------------------------------------------------


def numbered(n: int) -> Dataset:
    """Example i has every pixel equal to i / n and label i % 10, so batches can be traced back to examples."""
    images = np.broadcast_to((np.arange(n, dtype=np.float32) / n)[:, None, None, None], (n, 1, 28, 28)).copy()
    return Dataset(images, np.arange(n, dtype=np.int64) % 10)


def test_one_hot() -> None:
    data = numbered(13)
    hot = data.one_hot()
    assert hot.dtype == np.float32 and hot.shape == (13, 10)
    np.testing.assert_array_equal(hot.sum(axis=1), 1)
    np.testing.assert_array_equal(hot.argmax(axis=1), data.labels)
    np.testing.assert_array_equal(hot[3], [0, 0, 0, 1, 0, 0, 0, 0, 0, 0])


def test_batches_are_equal_size_and_cover_each_example_at_most_once() -> None:
    data = numbered(23)
    rng = np.random.default_rng(0)
    epochs = []
    for _ in range(2):
        seen = []
        for images, targets in data.batches(5, rng):
            assert images.shape == (5, 1, 28, 28) and images.dtype == np.float32
            assert targets.shape == (5, 10) and targets.dtype == np.float32
            indices = np.rint(images[:, 0, 0, 0] * 23).astype(np.int64)
            np.testing.assert_array_equal(targets.argmax(axis=1), indices % 10)
            seen.extend(indices.tolist())
        assert len(seen) == 20 and len(set(seen)) == 20
        epochs.append(seen)
    assert epochs[0] != epochs[1]  # reshuffled each epoch
    assert sum(1 for _ in data.batches(23, rng)) == 1
    for size in (0, 24):
        with pytest.raises(ValueError, match="batch size"):
            next(data.batches(size, rng))


def test_dataset_rejects_wrong_shapes_and_values() -> None:
    good = numbered(4)
    with pytest.raises(ValueError, match="float32"):
        Dataset(good.images.astype(np.float64), good.labels)
    with pytest.raises(ValueError, match="int64"):
        Dataset(good.images, good.labels[:3])
    with pytest.raises(ValueError, match=r"\[0, 1\]"):
        Dataset(good.images * 2 + 0.5, good.labels)
    with pytest.raises(ValueError, match="labels must lie"):
        Dataset(good.images, good.labels + 9)
    assert len(good) == 4
