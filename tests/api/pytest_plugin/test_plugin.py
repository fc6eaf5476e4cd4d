"""The pytest plugin, used exactly as a user would: small test suites run by pytest's own ``pytester``.

The suites load the plugin with ``-p no:cefisim -p cefisim.api.pytest_plugin``: that works whether or not the
package is installed (installed, its ``pytest11`` entry point registers the same module as
``cefisim``; blocking that name first avoids a second registration under another name).
"""

from __future__ import annotations

import json
import os
import shutil
import sys
import textwrap
from pathlib import Path

import pytest

from cefisim.api.pytest_plugin import DEFAULT_SCENARIO
from tests.api.client.test_client import DOC, doc_examples

pytest_plugins = ["pytester"]

REPO = Path(__file__).resolve().parents[3]
LOAD = (
    "-p",
    "no:cefisim",
    "-p",
    "cefisim.api.pytest_plugin",
    "-p",
    "no:cacheprovider",
    # in-process runs: this process imported the plugin already, so pytest cannot rewrite its asserts
    "-W",
    "ignore::pytest.PytestAssertRewriteWarning",
)
STRICT_INI = "[pytest]\nasyncio_mode = strict\nasyncio_default_fixture_loop_scope = function\n"

#: the README example (docs/pytest.md, first test in it): what a user copies into their own suite
README_EXAMPLE = next(code for code in doc_examples("pytest.md") if "def test_" in code)


@pytest.fixture
def suite(pytester: pytest.Pytester) -> pytest.Pytester:
    pytester.makeini(STRICT_INI)
    return pytester


def test_readme_example_passes_in_strict_mode(suite: pytest.Pytester) -> None:
    suite.makepyfile(test_readme=README_EXAMPLE)
    result = suite.runpytest(*LOAD)
    result.assert_outcomes(passed=1)


def test_every_documented_test_example_passes(suite: pytest.Pytester) -> None:
    """Each test of a server per test in docs/pytest.md, as written (its scenario file copied where it
    says); the shared-server example (``cefisim_venue``) runs in ``test_plugin_venues.py``."""
    examples = [code for code in doc_examples("pytest.md") if "def test_" in code and "cefisim_venue" not in code]
    assert len(examples) >= 2
    (suite.path / "scenarios").mkdir()
    shutil.copy(DEFAULT_SCENARIO, suite.path / "scenarios" / "my_market.json")
    for i, code in enumerate(examples):
        suite.makepyfile(**{f"test_doc_{i}": code})
    suite.runpytest(*LOAD).assert_outcomes(passed=len(examples))


def test_auto_mode_needs_no_marks(pytester: pytest.Pytester) -> None:
    pytester.makeini("[pytest]\nasyncio_mode = auto\nasyncio_default_fixture_loop_scope = function\n")
    pytester.makepyfile(
        test_auto="""
        async def test_health(cefisim_client):
            assert (await cefisim_client.health())["status"] == "ok"
    """
    )
    pytester.runpytest(*LOAD).assert_outcomes(passed=1)


def test_server_fixture_and_virtual_clock(suite: pytest.Pytester) -> None:
    suite.makepyfile(
        test_server="""
        import pytest
        from cefisim.api.client import CefiClient

        @pytest.mark.asyncio
        async def test_server(cefisim_server):
            assert cefisim_server.url.startswith("http://127.0.0.1:")
            assert cefisim_server.sim.clock_mode == "virtual"
            assert str(cefisim_server.scenario.source).endswith("demo.json")
            async with CefiClient(cefisim_server.url) as c:
                before = (await c.health())["timestamp"]
                start = cefisim_server.now_ns
                assert cefisim_server.advance(90) == start + 90 * 10**9
                assert cefisim_server.advance("0.5") == start + 90_500_000_000
                after = (await c.health())["timestamp"]
            assert (before, after) == ("2026-11-02T09:00:00Z", "2026-11-02T09:01:30Z")
            with pytest.raises(ValueError):
                cefisim_server.advance(-1)

        @pytest.mark.asyncio
        async def test_each_test_gets_a_fresh_server(cefisim_server):
            assert cefisim_server.now_ns == cefisim_server.sim.scenario.start_ns
    """
    )
    suite.runpytest(*LOAD).assert_outcomes(passed=2)


def test_client_factory_by_id_and_mnemonic(suite: pytest.Pytester) -> None:
    suite.makepyfile(
        test_factory="""
        import pytest

        @pytest.mark.asyncio
        async def test_two_clients_trade(cefisim_client_for, cefisim_client):
            alice = cefisim_client_for("alice")
            bob = cefisim_client_for(101)
            assert alice.client_id == cefisim_client.client_id == "100" and bob.client_id == "101"
            # inside the demo market maker's spread (29999.00 / 30001.00), so they meet each other
            ask = await bob.place_order("1", "SELL", "LIMIT", "0.01", price="30000.00")
            bid = await alice.place_order("1", "BUY", "LIMIT", "0.01", price="30000.00")
            assert bid["status"] == "FILLED"
            trades = await bob.trades()
            assert trades["data"][0]["order_id"] == ask["id"]
            assert trades["data"][0]["liq_flag"] == "MAKER"

        @pytest.mark.asyncio
        async def test_client_without_key(cefisim_client_for):
            with pytest.raises(LookupError, match="no HMAC key"):
                cefisim_client_for("mm")
    """
    )
    suite.runpytest(*LOAD).assert_outcomes(passed=2)


def _small_scenario(path: Path, start: str) -> None:
    path.write_text(json.dumps({**DOC, "start": start}))


def test_scenario_from_marker_option_and_override(suite: pytest.Pytester) -> None:
    _small_scenario(suite.path / "june.json", "2026-06-01T09:00:00Z")
    (suite.path / "data").mkdir()
    _small_scenario(suite.path / "data" / "july.json", "2026-07-01T09:00:00Z")
    suite.makepyfile(
        test_choice="""
        from pathlib import Path

        import pytest

        @pytest.mark.asyncio
        @pytest.mark.cefisim_scenario("june.json")
        async def test_marker(cefisim_server, cefisim_client):
            assert str(cefisim_server.scenario.source).endswith("june.json")
            assert cefisim_client.client_id == "100"
            assert (await cefisim_client.health())["timestamp"] == "2026-06-01T09:00:00Z"

        @pytest.mark.asyncio
        async def test_option_or_default(cefisim_server, request):
            wanted = request.config.getoption("cefisim_scenario") or "demo.json"
            assert str(cefisim_server.scenario.source).endswith(Path(wanted).name)
    """
    )
    suite.runpytest(*LOAD).assert_outcomes(passed=2)
    suite.runpytest(*LOAD, "--cefisim-scenario", "data/july.json").assert_outcomes(passed=2)

    suite.makeconftest("""
        import pytest
        from tests_scenario import DOC

        @pytest.fixture
        def cefisim_scenario():
            return {**DOC, "start": "2026-08-01T09:00:00Z"}
    """)
    suite.makepyfile(tests_scenario=f"DOC = {DOC!r}")
    suite.makepyfile(
        test_override="""
        import pytest

        @pytest.mark.asyncio
        async def test_document(cefisim_client):
            assert (await cefisim_client.health())["timestamp"] == "2026-08-01T09:00:00Z"
            assert [a["fields"]["name"] for a in (await cefisim_client.assets())["data"]] == ["BTC", "USD"]
    """
    )
    result = suite.runpytest(*LOAD, "test_override.py")
    result.assert_outcomes(passed=1)


def test_bad_marker_path_is_a_clear_error(suite: pytest.Pytester) -> None:
    suite.makepyfile(
        test_bad="""
        import pytest

        @pytest.mark.asyncio
        @pytest.mark.cefisim_scenario("nowhere.json")
        async def test_x(cefisim_server):
            pass
    """
    )
    result = suite.runpytest(*LOAD)
    result.assert_outcomes(errors=1)
    result.stdout.fnmatch_lines(["*cefisim_scenario('nowhere.json'): no such file*"])


def test_marker_option_and_server_options_are_registered(suite: pytest.Pytester) -> None:
    result = suite.runpytest(*LOAD, "--markers")
    result.stdout.fnmatch_lines(["@pytest.mark.cefisim_scenario(path):*"])
    result = suite.runpytest(*LOAD, "--help")
    result.stdout.fnmatch_lines(["*--cefisim-scenario=FILE*"])
    suite.makepyfile(
        test_layout="""
        import pytest
        from cefisim.api.web.server.keys import ServerOptions

        @pytest.fixture
        def cefisim_server_options():
            return ServerOptions(signature_layout="newline")

        @pytest.mark.asyncio
        @pytest.mark.cefisim_scenario("june.json")
        async def test_newline_layout(cefisim_client):
            assert cefisim_client.layout == "newline"
            assert (await cefisim_client.balances(asset_id="1"))["data"][0]["id"] == "1"
    """
    )
    _small_scenario(suite.path / "june.json", "2026-06-01T09:00:00Z")
    suite.runpytest(*LOAD, "--strict-markers").assert_outcomes(passed=1)


@pytest.mark.slow
def test_installed_entry_point_and_explicit_p_do_not_clash(
    pytester: pytest.Pytester, monkeypatch: pytest.MonkeyPatch
) -> None:
    """With the package installed (simulated by a dist-info with the pytest11 entry point), the plugin
    loads by itself, and ``-p no:cefisim -p cefisim.api.pytest_plugin`` does not register it twice (a bare
    ``-p cefisim.api.pytest_plugin`` would: "Plugin already registered under a different name")."""
    site = pytester.path / "site"
    dist = site / "cefisim_fake-0.0.0.dist-info"
    dist.mkdir(parents=True)
    (dist / "METADATA").write_text("Metadata-Version: 2.1\nName: cefisim-fake\nVersion: 0.0.0\n")
    (dist / "entry_points.txt").write_text("[pytest11]\ncefisim = cefisim.api.pytest_plugin\n")
    monkeypatch.setenv("PYTHONPATH", os.pathsep.join([str(site), str(REPO)]))
    pytester.makeini(STRICT_INI)
    pytester.makepyfile(test_readme=README_EXAMPLE)
    result = pytester.runpytest_subprocess("-p", "no:cacheprovider")
    result.assert_outcomes(passed=1)
    result = pytester.runpytest_subprocess(
        "-p", "no:cefisim", "-p", "cefisim.api.pytest_plugin", "-p", "no:cacheprovider"
    )
    result.assert_outcomes(passed=1)


def test_a_shipped_scenario_by_name_in_the_marker_and_the_option(suite: pytest.Pytester) -> None:
    suite.makepyfile(
        test_named="""
        import pytest

        @pytest.mark.asyncio
        @pytest.mark.cefisim_scenario("flash_crash")
        async def test_marker(cefisim_server):
            assert str(cefisim_server.scenario.source).endswith("flash_crash.json")

        @pytest.mark.asyncio
        async def test_option(cefisim_server):
            assert str(cefisim_server.scenario.source).endswith("halt_resume.json")
    """
    )
    suite.runpytest(*LOAD, "--cefisim-scenario", "halt_resume").assert_outcomes(passed=2)


def test_without_pytest_asyncio_the_plugin_says_so_in_one_line(
    pytester: pytest.Pytester, monkeypatch: pytest.MonkeyPatch
) -> None:
    """pytest-asyncio unimportable (an import hook refuses it) and no plugin autoloaded."""
    pytester.makepyfile(
        test_needs_it="""
        def test_health(cefisim_client):
            pass
    """
    )
    runner = textwrap.dedent("""
        import sys
        import pytest

        class Refuse:
            def find_spec(self, name, path=None, target=None):
                if name.split(".")[0] == "pytest_asyncio":
                    raise ImportError(f"No module named {name!r}")

        sys.meta_path.insert(0, Refuse())
        sys.exit(pytest.main(["-p", "cefisim.api.pytest_plugin", "-p", "no:cacheprovider", "-rA"]))
    """)
    monkeypatch.setenv("PYTEST_DISABLE_PLUGIN_AUTOLOAD", "1")
    result = pytester.run(sys.executable, "-c", runner)
    message = "cefisim: the cefisim fixtures need pytest-asyncio: pip install 'cefisim[pytest]'"
    assert result.stdout.str().count(message) >= 2  # the header, and the fixture's failure
    assert "Traceback" not in result.stdout.str()
    result.assert_outcomes(errors=1)
