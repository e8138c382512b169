"""The reference evaluator, the definition of every program's meaning (DESIGN.md section 6).

Not yet implemented: the evaluator issue fills this layer.
"""
