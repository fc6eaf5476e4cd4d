"""Agents and the runner: deterministic, engine-time only, through ordinary commands."""

from __future__ import annotations

import random
from itertools import pairwise
from pathlib import Path

import pytest

from cefisim.api.formats.scenario import parse_scenario
from cefisim.engine.commands import (
    AdvanceClock,
    Command,
    PaperFunds,
    PlaceOrder,
    RequestTransfer,
    SetLatency,
)
from cefisim.engine.events import FundsEvent, TransferEvent
from cefisim.engine.simulation.agents import (
    MarketMaker,
    MarketMakerSpec,
    NoiseTaker,
    NoiseTakerSpec,
    PriceSeries,
    RandomWalk,
    agent_seed,
    below,
    exponential,
)
from cefisim.engine.simulation.scenario import ScenarioRunner
from cefisim.engine.venue import Result, Venue
from tests.api.formats.scenario.replay_support import ROOT, full_doc

S = 10**9


def base_doc(**extra: object) -> dict:
    doc = full_doc()
    doc.update(events=[], agents=[], settings={})
    doc.update(extra)
    return doc


def test_agent_seeds_are_stable() -> None:
    assert agent_seed(7, 0) == agent_seed(7, 0)
    assert len({agent_seed(seed, i) for seed in range(5) for i in range(5)}) == 25
    assert agent_seed(7, 0) == 18394988130364260816  # pinned: changing it changes every golden replay


def test_exponential_is_exact_and_has_mean_one() -> None:
    rng = random.Random(1)
    draws = [exponential(rng) for _ in range(40_000)]
    assert abs(sum(draws) / len(draws) - 1) < 0.02
    assert abs(sum(d > 1 for d in draws) / len(draws) - 0.36788) < 0.01  # P(X > 1) = 1/e
    assert min(draws) >= 0
    again = random.Random(1)
    assert [exponential(again) for _ in range(5)] == draws[:5]


@pytest.mark.parametrize("n", [1, 2, 3, 7, 10**9, 5000, 2**31 + 1])
def test_below_draws_what_randrange_draws(n: int) -> None:
    """The agents' streams stay those of randrange(n) on Python 3.11, whatever a later Python does."""
    mine, ref = random.Random(n), random.Random(n)
    assert [below(mine, n) for _ in range(500)] == [ref.randrange(n) for _ in range(500)]


def test_random_walk_moves_in_steps_above_its_floor() -> None:
    spec = MarketMakerSpec(900, 1, RandomWalk(start=1000, step=7, vol=3), S, 1, 2, 1, 1)
    mm = MarketMaker(spec, random.Random(3))
    mids = [mm.mid_at(i * S) for i in range(500)]
    assert mids[0] == 1000
    assert all((b - a) % 7 == 0 and abs(b - a) <= 21 for a, b in pairwise(mids))
    assert len(set(mids)) > 5
    floored = MarketMaker(MarketMakerSpec(900, 1, RandomWalk(1000, 7, 3, floor=990), S, 1, 2, 1, 1), random.Random(3))
    mids = [floored.mid_at(i * S) for i in range(500)]
    assert min(mids) == 990


def test_price_series_holds_its_last_price() -> None:
    spec = MarketMakerSpec(900, 1, PriceSeries((100, 200, 300), 2 * S), S, 1, 2, 1, 1, start_ns=10 * S)
    mm = MarketMaker(spec, random.Random(0))
    assert [mm.mid_at(t * S) for t in (10, 11, 12, 14, 15, 99)] == [100, 100, 200, 300, 300, 300]


def mm_doc(**agent: object) -> dict:
    spec = {
        "type": "market_maker",
        "client": "mm",
        "instrument": "BTC-USD",
        "interval": "1",
        "levels": 2,
        "spread": "2.00",
        "spacing": "1.00",
        "qty": "0.1",
        "prices": ["30000.00"],
        "every": "60",
    }
    spec.update(agent)
    return base_doc(agents=[spec])


def test_market_maker_keeps_an_unchanged_ladder_and_pulls_it_at_its_end() -> None:
    s = parse_scenario(mm_doc(end="+5"), "t.json")
    venue = s.build_venue()
    runner = s.runner(venue)
    first = runner.run_until(s.start_ns)
    assert [r.order.status for r in first] == ["ACTIVE"] * 4
    assert [(o.side, o.price) for o in venue.books[1].resting_orders()] == [
        ("BUY", 2999900),
        ("SELL", 3000100),
        ("BUY", 2999800),
        ("SELL", 3000200),
    ]
    later = runner.run_until(s.start_ns + 4 * S)
    assert [type(r).__name__ for r in later] == ["Result"] and not later[0].events  # only the clock moved
    end = runner.run_until(s.start_ns + 5 * S)
    assert len(end) == 4 and all(r.events[0].status == "CANCELED" for r in end)  # type: ignore[union-attr]
    assert runner.next_time() is None and not venue.books[1].resting_orders()


def test_market_maker_replaces_a_partly_filled_ladder() -> None:
    doc = mm_doc()
    doc["events"] = [
        {
            "at": "+0.5",
            "type": "order",
            "client": "bob",
            "instrument": "BTC-USD",
            "side": "BUY",
            "order_type": "MARKET",
            "qty": "0.05",
        }
    ]
    s = parse_scenario(doc, "t.json")
    venue = s.build_venue()
    runner = s.runner(venue)
    runner.run_until(s.start_ns + S)
    asks = [o for o in venue.books[1].resting_orders() if o.side == "SELL"]
    assert [(o.price, o.qty, o.executed) for o in asks] == [(3000100, 1000, 0), (3000200, 1000, 0)]
    assert asks[0].id > 4  # the ladder was placed again


def test_market_maker_skips_while_halted_and_posts_only() -> None:
    doc = mm_doc(post_only=True)
    doc["events"] = [
        {
            "at": "+0.5",
            "type": "order",
            "client": "bob",
            "instrument": "BTC-USD",
            "side": "SELL",
            "order_type": "LIMIT",
            "qty": "0.5",
            "price": "29999.00",
            "note": "fills the best bid, rests 0.4",
        },
        {"at": "+0.5", "type": "instrument_status", "instrument": "BTC-USD", "status": "HALTED"},
        {"at": "+1.5", "type": "instrument_status", "instrument": "BTC-USD", "status": "ACTIVE"},
    ]
    s = parse_scenario(doc, "t.json")
    runner = s.runner(s.build_venue())
    runner.run_until(s.start_ns + S // 2)
    halted = list(runner.steps(s.start_ns + S))
    assert [type(c).__name__ for _, c, _ in halted] == ["AdvanceClock"]  # halted at +1: no requote
    steps = list(runner.steps(s.start_ns + 2 * S))
    placed = [r for _, c, r in steps if isinstance(c, PlaceOrder)]
    # at +2 the new best bid (29999.00) would trade with bob's ask: ALO rejects it, the rest is placed
    assert [r.reject.value if r.reject else "OK" for r in placed] == ["ALO_WOULD_TRADE", "OK", "OK", "OK"]


def test_noise_taker_arrivals_and_skips() -> None:
    spec = NoiseTakerSpec(101, 1, mean_interval_ns=S, qty_min=10, qty_max=20, market_rate=0, through=5)
    s = parse_scenario(base_doc(), "t.json")
    venue = s.build_venue()
    taker = NoiseTaker(spec, random.Random(5))
    times = []
    sent: list = []

    def submit(cmd: Command, at: int) -> Result:
        sent.append((cmd, at))
        return venue.submit(cmd, at)

    for _ in range(2000):
        now = taker.next_time()
        assert now is not None
        times.append(now)
        taker.act(venue, now, submit)
    assert sent == []  # an empty book: a marketable limit has nothing to take
    gaps = [b - a for a, b in pairwise(times)]
    assert min(gaps) >= 1 and abs(sum(gaps) / len(gaps) / S - 1) < 0.06


def test_noise_taker_orders_take_liquidity() -> None:
    doc = mm_doc()
    doc["agents"].append(
        {
            "type": "noise_taker",
            "client": "bob",
            "instrument": "BTC-USD",
            "mean_interval": "0.2",
            "qty_min": "0.001",
            "qty_max": "0.01",
            "market_fraction": "0.5",
            "through": "0.50",
            "end": "+30",
        }
    )
    doc["end"] = "+30"
    s = parse_scenario(doc, "t.json")
    venue = s.build_venue()
    steps = list(s.runner(venue).steps(s.end_ns))
    takes = [(c, r) for _, c, r in steps if isinstance(c, PlaceOrder) and c.client_id == 101]
    assert len(takes) > 50
    assert {c.type for c, _ in takes} == {"LIMIT", "MARKET"} and {c.side for c, _ in takes} == {"BUY", "SELL"}
    assert all(c.tif == "IOC" for c, _ in takes if c.type == "LIMIT")
    assert all(r.order.executed > 0 for _, r in takes)  # every one traded
    venue.check_invariants()


def test_runner_orders_events_before_agents_and_moves_the_clock() -> None:
    doc = mm_doc()
    doc["settings"] = {"latency": {"cancel_ms": 100}}
    doc["events"] = [
        {"at": "+0", "type": "latency", "cancel_ms": 0},
        {"at": "+2.25", "type": "cancel", "client": "mm", "ref": "1"},
    ]
    s = parse_scenario(doc, "t.json")
    journal: list = []
    venue = s.build_venue()
    assert venue.latency_cancel_ns == 100_000_000  # the settings are the venue's as it is built

    def submit(cmd: Command, at: int) -> Result:  # the runtime's part: journal, then submit
        at = venue.applies_at(cmd, at)
        journal.append((at, cmd))
        return Venue.submit(venue, cmd, at)

    def around(cmd: Command, at: int | None = None) -> Result:
        raise AssertionError(f"{cmd} submitted around the submit function the runner was handed")

    venue.submit = around  # type: ignore[method-assign]
    runner = s.runner(venue)
    assert runner.next_time() == s.start_ns
    steps = list(runner.steps(s.start_ns + 2500 * 10**6, submit))
    kinds = [type(c).__name__ for _, c, _ in steps]
    assert kinds[:2] == ["SetLatency", "PlaceOrder"]  # the event at start before the agent at start
    assert kinds[-2:] == ["CancelOrder", "AdvanceClock"] and venue.clock.now == s.start_ns + 2500 * 10**6
    assert [at for at, _, _ in steps] == sorted(at for at, _, _ in steps)
    assert journal[0] == (s.start_ns, SetLatency(0, 0, 0))
    assert journal[-1] == (s.start_ns + 2500 * 10**6, AdvanceClock(s.start_ns + 2500 * 10**6))
    assert [cmd for _, cmd in journal] == [c for _, c, _ in steps]
    assert steps[-2][2].ok and steps[-2][2].order.status == "CANCELED"  # the ladder was constant until then
    assert runner.next_time() == s.start_ns + 3 * S
    # the market maker sees its ladder broken and replaces it at its next interval
    replaced = [c for _, c, _ in runner.steps(s.start_ns + 3 * S, submit)]
    assert journal[-len(replaced) :] == [(s.start_ns + 3 * S, c) for c in replaced]
    assert [type(c).__name__ for c in replaced] == ["CancelOrder"] * 3 + ["PlaceOrder"] * 4


def test_run_to_end_needs_a_limit_when_an_agent_never_ends() -> None:
    s = parse_scenario(mm_doc(), "t.json")
    runner = s.runner(s.build_venue())
    assert not runner.bounded() and runner.end_time() is None
    with pytest.raises(ValueError, match="no end"):
        runner.run_to_end()
    assert runner.run_to_end(s.start_ns + 2 * S)
    bounded = parse_scenario(mm_doc(end="+3"), "t.json")
    runner = bounded.runner(bounded.build_venue())
    runner.run_to_end()
    assert runner.venue.clock.now == bounded.start_ns + 3 * S and runner.next_time() is None


def test_every_event_type_runs() -> None:
    s = parse_scenario(full_doc(), str(ROOT / "x.json"))
    venue = s.build_venue()
    steps = list(s.runner(venue).steps(s.end_ns))
    venue.check_invariants()
    by_type: dict[str, list] = {}
    for at, cmd, result in steps:
        by_type.setdefault(type(cmd).__name__, []).append((at, cmd, result))
    assert set(by_type) >= {
        "PlaceOrder",
        "ModifyOrder",
        "CancelOrder",
        "RequestTransfer",
        "SetInstrumentStatus",
        "SetLatency",
        "SetSettlementDelay",
        "AdvanceClock",
        "PaperFunds",
        "SetClientInfo",
    }
    # the deposit waits for the settlement delay set at +5 (500 ms)
    (deposit,) = [x for x in by_type["RequestTransfer"] if x[1].type == "DEPOSIT"]
    assert deposit[2].transfer.status == "COMPLETED"
    done = [
        e
        for _, _, res in steps
        for e in res.events
        if isinstance(e, TransferEvent) and e.transfer_id == deposit[2].transfer.id
    ]
    assert [e.status for e in done] == ["INITIALIZED", "COMPLETED"] and done[1].ts - done[0].ts >= 500_000_000
    funds = [e for _, c, res in steps if isinstance(c, PaperFunds) for e in res.events]
    assert [e.units for e in funds if isinstance(e, FundsEvent)] == [2 * 10**8, -(10**8)]
    assert venue.clients[101].self_trade_prevention == "CANCEL_BOTH"
    assert isinstance(steps[-1][1], AdvanceClock)
    withdraw = [x for x in by_type["RequestTransfer"] if x[1].type == "WITHDRAW"]
    assert isinstance(withdraw[0][1], RequestTransfer) and withdraw[0][1].instructions == (("address", "bc1q..."),)


def test_agents_are_handed_the_runners_own_submit_and_their_turns_time() -> None:
    """An agent submits through the submit the runner was given (no wrapper per turn or command), at
    the time of its turn; with ``on_step`` the runner wraps it once for the whole run."""
    s = parse_scenario(mm_doc(), "t.json")
    venue = s.build_venue()
    runner = s.runner(venue)
    maker = runner.agents[0]
    act = maker.act
    handed: list = []

    def watched(v: Venue, now: int, submit: object) -> None:
        handed.append((now, submit))
        act(v, now, submit)  # type: ignore[arg-type]

    maker.act = watched  # type: ignore[method-assign]
    made: list = []

    def submit(cmd: Command, at: int) -> Result:
        made.append((at, cmd))
        return venue.submit(cmd, at)

    runner.run(s.start_ns + 3 * S, submit=submit)
    assert len(handed) == 4 and all(given is submit for _, given in handed)
    turns = {now for now, _ in handed}
    assert made and all(at in turns for at, cmd in made if not isinstance(cmd, AdvanceClock))
    stepped: list = []
    runner.run(s.start_ns + 5 * S, lambda at, c, r: stepped.append(at), submit=submit)
    assert len(handed) == 6 and handed[-1][1] is handed[-2][1] is not submit  # one wrapper for the run
    assert stepped == [at for at, _ in made[-len(stepped) :]]


def test_two_runners_on_one_scenario_agree() -> None:
    s = parse_scenario(full_doc(), "x.json")
    runs = []
    for _ in range(2):
        venue = s.build_venue()
        runs.append([(at, c, list(r.events)) for at, c, r in s.runner(venue).steps(s.end_ns)])
    assert runs[0] == runs[1]
    other = ScenarioRunner(s.build_venue(), s.events, s.agents, s.seed + 1, random.Random)
    changed = [(at, c, list(r.events)) for at, c, r in other.steps(s.end_ns)]
    assert changed != runs[0]  # the seed matters


def test_run_steps_and_slices_submit_the_same() -> None:
    """``run`` with a callback, ``steps`` and a run in slices of engine time (the clock moved only at
    the end) make one and the same stream of submissions."""
    s = parse_scenario(full_doc(), "x.json")
    whole: list = []
    s.runner(s.build_venue()).run(s.end_ns, lambda at, c, r: whole.append((at, c, list(r.events))))
    assert len(whole) > 20 and isinstance(whole[-1][1], AdvanceClock)
    stepped = [(at, c, list(r.events)) for at, c, r in s.runner(s.build_venue()).steps(s.end_ns)]
    assert stepped == whole
    sliced: list = []
    runner = s.runner(s.build_venue())
    span = s.end_ns - s.start_ns
    for k in range(1, 8):
        runner.run(
            s.start_ns + span * k // 7, lambda at, c, r: sliced.append((at, c, list(r.events))), advance_clock=k == 7
        )
    assert sliced == whole


def test_loader_reads_series_relative_to_the_scenario(tmp_path: Path) -> None:
    (tmp_path / "mids.txt").write_text("30000.00\n30001.00\n")
    doc = mm_doc()
    del doc["agents"][0]["prices"]
    doc["agents"][0]["prices_file"] = "mids.txt"
    s = parse_scenario(doc, str(tmp_path / "s.json"))
    assert s.agents[0].path == PriceSeries((3000000, 3000100), 60 * S)
