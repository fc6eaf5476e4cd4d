"""A missing optional dependency is one line naming the extra; any other import error stays as it was."""

from __future__ import annotations

import subprocess
import sys

import pytest

from cefisim.api.cli.common.extras import EXTRAS, MissingExtra, missing_extra


def test_a_module_of_the_extra_becomes_the_install_hint() -> None:
    exc = ModuleNotFoundError("No module named 'gymnasium.spaces'", name="gymnasium.spaces")
    found = missing_extra(exc, "gym", "cefisim.gym")
    assert isinstance(found, MissingExtra) and isinstance(found, ModuleNotFoundError)
    assert str(found) == "cefisim.gym needs gymnasium: pip install 'cefisim[gym]'"
    assert found.name == "gymnasium.spaces"


def test_another_missing_module_is_not_hidden_behind_a_wrong_hint() -> None:
    exc = ModuleNotFoundError("No module named 'scipy'", name="scipy")
    assert missing_extra(exc, "gym", "cefisim.gym") is exc


@pytest.mark.parametrize(
    ("blocked", "code", "line"),
    [
        ("gymnasium", "import cefisim.gym", "cefisim.gym needs gymnasium: pip install 'cefisim[gym]'"),
        ("numpy", "import cefisim.gym", "cefisim.gym needs numpy: pip install 'cefisim[gym]'"),
        (
            "numpy",
            "import runpy; runpy.run_module('cefisim.examples.gym_random_and_simple', run_name='__main__')",
            "cefisim: this example needs numpy: pip install 'cefisim[gym]'",
        ),
        (
            "distributed",
            "from cefisim.api.cli.sweep.executors import DaskExecutor; DaskExecutor('local', 1)",
            "--dask needs distributed: pip install 'cefisim[dask]'",
        ),
    ],
)
def test_every_optional_import_says_which_extra(blocked: str, code: str, line: str) -> None:
    """Each optional import of the package, with its module made unimportable in a fresh interpreter."""
    block = f"import sys; sys.modules[{blocked!r}] = None; "
    argv = [sys.executable, "-c", block + code]
    done = subprocess.run(argv, capture_output=True, text=True, timeout=120, check=False)
    assert done.returncode == 1
    assert done.stderr.strip().splitlines()[-1].endswith(line), done.stderr
    assert "halted; None in sys.modules" not in done.stderr  # the original error is not chained


def test_the_extras_named_exist_in_the_package_metadata() -> None:
    import tomllib
    from pathlib import Path

    extras = tomllib.loads((Path(__file__).resolve().parents[4] / "pyproject.toml").read_text())["project"]
    assert set(EXTRAS) <= set(extras["optional-dependencies"])
