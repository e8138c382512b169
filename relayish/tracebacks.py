"""Errors at the public entry points (``@relay`` functions, ``relayish.evaluate``,
``relayish.compile`` and what it returns) show the user's frames only, as JAX's do.

A ``RelayError`` describes the user's mistake (and says where in their code it is); the
frames of relayish's own code between the user's call and the ``raise`` are noise to them.
``RELAYISH_TRACEBACK_FILTERING=off`` keeps those frames, for debugging relayish itself.
"""

from __future__ import annotations

import functools
import os
import types
from pathlib import Path
from typing import Any, Callable

from relayish.errors import RelayError

_ROOT = Path(__file__).resolve().parents[1]
PACKAGES = ("ad", "frontend", "interp", "jit", "relayish", "runtime", "typecheck")
INTERNAL = tuple(f"{_ROOT / package}{os.sep}" for package in PACKAGES)
EXAMPLES = f"{_ROOT / 'relayish' / 'examples'}{os.sep}"  # user code that ships with relayish


def _internal(tb: types.TracebackType) -> bool:
    file = tb.tb_frame.f_code.co_filename
    return file.startswith(INTERNAL) and not file.startswith(EXAMPLES)


def filtering() -> bool:
    """False when ``RELAYISH_TRACEBACK_FILTERING=off`` asks for relayish's own frames."""
    return os.environ.get("RELAYISH_TRACEBACK_FILTERING", "").lower() != "off"


def hide_internal_frames(err: BaseException) -> None:
    """Drop relayish's frames from ``err``'s traceback and its chained exceptions (as ``raise
    ... from None`` would). The caller re-raises it with a bare ``raise``, which adds no frame."""
    if not filtering():
        return
    kept = []
    tb = err.__traceback__
    while tb is not None:
        if not _internal(tb):
            kept.append(tb)
        tb = tb.tb_next
    filtered = None
    for tb in reversed(kept):
        filtered = types.TracebackType(filtered, tb.tb_frame, tb.tb_lasti, tb.tb_lineno)
    err.__traceback__ = filtered
    err.__cause__ = None
    err.__suppress_context__ = True


def user_facing(fn: Callable) -> Callable:
    """A public entry point: a ``RelayError`` it raises shows the user's frames only."""
    @functools.wraps(fn)
    def entry(*args: Any, **kwargs: Any) -> Any:
        try:
            return fn(*args, **kwargs)
        except RelayError as err:
            hide_internal_frames(err)
            raise
    return entry
