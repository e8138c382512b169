"""Python source to IR: @relay, @relay_model, models and parameters (docs/design.md).

``from relayish import relay, relay_model, Tensor, Float, Dim`` (re-exported from here).
"""

from .annotations import (
    Bool, Dim, DType, Float, Float16, Float32, Float64, Int, Int8, Int16, Int32, Int64, Tensor, UInt8,
)  # fmt: skip
from .function import RelayFunction
from .model import Model, ModelGrad, RelayModel
from .namespace import GradFunction, relay, relay_model

__all__ = ["Bool", "DType", "Dim", "Float", "Float16", "Float32", "Float64", "GradFunction", "Int", "Int8", "Int16",
           "Int32", "Int64", "Model", "ModelGrad", "RelayFunction", "RelayModel", "Tensor", "UInt8", "relay",
           "relay_model"]
