"""Models, as in the Relay paper's Figure 4: ``@relay_model`` functions whose layer calls
own hidden parameters, one set per call site.

A layer's parameter shapes follow from the type of its input, which the type checker
finds: the model is translated up to each layer in turn (a *probe* returning the layer's
input) and type-checked. Layers: ``relay.conv2d(x, num_filter=F, ksize=K, strides=1,
padding=0, no_bias=False)`` (weight (F, C, KH, KW), bias (F, 1, 1)) and
``relay.linear(x, num_hidden=H, no_bias=False)`` (weight (H, in), bias (H,)).
"""

from __future__ import annotations

import math
import os
from typing import Any, Mapping, NamedTuple

import numpy as np

from relayish.errors import FrontendError
from relayish.expr import Call, Function, GlobalVar, Grad, Var
from relayish.module import Module
from relayish.tracebacks import user_facing
from relayish.types import Shape, TensorType, Type
from typecheck import infer

from .arguments import one_number
from .function import PYTHON_MODE, Decorated, build_module, run, unique_name
from .translate import Layer, LayerSite, ModelContext, Translator


class RelayModel(Decorated):
    """A ``@relay_model`` function: it runs only with parameters, from ``relay.create_model``."""

    is_model = True

    def __init__(self, fn: Any, relay_namespace: Any, backend: str | None = None):
        super().__init__(fn, relay_namespace, backend)
        self._layers: tuple[Layer, ...] | None = None

    def __call__(self, *args: Any) -> Any:
        what = "runs in NumPy only through relay.export_model" if PYTHON_MODE.get() else "runs with parameters"
        raise FrontendError(f"the model {self.__name__} {what}: model = relay.create_model({self.__name__}, seed=0), "
                            f"then relay.export_model(model)(...) or relay.grad(model, loss, args)")

    def layer_specs(self) -> tuple[Layer, ...]:
        """Each layer's hidden parameters, in call order, found by probing the model."""
        if self._layers is None:
            layers: list[Layer] = []
            while True:
                ctx = ModelContext(hidden=flatten(layers), layers=tuple(layers), probe=True)
                translators: dict[int, Translator] = {}
                module, names = build_module(self, {id(self): ctx}, translators)
                site = translators[id(self)].probed
                if site is None:
                    break
                layers.append(layer_for(site, infer(module)[names[id(self)]].ret_type))
            self._layers = tuple(layers)
        return self._layers

    def hidden_params(self) -> tuple[tuple[str, Type], ...]:
        return flatten(self.layer_specs())


def flatten(layers: list[Layer] | tuple[Layer, ...]) -> tuple[tuple[str, Type], ...]:
    return tuple(p for layer in layers for p in layer.params)


def layer_for(site: LayerSite, input_type: Type) -> Layer:
    """The parameters of one layer call, from the type of its input."""
    if not isinstance(input_type, TensorType) or not isinstance(input_type.shape, Shape):
        raise FrontendError(f"the input of the layer relay.{site.kind} must be a tensor, not {input_type}", site.span)
    dims = input_type.shape.dims
    dtype = input_type.dtype
    bias = not site.attrs.get("no_bias", False)
    if site.kind == "conv2d":
        if len(dims) != 4:
            raise FrontendError(f"relay.conv2d takes NCHW input (rank 4), but its input is {input_type}", site.span)
        channels = dims[1].value
        if channels is None:
            raise FrontendError(f"the number of input channels of relay.conv2d ({dims[1]}) must be a number known from "
                                "the annotations: it sets the weight's shape", site.span)
        ksize = site.attrs["ksize"]
        kh, kw = (ksize, ksize) if isinstance(ksize, int) else tuple(ksize)
        params = [(f"{site.name}_weight", TensorType(dtype, Shape(site.attrs["num_filter"], channels, kh, kw)))]
        if bias:
            params.append((f"{site.name}_bias", TensorType(dtype, Shape(site.attrs["num_filter"], 1, 1))))
    else:
        features = dims[-1].value if dims else None
        if features is None:
            raise FrontendError(f"the input features of relay.linear ({input_type}) must be a number known from the "
                                "annotations: it sets the weight's shape", site.span)
        params = [(f"{site.name}_weight", TensorType(dtype, Shape(site.attrs["num_hidden"], features)))]
        if bias:
            params.append((f"{site.name}_bias", TensorType(dtype, Shape(site.attrs["num_hidden"]))))
    return Layer(site.kind, tuple(params))


class Model:
    """A model's parameters (``params``: name -> array, in layer order) and its definition."""

    def __init__(self, definition: RelayModel, params: dict[str, np.ndarray]):
        self.definition = definition
        self.params = params

    @user_facing
    def __call__(self, *args: Any) -> Any:
        module, names = self.definition.module()
        return run(module, names[id(self.definition)], self.definition, args, tuple(self.params.values()))

    def __repr__(self) -> str:
        shapes = ", ".join(f"{n}: {p.shape}" for n, p in self.params.items())
        return f"<Model {self.definition.__name__} ({shapes})>"

    def save(self, path: str | os.PathLike) -> None:
        """Save the parameters to ``.npz`` (read back by ``relay.load_model``)."""
        np.savez(path, **self.params)


@user_facing
def create_model(definition: RelayModel, seed: int = 0, sigma: float | None = None) -> Model:
    """Parameters for a model: weights Gaussian with mean 0 and standard deviation ``sigma``
    (default 1 / sqrt(fan-in), the fan-in being a weight's size over its first axis, which
    keeps activations of order 1), biases zero."""
    if not isinstance(definition, RelayModel):
        raise TypeError(f"relay.create_model takes a @relay_model function, not {definition!r}")
    if sigma is not None:
        sigma = float(one_number(sigma, np.float64, "relay.create_model: sigma"))
    rng = np.random.default_rng(seed)
    params = {}
    for name, ty in definition.hidden_params():
        shape = ty.shape.static()
        dtype = ty.dtype.to_numpy()
        if name.endswith("_bias"):
            params[name] = np.zeros(shape, dtype)
        else:
            std = sigma if sigma is not None else 1.0 / math.sqrt(math.prod(shape[1:]))
            params[name] = rng.normal(0.0, std, shape).astype(dtype)
    return Model(definition, params)


@user_facing
def load_model(definition: RelayModel, path: str | os.PathLike) -> Model:
    """A model whose parameters are read from an ``.npz`` that ``Model.save`` wrote; every
    parameter must be there with its shape and dtype."""
    with np.load(path) as data:
        stored = {k: data[k] for k in data.files}
    params = {}
    for name, ty in definition.hidden_params():
        if name not in stored:
            raise ValueError(f"{path}: no parameter {name} for the model {definition.__name__} (it has: {', '.join(stored)})")
        value, shape, dtype = stored.pop(name), ty.shape.static(), ty.dtype.to_numpy()
        if value.shape != shape or value.dtype != dtype:
            raise ValueError(f"{path}: parameter {name} is {value.dtype}{list(value.shape)}, the model needs {dtype}{list(shape)}")
        params[name] = value
    if stored:
        raise ValueError(f"{path}: parameters the model {definition.__name__} does not have: {', '.join(stored)}")
    return Model(definition, params)


class ModelGrad(NamedTuple):
    """What ``relay.grad(model, loss, args)`` returns: the loss and its gradient per parameter."""

    value: np.ndarray
    grads: dict[str, np.ndarray]


@user_facing
def model_grad(model: Model, loss: Decorated, args: tuple) -> ModelGrad:
    """The value of ``loss(*args)`` and its gradient with respect to every model parameter."""
    if not isinstance(model, Model):
        raise TypeError(f"relay.grad(model, loss, args): model must come from relay.create_model, not {model!r}")
    if not isinstance(loss, Decorated) or loss.model_definition() is not model.definition:
        raise FrontendError(f"relay.grad(model, loss, args): {getattr(loss, '__name__', loss)!r} does not use the model "
                            f"{model.definition.__name__}")
    module, name = param_grad_module(loss)
    value, grads = run(module, name, loss, tuple(args), tuple(model.params.values()))
    return ModelGrad(value, dict(zip(model.params, grads)))


def param_grad_module(loss: Decorated) -> tuple[Module, str]:
    """``loss``'s module with a global ``(args..., params...) -> (value, param gradients)``:
    the arguments are constants to ``Grad``, so their gradients are never computed."""
    cached = getattr(loss, "_param_grad", None)
    if cached is None:
        module, names = loss.module()
        fn = module[names[id(loss)]]
        hidden = len(loss.model_definition().hidden_params())
        args = [Var(p.name_hint, p.type_annotation) for p in fn.params[:len(fn.params) - hidden]]
        params = [Var(p.name_hint, p.type_annotation) for p in fn.params[len(fn.params) - hidden:]]
        inner_params = [Var(p.name_hint, p.type_annotation) for p in params]
        inner = Function(inner_params, Call(GlobalVar(names[id(loss)]), args + inner_params))
        wrapper = Function(args + params, Call(Grad(inner, span=fn.span), params), type_params=fn.type_params, span=fn.span)
        name = unique_name(f"{names[id(loss)]}_param_grad", set(module.functions))
        cached = loss._param_grad = (module.with_function(name, wrapper), name)
    return cached


@user_facing
def update_model_params(model: Model, grads: ModelGrad | Mapping[str, np.ndarray], lr: float = 0.01) -> None:
    """One step of plain SGD, in place: ``p -= lr * gradient`` (the paper's one form of mutation)."""
    grads = grads.grads if isinstance(grads, ModelGrad) else grads
    steps = {}
    for name, g in grads.items():  # every gradient checked before any parameter changes
        if name not in model.params:
            raise KeyError(f"the model has no parameter {name}")
        p, g = model.params[name], np.asarray(g)
        if g.shape != p.shape:
            raise ValueError(f"the gradient of {name} has shape {g.shape}, the parameter {p.shape}")
        rate = one_number(lr, p.dtype, "relay.update_model_params: lr")
        steps[name] = rate * g.astype(p.dtype, copy=False)
    for name, step in steps.items():
        p = model.params[name]
        if p.flags.writeable:
            p -= step
        else:  # an array the model does not own (read-only): replaced
            model.params[name] = p - step


def export_model(model: Model) -> Any:
    """A plain callable running the model with a copy of its current parameters."""
    snapshot = tuple(np.array(p) for p in model.params.values())
    definition = model.definition
    module, names = definition.module()

    @user_facing
    def exported(*args: Any) -> Any:
        return run(module, names[id(definition)], definition, args, snapshot)
    exported.__name__ = definition.__name__
    return exported


__all__ = ["Model", "ModelGrad", "RelayModel", "create_model", "export_model", "load_model",
           "model_grad", "update_model_params"]
