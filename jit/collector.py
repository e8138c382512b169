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

Left alone: a process whose permanent generation is not empty froze objects itself (a server
before ``fork``, say); unfreezing would undo that, so from then on calls run without this
(checking again would walk the frozen objects on every call). A process that switched the
collector off gets nothing changed either. Calls on several threads, or nested, freeze once:
the first to start freezes, the last to finish unfreezes.
"""

from __future__ import annotations

import gc
import threading
from contextlib import contextmanager
from typing import Iterator

_LOCK = threading.Lock()
_ACTIVE = 0  # calls running inside the freeze
_FROZEN_BY_OTHERS = False  # the permanent generation held objects we did not put there: never touch it


@contextmanager
def older_objects_frozen() -> Iterator[None]:
    """Within the block, collections see only the objects made in it (module docstring)."""
    global _ACTIVE, _FROZEN_BY_OTHERS
    with _LOCK:
        joined = False
        if _ACTIVE:
            joined = True
        elif not _FROZEN_BY_OTHERS and gc.isenabled():
            if gc.get_freeze_count():
                _FROZEN_BY_OTHERS = True
            else:
                gc.freeze()
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
                    gc.unfreeze()
