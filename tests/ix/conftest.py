"""The index-expression operators of tests/ix/definitions.py, registered for a test module and
removed after it (their derived adjoints too: every ``ix_`` operator)."""

import pytest

from relayish.ops.registry import unregister_user_op, user_op_names
from tests.ix import definitions


@pytest.fixture(scope="module")
def ops():
    registered = definitions.register()
    yield registered
    for name in user_op_names():
        if name.startswith("ix_"):
            unregister_user_op(name)
