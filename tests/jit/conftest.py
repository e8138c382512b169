"""JIT tests compile kernels into a cache directory of their own (one per test session), so
they start cold and never touch the user's cache."""

from __future__ import annotations

import os
import tempfile

os.environ["RELAYISH_CACHE_DIR"] = tempfile.mkdtemp(prefix="relayish-test-cache-")
