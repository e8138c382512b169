"""``relay``: the decorator and the operator namespace in one object, as in the paper.

Inside a decorated function, ``relay.tanh(x)`` is translated to the operator call. Outside
(undecorated code, ``f.python(...)``), ``relay.tanh`` is the operator's NumPy semantics, so
the same Python source runs both ways. The Prelude's functions are there too: ``relay.map(f, xs)``
calls ``@map`` inside, and outside maps a Python function over a list value (frontend.prelude).
"""

from __future__ import annotations

from typing import Any, Callable

from ad import grad, jvp, vmap
from relayish.errors import FrontendError
from relayish.expr import in_axes_of
from relayish.ops.registry import lookup_op
from relayish.tracebacks import user_facing
from typecheck import infer

from .annotations import DType
from .function import Decorated, RelayFunction, run
from .model import (
    Model, RelayModel, create_model, export_model, load_model, model_grad, update_model_params,
)  # fmt: skip
from .prelude import PYTHON_SEMANTICS
from .subset import did_you_mean, relay_names
from .translate import ALIASES, LAYERS, Translator


class GradFunction:
    """``relay.grad(f)``: called like ``f``, returns ``(value, (gradient per argument...))``. The
    transforms compose: ``fn`` is a decorated function or another transform of one."""

    transform = staticmethod(grad)
    suffix = "grad"
    per_parameter = 1  # parameters the transformed function takes per parameter of ``fn`` (Jvp: with a tangent)

    def __init__(self, fn: RelayFunction | GradFunction):
        self.fn = fn
        self.base: RelayFunction = fn.base if isinstance(fn, GradFunction) else fn  # the decorated function
        self._module: Any = None

    def module(self) -> tuple[Any, str]:
        if self._module is None:
            if isinstance(self.fn, GradFunction):
                module, name = self.fn.module()
            else:
                module, names = self.fn.module()
                name = names[id(self.fn)]
            self._module = (self.transform(module, name), f"{name}_{self.suffix}")
        return self._module

    def param_count(self) -> int:
        inner = self.fn.param_count() if isinstance(self.fn, GradFunction) else len(self.fn.param_names)
        return self.per_parameter * inner

    @property
    @user_facing
    def ir(self) -> Any:
        return infer(self.module()[0])

    @user_facing
    def __call__(self, *args: Any) -> Any:
        module, name = self.module()
        return run(module, name, self.base, args)


class JvpFunction(GradFunction):
    """``relay.jvp(f)``: called with ``f``'s arguments and then a tangent for each (of the same
    type), returns ``(value, tangent)``: ``f``'s value and its derivative along the tangents."""

    transform = staticmethod(jvp)
    suffix = "jvp"
    per_parameter = 2


class VmapFunction(GradFunction):
    """``relay.vmap(f, in_axes)``: ``f`` on a batch of examples: argument i holds them along axis
    ``in_axes[i]`` (None: the same for every example); the result holds them along axis 0."""

    suffix = "vmap"

    def __init__(self, fn: RelayFunction | GradFunction, in_axes: tuple[int | None, ...] | None):
        super().__init__(fn)
        self.in_axes = in_axes

    def transform(self, module: Any, name: str) -> Any:
        return vmap(module, name, self.in_axes)


class RelayNamespace:
    """``@relay`` / ``@relay(backend=...)`` decorates; ``relay.<op>`` is an operator, ``relay.map``
    and the Prelude's other functions are its functions."""

    Model = Model

    def __call__(self, fn: Callable | None = None, *, backend: str | None = None) -> Any:
        if fn is None:
            return lambda f: RelayFunction(f, self, backend)
        return RelayFunction(fn, self, backend)

    def __getattr__(self, name: str) -> Any:
        if name in LAYERS:
            return _layer_or_op(name)
        if name in PYTHON_SEMANTICS:
            return PYTHON_SEMANTICS[name]
        op = lookup_op(ALIASES.get(name, name))
        if op is None:
            public = {n for n in dir(type(self)) if not n.startswith("_")}
            raise AttributeError(f"relay has no operator {name}{did_you_mean(name, relay_names() | public, 'relay.')} "
                                 "(see docs/operators.md)")
        pool = name in ("max_pool", "avg_pool")

        def numpy_semantics(*args: Any, **attrs: Any) -> Any:
            attrs = {k: v.base if isinstance(v, DType) else v for k, v in attrs.items()}
            return op(*args, **(_python_pool_attrs(attrs) if pool else attrs))
        numpy_semantics.__name__ = name
        numpy_semantics.__doc__ = op.doc
        return numpy_semantics

    def __repr__(self) -> str:
        return "<relay: the @relay decorator and the relayish operators>"

    @staticmethod
    def grad(fn: Any, loss: Any = None, args: Any = None) -> Any:
        """``relay.grad(f)``: a function giving ``(value, (gradient per argument...))``;
        ``relay.grad(model, loss, args)``: the loss and the gradient of every parameter."""
        if isinstance(fn, Model):
            if loss is None or args is None:
                raise TypeError("relay.grad(model, loss, args) needs the loss function and its arguments (a tuple)")
            return model_grad(fn, loss, args)
        if loss is not None or args is not None:
            raise TypeError("relay.grad(f) takes one @relay function; relay.grad(model, loss, args) takes a model")
        if not isinstance(fn, RelayFunction):
            raise TypeError(f"relay.grad takes a @relay function, not {fn!r}")
        return GradFunction(fn)

    @staticmethod
    def jvp(fn: Any) -> JvpFunction:
        """``relay.jvp(f)``: forward mode, a function of ``f``'s arguments and a tangent for each
        giving ``(value, tangent)``; ``f`` may be a transform (``relay.jvp(relay.grad(f))``)."""
        if not isinstance(fn, (RelayFunction, GradFunction)):
            raise TypeError(f"relay.jvp takes a @relay function or a transform of one, not {fn!r}")
        return JvpFunction(fn)

    @staticmethod
    def vmap(fn: Any, in_axes: Any = 0) -> VmapFunction:
        """``relay.vmap(f, in_axes=0)``: ``f`` mapped over a batch. ``in_axes``: one entry per
        parameter (an axis, or None for an argument that is the same for every example), or one
        axis for all of them. ``f`` may be a transform: ``relay.vmap(relay.grad(loss))`` gives
        per-example gradients."""
        if not isinstance(fn, (RelayFunction, GradFunction)):
            raise TypeError(f"relay.vmap takes a @relay function or a transform of one, not {fn!r}")
        count = fn.param_count() if isinstance(fn, GradFunction) else len(fn.param_names)
        return VmapFunction(fn, vmap_axes(in_axes, count))

    create_model = staticmethod(create_model)
    update_model_params = staticmethod(update_model_params)
    export_model = staticmethod(export_model)
    load_model = staticmethod(load_model)


def vmap_axes(in_axes: Any, count: int) -> tuple[int | None, ...]:
    """``in_axes`` as one entry per parameter: an int or None applies to all; a TypeError otherwise."""
    if in_axes is None or isinstance(in_axes, int) and not isinstance(in_axes, bool):
        in_axes = (in_axes,) * count
    try:
        if not isinstance(in_axes, (tuple, list)):
            raise ValueError(f"not {in_axes!r}")
        return in_axes_of(in_axes)
    except ValueError as err:
        raise TypeError(f"relay.vmap's in_axes is an axis (an int >= 0), None, or a tuple of them per parameter: {err}") from None


def _python_pool_attrs(attrs: dict) -> dict:
    """The paper's pooling keywords as the operator's, for undecorated code."""
    attrs = dict(attrs)
    if "ksize" in attrs:
        attrs["pool_size"] = attrs.pop("ksize")
    return {k: Translator.window(v) if k in ("pool_size", "strides") else v for k, v in attrs.items()}


def _layer_or_op(name: str) -> Callable:
    def call(*args: Any, **attrs: Any) -> Any:
        if LAYERS[name] in attrs or name == "linear":
            raise FrontendError(f"relay.{name}(x, {LAYERS[name]}=...) is a layer: its parameters exist only in a model "
                                "(relay.create_model); run the model with relay.export_model(model)")
        return lookup_op(name)(*args, **attrs)
    return call


relay = RelayNamespace()


def relay_model(fn: Callable | None = None, *, backend: str | None = None) -> Any:
    """Declare a model: its layer calls own hidden parameters (see ``frontend.model``)."""
    if fn is None:
        return lambda f: RelayModel(f, relay, backend)
    return RelayModel(fn, relay, backend)


__all__ = ["Decorated", "GradFunction", "JvpFunction", "RelayNamespace", "VmapFunction", "relay", "relay_model"]
