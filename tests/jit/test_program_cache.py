"""Optimized programs on disk (jit/program_cache.py): a module comes back from its flat form the
same (structure, spans, shared variables, no recursion on deep chains); a second compile of the
same program loads it instead of optimizing; any change of the module, global or level is a new
entry; a damaged entry or a cache that cannot be written costs only the saving."""

from __future__ import annotations

import importlib
import os
import pickle
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

import relayish
from jit import program_cache
from jit.kernels.registry import cache_dir
from relayish.traverse import post_order
from tests.core.test_deep import let_chain
from tests.jit.passes.corpus import corpus

jit_compile = importlib.import_module("jit.compile")  # the module: the package exports the function by its name
W = "Tensor(FloatType(32), Shape(3))"
TEXT = f"""
def @f(%x: {W}) -> Tensor(FloatType(32), Shape()) {{ @sum(@tanh(%x) * %x) }}
def @g(%x: {W}) {{ Grad(@f)(%x) }}
"""


def roundtrip(module: relayish.Module) -> relayish.Module:
    return program_cache.unflatten(pickle.loads(pickle.dumps(program_cache.flatten(module))))


@pytest.mark.parametrize("program", corpus(), ids=lambda p: p.entry)
def test_modules_come_back_the_same_with_their_spans(program):
    back = roundtrip(program.module)
    assert relayish.alpha_equal(back, program.module)
    for name, fn in program.module.functions.items():
        assert [n.span for n in post_order(back[name])] == [n.span for n in post_order(fn)]


def test_a_20000_deep_let_chain_round_trips_without_recursion():
    module = let_chain(20_000)  # 20 times the recursion limit
    back = roundtrip(module)
    assert sum(1 for _ in post_order(back["main"])) == sum(1 for _ in post_order(module["main"]))


def counting_optimize(monkeypatch) -> list:
    calls = []
    original = jit_compile.optimize
    monkeypatch.setattr(jit_compile, "optimize", lambda *a: calls.append(a[1:]) or original(*a))
    return calls


def entries() -> list[Path]:
    return sorted((cache_dir() / "programs").glob("*.pickle"))


def test_a_second_compile_loads_the_optimized_program(monkeypatch, tmp_path):
    monkeypatch.setenv("RELAYISH_CACHE_DIR", str(tmp_path))
    calls = counting_optimize(monkeypatch)
    x = np.array([0.5, -1.0, 2.0], np.float32)
    first = relayish.compile(relayish.parse(TEXT), "g")
    assert len(calls) == 1 and len(entries()) == 1
    second = relayish.compile(relayish.parse(TEXT), "g")  # what a new process does
    assert len(calls) == 1, "the optimizer did not run again"
    assert relayish.alpha_equal(second.module, first.module)
    np.testing.assert_array_equal(second(x)[1][0], first(x)[1][0])
    relayish.compile(relayish.parse(TEXT), "g", opt_level=2)  # another level, another global,
    relayish.compile(relayish.parse(TEXT), "f")
    relayish.compile(relayish.parse("\n" + TEXT), "g")  # or the same text one line lower: new entries
    assert len(calls) == 4 and len(entries()) == 4


def test_unknown_dimensions_and_operators_declared_by_relation_load(monkeypatch, tmp_path):
    """What only such modules hold (``?``'s atom, a ``RelationDecl``) is what the unpickler allows."""
    monkeypatch.setenv("RELAYISH_CACHE_DIR", str(tmp_path))
    calls = counting_optimize(monkeypatch)
    text = ("operator @hypot : relation broadcast\n"
            "def @f(%a: Tensor(FloatType(64), Shape(?)), %b: Tensor(FloatType(64), Shape(2, 1))) { @hypot(%a, %b) }\n")
    relayish.register_operator("hypot", np.hypot, relation="broadcast")
    try:
        first = relayish.compile(relayish.parse(text), "f")
        second = relayish.compile(relayish.parse(text), "f")
        assert len(calls) == 1, "loaded, not optimized again"
        a, b = np.arange(3.0), np.ones((2, 1))
        np.testing.assert_array_equal(second(a, b), first(a, b))
    finally:
        relayish.unregister_operator("hypot")


def test_a_damaged_entry_is_computed_and_written_again(monkeypatch, tmp_path):
    monkeypatch.setenv("RELAYISH_CACHE_DIR", str(tmp_path))
    calls = counting_optimize(monkeypatch)
    relayish.compile(relayish.parse(TEXT), "g")
    (entry,) = entries()
    entry.write_bytes(entry.read_bytes()[:40])
    again = relayish.compile(relayish.parse(TEXT), "g")
    assert len(calls) == 2
    assert entry.stat().st_size > 40
    assert again(np.ones(3, np.float32))[0] == pytest.approx(np.sum(np.tanh(1.0)) * 3, rel=1e-6)


def test_a_cache_that_cannot_be_written_only_costs_the_saving(monkeypatch, tmp_path):
    monkeypatch.setenv("RELAYISH_CACHE_DIR", str(tmp_path))
    (tmp_path / "programs").write_text("a file where the directory would go")
    assert relayish.compile(relayish.parse(TEXT), "g")(np.ones(3, np.float32))[0] > 0
    assert (tmp_path / "programs").read_text() == "a file where the directory would go"
    assert not list(tmp_path.glob(".tmp_*")) and not list(tmp_path.rglob("*.pickle"))


POLYMORPHIC = """
def @f[n: Dim](%x: Tensor(FloatType(32), Shape(n, 2 * n))) -> Tensor(FloatType(32), Shape()) { @sum(@tanh(%x) * %x) }
def @g[n: Dim](%x: Tensor(FloatType(32), Shape(n, 2 * n))) { Grad(@f)(%x) }
"""
RUN = """
import numpy as np, relayish
f = relayish.compile(relayish.parse({text!r}), "g")
print(repr(float(f(np.full((2, 4), 0.5, np.float32))[0])))
"""


def test_a_second_process_loads_what_the_first_stored_symbolic_shapes_included(tmp_path):
    """Keys are the same in every process (the text, not hashes that differ per process), and a
    loaded program with dimension variables still type checks and runs."""
    env = dict(os.environ, RELAYISH_CACHE_DIR=str(tmp_path))
    outputs = [subprocess.run([sys.executable, "-c", RUN.format(text=POLYMORPHIC)], env=env, capture_output=True,
                              text=True, check=True, cwd=Path(__file__).resolve().parents[2]).stdout for _ in range(2)]
    assert outputs[0] == outputs[1] and float(outputs[0]) == pytest.approx(8 * 0.5 * np.tanh(0.5), rel=1e-6)
    assert len(list((tmp_path / "programs").glob("*.pickle"))) == 1


def test_types_and_dimensions_pickle_with_the_hashes_of_this_process():
    module = relayish.parse(POLYMORPHIC)
    x = module["f"].params[0].type_annotation
    loaded = pickle.loads(pickle.dumps(x))
    (n,) = module["f"].type_params
    (m,) = {atom for d in loaded.shape.dims for atom in d.atoms()}
    assert relayish.astext(loaded) == relayish.astext(x) and m is not n  # a new variable, used consistently
    static = relayish.parse("def @h(%x: Tensor(FloatType(32), Shape(64, 3))) { %x }")["h"].params[0].type_annotation
    copy = pickle.loads(pickle.dumps(static))
    assert copy == static and hash(copy) == hash(static) and {copy: 1}[static] == 1
