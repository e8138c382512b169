"""What both backends share: preparing a module to run, the values of a run and the check of
arguments against types, and an operator call on NumPy values (docs/design.md).

Why a package of its own: the reference evaluator (``interp``) defines what programs mean and
the JIT (``jit``) is tested against it, so the two are siblings that never import each other;
what both need lives here, one layer below them. The layers, each importing only those before it:
core (``relayish``) < ``typecheck`` < ``ad`` < ``runtime`` < {``interp``, ``jit``} < ``frontend``
< the facade (``relayish/__init__.py``, the command line, ``relayish.testing``);
tests/core/test_layers.py keeps it so.

- ``runtime.prepare``: ``prepared(module)``, the module type-checked with every ``Grad`` expanded;
- ``runtime.values``: ``RefCell``, ``FunctionValue`` and the one argument check (``check_value``,
  ``check_arguments``, ``ArgumentMismatch``);
- ``runtime.operators``: ``run_op``, an operator's reference semantics at a call, its arguments'
  actual shapes checked by its type relation and its results' sizes checked first; ``check_shapes``,
  that check alone, which compiled code makes before an operator on ``?`` dimensions;
- ``runtime.limits``: ``step_limit``, the error of a run past its ``max_calls``.
"""
