"""The plugin's shared server and per-test venue (``api/pytest_plugin/pytest_venues.py``), used as a user would, by
pytester."""

from __future__ import annotations

import pytest

from cefisim.api.pytest_plugin.pytest_venues import SharedServer, _start

pytest_plugins = ["pytester"]

# each test runs a pytest of its own that starts `cefisim serve` processes (two under -n 2): on a loaded
# 2-core machine that took more than the suite's 120 s per test (seen with both cores busy)
pytestmark = [pytest.mark.slow, pytest.mark.timeout(600)]

STRICT_INI = "[pytest]\nasyncio_mode = strict\nasyncio_default_fixture_loop_scope = function\n"

#: four tests, each placing an order in its own venue and seeing only that one; the venue ids they saw go to a file
SUITE = """
import json, os
import pytest

@pytest.mark.parametrize("n", range(4))
@pytest.mark.asyncio
async def test_a_fresh_venue_each(cefisim_venue, n):
    async with cefisim_venue.client("alice") as c:
        assert (await c.orders_active())["data"] == []
        await c.place_order("1", "BUY", "LIMIT", "0.01", price=f"{29000 + n}.00")
        assert len((await c.orders_active())["data"]) == 1
    cefisim_venue.advance(5)
    book = cefisim_venue.control("GET", "/book/1")
    assert f"{29000 + n}.00" in [level["price"] for level in book["bids"]]
    key = cefisim_venue.api_key("k-alice")
    assert key["key_id"].endswith("@" + cefisim_venue.id) and "PRIVATE KEY" in key["private_key"]
    with open(os.environ["SEEN"], "a") as f:
        f.write(json.dumps([cefisim_venue.id, cefisim_venue.url]) + "\\n")
"""


def _seen(path) -> list[list[str]]:  # type: ignore[no-untyped-def]
    import json

    return [json.loads(line) for line in path.read_text().splitlines()]


def test_one_server_per_session_a_venue_per_test(pytester: pytest.Pytester, monkeypatch: pytest.MonkeyPatch) -> None:
    pytester.makeini(STRICT_INI)
    pytester.makepyfile(test_suite=SUITE)
    seen = pytester.path / "seen.jsonl"
    monkeypatch.setenv("SEEN", str(seen))
    pytester.runpytest_subprocess("-p", "no:cacheprovider").assert_outcomes(passed=4)
    rows = _seen(seen)
    assert len({url for _, url in rows}) == 1  # one server for the session
    assert len({vid for vid, _ in rows}) == 4  # a venue per test


def test_under_xdist_each_worker_has_its_server(pytester: pytest.Pytester, monkeypatch: pytest.MonkeyPatch) -> None:
    pytest.importorskip("xdist")
    pytester.makeini(STRICT_INI)
    pytester.makepyfile(test_suite=SUITE)
    seen = pytester.path / "seen.jsonl"
    monkeypatch.setenv("SEEN", str(seen))
    pytester.runpytest_subprocess("-p", "no:cacheprovider", "-n", "2").assert_outcomes(passed=4)
    assert len({url for _, url in _seen(seen)}) == 2


def test_against_one_external_server(pytester: pytest.Pytester, monkeypatch: pytest.MonkeyPatch) -> None:
    server: SharedServer = _start(None)
    try:
        pytester.makeini(STRICT_INI)
        pytester.makepyfile(test_suite=SUITE)
        seen = pytester.path / "seen.jsonl"
        monkeypatch.setenv("SEEN", str(seen))
        pytester.runpytest_subprocess("-p", "no:cacheprovider", "--cefisim-url", server.url).assert_outcomes(passed=4)
        rows = _seen(seen)
        assert {url for _, url in rows} == {server.url} and len({vid for vid, _ in rows}) == 4
        assert [v["id"] for v in server.call("GET", "/_sim/venues")] == [
            "default"
        ]  # every venue deleted after its test
    finally:
        server.stop()


def test_a_server_that_cannot_start_says_why() -> None:
    with pytest.raises(RuntimeError, match="did not start"):
        _start("no-such-scenario-anywhere")
