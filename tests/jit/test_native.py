"""Scalar globals compiled natively (jit/native.py): bit-for-bit the evaluator's results, on
hand-picked edge values and generated expressions; what is not exact stays Python; deep
recursion falls back to Python instead of overflowing the C stack; loops compile even without
an exit, and SIGINT stops them."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import threading
import time

import numpy as np
import pytest
from hypothesis import given, settings, strategies as st

import relayish
from jit.native import MAX_DEPTH
from relayish import Int32, relay

I32, F32 = "Tensor(IntType(32), Shape())", "Tensor(FloatType(32), Shape())"


def compiled_and_evaluated(source: str, name: str, *args):
    module = relayish.parse(source)
    f = relayish.compile(module, name)
    return f, f(*args), relayish.evaluate(module, name, *args)


def assert_identical(actual, expected) -> None:
    """Same dtype and the same bits (NaNs alike)."""
    actual, expected = np.asarray(actual), np.asarray(expected)
    assert actual.dtype == expected.dtype and actual.shape == expected.shape == ()
    if np.isnan(expected) if expected.dtype.kind == "f" else False:
        assert np.isnan(actual)
    else:
        assert actual.tobytes() == expected.tobytes(), (actual, expected)


def is_native(f, name: str) -> bool:
    return f"k_native_g_{name}" in f.source


def test_the_w6_programs_run_natively():
    from bench.programs import W6_TEXT

    for name, args in (("w6_fib", (np.int32(15), np.float32(0), np.float32(1))),
                       ("w6_loop", (np.float32(0.5), np.int32(1000)))):
        f, actual, expected = compiled_and_evaluated(W6_TEXT, name, *args)
        assert is_native(f, name)
        assert_identical(actual, expected)


DOWN = f"""
def @down(%n: {I32}) -> {F32} {{ if %n == 0 then 0.0 else @down(%n - 1) + 1.0 }}
"""


@pytest.mark.parametrize("n", [10, MAX_DEPTH + 10, 50_000])
def test_recursion_past_the_native_depth_runs_again_in_python(n):
    f, actual, expected = compiled_and_evaluated(DOWN, "down", np.int32(n))
    assert is_native(f, "down")
    assert_identical(actual, expected)
    assert float(actual) == n


def test_recursion_too_deep_for_python_too_is_a_clear_error():
    f = relayish.compile(relayish.parse(DOWN), "down")
    with pytest.raises(relayish.RelayRuntimeError, match="deeper than"):
        f(np.int32(300_000))


def test_what_is_not_bit_exact_natively_stays_python():
    source = f"""
    def @smooth(%x: {F32}) -> {F32} {{ @tanh(%x) * 2.0 }}
    def @top(%x: {F32}) -> {F32} {{ @maximum(%x, -0.0) }}
    def @half(%n: {I32}) -> {I32} {{ %n / 2 }}
    def @to_int(%x: {F32}) -> {I32} {{ @cast(%x, dtype=IntType(32)) }}
    def @even(%n: {I32}) -> Tensor(BoolType, Shape()) {{ if %n == 0 then true else @odd(%n - 1) }}
    def @odd(%n: {I32}) -> Tensor(BoolType, Shape()) {{ if %n == 0 then false else @even(%n - 1) }}
    def @user(%x: {F32}) -> {F32} {{ @smooth(%x) + 1.0 }}
    """
    for name, arg in (("smooth", np.float32(0.3)), ("top", np.float32(0.0)), ("half", np.int32(-7)), ("to_int", np.float32(2.5)),
                      ("even", np.int32(7)), ("user", np.float32(0.3))):
        f, actual, expected = compiled_and_evaluated(source, name, arg)
        assert not is_native(f, name), name
        assert_identical(actual, expected)


def test_native_globals_call_each_other_and_local_loops():
    source = f"""
    def @step(%x: {F32}) -> {F32} {{ %x * 0.5 + 1.0 }}
    def @twice(%x: {F32}) -> {F32} {{ @step(@step(%x)) }}
    def @main(%x: {F32}, %n: {I32}) -> {F32} {{
      let %bump = fn (%y: {F32}) -> {F32} {{ @twice(%y) - 0.25 }} in
      let %loop = fn (%k: {I32}, %y: {F32}) -> {F32} {{ if %k >= %n then %y else %loop(%k + 1, %bump(%y)) }} in
      %loop(0, %x)
    }}"""
    f, actual, expected = compiled_and_evaluated(source, "main", np.float32(3.0), np.int32(40))
    assert is_native(f, "main")
    assert_identical(actual, expected)


def test_a_local_function_recursing_outside_tail_position_stays_python():
    source = f"""
    def @main(%n: {I32}) -> {I32} {{
      let %sum = fn (%k: {I32}) -> {I32} {{ if %k == 0 then 0 else %k + %sum(%k - 1) }} in
      %sum(%n)
    }}"""
    f, actual, expected = compiled_and_evaluated(source, "main", np.int32(100))
    assert not is_native(f, "main")
    assert_identical(actual, expected)


# loops without an exit, and SIGINT ---------------------------------------------------------
NO_EXIT = f"def @main(%n: {I32}) -> {I32} {{ @main(%n + 1) }}"
LOCAL_NO_EXIT = f"""
def @main(%n: {I32}) -> {I32} {{
  let %loop = fn (%k: {I32}) -> {I32} {{ %loop(%k + 1) }} in
  %loop(%n)
}}"""


@relay(backend="jit")
def spin(n: Int32) -> Int32:
    while True:
        n = n + 1
    return n


@pytest.mark.parametrize("module", [relayish.parse(NO_EXIT), relayish.parse(LOCAL_NO_EXIT), spin.ir],
                         ids=["global", "local", "while True"])
def test_a_loop_without_an_exit_compiles_natively(module):
    name = "main" if "main" in module else "spin"
    assert is_native(relayish.compile(module, name), name)  # Numba refused: "liveness info missing"


# a loop with an exit it never takes (x tends to 1), which LLVM cannot prove
ENDLESS = f"def @main(%x: {F32}) -> {F32} {{ if %x < 0.0 then %x else @main(%x * 0.999 + 0.001) }}"
SIGINT_CHILD = f"""
import signal
import numpy as np
import relayish

signal.signal(signal.SIGINT, signal.default_int_handler)  # whatever the test runner left
f = relayish.compile(relayish.parse({ENDLESS!r}), "main")
assert "k_native_g_main" in f.source
print("running", flush=True)
f(np.float32(0.5))
"""


@pytest.mark.skipif(sys.platform == "win32", reason="POSIX signals")
def test_sigint_stops_a_native_loop_within_2_seconds():
    child = subprocess.Popen([sys.executable, "-c", SIGINT_CHILD], stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                             text=True)
    watchdog = threading.Timer(120, child.kill)  # a child that never prints must not hang the test
    watchdog.start()
    try:
        started = child.stdout.readline()
        time.sleep(0.3)  # well inside the loop
        child.send_signal(signal.SIGINT)
        try:
            _, err = child.communicate(timeout=2)
        except subprocess.TimeoutExpired:
            pytest.fail("the native loop went on for 2 s after SIGINT")
    finally:
        watchdog.cancel()
        child.kill()
        child.communicate()
    assert started == "running\n", err
    assert "KeyboardInterrupt" in err, err


# generated expressions --------------------------------------------------------------------
DTYPES = {"int8": "IntType(8)", "int32": "IntType(32)", "int64": "IntType(64)", "uint8": "UIntType(8)",
          "float32": "FloatType(32)", "float64": "FloatType(64)"}
BINARY = ["{0} + {1}", "{0} - {1}", "{0} * {1}"]
INT_BINARY = ["@maximum({0}, {1})", "@minimum({0}, {1})"]  # a float maximum of 0.0 and -0.0 stays Python
FLOAT_BINARY = ["{0} / {1}"]
UNARY = ["-{0}"]
FLOAT_UNARY = ["@abs({0})", "@sqrt({0})"]
COMPARE = ["<", "<=", "==", "!=", ">", ">="]


@st.composite
def expressions(draw, floating: bool, depth: int = 3) -> str:
    if depth == 0 or draw(st.integers(0, 3)) == 0:
        return draw(st.sampled_from(["%a", "%b"]))
    kind = draw(st.sampled_from(["binary", "unary", "if"]))
    if kind == "binary":
        template = draw(st.sampled_from(BINARY + (FLOAT_BINARY if floating else INT_BINARY)))
        return "(" + template.format(draw(expressions(floating, depth - 1)), draw(expressions(floating, depth - 1))) + ")"
    if kind == "unary":
        template = draw(st.sampled_from(UNARY + (FLOAT_UNARY if floating else [])))
        return "(" + template.format(draw(expressions(floating, depth - 1))) + ")"
    left, right = draw(expressions(floating, depth - 1)), draw(expressions(floating, depth - 1))
    then, other = draw(expressions(floating, depth - 1)), draw(expressions(floating, depth - 1))
    return f"(if {left} {draw(st.sampled_from(COMPARE))} {right} then {then} else {other})"


def scalars(dtype: str):
    if np.dtype(dtype).kind == "f":
        return st.floats(width=np.dtype(dtype).itemsize * 8, allow_nan=True, allow_infinity=True).map(np.dtype(dtype).type)
    info = np.iinfo(dtype)
    return st.integers(int(info.min), int(info.max)).map(np.dtype(dtype).type)


@settings(max_examples=400 if os.environ.get("RELAYISH_HYPOTHESIS") == "heavy" else 25, deadline=None)
@given(data=st.data())
def test_generated_scalar_expressions_are_bit_exact(data):
    dtype = data.draw(st.sampled_from(sorted(DTYPES)))
    ty = f"Tensor({DTYPES[dtype]}, Shape())"
    body = data.draw(expressions(np.dtype(dtype).kind == "f"))
    source = f"def @main(%a: {ty}, %b: {ty}) -> {ty} {{ {body} }}"
    module = relayish.parse(source)
    f = relayish.compile(module, "main")
    assert is_native(f, "main"), source
    for _ in range(4):
        a, b = data.draw(scalars(dtype)), data.draw(scalars(dtype))
        assert_identical(f(a, b), relayish.evaluate(module, "main", a, b))
