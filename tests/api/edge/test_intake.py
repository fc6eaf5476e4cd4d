"""The intakes (``api/edge/intake.py``; the venue faults' in ``api/side_state/venue_faults.py``): each
tested once as a unit, then the callers held to them. Accepted fields make the same command whether
they come over HTTP, from the backtest strategy's context or from a scenario file, and refused fields
are refused by each, naming the same field (hypothesis over field values); the OpenAPI document's rules
across fields refuse what the intake's rules refuse; the venue faults' bounds have one owner.
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import replace
from typing import Any
from urllib.parse import quote

import hypothesis
import orjson
import pytest
from hypothesis import HealthCheck, example, given, settings
from hypothesis import strategies as st

from cefisim.api.cli.backtest.context import Context
from cefisim.api.client import ProblemError
from cefisim.api.edge import intake
from cefisim.api.edge.intake import (
    ORDER_NAMED,
    PRICE_FOR_LIMIT,
    SCRIPTED_MODIFY,
    cancel_order,
    modify_order,
    order_ref,
    place_order,
    request_transfer,
)
from cefisim.api.edge.validate import F, FieldProblem, Fields, RequiredWhen, problem_in
from cefisim.api.formats.scenario import ScenarioError, parse_scenario
from cefisim.api.formats.scenario.event_entries import MODIFY_KEYS, ORDER_KEYS, TRANSFER_KEYS
from cefisim.api.formats.scenario.format_keys import EVENT_KEYS
from cefisim.api.runtime.simulation import Simulation
from cefisim.api.side_state.side_states import SideStateRecord
from cefisim.api.side_state.venue_faults import SETTINGS, checked, venue_faults_intake
from cefisim.engine.commands import CancelOrder, ModifyOrder, PlaceOrder, RequestTransfer
from cefisim.engine.reference import Asset
from cefisim.engine.simulation.backtest import Harness
from tests.api.conftest import scenario_doc
from tests.api.web.app.test_openapi import DOCUMENT, errors
from tests.fuzz.support import Client, Served, serve_sim, signed_headers

INFO = {"client_id": "100", "instrument_id": "1", "side": "BUY", "type": "LIMIT", "qty": "1", "price": "50000.00"}
USD = Asset(2, "USD", 2)
FIAT = {
    "fiat_account_id": "6f1c2b3a-4d5e-4f60-8a7b-9c8d7e6f5a4b",
    "identity_id": "6f1c2b3a-4d5e-4f60-8a7b-9c8d7e6f5a4c",
    "account_id": "6f1c2b3a-4d5e-4f60-8a7b-9c8d7e6f5a4d",
    "includes_fee": False,
}


# --- each intake, as a unit ---------------------------------------------------------------------------


def test_an_order_body_makes_its_command_with_the_interfaces_defaults() -> None:
    cmd = place_order(100, {"info": INFO})
    assert cmd == PlaceOrder(100, 1, "BUY", "LIMIT", "1", "50000.00", "GTC", (), (), None, None, None, None, None)
    full = {
        "external_id": "e-1",
        "info": {
            **INFO,
            "tif": "IOC",
            "flags": ["USE_AGGRESSIVE_PRICING"],
            "exec_inst_flags": ["AON"],
            "stp": "CANCEL_BOTH",
            "hold_fee_rate": "0.0020",
            "msg_id": "m",
            "parent_id": "0",
        },
    }
    assert place_order(100, full) == PlaceOrder(
        100, 1, "BUY", "LIMIT", "1", "50000.00", "IOC", ("USE_AGGRESSIVE_PRICING",), ("AON",), "CANCEL_BOTH",
        "0.0020", "e-1", "m", "0",
    )  # fmt: skip
    market = {**INFO, "type": "MARKET"}
    del market["price"]
    assert place_order(100, {"info": market}) == PlaceOrder(100, 1, "BUY", "MARKET", "1")


@pytest.mark.parametrize(
    ("change", "field", "reason"),
    [
        ({"qty": "1.5.0"}, "info.qty", "must be a decimal string"),
        ({"side": "buy"}, "info.side", "must be one of BUY, SELL"),
        ({"flags": ["NOPE"]}, "info.flags[0]", "must be one of USE_AGGRESSIVE_PRICING"),
        ({"exec_inst_flags": ["ALO", "ALO"]}, "info.exec_inst_flags[1]", "duplicate value 'ALO'"),
        ({"hold_fee_rate": "0.0000000001"}, "info.hold_fee_rate", "has more than 9 decimals"),
        ({"parent_id": "x"}, "info.parent_id", 'must be "0" or match'),
        ({"price": None}, "info.price", "is required for LIMIT orders"),
        ({"colour": "red"}, "info.colour", "unknown field"),
    ],
)
def test_an_order_field_refused_is_named_with_its_reason(change: dict[str, Any], field: str, reason: str) -> None:
    problem = place_order(100, {"info": {k: v for k, v in {**INFO, **change}.items() if v is not None}})
    assert isinstance(problem, FieldProblem) and problem.field == field and reason in problem.reason, problem
    assert (problem.rule is PRICE_FOR_LIMIT) == (field == "info.price")


def test_the_rules_across_a_modifys_fields() -> None:
    """It names its order; it says its price unless it converts to MARKET; a scenario's keeps the price."""
    info = {"client_id": "100", "new_qty": "2"}
    unnamed = modify_order(100, {"info": {**info, "new_price": "1.00"}})
    assert isinstance(unnamed, FieldProblem) and (unnamed.field, unnamed.rule) == ("id", ORDER_NAMED)
    unpriced = modify_order(100, {"id": "5", "info": info})
    assert isinstance(unpriced, FieldProblem) and unpriced.field == "info.new_price"
    assert modify_order(100, {"external_id": "e", "info": {**info, "new_type": "MARKET"}}) == ModifyOrder(
        100, None, "e", "2", None, "MARKET"
    )
    assert modify_order(100, {"id": "5", "info": info}, SCRIPTED_MODIFY) == ModifyOrder(100, 5, None, "2")
    still_unnamed = modify_order(100, {"info": info}, SCRIPTED_MODIFY)
    assert isinstance(still_unnamed, FieldProblem) and still_unnamed.rule is ORDER_NAMED


@pytest.mark.parametrize(
    ("ref", "ok"),
    [
        ("1", True),
        ("1" * 19, True),
        ("1" * 20, False),  # no exchange id, and longer than an external id
        ("ext-1.~_", True),
        ("6f1c2b3a-4d5e-4f60-8a7b-9c8d7e6f5a4b", True),
        ("0", True),  # not an exchange id, but a fine external id
        ("12\n", False),  # `$` of a plain re.match would take it
        ("not valid!", False),
        ("", False),
        (12, False),
    ],
)
def test_an_order_reference_is_an_exchange_or_an_external_id(ref: Any, ok: bool) -> None:
    made = cancel_order(100, ref)
    assert made == (
        CancelOrder(100, ref) if ok else FieldProblem("ref_id", "must be an exchange order id or an external id")
    )
    assert (order_ref(ref) == ref) == ok


def test_a_transfer_is_exact_in_its_asset_and_its_instructions_fit_the_platform() -> None:
    request = {"amount": "1.25", "asset_id": "2", "client_id": "100", "type": "DEPOSIT", "platform": "FIAT"}
    assets = {2: USD}.get
    made = request_transfer(100, {"request": {**request, "instructions": FIAT}}, assets)
    assert made == RequestTransfer(100, 2, "1.25", "DEPOSIT", "FIAT", tuple(sorted(FIAT.items())))
    for change, field in (
        ({"amount": "1.255"}, "request.amount"),
        ({"amount": "0"}, "request.amount"),
        ({"asset_id": "9"}, "request.asset_id"),
        ({"instructions": {"includes_fee": False}}, "request.instructions.fiat_account_id"),
    ):
        problem = request_transfer(100, {"request": {**request, "instructions": FIAT, **change}}, assets)
        assert isinstance(problem, FieldProblem) and problem.field == field, (change, problem)
    partial = {"request": {**request, "instructions": {"includes_fee": False}}}
    assert isinstance(request_transfer(100, partial, assets, own_instructions=True), RequestTransfer)


@pytest.mark.parametrize(
    ("value", "low", "ok"),
    [
        (5, 0, True),
        ("5", 0, True),
        ("0005", 0, True),
        (10, 0, True),
        (11, 0, False),
        (-1, 0, False),
        ("-1", 0, False),
        ("-0", 0, False),  # no sign where no negative number is taken
        ("-10", -10, True),
        (-11, -10, False),
        ("1.5", 0, False),
        (1.0, 0, False),
        (True, 0, False),
        ("²", 0, False),
        ("1" * 20, 0, False),
        ("", 0, False),
    ],
)
def test_a_whole_field_takes_an_integer_or_its_digits_within_bounds(value: Any, low: int, ok: bool) -> None:
    spec = {"n": F("whole", low=low, high=10)}
    problem = problem_in({"n": value}, spec)
    assert (problem is None) == ok, problem
    if not ok:
        assert problem == FieldProblem("n", f"must be a whole number from {low} to 10")


@pytest.mark.parametrize(
    ("rate", "ok"),
    [("0.002", True), ("0.123456789", True), ("0.1234567890000", True), ("0.1234567891", False), ("1", True)],
)
def test_a_rate_field_has_at_most_nine_significant_decimals(rate: str, ok: bool) -> None:
    assert (problem_in({"r": rate}, {"r": F("rate")}) is None) == ok


def test_a_rule_is_checked_once_every_field_passed() -> None:
    table = Fields({"a": F("str"), "b": F("decimal")}, RequiredWhen("b", "a", "x", "is required when a is x"))
    assert problem_in({"a": "x", "b": "z"}, table) == FieldProblem(
        "b", "must be a decimal string matching ^[0-9]+(\\.[0-9]+)?$"
    )
    rule = table.rules[0]
    assert problem_in({"a": "x"}, table) == FieldProblem("b", "is required when a is x", rule)
    assert problem_in({"a": "y"}, table) is None


def test_the_venue_faults_intake_takes_the_three_settings() -> None:
    assert venue_faults_intake({}) == (0, 0, 0)
    assert venue_faults_intake({"read_lag_ms": "5", "fill_delay_ms": None, "clock_skew_s": "-60"}) == (5, 0, -60)
    assert venue_faults_intake({"clock_skew_s": 1.5}) == FieldProblem(
        "clock_skew_s", "must be a whole number from -86400 to 86400"
    )
    assert venue_faults_intake({"read_lag": 1}) == FieldProblem("read_lag", "unknown field")


# --- one owner of the venue faults' bounds ---------------------------------------------------------------


def _bounds() -> Iterator[tuple[str, int, bool]]:
    for name, f in SETTINGS.items():
        yield from ((name, f.low, True), (name, f.high, True), (name, f.low - 1, False), (name, f.high + 1, False))


@pytest.mark.parametrize(("name", "value", "ok"), list(_bounds()))
def test_every_way_in_takes_the_venue_faults_within_the_same_bounds(
    name: str, value: int, ok: bool, served: Served
) -> None:
    """The control plane, a scenario event and a journal record (and so a snapshot) all take each
    setting up to its bound in ``SETTINGS`` and refuse one past it, naming the setting."""
    try:
        reply = _post(served, "/_sim/faults/venue", {name: value}, signed=False)
    finally:
        _post(served, "/_sim/faults/venue", {}, signed=False)  # a skew would move the signing window
    assert reply.status == (200 if ok else 400), reply.body
    if not ok:
        assert reply.json()["detail"].startswith(f"{name}: "), reply.body
    events = [{"at": "+1", "type": "venue_faults", name: value}]
    problems = _problems(scenario_doc(events=events))
    assert (problems == []) == ok and all(p.startswith(f"$.events[0].{name}") for p in problems), problems
    values = [value if n == name else 0 for n in SETTINGS]
    if ok:
        assert checked(values) == tuple(values)
    else:
        with pytest.raises(ValueError, match=f"^{name}: "):
            checked(values)


# --- the three callers, held to one intake -------------------------------------------------------------


@pytest.fixture(scope="module")
def served() -> Iterator[Served]:
    with serve_sim(scenario_doc()) as server:
        yield server


def _post(served: Served, path: str, body: Any, method: str = "POST", signed: bool = True) -> Any:
    raw = orjson.dumps(body)
    headers = {"Content-Type": "application/json"}
    if signed:
        headers.update(signed_headers(100, method, path, raw))
    client = Client(served.port)
    try:
        return client.request(method, path, raw, headers)
    finally:
        client.close()


def _recorded(served: Served, send: Any) -> tuple[Any, list[Any]]:
    """What ``send()`` answers, and the commands it had the simulation submit."""
    seen: list[Any] = []
    sim = served.sim
    plain = sim.submit

    def submit(cmd: Any) -> Any:
        seen.append(cmd)
        return plain(cmd)

    sim.submit = submit  # type: ignore[method-assign]  # recorded while this request is served
    try:
        return send(), seen
    finally:
        del sim.submit


Outcome = tuple[str, Any]


def _http(served: Served, method: str, path: str, body: Any = None) -> Outcome:
    reply, seen = _recorded(
        served, lambda: _post(served, path, body, method) if body is not None else _delete(served, path)
    )
    if seen:
        return "made", seen[0]
    assert reply.status == 400, reply.body
    return "refused", {reply.json()["error"]["detail"].split(": ")[0]}


def _delete(served: Served, path: str) -> Any:
    client = Client(served.port)
    try:
        return client.request("DELETE", path, b"", signed_headers(100, "DELETE", path, b""))
    finally:
        client.close()


def _context(call: Any) -> Outcome:
    """``call(ctx)`` on a fresh backtest context of the same scenario."""
    sim = Simulation(parse_scenario(scenario_doc(), "ctx.json"), clock="virtual", start=False)
    seen: list[Any] = []

    def submit(cmd: Any, at: int) -> Any:
        seen.append(cmd)
        return sim.apply(cmd, at)

    ctx = Context(Harness(sim.venue, None, 100, submit=submit), sim.scenario)  # type: ignore[arg-type]  # no runner: nothing runs
    refused: ProblemError | None = None
    try:
        call(ctx)
    except ProblemError as problem:
        refused = problem
    if seen:  # a refusal after the command was made is the venue's (404, 409 ...), not the intake's
        return "made", seen[0]
    assert refused is not None and refused.status == 400, refused
    return "refused", {refused.detail.split(": ")[0]}


def _problems(doc: dict[str, Any]) -> list[str]:
    try:
        parse_scenario(doc, "events.json")
    except ScenarioError as error:
        return [f"{path}: {reason}" for _, path, reason in error.problems]
    return []


def _scenario(event: dict[str, Any], keys: dict[str, str]) -> Outcome:
    """The command a scenario event makes, or the intake's fields its problems name."""
    doc = scenario_doc(events=[{"at": "+1", **event}])
    try:
        scenario = parse_scenario(doc, "events.json")
    except ScenarioError as error:
        fields = set()
        for _, path, _reason in error.problems:
            rest = path.removeprefix("$.events[0]").removeprefix(".")
            key, bracket, index = rest.partition("[")
            # the rule "a modify names its order" is the event's, not one key's (docs/scenarios.md)
            fields.add(keys[key] + bracket + index if key else ORDER_NAMED.field)
        return "refused", fields
    ((_, cmd),) = scenario.events
    return "made", cmd


def _agree(http: Outcome, ctx: Outcome | None, scenario: Outcome) -> None:
    hypothesis.event(http[0] + (" " + ",".join(sorted(http[1])) if http[0] == "refused" else ""))
    if ctx is not None:
        assert ctx == http, (ctx, http)
    if http[0] == "made":
        assert scenario == http, (scenario, http)
    else:
        (field,) = http[1]
        assert scenario[0] == "refused" and field in scenario[1], (scenario, http)


GOOD_DECIMAL = st.sampled_from(["1", "0.5", "49000.00", "50000", "0.0001", "1" * 40])
BAD_TEXT = st.sampled_from(["", "x", "-1", "1.", "01", "1\n", "1" * 41, "0.1234567891", "ALO", "buy", "0" * 20])
BAD_ARRAY = st.sampled_from([["ALO", "ALO"], ["NOPE"], "ALO", [1]])


def _fields(
    good: dict[str, st.SearchStrategy[Any]], optional: set[str], bad: dict[str, st.SearchStrategy[Any]] | None = None
) -> st.SearchStrategy[dict[str, Any]]:
    """A good value for every field (an ``optional`` one may be absent: None), then none, one or two of
    them made bad (``bad``, else :data:`BAD_TEXT`): most examples are taken, the rest refused."""

    @st.composite
    def build(draw: st.DrawFn) -> dict[str, Any]:
        fields = {name: draw(st.none() | g) if name in optional else draw(g) for name, g in good.items()}
        for name in draw(st.lists(st.sampled_from(sorted(good)), max_size=2, unique=True)):
            fields[name] = draw((bad or {}).get(name, BAD_TEXT))
        return fields

    return build()


ORDER_FIELDS = _fields(
    {
        "side": st.sampled_from(["BUY", "SELL"]),
        "type": st.sampled_from(["LIMIT", "MARKET"]),
        "qty": GOOD_DECIMAL,
        "price": GOOD_DECIMAL,
        "tif": st.sampled_from(["GTC", "IOC"]),
        "flags": st.lists(st.just("USE_AGGRESSIVE_PRICING"), max_size=1),
        "exec_inst_flags": st.lists(st.sampled_from(["ALO", "AON"]), max_size=2, unique=True),
        "stp": st.sampled_from(["NONE", "CANCEL_BOTH", "INVALID"]),
        "hold_fee_rate": st.sampled_from(["0.002", "0", "2", "0.1234567890"]),
        "external_id": st.sampled_from(["e-1", "6f1c2b3a-4d5e-4f60-8a7b-9c8d7e6f5a4b", "x" * 18]),
        "msg_id": st.sampled_from(["", "m", "a" * 256]),
        "parent_id": st.sampled_from(["0", "7", "9" * 19]),
    },
    optional={"price", "tif", "flags", "exec_inst_flags", "stp", "hold_fee_rate", "external_id", "msg_id", "parent_id"},
    bad={"flags": BAD_ARRAY, "exec_inst_flags": BAD_ARRAY, "msg_id": st.sampled_from(["a" * 257, "x"])},
)
SETTLED = settings(
    max_examples=100,
    deadline=None,
    derandomize=True,
    database=None,
    suppress_health_check=[HealthCheck.too_slow],
)


@SETTLED
@given(fields=ORDER_FIELDS)
@example(fields={"side": "BUY", "type": "LIMIT", "qty": "1", **dict.fromkeys(("price", "tif", "flags",
         "exec_inst_flags", "stp", "hold_fee_rate", "external_id", "msg_id", "parent_id"))})  # fmt: skip
def test_an_order_is_the_same_command_from_every_caller(served: Served, fields: dict[str, Any]) -> None:
    given_ = {k: v for k, v in fields.items() if v is not None}
    external = given_.pop("external_id", None)
    body = {"info": {"client_id": "100", "instrument_id": "1", **given_}}
    if external is not None:
        body["external_id"] = external
    http = _http(served, "POST", "/v1/cefi/orders", body)
    ctx = _context(lambda c: c.place_order("1", **fields))
    event = {"type": "order", "client": "alice", "instrument": "BTC-USD"}
    event.update({_key(ORDER_KEYS, "info." + k): v for k, v in given_.items()})
    if external is not None:
        event["external_id"] = external
    _agree(http, ctx, _scenario(event, ORDER_KEYS))


def _key(keys: dict[str, str], field: str) -> str:
    """The event's own name for the intake's ``field``."""
    return next(k for k, f in keys.items() if f == field)


MODIFY_FIELDS = _fields(
    {
        "new_qty": GOOD_DECIMAL,
        "new_price": GOOD_DECIMAL,
        "id": st.sampled_from(["5", "1" * 19]),
        "external_id": st.sampled_from(["e-1", "6f1c2b3a-4d5e-4f60-8a7b-9c8d7e6f5a4b"]),
        "new_type": st.just("MARKET"),
        "msg_id": st.sampled_from(["", "m"]),
        "parent_id": st.sampled_from(["0", "7"]),
        "prev_modify": st.sampled_from(["", "p"]),
    },
    optional={"new_price", "id", "external_id", "new_type", "msg_id", "parent_id", "prev_modify"},
)


@SETTLED
@given(fields=MODIFY_FIELDS)
@example(fields={"new_qty": "1", "new_price": None, "id": "5", "external_id": None, "new_type": None,
         "msg_id": None, "parent_id": None, "prev_modify": None})  # fmt: skip
def test_a_modify_is_the_same_command_from_every_caller(served: Served, fields: dict[str, Any]) -> None:
    given_ = {k: v for k, v in fields.items() if v is not None}
    top = {k: given_.pop(k) for k in ("id", "external_id") if k in given_}
    event = {"type": "modify", "client": "alice", **{_key(MODIFY_KEYS, k): v for k, v in top.items()}}
    event.update({_key(MODIFY_KEYS, "info." + k): v for k, v in given_.items()})
    scenario = _scenario(event, MODIFY_KEYS)
    http = _http(served, "PATCH", "/v1/cefi/orders", {**top, "info": {"client_id": "100", **given_}})
    if "new_price" in given_ or given_.get("new_type") == "MARKET":
        _agree(http, _context(lambda c: c.modify_order(**fields)), scenario)
        return
    # the one difference, documented: the interface wants new_price unless the order goes MARKET, a
    # scenario's modify without one keeps the order's price: the same fields with a price say the rest
    assert http[0] == "refused"
    priced = _http(
        served, "PATCH", "/v1/cefi/orders", {**top, "info": {"client_id": "100", **given_, "new_price": "1"}}
    )
    if priced[0] == "made":
        priced = ("made", replace(priced[1], new_price=None))
    _agree(priced, None, scenario)


#: references as a path segment can carry them (no "/", and no "." or ".." segment, which a URL resolves)
REFS = st.one_of(
    st.sampled_from(
        ["1", "1" * 19, "1" * 20, "e-1", "12\n", "a b", "0", "x" * 19, "6f1c2b3a-4d5e-4f60-8a7b-9c8d7e6f5a4b"]
    ),
    st.from_regex(r"[A-Za-z0-9\-_.~ !]{1,20}", fullmatch=True).filter(lambda ref: ref not in (".", "..")),
)


@SETTLED
@given(ref=REFS)
def test_a_cancel_is_the_same_command_from_every_caller(served: Served, ref: str) -> None:
    http = _http(served, "DELETE", "/v1/cefi/orders/" + quote(ref, safe=""))
    ctx = _context(lambda c: c.cancel_order(ref))
    _agree(http, ctx, _scenario({"type": "cancel", "client": "alice", "ref": ref}, {"ref": "ref_id"}))


TRANSFER_FIELDS = _fields(
    {
        "amount": st.sampled_from(["1", "0.25", "100.10"]),
        "type": st.sampled_from(["DEPOSIT", "WITHDRAW"]),
        "platform": st.sampled_from(["FIAT", "CRYPTO"]),
    },
    optional=set(),
    bad={"amount": st.sampled_from(["0", "1.001", "-1", "x"]), "platform": st.just("FIAT")},
)


@SETTLED
@given(fields=TRANSFER_FIELDS)
def test_a_transfer_is_the_same_command_over_http_and_from_a_scenario(served: Served, fields: dict[str, Any]) -> None:
    """(The strategy's context has no transfers.) Full instructions: a scenario's may leave some out."""
    instructions = FIAT if fields["platform"] == "FIAT" else {"address": "addr", "network": "net"}
    request = {"asset_id": "2", "client_id": "100", **fields, "instructions": instructions}
    http = _http(served, "POST", "/v1/cefi/transfers", {"request": request})
    event = {"type": "transfer", "client": "alice", "asset": "USD", "instructions": instructions}
    event.update({_key(TRANSFER_KEYS, "request." + k): v for k, v in fields.items()})
    _agree(http, None, _scenario(event, TRANSFER_KEYS))


@SETTLED
@given(
    faults=st.dictionaries(
        st.sampled_from(list(SETTINGS)),
        st.one_of(st.integers(-100_000, 4_000_000), st.sampled_from([86_400, 86_401, -86_401, 3_600_000, 3_600_001])),
    )
)
def test_venue_faults_are_the_same_settings_over_http_and_from_a_scenario(
    served: Served, faults: dict[str, int]
) -> None:
    """(A scenario's are JSON integers; the control plane also takes their digits as text.)"""
    try:
        reply = _post(served, "/_sim/faults/venue", faults, signed=False)
    finally:
        _post(served, "/_sim/faults/venue", {}, signed=False)  # a skew would move the signing window
    problems = _problems(scenario_doc(events=[{"at": "+1", "type": "venue_faults", **faults}]))
    if reply.status == 200:
        assert problems == []
        scenario = parse_scenario(scenario_doc(events=[{"at": "+1", "type": "venue_faults", **faults}]), "f.json")
        ((_, record),) = scenario.events
        assert isinstance(record, SideStateRecord) and record.values == list(reply.json().values())
    else:
        field = reply.json()["detail"].split(": ")[0]
        assert any(p.startswith(f"$.events[0].{field}: ") for p in problems), (problems, reply.body)


def test_the_scenario_formats_keys_are_the_intakes_fields() -> None:
    """Each event kind's required and optional keys are its intake's fields under the event's names."""
    for kind, keys, table in (
        ("order", ORDER_KEYS, intake.POST_ORDER),
        ("modify", MODIFY_KEYS, SCRIPTED_MODIFY),
        ("transfer", TRANSFER_KEYS, intake.POST_TRANSFER),
    ):
        required, optional = EVENT_KEYS[kind]
        fields = dict(_leaves(table))
        assert set(keys) == set(required) | set(optional), kind
        assert {keys[k] for k in required} == {name for name, f in fields.items() if f.required} - {
            "request.instructions"
        }
        assert {keys[k] for k in keys} <= set(fields), kind


def _leaves(table: Any, prefix: str = "") -> Iterator[tuple[str, F]]:
    for name, f in table.items():
        if f.kind == "object" and f.fields:
            yield from _leaves(f.fields, prefix + name + ".")
        else:
            yield prefix + name, f


# --- the OpenAPI document's rules across fields are the intake's --------------------------------------

RULE_CASES = [
    ("OrderInfo", {k: v for k, v in INFO.items() if k != "price"}, "price", "50000.00", PRICE_FOR_LIMIT),
    ("ModifyInfo", {"client_id": "100", "new_qty": "1"}, "new_price", "2.00", intake.NEW_PRICE_UNLESS_MARKET),
    ("PatchOrderRequest", {"info": {"client_id": "100", "new_qty": "1", "new_type": "MARKET"}}, "id", "5", ORDER_NAMED),
]


@pytest.mark.parametrize(("schema", "body", "field", "value", "rule"), RULE_CASES, ids=[c[0] for c in RULE_CASES])
def test_each_rule_of_the_intake_is_a_rule_of_the_document(
    schema: str, body: dict[str, Any], field: str, value: str, rule: Any
) -> None:
    """A body that breaks only the rule is refused by both; given the field, accepted by both; and every
    rule of the intake's tables is one of these cases."""
    document_schema = DOCUMENT["components"]["schemas"][schema]
    table = {"OrderInfo": intake.ORDER_INFO, "ModifyInfo": intake.MODIFY_INFO, "PatchOrderRequest": intake.PATCH_ORDER}[
        schema
    ]
    assert rule in table.rules
    broken = problem_in(body, table)
    assert broken is not None and broken.rule is rule
    assert list(errors(body, document_schema))
    fixed = {**body, field: value}
    assert problem_in(fixed, table) is None
    assert not list(errors(fixed, document_schema))
    if "other" in rule.__dataclass_fields__:  # the exemption holds in both: a MARKET order, or a conversion to one
        exempt = {**body, rule.other: "MARKET"}
        assert problem_in(exempt, table) is None and not list(errors(exempt, document_schema))


def test_every_rule_of_the_interfaces_tables_is_in_the_document() -> None:
    tables = [intake.ORDER_INFO, intake.MODIFY_INFO, intake.PATCH_ORDER]
    assert {rule for table in tables for rule in table.rules} == {case[4] for case in RULE_CASES}
