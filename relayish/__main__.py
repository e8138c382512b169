"""``python -m relayish`` is the ``relayish`` command."""

import sys

from .cli import main

sys.exit(main())
