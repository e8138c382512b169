"""Elementwise operators of one argument, and the helper every operator module uses.

``define`` makes an operator's record, whose compute checks the dtype kinds of its arguments,
runs its NumPy function under IEEE rules (overflow, division by zero and invalid operations
give inf or nan without a warning) and always returns an array.
"""

from __future__ import annotations

import functools
from typing import TYPE_CHECKING, Any, Callable, Iterable

import numpy as np

from ..types import BaseType
from . import generation as gen, relations as rel
from .element import parse as parse_element
from .generation import Hint
from .record import AttrSpec, OpDef, Pattern, Raises

if TYPE_CHECKING:
    from ..expr import Expr
    from .sites import Site

# Allowed dtype kinds (NumPy ``dtype.kind`` letters) and how an error message names them.
FLOAT = "f"
INT = "iu"
NUMBER = "iuf"
BOOL = "b"
_KIND_NAMES = {FLOAT: "floating-point", INT: "integer", NUMBER: "numeric", BOOL: "boolean"}


def check_kinds(op: str, kinds: str, *arrays: np.ndarray) -> None:
    """Raise TypeError unless every array's dtype is of one of ``kinds``."""
    for array in arrays:
        if array.dtype.kind not in kinds:
            raise TypeError(f"{op} needs {_KIND_NAMES[kinds]} tensors, not {array.dtype}")


def define(
    name: str,
    fn: Callable[..., Any],
    doc: str,
    *,
    pattern: Pattern,
    relation: Callable[..., Any],
    rule: Callable[..., Any],
    hint: Hint,
    num_args: int | tuple[int, int | None] = 1,
    kinds: str | None = NUMBER,
    attrs: Iterable[AttrSpec] = (),
    gradient: Callable[[Any], list[Any]] | None = None,
    raises: Raises = Raises.MAYBE,
    element: str | None = None,
    lowering: Callable[[Any], Any] | None = None,
    signature: str | None = None,
    dtypes: str | None = None,
    differentiable: bool | None = None,
    unknown_sizes: bool = False,
) -> OpDef:
    """The record of operator ``name`` computing ``fn(*arrays, **attrs)``.

    ``kinds`` restricts the dtypes of every argument (None: the operator checks itself).
    ``element`` is parsed here, so a bad one fails on import. ``signature`` and ``dtypes``
    (the operator table's columns) default to the arguments ``x`` / ``a, b`` / ``a, b, c`` and
    the name of ``kinds``. ``differentiable`` defaults to having a gradient or a lowering.
    """

    def compute(*arrays: np.ndarray, **attr_values: Any) -> np.ndarray | tuple[np.ndarray, ...]:
        if kinds is not None:
            check_kinds(name, kinds, *arrays)
        with np.errstate(all="ignore"):
            result = fn(*arrays, **attr_values)
        return result if isinstance(result, tuple) else np.asarray(result)  # a tuple: split's parts

    compute.__name__ = compute.__qualname__ = f"compute_{name}"
    if element is not None:
        parse_element(element)
    return OpDef(
        name=name,
        compute=compute,
        pattern=pattern,
        num_args=num_args,
        type_relation=relation,
        attrs=tuple(attrs),
        gradient=gradient,
        raises=raises,
        element=element,
        lowering=lowering,
        rule=rule,
        hint=hint,
        doc=doc,
        signature=signature if signature is not None else _default_signature(num_args),
        dtypes=dtypes if dtypes is not None else _DTYPE_NAMES[kinds],
        unknown_sizes=unknown_sizes,
        **({} if differentiable is None else {"differentiable": differentiable}),
    )


_DTYPE_NAMES = {FLOAT: "float", INT: "int", NUMBER: "numeric", BOOL: "bool", None: "any"}


def _default_signature(num_args: int | tuple[int, int | None]) -> str:
    return {1: "x", 2: "a, b", 3: "a, b, c"}.get(num_args, "") if isinstance(num_args, int) else ""


_unary = functools.partial(define, pattern=Pattern.ELEMWISE)


def _pointwise(fn: Callable[[Site, Expr, Expr, Expr], Expr]) -> Callable[[Site], list[Expr | None]]:
    """The gradient ``fn(site, g, x, y)`` of a one-argument elementwise operator ``y = op(x)``."""
    return lambda s: [fn(s, s.g, s.args[0], s.out)]


def _sigmoid(x: np.ndarray) -> np.ndarray:
    # exp(-x) overflows to inf for very negative x, and 1 / inf is the right limit, 0.
    return 1.0 / (1.0 + np.exp(-x))


def _cast(x: np.ndarray, dtype: BaseType) -> np.ndarray:
    return x.astype(dtype.to_numpy())


def _cast_like(x: np.ndarray, like: np.ndarray) -> np.ndarray:
    return x.astype(like.dtype)


def _cast_gradient(s: Site) -> list[Expr | None]:
    source = s.types[0].dtype
    return [s.op("cast", s.g, dtype=source) if source.numpy_kind == "f" else None]


def _cast_like_gradient(s: Site) -> list[Expr | None]:
    """Like cast's; ``like`` gives only a dtype, so it has no gradient."""
    if s.types[0].dtype.numpy_kind != "f":
        return [_cast_gradient(s)[0], None]
    return [s.op("cast_like", s.g, s.args[0]), None]


OPS = (
    _unary("neg", np.negative, "-x", relation=rel.unary(NUMBER), element="-a", raises=Raises.NEVER,
           gradient=_pointwise(lambda s, g, x, y: s.op("neg", g)),
           rule=gen.unary(NUMBER), hint=Hint(NUMBER)),
    _unary("sq", lambda x: x * x, "x * x", relation=rel.unary(NUMBER), element="a * a", raises=Raises.NEVER,
           gradient=_pointwise(lambda s, g, x, y: s.op("mul", s.op("mul", g, x), s.const(2))),
           rule=gen.unary(NUMBER), hint=Hint(NUMBER)),
    _unary("exp", np.exp, "e to the power x", kinds=FLOAT, relation=rel.unary(FLOAT), element="exp(a)",
           raises=Raises.NEVER, gradient=_pointwise(lambda s, g, x, y: s.op("mul", g, y)),
           rule=gen.unary(FLOAT), hint=Hint(FLOAT)),
    _unary("log", np.log, "natural logarithm (log 0 = -inf, log of a negative number = nan)", kinds=FLOAT,
           relation=rel.unary(FLOAT), element="log(a)", raises=Raises.NEVER,
           gradient=_pointwise(lambda s, g, x, y: s.op("div", g, x)),
           rule=gen.unary(FLOAT), hint=Hint(FLOAT)),
    _unary("sqrt", np.sqrt, "square root (nan for negative numbers)", kinds=FLOAT, relation=rel.unary(FLOAT),
           element="sqrt(a)", raises=Raises.NEVER,
           gradient=_pointwise(lambda s, g, x, y: s.op("div", g, s.op("mul", y, s.const(2)))),
           rule=gen.unary(FLOAT), hint=Hint(FLOAT)),
    _unary("tanh", np.tanh, "hyperbolic tangent", kinds=FLOAT, relation=rel.unary(FLOAT), element="tanh(a)",
           raises=Raises.NEVER,
           gradient=_pointwise(lambda s, g, x, y: s.op("mul", g, s.op("sub", s.const(1), s.op("mul", y, y)))),
           rule=gen.unary(FLOAT), hint=Hint(FLOAT)),
    _unary("sigmoid", _sigmoid, "logistic function 1 / (1 + exp(-x))", kinds=FLOAT, relation=rel.unary(FLOAT),
           element="1 / (1 + exp(-a))", raises=Raises.NEVER,
           gradient=_pointwise(lambda s, g, x, y: s.op("mul", g, s.op("mul", y, s.op("sub", s.const(1), y)))),
           rule=gen.unary(FLOAT), hint=Hint(FLOAT)),
    _unary("relu", lambda x: np.maximum(x, 0), "max(x, 0)", relation=rel.unary(NUMBER), element="maximum(a, 0)",
           raises=Raises.NEVER,
           gradient=_pointwise(lambda s, g, x, y: s.masked(s.op("greater", x, s.const(0)), g)),
           rule=gen.unary(NUMBER), hint=Hint(NUMBER)),
    _unary("abs", np.abs, "absolute value", relation=rel.unary(NUMBER), element="abs(a)", raises=Raises.NEVER,
           gradient=_pointwise(lambda s, g, x, y: s.op("where", s.op("greater", x, s.const(0)), g,
                                                        s.masked(s.op("less", x, s.const(0)), s.op("neg", g)))),
           rule=gen.unary(NUMBER), hint=Hint(NUMBER)),
    _unary("sin", np.sin, "sine (radians)", kinds=FLOAT, relation=rel.unary(FLOAT), element="sin(a)",
           raises=Raises.NEVER, gradient=_pointwise(lambda s, g, x, y: s.op("mul", g, s.op("cos", x))),
           rule=gen.unary(FLOAT), hint=Hint(FLOAT)),
    _unary("cos", np.cos, "cosine (radians)", kinds=FLOAT, relation=rel.unary(FLOAT), element="cos(a)",
           raises=Raises.NEVER, gradient=_pointwise(lambda s, g, x, y: s.op("neg", s.op("mul", g, s.op("sin", x)))),
           rule=gen.unary(FLOAT), hint=Hint(FLOAT)),
    _unary("logical_not", np.logical_not, "boolean negation", kinds=BOOL, relation=rel.unary(BOOL),
           element="not a", raises=Raises.NEVER, rule=gen.unary(BOOL), hint=Hint(BOOL)),
    _unary("cast", _cast, "x converted to dtype as NumPy's astype does (float to int truncates toward zero)",
           kinds=None, attrs=(AttrSpec("dtype", "dtype"),), relation=rel.cast, raises=Raises.NEVER,
           gradient=_cast_gradient, rule=gen.cast, hint=Hint(None)),
    define("cast_like", _cast_like,
           "x converted to like's dtype as `cast` converts; like supplies only the dtype (any shape) and gets no "
           "gradient. What `@relay` writes for a Python number whose dtype comes from a tensor the translator "
           "cannot type (a parameter of a lambda)", signature="x, like", dtypes="x any; like any",
           pattern=Pattern.OPAQUE, num_args=2, kinds=None, relation=rel.cast_like, raises=Raises.NEVER,
           gradient=_cast_like_gradient, rule=gen.cast_like, hint=Hint(None)),
)
