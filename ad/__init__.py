"""Reverse-mode AD: the Grad transform and per-operator gradient rules (DESIGN.md section 5).

Not yet implemented: the AD issue fills this layer.
"""
