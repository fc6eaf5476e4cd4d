"""Settings shared by the whole suite."""

from __future__ import annotations

import pytest
from hypothesis import Phase, settings

from tests.wheel_support import Installed, install_wheel

# tests/mutations.py runs the property tests with ``--hypothesis-profile=mutations``: a break is caught
# once a failing example is found, so it skips shrinking (minutes on the state machine)
settings.register_profile("mutations", phases=[Phase.explicit, Phase.reuse, Phase.generate])


@pytest.fixture(scope="session")
def installed(tmp_path_factory: pytest.TempPathFactory) -> Installed:
    """The wheel installed in a fresh virtualenv, once per session (``tests/wheel_support.py``)."""
    return install_wheel(tmp_path_factory)
