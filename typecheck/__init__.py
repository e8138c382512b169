"""Kinding, type inference with symbolic shapes, and type errors (DESIGN.md section 4).

Not yet implemented: the type-checker issue fills this layer.
"""
