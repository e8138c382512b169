"""Algebraic data types declared in Python, and their constructors.

``Tree = data("Tree", Leaf=[Tensor[Float, 4]], Node=["Tree", "Tree"])`` declares the IR's
``type Tree { Leaf(Tensor(FloatType(32), Shape(4))), Node(Tree, Tree) }``. The result is a
``Data``: an annotation (``t: Tree``; ``List[Tensor[Float, 3]]`` for one with parameters) whose
constructors are its attributes (``Tree.Leaf``). A constructor is a Python class, so that one
source runs both ways: called inside ``@relay`` it is translated to ``Construct``, called in
ordinary Python it builds the value the backends take (a ``relayish.DataValue`` of that class),
and in a ``match`` statement it is a class pattern (``case Node(l, r):``) in both.

Field types are written as annotations are; a string is evaluated where ``data`` was called,
when the type is first used (not at once, so a type may name itself or a type defined after it),
with the type's parameters (``params=["a"]``) and its own name in scope: ``"Tree"``,
``"List[a]"``, ``"tuple[a, Tree[a]]"``.
"""

from __future__ import annotations

import inspect
import sys
from typing import Any, Callable, Iterable, Mapping, Sequence

from relayish.errors import FrontendError, Span
from relayish.module import CtorDef, Module, TypeDef, check_data_name
from relayish.names import NOT_DATA_NAMES
from relayish.printer import astext
from relayish.types import Kind, Type, TypeVar
from runtime.values import DataValue

from .annotations import AnnotationError, DataAnnotation, DType, TensorSpec, to_type
from .subset import did_you_mean


class ConstructorType(type):
    """The type of a constructor class: calling one builds a value of it, and ``isinstance``
    accepts any ``DataValue`` its constructor built (the backends return plain ones)."""

    ir_name: str  # the constructor's name in the IR (the Prelude's None is the class Nothing)
    data_type: Data
    arity: int

    def __call__(cls, *fields: Any, **keywords: Any) -> Any:
        if keywords:
            raise TypeError(f"{cls.__name__}: constructor fields are positional, write {cls.signature()}")
        if len(fields) != cls.arity:
            raise TypeError(cls.arity_message(len(fields)))
        value = cls.__new__(cls)
        DataValue.__init__(value, cls.ir_name, fields)
        return value

    def __instancecheck__(cls, value: Any) -> bool:
        return isinstance(value, DataValue) and value.ctor == cls.ir_name and cls.data_type.owns(value)

    def __repr__(cls) -> str:
        return f"<constructor {cls.__name__} of {cls.data_type!r}>"

    def signature(cls) -> str:
        """``Cons(a, List[a])``: how to call it, its fields' types as declared."""
        return f"{cls.__name__}({', '.join(written(f) for f in cls.data_type.field_specs(cls))})"

    def arity_message(cls, given: int) -> str:
        count = f"{cls.arity} field{'s' * (cls.arity != 1)}"
        return f"{cls.__name__} takes {count}, given {given}: write {cls.signature()}"

    def field_type(cls, index: int) -> Type:
        """The declared type of field ``index``, over the data type's parameters."""
        return cls.data_type.definition().ctors[cls.data_type.constructors.index(cls)].fields[index]


class Constructed(DataValue):
    """A value built by a constructor class (its instances are of that class), so that
    ``match`` in ordinary Python can take it apart: ``__match_args__`` names its fields ``_0``, ``_1``..."""

    __slots__ = ()

    def __repr__(self) -> str:
        """``Cons(1.0, Nil())``: as Python builds it, without recursion (a list may be long)."""
        out: list[str] = []
        stack: list[Any] = [self]
        while stack:
            item = stack.pop()
            if isinstance(item, _Text):
                out.append(item)
            elif isinstance(item, DataValue):
                out.append(type(item).__name__ if isinstance(type(item), ConstructorType) else item.ctor)
                stack.append(_Text(")"))
                for k in range(len(item.fields) - 1, -1, -1):
                    stack.append(item.fields[k])
                    if k:
                        stack.append(_Text(", "))
                stack.append(_Text("("))
            else:
                out.append(repr(item))
        return "".join(out)


class _Text(str):
    """Punctuation on the stack of ``Constructed.__repr__`` (a field may be a plain ``str``)."""


class Data(DataAnnotation):
    """A data type for Python code: an annotation (``Tree``, ``List[Tensor[Float, 3]]``) and
    its constructor classes (``Tree.Leaf``, also ``Tree.constructors``). Its IR definition is
    made at the first use (``definition()``), so that its fields may name types defined later."""

    _registry: dict[int, Data] = {}  # id(TypeDef) -> its Data, which keeps it alive: what built a value

    def __init__(self, name: str, params: Sequence[str], fields: Mapping[str, Sequence[Any]], where: Span | None,
                 scope: tuple[dict, dict] | None = None, definition: TypeDef | None = None,
                 python_names: Mapping[str, str] | None = None):
        self.name = name
        self.params = tuple(params)
        self.where = where  # the data(...) call, for errors; None for the Prelude's types
        self.origin = "the Prelude's" if definition is not None else f"the one at {where}"
        self._fields = {ctor: tuple(specs) for ctor, specs in fields.items()}
        self._scope = scope
        self._definition = definition
        self._references: dict[str, Data] = {}
        self.constructors: tuple[ConstructorType, ...] = tuple(
            _constructor_class(self, ctor, (python_names or {}).get(ctor, ctor), len(specs))
            for ctor, specs in self._fields.items())
        if definition is not None:
            Data._registry[id(definition)] = self

    def __repr__(self) -> str:
        return f"{self.name}[{', '.join(self.params)}]" if self.params else self.name

    def applied(self) -> tuple[Data, tuple[Any, ...]]:
        return self, ()

    def __getattr__(self, name: str) -> ConstructorType:
        constructors = self.__dict__.get("constructors", ())  # not self.constructors: it may not be set yet
        if name.startswith("__") or not constructors:
            raise AttributeError(name)
        for cls in constructors:
            if cls.__name__ == name:
                return cls
        names = [c.__name__ for c in constructors]
        raise AttributeError(f"the data type {self.name} has no constructor {name}{did_you_mean(name, names)} "
                             f"(its constructors: {', '.join(names)})")

    def __getitem__(self, args: Any) -> Applied:
        args = args if isinstance(args, tuple) else (args,)
        if len(args) != len(self.params):
            raise TypeError(f"{self!r} takes {len(self.params)} type argument{'s' * (len(self.params) != 1)}, given "
                            f"{len(args)}" + ("" if self.params else f": write {self.name} alone"))
        return Applied(self, args)

    def field_specs(self, cls: ConstructorType) -> tuple[Any, ...]:
        """The fields of ``cls`` as declared (strings, annotations; the Prelude's as IR types)."""
        return self._fields[cls.ir_name]

    def owns(self, value: DataValue) -> bool:
        """Whether ``value`` (of one of this type's constructor names) is of this type: any value
        whose constructor has that name, as the backends know no more about a plain one."""
        return not isinstance(type(value), ConstructorType) or type(value).data_type is self

    def definition(self) -> TypeDef:
        """The IR definition, made once: field types as ``to_type`` reads annotations, strings
        evaluated where ``data`` was called."""
        if self._definition is None:
            params = {p: TypeVar(p, Kind.TYPE) for p in self.params}
            found: dict[str, Data] = {}
            ctors = []
            for cls in self.constructors:
                fields = []
                for i, spec in enumerate(self._fields[cls.ir_name]):
                    dims: dict[str, TypeVar] = {}
                    try:
                        fields.append(to_type(spec, dims, found, self._resolver(params)))
                    except (AnnotationError, TypeError, FrontendError) as err:
                        message = err.message if isinstance(err, FrontendError) else str(err)
                        raise FrontendError(f"data type {self.name}, field {i} of {cls.__name__}: {message}",
                                            self.where) from None
                    if dims:
                        raise FrontendError(f"data type {self.name}, field {i} of {cls.__name__}: a field cannot have a "
                                            f"Dim ({', '.join(dims)}): give the type a parameter (params=[\"a\"]) and "
                                            "the annotations a Dim, e.g. List[Tensor[Float, (N, 3)]]", self.where)
                ctors.append(CtorDef(cls.ir_name, fields))
            self._definition = TypeDef(self.name, params.values(), ctors)
            self._references = {n: d for n, d in found.items() if d is not self}
            Data._registry[id(self._definition)] = self
        return self._definition

    def references(self) -> Mapping[str, Data]:
        """The other data types this one's fields name (known once ``definition()`` has run)."""
        self.definition()
        return self._references

    def set_references(self, references: Mapping[str, Data]) -> None:
        """For a type defined in the IR (the Prelude's): the Data of the types its fields name."""
        self._references = {n: d for n, d in references.items() if d is not self}

    def _resolver(self, params: dict[str, TypeVar]) -> Callable[[str], Any]:
        def resolve(text: str) -> Any:
            if self._scope is None:
                raise AnnotationError(f"{text!r}: write the type itself, not a string")
            module_globals, local_names = self._scope
            file = self.where.file if self.where else "<data>"
            try:
                code = compile(text.strip(), file, "eval")
                return eval(code, module_globals, {**local_names, self.name: self, **params})  # noqa: S307
            except Exception as err:  # noqa: BLE001 - any failure is a bad field type
                raise AnnotationError(f"cannot evaluate the field type {text!r} where data(...) was called: {err}") from None
        return resolve

    @classmethod
    def of_definition(cls, definition: TypeDef) -> Data | None:
        """The Data whose IR definition is ``definition`` (what a backend's value is converted by)."""
        return cls._registry.get(id(definition))


class Applied(DataAnnotation):
    """``List[Tensor[Float, 3]]``: a data type with its type arguments, as an annotation."""

    def __init__(self, data: Data, args: tuple[Any, ...]):
        self.data, self.args = data, args

    def applied(self) -> tuple[Data, tuple[Any, ...]]:
        return self.data, self.args

    def __repr__(self) -> str:
        return f"{self.data.name}[{', '.join(written(a) for a in self.args)}]"


def data(name: str, /, *, params: Sequence[str] = (), **constructors: Sequence[Any]) -> Data:
    """Declare an algebraic data type: ``data("Tree", Leaf=[Tensor[Float, 4]], Node=["Tree", "Tree"])``.

    Each keyword is a constructor with the list of its fields' types (``Nil=[]``: none), in
    order; ``params`` names the type's parameters (``data("Pair", params=["a"], MkPair=["a", "a"])``).
    Strings are evaluated where ``data`` is called, at the first use (see the module's docstring)."""
    caller = sys._getframe(1)
    where = _call_site(caller)
    if not isinstance(name, str):
        raise TypeError(f"data(name, ...): the name must be a string, not {name!r}")
    _check_name(name, "data type")
    if isinstance(params, str) or not all(isinstance(p, str) for p in params):
        raise TypeError(f"data({name!r}, params=[...]): the parameters are a list of names, e.g. params=[\"a\"]")
    for p in params:
        _check_name(p, "type parameter")
    if len(set(params)) != len(params):
        raise TypeError(f"data({name!r}): a type parameter is named twice in {list(params)}")
    if not constructors:
        raise TypeError(f"data({name!r}) needs at least one constructor, e.g. data({name!r}, Leaf=[Float], "
                        f"Node=[{name!r}, {name!r}])")
    for ctor, fields in constructors.items():
        _check_name(ctor, "constructor")
        if hasattr(Data, ctor):  # Tree.definition is the method: a constructor of that name would be hidden
            raise TypeError(f"{ctor!r} cannot name a constructor: data types have an attribute of that name")
        if isinstance(fields, (str, bytes)) or not isinstance(fields, (list, tuple)):
            raise TypeError(f"data({name!r}, {ctor}=...): give the list of the fields' types, e.g. {ctor}=[Float, "
                            f"{name!r}] ({ctor}=[] for none)")
    local_names = {} if caller.f_locals is caller.f_globals else dict(caller.f_locals)
    return Data(name, params, constructors, where, (caller.f_globals, local_names))


def _check_name(name: str, what: str) -> None:
    try:
        check_data_name(name)
    except ValueError:
        words = "a word of the text format" if name in NOT_DATA_NAMES else "not an identifier"
        raise TypeError(f"{name!r} cannot name a {what}: it is {words}") from None


def _call_site(frame: Any) -> Span:
    """Where ``frame`` is executing (file, line, column): where ``data(...)`` was called."""
    info = inspect.getframeinfo(frame, context=0)
    positions = getattr(info, "positions", None)
    col = positions.col_offset if positions is not None and positions.col_offset is not None else 0
    return Span(info.filename, info.lineno, col + 1)


def _constructor_class(owner: Data, ctor: str, python_name: str, arity: int) -> ConstructorType:
    fields = {f"_{i}": property(lambda self, i=i: self.fields[i], doc=f"field {i}") for i in range(arity)}
    namespace = {"__slots__": (), "__match_args__": tuple(fields), "__module__": "relayish", "__doc__":
                 f"The constructor {python_name} of the data type {owner.name}.", "ir_name": ctor, "data_type": owner,
                 "arity": arity, **fields}
    return ConstructorType(python_name, (Constructed,), namespace)


def written(spec: Any) -> str:
    """A field type or type argument as the user wrote it: ``Tensor[Float, (4,)]``, ``List[a]``."""
    if isinstance(spec, str):
        return spec
    if isinstance(spec, TensorSpec):
        shape = ", ".join(getattr(d, "name", repr(d)) for d in spec.shape)
        return f"Tensor[{spec.dtype.name}, ({shape}{',' * (len(spec.shape) == 1)})]"
    if isinstance(spec, (DType, Data, Applied)):
        return repr(spec)
    if isinstance(spec, Type):
        return astext(spec)
    return getattr(spec, "__name__", repr(spec))


def type_definitions(used: Iterable[Data]) -> dict[str, TypeDef]:
    """The definitions of ``used`` and of every type their fields name, by name, each once; two
    types of one name, or two constructors of one name, are an error at the user's definition."""
    found: dict[str, Data] = {}
    owners: dict[str, Data] = {}
    queue = list(used)
    while queue:
        item = queue.pop(0)
        other = found.get(item.name)
        if other is item:
            continue
        if other is not None:
            raise same_name_error(f"two data types are named {item.name}", other, item)
        found[item.name] = item
        for cls in item.constructors:
            owner = owners.setdefault(cls.ir_name, item)
            if owner is not item:
                raise same_name_error(f"the data types {owner.name} and {item.name} both have a constructor {cls.ir_name}",
                                      owner, item)
        queue.extend(item.references().values())
    return {name: item.definition() for name, item in found.items()}


def same_name_error(what: str, first: Data, second: Data) -> FrontendError:
    """Two data types one program cannot tell apart: the error is at the user's definition."""
    mine = second if second.where is not None else first
    return FrontendError(f"{what} ({first.origin} and {second.origin}) in one program: rename yours", mine.where)

def python_values(value: Any, module: Module) -> Any:
    """``value`` (what a backend returned for ``module``) with each data value an instance of its
    constructor's class, which Python's ``match`` can take apart (a plain ``DataValue`` has no
    ``_0``...); rebuilt bottom-up without recursion, as a list may be long."""
    if not isinstance(value, (tuple, DataValue)):
        return value
    done: dict[int, Any] = {}
    stack: list[tuple[Any, bool]] = [(value, False)]
    while stack:
        item, ready = stack.pop()
        parts = item.fields if isinstance(item, DataValue) else item if isinstance(item, tuple) else None
        if parts is None or (id(item) in done and not ready):
            done.setdefault(id(item), item)
            continue
        if not ready:
            stack.append((item, True))
            stack.extend((part, False) for part in parts)
            continue
        fields = tuple(done[id(part)] for part in parts)
        same = all(a is b for a, b in zip(fields, parts))
        if not isinstance(item, DataValue):
            done[id(item)] = item if same else fields
            continue
        cls = type(item) if isinstance(type(item), ConstructorType) else _constructor_of(item, module)
        if cls is None:
            done[id(item)] = item if same else DataValue(item.ctor, fields)
        else:
            done[id(item)] = item if same and type(item) is cls else cls(*fields)
    return done[id(value)]


def _constructor_of(value: DataValue, module: Module) -> ConstructorType | None:
    """The class of the constructor that built ``value``, a value of one of ``module``'s data types."""
    found = module.ctor(value.ctor)
    owner = Data.of_definition(found[0]) if found is not None else None
    return owner.constructors[found[1]] if owner is not None else None
