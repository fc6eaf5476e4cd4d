"""The loader: every problem reported with file, JSON path and reason, all at once, never a traceback."""

from __future__ import annotations

import json
import re
from collections.abc import Callable
from pathlib import Path

import pytest

from cefisim.api.formats.scenario import Scenario, ScenarioError, format_time, load_scenario, parse_scenario, parse_time
from cefisim.engine.commands import AdvanceClock, PlaceOrder, SetLatency, SetSettlementDelay
from cefisim.engine.units import RATE_ONE
from tests.api.formats.scenario.replay_support import PUBLIC_KEY, full_doc

SRC = "scen.json"


def problems_of(doc: object) -> list[tuple[str, str, str]]:
    with pytest.raises(ScenarioError) as info:
        parse_scenario(doc, SRC)
    return info.value.problems


def only_problem(doc: object) -> tuple[str, str]:
    problems = problems_of(doc)
    assert len(problems) == 1, problems
    source, path, reason = problems[0]
    assert source == SRC
    return path, reason


def test_full_document_parses() -> None:
    s = parse_scenario(full_doc(), SRC)
    assert isinstance(s, Scenario)
    assert s.seed == 1 and s.start_ns == parse_time("2026-11-02T09:00:00Z")
    assert s.end_ns == s.start_ns + 20 * 10**9
    inst = s.instruments[1]
    assert (inst.base.name, inst.quote.name, inst.min_qty, inst.price_band) == ("BTC", "USD", 2, RATE_ONE // 20)
    assert s.balances[100] == {1: 10 * 10**8, 2: 100000050}
    assert s.clients[100].fee_overrides == {1: (0, 1_500_000)}
    assert s.hmac_keys == {
        "2f1d7c9e-8a3b-4c5d-9e6f-0a1b2c3d4e5f": (100, "alice-secret"),
        "7c0e4b1a-3d2f-4e5a-8b6c-9d0e1f2a3b4c": (101, "bob-secret"),
    }
    assert [k["key_id"] for k in s.api_keys] == ["k-alice", "k-org"]
    assert s.oauth_clients[0]["scopes"] == ["mcp:read", "mcp:trade"]
    assert s.latency_ns == (0, 0, 1_500_000) and s.settlement_delay_ns == 2_000_000_000
    assert s.settings["signature_layout"] == "either"
    assert s.venue_config().max_open_orders == 1000
    assert (s.client_id("alice"), s.client_id("100"), s.instrument_id("BTC-USD"), s.asset_id("USD")) == (100, 100, 1, 2)
    # events are sorted by time, stably: the latency change at +1 comes first
    ats = [at for at, _ in s.events]
    assert ats == sorted(ats) and isinstance(s.events[0][1], SetLatency)
    assert s.events[-1] == (s.start_ns + 11_500_000_000, AdvanceClock(s.start_ns + 11_500_000_000))
    order = s.events[1][1]
    assert order == PlaceOrder(
        100, 1, "BUY", "LIMIT", "0.5", "29900.00", "GTC", (), ("ALO",), "NONE", "0.002", "bid-1", "m1", "0"
    )
    mm, noise = s.agents
    assert (mm.levels, mm.spread, mm.qty, mm.qty_step, mm.post_only) == (3, 200, 1000, 100, True)
    assert mm.path.prices == (3000000, 3001000) and mm.path.every_ns == 5 * 10**9
    assert (noise.client_id, noise.instrument_id, noise.end_ns) == (101, 1, s.start_ns + 12 * 10**9)


def test_build_venue_is_fresh_and_applies_settings() -> None:
    s = parse_scenario(full_doc(), SRC)
    assert s.setting_commands() == [
        (s.start_ns, SetLatency(0, 0, 1_500_000)),
        (s.start_ns, SetSettlementDelay(2_000_000_000)),
    ]
    v1 = s.build_venue()
    assert v1.latency_cancel_ns == 1_500_000 and v1.settlement_delay_ns == 2_000_000_000
    v1.submit(PlaceOrder(100, 1, "BUY", "LIMIT", "1", "30000.00"), at=s.start_ns)
    v1.instruments[1].status = "HALTED"
    v2 = s.build_venue()
    assert v2.instruments[1].status == "ACTIVE" and s.instruments[1].status == "ACTIVE"
    assert v2.accounts[100].balances[2].hold == 0 and v2.latency_cancel_ns == 1_500_000
    assert v2.accounts[100].balances[2].total == 100000050
    assert v2.instruments[1].base is v2.assets[1]  # copies keep their links


def test_shifted_moves_every_time() -> None:
    s = parse_scenario(full_doc(), SRC)
    t = s.shifted(10**9)
    assert t.start_ns == s.start_ns + 10**9 and t.end_ns == s.end_ns + 10**9
    assert [at for at, _ in t.events] == [at + 10**9 for at, _ in s.events]
    assert t.events[-1][1] == AdvanceClock(s.events[-1][1].to_ns + 10**9)  # type: ignore[union-attr]
    assert [a.start_ns for a in t.agents] == [a.start_ns + 10**9 for a in s.agents]
    assert s.start_ns == parse_time("2026-11-02T09:00:00Z")  # the original is untouched


def test_times() -> None:
    assert parse_time("1970-01-01T00:00:01Z") == 10**9
    assert parse_time("2026-11-02T09:00:00.000000001+00:00") == parse_time("2026-11-02T09:00:00Z") + 1
    assert parse_time("+1.5", 10) == 10 + 1_500_000_000
    assert format_time(parse_time("2026-11-02T09:00:00.25Z")) == "2026-11-02T09:00:00.25Z"
    not_a_time = ' is not an ISO 8601 UTC time (2026-11-02T09:00:00Z) or "+seconds"'
    for bad, message in (
        ("2026-11-02 09:00:00Z", not_a_time),
        ("2026-11-02T09:00:00", not_a_time),
        ("2026-02-30T00:00:00Z", ": day is out of range for month"),
        ("-1", not_a_time),
        ("+1e3", not_a_time),
        ("2026-11-02T09:00:00.0000000001Z", not_a_time),
        ("1969-12-31T23:59:59Z", " is before 1970-01-01"),
        ("3000-01-01T00:00:00Z", " is after 2262-04-11 (beyond 64-bit nanoseconds)"),
    ):
        with pytest.raises(ValueError, match=f"^{re.escape(repr(bad) + message)}$"):
            parse_time(bad, 0)
    with pytest.raises(ValueError, match=re.escape('must be an ISO 8601 UTC time or "+seconds", got an integer')):
        parse_time(5, 0)


def _set(path: str, value: object) -> Callable[[dict], None]:
    """A mutation that sets (or with value DELETE removes) the item at a dotted path."""

    def mutate(doc: dict) -> None:
        *parents, last = path.split(".")
        node: object = doc
        for part in parents:
            node = node[int(part)] if part.isdigit() else node[part]  # type: ignore[index]
        key: object = int(last) if last.isdigit() else last
        if value is DELETE:
            del node[key]  # type: ignore[attr-defined]
        elif isinstance(node, list) and key == len(node):
            node.append(value)
        else:
            node[key] = value  # type: ignore[index]

    return mutate


DELETE = object()

CASES = [
    # unknown keys
    (_set("colour", "red"), "$.colour", "unknown key"),
    (_set("instruments.0.tick", "0.01"), "$.instruments[0].tick", "unknown key"),
    (_set("settings.latency.entry_us", 1), "$.settings.latency.entry_us", "unknown key"),
    (_set("events.0.size", "1"), "$.events[0].size", "unknown key"),
    (_set("agents.0.spred", "1"), "$.agents[0].spred", "unknown key"),
    # missing keys
    (_set("seed", DELETE), "$.seed", "missing required key"),
    (_set("instruments.0.symbol", DELETE), "$.instruments[0].symbol", "missing required key"),
    (_set("events.0.qty", DELETE), "$.events[0].qty", "missing required key"),
    (_set("api_keys.0.public_key", DELETE), "$.api_keys[0].public_key", "missing required key"),
    (_set("oauth_clients.0.scopes", DELETE), "$.oauth_clients[0].scopes", "missing required key"),
    # wrong types
    (_set("seed", "7"), "$.seed", "must be an integer, got a string"),
    (_set("seed", True), "$.seed", "must be an integer, got a boolean"),
    (_set("assets", {}), "$.assets", "must be an array"),
    (_set("assets.0.decimals", 19), "$.assets[0].decimals", "must be between 0 and 18"),
    (_set("clients.0.balances", ["BTC"]), "$.clients[0].balances", "must be an object"),
    (_set("settings.sign_reference_data", "yes"), "$.settings.sign_reference_data", "must be true or false"),
    (_set("api_keys.0.revoked", 0), "$.api_keys[0].revoked", "must be true or false"),
    (_set("events.0.flags", "ALO"), "$.events[0].flags", "must be an array"),
    (_set("agents.0.levels", 0), "$.agents[0].levels", "must be between 1 and 100"),
    (_set("agents.0.interval", "-1"), "$.agents[0].interval", "number of seconds"),
    (_set("settings.settlement_delay_ms", -5), "$.settings.settlement_delay_ms", "milliseconds"),
    # bad decimals and ids
    (_set("instruments.0.price_increment", "0,01"), "$.instruments[0].price_increment", "not a decimal string"),
    (_set("instruments.0.price_increment", 0.01), "$.instruments[0].price_increment", "write numbers as strings"),
    (_set("instruments.0.price_increment", "0.00"), "$.instruments[0].price_increment", "greater than zero"),
    (_set("instruments.0.price_band", "1"), "$.instruments[0].price_band", "less than 1"),
    (_set("instruments.0.maker_fee", "0.0000000001"), "$.instruments[0].maker_fee", "more than 9 decimals"),
    (_set("assets.0.id", "01"), "$.assets[0].id", "not an id string"),
    (_set("events.0.qty", "-1"), "$.events[0].qty", "not a decimal string"),
    # off the grid
    (_set("clients.0.balances.BTC", "0.000000001"), "$.clients[0].balances.BTC", "off the grid: finer than BTC's 8"),
    (_set("instruments.0.min_qty", "0.00015"), "$.instruments[0].min_qty", "not a multiple of qty_increment 0.0001"),
    (_set("instruments.0.qty_increment", "0.000000001"), "$.instruments[0].qty_increment", "finer than BTC's 8"),
    (_set("agents.0.spread", "2.005"), "$.agents[0].spread", "not a multiple of price_increment 0.01"),
    (_set("agents.0.prices.1", "1.001"), "$.agents[0].prices[1]", "off the grid"),
    (_set("agents.1.qty_min", "0.00001"), "$.agents[1].qty_min", "off the grid"),
    (_set("events.6.amount", "1.001"), "$.events[6].amount", "finer than USD's 2 decimals"),
    # unknown references
    (_set("clients.0.balances.DOGE", "1"), "$.clients[0].balances.DOGE", "unknown asset 'DOGE'"),
    (_set("instruments.0.base", "9"), "$.instruments[0].base", "unknown asset '9'"),
    (_set("events.0.client", "carol"), "$.events[0].client", "unknown client 'carol'"),
    (_set("events.0.instrument", "BTC-EUR"), "$.events[0].instrument", "unknown instrument 'BTC-EUR'"),
    (
        _set("clients.0.fees", {"ETH-USD": {"maker": "0", "taker": "0"}}),
        '$.clients[0].fees["ETH-USD"]',
        "unknown instrument",
    ),
    (_set("api_keys.0.client_id", "555"), "$.api_keys[0].client_id", "unknown client '555'"),
    (_set("agents.1.client", "nobody"), "$.agents[1].client", "unknown client"),
    # duplicates
    (
        _set("assets.2", {"id": "1", "name": "ETH", "decimals": 8}),
        "$.assets[2].id",
        "duplicate id '1' (also assets[0])",
    ),
    (_set("assets.2", {"id": "3", "name": "BTC", "decimals": 8}), "$.assets[2].name", "duplicate name 'BTC'"),
    (_set("clients.3", {"id": "102", "mnemonic": "alice"}), "$.clients[3].mnemonic", "duplicate mnemonic 'alice'"),
    (_set("clients.3", {"id": "100", "mnemonic": "carol"}), "$.clients[3].id", "duplicate id '100'"),
    (
        _set("instruments.1", {**full_doc()["instruments"][0], "id": "2"}),
        "$.instruments[1].symbol",
        "duplicate symbol 'BTC-USD'",
    ),
    (_set("clients.1.key", "2f1d7c9e-8a3b-4c5d-9e6f-0a1b2c3d4e5f"), "$.clients[1].key", "duplicate key"),
    (_set("api_keys.1.key_id", "k-alice"), "$.api_keys[1].key_id", "duplicate key_id"),
    (
        _set("events.0.flags", ["USE_AGGRESSIVE_PRICING", "USE_AGGRESSIVE_PRICING"]),
        "$.events[0].flags[1]",
        "listed twice",
    ),
    # bad enums
    (_set("events.0.side", "BUYY"), "$.events[0].side", "'BUYY' is not one of BUY, SELL"),
    (_set("events.0.type", "fill"), "$.events[0].type", "'fill' is not one of order, modify"),
    (_set("instruments.0.status", "OPEN"), "$.instruments[0].status", "is not one of DISABLED, OPENING"),
    (_set("clients.0.self_trade_prevention", "YES"), "$.clients[0].self_trade_prevention", "is not one of"),
    (_set("api_keys.0.kind", "admin"), "$.api_keys[0].kind", "'admin' is not one of user, organization"),
    (_set("settings.signature_layout", "json"), "$.settings.signature_layout", "is not one of concat"),
    (_set("agents.0.type", "whale"), "$.agents[0].type", "is not one of market_maker, noise_taker"),
    # times
    (_set("events.0.at", "2026-11-01T09:00:00Z"), "$.events[0].at", "before start (2026-11-02T09:00:00Z)"),
    (_set("events.0.at", "soon"), "$.events[0].at", "is not an ISO 8601 UTC time"),
    (_set("start", "+5"), "$.start", "must be an ISO 8601 UTC time"),
    (_set("end", "2026-11-02T08:00:00Z"), "$.end", "before start"),
    (_set("agents.1.end", "+0.5"), "$.agents[1].end", "before the agent's start"),
    # rules between fields
    (_set("instruments.0.quote", "BTC"), "$.instruments[0].quote", "must differ from base"),
    (_set("clients.0.secret", DELETE), "$.clients[0].secret", "key and secret go together"),
    (_set("clients.0.key", "not-a-uuid"), "$.clients[0].key", "is not a UUID"),
    (_set("events.0.price", DELETE), "$.events[0].price", "a LIMIT order needs a price"),
    (_set("events.0.external_id", "x" * 19), "$.events[0].external_id", "not an external id"),
    (_set("events.2.external_id", DELETE), "$.events[2]", "order_id or external_id"),
    (_set("events.4.ref", "not valid!"), "$.events[4].ref", "exchange order id or an external id"),
    (_set("events.6.instructions", {"iban": "x"}), "$.events[6].instructions.iban", "unknown key (FIAT"),
    (_set("api_keys.0.users", []), "$.api_keys[0].users", "only an organization key lists users"),
    (_set("oauth_clients.0.redirect_uris", []), "$.oauth_clients[0].redirect_uris", "must list at least one"),
    (_set("oauth_clients.0.redirect_uris", ["/cb"]), "$.oauth_clients[0].redirect_uris[0]", "not an absolute URI"),
    (
        _set("oauth_clients.0.redirect_uris", ["https://a.example/cb#x"]),
        "$.oauth_clients[0].redirect_uris[0]",
        "no fragment",
    ),
    (_set("oauth_clients.0.scopes", []), "$.oauth_clients[0].scopes", "must list at least one"),
    (_set("oauth_clients.0.scopes", ["mcp read"]), "$.oauth_clients[0].scopes[0]", "not a scope token"),
    (_set("api_keys.0.client_id", DELETE), "$.api_keys[0].client_id", "needs user_id and client_id"),
    (_set("api_keys.0.expires_at", "2030-01-01T00:00:00"), "$.api_keys[0].expires_at", "with a zone"),
    (
        _set(
            "api_keys.2",
            {"key_id": "k-bob", "kind": "user", "user_id": "u-bob", "client_id": "100", "public_key": PUBLIC_KEY},
        ),
        "$.api_keys[2].client_id",
        "user 'u-bob' is client 101 elsewhere",
    ),
    (
        _set("api_keys.1.users.1", {"user_id": "u-bob", "client_id": "101"}),
        "$.api_keys[1].users[1].user_id",
        "listed twice",
    ),
    (_set("clients.3", {"id": "102", "mnemonic": "123"}), "$.clients[3].mnemonic", "must not be all digits"),
    (_set("agents.0.random_walk", {"start": "1.00", "step": "0.01"}), "$.agents[0]", "exactly one price path"),
    (_set("agents.0.every", DELETE), "$.agents[0].every", "the time between two prices"),
    (_set("agents.0.prices", []), "$.agents[0].prices", "no prices"),
    (_set("agents.0.prices_file", "nowhere.txt"), "$.agents[0]", "exactly one price path"),
    (_set("agents.1.qty_max", "0.0001"), "$.agents[1].qty_max", "below qty_min"),
    (_set("agents.0.qty", "0.0001"), "$.agents[0].qty", "below the instrument's min_qty 0.0002"),
]


@pytest.mark.parametrize(("mutate", "path", "reason"), CASES, ids=[c[1] + ":" + c[2][:24] for c in CASES])
def test_each_problem_names_file_path_and_reason(mutate: Callable[[dict], None], path: str, reason: str) -> None:
    doc = full_doc()
    mutate(doc)
    got_path, got_reason = only_problem(doc)
    assert (got_path, reason in got_reason) == (path, True), got_reason


def test_all_problems_at_once_and_the_message() -> None:
    doc = full_doc()
    doc["instruments"][0]["price_increment"] = "0,01"
    doc["clients"][0]["balances"]["USD"] = "1.001"
    doc["events"][0]["side"] = "buy"
    doc["colour"] = 1
    del doc["assets"][1]["decimals"]
    with pytest.raises(ScenarioError) as info:
        parse_scenario(doc, SRC)
    paths = [p for _, p, _ in info.value.problems]
    assert {"$.instruments[0].price_increment", "$.events[0].side", "$.colour", "$.assets[1].decimals"} <= set(paths)
    lines = str(info.value).splitlines()
    assert len(lines) == len(info.value.problems)
    assert f"{SRC}: $.instruments[0].price_increment: not a decimal string" in lines
    assert isinstance(info.value, ValueError)


def test_problems_found_in_a_file(tmp_path: Path) -> None:
    f = tmp_path / "bad.json"
    f.write_text(
        '{"seed": 1, "start": "2026-11-02T09:00:00Z", "assets": [], "instruments": [],\n'
        ' "clients": [], "seed": 2, "events": [{"at": "+1", "type": "clock", "at": "+2"}]}'
    )
    with pytest.raises(ScenarioError) as info:
        load_scenario(f)
    assert info.value.problems == [(str(f), "$.seed", "duplicate key"), (str(f), "$.events[0].at", "duplicate key")]


@pytest.mark.parametrize(
    ("text", "reason"),
    [
        ('{"seed": 1,\n  "start": }', "invalid JSON at line 2, column 12: Expecting value"),
        ('{"seed": NaN}', "NaN is not JSON"),
        ("", "invalid JSON at line 1, column 1"),
        ("[1, 2]", "must be an object, got an array"),
    ],
)
def test_invalid_json(tmp_path: Path, text: str, reason: str) -> None:
    f = tmp_path / "x.json"
    f.write_text(text)
    with pytest.raises(ScenarioError) as info:
        load_scenario(f)
    ((source, path, got),) = info.value.problems
    assert (source, path) == (str(f), "$") and reason in got


def test_unreadable_files(tmp_path: Path) -> None:
    with pytest.raises(ScenarioError, match=r"missing\.json: \$: cannot read the file: No such file"):
        load_scenario(tmp_path / "missing.json")
    (tmp_path / "latin.json").write_bytes(b'{"seed": "\xe9"}')
    with pytest.raises(ScenarioError, match="cannot read the file"):
        load_scenario(tmp_path / "latin.json")


def test_price_series_files(tmp_path: Path) -> None:
    doc = full_doc()
    mm = doc["agents"][0]
    del mm["prices"]
    (tmp_path / "p.txt").write_text("# a comment\n30000.00\n\n30005.00\n")
    (tmp_path / "p.json").write_text('["30000.00", "30000.50"]')
    (tmp_path / "bad.json").write_text('["30000.00", 30000.5]')
    (tmp_path / "broken.json").write_text('["30000.00",')
    src = str(tmp_path / "s.json")
    mm["prices_file"] = "p.txt"
    assert parse_scenario(doc, src).agents[0].path.prices == (3000000, 3000500)  # type: ignore[union-attr]
    mm["prices_file"] = "p.json"
    assert parse_scenario(doc, src).agents[0].path.prices == (3000000, 3000050)  # type: ignore[union-attr]
    for name, reason in (
        ("bad.json", "not a decimal string"),
        ("broken.json", "broken.json: invalid JSON at line 1"),
        ("none.txt", "cannot read none.txt"),
    ):
        mm["prices_file"] = name
        with pytest.raises(ScenarioError) as info:
            parse_scenario(doc, src)
        ((_, path, got),) = info.value.problems
        assert path == "$.agents[0].prices_file" and reason in got, got


def test_minimal_document_and_defaults() -> None:
    doc = {
        "seed": 0,
        "start": "2026-11-02T09:00:00Z",
        "assets": [{"id": "1", "name": "BTC", "decimals": 8}, {"id": "2", "name": "USD", "decimals": 2}],
        "instruments": [
            {
                "id": "1",
                "symbol": "BTC-USD",
                "base": "1",
                "quote": "2",
                "price_increment": "0.01",
                "qty_increment": "0.0001",
            }
        ],
        "clients": [{"id": "100", "mnemonic": "alice"}],
    }
    s = parse_scenario(doc, SRC)
    inst = s.instruments[1]
    assert (inst.min_qty, inst.price_band, inst.maker_fee, inst.taker_fee, inst.status) == (
        1,
        RATE_ONE // 20,
        0,
        0,
        "ACTIVE",
    )
    assert s.clients[100].self_trade_prevention == "NONE" and s.balances[100] == {}
    assert (s.events, s.agents, s.api_keys, s.oauth_clients, s.hmac_keys) == ([], [], [], [], {})
    assert s.end_ns == s.start_ns and s.latency_ns is None
    s.build_venue().check_invariants()


def test_default_end_covers_events_and_bounded_agents() -> None:
    doc = full_doc()
    del doc["end"]
    s = parse_scenario(doc, SRC)
    assert s.end_ns == s.start_ns + 15 * 10**9  # the market maker's end is the latest time given


def test_shipped_scenarios_load() -> None:
    root = Path(__file__).resolve().parents[4] / "scenarios"
    for f in sorted(root.glob("*.json")):
        assert load_scenario(f).source == str(f)
        json.loads(f.read_text())  # plain JSON, no duplicate-key tricks


@pytest.mark.parametrize(
    ("key", "value", "reason"),
    [
        ("parent_id", "abc", 'must be "0" or match ^[1-9][0-9]*$'),  # an order record's parent_id is an id
        ("msg_id", "m" * 257, "longer than 256 characters"),
        ("qty", "1" * 41, "longer than 40 characters"),
        ("hold_fee_rate", "0.0000000001", "has more than 9 decimals"),
    ],
)
def test_an_orders_fields_are_refused_as_the_interface_refuses_them(key: str, value: str, reason: str) -> None:
    """The order intake every interface shares (api/edge/intake.py) checks an event's order too: what
    POST /orders refuses, a scenario refuses at the same field."""
    doc = full_doc()
    doc["events"][0][key] = value
    assert only_problem(doc) == (f"$.events[0].{key}", reason)


def test_an_orders_fields_the_interface_takes_a_scenario_takes() -> None:
    """A fee hold rate above 1 is the venue's business rejection (a REJECTED record, docs/scenarios.md:
    syntax only), an empty msg_id is a msg_id, a 19-digit order id is an order id."""
    doc = full_doc()
    doc["events"][0].update(hold_fee_rate="2", msg_id="")
    doc["events"][3]["order_id"] = "9" * 19
    scenario = parse_scenario(doc, SRC)
    order = next(cmd for _, cmd in scenario.events if isinstance(cmd, PlaceOrder))
    assert (order.hold_fee_rate, order.msg_id) == ("2", "")
    assert [cmd.order_id for _, cmd in scenario.events if type(cmd).__name__ == "ModifyOrder"] == [None, 10**19 - 1]
