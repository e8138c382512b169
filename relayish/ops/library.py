"""The standard operator library: importing it registers every operator."""

from . import broadcast, elementwise, nn, reduce, shape  # noqa: F401
