"""Python AST to relayish IR: the supported subset of docs/frontend.md.

Straight-line code becomes a chain of ``let``s. Control flow becomes expressions:
- an ``if`` statement without ``return`` in it binds the variables its branches assign
  (``let (a, b) = if c then (..., (a, b)) else (..., (a, b))``); with an early ``return``
  the code after it moves into the branch that falls through, or, when both may, into a
  local join function that both call;
- a ``match`` statement is a ``match`` expression, its cases' bodies taken as an ``if``'s
  branches are (the names a pattern captures are assigned in its case); a value no case
  matches goes on after it, as in Python, so a match whose cases do not cover every value
  gets a last clause ``_`` for that (frontend.patterns);
- ``while`` and ``for i in range(...)`` become local recursive functions over the
  loop-carried variables (those assigned in the body that exist before the loop), called
  in tail position, so loops run in constant stack.
Constructors of data types (frontend.data) build values, ``relay.map`` and the other
Prelude functions are calls of the Prelude's globals.
Python numbers are *weak*: a literal takes the dtype of the tensor it meets (``x * 2``
with a float64 ``x`` is a float64 2), as NumPy does; alone it is float32 / int32.
Every node carries the span of its Python source, so type errors name the Python line.
"""

from __future__ import annotations

import ast
from typing import Any, Callable

import attrs
import numpy as np

from relayish.errors import FrontendError, RelayError, Span
from relayish.expr import (
    Ascribe, Call, Constant, Construct, Expr, Function, GlobalVar, Grad, If, Jvp, Let, Match, Op, PatternWildcard, Proj, Vmap,
    Tuple, Var,
)  # fmt: skip
from relayish.ops.registry import lookup_op
from relayish.parser import prelude_module
from relayish.traverse import free_vars
from relayish.types import BaseType, BoolType, FloatType, TensorType, TupleType, Type, TypeVar

from .annotations import AnnotationError, DType, to_type
from .data import ConstructorType, Data
from .patterns import PatternTranslation, uncovered
from .source import MISSING, Source
from .subset import (
    ALIASES, BINOPS, BOOL_RESULT, COMPARES, LAYERS, PRELUDE_FUNCTIONS, SYMBOLS, UNSUPPORTED_EXPRS, UNSUPPORTED_STMTS,
    always_returns, assigned_names, contains, did_you_mean, first_store, relay_names,
)  # fmt: skip

Env = dict  # Python name -> Var


@attrs.frozen
class Callee:
    """What a caller needs to know about another decorated function."""

    name: str  # the global's name in the module
    params: tuple[str, ...]  # Python parameter names, for keyword arguments
    param_hints: tuple[Any, ...]  # dtype hints, for weak literal arguments
    ret_hint: Any
    threads_params: bool  # takes the model's hidden parameters after its arguments


@attrs.frozen
class Layer:
    """One layer call site of a model: its hidden parameters as (name, type)."""

    kind: str
    params: tuple[tuple[str, Type], ...]


@attrs.frozen
class LayerSite:
    """A layer call met during translation (what model shape inference needs)."""

    kind: str
    name: str
    attrs: dict
    span: Span


class Probe(Exception):
    """Raised at the layer call being probed: carries the expression of its input."""

    def __init__(self, site: LayerSite, value: Expr):
        self.site, self.value = site, value


@attrs.frozen
class ModelContext:
    """Hidden parameters: ``hidden`` (name, type) are appended to the function's parameters;
    ``layers`` are the model's own layers when translating the model (probing stops at
    layer ``len(layers)`` when ``probe`` is set)."""

    hidden: tuple[tuple[str, Type], ...] = ()
    layers: tuple[Layer, ...] | None = None
    probe: bool = False


@attrs.frozen
class Arm:
    """One way through an ``if`` or a ``match``: its statements, the names its pattern binds
    before them, and, for the clause added to a match whose cases miss a value (``missing``,
    written as a pattern), the match."""

    body: list[ast.stmt]
    binds: tuple[tuple[str, Var], ...] = ()
    node: ast.AST | None = None
    missing: str | None = None


@attrs.frozen
class _Weak:
    """A Python number not yet given a dtype."""

    value: bool | int | float
    node: ast.AST


class Translator(PatternTranslation):
    """Translates one decorated function (and the defs and lambdas inside it); ``data`` and
    ``prelude_calls`` are what the module must define for it: the data types it uses (by
    name) and the Prelude's globals it calls."""

    EXPRESSIONS: dict[type, Callable[..., Expr | _Weak]] = {}  # filled below the class: node type -> method

    def __init__(self, source: Source, link: Callable[[Any], Callee | None], relay_namespace: Any,
                 model: ModelContext = ModelContext(), annotations: dict[str, Any] | None = None):
        self.src = source
        self.link = link
        self.relay = relay_namespace
        self.model = model
        self.annotations = annotations or {}
        self.hints: dict[int, Any] = {}
        self.keep: list[Expr] = []  # keeps hinted expressions alive so their ids stay unique
        self.dims: dict[str, TypeVar] = {}
        self.hidden_vars: list[Var] = []
        self.sites: list[LayerSite] = []
        self.nesting = 0  # > 0 inside branches, loops and nested functions (no layers there)
        self.pending_name: tuple[str, ast.expr] | None = None  # (variable, value) of an assignment: names a layer
        self.probed: LayerSite | None = None  # the layer whose input the probe function returns
        self.nesting_fn = 0  # > 0 inside nested functions (their returns are not the global's)
        self.captured: dict[int, list[tuple[Var, int]]] = {}  # id(var) -> (closure variable, level) capturing it
        self.stale: dict[int, tuple[str, ast.AST]] = {}
        self.arity: dict[str, int] = {}  # decorated functions used as values: their parameter counts (relay.vmap)
        self.param_hints: dict[int, tuple[Any, ...]] = {}  # id(local def variable) -> its parameters' dtype hints  # id(closure variable) -> (reassigned name, where)
        self.data: dict[str, Data] = {}
        self.prelude_calls: set[str] = set()

    # errors and positions -----------------------------------------------------------------
    def error(self, node: ast.AST, message: str) -> FrontendError:
        return FrontendError(message, self.src.span(node))

    def span(self, node: ast.AST) -> Span:
        return self.src.span(node)

    # the function -------------------------------------------------------------------------
    def function(self) -> Function:
        try:
            return self.translate_function()
        except RecursionError:
            raise self.error(self.src.node, "the function nests expressions too deeply to translate: "
                                            "split them into several assignments") from None

    def translate_function(self) -> Function:
        node = self.src.node
        self.check_arguments(node.args, node)
        params, env = [], {}
        for arg in node.args.args:
            ty = self.annotated_type(arg)
            var = Var(arg.arg, ty, span=self.span(arg))
            self.set_hint(var, hint_of_type(ty))
            params.append(var)
            env[arg.arg] = var
        ret = self.annotated_type(node) if node.returns is not None else None
        for name, ty in self.model.hidden:
            var = Var(name, ty, span=self.span(node))
            self.hidden_vars.append(var)
        self.ret_hints = [hint_of_type(ret) if ret is not None else None]
        self.ret_types: list[Type | None] = [ret]
        body = self.block(node.body, env, self.missing_return(node), top=True)
        if self.probed is not None:
            ret = None
        return Function(params + self.hidden_vars, body, ret, list(self.dims.values()), span=self.span(node))

    def annotated_type(self, node: ast.arg | ast.FunctionDef) -> Type:
        is_ret = isinstance(node, ast.FunctionDef)
        annotation_node = node.returns if is_ret else node.annotation
        key = "return" if is_ret else node.arg
        if annotation_node is None:
            raise self.error(node, f"parameter {node.arg} needs a type annotation, e.g. {node.arg}: Tensor[Float, (N, 784)] "
                                   "or Float (local variables are inferred; parameters are not)")
        value = self.src.annotation(annotation_node, self.annotations.get(key, MISSING))
        try:
            return to_type(value, self.dims, self.data)
        except (AnnotationError, TypeError) as err:
            raise self.error(annotation_node, str(err)) from None

    def check_arguments(self, args: ast.arguments, node: ast.AST) -> None:
        if args.vararg or args.kwarg:
            raise self.error(args.vararg or args.kwarg, "*args and **kwargs are not supported: list the parameters")
        if args.kwonlyargs or args.posonlyargs:
            raise self.error((args.posonlyargs or args.kwonlyargs)[0],
                             "keyword-only and positional-only parameters are not supported: use plain parameters")
        if args.defaults or args.kw_defaults:
            raise self.error(args.defaults[0] if args.defaults else node,
                             "default parameter values are not supported: pass every argument")

    def missing_return(self, node: ast.AST) -> Callable[[Env], Expr]:
        def fail(env: Env) -> Expr:
            raise self.error(node, "the function can end without a return statement: every path must return a value")
        fail.ends_function = True  # type: ignore[attr-defined] - a match that misses a value says so (Translator.arm)
        return fail

    # hints: what dtype an expression has, as far as the translator can tell ----------------
    def set_hint(self, expr: Expr, hint: Any) -> Expr:
        if hint is not None:
            self.hints[id(expr)] = hint
            self.keep.append(expr)
        return expr

    def hint(self, value: Expr | _Weak) -> Any:
        return None if isinstance(value, _Weak) else self.hints.get(id(value))

    def strict(self, value: Expr | _Weak, hint: Any = None) -> Expr:
        """An expression; a weak literal gets ``hint``'s dtype (or float32 / int32 / bool)."""
        if not isinstance(value, _Weak):
            return value
        v = value.value
        base = hint if isinstance(hint, BaseType) else None
        if base is None:
            base = BoolType() if isinstance(v, bool) else FloatType(32) if isinstance(v, float) else _INT32
        elif isinstance(v, bool) != isinstance(base, BoolType):
            raise self.error(value.node, f"the literal {v!r} meets a {base} tensor: write a literal of that kind")
        elif isinstance(v, float) and not isinstance(base, FloatType):
            raise self.error(value.node, f"the float literal {v!r} meets an integer ({base}) tensor, which NumPy would "
                                         "turn into float64: cast the tensor first, relay.cast(x, dtype=Float)")
        try:
            array = np.asarray(v, dtype=base.to_numpy())
        except OverflowError:
            raise self.error(value.node, f"the literal {v!r} does not fit in {base}") from None
        return self.set_hint(Constant(array, span=self.span(value.node)), base)

    def follow(self, value: _Weak, partner: Expr) -> Expr:
        """A weak literal beside a tensor of a dtype the translator cannot know (a lambda's
        parameter): ``cast_like(literal, partner)`` takes the partner's dtype when checked."""
        if isinstance(value.value, bool):
            return self.strict(value)
        wide = np.float64 if isinstance(value.value, float) else np.int64
        try:
            literal = Constant(np.asarray(value.value, dtype=wide), span=self.span(value.node))
        except OverflowError:
            raise self.error(value.node, f"the literal {value.value!r} does not fit in int64") from None
        return Call(Op("cast_like", span=self.span(value.node)), [literal, partner], span=self.span(value.node))

    def expr(self, node: ast.expr, env: Env) -> Expr:
        return self.strict(self.value(node, env))

    # statements ---------------------------------------------------------------------------
    def block(self, stmts: list[ast.stmt], env: Env, fallthrough: Callable[[Env], Expr], top: bool = False) -> Expr:
        env = dict(env)
        lets: list[tuple[Var, Expr]] = []
        for i, stmt in enumerate(stmts):
            try:
                result = self.statement(stmt, stmts[i + 1:], env, lets, fallthrough, first=(i == 0))
            except Probe as probe:
                if not top:
                    raise
                self.probed = probe.site
                return wrap(lets, probe.value)
            if result is not None:
                return wrap(lets, result)
        return wrap(lets, fallthrough(env))

    def statement(self, stmt: ast.stmt, rest: list[ast.stmt], env: Env, lets: list, fallthrough, first: bool) -> Expr | None:
        """Translates one statement into ``lets``/``env``; returns the block's result when the
        statement ends the block (``return``, or control flow that takes ``rest`` inside)."""
        if isinstance(stmt, ast.Return):
            if stmt.value is None:
                raise self.error(stmt, "return needs a value: a relayish function returns a tensor, tuple or function")
            result = self.typed(stmt.value, env, self.ret_hints[-1])
            declared = self.ret_types[-1]
            if declared is not None and isinstance(result, Var):  # a mismatch is reported at this return
                return Ascribe(result, declared, span=self.span(stmt))
            return result
        if isinstance(stmt, ast.Assign):
            target = stmt.targets[0] if len(stmt.targets) == 1 else None
            self.pending_name = (target.id, stmt.value) if isinstance(target, ast.Name) else None
            value = self.expr(stmt.value, env)
            self.pending_name = None
            for target in stmt.targets:
                self.bind(target, value, env, lets)
            return None
        if isinstance(stmt, ast.AnnAssign):
            if stmt.value is None:
                raise self.error(stmt, "a declaration without a value is not supported: assign a value")
            ty = self.local_type(stmt.annotation)
            value = self.typed(stmt.value, env, hint_of_type(ty))
            if not isinstance(stmt.target, ast.Name):
                raise self.error(stmt.target, "only a variable can be annotated")
            var = Var(stmt.target.id, ty, span=self.span(stmt.target))
            self.set_hint(var, hint_of_type(ty))
            lets.append((var, value))
            self.assign(env, stmt.target.id, var, stmt.target)
            return None
        if isinstance(stmt, ast.AugAssign):
            if not isinstance(stmt.target, ast.Name):
                raise self.error(stmt.target, "augmented assignment to a subscript or attribute is not supported: "
                                              "tensors are immutable; write x = relay.where(...) or build a new tensor")
            load = ast.Name(stmt.target.id, ast.Load(), lineno=stmt.target.lineno, col_offset=stmt.target.col_offset)
            binop = ast.BinOp(load, stmt.op, stmt.value, lineno=stmt.lineno, col_offset=stmt.col_offset)
            self.bind(stmt.target, self.expr(binop, env), env, lets)
            return None
        if isinstance(stmt, ast.Expr):
            if first and isinstance(stmt.value, ast.Constant) and isinstance(stmt.value.value, str):
                return None  # a docstring
            self.value(stmt.value, env)  # what it calls may be unsupported itself (print, yield): say that first
            raise self.error(stmt, "an expression statement has no effect in a pure function: assign its value "
                                   "to a variable or return it")
        if isinstance(stmt, ast.Pass):
            return None
        if isinstance(stmt, ast.If):
            return self.if_statement(stmt, rest, env, lets, fallthrough)
        if isinstance(stmt, ast.Match):
            return self.match_statement(stmt, rest, env, lets, fallthrough)
        if isinstance(stmt, (ast.While, ast.For)):
            self.loop(stmt, env, lets)
            return None
        if isinstance(stmt, ast.FunctionDef):
            var, fn = self.nested_def(stmt, env)
            lets.append((var, fn))
            self.assign(env, stmt.name, var, stmt)
            return None
        message = UNSUPPORTED_STMTS.get(type(stmt), f"{type(stmt).__name__} statements are not supported")
        raise self.error(stmt, message)

    def assign(self, env: Env, name: str, var: Var, node: ast.AST) -> None:
        self.reassigned(env, name, node)
        env[name] = var

    def reassigned(self, env: Env, name: str, node: ast.AST) -> None:
        """Python closures read a variable when called, relayish closures when created: the
        two differ once a captured variable is reassigned, so the closure's variable becomes
        stale and a later use of it is an error (a closure used before agrees)."""
        old = env.get(name)
        for holder, level in self.captured.get(id(old), []) if old is not None else []:
            if level == self.nesting_fn:
                self.stale[id(holder)] = (name, node)

    def capture(self, fn: Function, env: Env, holder: Var) -> None:
        """Note the enclosing variables the closure bound to ``holder`` captures."""
        visible = {id(v) for v in env.values()}
        for var in free_vars(fn):
            if id(var) in visible:
                self.captured.setdefault(id(var), []).append((holder, self.nesting_fn))
                self.keep.append(var)

    def local_type(self, node: ast.expr) -> Type:
        try:
            return to_type(self.src.annotation(node), self.dims, self.data)
        except (AnnotationError, TypeError) as err:
            raise self.error(node, str(err)) from None

    def bind(self, target: ast.expr, value: Expr, env: Env, lets: list) -> None:
        """Assign ``value`` to a name or unpack it into a tuple of targets."""
        if isinstance(target, ast.Name):
            var = Var(target.id, span=self.span(target))
            if isinstance(value, Function):
                self.capture(value, env, var)
            self.set_hint(var, self.hint(value))
            lets.append((var, value))
            self.assign(env, target.id, var, target)
            return
        if isinstance(target, ast.Tuple):
            if any(isinstance(e, ast.Starred) for e in target.elts):
                raise self.error(target, "starred unpacking is not supported: unpack every field")
            holder = value
            if not isinstance(value, Var):
                holder = Var("tuple", span=self.span(target))
                self.set_hint(holder, self.hint(value))
                lets.append((holder, value))
            hint = self.hint(holder)
            for i, element in enumerate(target.elts):
                field = Proj(holder, i, span=self.span(element))
                self.set_hint(field, hint[i] if isinstance(hint, tuple) and i < len(hint) else None)
                self.bind(element, field, env, lets)
            return
        if isinstance(target, ast.Subscript):
            raise self.error(target, "subscript assignment is not supported: tensors are immutable; "
                                     "build a new tensor (relay.where, relay.concatenate, ...)")
        raise self.error(target, f"cannot assign to {type(target).__name__}: assign to a variable or a tuple of variables")

    def if_statement(self, stmt: ast.If, rest: list[ast.stmt], env: Env, lets: list, fallthrough) -> Expr | None:
        cond = self.expr(stmt.test, env)

        def build(bodies: list[Expr]) -> Expr:
            return If(cond, bodies[0], bodies[1], span=self.span(stmt))
        return self.branches(stmt, [Arm(stmt.body), Arm(stmt.orelse)], rest, env, lets, fallthrough, build, "the if")

    def match_statement(self, stmt: ast.Match, rest: list[ast.stmt], env: Env, lets: list, fallthrough) -> Expr | None:
        """``match`` as an ``if`` with a branch per case; a value no case matches goes on after
        it (an added last clause ``_``, whose body is what follows), as in Python."""
        subject = self.expr(stmt.subject, env)
        classes: dict[str, ConstructorType] = {}
        cases = [self.case(c, env, classes) for c in stmt.cases]
        if any(c.alias for c in cases) and not isinstance(subject, Var):
            holder = Var("subject", span=self.span(stmt.subject))
            lets.append((holder, subject))
            subject = holder
        arms = [Arm(c.body, c.binds + (((c.alias, subject),) if c.alias else ()), k.pattern)
                for c, k in zip(cases, stmt.cases)]
        patterns = [c.pattern for c in cases]
        missing = uncovered(patterns, classes)
        if missing is not None:
            arms.append(Arm([], (), stmt, missing))
            patterns.append(PatternWildcard(span=self.span(stmt)))

        def build(bodies: list[Expr]) -> Expr:
            return Match(subject, patterns, bodies, span=self.span(stmt))
        return self.branches(stmt, arms, rest, env, lets, fallthrough, build, "the match")

    def match_complete(self, stmt: ast.Match) -> bool:
        """Whether a match's cases cover every value (its patterns are read for this before the
        match is translated: a match in a branch decides whether the branch returns)."""
        classes: dict[str, ConstructorType] = {}
        return uncovered([self.case(c, None, classes).pattern for c in stmt.cases], classes) is None

    def returns(self, stmts: list[ast.stmt]) -> bool:
        return always_returns(stmts, self.match_complete)

    def branches(self, stmt: ast.If | ast.Match, arms: list[Arm], rest: list[ast.stmt], env: Env, lets: list,
                 fallthrough, build: Callable[[list[Expr]], Expr], what: str) -> Expr | None:
        """An ``if`` or a ``match``, ``build`` making it of its arms' translations. Without a
        ``return`` in it, it binds the variables its arms assign (``joined``); with one, the
        code after it moves into the one arm that may fall through, or, when several may,
        into a local join function that they call."""
        self.nesting += 1
        try:
            if contains([s for arm in arms for s in arm.body], (ast.Return,)) is None:
                self.joined(stmt, arms, env, lets, build, what)
                return None
            if rest and sum(not self.returns(arm.body) for arm in arms) > 1:
                cont = self.join_function(stmt, arms, rest, env, lets, fallthrough, what)
            elif rest:
                def cont(env2: Env) -> Expr:
                    self.nesting -= 1  # the code after the statement is back at its level
                    try:
                        return self.block(rest, env2, fallthrough)
                    finally:
                        self.nesting += 1
            else:
                cont = fallthrough
            bodies = [self.arm(arm, env, cont) for arm in arms]
        finally:
            self.nesting -= 1
        return build(bodies)

    def arm(self, arm: Arm, env: Env, cont: Callable[[Env], Expr]) -> Expr:
        """One arm: the names its pattern binds, then its statements."""
        if arm.missing is not None and getattr(cont, "ends_function", False):
            raise self.error(arm.node, f"no case of this match matches {arm.missing}, and the function would end there "
                                       "without a return: add a case for it (case _: takes every value left)")
        inner = dict(env)
        for name, var in arm.binds:
            self.assign(inner, name, var, arm.node)
        return self.block(arm.body, inner, cont)

    def carried(self, names: list[str], node: ast.AST, what: str) -> Callable[[Env], Expr]:
        """The fall-through of a branch or loop body: the tuple of the variables it carries."""
        def finish(env: Env) -> Expr:
            missing = [n for n in names if n not in env]
            if missing:
                raise self.error(node, f"{missing[0]} is not assigned on every path through {what}: "
                                       "assign it before, or in every branch")
            return pack([env[n] for n in names], self.span(node), self)
        return finish

    def carried_names(self, arms: list[Arm], env: Env) -> list[str]:
        """What an ``if`` or ``match`` carries on: the names an arm assigns that exist before it,
        and those every arm that may fall through assigns (one that returns goes on nowhere)."""
        assigned = [assigned_names(arm.body) | {name for name, _ in arm.binds} for arm in arms]
        falling = [names for names, arm in zip(assigned, arms) if not self.returns(arm.body)]
        return sorted(set.union(*assigned) & set(env) | set.intersection(*(falling or [set()])))

    def joined(self, stmt: ast.If | ast.Match, arms: list[Arm], env: Env, lets: list,
               build: Callable[[list[Expr]], Expr], what: str) -> None:
        names = self.carried_names(arms, env)
        finish = self.carried(names, stmt, what)
        bodies = [self.arm(arm, env, finish) for arm in arms]
        if not names:
            return  # nothing escapes the statement: it has no effect
        joined = build(bodies)
        hint = None
        for body in bodies:
            hint = hint or self.hint(body)
        self.set_hint(joined, hint)
        self.unpack(names, joined, env, lets, stmt)

    def unpack(self, names: list[str], value: Expr, env: Env, lets: list, node: ast.AST) -> None:
        if len(names) == 1:
            var = Var(names[0], span=self.span(node))
            self.set_hint(var, self.hint(value))
            lets.append((var, value))
            self.assign(env, names[0], var, node)
            return
        target = ast.Tuple([ast.Name(n, ast.Store(), lineno=node.lineno, col_offset=node.col_offset) for n in names],
                           ast.Store(), lineno=node.lineno, col_offset=node.col_offset)
        self.bind(target, value, env, lets)

    def join_function(self, stmt: ast.If | ast.Match, arms: list[Arm], rest: list[ast.stmt], env: Env, lets: list,
                      fallthrough, what: str) -> Callable[[Env], Expr]:
        """Several arms may fall through and one may return: the code after the statement becomes
        a local function those arms call."""
        names = self.carried_names(arms, env)
        params = [Var(n, span=self.span(stmt)) for n in names]
        inner = {**env, **dict(zip(names, params))}
        self.nesting -= 1
        try:
            body = self.block(rest, inner, fallthrough)
        finally:
            self.nesting += 1
        join = Var("join", span=self.span(stmt))
        lets.append((join, Function(params, body, span=self.span(stmt))))

        def call_join(env2: Env) -> Expr:
            missing = [n for n in names if n not in env2]
            if missing:
                raise self.error(stmt, f"{missing[0]} is not assigned on every path through {what}")
            return Call(join, [env2[n] for n in names], span=self.span(stmt))
        return call_join

    def loop(self, stmt: ast.While | ast.For, env: Env, lets: list) -> None:
        if stmt.orelse:
            raise self.error(stmt, "a loop's else clause is not supported: put that code after the loop")
        found = contains(stmt.body, (ast.Return, ast.Break, ast.Continue))
        if found is not None:
            word = type(found).__name__.lower()
            raise self.error(found, f"{word} inside a loop is not supported: loops become recursive functions; "
                                    "carry a flag and test it in the while condition")
        names = sorted(assigned_names(stmt.body) & set(env))
        counter = None
        if isinstance(stmt, ast.For):
            counter, start, stop, step = self.for_range(stmt, env, lets)
            names = [n for n in names if n != counter]
        for n in names:
            self.reassigned(env, n, first_store(stmt.body, n))
        params = [Var(n, span=self.span(stmt)) for n in names]
        for p, n in zip(params, names):
            self.set_hint(p, self.hint(env[n]))
        inner = {**env, **dict(zip(names, params))}
        loop_var = Var("loop", span=self.span(stmt))
        self.nesting += 1
        try:
            if counter is None:
                cond = self.expr(stmt.test, inner)
                call_args = []
            else:
                index = Var(counter, span=self.span(stmt.target))
                self.set_hint(index, self.hint(stop))
                inner[counter] = index
                compare = "less" if step[1] > 0 else "greater"
                cond = Call(Op(compare, span=self.span(stmt.iter)), [index, stop], span=self.span(stmt.iter))
                step_expr = self.strict(_Weak(step[1], stmt.iter), self.hint(stop)) if step[0] is None else step[0]
                call_args = [Call(Op("add", span=self.span(stmt.iter)), [index, step_expr], span=self.span(stmt.iter))]

            def again(env2: Env) -> Expr:
                return Call(loop_var, call_args + [env2[n] for n in names], span=self.span(stmt))
            body = self.block(stmt.body, inner, again)
        finally:
            self.nesting -= 1
        env.pop(counter, None)  # Python leaves the last index behind; relayish does not
        if not names:
            return  # nothing is carried out of the loop: it has no effect
        done = pack(params, self.span(stmt), self)
        loop_params = ([index] if counter is not None else []) + params
        lets.append((loop_var, Function(loop_params, If(cond, body, done, span=self.span(stmt)), span=self.span(stmt))))
        first = ([start] if counter is not None else []) + [env[n] for n in names]
        result = Call(loop_var, first, span=self.span(stmt))
        self.set_hint(result, self.hint(done))
        self.unpack(names, result, env, lets, stmt)

    def for_range(self, stmt: ast.For, env: Env, lets: list) -> tuple[str, Expr, Expr, tuple[Expr | None, int]]:
        """``for i in range(...)``: the counter's name, start, stop (bound once) and step
        (an expression or None, and its sign, which must be known)."""
        call = stmt.iter
        if not (isinstance(call, ast.Call) and isinstance(call.func, ast.Name) and self.src.lookup(call.func.id) is range
                and call.func.id not in env):
            raise self.error(call, "for loops run over range(...) only: write for i in range(n) and index tensors "
                                   "with relay.take")
        if not isinstance(stmt.target, ast.Name):
            raise self.error(stmt.target, "the loop variable must be one name: for i in range(n)")
        if call.keywords or not 1 <= len(call.args) <= 3:
            raise self.error(call, "range takes 1 to 3 positional arguments: range(stop), range(start, stop[, step])")
        values = [self.value(a, env) for a in call.args]
        hint = next((self.hint(v) for v in values if self.hint(v) is not None), None)
        exprs = [self.strict(v, hint) for v in values]
        start = exprs[0] if len(exprs) > 1 else self.strict(_Weak(0, call), hint)
        stop = exprs[1] if len(exprs) > 1 else exprs[0]
        step: tuple[Expr | None, int] = (None, 1)
        if len(values) == 3:
            literal = values[2].value if isinstance(values[2], _Weak) else None
            if not isinstance(literal, int) or literal == 0:
                raise self.error(call.args[2], "the step of range must be a nonzero int literal (its sign decides the test)")
            step = (None, literal)
        stop_var = Var("stop", span=self.span(call))
        self.set_hint(stop_var, hint or _INT32)
        lets.append((stop_var, stop))
        return stmt.target.id, start, stop_var, step

    def nested_def(self, stmt: ast.FunctionDef, env: Env) -> tuple[Var, Function]:
        if stmt.decorator_list:
            raise self.error(stmt.decorator_list[0], "decorators on nested functions are not supported")
        self.check_arguments(stmt.args, stmt)
        var = Var(stmt.name, span=self.span(stmt))
        params = []
        for arg in stmt.args.args:
            ty = self.local_type(arg.annotation) if arg.annotation is not None else None
            p = Var(arg.arg, ty, span=self.span(arg))
            self.set_hint(p, hint_of_type(ty) if ty is not None else None)
            params.append(p)
        ret = self.local_type(stmt.returns) if stmt.returns is not None else None
        inner = {**env, stmt.name: var, **{a.arg: p for a, p in zip(stmt.args.args, params)}}
        self.nesting += 1
        self.nesting_fn += 1
        self.ret_hints.append(hint_of_type(ret) if ret is not None else None)
        self.ret_types.append(ret)
        try:
            body = self.block(stmt.body, inner, self.missing_return(stmt))
        finally:
            self.nesting -= 1
            self.nesting_fn -= 1
            self.ret_hints.pop()
            self.ret_types.pop()
        fn = Function(params, body, ret, span=self.span(stmt))
        self.capture(fn, env, var)
        self.param_hints[id(var)] = tuple(self.hint(p) for p in params)
        return var, fn

    # expressions --------------------------------------------------------------------------
    def value(self, node: ast.expr, env: Env) -> Expr | _Weak:
        """An expression, or a weak literal (a Python number whose dtype is not yet known)."""
        if isinstance(node, ast.Constant):
            if isinstance(node.value, (bool, int, float)):
                return _Weak(node.value, node)
            raise self.error(node, f"the constant {node.value!r} is not a number: relayish values are tensors")
        handler = self.EXPRESSIONS.get(type(node))
        if handler is not None:
            return handler(self, node, env)
        if isinstance(node, ast.Attribute) and isinstance(node.value, ast.Name) and node.value.id not in env \
                and self.src.lookup(node.value.id) is self.relay:
            if node.attr not in relay_names():
                raise self.unknown_operator(node, node.attr)
            if node.attr in PRELUDE_FUNCTIONS:
                self.prelude_calls.add(node.attr)
                return GlobalVar(node.attr, span=self.span(node))
            raise self.error(node, f"relay.{node.attr} can only be called here: write relay.{node.attr}(x), or to pass "
                                   f"it as a function, lambda v: relay.{node.attr}(v)")
        constructor = self.constructor(node, env) if isinstance(node, ast.Attribute) else None
        if constructor is not None:
            return self.constructor_value(constructor, node)
        if isinstance(node, ast.Attribute):
            raise self.error(node, "attributes are not supported inside @relay (tensors have no .shape or .T here): "
                                   "use relay operators, e.g. relay.transpose(x)")
        message = UNSUPPORTED_EXPRS.get(type(node), f"{type(node).__name__} expressions are not supported")
        raise self.error(node, message)

    def tuple_(self, node: ast.Tuple, env: Env) -> Expr:
        fields = [self.expr(e, env) for e in node.elts]
        return self.set_hint(Tuple(fields, span=self.span(node)), tuple(self.hint(f) for f in fields))

    def typed(self, node: ast.expr, env: Env, hint: Any) -> Expr:
        """An expression where a dtype is expected (an annotated result, variable or
        parameter): literals in it, in tuples and conditional expressions too, take it."""
        if isinstance(node, ast.Tuple) and isinstance(hint, tuple) and len(hint) == len(node.elts):
            fields = [self.typed(e, env, h) for e, h in zip(node.elts, hint)]
            return self.set_hint(Tuple(fields, span=self.span(node)), tuple(self.hint(f) for f in fields))
        if isinstance(node, ast.IfExp):
            return self.if_expr(node, env, hint)
        return self.strict(self.value(node, env), hint)

    def if_expr(self, node: ast.IfExp, env: Env, hint: Any) -> Expr:
        cond = self.expr(node.test, env)
        self.nesting += 1
        try:
            a, b = self.value(node.body, env), self.value(node.orelse, env)
        finally:
            self.nesting -= 1
        if hint is None and isinstance(a, _Weak) and isinstance(b, _Weak):
            kind = float if float in (type(a.value), type(b.value)) else int if int in (type(a.value), type(b.value)) else bool
            a, b = (self.strict(_Weak(kind(w.value), w.node)) for w in (a, b))
        if hint is None and isinstance(a, _Weak) and self.hint(b) is None:
            a = self.follow(a, b)
        if hint is None and isinstance(b, _Weak) and self.hint(a) is None:
            b = self.follow(b, a)
        a = self.strict(a, hint or self.hint(b))
        b = self.strict(b, hint or self.hint(a))
        return self.set_hint(If(cond, a, b, span=self.span(node)), self.hint(a) or self.hint(b))

    def name(self, node: ast.Name, env: Env) -> Expr | _Weak:
        if node.id in env:
            var = env[node.id]
            if id(var) in self.stale:
                name, where = self.stale[id(var)]
                raise self.error(node, f"{node.id} captured {name}, which is reassigned at line {self.span(where).line}: "
                                       f"Python would make {node.id} see the new value, relayish keeps the value it "
                                       f"captured; give the new value of {name} another name")
            return var
        if node.id in self.local_names:
            raise self.error(node, f"{node.id} is not defined here: it is assigned later, only inside a loop, or only on "
                                   "some paths; assign it before this line")
        value = self.src.lookup(node.id)
        if value is MISSING:
            raise self.undefined(node, env)
        return self.python_value(value, node)

    def undefined(self, node: ast.Name, env: Env) -> FrontendError:
        visible = {*env, *self.local_names, *self.src.fn.__globals__, *self.src.fn.__code__.co_freevars}
        return self.error(node, f"name {node.id} is not defined{did_you_mean(node.id, visible)}")

    @property
    def local_names(self) -> set[str]:
        if not hasattr(self, "_local_names"):
            self._local_names = assigned_names(self.src.node.body) | {a.arg for a in self.src.node.args.args}
        return self._local_names

    def python_value(self, value: Any, node: ast.AST) -> Expr | _Weak:
        """A value from the enclosing Python scope: a constant, or another decorated function."""
        if isinstance(value, (bool, int, float)) and not isinstance(value, np.generic):
            return _Weak(value, node)
        if isinstance(value, (np.ndarray, np.generic)):
            try:
                return self.set_hint(Constant(np.asarray(value), span=self.span(node)), BaseType.from_numpy(value.dtype))
            except TypeError as err:
                raise self.error(node, f"the NumPy constant {getattr(node, 'id', '')} has no relayish dtype: {err}") from None
        callee = self.link(value)
        if callee is not None:
            self.arity[callee.name] = len(callee.params)
            return GlobalVar(callee.name, span=self.span(node))
        if isinstance(value, ConstructorType):
            return self.constructor_value(value, node)
        if isinstance(value, Data):
            raise self.error(node, f"{value.name} is a data type, which is no value: build one with a constructor "
                                   f"({', '.join(c.signature() for c in value.constructors)})")
        what = getattr(value, "__name__", type(value).__name__)
        raise self.error(node, f"{what} is a Python {type(value).__name__}, which cannot be used inside @relay: "
                               "use tensors, tuples, relay operators and other @relay functions")

    def binop(self, node: ast.BinOp, env: Env) -> Expr | _Weak:
        spine = []  # a chain a + b + c + ... nests to the left: walk it without recursion
        left: ast.expr = node
        while isinstance(left, ast.BinOp):
            spine.append(left)
            left = left.left
        acc = self.value(left, env)
        for op_node in reversed(spine):
            acc = self.binary(op_node, acc, self.value(op_node.right, env))
        return acc

    def binary(self, node: ast.BinOp, a: Expr | _Weak, b: Expr | _Weak) -> Expr | _Weak:
        """Python's meaning on every dtype: ``//`` is ``floor_divide`` and ``%`` is ``floor_mod``
        (floor division, the remainder taking the divisor's sign), ints and floats alike."""
        if type(node.op) not in BINOPS:
            raise self.error(node, f"the operator {SYMBOLS[type(node.op)]} is not supported: use +, -, *, /, //, %, ** "
                                   "or @ and the relay operators")
        op_name, python_op = BINOPS[type(node.op)]
        if isinstance(a, _Weak) and isinstance(b, _Weak) and python_op is not None:
            try:
                return _Weak(python_op(a.value, b.value), node)
            except (ZeroDivisionError, OverflowError) as err:
                raise self.error(node, f"the constant expression fails in Python: {err}") from None
        hint = self.hint(a) or self.hint(b)
        if isinstance(node.op, ast.Div) and isinstance(hint, BaseType) and not isinstance(hint, FloatType):
            raise self.error(node, f"/ on {hint} tensors: NumPy would give float64; write // for floor division, "
                                   "or cast first: relay.cast(x, dtype=Float64) / y")
        return self.op_call(op_name, [a, b], {}, node)

    def unary(self, node: ast.UnaryOp, env: Env) -> Expr | _Weak:
        operand = self.value(node.operand, env)
        if isinstance(node.op, ast.UAdd):
            return operand
        if isinstance(node.op, ast.USub):
            if isinstance(operand, _Weak):
                return _Weak(-operand.value, node)
            return self.op_call("neg", [operand], {}, node)
        if isinstance(node.op, ast.Not):
            return self.op_call("logical_not", [operand], {}, node)
        raise self.error(node, "the operator ~ is not supported: use not, or relay.logical_not")

    def boolop(self, node: ast.BoolOp, env: Env) -> Expr:
        """``a and b`` is ``if a then b else False`` (short-circuit, as in Python, so it can
        guard a recursive call); ``or`` likewise. Operands are boolean scalars."""
        result = self.strict(self.value(node.values[-1], env), BoolType())
        self.nesting += 1
        try:
            for operand in reversed(node.values[:-1]):
                test = self.strict(self.value(operand, env), BoolType())
                short = self.strict(_Weak(isinstance(node.op, ast.Or), node), BoolType())
                if isinstance(node.op, ast.And):
                    result = If(test, result, short, span=self.span(node))
                else:
                    result = If(test, short, result, span=self.span(node))
        finally:
            self.nesting -= 1
        return self.set_hint(result, BoolType())

    def compare(self, node: ast.Compare, env: Env) -> Expr:
        """``a < b < c`` is ``a < b and b < c``."""
        for op in node.ops:
            if type(op) not in COMPARES:
                raise self.error(node, f"the comparison {type(op).__name__} is not supported: use <, <=, >, >=, ==, !=")
        values = [self.value(node.left, env)] + [self.value(c, env) for c in node.comparators]
        parts = []
        for op, a, b in zip(node.ops, values, values[1:]):
            parts.append(self.op_call(COMPARES[type(op)], [a, b], {}, node))
        result = parts[-1]
        for part in reversed(parts[:-1]):
            result = If(part, result, self.strict(_Weak(False, node)), span=self.span(node))
        return self.set_hint(result, BoolType())

    def subscript(self, node: ast.Subscript, env: Env) -> Expr:
        index = node.slice
        if not (isinstance(index, ast.Constant) and isinstance(index.value, int) and not isinstance(index.value, bool)
                and index.value >= 0):
            raise self.error(node, "only tuples can be indexed, by a literal int >= 0 (t[0]); index tensors with "
                                   "relay.take or relay.strided_slice")
        base = self.expr(node.value, env)
        hint = self.hint(base)
        result = Proj(base, index.value, span=self.span(node))
        return self.set_hint(result, hint[index.value] if isinstance(hint, tuple) and index.value < len(hint) else None)

    def lambda_(self, node: ast.Lambda, env: Env) -> Function:
        self.check_arguments(node.args, node)
        params = [Var(a.arg, span=self.span(a)) for a in node.args.args]
        inner = {**env, **{a.arg: p for a, p in zip(node.args.args, params)}}
        self.nesting += 1
        self.nesting_fn += 1
        try:
            body = self.expr(node.body, inner)
        finally:
            self.nesting -= 1
            self.nesting_fn -= 1
        return Function(params, body, span=self.span(node))

    # calls --------------------------------------------------------------------------------
    def call(self, node: ast.Call, env: Env) -> Expr | _Weak:
        func = node.func
        if isinstance(func, ast.Attribute) and isinstance(func.value, ast.Name) and func.value.id not in env \
                and self.src.lookup(func.value.id) is self.relay:
            return self.relay_call(func.attr, node, env)
        if isinstance(func, ast.Name) and func.id not in env:
            target = self.src.lookup(func.id)
            if target is MISSING:
                raise self.undefined(func, env)
            if isinstance(target, DType):
                return self.convert(target, node, env)
            if isinstance(target, ConstructorType):
                return self.construct(target, node, env)
            callee = self.link(target)
            if callee is not None:
                return self.global_call(callee, node, env)
            if func.id in self.local_names:
                raise self.error(func, f"{func.id} is not defined here: assign it before this line")
            if target is range:
                raise self.error(node, "range(...) only appears as the iterable of a for loop")
            what = getattr(target, "__qualname__", func.id)
            raise self.error(node, f"calling the Python function {what} is not supported inside @relay: only relay "
                                   "operators (relay.tanh(x), ...), other @relay functions and local functions can be "
                                   "called; decorate it with @relay or use the relay operator")
        constructor = self.constructor(func, env) if isinstance(func, ast.Attribute) else None
        if constructor is not None:
            return self.construct(constructor, node, env)
        if isinstance(func, ast.Attribute):
            raise self.error(node, self.attribute_call_message(func, env))
        if node.keywords:
            raise self.error(node, "keyword arguments are only supported for relay operators and @relay functions")
        callee = self.expr(func, env)
        target = callee.func if isinstance(callee, (Grad, Jvp)) else callee
        hints = self.param_hints.get(id(target), ())
        if isinstance(callee, Jvp):
            hints = (*hints, *hints)  # the tangents have the arguments' types
        args = [self.typed(a, env, hints[i] if i < len(hints) else None) for i, a in enumerate(node.args)]
        return Call(callee, args, span=self.span(node))

    # data types -----------------------------------------------------------------------------
    def constructor(self, node: ast.expr, env: Env | None) -> ConstructorType | None:
        """The constructor class a name or dotted name denotes (``Cons``, ``Tree.Leaf``,
        ``relayish.Nil``), or None; a variable of the function is none (``env`` None: the
        function's own names are what is known)."""
        attrs_: list[str] = []
        base = node
        while isinstance(base, ast.Attribute):
            attrs_.append(base.attr)
            base = base.value
        if not isinstance(base, ast.Name) or base.id in (env or ()) or base.id in self.local_names:
            return None
        value = self.src.lookup(base.id)
        for attr in reversed(attrs_):
            value = MISSING if value is MISSING or value is self.relay else getattr(value, attr, MISSING)
        return value if isinstance(value, ConstructorType) else None

    def note_data(self, data: Data, node: ast.AST) -> None:
        """A data type the code uses, which the module must define; two of one name cannot be told apart."""
        other = self.data.setdefault(data.name, data)
        if other is not data:
            raise self.error(node, f"two data types are named {data.name} ({other.origin} and {data.origin}): "
                                   "rename one")

    def field_hint(self, cls: ConstructorType, index: int) -> Any:
        """The dtype hint of a constructor's field: a literal there takes the declared dtype."""
        try:
            return hint_of_type(cls.field_type(index))
        except FrontendError:
            return None  # the definition is wrong: building the module says where

    def construct(self, cls: ConstructorType, node: ast.Call, env: Env) -> Expr:
        """``Cons(h, t)``: a value of the constructor's data type."""
        if node.keywords:
            raise self.error(node.keywords[0], f"constructor fields are positional: write {cls.signature()}")
        if len(node.args) != cls.arity:
            raise self.error(node, cls.arity_message(len(node.args)))
        self.note_data(cls.data_type, node.func)
        fields = [self.typed(arg, env, self.field_hint(cls, i)) for i, arg in enumerate(node.args)]
        return Construct(cls.ir_name, fields, span=self.span(node))

    def constructor_value(self, cls: ConstructorType, node: ast.expr) -> Expr:
        """A constructor not called is the function that builds its values: ``relay.map(Some, xs)``."""
        name = ast.unparse(node)
        if cls.arity == 0:
            raise self.error(node, f"{name} is a constructor: write {name}() for its value")
        self.note_data(cls.data_type, node)
        span = self.span(node)
        params = [Var(f"field{i}", span=span) for i in range(cls.arity)]
        return Function(params, Construct(cls.ir_name, params, span=span), span=span)

    def prelude_call(self, name: str, node: ast.Call, env: Env) -> Expr:
        """``relay.map(f, xs)``: a call of the Prelude's ``@map`` (the module gets it)."""
        params = ", ".join(p.name_hint for p in prelude_module()[name].params)
        if node.keywords:
            raise self.error(node.keywords[0], f"relay.{name} takes its arguments by position: relay.{name}({params})")
        if len(node.args) != len(prelude_module()[name].params):
            raise self.error(node, f"relay.{name} takes {len(prelude_module()[name].params)} arguments ({params}), "
                                   f"given {len(node.args)}")
        args = [self.expr(arg, env) for arg in node.args]
        self.prelude_calls.add(name)
        return Call(GlobalVar(name, span=self.span(node.func)), args, span=self.span(node))

    def attribute_call_message(self, func: ast.Attribute, env: Env) -> str:
        base = func.value
        while isinstance(base, ast.Attribute):
            base = base.value
        text = ast.unparse(func)
        if isinstance(base, ast.Name) and base.id not in env and base.id not in self.local_names:
            hint = f"relay.{func.attr}(...)" if lookup_op(ALIASES.get(func.attr, func.attr)) else "a relay operator"
            return (f"calling the Python function {text} is not supported inside @relay: use {hint}, another @relay "
                    "function or a local function")
        return f"methods such as {text}(...) are not supported: use the relay operator, e.g. relay.{func.attr}(x)"

    def convert(self, dtype: DType, node: ast.Call, env: Env) -> Expr:
        if len(node.args) != 1 or node.keywords:
            raise self.error(node, f"{dtype.name}(x) takes one argument")
        value = self.value(node.args[0], env)
        if isinstance(value, _Weak):
            return self.strict(_Weak(float(value.value) if isinstance(dtype.base, FloatType) else value.value, node),
                               dtype.base)
        return self.set_hint(Call(Op("cast", span=self.span(node)), [value], {"dtype": dtype.base}, span=self.span(node)), dtype.base)

    def global_call(self, callee: Callee, node: ast.Call, env: Env) -> Expr:
        nodes: list[Any] = list(node.args)
        for kw in node.keywords:
            if kw.arg is None or kw.arg not in callee.params:
                raise self.error(kw, f"@{callee.name} has no parameter {kw.arg} (it has: {', '.join(callee.params)})")
            index = callee.params.index(kw.arg)
            nodes.extend([MISSING] * (index + 1 - len(nodes)))
            if nodes[index] is not MISSING:
                raise self.error(kw, f"@{callee.name} got two values for {kw.arg}")
            nodes[index] = kw.value
        if len(nodes) != len(callee.params) or MISSING in nodes:
            raise self.error(node, f"{callee.name} takes {len(callee.params)} arguments ({', '.join(callee.params)}), "
                                   f"given {sum(v is not MISSING for v in nodes)}")
        args = [self.typed(n, env, h) for n, h in zip(nodes, callee.param_hints)]
        if callee.threads_params:
            args += self.hidden_vars
        return self.set_hint(Call(GlobalVar(callee.name, span=self.span(node.func)), args, span=self.span(node)),
                             callee.ret_hint)

    def vmap(self, node: ast.Call, env: Env) -> Vmap:
        """``relay.vmap(f, in_axes=...)``: in_axes written out (an int, None, or a tuple of them)."""
        usage = ("inside @relay, relay.vmap(f, in_axes=...) takes one function and in_axes: an axis, None, or a "
                 "tuple with one per parameter, written out (0, None, (0, None))")
        keywords = {kw.arg: kw.value for kw in node.keywords}
        if len(node.args) != 1 or set(keywords) - {"in_axes"}:
            raise self.error(node, usage)
        func = self.expr(node.args[0], env)
        written = keywords.get("in_axes")
        try:
            axes = 0 if written is None else ast.literal_eval(written)
        except ValueError:
            raise self.error(written, usage) from None
        if not isinstance(axes, tuple):
            if isinstance(func, GlobalVar):
                count = self.arity.get(func.name)
            else:
                count = len(func.params) if isinstance(func, Function) else len(self.param_hints.get(id(func), ())) or None
            if count is None:
                raise self.error(node, usage + ": this function's parameters are not known here, so write a tuple")
            axes = (axes,) * count
        try:
            return Vmap(func, axes, span=self.span(node))
        except ValueError as err:
            raise self.error(written if written is not None else node, f"{err}: {usage}") from None

    def relay_call(self, name: str, node: ast.Call, env: Env) -> Expr:
        keywords = {kw.arg for kw in node.keywords}
        if name == "grad":
            if len(node.args) != 1 or node.keywords:
                raise self.error(node, "inside @relay, relay.grad(f) takes one function and returns a function giving "
                                       "(value, (gradient per argument...))")
            return Grad(self.expr(node.args[0], env), span=self.span(node))
        if name == "jvp":
            if len(node.args) != 1 or node.keywords:
                raise self.error(node, "inside @relay, relay.jvp(f) takes one function and returns a function of f's "
                                       "arguments and a tangent for each, giving (value, tangent)")
            return Jvp(self.expr(node.args[0], env), span=self.span(node))
        if name == "vmap":
            return self.vmap(node, env)
        if name in PRELUDE_FUNCTIONS:
            return self.prelude_call(name, node, env)
        if name in LAYERS and (LAYERS[name] in keywords or name == "linear"):
            return self.layer(name, node, env)
        op_name = ALIASES.get(name, name)
        if lookup_op(op_name) is None:
            raise self.unknown_operator(node.func, name)
        attrs = {kw.arg: self.attr_value(kw.value, env) for kw in node.keywords}
        if any(kw.arg is None for kw in node.keywords):
            raise self.error(node, "**kwargs is not supported: write each attribute")
        if name in ("max_pool", "avg_pool"):
            attrs = self.pool_attrs(attrs, node)
        args = [self.value(a, env) for a in node.args]
        return self.op_call(op_name, args, attrs, node)

    def unknown_operator(self, node: ast.AST, name: str) -> FrontendError:
        return self.error(node, f"relay has no operator {name}{did_you_mean(name, relay_names(), 'relay.')} (the "
                                "operators are listed in docs/operators.md; layers are relay.conv2d(x, num_filter=...) "
                                "and relay.linear(x, num_hidden=...))")

    def op_call(self, name: str, values: list, attrs: dict, node: ast.AST) -> Expr:
        """A call of a library operator; weak literals take the dtype of a tensor argument."""
        hint = next((self.hint(v) for v in values[1:] if name == "where" and self.hint(v) is not None), None)
        if hint is None:
            hint = next((self.hint(v) for v in values if isinstance(self.hint(v), BaseType)), None)
        at = None  # no dtype known here: a literal follows a tensor argument's dtype at run time
        if hint is None:
            at = next((i for i, v in enumerate(values) if not isinstance(v, _Weak) and not (name == "where" and i == 0)), None)
        bindings: list[tuple[Var, Expr]] = []
        if at is not None and any(isinstance(v, _Weak) for v in values):
            # the partner appears twice (as itself and in cast_like): an expression is bound
            # first, and so is every argument before it, to keep their order of evaluation
            values = [self.bound(v, bindings) if not isinstance(v, _Weak) and k <= at else v for k, v in enumerate(values)]
        partner = None if at is None else values[at]
        args = [self.follow(v, partner) if partner is not None and isinstance(v, _Weak) and (name != "where" or i > 0)
                else self.strict(v, hint if not (name == "where" and i == 0) else BoolType()) for i, v in enumerate(values)]
        try:
            call = Call(Op(name, span=self.span(node)), args, attrs, span=self.span(node))
        except RelayError as err:
            raise self.error(node, f"relay.{name}: {err.message}") from None
        result_hint = self.result_hint(name, call, args)
        for var, value in reversed(bindings):
            call = Let(var, value, call, span=self.span(node))
        return self.set_hint(call, result_hint)

    def bound(self, value: Expr, bindings: list[tuple[Var, Expr]]) -> Expr:
        """``value`` itself when it is a variable or a constant, else a new variable bound to it."""
        if isinstance(value, (Var, Constant)):
            return value
        var = self.set_hint(Var("arg", span=value.span), self.hint(value))
        bindings.append((var, value))
        return var

    def result_hint(self, name: str, call: Call, args: list[Expr]) -> Any:
        """The dtype of an operator call's result, as far as the translator can tell."""
        if name in BOOL_RESULT:
            result_hint: Any = BoolType()
        elif name == "argmax":
            result_hint = _INT32
        elif "dtype" in call.attr_dict:
            result_hint = call.attr_dict["dtype"]
        elif name == "split":  # a tuple of parts of its argument's dtype
            sections = call.attr_dict.get("sections")
            parts = sections if sections is not None else len(call.attr_dict.get("indices") or ()) + 1
            result_hint = (self.hint(args[0]),) * parts
        else:
            result_hint = self.hint(args[0]) if args else None
        return result_hint

    def attr_value(self, node: ast.expr, env: Env) -> Any:
        """An attribute is a Python constant: a literal, a tuple or list of them, a dtype, or a
        name bound to one outside the function."""
        try:
            return ast.literal_eval(node)
        except (ValueError, SyntaxError, TypeError):
            pass
        if isinstance(node, ast.Name) and node.id not in env:
            value = self.src.lookup(node.id)
            if isinstance(value, DType):
                return value.base
            if isinstance(value, (bool, int, float, str, tuple, list)) or value is None:
                return value
        raise self.error(node, "an operator attribute must be a Python constant (a number, a tuple of numbers, a dtype "
                               "such as Float64, or a module-level constant), not a value computed inside @relay")

    @staticmethod
    def window(value: Any) -> Any:
        """The paper's ``ksize=[1, 5, 5, 1]`` (NHWC-style, batch and channel 1) as ``(5, 5)``."""
        if isinstance(value, (list, tuple)) and len(value) == 4 and value[0] == 1 and value[3] == 1:
            return (value[1], value[2])
        return value

    def pool_attrs(self, attrs: dict, node: ast.AST) -> dict:
        if "ksize" in attrs:
            if "pool_size" in attrs:
                raise self.error(node, "give either ksize or pool_size")
            attrs["pool_size"] = attrs.pop("ksize")
        for key in ("pool_size", "strides"):
            if key in attrs:
                attrs[key] = self.window(attrs[key])
        return attrs

    # layers (models only) -----------------------------------------------------------------
    def layer(self, kind: str, node: ast.Call, env: Env) -> Expr:
        if self.model.layers is None:
            raise self.error(node, f"relay.{kind}(x, {LAYERS[kind]}=...) is a layer with hidden parameters: it can only be "
                                   "called in a @relay_model function (or call the operator with explicit weights)")
        if self.nesting:
            raise self.error(node, "layers must be called in the model's straight-line code (not inside if, loops or "
                                   "nested functions): each call site owns one set of parameters")
        if len(node.args) != 1:
            raise self.error(node, f"the layer relay.{kind} takes one input tensor and keyword attributes")
        allowed = {"conv2d": {"num_filter", "ksize", "strides", "padding", "no_bias"},
                   "linear": {"num_hidden", "no_bias"}}[kind]
        attrs = {}
        for kw in node.keywords:
            if kw.arg not in allowed:
                raise self.error(kw.value, f"the layer relay.{kind} has no attribute {kw.arg} (it takes {', '.join(sorted(allowed))})")
            attrs[kw.arg] = self.attr_value(kw.value, env)
        required = LAYERS[kind]
        if required not in attrs:
            raise self.error(node, f"the layer relay.{kind} needs {required}=")
        if kind == "conv2d" and "ksize" not in attrs:
            raise self.error(node, "the layer relay.conv2d needs ksize= (e.g. ksize=5 or ksize=[1, 5, 5, 1])")
        for key in ("ksize", "strides"):
            if key in attrs:
                attrs[key] = self.window(attrs[key])
        taken = {s.name for s in self.sites}
        assigned = self.pending_name[0] if self.pending_name and self.pending_name[1] is node else None
        name = assigned if assigned and assigned not in taken else f"{kind}{len(self.sites) + 1}"
        site = LayerSite(kind, name, attrs, self.span(node))
        self.sites.append(site)
        data = self.expr(node.args[0], env)
        k = len(self.sites) - 1
        if k >= len(self.model.layers):
            if self.model.probe:
                raise Probe(site, data)
            raise self.error(node, "internal: the model's parameters were inferred for fewer layers")
        start = sum(len(layer.params) for layer in self.model.layers[:k])
        weights = self.hidden_vars[start:start + len(self.model.layers[k].params)]
        span = self.span(node)
        if kind == "conv2d":
            conv_attrs = {"strides": attrs.get("strides", 1), "padding": attrs.get("padding", 0)}
            out = Call(Op("conv2d", span=span), [data, weights[0]], conv_attrs, span=span)
            if len(weights) > 1:
                out = Call(Op("add", span=span), [out, weights[1]], span=span)
        else:
            out = Call(Op("dense", span=span), [data, *weights], span=span)
        return self.set_hint(out, self.hint(data))


Translator.EXPRESSIONS = {
    ast.Name: Translator.name, ast.BinOp: Translator.binop, ast.UnaryOp: Translator.unary,
    ast.BoolOp: Translator.boolop, ast.Compare: Translator.compare, ast.Tuple: Translator.tuple_,
    ast.Subscript: Translator.subscript, ast.Lambda: Translator.lambda_, ast.Call: Translator.call,
    ast.IfExp: lambda self, node, env: self.if_expr(node, env, None),
}
_INT32 = BaseType.from_numpy(np.dtype("int32"))


def hint_of_type(ty: Type | None) -> Any:
    """The dtype hint of an annotated type: a base type, a tuple of hints, or None."""
    if isinstance(ty, TensorType) and isinstance(ty.dtype, BaseType):
        return ty.dtype
    if isinstance(ty, TupleType):
        return tuple(hint_of_type(f) for f in ty.fields)
    return None


def pack(values: list[Expr], span: Span, translator: Translator) -> Expr:
    """One value as itself, several as a tuple."""
    if len(values) == 1:
        return values[0]
    return translator.set_hint(Tuple(values, span=span), tuple(translator.hint(v) for v in values))


def wrap(lets: list[tuple[Var, Expr]], body: Expr) -> Expr:
    """``let v1 = e1 in ... in body``, built from the inside out (no recursion)."""
    for var, value in reversed(lets):
        body = Let(var, value, body, span=var.span)
    return body
