"""Shared test settings.

Hypothesis profiles (choose with the environment variable HYPOTHESIS_PROFILE):

* ``default``: 60 examples per property, no deadline (the machine may be busy), no example
  database written into the working tree;
* ``ci``: the same, derandomized, so a CI run is reproducible;
* ``thorough``: 500 examples per property, for a slow local run before a release.
"""

from __future__ import annotations

import os

from hypothesis import HealthCheck, settings

_COMMON = dict(
    deadline=None,
    database=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large],
)
settings.register_profile("default", max_examples=60, **_COMMON)
settings.register_profile("ci", max_examples=60, derandomize=True, print_blob=True, **_COMMON)
settings.register_profile("thorough", max_examples=500, **_COMMON)
settings.load_profile(os.environ.get("HYPOTHESIS_PROFILE", "default"))
