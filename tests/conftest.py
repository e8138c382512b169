"""Hypothesis profiles: a bounded one for CI and everyday runs, a heavier one on demand.

RELAYISH_HYPOTHESIS=heavy multiplies the example counts of tests that do not pin their own
count (50 in the CI profile, 2,000 in the heavy one). No deadline: Numba compiles on first use
and these machines are shared and noisy.
"""

import os
import tempfile

from hypothesis import HealthCheck, settings

# 50 examples a property by default: the whole suite must stay within 15 minutes on CI's 2 cores, where
# nearly every example compiles or runs kernels; the heavy profile is for longer searches.
settings.register_profile("ci", deadline=None, max_examples=50, suppress_health_check=[HealthCheck.too_slow])
settings.register_profile("heavy", deadline=None, max_examples=2000, suppress_health_check=[HealthCheck.too_slow])
settings.load_profile(os.environ.get("RELAYISH_HYPOTHESIS", "ci"))

# Compiled kernels go to a cache of this test session (subprocesses inherit it): every run
# starts cold and never touches the user's cache.
os.environ.setdefault("RELAYISH_CACHE_DIR", tempfile.mkdtemp(prefix="relayish-test-cache-"))

# @relay's default backend is the JIT. The frontend tests check translations against the
# evaluator (the oracle); tests/jit/test_programs.py runs the same corpora compiled, and the
# demo test runs the README's main job as a user would (the default backend).
os.environ.setdefault("RELAYISH_BACKEND", "interp")

# Compiling ahead in a second process (jit/precompile.py) would start beside every test that
# compiles a large program, on cores the test workers already use; tests/jit/test_precompile.py
# turns it on in processes of its own.
os.environ.setdefault("RELAYISH_COMPILE_AHEAD", "0")

# A compiled program's first call runs on the evaluator by default (jit/tiers.py): tests of the
# JIT compare it with the evaluator, so every call here runs compiled; tests/jit/test_tiers.py
# turns the evaluator tier on in processes of its own.
os.environ.setdefault("RELAYISH_TIERED", "0")

# tests/cuda runs in its own process (the CUDA simulator is chosen before Numba is imported):
# tests/jit/test_cuda_target.py starts it
collect_ignore = [] if os.environ.get("RELAYISH_CUDA_PROCESS") else ["cuda"]
