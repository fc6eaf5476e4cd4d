"""``import cefisim``: the public surface the package root promises (cefisim/__init__.py)."""

from __future__ import annotations

import subprocess
import sys

import pytest

import cefisim


def test_every_public_name_resolves_to_the_object_of_its_module() -> None:
    from cefisim.api.client import CefiClient
    from cefisim.engine.commands import PlaceOrder
    from cefisim.engine.venue import Venue

    assert cefisim.Venue is Venue and cefisim.PlaceOrder is PlaceOrder and cefisim.CefiClient is CefiClient
    for name in cefisim.__all__:
        assert getattr(cefisim, name) is not None, name
    assert sorted(dir(cefisim)) == sorted(cefisim.__all__)


def test_an_unknown_name_is_an_attribute_error() -> None:
    with pytest.raises(AttributeError, match="no attribute 'Nothing'"):
        cefisim.Nothing  # noqa: B018


def test_import_cefisim_pulls_in_neither_aiohttp_nor_the_engine() -> None:
    code = (
        "import sys, cefisim; "
        "print(sorted(m for m in ('aiohttp', 'cefisim.engine', 'cefisim.api') if m in sys.modules))"
    )
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert done.stdout.strip() == "[]"
