"""Fixtures of the engine tests; the builders live in ``tests/engine/builders.py``."""

from __future__ import annotations

import pytest

from tests.engine.builders import Sim


@pytest.fixture
def sim() -> Sim:
    """A fresh venue: alice, bob and carol rich in BTC, USD and ETH; dave with nothing."""
    return Sim()
