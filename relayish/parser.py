"""Reads the text format back into IR (docs/text-format.md).

A recursive-descent parser whose rules are generators run by ``traverse.trampoline``, so
nesting depth is limited by memory, not by Python's stack. It never evaluates anything and
raises nothing but ``ParseError``, which says ``file:line:col``, quotes the line with a
caret and says what was expected. Numbers, dimensions and attribute tuples have limits
(docs/text-format.md, "Limits"); past one, the error says it.
"""

from __future__ import annotations

import contextlib
import functools
import gc
import json
import math
import operator
import re
from typing import Any, Callable, Iterator

import numpy as np

from .dims import MAX_DIGITS, Dim
from .errors import ParseError, RelayError
from .expr import (
    Ascribe, Call, Constant, Construct, Expr, Function, GlobalVar, Grad, If, IsCtor, Jvp, Let, Match, Vmap,
    Op, Pattern, PatternCtor, PatternTuple, PatternVar, PatternWildcard, Proj, RefNew, RefRead,
    RefWrite, Tuple, Unpack, Var, Zero, pattern_vars,
)  # fmt: skip
from .lexer import Token, tokenize
from .ix.define import replace as replace_operator
from .ix.language import Definition
from .ix.text import definition_text, parse_definition
from .module import CtorDef, IndexDecl, Module, RelationDecl, TypeDef
from .names import NOT_DATA_NAMES
from .ops.registry import is_user_op, lookup_op
from .ops.user import RELATIONS
from .prelude_text import PRELUDE_TEXT
from .printer import BINARY_OPS, DTYPE_SUFFIX
from .traverse import trampoline
from .types import (
    BaseType, BoolType, DataType, FloatType, ForallType, FuncType, IntType, Kind, RefType, Shape,
    TensorType, TupleType, Type, TypeVar, UIntType,
)  # fmt: skip

_SYMBOL_OPS = {symbol: name for name, symbol in BINARY_OPS.items()}
_ASSIGN, _COMPARE, _ADD, _MUL = 1, 2, 3, 4
_INFIX_LEVELS = {":=": _ASSIGN, "+": _ADD, "-": _ADD, "*": _MUL, "/": _MUL}
_INFIX_LEVELS.update(dict.fromkeys(("==", "!=", "<", "<=", ">", ">="), _COMPARE))
_SUFFIX_DTYPES = {suffix: dtype for dtype, suffix in DTYPE_SUFFIX.items()}
_INT32, _FLOAT32, _BOOL = IntType(32), FloatType(32), BoolType()
_SUFFIX_DTYPES.update({"i32": _INT32, "f32": _FLOAT32})
_NUMBER_BODY = re.compile(r"nan|inf|\d+\.\d*(?:[eE][+-]?\d+)?|\d+[eE][+-]?\d+|\d+")
_KINDS = {kind.value: kind for kind in Kind}
_BASE_TYPES = {"IntType": IntType, "UIntType": UIntType, "FloatType": FloatType}
_TYPE_WORDS = {"Tensor", "Shape", "IntType", "UIntType", "FloatType", "BoolType", "RefType", "forall"}
_EXPR_WORDS = {"let", "if", "fn", "Zero", "Grad", "Jvp", "Vmap", "Ref", "tensor", "true", "false", "sq", "match", "Is", "Unpack"}
_RESERVED = _TYPE_WORDS | _EXPR_WORDS | {"in", "then", "else", "def", "operator", "type", "none"} | set(_KINDS)
_WORD_KINDS = frozenset(("punct", "ident"))  # the kinds of keywords and punctuation
_DIM_OPS = {"+": (1, operator.add), "-": (1, operator.sub), "*": (2, operator.mul), "//": (2, operator.floordiv)}
MAX_ATTRIBUTE_NESTING = 32  # attribute tuples nest at most this deep (operators take one level)


class _Scope:
    """Names in scope, with shadowing undone in reverse order."""

    def __init__(self) -> None:
        self.names: dict[str, Any] = {}

    def push(self, name: str, value: Any) -> tuple[str, Any]:
        saved = (name, self.names.get(name))
        self.names[name] = value
        return saved

    def pop(self, saved: list[tuple[str, Any]]) -> None:
        for name, value in reversed(saved):
            if value is None:
                self.names.pop(name, None)
            else:
                self.names[name] = value


class Parser:
    def __init__(self, text: str, filename: str, base: Module | None = None):
        self.tokens = tokenize(text, filename)
        self.base = base  # definitions (the Prelude's, say) that the text may use and the module keeps
        self.pos = 0
        self.locals = _Scope()
        self.tvars = _Scope()
        self.globals: set[str] = set()
        self.op_decls: dict[str, Type] = {}
        self.declared_ops: set[str] = set()
        # The data types and constructors a module defines anywhere (its pre-scan); None
        # outside a module (parse_expr), where any such name is taken as written.
        self.data_types: set[str] | None = None
        self.ctor_names: set[str] | None = None
        self.type_defs: dict[str, TypeDef] = {}
        self.ctor_owner: dict[str, str] = {}  # constructor -> the data type that defines it

    @functools.cached_property
    def closing(self) -> dict[int, int]:
        """Index of each "(" token -> index of its ")" token (worked out when first needed)."""
        closing, open_at = {}, []
        for i, tok in enumerate(self.tokens):
            if tok.kind == "punct" and tok.text == "(":
                open_at.append(i)
            elif tok.kind == "punct" and tok.text == ")" and open_at:
                closing[open_at.pop()] = i
        return closing

    # token helpers -------------------------------------------------------------------
    @property
    def tok(self) -> Token:
        return self.tokens[self.pos]

    def peek(self, offset: int = 1) -> Token:
        return self.tokens[min(self.pos + offset, len(self.tokens) - 1)]

    def at(self, text: str) -> bool:
        """Whether the keyword or punctuation ``text`` is here."""
        tok = self.tokens[self.pos]  # the helpers run for every token: no property here
        return tok.text == text and tok.kind in _WORD_KINDS

    def advance(self) -> Token:
        tok = self.tokens[self.pos]
        if tok.kind != "eof":
            self.pos += 1
        return tok

    def error(self, message: str, tok: Token | None = None) -> ParseError:
        return ParseError(message, (tok or self.tok).span)

    def expected(self, what: str) -> ParseError:
        tok = self.tok
        found = "end of input" if tok.kind == "eof" else repr(tok.text)
        return self.error(f"expected {what}, found {found}")

    def expect(self, text: str) -> Token:
        if not self.at(text):
            raise self.expected(repr(text))
        return self.advance()

    def accept(self, text: str) -> bool:
        if self.at(text):
            self.advance()
            return True
        return False

    def name_token(self, kind: str, what: str) -> Token:
        if self.tok.kind != kind:
            raise self.expected(what)
        return self.advance()

    def identifier(self, what: str) -> Token:
        tok = self.tok
        if tok.kind != "ident" or tok.text in _RESERVED:
            raise self.expected(what)
        return self.advance()

    def build(self, tok: Token, make: Callable[..., Any], *args: Any, **kwargs: Any) -> Any:
        """Construct a node; a constructor's complaint becomes a ParseError at ``tok``."""
        try:
            return make(*args, **kwargs)
        except (RelayError, ValueError, TypeError) as err:
            message = err.message if isinstance(err, RelayError) else str(err)
            raise self.error(message, tok) from None

    def integer(self, what: str) -> int:
        negative = self.at("-") and self.peek().kind == "number" and self.peek().start == self.tok.end
        if negative:
            self.advance()
        tok = self.tok
        if tok.kind != "number" or not tok.text.isdigit():
            raise self.expected(what)
        self.advance()
        value = _integer(tok.text)
        if value is None:
            raise self.error(f"{what} may have at most {MAX_DIGITS} digits", tok)
        return -value if negative else value

    # module --------------------------------------------------------------------------
    def module(self) -> Iterator[Any]:
        self.globals, self.declared_ops = self.declared()
        self.data_types, self.ctor_names = self.declared_data()
        functions: dict[str, Function] = {}
        if self.base is not None:  # its definitions come first, as if written before the text
            functions.update(self.base.functions)
            self.op_decls.update(self.base.op_decls)
            self.type_defs.update(self.base.type_defs)
            for type_def in self.base.type_defs.values():
                self.ctor_owner.update(dict.fromkeys((c.name for c in type_def.ctors), type_def.name))
            self.globals |= set(functions)
            self.declared_ops |= set(self.op_decls)
            self.data_types |= set(self.type_defs)
            self.ctor_names |= set(self.ctor_owner)
        start = self.tok
        defined: list[Definition] = []  # operators defined by index expressions: registered when all has parsed
        while self.tok.kind != "eof":
            start = self.tok
            if self.accept("operator"):
                name_tok = self.tok
                name = self.global_name("an operator name such as @my_op")
                if name in self.op_decls:
                    raise self.error(f"operator @{name} is declared twice{self.in_base('op_decls', name)}", name_tok)
                if self.at("("):  # defined by an index expression (relayish/ix/text.py)
                    span = name_tok.span
                    defn = parse_definition(self, name, f"{span.file}:{span.line}")
                    self.op_decls[name] = IndexDecl(definition_text(defn))
                    defined.append(defn)
                    continue
                self.expect(":")
                if self.tok.kind == "ident" and self.tok.text == "relation":
                    self.advance()
                    relation = self.identifier(f"a relation ({', '.join(RELATIONS)})")
                    if relation.text not in RELATIONS:
                        raise self.error(f"unknown relation {relation.text} (the relations: {', '.join(RELATIONS)})", relation)
                    self.op_decls[name] = RelationDecl(relation.text)
                else:
                    self.op_decls[name] = yield self.type_()
            elif self.accept("def"):
                name_tok = self.tok
                name = self.global_name("a global name such as @main")
                if name in functions:
                    raise self.error(f"global @{name} is defined twice{self.in_base('functions', name)}", name_tok)
                functions[name] = yield self.function(start)
            elif self.accept("type"):
                type_def = yield self.type_def()
                self.type_defs[type_def.name] = type_def
            else:
                found = "end of input" if self.tok.kind == "eof" else repr(self.tok.text)
                raise self.error(f"expected 'def' or 'operator', found {found} (or 'type', which defines a data type)")
        module = self.build(start, Module, functions, self.op_decls, self.type_defs)
        for defn in defined:
            replace_operator(defn)
        return module

    def in_base(self, table: str, name: str) -> str:
        """What the message of a redefinition adds when the first definition is the base
        module's (``table``: which of its mappings)."""
        if self.base is None or name not in getattr(self.base, table):
            return ""
        return " (the base module, which this text extends, defines it)"

    def declared(self) -> tuple[set[str], set[str]]:
        """The names that follow ``def`` and ``operator`` anywhere, so that definitions may
        refer to later ones."""
        found: dict[str, set[str]] = {"def": set(), "operator": set()}
        tokens = self.tokens
        for i, tok in enumerate(tokens[:-1]):
            if tok.text in found and tok.kind == "ident" and tokens[i + 1].kind == "global":
                found[tok.text].add(tokens[i + 1].text[1:])
        return found["def"], found["operator"]

    def declared_data(self) -> tuple[set[str], set[str]]:
        """The data types (the names that follow ``type``) and their constructors (the names
        after the ``{`` and after each top-level ``,`` of a definition) anywhere, so that
        definitions may use later ones. Each token is looked at once, however malformed the text."""
        types: set[str] = set()
        ctors: set[str] = set()
        tokens = self.tokens
        i = 0
        while i < len(tokens) - 1:
            tok = tokens[i]
            i += 1
            if tok.kind != "ident" or tok.text != "type" or tokens[i].kind != "ident":
                continue
            types.add(tokens[i].text)
            i += 1
            depth, name_next = 0, False  # depth of () and [] inside the definition
            while tokens[i].kind != "eof":
                t = tokens[i]
                if t.kind == "ident" and t.text in ("type", "def", "operator"):
                    break  # the next item: this definition is malformed, and the parse will say how
                is_name, name_next = name_next and depth == 0 and t.kind == "ident", False
                if is_name:
                    ctors.add(t.text)
                elif t.kind == "punct":
                    if t.text in ("(", "["):
                        depth += 1
                    elif t.text in (")", "]"):
                        depth -= 1
                    elif t.text in ("{", ","):
                        name_next = True
                    elif t.text == "}":
                        break
                i += 1
        return types, ctors

    def data_name(self, what: str, kind: str) -> Token:
        """The name of a data type or constructor being defined: an identifier, not a keyword."""
        tok = self.tok
        if tok.kind != "ident":
            raise self.expected(what)
        if tok.text in NOT_DATA_NAMES:
            word = "the wildcard pattern" if tok.text == "_" else "a keyword of the text format"
            raise self.error(f"{tok.text} is {word} and cannot name a {kind}", tok)
        return self.advance()

    def type_def(self) -> Iterator[Any]:
        """The rest of ``type Name[params] { Ctor(fields), ... }``."""
        name_tok = self.data_name("a type name such as List", "data type")
        name = name_tok.text
        if name in self.type_defs:
            raise self.error(f"type {name} is defined twice{self.in_base('type_defs', name)}", name_tok)
        params = self.type_params("]", in_type_def=True) if self.accept("[") else []
        saved = [self.tvars.push(tv.name, tv) for tv in params]
        ctors: list[CtorDef] = []
        try:
            self.expect("{")
            while not self.at("}"):
                ctor_tok = self.data_name("a constructor name such as Nil", "constructor")
                owner = self.ctor_owner.get(ctor_tok.text)
                if owner is not None:
                    where = "" if owner == name else f" (type {owner} defines it too)"
                    if self.base is not None and self.base.ctor(ctor_tok.text) is not None:
                        where = f" (type {owner} of the base module, which this text extends, defines it)"
                    raise self.error(f"constructor {ctor_tok.text} is defined twice{where}", ctor_tok)
                self.ctor_owner[ctor_tok.text] = name
                fields: list[Type] = []
                if self.accept("("):
                    while not self.at(")"):
                        fields.append((yield self.type_()))
                        if not self.accept(","):
                            break
                    self.expect(")")
                ctors.append(self.build(ctor_tok, CtorDef, ctor_tok.text, fields))
                if not self.accept(",") and not self.at("}"):
                    raise self.expected("',' or '}' after a constructor")
            self.expect("}")
        finally:
            self.tvars.pop(saved)
        if not ctors:
            raise self.error(f"type {name} needs at least one constructor", name_tok)
        return self.build(name_tok, TypeDef, name, params, ctors)

    def global_name(self, what: str) -> str:
        tok = self.name_token("global", what)
        name = tok.text[1:]
        if lookup_op(name) is not None and not is_user_op(name):
            raise self.error(f"@{name} is a standard operator and cannot be redefined", tok)
        return name

    # types ---------------------------------------------------------------------------
    def type_(self) -> Iterator[Any]:
        leaf = self.leaf_type()
        if leaf is not None:
            return leaf
        tok = self.tok
        if tok.kind == "ident":
            if tok.text == "forall":
                return (yield self.forall())
            if tok.text in ("Tensor", "RefType"):
                self.advance()
                self.expect("(")
                first = yield from self.sub_type()
                if tok.text == "RefType":
                    self.expect(")")
                    return RefType(first)
                self.expect(",")
                shape = yield from self.sub_type()
                self.expect(")")
                return TensorType(first, shape)
            if tok.text == "Shape":
                self.advance()
                return Shape(*(yield self.dim_list()))
            if tok.text not in _RESERVED:  # a data type with arguments: Name[T, ...]
                self.advance()
                name = self.data_type_name(tok)
                self.expect("[")
                args: list[Type] = []
                while True:
                    args.append((yield from self.sub_type()))
                    if not self.accept(",") or self.at("]"):
                        break
                self.expect("]")
                return DataType(name, args)
        if tok.text == "(" and tok.kind == "punct":
            self.advance()
            items: list[Type] = []
            trailing_comma = False
            while not self.at(")"):
                items.append((yield from self.sub_type()))
                trailing_comma = self.accept(",")
                if not trailing_comma:
                    break
            self.expect(")")
            if self.accept("->"):
                ret = yield from self.sub_type()
                return FuncType(items, ret)
            if len(items) == 1 and not trailing_comma:
                return items[0]
            return TupleType(items)
        raise self.expected("a type")

    def sub_type(self) -> Iterator[Any]:
        """A type inside another, by ``yield from``: a leaf is read in the caller's frame,
        anything else in a frame of its own."""
        leaf = self.leaf_type()
        return leaf if leaf is not None else (yield self.type_())

    def leaf_type(self) -> Type | None:
        """The base type, type variable or shape of plain dimensions here, or None with
        nothing read: most types are made of these, and they need no frame of their own."""
        tok = self.tok
        if tok.kind != "ident":
            return None
        if tok.text in _BASE_TYPES:
            self.advance()
            self.expect("(")
            bits = self.integer("a bit width")
            self.expect(")")
            return self.build(tok, _base_type, tok.text, bits)
        if tok.text == "BoolType":
            self.advance()
            return _BOOL
        if tok.text == "Shape":
            return self.plain_shape()
        if tok.text in _RESERVED:
            return None
        tv = self.tvars.names.get(tok.text)  # a type variable in scope hides a data type
        if tv is not None:
            self.advance()
            return tv
        following = self.peek()
        if following.kind == "punct" and following.text == "[":
            return None  # a data type with arguments: type_ reads them
        self.advance()
        return DataType(self.data_type_name(tok))

    def data_type_name(self, tok: Token) -> str:
        """The name of the data type ``tok`` refers to; in a module, one it defines."""
        name = tok.text
        if self.data_types is not None and name not in self.data_types:
            if name[0].islower():  # most likely meant as a type variable
                raise self.error(f"unknown type variable {name} (bind it with [{name}: Type] or forall; "
                                 f"no data type {name} is defined either)", tok)
            raise self.error(f"unknown type {name} (no data type of that name is defined, "
                             f"and no type variable {name} is in scope)", tok)
        return name

    def plain_shape(self) -> Shape | None:
        """``Shape(...)`` when each dimension is a number or a variable, else None with nothing read."""
        tokens, end = self.tokens, self.pos + 2
        if tokens[self.pos + 1].text != "(":
            return None
        while tokens[end].text != ")":
            if tokens[end].kind not in ("number", "ident") and tokens[end].text != "?" \
                    or tokens[end + 1].text not in (",", ")"):
                return None
            end += 2 if tokens[end + 1].text == "," else 1
        self.pos += 2
        dims = []
        while self.pos < end:
            dims.append(self.dim_atom())
            self.accept(",")
        self.advance()
        return Shape(*dims)

    def type_params(self, close: str, in_type_def: bool = False) -> list[TypeVar]:
        """``a: Kind, ...`` up to ``close``; a data type's parameters are of kind Type (which
        they may leave out) and have distinct names."""
        params = []
        while not self.at(close):
            name = self.identifier("a type variable name")
            if in_type_def and any(tv.name == name.text for tv in params):
                raise self.error(f"type parameter {name.text} appears twice", name)
            if in_type_def and not self.at(":"):
                params.append(TypeVar(name.text, Kind.TYPE))
                if not self.accept(","):
                    break
                continue
            self.expect(":")
            kind_tok = self.tok
            if kind_tok.text not in _KINDS or kind_tok.kind != "ident":
                raise self.expected("a kind (Type, Shape, BaseType or Dim)")
            self.advance()
            if in_type_def and kind_tok.text != Kind.TYPE.value:
                raise self.error(f"a data type's parameters are of kind Type, not {kind_tok.text}", kind_tok)
            params.append(TypeVar(name.text, _KINDS[kind_tok.text]))
            if not self.accept(","):
                break
        self.expect(close)
        return params

    def forall(self) -> Iterator[Any]:
        self.advance()
        self.expect("(")
        params = self.type_params(")")
        self.expect(",")
        saved = [self.tvars.push(tv.name, tv) for tv in params]
        try:
            body = yield self.type_()
        finally:
            self.tvars.pop(saved)
        return ForallType(params, body)

    # dimensions ------------------------------------------------------------------------
    def dim_list(self) -> Iterator[Any]:
        self.expect("(")
        dims = []
        while not self.at(")"):
            dims.append((yield self.dim()))
            if not self.accept(","):
                break
        self.expect(")")
        return dims

    def dim(self) -> Iterator[Any]:
        """Factors joined by ``+ - * //`` (left-associative, ``* //`` binding tighter), read
        by operator precedence in this one frame: only a parenthesis starts another."""
        operands: list[Dim] = []
        waiting: list[Token] = []  # operators whose right operand is still being read
        while True:
            negate = False
            while self.accept("-"):  # binds tightest: -n * 2 is (-n) * 2
                negate = not negate
            if self.accept("("):
                value = yield self.dim()
                self.expect(")")
            else:
                value = self.dim_atom()
            operands.append(-value if negate else value)
            tok = self.tok
            level = _DIM_OPS[tok.text][0] if tok.kind == "punct" and tok.text in _DIM_OPS else 0
            while waiting and _DIM_OPS[waiting[-1].text][0] >= level:
                op = waiting.pop()
                right = operands.pop()
                operands[-1] = self.build(op, _DIM_OPS[op.text][1], operands[-1], right)
            if not level:
                return operands[0]
            waiting.append(self.advance())

    def dim_atom(self) -> Dim:
        tok = self.tok
        if tok.kind == "number":
            return Dim.const(self.integer("a dimension"))
        if self.accept("?"):
            return Dim.unknown()
        name = self.identifier("a dimension (an integer, a Dim variable or ?)")
        tv = self.tvars.names.get(name.text)
        if tv is None:
            raise self.error(f"unknown dimension variable {name.text} (bind it with [{name.text}: Dim])", name)
        if tv.kind is not Kind.DIM:
            raise self.error(f"{name.text} is of kind {tv.kind.value}, not a dimension variable", name)
        return Dim.atom(tv)

    # expressions -----------------------------------------------------------------------
    # expr and compound pick the rule to run and return its generator, not being generators
    # themselves: one frame less for each level of nesting.
    def expr(self) -> Iterator[Any]:
        if self.at("let"):
            return self.let_chain()
        if self.at("if"):
            return self.if_()
        return self.binary(_ASSIGN)

    def if_(self) -> Iterator[Any]:
        tok = self.advance()
        cond = yield self.binary(_ASSIGN)
        self.expect("then")
        then_branch = yield self.expr()
        self.expect("else")
        else_branch = yield self.expr()
        return If(cond, then_branch, else_branch, span=tok.span)

    def let_chain(self) -> Iterator[Any]:
        bindings: list[tuple[Token, Var, Expr]] = []
        saved = []
        try:
            while self.at("let"):  # chains loop here: one frame however long they are
                tok = self.advance()
                name = self.name_token("local", "a variable such as %x")
                annotation = (yield self.type_()) if self.accept(":") else None
                var = Var(name.text[1:], annotation, span=name.span)
                self.expect("=")
                recursive = self.at("fn")
                if recursive:
                    saved.append(self.locals.push(var.name_hint, var))
                value = yield self.expr()
                self.expect("in")
                if not recursive:
                    saved.append(self.locals.push(var.name_hint, var))
                bindings.append((tok, var, value))
            body = yield self.expr()
        finally:
            self.locals.pop(saved)
        for tok, var, value in reversed(bindings):
            body = Let(var, value, body, span=tok.span)
        return body

    def binary(self, min_level: int) -> Iterator[Any]:
        """Infix operators by precedence climbing: ``:=`` < comparisons < ``+ -`` < ``* /``."""
        left = yield self.unary()
        while True:
            tok = self.tok
            level = _INFIX_LEVELS.get(tok.text) if tok.kind == "punct" else None
            if level is None or level < min_level:
                return left
            self.advance()
            right = yield self.binary(level + 1)
            if level == _ASSIGN:
                left = RefWrite(left, right, span=tok.span)
            else:
                left = Call(Op(_SYMBOL_OPS[tok.text]), (left, right), span=tok.span)
            following = self.tok
            if level <= _COMPARE and following.kind == "punct" and _INFIX_LEVELS.get(following.text) == level:
                what = "comparisons do" if level == _COMPARE else ":= does"
                raise self.error(f"{what} not chain: add parentheses", following)

    def unary(self) -> Iterator[Any]:
        """Prefix operators, then an operand, then calls and projections (like ``expr``, it
        returns the generator of the rule that reads them)."""
        tok = self.tok
        if tok.kind == "punct" and tok.text in ("-", "!") or tok.kind == "ident" and tok.text == "sq":
            touching_number = tok.text == "-" and self.peek().kind == "number" and self.peek().start == tok.end
            if not touching_number:
                return self.prefix()
        if tok.kind == "punct" and tok.text == "(":
            certain = self.ascribes()
            if certain is not None:
                return self.ascription(certain)
        return self.postfix()

    def prefix(self) -> Iterator[Any]:
        tok = self.advance()
        operand = yield self.unary()
        if tok.text == "!":
            return RefRead(operand, span=tok.span)
        return Call(Op("neg" if tok.text == "-" else "sq"), (operand,), span=tok.span)

    def postfix(self) -> Iterator[Any]:
        """An operand, then calls and projections."""
        start = self.tok  # calls are reported at the start of their callee
        value = self.atom()
        if value is None:
            value = yield self.compound()
        while self.tok.kind == "punct" and self.tok.text in ("(", "["):
            tok = self.advance()
            if tok.text == "[":
                index = self.integer("a tuple index")
                if index < 0:
                    raise self.error("a tuple index cannot be negative", tok)
                self.expect("]")
                value = Proj(value, index, span=tok.span)
            else:
                args, attrs = yield self.call_args(value, tok)
                value = self.build(tok, Call, value, args, attrs, span=start.span)
        return value

    def ascribes(self) -> bool | None:
        """Whether the "(" here opens an ascription ``(T) e``: True when it must (a word
        that starts no expression follows), False when it may (a tuple type may follow),
        None when it does not."""
        nxt = self.peek()
        if nxt.kind == "ident" and nxt.text not in _EXPR_WORDS:
            if not self.may_be_ctor(nxt.text):
                return True
            if not self.may_be_type(nxt.text):
                return None
            # A name that may be a constructor or a type: "(Tree) Leaf" ascribes, "(Nil, Nil)"
            # does not; as with "((" below, a type is only tried where an expression follows.
        elif not (nxt.kind == "punct" and nxt.text == "("):
            return None
        # "((" may open a tuple type; that is worth trying only when an expression
        # follows the closing ")", which keeps nested parentheses linear.
        close = self.closing.get(self.pos)
        if close is not None and self.starts_expression_at(close + 1):
            return False
        return None

    def may_be_ctor(self, name: str) -> bool:
        """Whether the word ``name`` in an expression or pattern may be a constructor."""
        return name not in _RESERVED and (self.ctor_names is None or name in self.ctor_names)

    def may_be_type(self, name: str) -> bool:
        """Whether the word ``name`` (not a keyword) may be a type."""
        return name in self.tvars.names or self.data_types is None or name in self.data_types

    def ascription(self, certain: bool) -> Iterator[Any]:
        """``(T) e``; when not ``certain`` and no type is there, the parenthesis read again
        as an operand."""
        start, start_pos = self.tok, self.pos
        self.advance()
        try:
            ty = yield self.type_()
            self.expect(")")
            if not certain and not self.starts_expression():
                raise self.expected("an expression after the ascribed type")
        except ParseError:
            if certain:
                raise
            self.pos = start_pos
            return (yield self.postfix())
        value = yield self.unary()
        return Ascribe(value, ty, span=start.span)

    def starts_expression(self) -> bool:
        return self.starts_expression_at(self.pos)

    def starts_expression_at(self, index: int) -> bool:
        tok = self.tokens[min(index, len(self.tokens) - 1)]
        if tok.kind in ("local", "global", "number"):
            return True
        if tok.kind == "ident":
            return tok.text in _EXPR_WORDS or self.may_be_ctor(tok.text)
        return tok.kind == "punct" and tok.text in ("(", "-", "!")

    def call_args(self, callee: Expr, open_tok: Token) -> Iterator[Any]:
        args: list[Expr] = []
        attrs: list[tuple[str, Any]] = []
        while not self.at(")"):
            if self.tok.kind == "ident" and self.peek().text == "=" and self.peek().kind == "punct":
                name = self.advance()
                self.advance()
                if not isinstance(callee, Op):
                    raise self.error("attributes are only allowed on operator calls", name)
                if any(n == name.text for n, _ in attrs):
                    raise self.error(f"attribute {name.text} is given twice", name)
                attrs.append((name.text, (yield self.attr_value(1))))
            elif attrs:
                raise self.expected("an attribute (name=value): positional arguments come first")
            else:
                args.append((yield self.expr()))
            if not self.accept(","):
                break
        self.expect(")")
        return args, attrs

    def attr_value(self, depth: int) -> Iterator[Any]:
        """An attribute value ``depth`` tuples deep (1 at the top)."""
        tok = self.tok
        if tok.kind == "number" or (tok.text == "-" and self.peek().kind == "number"):
            return self.attr_number()
        if tok.kind == "string":
            self.advance()
            try:
                return json.loads(tok.text)
            except ValueError:
                raise self.error("bad escape in string", tok) from None
        if tok.kind == "ident" and tok.text in ("true", "false", "none"):
            self.advance()
            return {"true": True, "false": False, "none": None}[tok.text]
        if tok.kind == "ident" and (tok.text in _BASE_TYPES or tok.text == "BoolType"):
            return (yield self.type_())
        if self.at("("):
            if depth > MAX_ATTRIBUTE_NESTING:
                raise self.error(f"attribute tuples may nest at most {MAX_ATTRIBUTE_NESTING} deep", tok)
            self.advance()
            items = []
            while not self.at(")"):
                items.append((yield self.attr_value(depth + 1)))
                if not self.accept(","):
                    break
            self.expect(")")
            return tuple(items)
        raise self.expected("an attribute value (number, true, false, none, string, tuple or base type)")

    def attr_number(self) -> int | float:
        negative = self.accept("-")
        tok = self.advance()
        if tok.kind != "number" or _number_body(tok.text) != tok.text:
            raise self.error("an attribute number takes no type suffix", tok)
        is_float = _is_float_text(tok.text)
        value = float(tok.text) if is_float else _integer(tok.text)
        if value is None:
            raise self.error(f"an attribute integer may have at most {MAX_DIGITS} digits", tok)
        return -value if negative else value

    def atom(self) -> Expr | None:
        """Variables, globals and literals; None when the operand has sub-expressions."""
        tok = self.tok
        if tok.kind == "local":
            self.advance()
            var = self.locals.names.get(tok.text[1:])
            if var is None:
                raise self.error(f"unbound variable {tok.text}", tok)
            return var
        if tok.kind == "global":
            self.advance()
            return self.global_ref(tok)
        if tok.kind == "number" or (tok.kind == "punct" and tok.text == "-"):
            return self.number_literal()
        if tok.kind == "ident" and tok.text in ("true", "false"):
            self.advance()
            return Constant(np.bool_(tok.text == "true"), span=tok.span)
        return None

    def compound(self) -> Iterator[Any]:
        tok = self.tok
        if tok.kind == "punct" and tok.text == "(":
            return self.paren_or_tuple()
        if tok.kind == "ident":
            if tok.text == "fn":
                start = self.advance()
                primitive = self.tok.kind == "ident" and self.tok.text == "primitive"
                if primitive:
                    self.advance()
                return self.function(start, primitive)
            if tok.text in ("Zero", "Grad", "Jvp", "Ref"):
                return self.wrapped(tok)
            if tok.text == "Vmap":
                return self.vmap(tok)
            if tok.text == "tensor":
                return self.tensor_literal()
            if tok.text == "match":
                return self.match()
            if tok.text in ("Is", "Unpack"):
                return self.ctor_test()
            if tok.text not in _RESERVED:
                return self.construct()
        raise self.expected("an expression")

    def global_ref(self, tok: Token) -> Expr:
        name = tok.text[1:]
        if name in self.globals:
            return GlobalVar(name, span=tok.span)
        if name in self.declared_ops or lookup_op(name) is not None:
            return Op(name, span=tok.span)
        raise self.error(f"unknown global or operator @{name}", tok)

    def ctor_name(self, tok: Token) -> str:
        """The constructor ``tok`` names; in a module, one of its data types defines it."""
        name = tok.text
        if self.ctor_names is not None and name not in self.ctor_names:
            hint = " (the wildcard _ is only a pattern)" if name == "_" else ""
            if name in self.data_types:
                hint = f" ({name} is a data type; its constructors are what build its values)"
            raise self.error(f"unknown constructor {name}{hint}", tok)
        return name

    def construct(self) -> Iterator[Any]:
        """``Ctor``, ``Ctor()`` or ``Ctor(e, ...)``: a value of a data type."""
        tok = self.advance()
        name = self.ctor_name(tok)
        fields: list[Expr] = []
        if self.accept("("):
            while not self.at(")"):
                fields.append((yield self.expr()))
                if not self.accept(","):
                    break
            self.expect(")")
        return Construct(name, fields, span=tok.span)

    def ctor_test(self) -> Iterator[Any]:
        """``Is[Ctor](e)`` and ``Unpack[Ctor](e)``, the forms ``match`` is lowered to."""
        tok = self.advance()
        self.expect("[")
        name_tok = self.tok
        if name_tok.kind != "ident" or name_tok.text in _RESERVED:
            raise self.expected("a constructor name")
        self.advance()
        name = self.ctor_name(name_tok)
        self.expect("]")
        self.expect("(")
        value = yield self.expr()
        self.expect(")")
        return (IsCtor if tok.text == "Is" else Unpack)(value, name, span=tok.span)

    def match(self) -> Iterator[Any]:
        """``match e { pattern => body, ... }``; a pattern's variables are bound in its body only."""
        start = self.advance()
        value = yield self.expr()
        self.expect("{")
        patterns: list[Pattern] = []
        bodies: list[Expr] = []
        while not self.at("}"):
            pattern = yield self.pattern(set())
            self.expect("=>")
            saved = [self.locals.push(var.name_hint, var) for var in pattern_vars(pattern)]
            try:
                body = yield self.expr()
            finally:
                self.locals.pop(saved)
            patterns.append(pattern)
            bodies.append(body)
            if not self.accept(",") and not self.at("}"):
                raise self.expected("',' or '}' after a match clause")
        if not patterns:
            raise self.expected("a match clause (pattern => expression)")
        self.advance()
        return Match(value, patterns, bodies, span=start.span)

    def pattern(self, names: set[str]) -> Iterator[Any]:
        """A pattern; ``names`` holds the variables its clause has bound so far (each once)."""
        tok = self.tok
        if tok.kind == "local":
            self.advance()
            name = tok.text[1:]
            if name in names:
                raise self.error(f"variable {tok.text} appears twice in a pattern", tok)
            names.add(name)
            return PatternVar(Var(name, span=tok.span), span=tok.span)
        if tok.kind == "punct" and tok.text == "(":  # (), (p,), (p, q): as tuples are written
            self.advance()
            items: list[Pattern] = []
            trailing_comma = False
            while not self.at(")"):
                items.append((yield self.pattern(names)))
                trailing_comma = self.accept(",")
                if not trailing_comma:
                    break
            self.expect(")")
            if len(items) == 1 and not trailing_comma:
                return items[0]
            return PatternTuple(items, span=tok.span)
        if tok.kind == "ident" and tok.text == "_":
            self.advance()
            return PatternWildcard(span=tok.span)
        if tok.kind == "ident" and tok.text not in _RESERVED:
            self.advance()
            name = self.ctor_name(tok)
            items = []
            if self.accept("("):
                while not self.at(")"):
                    items.append((yield self.pattern(names)))
                    if not self.accept(","):
                        break
                self.expect(")")
            return PatternCtor(name, items, span=tok.span)
        raise self.expected("a pattern (_, a variable such as %x, a constructor or a tuple)")

    def wrapped(self, tok: Token) -> Iterator[Any]:
        """``Zero(T)``, ``Grad(e)``, ``Jvp(e)`` and ``Ref(e)``."""
        self.advance()
        self.expect("(")
        inner = (yield self.type_()) if tok.text == "Zero" else (yield self.expr())
        self.expect(")")
        node = {"Zero": Zero, "Grad": Grad, "Jvp": Jvp, "Ref": RefNew}[tok.text]
        return node(inner, span=tok.span)

    def vmap(self, tok: Token) -> Iterator[Any]:
        """``Vmap(e, in_axes=(0, none))``."""
        self.advance()
        self.expect("(")
        func = yield self.expr()
        self.expect(",")
        if self.tok.text != "in_axes":
            raise self.expected("in_axes=(...): one axis or none per parameter")
        self.advance()
        self.expect("=")
        start = self.tok
        axes = yield self.attr_value(1)
        if not isinstance(axes, tuple):
            raise self.error("in_axes must be a tuple of axes (integers >= 0) or none, one per parameter", start)
        self.expect(")")
        try:
            return Vmap(func, axes, span=tok.span)
        except ValueError as err:
            raise self.error(f"{err}: one per parameter", start) from None

    def paren_or_tuple(self) -> Iterator[Any]:
        tok = self.advance()
        fields: list[Expr] = []
        trailing_comma = False
        while not self.at(")"):
            fields.append((yield self.expr()))
            trailing_comma = self.accept(",")
            if not trailing_comma:
                break
        self.expect(")")
        if len(fields) == 1 and not trailing_comma:
            return fields[0]
        return Tuple(fields, span=tok.span)

    def function(self, start: Token, primitive: bool = False) -> Iterator[Any]:
        """The rest of ``fn [primitive] [...](...) -> T { e }`` or ``def @f[...](...) -> T { e }``."""
        type_params = self.type_params("]") if self.accept("[") else []
        saved_tvars = [self.tvars.push(tv.name, tv) for tv in type_params]
        saved_locals = []
        try:
            self.expect("(")
            params: list[Var] = []
            while not self.at(")"):
                name = self.name_token("local", "a parameter such as %x")
                if any(p.name_hint == name.text[1:] for p in params):
                    raise self.error(f"parameter {name.text} appears twice", name)
                annotation = (yield self.type_()) if self.accept(":") else None
                params.append(Var(name.text[1:], annotation, span=name.span))
                if not self.accept(","):
                    break
            self.expect(")")
            ret_type = (yield self.type_()) if self.accept("->") else None
            self.expect("{")
            saved_locals = [self.locals.push(p.name_hint, p) for p in params]
            body = yield self.expr()
            self.expect("}")
        finally:
            self.locals.pop(saved_locals)
            self.tvars.pop(saved_tvars)
        return Function(params, body, ret_type, type_params, primitive=primitive, span=start.span)

    # literals ----------------------------------------------------------------------------
    def number_literal(self) -> Constant:
        start = self.tok
        negative = self.accept("-")
        tok = self.tok
        if tok.kind != "number" or (negative and tok.start != start.end):
            raise self.expected("a number")
        self.advance()
        text = tok.text
        digits = _number_body(text)
        suffix = text[len(digits):]
        is_float = _is_float_text(digits)
        if suffix:
            dtype = _SUFFIX_DTYPES.get(suffix)
            if dtype is None:
                raise self.error(f"unknown literal suffix {suffix!r} (use one of {', '.join(sorted(_SUFFIX_DTYPES))})", tok)
        else:
            dtype = _FLOAT32 if is_float else _INT32
        if is_float and not isinstance(dtype, FloatType):
            raise self.error(f"{text} is not an integer, so it cannot have type {suffix}", tok)
        value = _literal_value(("-" if negative else "") + digits, dtype)
        if value is None:
            shown = _abbreviated("-" * negative + digits)
            hint = "" if suffix or is_float else f" (an integer without a suffix is {dtype}; write {shown}i64 for a 64-bit one)"
            raise self.error(_out_of_range(shown, dtype) + hint, tok)
        return Constant(value, span=start.span)

    def tensor_literal(self) -> Iterator[Any]:
        start = self.advance()
        self.expect("(")
        dtype_tok = self.tok
        dtype = yield self.type_()
        if not isinstance(dtype, BaseType):
            raise self.error("a tensor literal needs a base type such as FloatType(32)", dtype_tok)
        self.expect(",")
        self.expect("Shape")
        shape_tok = self.tok
        dims = yield self.dim_list()
        if any(d.value is None or d.value < 0 for d in dims):
            raise self.error("a tensor literal needs a shape of non-negative integers", shape_tok)
        self.expect(",")
        self.expect("[")
        elements = []
        while not self.at("]"):
            elements.append(self.element(dtype))
            if not self.accept(","):
                break
        self.expect("]")
        self.expect(")")
        shape = tuple(d.value for d in dims)
        if len(elements) != math.prod(shape):
            raise self.error(f"tensor literal of shape {shape} needs {math.prod(shape)} elements, not {len(elements)}", start)
        try:
            array = np.array(elements, dtype=dtype.to_numpy()).reshape(shape)
        except ValueError:  # an empty literal with a dimension past what NumPy can index
            raise self.error(f"a tensor literal of shape {_abbreviated(str(shape))} is too large for an array", shape_tok) from None
        return Constant(array, span=start.span)

    def element(self, dtype: BaseType) -> Any:
        tok = self.tok
        if isinstance(dtype, BoolType):
            if tok.text not in ("true", "false"):
                raise self.expected("true or false")
            self.advance()
            return tok.text == "true"
        negative = self.accept("-")
        tok = self.tok
        if tok.kind != "number" or _number_body(tok.text) != tok.text:
            raise self.expected("a number without a suffix")
        self.advance()
        value = _literal_value(("-" if negative else "") + tok.text, dtype)
        if value is None:
            text = ("-" if negative else "") + tok.text
            if isinstance(dtype, FloatType) or not _is_float_text(text):
                raise self.error(f"element {_out_of_range(_abbreviated(text), dtype)}", tok)
            raise self.error(f"{_abbreviated(tok.text)} is not a valid {dtype} element", tok)
        return value


def _out_of_range(shown: str, dtype: BaseType) -> str:
    if isinstance(dtype, FloatType):
        largest = _largest_finite(dtype.to_numpy())[0]
        return f"{shown} overflows {dtype}: its largest finite value is {largest!r} (write inf for an infinity)"
    info = np.iinfo(dtype.to_numpy())
    return f"{shown} does not fit {dtype}: its range is {info.min} to {info.max}"


def _is_float_text(text: str) -> bool:
    """Whether a number's text (sign and suffix aside) is a float: nan, inf, a point or an exponent."""
    return text.lstrip("-") in ("nan", "inf") or any(c in text for c in ".eE")


@functools.cache
def _largest_finite(np_dtype: np.dtype) -> tuple[float, float]:
    """A float type's largest finite value, and the value of the shortest decimal that names it
    (what the printer writes; above the value itself for float32)."""
    largest = np.finfo(np_dtype).max
    return float(largest), float(str(largest))


def _number_body(text: str) -> str:
    """The numeric part of a number token, without its dtype suffix."""
    return _NUMBER_BODY.match(text).group()


@functools.cache
def _base_type(name: str, bits: int) -> BaseType:
    """Types are immutable: one object for each base type written saves rebuilding it."""
    return _BASE_TYPES[name](bits)


def _abbreviated(number: str) -> str:
    """A number's text for a message: a long one shows its first digits and its length."""
    return number if len(number) <= 40 else f"{number[:20]}... ({len(number):,} characters)"


def _integer(text: str) -> int | None:
    """``int(text)``, or None past MAX_DIGITS digits, leading zeros aside (Python refuses to
    convert a text of over 4,300 characters)."""
    digits = text.lstrip("-").lstrip("0") or "0"
    if len(digits) > MAX_DIGITS:
        return None
    return -int(digits) if text.startswith("-") else int(digits)


def _literal_value(text: str, dtype: BaseType) -> Any:
    """``text`` as a NumPy scalar of ``dtype``, or None when it is out of range.

    A float literal rounds to its type, but one larger in magnitude than the type's largest
    finite value overflows, as in Relay (``65505f16``, ``3.5e38f32``): only the shortest
    decimal form of that largest value itself (what the printer writes, ``3.4028235e+38f32``)
    is let through. ``inf`` and ``nan`` are written as such."""
    np_dtype = dtype.to_numpy()
    if isinstance(dtype, FloatType):
        number = float(text)
        largest, printed = _largest_finite(np_dtype)
        if text.lstrip("-") not in ("inf", "nan") and abs(number) > largest and abs(number) != printed:
            return None  # compared as Python floats: NumPy would round the literal to the type first
        with np.errstate(over="ignore"):
            return np_dtype.type(number)
    value = None if _is_float_text(text) else _integer(text)
    info = np.iinfo(np_dtype)
    return np_dtype.type(value) if value is not None and info.min <= value <= info.max else None


@contextlib.contextmanager
def _collector_paused() -> Iterator[None]:
    """Parsing makes millions of objects on long inputs and (almost) no reference cycles:
    the cycle collector's passes over them would take up to a third of the time."""
    enabled = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if enabled:
            gc.enable()


def parse(text: str, filename: str = "<string>", *, base: Module | None = None, prelude: bool = False) -> Module:
    """Read a module from its text form; raises ``ParseError`` on bad text.

    With ``base``, the text extends that module: it may use its data types, constructors,
    globals and operator declarations, the module read has them first and then its own, and
    defining one of them again is an error at the new definition. ``prelude=True`` extends the
    Prelude (``prelude()``: List, Option, Tree and the functions over them)."""
    if not isinstance(text, str):
        raise TypeError(f"parse takes a str, not {type(text).__name__}")
    if prelude:
        if base is not None:
            raise TypeError("parse takes a base or prelude=True, not both (parse the base with prelude=True)")
        base = prelude_module()
    if base is not None and not isinstance(base, Module):
        raise TypeError(f"parse's base is a Module, not {type(base).__name__}")
    try:
        with _collector_paused():
            return trampoline(Parser(text, filename, base).module())
    except ParseError as err:
        raise err.with_traceback(None) from None  # the parser's frames are noise to the user


@functools.cache
def prelude_module() -> Module:
    """The Prelude (relayish/prelude_text.py) as a module, read once (modules are immutable)."""
    return parse(PRELUDE_TEXT, "<prelude>")


def parse_expr(text: str, filename: str = "<string>") -> Expr:
    """Read one closed expression (handy in tests and at the REPL)."""
    with _collector_paused():
        parser = Parser(text, filename)
        expr = trampoline(parser.expr())
    if parser.tok.kind != "eof":
        raise parser.expected("end of input")
    return expr
