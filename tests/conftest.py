"""Settings shared by the whole suite."""

from __future__ import annotations

import pytest
from hypothesis import HealthCheck, Phase, settings

from tests.wheel_support import Installed, install_wheel

# No property test may depend on how busy the machine is: Hypothesis's deadline and its "input
# generation is slow" check measure wall time, which a loaded machine (make test beside other jobs,
# CI runners) stretches by any factor. Tests that want a bound on work state it in examples, not time.
settings.register_profile("cefisim", deadline=None, suppress_health_check=[HealthCheck.too_slow])
settings.load_profile("cefisim")

# tests/mutations.py runs the property tests with ``--hypothesis-profile=mutations``: a break is caught
# once a failing example is found, so it skips shrinking (minutes on the state machine)
settings.register_profile(
    "mutations", parent=settings.get_profile("cefisim"), phases=[Phase.explicit, Phase.reuse, Phase.generate]
)


@pytest.fixture(scope="session")
def installed(tmp_path_factory: pytest.TempPathFactory) -> Installed:
    """The wheel installed in a fresh virtualenv, once per session (``tests/wheel_support.py``)."""
    return install_wheel(tmp_path_factory)
