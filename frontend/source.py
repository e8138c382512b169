"""Where a decorated function's code comes from: its AST, positions and Python scope."""

from __future__ import annotations

import ast
import builtins
import inspect
import textwrap
from typing import Any

from relayish.errors import FrontendError, Span

MISSING = object()


class Source:
    """The ``def`` of a Python function as an AST, with the offsets that turn AST positions
    into positions in the file, and the function's Python scope (globals and closure)."""

    def __init__(self, fn: Any):
        self.fn = fn
        self.name = fn.__name__
        try:
            lines, first = inspect.getsourcelines(fn)
            self.file = inspect.getsourcefile(fn) or "<unknown>"
        except (OSError, TypeError) as err:
            raise FrontendError(f"@relay needs the source of {fn.__qualname__}, which Python cannot find ({err}); "
                                "define it in a file rather than in an interactive session") from None
        text = "".join(lines)
        dedented = textwrap.dedent(text)
        first_line = next(line for line in lines if line.strip())
        self.col_offset = len(first_line) - len(first_line.lstrip()) if dedented != text else 0
        self.line_offset = first - 1
        try:
            tree = ast.parse(dedented)
        except SyntaxError as err:
            raise FrontendError(f"cannot parse the source of {fn.__qualname__}: {err.msg}") from None
        node = tree.body[0]
        if isinstance(node, ast.AsyncFunctionDef):
            raise FrontendError("async functions cannot be translated: write a plain def", self.span(node))
        if not isinstance(node, ast.FunctionDef):
            raise FrontendError(f"@relay decorates a def statement, not {type(node).__name__}", self.span(node))
        self.node: ast.FunctionDef = node

    def span(self, node: ast.AST) -> Span:
        return Span(self.file, node.lineno + self.line_offset, node.col_offset + 1 + self.col_offset)

    def lookup(self, name: str) -> Any:
        """The value ``name`` has in the function's Python scope, or ``MISSING``: closure
        cells first (read now, so functions defined later are found), then globals, builtins."""
        code = self.fn.__code__
        if name in code.co_freevars:
            cell = self.fn.__closure__[code.co_freevars.index(name)]
            try:
                return cell.cell_contents
            except ValueError:
                return MISSING
        if name in self.fn.__globals__:
            return self.fn.__globals__[name]
        return getattr(builtins, name, MISSING)

    def annotation(self, node: ast.expr, evaluated: Any = MISSING) -> Any:
        """The value of an annotation: ``evaluated`` (what Python computed at definition)
        when there is one, else the source evaluated in the function's scope; a string
        annotation (quoted, or under ``from __future__ import annotations``) is parsed."""
        if evaluated is not MISSING and not isinstance(evaluated, str):
            return evaluated
        if isinstance(node, ast.Constant) and isinstance(node.value, str):
            try:
                parsed = ast.parse(node.value.strip(), mode="eval").body
            except SyntaxError:
                raise FrontendError(f"the annotation {node.value!r} is not a Python expression", self.span(node)) from None
            node = ast.copy_location(parsed, node)
            for sub in ast.walk(node):
                ast.copy_location(sub, node)
        names = {n.id for n in ast.walk(node) if isinstance(n, ast.Name)}
        scope = {}
        for name in names:
            value = self.lookup(name)
            if value is MISSING:
                raise FrontendError(f"the annotation uses {name}, which is not defined where @relay can see it "
                                    "(module globals and the variables the function uses from enclosing functions)",
                                    self.span(node))
            scope[name] = value
        try:
            return eval(compile(ast.Expression(node), self.file, "eval"), {"__builtins__": {}}, scope)
        except Exception as err:  # noqa: BLE001 - any failure is a bad annotation
            raise FrontendError(f"cannot evaluate the annotation: {err}", self.span(node)) from None


