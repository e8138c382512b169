"""Decorated functions: lazy translation into one module per root, typed IR, calls, gradients.

Translation happens at the first use (a call, ``.ir``), not at decoration, so functions may
call functions defined after them, and recursion and mutual recursion need nothing
special. A function that calls a model (directly or through other functions) takes the
model's hidden parameters as extra trailing parameters and passes them on. The module also
defines the data types the functions use and holds the Prelude's globals they call
(``relay.map``: frontend.prelude); what the backends return holds values of the constructor
classes (frontend.data), which Python's ``match`` takes apart.
"""

from __future__ import annotations

import ast
import contextvars
import os
import re
from functools import partial
from typing import Any

import numpy as np

from interp import evaluate, run_prepared
from jit import compile as jit_compile
from relayish.errors import FrontendError, RelayError, RelayRuntimeError
from relayish.module import Module
from relayish.printer import astext
from relayish.tracebacks import hide_internal_frames, user_facing
from relayish.types import Type, TypeVar
from runtime.values import ArgumentMismatch, CallCheck, check_value, settle
from typecheck import infer

from .annotations import AnnotationError, to_type
from .arguments import Misfit, described, misfit, to_argument
from .data import python_values
from .prelude import prelude_parts, with_data
from .source import MISSING, Source
from .subset import PRELUDE_FUNCTIONS
from .translate import Callee, ModelContext, Translator, hint_of_type

PYTHON_MODE = contextvars.ContextVar("relayish_python_mode", default=False)
BACKENDS = ("jit", "interp")  # relayish.compile, relayish.evaluate


def default_backend() -> str:
    """``RELAYISH_BACKEND`` when set (``jit`` or ``interp``), else the JIT."""
    chosen = os.environ.get("RELAYISH_BACKEND") or "jit"
    if chosen not in BACKENDS:
        raise ValueError(f"RELAYISH_BACKEND={chosen!r} is not a backend (backends: {', '.join(BACKENDS)})")
    return chosen


class Decorated:
    """What ``@relay`` and ``@relay_model`` return: a Python function with its translation.

    ``relay_namespace`` is the ``relay`` that decorated it (frontend.namespace), passed down
    rather than imported (the namespace builds on this module): its body calls operators as
    ``relay.<op>``, which is what translation recognizes. ``is_model``: a ``@relay_model``."""

    is_model = False

    def __init__(self, fn: Any, relay_namespace: Any, backend: str | None = None):
        if not callable(fn) or not hasattr(fn, "__code__"):
            raise TypeError(f"@relay decorates a Python function, not {fn!r}")
        backend = backend or default_backend()
        if backend not in BACKENDS:
            raise ValueError(f"unknown backend {backend!r} (backends: {', '.join(BACKENDS)})")
        self.backend = backend
        self.relay_namespace = relay_namespace
        self._runners: dict[tuple[int, str], tuple[Module, Runner]] = {}
        self._reachable: list[Decorated] | None = None
        self.python_function = fn
        self.__name__ = fn.__name__
        self.__qualname__ = fn.__qualname__
        self.__doc__ = fn.__doc__
        self.__wrapped__ = fn
        self._source: Source | None = None
        self._module: tuple[Module, dict[int, str]] | None = None

    def __repr__(self) -> str:
        return f"<{type(self).__name__} {self.__qualname__}>"

    @property
    def source(self) -> Source:
        if self._source is None:
            self._source = Source(self.python_function)
        return self._source

    @property
    def param_names(self) -> tuple[str, ...]:
        return tuple(a.arg for a in self.source.node.args.args)

    def signature_types(self) -> tuple[list[Type | None], Type | None]:
        """Parameter and result types from the annotations (None where one is missing or
        wrong: translating the function itself reports that)."""
        annotations = self.python_function.__annotations__
        dims: dict[str, TypeVar] = {}
        node = self.source.node

        def convert(key: str, annotation: ast.expr | None) -> Type | None:
            if annotation is None:
                return None
            try:
                return to_type(self.source.annotation(annotation, annotations.get(key, MISSING)), dims)
            except (AnnotationError, TypeError, FrontendError):
                return None
        return [convert(a.arg, a.annotation) for a in node.args.args], convert("return", node.returns)

    def references(self) -> list[Decorated]:
        """The decorated functions this one names (outside its own local variables)."""
        node = self.source.node
        local = {a.arg for a in node.args.args}
        for sub in ast.walk(node):
            if isinstance(sub, ast.Name) and isinstance(sub.ctx, ast.Store):
                local.add(sub.id)
            elif isinstance(sub, (ast.FunctionDef, ast.Lambda)) and sub is not node:
                local |= {a.arg for a in sub.args.args}
                if isinstance(sub, ast.FunctionDef):
                    local.add(sub.name)
        found: list[Decorated] = []
        for sub in ast.walk(node):
            if isinstance(sub, ast.Name) and isinstance(sub.ctx, ast.Load) and sub.id not in local:
                value = self.source.lookup(sub.id)
                if isinstance(value, Decorated) and value not in found:
                    found.append(value)
        return found

    def reachable(self) -> list[Decorated]:
        """This function and every decorated function it reaches, in discovery order (found at
        the first use, as the translation is)."""
        if self._reachable is None:
            seen, order = {id(self)}, [self]
            for fn in order:  # the list grows while we walk it
                for ref in fn.references():
                    if id(ref) not in seen:
                        seen.add(id(ref))
                        order.append(ref)
            self._reachable = order
        return self._reachable

    def model_definition(self) -> Any:
        """The @relay_model this function's parameters come from, or None."""
        models = [fn for fn in self.reachable() if fn.is_model]
        if len(models) > 1:
            names = ", ".join(m.__name__ for m in models)
            raise FrontendError(f"{self.__name__} reaches several models ({names}); one function can use one model",
                                self.source.span(self.source.node))
        return models[0] if models else None

    # translation --------------------------------------------------------------------------
    def module(self) -> tuple[Module, dict[int, str]]:
        """The untyped module of this function and everything it reaches, and the global
        name of each decorated function in it (by id)."""
        if self._module is None:
            self._module = build_module(self)
        return self._module

    def runner(self, module: Module, name: str) -> Runner:
        """How ``@name`` of ``module`` runs on this function's backend, made once per module."""
        key = (id(module), name)
        if key not in self._runners:
            self._runners[key] = (module, Runner(module, name, self))  # the module kept alive: ids stay unique
        return self._runners[key][1]

    @property
    def global_name(self) -> str:
        return self.module()[1][id(self)]

    @property
    @user_facing
    def ir(self) -> Module:
        """The typed module: this function and every function it calls."""
        return infer(self.module()[0])

    @user_facing
    def astext(self) -> str:
        return astext(self.ir)


class RelayFunction(Decorated):
    """A ``@relay`` function: call it with NumPy arrays; ``.ir`` is its typed module."""

    def __init__(self, fn: Any, relay_namespace: Any, backend: str | None = None):
        super().__init__(fn, relay_namespace, backend)
        self._own_runner: Runner | None = None  # how a call runs, found at the first (as the translation is)

    def __call__(self, *args: Any, **kwargs: Any) -> Any:
        if PYTHON_MODE.get():
            return self.python_function(*args, **kwargs)
        try:  # user_facing's work, written out: a wrapper would cost every call a frame
            if self._own_runner is None:
                model = self.model_definition()
                if model is not None:
                    raise FrontendError(f"{self.__name__} uses the parameters of the model {model.__name__}: "
                                        "create one with relay.create_model and use relay.grad(model, fn, args), or "
                                        "call relay.export_model(model)")
                module, names = self.module()
                self._own_runner = self.runner(module, names[id(self)])
            return self._own_runner(self.positional(args, kwargs) if kwargs else args)
        except RelayError as err:
            hide_internal_frames(err)
            raise

    def positional(self, args: tuple, kwargs: dict) -> tuple:
        """Keyword arguments in parameter order, as Python would bind them."""
        if not kwargs:
            return args
        bound = list(args) + [MISSING] * (len(self.param_names) - len(args))
        for name, value in kwargs.items():
            if name not in self.param_names:
                raise TypeError(f"{self.__name__}() got an unexpected keyword argument {name!r}")
            index = self.param_names.index(name)
            if index < len(bound) and bound[index] is not MISSING:
                raise TypeError(f"{self.__name__}() got multiple values for argument {name!r}")
            bound[index] = value
        missing = [n for n, v in zip(self.param_names, bound) if v is MISSING]
        if missing:
            raise TypeError(f"{self.__name__}() missing arguments: {', '.join(missing)}")
        return tuple(bound)

    def python(self, *args: Any, **kwargs: Any) -> Any:
        """Run the undecorated Python, with ``relay.*`` as NumPy and every @relay function it
        calls undecorated too: the oracle the frontend is tested against."""
        token = PYTHON_MODE.set(True)
        try:
            return self.python_function(*args, **kwargs)
        finally:
            PYTHON_MODE.reset(token)


def run(module: Module, name: str, fn: Decorated, args: tuple, extra: tuple = ()) -> Any:
    """Run ``@name`` on ``fn``'s backend; Python numbers and lists become arrays of the
    parameter's dtype when they fit it exactly (frontend.arguments)."""
    return fn.runner(module, name)(args, extra)


class Runner:
    """One global of a decorated function's module on its backend: the parameter types and the
    compiled function (or the evaluator), found once, so that a call costs what the backend's does.

    ``@name`` is ``fn`` itself or a transform of it (``relay.grad``, ``relay.jvp``, ``relay.vmap``); errors name the
    gradient and the globals AD makes for it (``@loss_grad``, ``@loss__ad``) after the user's function."""

    def __init__(self, module: Module, name: str, fn: Decorated):
        self.fn = fn
        self.types = [p.type_annotation for p in module[name].params]
        self.type_defs = module.type_defs
        self.own = set(fn.module()[0].functions)
        what = {"_jvp": "the forward derivative", "_vmap": "the batched form"}.get(name[name.rfind("_"):], "the gradient")
        self.label = fn.__name__ if name in self.own else f"{what} of `{fn.__name__}`"
        self.generated = re.compile(rf"@({'|'.join(map(re.escape, self.own))})(?:__ad_*|__fw_*|__vm\d*_*|__vmap_*|_param_grad|_grad|_jvp|_vmap)+\b")
        if fn.backend == "jit":
            self.call = jit_compile(module, name, first_tier=run_prepared)  # as relayish.compile
        else:
            self.call = partial(evaluate, module, name)
        if module.type_defs:  # data values come back as the constructor classes' (Python's match reads them)
            self.call = partial(_with_python_values, self.call, module)

    def __call__(self, args: tuple, extra: tuple = ()) -> Any:
        if len(args) + len(extra) != len(self.types):
            fn = self.fn
            raise TypeError(f"{fn.__name__}() takes {len(self.types) - len(extra)} arguments "
                            f"({', '.join(fn.param_names)}), given {len(args)}")
        try:
            # This runs on every call: arrays pass as they are, and a call of arrays alone builds
            # nothing (a comprehension per call cost W5's 18 us gradient about 0.7 us).
            values = args
            for a in args:
                if type(a) is not np.ndarray:
                    values = [a if type(a) is np.ndarray else to_argument(a, t, self.type_defs)
                              for a, t in zip(args, self.types)]
                    break
            return self.call(*values, *extra) if extra else self.call(*values)
        except (Misfit, RelayError) as err:
            self.check_arguments(args)  # the backend refused an argument: say which, and how to fix it
            self.reword(err)
            raise

    def reword(self, err: Exception) -> None:
        """Name the globals AD made after the user's function: ``@loss__ad`` is the gradient of `loss`."""
        def user_words(match: re.Match) -> str:
            return match[0] if match[0][1:] in self.own else f"the gradient of `{match[1]}`"
        for e in dict.fromkeys([err, *getattr(err, "errors", ())]):
            if isinstance(e, RelayError):
                e.reword(self.generated.sub(user_words, e.message))

    def check_arguments(self, args: tuple) -> None:
        """Raise the error for the first argument that does not fit its parameter, naming the
        parameter where the user's ``def`` declares it (the backends' own check, worded for
        the user's annotations)."""
        dims: dict = {}
        call = CallCheck()
        params = self.fn.source.node.args.args
        try:
            for arg, value, ty in zip(params, args, self.types):
                try:
                    converted = to_argument(value, ty, self.type_defs)
                    if ty is not None:
                        check_value(ty, converted, dims, f"argument {arg.arg}", call, type_defs=self.type_defs)
                except Misfit as err:
                    raise self.refused(arg, ty, str(err)) from None
            settle(call, dims)
        except ArgumentMismatch as err:
            arg, ty, value = next((a, t, v) for a, t, v in zip(params, self.types, args) if f"argument {a.arg}" == err.what)
            raise self.refused(arg, ty, misfit(err, arg.arg, value)) from None

    def refused(self, arg: ast.arg, ty: Type, why: str) -> RelayRuntimeError:
        annotation = arg.annotation
        written = annotation.value if isinstance(annotation, ast.Constant) else ast.unparse(annotation)
        return RelayRuntimeError(f"argument {arg.arg} of {self.label}: expected {written} ({described(ty)}), {why}",
                                 self.fn.source.span(arg))


def _with_python_values(call: Any, module: Module, *args: Any) -> Any:
    return python_values(call(*args), module)


def unique_name(name: str, taken: set[str]) -> str:
    if name not in taken:
        return name
    k = 2
    while f"{name}_{k}" in taken:
        k += 1
    return f"{name}_{k}"


def build_module(root: Decorated, override: dict[int, ModelContext] | None = None,
                 translators: dict[int, Translator] | None = None) -> tuple[Module, dict[int, str]]:
    """Translate ``root`` and every decorated function it reaches into one module.
    ``override`` gives some functions another model context (the model's shape probes);
    ``translators`` receives each function's translator (what the probes found)."""
    order = root.reachable()
    names: dict[int, str] = {}
    prelude = prelude_globals(order)  # named as in the Prelude: a function of the user's of such a name is renamed
    for fn in order:
        names[id(fn)] = unique_name(fn.__name__, set(names.values()) | prelude)
    model = root.model_definition()
    hidden = model.hidden_params() if model is not None and not (override and id(model) in override) else ()
    functions = {}
    used: dict[int, Any] = {}  # the data types the functions use, each once
    called: set[str] = set()
    for fn in order:
        ctx = (override or {}).get(id(fn))
        if ctx is None:
            depends = model is not None and fn.model_definition() is model
            layers = model.layer_specs() if fn is model else None
            ctx = ModelContext(hidden=hidden if depends else (), layers=layers)
        translator = translator_for(fn, ctx, names, model)
        functions[names[id(fn)]] = translator.function()
        used.update((id(d), d) for d in translator.data.values())
        called |= translator.prelude_calls
        if translators is not None:
            translators[id(fn)] = translator
    return with_data(functions, list(used.values()), called), names


def prelude_globals(order: list[Decorated]) -> set[str]:
    """The Prelude's globals the functions may call (``relay.map`` in their code) and those
    reach: names the user's functions cannot have in the module."""
    found = set()
    for fn in order:
        for node in ast.walk(fn.source.node):
            if isinstance(node, ast.Attribute) and node.attr in PRELUDE_FUNCTIONS and isinstance(node.value, ast.Name) \
                    and fn.source.lookup(node.value.id) is fn.relay_namespace:
                found.add(node.attr)
    return prelude_parts(found)[0].keys() | found if found else set()


def translator_for(fn: Decorated, ctx: ModelContext, names: dict[int, str], model: Any) -> Translator:
    def link(value: Any) -> Callee | None:
        if not isinstance(value, Decorated):
            return None
        if value.is_model and fn.is_model:
            raise FrontendError(f"the model {fn.__name__} calls the model {value.__name__}: models cannot call models; "
                                "write the layers in one @relay_model function", fn.source.span(fn.source.node))
        params, ret = value.signature_types()
        return Callee(names[id(value)], value.param_names, tuple(hint_of_type(t) for t in params), hint_of_type(ret),
                      threads_params=model is not None and value.model_definition() is model)

    return Translator(fn.source, link, fn.relay_namespace, ctx, fn.python_function.__annotations__)
