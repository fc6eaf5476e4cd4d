"""Fixtures the recorded-market tests share with the API tests."""

# a fixture requested by a test's parameter is found by name in a conftest: imported here, not into the
# test modules, where the parameter would shadow the import (ruff F811)
from tests.api.conftest import api_factory  # noqa: F401  re-exported for pytest
