"""Python's cyclic garbage collector during compiled calls that build closures and references.

Why. A full collection walks every object the collector tracks, and with Numba loaded a process
holds over 100,000 of them that never become garbage (Numba's typing and lowering registries):
about 30 ms per full collection here. A gradient through a loop that stays a loop keeps a few
closures, cells and references per step alive until its backward pass, so the collector promotes
them and soon runs a full collection, walking all of Numba again. Measured (program ``c`` of
bench/cheap_gradient.py, a 2048-step loop): 28.8 ms per value and gradient, 14.8 of them in full
collections; with the collector switched off, 10.9 ms.

What this does. For the duration of such a call (``Lowering.heap_objects``: the program defines
closures or makes references), every object that existed before it moves to the collector's
permanent generation (``gc.freeze``) and back into the oldest generation after it
(``gc.unfreeze``); both take constant time. Collections during the call walk only what the call
made, and garbage cycles the call makes are collected as they would be otherwise, so memory stays
bounded (switching the collector off would keep every cycle a long loop makes until the call
ends). Same program after this: 13.1 ms. An object that existed before the call and became
garbage during it is collected by the next full collection after it.

Full collections during the call: what the call made and still holds is a tape that only grows
until the backward pass, so walking it again finds nothing; Python's rule (a full collection
once objects promoted since the last one reach a quarter of those it kept) walks a growing tape
about five times over. So while frozen, a full collection waits for ``FULL_EVERY`` collections
of the middle generation instead of 10 (``gc.set_threshold``'s third number, put back after):
about 700,000 allocations. Program ``c`` at 32,768 steps: 281 ms with 6 full collections a call
(95 ms of them), 185 ms with none; the young generations are collected as before.

Left alone: a process whose permanent generation is not empty froze objects itself (a server
before ``fork``, say); unfreezing would undo that, so from then on calls run without this
(checking again would walk the frozen objects on every call). A process that switched the
collector off gets nothing changed either. Calls on several threads, or nested, freeze once:
the first to start freezes, the last to finish unfreezes (thresholds another thread sets
meanwhile are replaced by those seen at the freeze).
"""

from __future__ import annotations

import gc
import threading
from contextlib import contextmanager
from typing import Iterator

FULL_EVERY = 100  # collections of the middle generation per full collection, while frozen

_LOCK = threading.Lock()
_ACTIVE = 0  # calls running inside the freeze
_THRESHOLDS = (700, 10, 10)  # the collector's thresholds before the freeze, put back after it
_FROZEN_BY_OTHERS = False  # the permanent generation held objects we did not put there: never touch it


@contextmanager
def older_objects_frozen() -> Iterator[None]:
    """Within the block, collections see only the objects made in it (module docstring)."""
    global _ACTIVE, _FROZEN_BY_OTHERS, _THRESHOLDS
    with _LOCK:
        joined = False
        if _ACTIVE:
            joined = True
        elif not _FROZEN_BY_OTHERS and gc.isenabled():
            if gc.get_freeze_count():
                _FROZEN_BY_OTHERS = True
            else:
                gc.freeze()
                _THRESHOLDS = gc.get_threshold()
                young, middle, full = _THRESHOLDS
                gc.set_threshold(young, middle, max(full, FULL_EVERY))
                joined = True
        if joined:
            _ACTIVE += 1
    try:
        yield
    finally:
        if joined:
            with _LOCK:
                _ACTIVE -= 1
                if not _ACTIVE:
                    gc.set_threshold(*_THRESHOLDS)
                    gc.unfreeze()
