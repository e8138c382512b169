"""Operators defined by other operators (a ``lowering``): the compiler and AD expand them.

Each record's ``compute`` is its NumPy semantics, written directly (the evaluator runs it and
it is the oracle); its ``lowering`` builds the same value from operators that have no
lowering of their own (``relayish/ops/expand.py``), so its kernels, fused with its
neighbours, and its gradient are theirs: the records have no ``gradient``.

Relay's ``batch_norm`` returns a tuple (the result and the new moving statistics); here it
returns only the normalized tensor.
"""

from __future__ import annotations

import functools
import warnings
from typing import TYPE_CHECKING, Any

import numpy as np
from numpy.lib.array_utils import normalize_axis_index

from ..types import FloatType, IntType
from . import generation as gen
from . import relations as rel
from .elementwise import BOOL, FLOAT, NUMBER, define
from .generation import INT32, Hint
from .record import AttrSpec, Pattern, Raises
from .reduce import ARG_EXTREME_ATTRS, arg_extreme
from .shape import as_fill, fill_argument

if TYPE_CHECKING:
    from ..expr import Expr
    from ..types import TensorType
    from .sites import Site

_KEEPDIMS = AttrSpec("keepdims", "bool", False)
_AXES = AttrSpec("axis", "axes", None)
_NORM_ATTRS = (AttrSpec("epsilon", "float", 1e-5), AttrSpec("center", "bool", True), AttrSpec("scale", "bool", True))


# NumPy semantics -------------------------------------------------------------------------------


def _as_dtype(value: float, dtype: np.dtype) -> np.ndarray:
    """``value`` converted to ``dtype`` as ``cast`` converts (NumPy's astype; inf or nan into an
    integer dtype gives what astype gives, without a warning)."""
    with np.errstate(all="ignore"):
        return np.asarray(value, dtype=np.float64).astype(dtype)


def _clip(x: np.ndarray, a_min: float, a_max: float) -> np.ndarray:
    return np.clip(x, _as_dtype(a_min, x.dtype), _as_dtype(a_max, x.dtype))


def _leaky_relu(x: np.ndarray, alpha: float) -> np.ndarray:
    return np.where(x > 0, x, x * _as_dtype(alpha, x.dtype))


def _vector_along(op: str, vector: np.ndarray, name: str, data: np.ndarray, axis: int) -> np.ndarray:
    """``vector`` (as long as axis ``axis`` of data) shaped to broadcast along that axis."""
    if vector.shape != (data.shape[axis],):
        raise ValueError(f"{op}: {name} must have shape ({data.shape[axis]},), the size of axis {axis} of "
                         f"the data {data.shape}, not {vector.shape}")
    if vector.dtype != data.dtype:
        raise TypeError(f"{op}: {name} has dtype {vector.dtype}, but the data has {data.dtype}")
    return vector.reshape([-1 if a == axis else 1 for a in range(data.ndim)])


def _data_axis(op: str, data: np.ndarray, axis: int) -> int:
    if data.ndim == 0:
        raise ValueError(f"{op}: the data needs rank >= 1")
    return normalize_axis_index(axis, data.ndim)


def _bias_add(data: np.ndarray, bias: np.ndarray, axis: int) -> np.ndarray:
    axis = _data_axis("bias_add", data, axis)
    return data + _vector_along("bias_add", bias, "the bias", data, axis)


def _reduced(op: str, x: np.ndarray, axis: Any, exclude: bool) -> Any:
    """The axes reduced: ``axis``, or with ``exclude`` the axes it does not name."""
    if not exclude:
        return axis
    if axis is None:
        raise ValueError(f"{op}: exclude needs axis: it reduces the axes that axis does not name")
    named = {normalize_axis_index(a, x.ndim) for a in ((axis,) if isinstance(axis, int) else axis)}
    return tuple(a for a in range(x.ndim) if a not in named)


def _variance(x: np.ndarray, axis: Any, keepdims: bool, exclude: bool, unbiased: bool) -> np.ndarray:
    with warnings.catch_warnings():  # an empty reduction, or one element unbiased: nan, silently
        warnings.simplefilter("ignore", RuntimeWarning)
        return np.var(x, axis=_reduced("variance", x, axis, exclude), ddof=int(unbiased), keepdims=keepdims)


def _std(x: np.ndarray, axis: Any, keepdims: bool, exclude: bool, unbiased: bool) -> np.ndarray:
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)
        return np.std(x, axis=_reduced("std", x, axis, exclude), ddof=int(unbiased), keepdims=keepdims)


def _logsumexp(x: np.ndarray, axis: Any, keepdims: bool) -> np.ndarray:
    """log(sum(exp(x))) with the (finite) maximum shifted out; an empty reduction raises as max does."""
    peak = np.max(x, axis=axis, keepdims=True)
    peak = np.where(np.isfinite(peak), peak, np.zeros_like(peak))
    result = np.log(np.sum(np.exp(x - peak), axis=axis, keepdims=True)) + peak
    if keepdims:
        return result
    return result.reshape(()) if axis is None else np.squeeze(result, axis=axis)


def _full_like(x: np.ndarray, *fill: np.ndarray, fill_value: float | None) -> np.ndarray:
    value = fill_argument("full_like", fill, 2, fill_value, required=True)
    if value is None:
        value = _as_dtype(fill_value, x.dtype)
    return np.full(x.shape, value.astype(x.dtype))  # a fill tensor converted as cast converts


def _arange(start: float, stop: float, step: float, dtype: Any) -> np.ndarray:
    if not all(np.isfinite((start, stop, step))) or step == 0:
        raise ValueError(f"arange: start, stop and step must be finite and step not 0, not {start}, {stop}, {step}")
    with np.errstate(all="ignore"):
        return np.arange(start, stop, step, dtype=np.float64).astype(dtype.to_numpy())


def _split(x: np.ndarray, sections: int | None, indices: tuple[int, ...] | None, axis: int) -> tuple[np.ndarray, ...]:
    axis = _data_axis("split", x, axis)
    problem = rel.split_problem(x.shape[axis], sections, indices)
    if problem:
        raise ValueError(f"split: axis {axis} of shape {x.shape}: {problem}")
    return tuple(np.split(x, rel.split_edges(x.shape[axis], sections, indices)[1:-1], axis=axis))


def _nchw(op: str, x: np.ndarray) -> None:
    if x.ndim != 4:
        raise ValueError(f"{op}: expected an NCHW tensor of rank 4, not shape {x.shape}")


def _global_avg_pool2d(x: np.ndarray) -> np.ndarray:
    _nchw("global_avg_pool2d", x)
    with warnings.catch_warnings():  # an empty image: nan
        warnings.simplefilter("ignore", RuntimeWarning)
        return np.mean(x, axis=(2, 3), keepdims=True)


def _global_max_pool2d(x: np.ndarray) -> np.ndarray:
    _nchw("global_max_pool2d", x)
    return np.max(x, axis=(2, 3), keepdims=True)


def _normalized(data: np.ndarray, mean: np.ndarray, var: np.ndarray, epsilon: float) -> np.ndarray:
    return (data - mean) / np.sqrt(var + _as_dtype(epsilon, data.dtype))


def _affine(op: str, out: np.ndarray, gamma: np.ndarray, beta: np.ndarray, axis: int, center: bool, scale: bool
            ) -> np.ndarray:
    gamma = _vector_along(op, gamma, "gamma", out, axis)
    beta = _vector_along(op, beta, "beta", out, axis)
    out = out * gamma if scale else out
    return out + beta if center else out


def _layer_norm(data: np.ndarray, gamma: np.ndarray, beta: np.ndarray, axis: int, epsilon: float, center: bool,
                scale: bool) -> np.ndarray:
    axis = _data_axis("layer_norm", data, axis)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)
        mean, var = np.mean(data, axis=axis, keepdims=True), np.var(data, axis=axis, keepdims=True)
    return _affine("layer_norm", _normalized(data, mean, var, epsilon), gamma, beta, axis, center, scale)


def _batch_norm(data: np.ndarray, gamma: np.ndarray, beta: np.ndarray, moving_mean: np.ndarray,
                moving_var: np.ndarray, axis: int, epsilon: float, center: bool, scale: bool, training: bool
                ) -> np.ndarray:
    axis = _data_axis("batch_norm", data, axis)
    moving_mean = _vector_along("batch_norm", moving_mean, "moving_mean", data, axis)
    moving_var = _vector_along("batch_norm", moving_var, "moving_var", data, axis)
    if training:
        others = tuple(a for a in range(data.ndim) if a != axis)
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", RuntimeWarning)
            mean, var = np.mean(data, axis=others, keepdims=True), np.var(data, axis=others, keepdims=True)
    else:
        mean, var = moving_mean, moving_var
    return _affine("batch_norm", _normalized(data, mean, var, epsilon), gamma, beta, axis, center, scale)


# lowerings -------------------------------------------------------------------------------------


def _converted(s: Site, value: float, like: TensorType) -> Expr:
    """A scalar constant: ``value`` converted to ``like``'s dtype as cast converts."""
    return s.constant(_as_dtype(value, like.dtype.to_numpy()))


def _along(s: Site, vector: Expr, axis: int, rank: int) -> Expr:
    """A vector (C,) for axis ``axis`` of a rank-``rank`` tensor, as (C, 1, ..., 1) to broadcast."""
    trailing = rank - 1 - axis
    return s.op("expand_dims", vector, axis=1, num_newaxis=trailing) if trailing else vector


def _normal_axes(axis: Any, rank: int) -> tuple[int, ...]:
    return tuple(a % rank for a in ((axis,) if isinstance(axis, int) else axis))


def _kept(s: Site, op: str, x: Expr, axis: Any) -> Expr:
    """Reduction ``op`` of x over ``axis`` that broadcasts against x: the reduced axes kept as 1s,
    or, over every axis, a scalar (which needs no rank)."""
    return s.op(op, x, axis=axis, keepdims=axis is not None)


def _squeezed(s: Site, e: Expr, axis: Any) -> Expr:
    """``e`` reduced with ``_kept`` as a reduction without keepdims gives it."""
    if axis is None or s.attrs["keepdims"]:
        return e
    return s.op("squeeze", e, axis=_normal_axes(axis, s.rank(0)))


def _clip_lowering(s: Site) -> Expr:
    x, t = s.args[0], s.types[0]
    low, high = (_converted(s, s.attrs[k], t) for k in ("a_min", "a_max"))
    return s.op("minimum", s.op("maximum", x, low), high)


def _leaky_relu_lowering(s: Site) -> Expr:
    x = s.args[0]
    return s.op("where", s.op("greater", x, s.const(0)), x, s.op("mul", x, _converted(s, s.attrs["alpha"], s.types[0])))


def _bias_add_lowering(s: Site) -> Expr:
    data, bias = s.args
    rank = s.rank(0)
    return s.op("add", data, _along(s, bias, s.attrs["axis"] % rank, rank))


def _variance_of(s: Site) -> Expr:
    """The variance: the mean of the squared deviations from the mean, or their sum over
    max(n - 1, 0) unbiased (0 / 0 = nan for one element, as NumPy)."""
    x, t = s.args[0], s.types[0]
    axis = rel.excluded_axes(t, s.attrs["axis"], s.attrs["exclude"])
    keepdims = s.attrs["keepdims"]
    centered = s.op("sub", x, _kept(s, "mean", x, axis))
    squares = s.op("mul", centered, centered)
    if not s.attrs["unbiased"]:
        return s.op("mean", squares, axis=axis, keepdims=keepdims)
    count = s.op("ndarray_size", x, axis=axis, dtype=t.dtype)
    freedom = s.op("maximum", s.op("sub", count, s.const(1)), s.const(0))
    return s.op("div", s.op("sum", squares, axis=axis, keepdims=keepdims), freedom)


def _count_true(s: Site, x: Expr) -> Expr:
    """How many elements of a bool tensor are true, along axis (float32: a sum of ones is 0 only
    when none is true, whatever it rounds to)."""
    return s.op("sum", s.op("cast", x, dtype=FloatType(32)), axis=s.attrs["axis"], keepdims=s.attrs["keepdims"])


def _all_lowering(s: Site) -> Expr:
    zero = s.constant(np.float32(0))
    return s.op("equal", _count_true(s, s.op("logical_not", s.args[0])), zero)


def _any_lowering(s: Site) -> Expr:
    return s.op("greater", _count_true(s, s.args[0]), s.constant(np.float32(0)))


def _logsumexp_lowering(s: Site) -> Expr:
    """log(sum(exp(x - m))) + m with m the maximum where it is finite, else 0 (all -inf gives
    log 0 = -inf; an inf gives log inf = inf; a nan stays nan)."""
    x, t = s.args[0], s.types[0]
    axis = s.attrs["axis"]
    peak = _kept(s, "max", x, axis)
    finite = s.op("less", s.op("abs", peak), s.const(np.inf, like=t))
    shift = s.op("where", finite, peak, s.op("zeros_like", peak))
    keep = axis is not None or s.attrs["keepdims"]  # over every axis the shift is a scalar: it broadcasts
    total = s.op("sum", s.op("exp", s.op("sub", x, shift)), axis=axis, keepdims=keep)
    return _squeezed(s, s.op("add", s.op("log", total), shift), axis)


def _argmin_lowering(s: Site) -> Expr:
    """argmax of an order-reversing map of x: -x for floats (nan stays nan, the largest for
    argmax as the smallest for argmin), -1 - x (the bitwise complement, which never
    overflows) for signed integers, the largest value - x for unsigned ones."""
    x, t = s.args[0], s.types[0]
    kind = t.dtype.numpy_kind
    if kind == "f":
        flipped = s.op("neg", x)
    else:
        top = -1 if kind == "i" else np.iinfo(t.dtype.to_numpy()).max
        flipped = s.op("sub", s.const(top, like=t), x)
    return s.op("argmax", flipped, **s.pick("axis", "keepdims", "exclude"))


def _full_like_lowering(s: Site) -> Expr:
    """The fill value, converted, broadcast to x: x gets no gradient, a fill argument the sum of g."""
    x, t = s.args[0], s.types[0]
    value = _converted(s, s.attrs["fill_value"], t) if len(s.args) == 1 else as_fill(s, s.args[1], s.types[1], t.dtype)
    return s.op("broadcast_to_like", value, x)


def _filled(value: float) -> Any:
    return lambda s: s.op("full", shape=s.attrs["shape"], fill_value=value, dtype=s.attrs["dtype"])


def _arange_lowering(s: Site) -> Expr:
    """A constant: NumPy's arange in float64 (start + i * ((start + step) - start), as it
    computes the values), converted; its length is the relation's."""
    start, stop, step = s.attrs["start"], s.attrs["stop"], s.attrs["step"]
    values = np.arange(start, stop, step, dtype=np.float64)
    assert values.shape == s.out_type.shape.static(), (values.shape, s.out_type)
    return s.constant(_as_dtype(values, s.out_type.dtype.to_numpy()))


def _indices(values: np.ndarray) -> np.ndarray:
    return values.astype(np.int32 if values.size < 2**31 else np.int64)


def _tile_lowering(s: Site) -> Expr:
    """New leading axes of size 1, then along each axis tiled r times the take of the indices
    0 .. n - 1, r times over."""
    x = s.args[0]
    dims = s.types[0].shape.dims
    reps = s.attrs["reps"]
    rank = max(len(dims), len(reps))
    new = rank - len(dims)
    if new:
        x = s.op("expand_dims", x, axis=0, num_newaxis=new)
    sizes = [1] * new + [d.value for d in dims]
    for axis, (size, r) in enumerate(zip(sizes, (1,) * (rank - len(reps)) + reps)):
        if r == 0:  # no index (the size may be symbolic)
            x = s.op("take", x, s.constant(_indices(np.arange(0))), axis=axis)
        elif r != 1:
            x = s.op("take", x, s.constant(_indices(np.arange(size * r) % size)), axis=axis)
    return x


def _repeat_lowering(s: Site) -> Expr:
    """The take of the indices 0, 0, ..., 1, 1, ... (each repeats times) along the axis."""
    x = s.args[0]
    repeats = s.attrs["repeats"]
    if repeats == 1:
        return x
    axis = s.attrs["axis"] % s.rank(0)
    size = s.types[0].shape.dims[axis].value if repeats else 0
    return s.op("take", x, s.constant(_indices(np.arange(size * repeats) // repeats)), axis=axis)


def _split_lowering(s: Site) -> Expr:
    """A tuple of slices of x along the axis, between the edges of its parts."""
    x = s.args[0]
    axis = s.attrs["axis"] % s.rank(0)
    edges = rel.split_edges(s.types[0].shape.dims[axis].value, s.attrs["sections"], s.attrs["indices"])
    return s.tuple(*(s.op("strided_slice", x, begin=(b,), end=(e,), axes=(axis,)) for b, e in zip(edges, edges[1:])))


def _global_pool_lowering(op: str) -> Any:
    return lambda s: s.op(op, s.args[0], axis=(2, 3), keepdims=True)


def _normalize(s: Site, data: Expr, mean: Expr, var: Expr, gamma: Expr, beta: Expr, axis: int) -> Expr:
    """(data - mean) / sqrt(var + epsilon), times gamma and plus beta (along axis) as scale and center say."""
    t = s.types[0]
    out = s.op("div", s.op("sub", data, mean), s.op("sqrt", s.op("add", var, _converted(s, s.attrs["epsilon"], t))))
    rank = s.rank(0)
    if s.attrs["scale"]:
        out = s.op("mul", out, _along(s, gamma, axis, rank))
    if s.attrs["center"]:
        out = s.op("add", out, _along(s, beta, axis, rank))
    return out


def _moments_kept(s: Site, data: Expr, axis: Any) -> tuple[Expr, Expr]:
    """The mean and the (biased) variance of data over ``axis``, the reduced axes kept as 1s."""
    mean = s.op("mean", data, axis=axis, keepdims=True)
    centered = s.op("sub", data, mean)
    return mean, s.op("mean", s.op("mul", centered, centered), axis=axis, keepdims=True)


def _layer_norm_lowering(s: Site) -> Expr:
    data, gamma, beta = s.args
    axis = s.attrs["axis"] % s.rank(0)
    mean, var = _moments_kept(s, data, axis)
    return _normalize(s, data, mean, var, gamma, beta, axis)


def _batch_norm_lowering(s: Site) -> Expr:
    data, gamma, beta, moving_mean, moving_var = s.args
    rank = s.rank(0)
    axis = s.attrs["axis"] % rank
    if s.attrs["training"]:
        mean, var = _moments_kept(s, data, tuple(a for a in range(rank) if a != axis))
    else:
        mean, var = _along(s, moving_mean, axis, rank), _along(s, moving_var, axis, rank)
    return _normalize(s, data, mean, var, gamma, beta, axis)


# records ---------------------------------------------------------------------------------------


_reduction = functools.partial(define, pattern=Pattern.REDUCE)
_composite = functools.partial(define, pattern=Pattern.OPAQUE)
_MOMENT_ATTRS = (_AXES, _KEEPDIMS, AttrSpec("exclude", "bool", False), AttrSpec("unbiased", "bool", False))
_FILL_ATTRS = (AttrSpec("shape", "ints"), AttrSpec("dtype", "dtype", FloatType(32)))


OPS = (
    _composite(
        "clip", _clip,
        "x limited to [a_min, a_max] as np.clip: the bounds converted to x's dtype as cast converts; "
        "nan stays nan; a_min > a_max gives a_max",
        attrs=(AttrSpec("a_min", "float"), AttrSpec("a_max", "float")),
        relation=rel.unary(NUMBER), raises=Raises.NEVER, lowering=_clip_lowering,
        rule=gen.clip, hint=Hint(NUMBER),
    ),
    _composite(
        "leaky_relu", _leaky_relu, "x where x > 0, else alpha * x (alpha in x's dtype)",
        kinds=FLOAT, attrs=(AttrSpec("alpha", "float", 0.01),),
        relation=rel.unary(FLOAT), raises=Raises.NEVER, lowering=_leaky_relu_lowering,
        rule=gen.negative_slope, hint=Hint(FLOAT),
    ),
    _composite(
        "bias_add", _bias_add, "data + bias, the bias (as long as data's axis) added along that axis",
        num_args=2, attrs=(AttrSpec("axis", "int", 1),),
        relation=rel.bias_add, raises=Raises.UNLESS_RANKED, lowering=_bias_add_lowering,
        rule=gen.bias_add, hint=Hint(NUMBER, 1, 3), signature="data, bias",
        dtypes="numeric, one dtype",
    ),
    _reduction(
        "variance", _variance,
        "mean squared deviation from the mean along axis (exclude: along the other axes); unbiased "
        "divides by n - 1 (nan for one element); an empty reduction gives nan",
        kinds=FLOAT, attrs=_MOMENT_ATTRS,
        relation=rel.moments, raises=Raises.NEVER, lowering=_variance_of,
        rule=gen.moments, hint=Hint(FLOAT),
    ),
    _reduction(
        "std", _std, "square root of variance, with variance's attributes",
        kinds=FLOAT, attrs=_MOMENT_ATTRS,
        relation=rel.moments, raises=Raises.NEVER, lowering=lambda s: s.op("sqrt", _variance_of(s)),
        rule=gen.moments, hint=Hint(FLOAT),
    ),
    _reduction(
        "all", np.all, "whether every element along axis is true (empty: true)",
        kinds=BOOL, attrs=(_AXES, _KEEPDIMS),
        relation=rel.reduction(BOOL), raises=Raises.NEVER, lowering=_all_lowering, differentiable=False,
        rule=gen.reduction(BOOL), hint=Hint(BOOL),
    ),
    _reduction(
        "any", np.any, "whether some element along axis is true (empty: false)",
        kinds=BOOL, attrs=(_AXES, _KEEPDIMS),
        relation=rel.reduction(BOOL), raises=Raises.NEVER, lowering=_any_lowering, differentiable=False,
        rule=gen.reduction(BOOL), hint=Hint(BOOL),
    ),
    _reduction(
        "logsumexp", _logsumexp,
        "log(sum(exp(x))) along axis, computed with the maximum shifted out (all -inf gives -inf, "
        "an inf gives inf); error on an empty reduction",
        kinds=FLOAT, attrs=(_AXES, _KEEPDIMS),
        relation=rel.reduction(FLOAT), raises=Raises.ON_EMPTY, lowering=_logsumexp_lowering,
        rule=gen.reduction(FLOAT), hint=Hint(FLOAT),
    ),
    _reduction(
        "argmin", functools.partial(arg_extreme, "argmin"),
        "int32 index of the first smallest element along axis (None: of the flattened tensor; several "
        "axes, or with exclude the axes axis does not name: the index in their row-major flattening, as "
        "TVM); a nan counts as the smallest, as in np.argmin",
        attrs=ARG_EXTREME_ATTRS, dtypes="numeric → int32",
        relation=rel.reduction(NUMBER, IntType(32)), raises=Raises.ON_EMPTY, lowering=_argmin_lowering, differentiable=False,
        rule=gen.argmax, hint=Hint(INT32, 0, 2),
    ),
    _composite(
        "full_like", _full_like,
        "a tensor of x's shape and dtype filled with the fill value, converted as cast converts: the scalar tensor "
        "fill (Relay's form; differentiable, its adjoint the sum of g in fill's dtype) or the attribute fill_value, "
        "exactly one of them; x supplies only its shape and dtype and gets no gradient",
        num_args=(1, 2), kinds=None, attrs=(AttrSpec("fill_value", "float?", None),),
        signature="x[, fill]", dtypes="x any; fill any (rank 0)",
        relation=rel.full_like, raises=Raises.NEVER, lowering=_full_like_lowering,
        rule=gen.full_like, hint=Hint(None),
    ),
    _composite(
        "zeros", lambda shape, dtype: np.zeros(shape, dtype=dtype.to_numpy()), "a tensor of shape and dtype filled with 0",
        num_args=0, kinds=None, attrs=_FILL_ATTRS, signature="(none)", dtypes="—",
        relation=rel.shaped, raises=Raises.NEVER, lowering=_filled(0.0), differentiable=False,
        rule=gen.constant_fill, hint=Hint(None, 0, 3, static=True),
    ),
    _composite(
        "ones", lambda shape, dtype: np.ones(shape, dtype=dtype.to_numpy()), "a tensor of shape and dtype filled with 1",
        num_args=0, kinds=None, attrs=_FILL_ATTRS, signature="(none)", dtypes="—",
        relation=rel.shaped, raises=Raises.NEVER, lowering=_filled(1.0), differentiable=False,
        rule=gen.constant_fill, hint=Hint(None, 0, 3, static=True),
    ),
    _composite(
        "arange", _arange,
        "the vector start, start + step, ... below stop (above it for a negative step) as np.arange, "
        "computed in float64 and converted to dtype as cast converts",
        num_args=0, kinds=None,
        attrs=(AttrSpec("start", "float", 0.0), AttrSpec("stop", "float"), AttrSpec("step", "float", 1.0),
               AttrSpec("dtype", "dtype", FloatType(32))),
        signature="(none)", dtypes="— (dtype numeric)",
        relation=rel.arange, raises=Raises.NEVER, lowering=_arange_lowering, differentiable=False,
        rule=gen.arange, hint=Hint(NUMBER, 1, 1, static=True),
    ),
    _composite(
        "tile", lambda x, reps: np.tile(x, reps),
        "x repeated reps times along each axis as np.tile (reps and the shape aligned at the end); "
        "an axis tiled more than once needs a static size",
        kinds=None, attrs=(AttrSpec("reps", "ints"),),
        relation=rel.tile, raises=Raises.UNLESS_RANKED, lowering=_tile_lowering,
        rule=gen.tile, hint=Hint(None, 1, 3),
    ),
    _composite(
        "repeat", lambda x, repeats, axis: np.repeat(x, repeats, axis=axis),
        "each element of x repeated repeats times along axis as np.repeat; that axis needs a static "
        "size unless repeats is 0 or 1",
        kinds=None, attrs=(AttrSpec("repeats", "int"), AttrSpec("axis", "int")),
        relation=rel.repeat, raises=Raises.UNLESS_RANKED, lowering=_repeat_lowering,
        rule=gen.repeat, hint=Hint(None, 1, 3, static=True),
    ),
    _composite(
        "split", _split,
        "a tuple of the parts of x along axis: sections equal parts (they must divide the axis), or the parts "
        "before, between and after the points indices, which must rise strictly from above 0 to below the size "
        "(Relay's rule: no part empty; NumPy's split would allow empty ones), exactly one of sections and indices "
        "given; the axis needs a static size. Relay's indices_or_sections, as two attributes",
        kinds=None, attrs=(AttrSpec("sections", "int?", None), AttrSpec("indices", "ints?", None), AttrSpec("axis", "int", 0)),
        relation=rel.split, raises=Raises.UNLESS_RANKED, lowering=_split_lowering,
        rule=gen.split, hint=Hint(None, 1, 3),
    ),
    _composite(
        "global_avg_pool2d", _global_avg_pool2d, "mean over the whole image of NCHW x: (N, C, 1, 1)",
        kinds=FLOAT, relation=rel.global_pool(FLOAT), raises=Raises.UNLESS_RANKED,
        lowering=_global_pool_lowering("mean"), rule=gen.global_pool(FLOAT), hint=Hint(FLOAT, 4, 4, static=True, ones=(2, 3)),
    ),
    _composite(
        "global_max_pool2d", _global_max_pool2d,
        "maximum over the whole image of NCHW x: (N, C, 1, 1); error on an empty image",
        relation=rel.global_pool(NUMBER), raises=Raises.ON_EMPTY,
        lowering=_global_pool_lowering("max"), rule=gen.global_pool(NUMBER), hint=Hint(NUMBER, 4, 4, static=True, ones=(2, 3)),
    ),
    _composite(
        "layer_norm", _layer_norm,
        "(data - mean) / sqrt(var + epsilon) * gamma + beta, mean and (biased) var along axis, "
        "gamma and beta (as long as axis) along it; scale false leaves out gamma, center false beta",
        num_args=3, kinds=FLOAT, attrs=(AttrSpec("axis", "int", -1),) + _NORM_ATTRS,
        relation=rel.normalization, raises=Raises.UNLESS_RANKED, lowering=_layer_norm_lowering,
        rule=gen.normalization(2, training=False), hint=Hint(FLOAT, 1, 3), signature="data, gamma, beta",
        dtypes="float, one dtype",
    ),
    _composite(
        "batch_norm", _batch_norm,
        "(data - mean) / sqrt(var + epsilon) * gamma + beta along axis (the channels): mean and var "
        "are moving_mean and moving_var, or with training the batch's mean and (biased) var over the "
        "other axes; only the normalized tensor (Relay also returns the moving statistics)",
        num_args=5, kinds=FLOAT, attrs=(AttrSpec("axis", "int", 1),) + _NORM_ATTRS + (AttrSpec("training", "bool", False),),
        relation=rel.normalization, raises=Raises.UNLESS_RANKED, lowering=_batch_norm_lowering,
        rule=gen.normalization(4, training=True), hint=Hint(FLOAT, 1, 4),
        signature="data, gamma, beta, moving_mean, moving_var", dtypes="float, one dtype",
    ),
)
