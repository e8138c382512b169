"""The IR's constructors in one namespace: ``from relayish import ir``."""

from .dims import Dim, FloorDiv, as_dim
from .errors import Span
from .expr import (
    Ascribe, Call, Constant, Expr, Function, GlobalVar, Grad, If, Jvp, Let, Op, Proj, RefNew,
    RefRead, RefWrite, Tuple, Var, Vmap, Zero,
)  # fmt: skip
from .module import Module
from .types import (
    UNIT, BaseType, BoolType, FloatType, ForallType, FuncType, IntType, Kind, RefType, Shape,
    TensorType, TupleType, Type, TypeVar, UIntType, scalar_type,
)  # fmt: skip

__all__ = [
    "Ascribe", "BaseType", "BoolType", "Call", "Constant", "Dim", "Expr", "FloatType",
    "FloorDiv", "ForallType", "FuncType", "Function", "GlobalVar", "Grad", "If", "IntType",
    "Jvp", "Kind", "Let", "Module", "Op", "Proj", "RefNew", "RefRead", "RefType", "RefWrite", "Shape",
    "Span", "TensorType", "Tuple", "TupleType", "Type", "TypeVar", "UIntType", "UNIT", "Var",
    "Vmap", "Zero", "as_dim", "scalar_type",
]  # fmt: skip
