"""Differential checks: two programs (or backends) against each other, gradients against
finite differences.

``check_equivalent`` runs ``@name`` of two modules on the same inputs and compares the
results with ``compare.difference``; a failure shows the first differing leaf, both
results, the inputs and the programs. ``assert_pass_preserves`` is the property of an
IR-to-IR pass built on it: on generated programs, the pass's output type-checks and
computes the same as its input.

``check_grad`` compares a backend's gradient with central differences
``(f(x + eps v) - f(x - eps v)) / (2 eps)`` computed in float64 (a module is promoted with
``to_float64`` first, floating inputs are converted; the tensors inside tuples and data
values count as inputs, each against the same place in the gradient): for every element
of a floating input with at most ``max_elements`` elements (``v`` a unit vector), and along
``projections`` random unit directions ``v`` (from ``np.random.default_rng(seed)``) for a
larger one, against ``<grad, v>``. Two numbers agree when
``|fd - grad| <= atol + rtol * max(|fd|, |grad|)``. Defaults: ``eps=1e-6``, ``rtol=1e-5``,
``atol=1e-7``, ``max_elements=64``, ``projections=8``: in float64 the difference's own error
is about ``eps**2 * |f'''|`` plus ``1e-16 * |f| / eps``, far below ``rtol``. ``check_jvp``
compares forward mode the same way, along the tangents, for every element of the result.
"""

from __future__ import annotations

import copy
import functools
from typing import Any, Callable, Iterable, Sequence

import attrs
import numpy as np

from interp import evaluate
from runtime.values import DataValue
from typecheck import infer

from ..errors import RelayRuntimeError, RelayTypeError, StepLimitError
from ..matches import has_match, lower_matches
from ..module import Module
from ..printer import astext
from ..traverse import bound_twice
from .compare import difference
from .inputs import example_inputs, leaves, map_leaves
from .minimize import minimize
from .promote import promote_array, to_float64

Backend = Callable[..., Any]


class EquivalenceError(AssertionError):
    """Two modules (or backends) disagree on the same inputs."""


class GradientError(AssertionError):
    """A gradient disagrees with finite differences, or has the wrong structure."""


# -- showing values ---------------------------------------------------------------------------


def _path_text(tree: Any, path: Sequence[int]) -> str:
    """The steps from ``tree`` along ``path``: ``[1]`` into a tuple, ``.Cons[0]`` into a data value
    (as ``compare.difference`` writes them)."""
    steps = []
    for k in path:
        if isinstance(tree, DataValue):
            steps.append(f".{tree.ctor}[{k}]")
            tree = tree.fields[k]
        else:
            steps.append(f"[{k}]")
            tree = tree[k]
    return "".join(steps)


def _leaf_text(leaf: Any) -> str:
    if isinstance(leaf, np.ndarray):
        with np.printoptions(threshold=20):
            values = " ".join(np.array2string(leaf, separator=", ").split())  # rows on one line
        return f"{leaf.dtype} {leaf.shape} {values}"
    return repr(leaf)


def _tree_lines(label: str, tree: Any) -> list[str]:
    """One line per leaf of ``tree``, labelled with its path."""
    found = leaves(tree)
    if not found:
        return [f"  {label}: {tree!r}"]
    return [f"  {label}{_path_text(tree, path)}: {_leaf_text(leaf)}" for path, leaf in found]


def _arg_label(module: Module | None, name: str, position: int) -> str:
    """``argument 2 (%y)``: numbered from 1, with the parameter's name when known."""
    label = f"argument {position + 1}"
    if module is not None and name in module and position < len(module[name].params):
        label += f" (%{module[name].params[position].name_hint})"
    return label


def _args_lines(args: tuple, module: Module | None, name: str) -> list[str]:
    lines = []
    for position, arg in enumerate(args):
        lines += _tree_lines(_arg_label(module, name, position), arg)
    return lines


# -- check_equivalent ---------------------------------------------------------------------------


@attrs.frozen
class _Outcome:
    """What one backend call gave: a value, or the exception it raised."""

    value: Any = None
    error: Exception | None = None

    def lines(self, label: str) -> list[str]:
        if self.error is not None:
            return [f"{label} raised {type(self.error).__name__}: {self.error}"]
        return [f"{label} returned:", *_tree_lines("result", self.value)]


def _run(backend: Backend, module: Module, name: str, args: tuple) -> _Outcome:
    try:
        return _Outcome(value=backend(module, name, *copy.deepcopy(args)))
    except Exception as err:  # a failure on one side only is itself a difference
        return _Outcome(error=err)


def _problem(a: _Outcome, b: _Outcome, rtol: float | None, atol: float) -> str | None:
    """None when the outcomes agree, else what differs."""
    if a.error is None and b.error is None:
        return difference(a.value, b.value, rtol=rtol, atol=atol)
    if isinstance(a.error, RelayRuntimeError) and isinstance(b.error, RelayRuntimeError):
        return None
    if a.error is not None and b.error is not None:
        return "both raised, and not both a RelayRuntimeError"
    return f"only {'module_a' if a.error is not None else 'module_b'} raised"


def check_equivalent(
    module_a: Module,
    module_b: Module,
    name: str = "main",
    inputs: Sequence[Any] | None = None,
    *,
    rtol: float | None = None,
    atol: float = 0.0,
    backend_a: Backend | None = None,
    backend_b: Backend | None = None,
) -> Any:
    """Run ``@name`` of both modules on the same inputs; raise EquivalenceError unless they agree.

    Backends are ``backend(module, name, *args)`` (default: the evaluator), each given its
    own deep copy of the inputs; ``inputs=None`` means ``example_inputs(module_a[name])``.
    Both raising RelayRuntimeError counts as agreeing (the result is then None); one side
    raising alone is a difference. Returns module_a's result.
    """
    args = example_inputs(module_a[name], seed=0) if inputs is None else tuple(inputs)
    a = _run(backend_a or evaluate, module_a, name, args)
    b = _run(backend_b or evaluate, module_b, name, args)
    problem = _problem(a, b, rtol, atol)
    if problem is None:
        return a.value
    text_a, text_b = astext(module_a), astext(module_b)
    lines = [
        f"@{name} differs between module_a (actual) and module_b (expected): {problem}",
        *a.lines("module_a"),
        *b.lines("module_b"),
        "inputs:",
        *_args_lines(args, module_a, name),
        "program a:",
        text_a,
        "program b: the same text as program a" if text_b == text_a else f"program b:\n{text_b}",
    ]
    raise EquivalenceError("\n".join(lines)) from (a.error or b.error)


# -- assert_pass_preserves -------------------------------------------------------------------------


class PassError(AssertionError):
    """An IR-to-IR pass returned something that is not a well-typed module."""


def check_pass(pass_fn: Callable[[Module], Module], module: Module, name: str, args: Sequence[Any], *,
               rtol: float | None = None, atol: float = 0.0, backend: Backend | None = None) -> Module:
    """One case of ``assert_pass_preserves``: ``pass_fn`` on the typed ``module`` returns a
    module that type-checks and whose ``@name`` gives what the input's does on ``args``
    (both run by ``backend``, default the evaluator). Returns the pass's typed output. The
    pass gets the module with its ``match``es lowered, as the optimizer gives it every module."""
    typed = infer(module)
    if has_match(typed):
        typed = infer(lower_matches(typed))
    out = pass_fn(typed)
    if not isinstance(out, Module):
        raise PassError(f"the pass returned {type(out).__name__}, not a Module; program:\n{astext(typed)}")
    twice = sorted({f"%{v.name_hint}" for fn in out.functions.values() for v in bound_twice(fn)})
    if twice:
        raise PassError(f"the pass's output binds {', '.join(twice)} more than once (a binder in two places, "
                        f"or in a sub-expression shared by two parents)\nprogram before:\n{astext(typed)}")
    try:
        checked = infer(out)
    except RelayTypeError as err:
        raise PassError(f"the pass's output does not type-check: {err}\nprogram before:\n{astext(typed)}\n"
                        f"program after:\n{astext(out)}") from None
    check_equivalent(checked, typed, name, args, rtol=rtol, atol=atol, backend_a=backend, backend_b=backend)
    return checked


MINIMIZE_MAX_CALLS = 10_000  # a candidate may lose a loop's exit: cut it short (generated programs make hundreds of calls)


def minimized_failure(
    failing: Callable[[Module, int | None], None], module: Module, entry: str, error: AssertionError
) -> tuple[Module, AssertionError]:
    """The smallest variant of ``module`` on which ``failing(variant, max_calls)`` still
    raises ``error``'s type (``minimize``), with that error; ``(module, error)`` if none.
    While searching, ``failing`` is given ``MINIMIZE_MAX_CALLS`` to pass to the evaluator."""

    def fails(candidate: Module) -> bool:
        try:
            failing(candidate, MINIMIZE_MAX_CALLS)
        except type(error) as err:
            # one side cut short by the bound (a candidate that lost a loop's exit) is no
            # evidence, and the unbounded re-run below would not end
            return not isinstance(err.__cause__, StepLimitError)
        except Exception:  # noqa: BLE001 - a candidate that fails otherwise is not this failure
            return False
        return False

    try:
        small = minimize(module, entry, fails)
    except Exception:  # noqa: BLE001 - a minimizer bug must not hide the failure it was shrinking
        return module, error
    try:
        failing(small, None)
    except type(error) as final:
        return small, final
    return module, error


def assert_pass_preserves(
    pass_fn: Callable[[Module], Module],
    programs: Any = None,
    *,
    max_examples: int | None = None,
    examples: Iterable[Any] = (),
    rtol: float | None = None,
    atol: float = 0.0,
) -> None:
    """The property every IR-to-IR pass must have: it keeps programs well typed and their
    evaluator results unchanged.

    Checked on each of ``examples`` (``strategies.Program``s: your own corpus) and then on
    ``programs`` (a hypothesis strategy of ``Program``s; default ``strategies.programs()``,
    every feature on), ``max_examples`` of them (default: the active hypothesis profile's).
    The first failure is minimized (``minimize``: the smallest variant that still fails)
    and raised, with the minimized ``Program`` as its ``counterexample`` attribute, as
    ``EquivalenceError`` (different results: the first differing leaf, both
    values, the inputs and both programs) or ``PassError`` (the output is not a well-typed
    module).
    """
    from hypothesis import HealthCheck, Phase, given, settings

    from .strategies import programs as all_programs

    for program in examples:
        check_pass(pass_fn, program.module, program.entry, program.args, rtol=rtol, atol=atol)
    active = settings.default
    chosen = settings(
        deadline=None,
        max_examples=max_examples or active.max_examples,
        suppress_health_check=[*active.suppress_health_check, HealthCheck.too_slow, HealthCheck.data_too_large],
        phases=[Phase.explicit, Phase.reuse, Phase.generate],  # minimize shrinks programs far better
    )
    failures: list[Any] = []

    @chosen
    @given(programs if programs is not None else all_programs())
    def preserved(program: Any) -> None:
        try:
            check_pass(pass_fn, program.module, program.entry, program.args, rtol=rtol, atol=atol)
        except AssertionError:
            failures.append(program)
            raise

    try:
        preserved()
    except (EquivalenceError, PassError) as error:
        program = failures[-1]

        def failing(module: Module, max_calls: int | None) -> None:
            bounded = functools.partial(evaluate, max_calls=max_calls)
            check_pass(pass_fn, module, program.entry, program.args, rtol=rtol, atol=atol, backend=bounded)

        small, final = minimized_failure(failing, program.module, program.entry, error)
        sizes = [len(astext(m).splitlines()) for m in (program.module, small)]
        shown = type(final)(f"{final}\n(minimized from a program of {sizes[0]} lines to {sizes[1]})")
        shown.counterexample = attrs.evolve(program, module=small)  # to re-run or keep as a test
        raise shown from None


# -- check_grad ---------------------------------------------------------------------------------


def _default_grad(module: Module, name: str) -> Backend:
    """The evaluator on ``@<name>_grad``, the expansion of ``Grad(@name)`` (``ad.grad``)."""
    from ad import grad

    return functools.partial(evaluate, grad(module, name), f"{name}_grad")


def _scalar(value: Any, what: str) -> np.ndarray:
    array = np.asarray(value)
    if array.ndim != 0 or array.dtype.kind != "f":
        raise ValueError(f"{what} must be a 0-d floating array, not {array.dtype} of shape {array.shape}")
    return array


def _zeros(tree: Any) -> Any:
    """``tree`` with each leaf a zero array of its dtype and shape: two such trees are equal
    when the tuples, constructors, dtypes and shapes are."""
    return map_leaves(tree, lambda path, leaf: np.zeros(np.shape(leaf), np.asarray(leaf).dtype))


def _split_grad(result: Any, args: tuple, module: Module | None, name: str) -> tuple[Any, tuple]:
    """``(value, gradients)`` from grad's result, each gradient's structure checked against its argument."""
    if not (isinstance(result, tuple) and len(result) == 2 and isinstance(result[1], tuple) and len(result[1]) == len(args)):
        raise GradientError(f"grad must return (value, (g1, ..., g{len(args)})), one gradient per argument, not {result!r}")
    for position, (g, x) in enumerate(zip(result[1], args)):
        mismatch = difference(_zeros(g), _zeros(x))
        if mismatch is not None:  # "result<path>: what differs" (no function is left to compare)
            path, what = mismatch.split(": ", 1)
            where = _arg_label(module, name, position) + path.removeprefix("result")
            raise GradientError(f"the gradient of {where} is not shaped as the (float64) input: {what} "
                                "(actual: the gradient, expected: the input)")
    return result


def _agree(fd: float, backend: float, rtol: float, atol: float) -> bool:
    return abs(fd - backend) <= atol + rtol * max(abs(fd), abs(backend))


@attrs.frozen
class _Differ:
    """Central differences of ``f`` at ``args`` compared with a gradient, leaf by leaf."""

    f: Callable[..., Any]
    args: tuple
    eps: float
    rtol: float
    atol: float
    max_elements: int
    projections: int
    seed: int
    rng: np.random.Generator = attrs.field(init=False)

    def __attrs_post_init__(self) -> None:
        object.__setattr__(self, "rng", np.random.default_rng(self.seed))

    def along(self, path: tuple[int, ...], direction: np.ndarray) -> float:
        def shifted(step: float) -> tuple:
            return map_leaves(self.args, lambda p, leaf: leaf + step * direction if p == path else leaf)

        high = _scalar(self.f(*shifted(self.eps)), "the function's value")
        low = _scalar(self.f(*shifted(-self.eps)), "the function's value")
        return float(high - low) / (2 * self.eps)

    def compare(self, where: str, path: tuple[int, ...], direction: np.ndarray, backend: float) -> None:
        fd = self.along(path, direction)
        if not _agree(fd, backend, self.rtol, self.atol):
            raise GradientError(
                f"gradient of {where}: finite difference {fd!r}, backend {backend!r} "
                f"(eps={self.eps:g}, rtol={self.rtol:g}, atol={self.atol:g})"
            )

    def leaf(self, where: str, path: tuple[int, ...], x: np.ndarray, g: np.ndarray) -> None:
        """Every element of a small input; random unit directions through a large one."""
        if x.size <= self.max_elements:
            for index in np.ndindex(x.shape):
                unit = np.zeros(x.shape)
                unit[index] = 1.0
                self.compare(f"{where} at element {list(index)}", path, unit, float(g[index]))
            return
        for k in range(self.projections):
            v = self.rng.standard_normal(x.shape)
            v /= np.linalg.norm(v)
            how = f"seed {self.seed}; {x.size} elements > max_elements={self.max_elements}"
            self.compare(f"{where} along random direction {k + 1} of {self.projections} ({how})", path, v, float(np.sum(g * v)))


def _check_zeros(where: str, g: np.ndarray) -> None:
    bad = np.argwhere(g != 0)
    if len(bad):
        index = tuple(int(i) for i in bad[0])
        raise GradientError(f"gradient of {where} ({g.dtype}, not differentiable) must be zeros, but element {list(index)} is {g[index]}")


def _functions(fn_or_module: Module | Callable[..., Any], name: str, grad: Backend | None) -> tuple[Callable[..., Any], Backend, Module | None]:
    """The float64 function, its gradient and the promoted module (None for a callable)."""
    if isinstance(fn_or_module, Module):
        module = to_float64(fn_or_module)
        return functools.partial(evaluate, module, name), grad or _default_grad(module, name), module
    if grad is None:
        raise ValueError("check_grad of a Python callable needs grad=: a callable grad(*args) -> (value, gradients)")
    return fn_or_module, grad, None


def check_grad(
    fn_or_module: Module | Callable[..., Any],
    inputs: Sequence[Any],
    *,
    name: str = "main",
    grad: Backend | None = None,
    eps: float = 1e-6,
    rtol: float = 1e-5,
    atol: float = 1e-7,
    max_elements: int = 64,
    projections: int = 8,
    seed: int = 0,
) -> None:
    """Compare ``grad`` with central differences in float64 (see the module docstring).

    ``fn_or_module``: a Module (its ``@name`` is run by the evaluator) or a Python
    ``f(*args) -> 0-d float array``. ``grad(*args) -> (value, (g1, ..., gn))`` as
    ``Grad f`` returns it: a tuple argument gets a tuple of gradients, a data value one of the
    same constructors holding gradients, an integer or bool one zeros of its own dtype. For a module, ``grad=None`` runs ``Grad(@name)`` in the
    evaluator; a callable needs an explicit ``grad``. Raises GradientError naming the
    argument, the element or projection and both values.
    """
    f, grad, module = _functions(fn_or_module, name, grad)
    args = map_leaves(tuple(inputs), lambda path, leaf: promote_array(np.asarray(leaf)))
    expected = _scalar(f(*args), "the function's value")
    value, grads = _split_grad(grad(*copy.deepcopy(args)), args, module, name)
    mismatch = difference(np.asarray(value), expected, rtol=rtol, atol=atol)
    if mismatch is not None:
        raise GradientError(f"grad's value (actual) differs from the function's (expected): {mismatch}")
    differ = _Differ(f, args, eps, rtol, atol, max_elements, projections, seed)
    for (path, x), (_, g) in zip(leaves(args), leaves(grads), strict=True):
        where = _arg_label(module, name, path[0]) + _path_text(args[path[0]], path[1:])
        if x.dtype.kind == "f":
            differ.leaf(where, path, x, np.asarray(g))
        else:
            _check_zeros(where, np.asarray(g))


def check_jvp(
    module: Module,
    inputs: Sequence[Any],
    tangents: Sequence[Any] | None = None,
    *,
    name: str = "main",
    eps: float = 1e-6,
    rtol: float = 1e-5,
    atol: float = 1e-7,
    seed: int = 0,
) -> None:
    """Compare forward mode, ``Jvp(@name)`` run by the evaluator, with the central difference
    ``(f(x + eps t) - f(x - eps t)) / (2 eps)`` along the tangents ``t`` in float64 (module and
    inputs promoted as ``check_grad`` does): its value with ``@name``'s, its tangent with the
    difference, element by element (results: tensors and tuples of them). ``tangents``: one per
    input, shaped like it; by default standard normal ones from ``seed`` (zeros for integers and
    booleans, which have no tangent). Raises GradientError naming the result element and both numbers."""
    from ad import jvp

    module = to_float64(module)
    args = map_leaves(tuple(inputs), lambda path, leaf: promote_array(np.asarray(leaf)))
    if tangents is None:
        rng = np.random.default_rng(seed)
        tangents = map_leaves(args, lambda path, x: rng.standard_normal(x.shape) if x.dtype.kind == "f" else np.zeros_like(x))
    else:
        tangents = map_leaves(tuple(tangents), lambda path, leaf: promote_array(np.asarray(leaf)))

    along = dict(leaves(tangents))

    def shifted(step: float) -> tuple:
        return map_leaves(args, lambda path, x: x + step * along[path] if x.dtype.kind == "f" else x)

    value, tangent = evaluate(jvp(module, name), f"{name}_jvp", *copy.deepcopy(args), *copy.deepcopy(tangents))
    expected = evaluate(module, name, *copy.deepcopy(args))
    mismatch = difference(value, expected, rtol=rtol, atol=atol)
    if mismatch is not None:
        raise GradientError(f"Jvp's value (actual) differs from the function's (expected): {mismatch}")
    high, low = evaluate(module, name, *shifted(eps)), evaluate(module, name, *shifted(-eps))
    for (path, t), (_, hi), (_, lo) in zip(leaves(tangent), leaves(high), leaves(low), strict=True):
        t = np.asarray(t)
        if t.dtype.kind != "f":
            _check_zeros(f"result {_path_text(tangent, path)}", t)
            continue
        fd = (np.asarray(hi, np.float64) - np.asarray(lo, np.float64)) / (2 * eps)
        for index in np.ndindex(t.shape):
            if not _agree(float(fd[index]), float(t[index]), rtol, atol):
                raise GradientError(f"tangent of result{_path_text(tangent, path)} at element {list(index)}: finite "
                                    f"difference {float(fd[index])!r}, Jvp {float(t[index])!r} "
                                    f"(eps={eps:g}, rtol={rtol:g}, atol={atol:g})")


# -- check_vmap ------------------------------------------------------------------------------------


def check_vmap(module: Module, inputs: Sequence[Any], in_axes: Sequence[int | None], *, name: str = "main",
               rtol: float | None = None, atol: float = 0.0) -> Any:
    """Compare ``Vmap(@name, in_axes)`` run by the evaluator on ``inputs`` (argument i holding the
    examples along axis ``in_axes[i]``, or one value for all where None) with ``@name`` run on each
    example alone, the results stacked: raise EquivalenceError at the first example and element
    that differ (floats within ``rtol``, by default per dtype as ``difference``, and ``atol``: a
    batched kernel may sum in another order). Returns the batched result."""
    from ad import vmap

    args = tuple(inputs)
    count = {np.asarray(leaf).shape[axis] for arg, axis in zip(args, in_axes) if axis is not None
             for _, leaf in leaves(arg)}
    if len(count) != 1:
        raise ValueError(f"check_vmap: the mapped inputs hold different numbers of examples along their axes: {sorted(count)}")
    batched = evaluate(vmap(module, name, tuple(in_axes)), f"{name}_vmap", *copy.deepcopy(args))
    for i in range(count.pop()):
        example = tuple(arg if axis is None else map_leaves(arg, lambda path, leaf, axis=axis: np.asarray(np.take(leaf, i, axis=axis)))
                        for arg, axis in zip(args, in_axes))
        expected = evaluate(module, name, *copy.deepcopy(example))
        actual = map_leaves(batched, lambda path, leaf: np.asarray(leaf)[i, ...])
        problem = difference(actual, expected, rtol=rtol, atol=atol)
        if problem is not None:
            raise EquivalenceError("\n".join([
                f"Vmap(@{name}, in_axes={tuple(in_axes)}) differs at example {i} from @{name} run on it alone: {problem}",
                "the example's inputs:", *_args_lines(example, module, name), "program:", astext(module)]))
    return batched
