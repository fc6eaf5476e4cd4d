"""Settings shared by the whole suite."""

from __future__ import annotations

from hypothesis import Phase, settings

# tests/mutations.py runs the property tests with ``--hypothesis-profile=mutations``: a break is caught
# once a failing example is found, so it skips shrinking (minutes on the state machine)
settings.register_profile("mutations", phases=[Phase.explicit, Phase.reuse, Phase.generate])
