"""Chunks on worker threads (jit/threads.py): the boundaries cover the work exactly, every chunk
runs once and has finished when the call returns, results come in chunk order, a chunk's
exception reaches the caller, a call that waited for a descheduled worker makes the next calls
run alone, and fused kernels split into chunks give the evaluator's results, the same bits
with one thread or two."""

from __future__ import annotations

import threading
import time
from types import SimpleNamespace

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import relayish
from jit import threads
from relayish.testing import check_equivalent
from tests.jit.test_fused_kernels import CASES, TOLERANCES, arguments, program


@given(units=st.integers(0, 10**6), per_unit=st.integers(1, 1000), align=st.sampled_from([1, 7, 1024]))
def test_chunk_bounds_cover_the_work_in_aligned_increasing_chunks(units: int, per_unit: int, align: int) -> None:
    bounds = threads.chunk_bounds(units, per_unit, align)
    if bounds is None:
        assert min(units * per_unit // threads.CHUNK, -(-units // align)) < 2
        return
    assert bounds[0] == 0 and bounds[-1] == units
    assert 3 <= len(bounds) <= threads.MAX_CHUNKS + 1
    assert all(lo < hi for lo, hi in zip(bounds, bounds[1:]))
    assert all(b % align == 0 for b in bounds[:-1])
    sizes = [hi - lo for lo, hi in zip(bounds, bounds[1:])]
    assert min(sizes) * per_unit >= threads.CHUNK // 2 or align > 1  # no tiny chunk unless alignment forces it


def test_chunk_bounds_depend_on_the_sizes_alone(monkeypatch):
    monkeypatch.setenv("RELAYISH_THREADS", "1")
    alone = threads.chunk_bounds(10**6, 1, 1024)
    monkeypatch.setenv("RELAYISH_THREADS", "8")
    assert threads.chunk_bounds(10**6, 1, 1024) == alone
    assert len(alone) == 8 and alone[-1] == 10**6  # W1: seven chunks of 139 or 140 tiles


@pytest.mark.parametrize("count", ["1", "2", "4"])
def test_every_chunk_runs_once_and_results_come_in_chunk_order(monkeypatch, count: str) -> None:
    monkeypatch.setenv("RELAYISH_THREADS", count)
    monkeypatch.setattr(threads, "_ALONE_UNTIL", 0.0)
    ran: list[tuple[int, int]] = []
    done = np.zeros(100, np.int64)

    def chunk(out, lo, hi):
        time.sleep(0.001)
        out[lo:hi] += 1
        ran.append((lo, hi))
        return lo

    bounds = [0, 10, 25, 40, 41, 70, 100]
    assert threads.run_chunks(chunk, (done,), bounds) == bounds[:-1]
    assert sorted(ran) == list(zip(bounds, bounds[1:]))
    np.testing.assert_array_equal(done, 1)  # every chunk had finished when the call returned


def test_a_chunks_exception_reaches_the_caller_after_every_chunk_finished(monkeypatch):
    monkeypatch.setenv("RELAYISH_THREADS", "2")
    finished = []

    def chunk(lo, hi):
        time.sleep(0.002)
        finished.append(lo)
        if lo in (2, 4):
            raise ValueError(f"chunk at {lo}")

    with pytest.raises(ValueError, match="chunk at 2"):
        threads.run_chunks(chunk, (), [0, 1, 2, 3, 4, 5, 6])
    assert sorted(finished) == [0, 1, 2, 3, 4, 5]


def test_calls_whose_threads_waited_for_a_core_make_the_next_calls_run_alone(monkeypatch):
    """A chunk that sleeps is a thread kept off its core: wall time without CPU time."""
    monkeypatch.setenv("RELAYISH_THREADS", "2")
    monkeypatch.setattr(threads, "_ALONE_UNTIL", 0.0)
    monkeypatch.setattr(threads, "_SLOW", 0)
    caller = threading.get_ident()
    where: list[int] = []

    def stalled(lo, hi):
        where.append(threading.get_ident())
        time.sleep(0.002)

    for _ in range(threads.SLOW_CALLS - 1):
        threads.run_chunks(stalled, (), list(range(9)))
    assert threads._SLOW == threads.SLOW_CALLS - 1 and threads._ALONE_UNTIL == 0.0, "slow calls back off in a row"
    assert set(where) != {caller}, "the worker took chunks"
    with pytest.MonkeyPatch.context() as patch:  # threads that never waited: CPU time keeps up with the clock
        patch.setattr(threads, "time", SimpleNamespace(monotonic=time.monotonic, thread_time=lambda: 2 * time.monotonic()))
        threads.run_chunks(stalled, (), list(range(9)))
    assert threads._SLOW == 0, "a call that lost no time starts the count again"
    for _ in range(threads.SLOW_CALLS):
        threads.run_chunks(stalled, (), list(range(9)))
    assert threads._ALONE_UNTIL > time.monotonic()
    where.clear()
    threads.run_chunks(stalled, (), list(range(9)))
    assert set(where) == {caller}
    monkeypatch.setattr(threads, "_ALONE_UNTIL", time.monotonic())  # the back-off ends: workers again
    where.clear()
    threads.run_chunks(stalled, (), list(range(9)))
    assert set(where) != {caller}


@pytest.mark.parametrize("value", ["0", "two", "-1"])
def test_a_bad_thread_count_is_a_clear_error(monkeypatch, value: str) -> None:
    monkeypatch.setenv("RELAYISH_THREADS", value)
    with pytest.raises(ValueError, match="RELAYISH_THREADS must be a positive integer"):
        threads.thread_count()


# 11 programs, each example runs one twice and the evaluator once: 2/5 of the profile's examples
# (20 in CI, 800 heavy), to keep the suite within CI's time
@pytest.mark.parametrize(("name", "d"), CASES, ids=[f"{n}-{d}" for n, d in CASES])
@settings(max_examples=max(1, settings().max_examples * 2 // 5))
@given(n=st.integers(0, 40) | st.integers(2048, 6000), m=st.integers(0, 24), seed=st.integers(0, 2**32 - 1))
def test_fused_kernels_in_chunks_give_the_evaluators_results_and_the_same_bits_on_any_thread_count(
    name: str, d: str, n: int, m: int, seed: int
) -> None:
    """Rows split from two rows on; a flat group splits in whole tiles of 1024 elements."""
    typed, fused = program(name, d)
    args = arguments(typed, d, n, m, seed)
    compiled = relayish.compile(fused, "main")
    calls = []
    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(threads, "CHUNK", 4)  # a few elements a chunk: these small sizes split
        patch.setattr(threads, "_ALONE_UNTIL", 0.0)
        patch.setenv("RELAYISH_THREADS", "2")
        original = threads.run_chunks
        patch.setattr(threads, "run_chunks", lambda *a: calls.append(a[2]) or original(*a))
        two = compiled(*args)
        if n >= 2048 and m > 0:
            assert calls and len(calls[0]) > 2
        rtol, atol = TOLERANCES[d]
        check_equivalent(fused, typed, "main", args, rtol=rtol, atol=atol, backend_a=lambda *_: two)
        patch.setenv("RELAYISH_THREADS", "1")
        one = compiled(*args)
    for a, b in zip(*(r if isinstance(r, tuple) else (r,) for r in (one, two))):
        np.testing.assert_array_equal(a, b, strict=True)


def test_w1_sized_groups_split_into_chunks(monkeypatch):
    """A million elements: seven chunks of whole tiles (every chunk's loop is compiled nogil)."""
    typed, fused = program("w1", "f32")
    compiled = relayish.compile(fused, "main")
    calls = []
    original = threads.run_chunks
    monkeypatch.setattr(threads, "run_chunks", lambda fn, args, bounds: calls.append(bounds) or original(fn, args, bounds))
    x, w, b = (np.random.default_rng(k).standard_normal(10**6).astype(np.float32) for k in range(3))
    total = compiled(x, w, b)
    assert [len(c) - 1 for c in calls] == [7]
    expected = np.sum(np.tanh(x.astype(np.float64) * w + b) ** 2)
    np.testing.assert_allclose(total, expected, rtol=1e-6)


def test_busy_elsewhere_counts_other_processes_cpu_time_not_our_own(monkeypatch):
    """Readings of (machine busy seconds, own seconds): the machine counts as busy when the
    difference grew by ELSEWHERE of a core per second or more, and only between two readings
    at least SAMPLE seconds apart."""
    clock = [100.0]
    readings = iter([(10.0, 1.0), (10.2, 1.19), (10.4, 1.2), (10.4, 1.2)])
    monkeypatch.setattr(threads, "_MACHINE", threads._Machine())
    monkeypatch.setattr(threads, "_cpu_seconds", lambda: next(readings))
    monkeypatch.setattr(threads.time, "monotonic", lambda: clock[0])
    assert not threads.busy_elsewhere()  # first reading: nothing to compare with
    clock[0] += 0.2
    assert not threads.busy_elsewhere()  # 0.2 s busy, 0.19 of them ours
    clock[0] += threads.SAMPLE / 2
    assert not threads.busy_elsewhere()  # too soon: the last answer, no reading
    clock[0] += 0.3
    assert threads.busy_elsewhere()  # 0.19 s of others' time in 0.35 s
    clock[0] += 0.2
    assert not threads.busy_elsewhere()  # quiet again


def test_a_busy_process_beside_us_is_seen():
    """A real child process spinning on a core makes busy_elsewhere answer True."""
    import subprocess
    import sys

    child = subprocess.Popen([sys.executable, "-c", "import time\nend = time.time() + 5\nwhile time.time() < end: pass"])
    try:
        time.sleep(0.3)
        threads.busy_elsewhere()
        time.sleep(threads.SAMPLE * 3)
        assert threads.busy_elsewhere()
    finally:
        child.kill()
        child.wait()
