"""Worker threads for kernels split into chunks: a fused kernel over a large iteration space
(jit/kernels/fused.py) runs its chunks on every core. Its loop is compiled ``nogil``, so the
chunks run at once.

Why threads of our own rather than Numba's parallel loops: Numba's OpenMP workers spin between
loops and fight OpenBLAS's threads for these two cores (W2 went from 0.8 to 8.4 ms), and its
workqueue layer was slower than one core (jit/kernels/elementwise.py has the figures). These
workers sleep on a queue between calls. A call hands its chunks out through a shared counter,
and the calling thread works too, so a worker that starts late takes fewer chunks.

A busy machine: with another process on a core, the threads of a call take turns on what is
left, and whichever is descheduled in the middle of a chunk holds the call up for the scheduler's
time slice (milliseconds; W1's value and gradient went from 0.65 to 2.3 ms with a busy loop on
the other core, where the calling thread alone keeps a core to itself). So each thread measures
the time it spent waiting for a core while it held a chunk (wall time minus its CPU time); a
call whose threads lost more than a quarter of its time that way counts as slow, and after
``SLOW_CALLS`` slow calls in a row the next calls run on the calling thread alone for
``BACKOFF`` seconds, then try the workers again. One slow call is no sign: an idle machine
has one now and then.

Chunks depend on the sizes alone (``chunk_bounds``), never on the thread count, so a result
combined chunk by chunk (a float sum) is the same with one thread or many.

``RELAYISH_THREADS`` sets the threads a call uses, the caller's included (default: the cores
this process may run on; 1: every chunk runs in the calling thread).

Other processes on the cores (``busy_elsewhere``): the CPU time the machine spent outside this
process, from ``/proc/stat`` and ``/proc/self/stat``, sampled at most every ``SAMPLE`` seconds.
It tells compiled calls to run their BLAS products on one thread (jit/kernels/blas.py), which
cannot measure a spinning pool's losses the way the workers here measure their own.
"""

from __future__ import annotations

import itertools
import os
import queue
import threading
import time
from typing import Any, Callable, Sequence

CHUNK = 1 << 17  # elements a chunk has at least: below ~2 chunks the handing out costs more than it saves
MAX_CHUNKS = 16  # enough to balance two to eight cores; each chunk costs one kernel dispatch (~2 us)
BACKOFF = 0.25  # seconds on the calling thread alone after SLOW_CALLS slow calls in a row
SLOW_CALLS = 3
SAMPLE = 0.1  # seconds between two readings of the machine's CPU time (busy_elsewhere)
ELSEWHERE = 0.5  # cores' worth of CPU time other processes used, from which the machine counts as busy


def thread_count() -> int:
    """The threads a call uses (``RELAYISH_THREADS``, else the usable cores)."""
    configured = os.environ.get("RELAYISH_THREADS", "").strip()
    if configured:
        if not configured.isdigit() or int(configured) < 1:
            raise ValueError(f"RELAYISH_THREADS must be a positive integer, not {configured!r}")
        return int(configured)
    if hasattr(os, "sched_getaffinity"):
        return len(os.sched_getaffinity(0))
    return os.cpu_count() or 1


def chunk_bounds(units: int, per_unit: int, align: int = 1) -> list[int] | None:
    """Boundaries of the chunks of ``units`` outer positions of ``per_unit`` elements each, every
    boundary but the last a multiple of ``align``; None when the work is one chunk."""
    blocks = -(-units // align)
    count = min(MAX_CHUNKS, units * per_unit // CHUNK, blocks)
    if count < 2:
        return None
    return [min(units, blocks * i // count * align) for i in range(count + 1)]


class _Pool:
    """Daemon threads running the jobs put on one queue."""

    def __init__(self, workers: int) -> None:
        self.workers = workers
        self.jobs: queue.SimpleQueue[Callable[[], None]] = queue.SimpleQueue()
        for k in range(workers):
            threading.Thread(target=self._work, name=f"relayish-worker-{k}", daemon=True).start()

    def _work(self) -> None:
        while True:
            self.jobs.get()()


_POOL: _Pool | None = None
_POOL_LOCK = threading.Lock()
_ALONE_UNTIL = 0.0  # time.monotonic() before which calls do not use the workers (module docstring)
_SLOW = 0  # slow calls in a row


def _pool() -> _Pool | None:
    """The worker pool (started on first use); None with one thread or while backing off."""
    global _POOL
    workers = thread_count() - 1
    if workers < 1 or time.monotonic() < _ALONE_UNTIL:
        return None
    with _POOL_LOCK:
        if _POOL is None or _POOL.workers != workers:
            _POOL = _Pool(workers)  # a changed setting starts a new pool; the old one's threads idle
        return _POOL


def _forget_pool() -> None:
    """After ``fork`` the child has none of the parent's threads."""
    global _POOL
    _POOL = None


if hasattr(os, "register_at_fork"):
    os.register_at_fork(after_in_child=_forget_pool)


def run_chunks(fn: Callable[..., Any], args: Sequence[Any], bounds: Sequence[int]) -> list[Any]:
    """``fn(*args, lo, hi)`` for each chunk ``[lo, hi)`` of ``bounds``, on every thread; the results
    in chunk order. Returns only when every chunk has finished; a chunk's exception is raised
    then (the first chunk's, in chunk order)."""
    count = len(bounds) - 1
    results: list[Any] = [None] * count
    failures: dict[int, BaseException] = {}
    claims = itertools.count()  # next() on it is atomic under the GIL
    finished: queue.SimpleQueue[float] = queue.SimpleQueue()  # per chunk a worker ran: the seconds it waited

    def run(i: int) -> float:
        """Chunk ``i``; returns the seconds this thread waited for a core meanwhile."""
        wall, cpu = time.monotonic(), time.thread_time()
        try:
            results[i] = fn(*args, bounds[i], bounds[i + 1])
        except BaseException as error:  # noqa: BLE001 - handed to the caller below
            failures[i] = error
        return max(0.0, (time.monotonic() - wall) - (time.thread_time() - cpu))

    def help_out() -> None:
        while (i := next(claims)) < count:
            finished.put(run(i))

    global _ALONE_UNTIL, _SLOW
    pool = _pool()
    helpers = 0 if pool is None else min(pool.workers, count - 1)
    for _ in range(helpers):
        pool.jobs.put(help_out)
    start = time.monotonic()
    mine, waited = 0, 0.0
    while (i := next(claims)) < count:
        waited += run(i)
        mine += 1
    for _ in range(count - mine):
        waited += finished.get()
    if helpers:
        _SLOW = _SLOW + 1 if waited > (time.monotonic() - start) / 4 else 0
        if _SLOW >= SLOW_CALLS:
            _ALONE_UNTIL, _SLOW = time.monotonic() + BACKOFF, 0
    if failures:
        raise failures[min(failures)]
    return results


class _Machine:
    """The last reading of the machine's and this process's CPU time (``busy_elsewhere``)."""

    def __init__(self) -> None:
        self.at = 0.0
        self.reading: tuple[float, float] | None = None
        self.busy = False
        self.lock = threading.Lock()


_MACHINE = _Machine()
_TICK = os.sysconf("SC_CLK_TCK") if hasattr(os, "sysconf") else 100


def _cpu_seconds() -> tuple[float, float] | None:
    """(seconds every core spent busy, seconds this process ran) since boot; None off Linux."""
    try:
        with open("/proc/stat") as stat:
            fields = stat.readline().split()[1:]
        with open("/proc/self/stat") as own:
            mine = own.read().rsplit(")", 1)[1].split()
    except (OSError, IndexError):
        return None
    numbers = [int(f) for f in fields]
    idle = numbers[3] + (numbers[4] if len(numbers) > 4 else 0)  # idle and iowait
    return (sum(numbers[:8]) - idle) / _TICK, (int(mine[11]) + int(mine[12])) / _TICK


def busy_elsewhere() -> bool:
    """Whether other processes used at least ``ELSEWHERE`` of a core over the last ``SAMPLE``
    seconds or so (the answer changes at most every ``SAMPLE`` seconds; False where the system
    does not say)."""
    machine = _MACHINE
    now = time.monotonic()
    if now - machine.at < SAMPLE or not machine.lock.acquire(blocking=False):
        return machine.busy
    try:
        reading = _cpu_seconds()
        if reading is not None and machine.reading is not None and now > machine.at:
            others = (reading[0] - machine.reading[0]) - (reading[1] - machine.reading[1])
            machine.busy = others / (now - machine.at) >= ELSEWHERE
        machine.at, machine.reading = now, reading
        return machine.busy
    finally:
        machine.lock.release()
