"""Python source to IR: @relay, @relay_model, models and parameters (DESIGN.md section 8).

Not yet implemented: the frontend issue fills this layer.
"""
