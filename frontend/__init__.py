"""Python source to IR: @relay, @relay_model, models and parameters, data types (docs/design.md).

``from relayish import relay, relay_model, Tensor, Float, Dim, data`` (re-exported from here);
the Prelude's types and constructors (``List``, ``Cons``, ...) are in ``frontend.prelude``.
"""

from .annotations import (
    Bool, Dim, DType, Float, Float16, Float32, Float64, Int, Int8, Int16, Int32, Int64, Tensor, UInt8,
)  # fmt: skip
from .data import Data, data
from .function import RelayFunction
from .model import Model, ModelGrad, RelayModel
from .namespace import GradFunction, JvpFunction, relay, relay_model

__all__ = ["Bool", "DType", "Data", "Dim", "Float", "Float16", "Float32", "Float64", "GradFunction", "Int", "Int8", "Int16",
           "Int32", "Int64", "JvpFunction", "Model", "ModelGrad", "RelayFunction", "RelayModel", "Tensor", "UInt8", "relay",
           "data", "relay_model"]
