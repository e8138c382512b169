"""The Python subset @relay translates, as data: operator tables, the messages for what is
not supported, and the scans of a block that control flow needs (which names it assigns,
whether it returns)."""

from __future__ import annotations

import ast
import difflib
import operator
from typing import Callable, Iterable

from relayish.ops.registry import all_ops

LAYERS = {"conv2d": "num_filter", "linear": "num_hidden"}  # layer kind -> the keyword that marks it
ALIASES = {"max_pool": "max_pool2d", "avg_pool": "avg_pool2d", "flatten_layer": "flatten"}
PRELUDE_FUNCTIONS = ("map", "foldl", "foldr", "length", "nth", "rev", "append", "zip", "get_or", "tree_map",
                     "tree_fold")  # the Prelude's globals (relayish/prelude_text.py), called as relay.<name>
BINOPS = {ast.Add: ("add", operator.add), ast.Sub: ("sub", operator.sub), ast.Mult: ("mul", operator.mul),
          ast.Div: ("div", operator.truediv), ast.FloorDiv: ("floor_divide", operator.floordiv),
          ast.Mod: ("floor_mod", operator.mod), ast.Pow: ("pow", operator.pow), ast.MatMult: ("matmul", None)}
SYMBOLS = {ast.LShift: "<< (shift left)", ast.RShift: ">> (shift right)", ast.BitOr: "| (bitwise or)",
           ast.BitAnd: "& (bitwise and)", ast.BitXor: "^ (bitwise xor)"}  # the operators not in BINOPS
COMPARES = {ast.Lt: "less", ast.LtE: "less_equal", ast.Gt: "greater", ast.GtE: "greater_equal",
            ast.Eq: "equal", ast.NotEq: "not_equal"}
BOOL_RESULT = set(COMPARES.values()) | {"logical_and", "logical_or", "logical_not"}
UNSUPPORTED_STMTS = {
    ast.Try: "try/except is not supported: a relayish program cannot raise; test the condition with if",
    ast.With: "with is not supported: there are no resources inside a relayish program",
    ast.Raise: "raise is not supported: a relayish program cannot raise",
    ast.Global: "global is not supported: functions are pure; pass the value as an argument",
    ast.Nonlocal: "nonlocal is not supported: functions are pure; return the new value instead",
    ast.Delete: "del is not supported: a variable lives until the function ends",
    ast.Import: "import is not supported here: import at module level and use relay.<op>",
    ast.ImportFrom: "import is not supported here: import at module level and use relay.<op>",
    ast.ClassDef: "class is not supported inside @relay: define classes outside",
    ast.AsyncFunctionDef: "async def is not supported: write a plain def",
    ast.Break: "break is not supported: loops become recursive functions; put the exit test in the while condition",
    ast.Continue: "continue is not supported: loops become recursive functions; use if/else in the body",
    ast.Assert: "assert is not supported: a relayish program cannot raise; annotate shapes instead",
    ast.AsyncFor: "async for is not supported: use for i in range(...)",
    ast.AsyncWith: "async with is not supported",
}
UNSUPPORTED_EXPRS = {
    ast.ListComp: "list comprehensions are not supported: use a for loop over range(...) or a relay operator",
    ast.SetComp: "set comprehensions are not supported",
    ast.DictComp: "dict comprehensions are not supported",
    ast.GeneratorExp: "generator expressions are not supported: use a for loop over range(...)",
    ast.List: "lists are not supported as values: use a tuple, or relay.stack / relay.concatenate for tensors",
    ast.Dict: "dicts are not supported: use a tuple",
    ast.Set: "sets are not supported: use a tuple",
    ast.Yield: "yield is not supported: a relayish function returns one value",
    ast.YieldFrom: "yield is not supported: a relayish function returns one value",
    ast.Await: "await is not supported",
    ast.NamedExpr: "the walrus operator := is not supported: assign in a statement",
    ast.JoinedStr: "f-strings are not supported: relayish values are tensors",
    ast.Starred: "*args is not supported: pass arguments one by one",
    ast.Slice: "slices are not supported: use relay.strided_slice(x, begin=..., end=...)",
}


def relay_names() -> set[str]:
    """What ``relay.<name>`` can be inside @relay: the operators, the paper's spellings, layers, grad
    and the Prelude's functions."""
    return set(all_ops()) | set(ALIASES) | set(LAYERS) | set(PRELUDE_FUNCTIONS) | {"grad", "jvp", "vmap"}


def did_you_mean(name: str, candidates: Iterable[str], prefix: str = "") -> str:
    """``: did you mean relay.tanh?`` for the candidates closest to ``name`` (a typo), else ''. Two
    neighbouring letters swapped is the likeliest typo: such a candidate alone (``tahn`` is ``tanh``,
    though ``tan`` and ``atan`` are as close by difflib's measure)."""
    names = sorted(set(candidates) - {name})
    swapped = {name[:i] + name[i + 1] + name[i] + name[i + 2:] for i in range(len(name) - 1)}
    close = [c for c in names if c in swapped] or difflib.get_close_matches(name, names, n=3)
    return f": did you mean {' or '.join(prefix + c for c in close)}?" if close else ""


def assigned_names(stmts: list[ast.stmt]) -> set[str]:
    """Names a block assigns (not inside nested functions), the names its match patterns
    capture included: what control flow must carry."""
    names: set[str] = set()
    stack: list[ast.AST] = list(stmts)
    while stack:
        node = stack.pop()
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            names.add(node.name)
            continue
        if isinstance(node, ast.Lambda):
            continue
        if isinstance(node, ast.Name) and isinstance(node.ctx, ast.Store):
            names.add(node.id)
        if isinstance(node, (ast.MatchAs, ast.MatchStar)) and node.name is not None:
            names.add(node.name)
        stack.extend(ast.iter_child_nodes(node))
    return names


def contains(stmts: list[ast.stmt], kinds: tuple[type, ...]) -> ast.AST | None:
    """The first node of one of ``kinds`` in a block, not looking into nested functions."""
    stack: list[ast.AST] = list(reversed(stmts))
    while stack:
        node = stack.pop()
        if isinstance(node, kinds):
            return node
        if not isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda, ast.ClassDef)):
            stack.extend(reversed(list(ast.iter_child_nodes(node))))
    return None


def first_store(stmts: list[ast.stmt], name: str) -> ast.AST:
    """Where a block first assigns ``name`` (for error positions)."""
    found = [n for stmt in stmts for n in ast.walk(stmt) if isinstance(n, ast.Name) and n.id == name
             and isinstance(n.ctx, ast.Store)]
    return min(found, key=lambda n: (n.lineno, n.col_offset)) if found else stmts[0]


def irrefutable(match: ast.Match) -> bool:
    """Whether a match's last case takes every value (``case _:``, ``case x:``): what a match
    covers when nothing is known about its constructors."""
    last = match.cases[-1]
    return last.guard is None and isinstance(last.pattern, ast.MatchAs) and last.pattern.pattern is None


def always_returns(stmts: list[ast.stmt], complete: Callable[[ast.Match], bool] = irrefutable) -> bool:
    """Whether every way through a block returns. A match returns when every case does and its
    cases cover every value, which ``complete`` tells (a value no case matches goes on after it)."""
    for stmt in stmts:
        if isinstance(stmt, ast.Return):
            return True
        if isinstance(stmt, ast.If) and always_returns(stmt.body, complete) and always_returns(stmt.orelse, complete):
            return True
        if isinstance(stmt, ast.Match) and all(always_returns(c.body, complete) for c in stmt.cases) and complete(stmt):
            return True
    return False
