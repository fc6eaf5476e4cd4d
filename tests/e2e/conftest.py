"""The e2e tests' run policy: where they are required (CI), a skipped e2e test is a failure.

``.ci/run`` sets ``CEFISIM_E2E_REQUIRED=1`` before ``make e2e``: a browser test that skips there
(Chromium or chromedriver missing) would otherwise let CI pass without running it. Locally ``make e2e``
still skips without the browser.
"""

from __future__ import annotations

import os
from collections.abc import Generator
from typing import Any

import pytest

REQUIRED_ENV = "CEFISIM_E2E_REQUIRED"


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_makereport(item: pytest.Item, call: pytest.CallInfo[Any]) -> Generator[None, Any, None]:
    outcome = yield
    report = outcome.get_result()
    if report.skipped and os.environ.get(REQUIRED_ENV) == "1":
        reason = report.longrepr[2] if isinstance(report.longrepr, tuple) else str(report.longrepr)
        reason = reason.removeprefix("Skipped: ")
        report.outcome = "failed"
        report.longrepr = f"{REQUIRED_ENV}=1: an e2e test may not skip ({reason})"
