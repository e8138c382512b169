"""Hypothesis profiles: a bounded one for CI and everyday runs, a heavier one on demand.

RELAYISH_HYPOTHESIS=heavy multiplies the example counts of tests that do not pin their own
count. No deadline: Numba compiles on first use and these machines are shared and noisy.
"""

import os

from hypothesis import HealthCheck, settings

settings.register_profile("ci", deadline=None, max_examples=100, suppress_health_check=[HealthCheck.too_slow])
settings.register_profile("heavy", deadline=None, max_examples=2000, suppress_health_check=[HealthCheck.too_slow])
settings.load_profile(os.environ.get("RELAYISH_HYPOTHESIS", "ci"))
