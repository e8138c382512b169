"""The cache directory holds code (kernel modules, Numba's pickled indexes, optimized programs):
nothing planted there may run, and nothing damaged or swapped there may change a result.

Each run is a fresh process on a cache directory of the test's own (the first fills it), so
that what is on disk is what a later process reads. The planted files write a marker file when
they run; the marker must never appear.
"""

from __future__ import annotations

import importlib.util
import marshal
import os
import pickle
import random
import subprocess
import sys
import warnings
from pathlib import Path

import numpy as np
import pytest

from jit.kernels import registry

PROGRAMS = {
    "a": "def @main[n: Dim](%x: Tensor(FloatType(32), Shape(n)), %z: Tensor(FloatType(32), Shape(n))) "
         "{ @sum(@tanh(%x) * 2.0 + %z) }",
    "b": "def @main[n: Dim](%x: Tensor(FloatType(32), Shape(n)), %z: Tensor(FloatType(32), Shape(n))) "
         "{ @sum(@exp(%x) - %z * %z) }",
}
X = np.linspace(-1, 1, 200, dtype=np.float32)
Z = np.linspace(0, 2, 200, dtype=np.float32)
EXPECTED = {"a": float(np.sum(np.tanh(X.astype(np.float64)) * 2 + Z)),
            "b": float(np.sum(np.exp(X.astype(np.float64)) - Z.astype(np.float64) ** 2))}

CHILD = r"""
import sys, warnings
import numpy as np
import relayish
warnings.simplefilter("always")
x, z = np.linspace(-1, 1, 200, dtype=np.float32), np.linspace(0, 2, 200, dtype=np.float32)
for text in sys.argv[1:]:
    print(float(relayish.compile(relayish.parse(text), "main")(x, z)))
"""


def run(cache: Path, *names: str) -> tuple[list[float], str]:
    """Compile and call the programs ``names`` in a fresh process caching in ``cache``: their
    results and what the process wrote to stderr."""
    env = dict(os.environ, RELAYISH_CACHE_DIR=str(cache), RELAYISH_TIERED="0", RELAYISH_COMPILE_AHEAD="0")
    done = subprocess.run([sys.executable, "-c", CHILD, *(PROGRAMS[n] for n in names)], capture_output=True,
                          text=True, env=env, timeout=600)
    assert done.returncode == 0, done.stderr[-3000:]
    return [float(v) for v in done.stdout.split()], done.stderr


def check(results: list[float], *names: str) -> None:
    assert results == pytest.approx([EXPECTED[n] for n in names], rel=1e-5)


def planted_pickle(marker: Path) -> bytes:
    class Payload:
        def __reduce__(self):
            return (os.system, (f"touch {marker}",))
    return pickle.dumps(Payload())


def plant_pyc(source: Path, marker: Path) -> None:
    """A bytecode file beside ``source`` whose header copies the source's mtime and size: what
    Python's import system takes for the source's own compiled form."""
    code = compile(f"import os\nos.system('touch {marker}')\n", str(source), "exec")
    info = source.stat()
    header = importlib.util.MAGIC_NUMBER + (0).to_bytes(4, "little") + \
        int(info.st_mtime).to_bytes(4, "little") + (info.st_size & 0xFFFFFFFF).to_bytes(4, "little")
    target = Path(importlib.util.cache_from_source(str(source)))
    target.parent.mkdir(exist_ok=True)
    target.write_bytes(header + marshal.dumps(code))


@pytest.fixture
def cache(tmp_path: Path) -> Path:
    """A cache directory filled by a first process that ran both programs."""
    directory = tmp_path / "cache"
    results, _ = run(directory, "a", "b")
    check(results, "a", "b")
    return directory


def test_planted_program_pickles_and_bytecode_never_run(cache, tmp_path):
    marker = tmp_path / "ran"
    for entry in (cache / "programs").glob("*.pickle"):
        entry.write_bytes(planted_pickle(marker))
    for module in (cache / "kernels").glob("*.py"):
        plant_pyc(module, marker)
    results, _ = run(cache, "a", "b")
    check(results, "a", "b")
    assert not marker.exists()
    assert len(list((cache / "programs").glob("*.pickle"))) == 2  # the planted entries were replaced


def test_a_swapped_program_entry_is_computed_again_not_run(cache):
    first, second = sorted((cache / "programs").glob("*.pickle"))
    first.write_bytes(second.read_bytes())
    results, _ = run(cache, "a", "b")
    check(results, "a", "b")


@pytest.mark.parametrize("damage", ["flipped machine code", "truncated indexes"])
def test_damaged_numba_cache_files_are_deleted_and_compiled_again(cache, damage):
    """Flipped bytes in the machine code failed every later run (UnicodeDecodeError, LLVM bitcode
    errors); truncated files raised UnpicklingError or EOFError."""
    rng = random.Random(7)
    damaged = sorted((cache / "kernels" / "__pycache__").glob("*.nbc" if damage.startswith("flipped") else "*.nbi"))
    assert damaged
    for path in damaged:
        data = bytearray(path.read_bytes())
        if damage.startswith("flipped"):
            for _ in range(20):
                data[rng.randrange(len(data))] ^= 0xFF
        else:
            del data[rng.randrange(1, len(data)):]
        path.write_bytes(bytes(data))
    results, _ = run(cache, "a", "b")
    check(results, "a", "b")
    results, _ = run(cache, "a", "b")  # and what was compiled again was cached again intact
    check(results, "a", "b")


def test_a_directory_others_may_write_is_refused_and_what_is_planted_there_never_runs(cache, tmp_path):
    marker = tmp_path / "ran"
    for entry in (cache / "programs").glob("*.pickle"):
        entry.write_bytes(planted_pickle(marker))
    for index in (cache / "kernels" / "__pycache__").glob("*.nbi"):
        index.write_bytes(planted_pickle(marker))
    cache.chmod(0o777)
    results, stderr = run(cache, "a", "b")
    check(results, "a", "b")
    assert not marker.exists()
    assert f"relayish does not use the cache directory {cache}: {cache} is writable by group and others" in stderr


def test_unsafe_names_the_owner_or_the_mode(tmp_path, monkeypatch):
    directory = tmp_path / "c"
    directory.mkdir(mode=0o700)
    assert registry._unsafe(directory) is None
    (directory / "kernels").mkdir(mode=0o700)
    (directory / "kernels").chmod(0o770)
    assert registry._unsafe(directory) == f"{directory / 'kernels'} is writable by its group"
    (directory / "kernels").chmod(0o700)
    monkeypatch.setattr(os, "getuid", lambda: os.stat(directory).st_uid + 1)
    assert "belongs to user id" in registry._unsafe(directory)


def test_an_unsafe_configured_directory_falls_back_with_one_warning(tmp_path, monkeypatch):
    shared = tmp_path / "shared"
    shared.mkdir()
    shared.chmod(0o777)
    monkeypatch.setenv("RELAYISH_CACHE_DIR", str(shared))
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "home"))
    monkeypatch.setattr(registry, "_CHECKED", {})
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        chosen = registry.cache_dir()
        assert registry.cache_dir() == chosen
    assert chosen == tmp_path / "home" / "relayish" and chosen.stat().st_mode & 0o777 == 0o700
    assert len(caught) == 1 and "is writable by group and others" in str(caught[0].message)
    assert os.environ["RELAYISH_CACHE_DIR"] == str(chosen)  # the processes it starts use it too
