"""The ``recorded`` section: instruments whose market is a recording (``docs/recorded.md``).

Contract: ``recorded_source`` returns a :class:`~api.formats.recorded.source.RecordedSpec` or None after
reporting problems. The recording is read once here with every rule of the loader (streaming), so a
scenario naming bad data is refused with the data file's own ``file:line: reason`` under the item's
``file`` path. Relative file names are relative to the scenario file.
"""

from __future__ import annotations

from functools import partial

from cefisim.api.formats.recorded.format import RecordingError
from cefisim.api.formats.recorded.source import FORMATS, QUEUE_MODELS, RecordedSpec, scan
from cefisim.api.formats.scenario.document import join_path, kind_of
from cefisim.api.formats.scenario.format_keys import RECORDED_KEYS
from cefisim.api.formats.scenario.parser import Parser

MAX_SPEED_DECIMALS = 6


def recorded_source(parser: Parser, value: object, path: str) -> RecordedSpec | None:
    # items are numbered in file order: the index names the item's counterparty client
    parser.recorded_seen += 1
    index = parser.recorded_seen
    taken = parser.recorded_instruments
    d = parser.obj(value, path, RECORDED_KEYS)
    if d is None:
        return None
    inst = parser.get(d, "instrument", path, parser.instrument_ref)
    files = parser.get(d, "file", path, partial(recorded_files, parser))
    fmt = parser.get(d, "format", path, lambda v, p: parser.enum(v, p, FORMATS), default="cefisim")
    offset = parser.get(d, "offset", path, lambda v, p: parser.seconds(v, p, positive=False), default=0)
    speed = parser.get(d, "speed", path, partial(replay_speed, parser), default=(1, 1))
    model = parser.get(d, "queue_model", path, lambda v, p: parser.enum(v, p, QUEUE_MODELS), default="risk_averse")
    power_n = parser.get(d, "power_n", path, lambda v, p: parser.integer(v, p, 1, 16), default=3)
    impact = parser.get(d, "impact", path, parser.boolean, default=True)
    feed = parser.get(d, "feed_latency_ms", path, parser.millis, default=0)
    order_latency = parser.get(d, "order_latency_ms", path, partial(latency_range, parser))
    parser.get(d, "note", path, parser.string)
    if inst is not None and inst.id in taken:
        parser.err(join_path(path, "instrument"), f"{inst.symbol} already has a recorded source")
        return None
    if files is not None and fmt == "cefisim" and len(files) != 1:
        parser.err(join_path(path, "file"), "the cefisim format is one file")
        return None
    if None in (inst, files, fmt, offset, speed, model, power_n, impact, feed) or parser.problems:
        return None
    taken.add(inst.id)
    try:
        count, first, last = scan(files, fmt, inst)
    except RecordingError as exc:
        parser.err(join_path(path, "file"), str(exc))
        return None
    if not count:
        parser.err(join_path(path, "file"), "the recording holds no events")
        return None
    return RecordedSpec(
        index=index,
        instrument_id=inst.id,
        files=files,
        fmt=fmt,
        offset_ns=offset,
        speed=speed,
        queue_model=model,
        power_n=power_n,
        impact=impact,
        feed_latency_ns=feed,
        first_ts=first,
        last_ts=last,
        order_latency=order_latency,
    )


def latency_range(parser: Parser, value: object, path: str) -> tuple[int, int] | None:
    """Milliseconds, or ``{"min": ms, "max": ms}`` for a seeded uniform draw per command."""
    if not isinstance(value, dict):
        ns = parser.millis(value, path)
        return None if ns is None else (ns, ns)
    d = parser.obj(value, path, (("min", "max"), ()))
    assert d is not None
    lo = parser.get(d, "min", path, parser.millis)
    hi = parser.get(d, "max", path, parser.millis)
    if lo is None or hi is None:
        return None
    if hi < lo:
        parser.err(join_path(path, "max"), "must be at least min")
        return None
    return lo, hi


def recorded_latency(
    parser: Parser, recorded: list[RecordedSpec], latency: tuple[int, int, int] | None
) -> tuple[int, int, int] | None:
    """The venue's order latency: ``settings.latency``, or a recorded source's constant one."""
    for spec in recorded:
        if spec.order_latency is None or spec.order_latency[0] != spec.order_latency[1]:
            continue
        if latency is not None:
            parser.err(
                f"$.recorded[{spec.index}].order_latency_ms",
                "the order latency is already set (settings.latency or another recorded source): set it once",
            )
            continue
        latency = (spec.order_latency[0],) * 3
    return latency


def recorded_files(parser: Parser, value: object, path: str) -> tuple[str, ...] | None:
    names = value if isinstance(value, list) else [value]
    files = [n for n in names if isinstance(n, str) and n]
    if not names or len(files) != len(names):
        parser.err(path, f"must be a file name or a non-empty array of them, got {kind_of(value)}")
        return None
    paths = [parser.file(n, path if not isinstance(value, list) else join_path(path, i)) for i, n in enumerate(files)]
    return tuple(str(p) for p in paths if p is not None) if None not in paths else None


def replay_speed(parser: Parser, value: object, path: str) -> tuple[int, int] | None:
    text = parser.decimal(value, path)
    if text is None:
        return None
    whole, _, frac = text.partition(".")
    if len(frac) > MAX_SPEED_DECIMALS or int(whole + frac) == 0:
        parser.err(path, f"must be greater than 0 with at most {MAX_SPEED_DECIMALS} decimals")
        return None
    return int(whole + frac), 10 ** len(frac)
