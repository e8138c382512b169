"""jit/collector.py: during compiled calls that build closures and references, collections see
only what the call made; everything is as before after the call, nested calls and threads
included, and a process that froze objects itself is left alone."""

from __future__ import annotations

import gc
import threading
import weakref

import numpy as np
import pytest

import relayish
from jit import collector
from jit.collector import older_objects_frozen
from relayish.errors import RelayRuntimeError


class Node:
    """A weak-referenceable object that can sit in a cycle."""

    def __init__(self) -> None:
        self.me = self


@pytest.fixture(autouse=True)
def fresh_state(monkeypatch):
    """Each test starts with nothing frozen and the collector on."""
    gc.unfreeze()
    monkeypatch.setattr(collector, "_ACTIVE", 0)
    monkeypatch.setattr(collector, "_FROZEN_BY_OTHERS", False)
    assert gc.isenabled() and gc.get_freeze_count() == 0
    yield
    gc.unfreeze()
    gc.enable()


def test_older_objects_are_frozen_within_and_back_after():
    before = Node()
    thresholds = gc.get_threshold()
    with older_objects_frozen():
        assert gc.get_freeze_count() > 0
        assert gc.get_threshold() == (*thresholds[:2], max(thresholds[2], collector.FULL_EVERY))
        assert not any(o is before for o in gc.get_objects())  # in the permanent generation
        made = Node()
        dead = weakref.ref(made)
        del made
        gc.collect()  # a cycle made within is collected within
        assert dead() is None
        old = weakref.ref(before)
        del before
        gc.collect()  # a cycle older than the block waits for the next collection after it
        assert old() is not None
    assert gc.get_freeze_count() == 0 and gc.get_threshold() == thresholds
    gc.collect()
    assert old() is None


def test_nested_blocks_and_exceptions_unfreeze_once_at_the_end():
    thresholds = gc.get_threshold()
    with pytest.raises(ZeroDivisionError):
        with older_objects_frozen():
            with older_objects_frozen():
                assert gc.get_freeze_count() > 0
            assert gc.get_freeze_count() > 0  # the inner block leaves the outer one's freeze
            1 / 0  # noqa: B018
    assert gc.get_freeze_count() == 0 and collector._ACTIVE == 0 and gc.get_threshold() == thresholds


def test_threads_freeze_once_and_the_last_one_out_unfreezes():
    entered, release = threading.Barrier(2), threading.Event()
    seen = []

    def call() -> None:
        with older_objects_frozen():
            entered.wait()
            release.wait()
        seen.append(gc.get_freeze_count())

    other = threading.Thread(target=call)
    other.start()
    with older_objects_frozen():
        entered.wait()
        release.set()
        other.join()  # it left first: still frozen for this thread
        assert seen and seen[0] > 0 and gc.get_freeze_count() > 0
    assert gc.get_freeze_count() == 0


def test_a_process_that_froze_objects_itself_is_left_alone_from_then_on():
    Node()
    gc.freeze()
    frozen = gc.get_freeze_count()
    with older_objects_frozen():
        pass
    assert gc.get_freeze_count() == frozen  # not unfrozen by us
    gc.unfreeze()
    with older_objects_frozen():
        assert gc.get_freeze_count() == 0  # the latch: never again in this process
    assert collector._FROZEN_BY_OTHERS


def test_a_collector_switched_off_stays_untouched():
    gc.disable()
    with older_objects_frozen():
        assert gc.get_freeze_count() == 0 and not gc.isenabled()
    assert not gc.isenabled()


LOOP_GRADIENT = """
def @loss(%x: Tensor(FloatType(32), Shape(64)), %n: Tensor(IntType(32), Shape())) -> Tensor(FloatType(32), Shape()) {
  let %loop = fn (%i: Tensor(IntType(32), Shape()), %acc: Tensor(FloatType(32), Shape())) -> Tensor(FloatType(32), Shape()) {
    if %i == %n then %acc else %loop(%i + 1, %acc + @take(%x, %i) * @take(%x, %i))
  } in
  %loop(0, 0.0)
}
def @vg(%x: Tensor(FloatType(32), Shape(64)), %n: Tensor(IntType(32), Shape())) {
  Grad(fn (%y: Tensor(FloatType(32), Shape(64))) -> Tensor(FloatType(32), Shape()) { @loss(%y, %n) })(%x)
}
def @plain(%x: Tensor(FloatType(32), Shape(64))) -> Tensor(FloatType(32), Shape()) { @sum(@tanh(%x)) }
"""


def test_a_compiled_gradient_of_a_loop_runs_with_older_objects_frozen():
    """Its collections happen within the freeze; afterwards nothing is frozen, also when the
    call fails; a program of kernels alone is not touched."""
    module = relayish.parse(LOOP_GRADIENT)
    vg, plain = relayish.compile(module, "vg"), relayish.compile(module, "plain")
    x = np.linspace(-1, 1, 64, dtype=np.float32)
    vg(x, np.int32(3)), plain(x)  # compiled: the flag is set by the lowering
    assert vg.heap_objects and not plain.heap_objects
    frozen_at_collection = []

    def watch(phase: str, info: dict) -> None:
        if phase == "start" and not frozen_at_collection:
            frozen_at_collection.append(gc.get_freeze_count())

    gc.callbacks.append(watch)
    try:
        value, (grad,) = vg(x, np.int32(64))  # ~1,000 closures, cells and references: the collector runs
    finally:
        gc.callbacks.remove(watch)
    assert frozen_at_collection and frozen_at_collection[0] > 0
    assert gc.get_freeze_count() == 0
    np.testing.assert_allclose(grad, 2 * x, rtol=1e-6)
    with pytest.raises(RelayRuntimeError, match="take: index 64 is out of range"):
        vg(x, np.int32(65))
    assert gc.get_freeze_count() == 0 and collector._ACTIVE == 0
