"""CI policy: a skipped e2e test fails where e2e tests are required (tests/e2e/conftest.py, .ci/run)."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]


def _run(tmp_path: Path, required: bool) -> subprocess.CompletedProcess[str]:
    shutil.copy(ROOT / "tests" / "e2e" / "conftest.py", tmp_path / "conftest.py")
    (tmp_path / "test_browser.py").write_text(
        "import pytest\n\ndef test_needs_a_browser():\n    pytest.skip('no chromium')\n"
    )
    env = {k: v for k, v in os.environ.items() if k != "CEFISIM_E2E_REQUIRED"}
    if required:
        env["CEFISIM_E2E_REQUIRED"] = "1"
    return subprocess.run(
        [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", "-p", "no:cefisim", str(tmp_path)],
        cwd=tmp_path,
        env=env,
        capture_output=True,
        text=True,
        timeout=60,
    )


@pytest.mark.parametrize("required", [False, True])
def test_a_skipped_e2e_test_fails_only_where_required(tmp_path: Path, required: bool) -> None:
    proc = _run(tmp_path, required)
    if required:
        assert proc.returncode == 1 and "may not skip (no chromium)" in proc.stdout, proc.stdout
    else:
        assert proc.returncode == 0 and "1 skipped" in proc.stdout, proc.stdout


def test_ci_fails_when_chromium_cannot_be_installed() -> None:
    text = (ROOT / ".ci" / "run").read_text()
    assert "CEFISIM_E2E_REQUIRED=1 make e2e" in text
    assert "will skip" not in text and text.count("exit 1") >= 2
