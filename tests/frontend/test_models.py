"""Models as in the paper's Figure 4: hidden parameters per layer call site, shapes from the
types, gradients (checked by central differences of the forward pass), SGD, export, save
and load, and the errors around them."""

from __future__ import annotations

import numpy as np
import pytest

import relayish
from relayish import FrontendError, relay
from relayish.types import FloatType, Shape, TensorType

from . import models

F64 = FloatType(64)


def data(n: int = 3, seed: int = 0) -> tuple[np.ndarray, np.ndarray]:
    rng = np.random.default_rng(seed)
    return rng.uniform(-1, 1, (n, 1, 8, 8)), np.eye(3)[rng.integers(0, 3, n)]


def test_parameter_shapes_come_from_the_types_one_set_per_call_site():
    assert models.small.hidden_params() == (
        ("conv_weight", TensorType(F64, Shape(2, 1, 3, 3))),
        ("conv_bias", TensorType(F64, Shape(2, 1, 1))),
        ("linear2_weight", TensorType(F64, Shape(5, 18))),  # (8-3+1)/2 = 3; 2*3*3 = 18 features
        ("linear2_bias", TensorType(F64, Shape(5))),
        ("linear3_weight", TensorType(F64, Shape(3, 5))),  # no_bias=True: no bias
    )
    assert [n for n, _ in models.strided.hidden_params()] == ["conv2d1_weight", "conv2d1_bias"]
    assert models.strided.hidden_params()[0][1] == TensorType(FloatType(32), Shape(4, 3, 3, 3))


def test_create_model_initializes_gaussian_weights_scaled_by_fan_in_and_zero_biases():
    model = relay.create_model(models.small, seed=3)
    again = relay.create_model(models.small, seed=3)
    assert list(model.params) == [n for n, _ in models.small.hidden_params()]
    for name, value in model.params.items():
        np.testing.assert_array_equal(value, again.params[name])
        assert value.dtype == np.float64
    assert not model.params["conv_bias"].any() and not model.params["linear2_bias"].any()
    big = relay.create_model(models.strided, seed=0).params["conv2d1_weight"]
    assert big.dtype == np.float32
    assert abs(big.std() - 1 / np.sqrt(27)) < 0.05  # 108 draws with sigma 0.19
    fixed = relay.create_model(models.small, seed=0, sigma=0.01).params["linear2_weight"]
    assert fixed.std() < 0.02


def forward_loss(model, x, y) -> float:
    return float(relay.grad(model, models.small_loss, (x, y)).value)


def test_gradients_of_every_parameter_agree_with_central_differences():
    model = relay.create_model(models.small, seed=1)
    x, y = data()
    result = relay.grad(model, models.small_loss, (x, y))
    assert set(result.grads) == set(model.params)
    rng = np.random.default_rng(5)
    eps = 1e-6
    for name, value in model.params.items():
        assert result.grads[name].shape == value.shape and result.grads[name].dtype == value.dtype
        for _ in range(3):
            direction = rng.normal(size=value.shape)
            direction /= np.linalg.norm(direction)
            saved = value.copy()
            model.params[name] = saved + eps * direction
            up = forward_loss(model, x, y)
            model.params[name] = saved - eps * direction
            down = forward_loss(model, x, y)
            model.params[name] = saved
            numeric = (up - down) / (2 * eps)
            analytic = float(np.sum(result.grads[name] * direction))
            assert analytic == pytest.approx(numeric, rel=1e-5, abs=1e-8), name


def test_a_function_reaching_the_model_through_another_gets_the_sum_of_both_gradients():
    model = relay.create_model(models.small, seed=2)
    x, y = data()
    twice = relay.grad(model, models.small_loss_twice, (x, y))
    first = relay.grad(model, models.small_loss, (x, y))
    second = relay.grad(model, models.small_loss, (x * 0.5, y))
    assert float(twice.value) == pytest.approx(float(first.value) + float(second.value), rel=1e-12)
    for name in model.params:
        np.testing.assert_allclose(twice.grads[name], first.grads[name] + second.grads[name], rtol=1e-10, atol=1e-14)


def test_sgd_steps_lower_the_loss_and_export_snapshots_the_parameters():
    model = relay.create_model(models.small, seed=0)
    x, y = data(8)
    losses = []
    for _ in range(30):
        step = relay.grad(model, models.small_loss, (x, y))
        losses.append(float(step.value))
        before = model.params["linear3_weight"].copy()
        relay.update_model_params(model, step, lr=0.5)
        np.testing.assert_allclose(model.params["linear3_weight"], before - 0.5 * step.grads["linear3_weight"])
    assert losses[-1] < 0.5 * losses[0]
    predict = relay.export_model(model)
    out = predict(x)
    assert out.shape == (8, 3) and out.dtype == np.float64
    np.testing.assert_allclose(out, model(x))
    relay.update_model_params(model, {"conv_bias": np.ones((2, 1, 1))}, lr=1.0)  # a plain dict works too
    np.testing.assert_array_equal(predict(x), out)  # the export kept its own copy
    assert not np.allclose(model(x), out)


def test_an_sgd_step_updates_in_place_and_checks_every_gradient_first():
    model = relay.create_model(models.small, seed=0)
    weight = model.params["linear3_weight"]
    before = {name: p.copy() for name, p in model.params.items()}
    good = {name: np.ones_like(p) for name, p in model.params.items()}
    with pytest.raises(ValueError, match="shape"):
        relay.update_model_params(model, {**good, "linear3_weight": np.ones(3)}, lr=0.5)
    with pytest.raises(KeyError, match="no parameter"):
        relay.update_model_params(model, {**good, "nope": np.ones(3)}, lr=0.5)
    for name, p in model.params.items():  # nothing half done
        np.testing.assert_array_equal(p, before[name])
    relay.update_model_params(model, good, lr=0.5)
    assert model.params["linear3_weight"] is weight
    np.testing.assert_array_equal(weight, before["linear3_weight"] - np.float32(0.5))


def test_save_and_load_round_trip_and_reject_mismatched_files(tmp_path):
    model = relay.create_model(models.small, seed=4)
    path = tmp_path / "small.npz"
    model.save(path)
    loaded = relay.load_model(models.small, path)
    x, _ = data()
    np.testing.assert_array_equal(loaded(x), model(x))
    np.savez(tmp_path / "missing.npz", **{k: v for k, v in model.params.items() if k != "conv_bias"})
    with pytest.raises(ValueError, match="no parameter conv_bias"):
        relay.load_model(models.small, tmp_path / "missing.npz")
    np.savez(tmp_path / "shape.npz", **{**model.params, "conv_bias": np.zeros((3, 1, 1))})
    with pytest.raises(ValueError, match=r"conv_bias is float64\[3, 1, 1\], the model needs float64\[2, 1, 1\]"):
        relay.load_model(models.small, tmp_path / "shape.npz")
    np.savez(tmp_path / "extra.npz", **model.params, other=np.zeros(1))
    with pytest.raises(ValueError, match="does not have: other"):
        relay.load_model(models.small, tmp_path / "extra.npz")


def test_typed_ir_of_the_loss_shows_the_threaded_parameters_and_parses_back():
    text = relayish.astext(models.small_loss.ir)
    assert "%conv_weight: Tensor(FloatType(64), Shape(2, 1, 3, 3))" in text
    assert "@small(%x, %conv_weight, %conv_bias" in text
    assert relayish.alpha_equal(relayish.parse(text), models.small_loss.ir)


def test_model_errors_point_at_the_python_code():
    with pytest.raises(FrontendError, match="layers must be called in the model's straight-line code") as err:
        models.layer_in_branch.hidden_params()
    assert err.value.span.file == models.__file__ and "relay.linear(x, num_hidden=2)" in str(err.value)
    with pytest.raises(FrontendError, match=r"input features of relay.linear .* must be a number") as err:
        models.symbolic_features.hidden_params()
    assert err.value.span.file == models.__file__
    with pytest.raises(FrontendError, match="can only be called in a @relay_model function"):
        models.plain_layer(np.ones((2, 4), np.float32))
    with pytest.raises(FrontendError, match="runs with parameters: model = relay.create_model"):
        models.small(data()[0])
    with pytest.raises(FrontendError, match="uses the parameters of the model small"):
        models.small_loss(*data())
    with pytest.raises(FrontendError, match="does not use the model strided"):
        relay.grad(relay.create_model(models.strided), models.small_loss, data())
    with pytest.raises(FrontendError, match="is a layer"):
        relay.linear(np.ones((2, 4)), num_hidden=2)
    with pytest.raises(TypeError, match="relay.create_model takes a @relay_model function"):
        relay.create_model(models.small_loss)
