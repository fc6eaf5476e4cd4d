"""The replay's event digest: one ``%`` format per event type writes ``repr(row(event))`` without
building the row, and ``cefisim replay``'s statistics fold their events in batches; both give the
bytes (and so the digests pinned in tests/api/formats/scenario) the row-by-row digest gave."""

from __future__ import annotations

import hashlib

from hypothesis import given, settings
from hypothesis import strategies as st

from cefisim.api.cli.replay import ReplayStats
from cefisim.engine.events import EVENT_TYPES, Event, TradeEvent, build_event, row
from cefisim.engine.journal import event_digest
from cefisim.engine.venue import Result

FIELD = st.one_of(
    st.integers(min_value=-(10**20), max_value=10**20),
    st.text(max_size=6),
    st.none(),
    st.booleans(),
    st.tuples(st.integers(), st.text(max_size=3)),
)


@st.composite
def events(draw: st.DrawFn, summed: bool = False) -> Event:
    """An event of any type with any values (``summed``: a trade's are integers, as the sums need)."""
    cls = draw(st.sampled_from(EVENT_TYPES))
    field = st.integers() if summed and cls is TradeEvent else FIELD
    return build_event(cls, tuple(draw(field) for _ in cls._fields))


def by_rows(evs: list[Event]) -> str:
    """The digest as it was first written: the repr of each event's row and a newline."""
    return hashlib.sha256("".join(f"{row(e)!r}\n" for e in evs).encode()).hexdigest()


@settings(max_examples=300, deadline=None)
@given(st.lists(events(), max_size=8))
def test_the_digest_is_the_repr_of_each_row(evs: list[Event]) -> None:
    assert event_digest(evs).hexdigest() == by_rows(evs)


def test_every_event_type_is_digested() -> None:
    for cls in EVENT_TYPES:  # the same values in every field: the kind and the kept fields tell them apart
        event = build_event(cls, (7,) * len(cls._fields))
        assert event_digest([event]).hexdigest() == by_rows([event])


@settings(max_examples=100, deadline=None)
@given(st.lists(st.lists(events(summed=True), max_size=5), max_size=12), st.integers(min_value=1, max_value=6))
def test_replay_stats_fold_in_batches_to_the_same_figures(commands: list[list[Event]], batch: int) -> None:
    stats = ReplayStats()
    stats.BATCH = batch
    trades: dict[int, list[int]] = {}
    for evs in commands:
        result = Result()
        result.events.extend(evs)
        stats.result(result)
        for e in evs:
            if type(e) is TradeEvent:
                slot = trades.setdefault(e.instrument_id, [0, 0, 0])
                slot[0] += 1
                slot[1] += e.lots
                slot[2] += e.quote_units
        # the figures read part-way are those of every command so far
        assert stats.events == sum(map(len, commands[: stats.commands]))
    everything = [e for evs in commands for e in evs]
    assert stats.commands == len(commands)
    assert stats.digest.hexdigest() == by_rows(everything)
    assert stats.trades == trades
