"""How Python becomes IR: the shape of the translation (against IR written by hand), spans,
weak literals, calling conventions, and limits that must not be Python's recursion."""

from __future__ import annotations

import os
import pathlib
import subprocess
import sys

import numpy as np
import pytest

import relayish
from frontend import RelayFunction
from relayish import Float, Tensor, relay, relay_model
from relayish.expr import Call, Expr, Function, Let, Op
from relayish.traverse import post_order

from . import corpus_functions
from . import translation_cases as T

ROOT = pathlib.Path(__file__).resolve().parents[2]

F64 = "Tensor(FloatType(64), Shape())"
I32 = "Tensor(IntType(32), Shape())"
POWER = f"""
def @power(%x: {F64}, %n: {I32}) -> {F64} {{
  let %acc = %x * 0.0f64 + 1.0f64 in
  let %stop = %n in
  let %loop = fn (%i, %acc_1) {{
    if %i < %stop then
      let %acc_2 = %acc_1 * %x in
      %loop(%i + 1, %acc_2)
    else
      %acc_1
  }} in
  let %acc_3 = %loop(0, %acc) in
  ({F64}) %acc_3
}}
"""


def test_a_for_loop_becomes_a_local_recursive_function_over_its_carried_variables():
    assert relayish.alpha_equal(T.power.module()[0], relayish.parse(POWER))
    assert float(T.power(2.0, 10)) == 1024.0


def test_the_printed_typed_ir_reads_back():
    for fn in (T.power, T.lambda_literal, T.keywords, T.casts):
        assert relayish.alpha_equal(relayish.parse(fn.astext()), fn.ir)


def test_every_node_of_every_corpus_function_points_into_the_python_file():
    checked = 0
    for value in vars(corpus_functions).values():
        if isinstance(value, RelayFunction):
            module, names = value.module()
            fn = module[names[id(value)]]
            for node in post_order(fn):
                assert isinstance(node, Expr)
                span = node.span
                assert span is not None, (value.__name__, node)
                assert span.file == corpus_functions.__file__, (value.__name__, node)
                assert span.source_line is not None or span.quote(), (value.__name__, node)
            checked += 1
    assert checked >= 40


def test_a_literal_beside_a_lambda_parameter_follows_its_dtype():
    x = np.array([1.0, 2.0, 3.0])
    result = T.lambda_literal(x)
    assert result.dtype == np.float64
    np.testing.assert_array_equal(result, x * 3.0 + 1)
    casts = [n for n in post_order(T.lambda_literal.module()[0]["lambda_literal"])
             if isinstance(n, Call) and isinstance(n.callee, Op) and n.callee.name == "cast_like"]
    assert len(casts) == 2


def test_literals_in_a_chain_on_a_lambda_parameter_keep_the_ir_linear():
    """Each literal's cast_like names its partner: an expression partner is bound once, not
    copied (copies doubled the IR at every step of the chain, and the evaluator ran each)."""
    assert len(T.literal_chain.astext()) < 3000  # the text is the tree: 404,405 characters with copies
    x = np.linspace(-1, 1, 5, dtype=np.float32)
    expected = np.tanh(x)
    for k in range(1, 8):
        expected = expected * np.float32(1.5) + np.float32(k)
    np.testing.assert_allclose(T.literal_chain(x), expected, rtol=1e-6)


def test_a_split_part_beside_a_literal_has_its_dtype():
    module, names = T.split_part.module()
    calls = {n.callee.name for n in post_order(module[names[id(T.split_part)]])
             if isinstance(n, Call) and isinstance(n.callee, Op)}
    assert calls == {"split", "mul", "add"}  # no cast_like: the part's dtype is known
    x = np.arange(12, dtype=np.float32).reshape(2, 6)
    np.testing.assert_array_equal(T.split_part(x), x[:, 3:] * 2 + 1)


def test_keyword_arguments_bind_as_in_python_both_ways():
    a, b, c = np.float32(5.0), np.float32(2.0), np.int32(3)
    assert float(T.keywords(a, c=c, b=b)) == float(T.keywords.python(a, c=c, b=b)) == -1.0
    with pytest.raises(TypeError, match="unexpected keyword argument 'd'"):
        T.keywords(a, b, d=c)
    with pytest.raises(TypeError, match="multiple values for argument 'a'"):
        T.keywords(a, b, c, a=a)
    with pytest.raises(TypeError, match="missing arguments: c"):
        T.keywords(a, b=b)


def test_dtype_markers_are_attribute_values_in_numpy_too():
    x = np.array([1.5, 2.5, 3.5], np.float32)
    for result in (T.casts(x), T.casts.python(x)):
        assert result.dtype == np.float64
        np.testing.assert_array_equal(result, x.astype(np.float64) * 2)


def test_backends_are_the_jit_and_the_evaluator():
    with pytest.raises(ValueError, match=r"unknown backend 'tvm' \(backends: jit, interp\)"):
        relay(backend="tvm")(lambda x: x)


def run_script(tmp_path: pathlib.Path, source: str) -> subprocess.CompletedProcess:
    script = tmp_path / "script.py"
    script.write_text(source)
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(ROOT), os.environ.get("PYTHONPATH", "")])}
    return subprocess.run([sys.executable, str(script)], capture_output=True, text=True, env=env, timeout=300)


def test_long_expressions_and_long_functions_translate_without_recursion_errors(tmp_path):
    terms = " + ".join(["x"] * 900)  # as deep as Python itself compiles
    lines = "\n".join(f"    x = x + {i}.0" for i in range(3000))
    source = f"""
from relayish import relay, Float64

@relay
def wide(x: Float64) -> Float64:
    return {terms}

@relay
def long(x: Float64) -> Float64:
{lines}
    return x

print(float(wide(1.0)), float(long(0.0)))
"""
    result = run_script(tmp_path, source)
    assert result.returncode == 0, result.stderr[-2000:]
    assert result.stdout.split() == ["900.0", str(float(sum(range(3000))))]


def test_string_annotations_are_evaluated(tmp_path):
    source = """
from __future__ import annotations
import numpy as np
from relayish import relay, Float64, Tensor, Dim

N = Dim("N")

@relay
def scale(x: Tensor[Float64, (N,)], k: Float64) -> Tensor[Float64, (N,)]:
    return x * k

@relay
def twice(x: Tensor[Float64, (N,)]) -> Tensor[Float64, (N,)]:
    return scale(x, 2.0)

print(twice(np.arange(3.0)).tolist())
"""
    result = run_script(tmp_path, source)
    assert result.returncode == 0, result.stderr[-2000:]
    assert result.stdout.strip() == "[0.0, 2.0, 4.0]"


def test_the_returned_variable_is_ascribed_the_annotated_type():
    fn = T.power.module()[0]["power"]
    body = fn.body
    while isinstance(body, Let):
        body = body.body
    assert type(body).__name__ == "Ascribe" and body.span.line == T.power.source.span(T.power.source.node).line + 4
    assert isinstance(fn, Function) and fn.ret_type == relayish.parse(POWER)["power"].ret_type


def test_the_default_backend_is_the_jit_unless_the_environment_says_otherwise(monkeypatch):
    def f(x: Tensor[Float, 3]) -> Tensor[Float, 3]:
        return x * 2.0

    monkeypatch.delenv("RELAYISH_BACKEND", raising=False)
    assert relay(f).backend == "jit" and relay_model(f).backend == "jit"
    assert relay(backend="interp")(f).backend == "interp"
    monkeypatch.setenv("RELAYISH_BACKEND", "interp")
    assert relay(f).backend == "interp"
    monkeypatch.setenv("RELAYISH_BACKEND", "tvm")
    with pytest.raises(ValueError, match="RELAYISH_BACKEND='tvm' is not a backend"):
        relay(f)
