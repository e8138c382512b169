"""The standard operator library: importing it registers every operator."""

from . import broadcast, elementwise, grad_ops, nn, reduce, shape  # noqa: F401
