"""docs/faults.md's examples, run by pytest as a user's own suite would run them (with the plugin)."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from tests.api.pytest_plugin.test_plugin import LOAD, STRICT_INI

pytest_plugins = ["pytester"]

DOC = Path(__file__).resolve().parents[4] / "docs" / "faults.md"


def test_the_documented_fault_examples_pass(pytester: pytest.Pytester) -> None:
    examples = [
        code for code in re.findall(r"```python\n(.*?)```", DOC.read_text(), flags=re.DOTALL) if "def test_" in code
    ]
    assert examples
    pytester.makeini(STRICT_INI)
    for i, code in enumerate(examples):
        pytester.makepyfile(**{f"test_faults_doc_{i}": code})
    tests = sum(code.count("def test_") for code in examples)
    pytester.runpytest(*LOAD).assert_outcomes(passed=tests)
