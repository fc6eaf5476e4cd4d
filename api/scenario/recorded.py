"""The ``recorded`` section: instruments whose market is a recording (``docs/recorded.md``).

Contract: ``recorded_source`` returns a :class:`~api.recorded.source.RecordedSpec` or None after
reporting problems. The recording is read once here with every rule of the loader (streaming), so a
scenario naming bad data is refused with the data file's own ``file:line: reason`` under the item's
``file`` path. Relative file names are relative to the scenario file.
"""

from __future__ import annotations

from pathlib import Path

from ..recorded.format import RecordingError
from ..recorded.source import FORMATS, QUEUE_MODELS, RecordedSpec, scan
from .document import _join, _kind
from .keys import RECORDED_KEYS
from .parser import _ParserBase

MAX_SPEED_DECIMALS = 6


class _RecordedSections(_ParserBase):
    """``recorded`` items."""

    def recorded_source(self, value: object, path: str) -> RecordedSpec | None:
        # items are numbered in file order: the index names the item's counterparty client
        index = self.recorded_seen = getattr(self, "recorded_seen", -1) + 1
        taken: set[int] = self.__dict__.setdefault("recorded_instruments", set())
        d = self.obj(value, path, RECORDED_KEYS)
        if d is None:
            return None
        inst = self.get(d, "instrument", path, self.instrument_ref)
        files = self.get(d, "file", path, self.recorded_files)
        fmt = self.get(d, "format", path, lambda v, p: self.enum(v, p, FORMATS), default="cefisim")
        offset = self.get(d, "offset", path, lambda v, p: self.seconds(v, p, positive=False), default=0)
        speed = self.get(d, "speed", path, self.speed, default=(1, 1))
        model = self.get(d, "queue_model", path, lambda v, p: self.enum(v, p, QUEUE_MODELS), default="risk_averse")
        power_n = self.get(d, "power_n", path, lambda v, p: self.integer(v, p, 1, 16), default=3)
        impact = self.get(d, "impact", path, self.boolean, default=True)
        feed = self.get(d, "feed_latency_ms", path, self.millis, default=0)
        order_latency = self.get(d, "order_latency_ms", path, self.latency_range)
        self.get(d, "note", path, self.string)
        if inst is not None and inst.id in taken:
            self.err(_join(path, "instrument"), f"{inst.symbol} already has a recorded source")
            return None
        if files is not None and fmt == "cefisim" and len(files) != 1:
            self.err(_join(path, "file"), "the cefisim format is one file")
            return None
        if None in (inst, files, fmt, offset, speed, model, power_n, impact, feed) or self.problems:
            return None
        taken.add(inst.id)
        try:
            count, first, last = scan(files, fmt, inst)
        except RecordingError as exc:
            self.err(_join(path, "file"), str(exc))
            return None
        if not count:
            self.err(_join(path, "file"), "the recording holds no events")
            return None
        return RecordedSpec(
            index=index, instrument_id=inst.id, files=files, fmt=fmt, offset_ns=offset, speed=speed,
            queue_model=model, power_n=power_n, impact=impact, feed_latency_ns=feed, first_ts=first, last_ts=last,
            order_latency=order_latency,
        )

    def latency_range(self, value: object, path: str) -> tuple[int, int] | None:
        """Milliseconds, or ``{"min": ms, "max": ms}`` for a seeded uniform draw per command."""
        if not isinstance(value, dict):
            ns = self.millis(value, path)
            return None if ns is None else (ns, ns)
        d = self.obj(value, path, (("min", "max"), ()))
        assert d is not None
        lo = self.get(d, "min", path, self.millis)
        hi = self.get(d, "max", path, self.millis)
        if lo is None or hi is None:
            return None
        if hi < lo:
            self.err(_join(path, "max"), "must be at least min")
            return None
        return lo, hi

    def recorded_latency(
        self, recorded: list[RecordedSpec], latency: tuple[int, int, int] | None
    ) -> tuple[int, int, int] | None:
        """The venue's order latency: ``settings.latency``, or a recorded source's constant one."""
        for spec in recorded:
            if spec.order_latency is None or spec.order_latency[0] != spec.order_latency[1]:
                continue
            if latency is not None:
                self.err(f"$.recorded[{spec.index}].order_latency_ms", "the order latency is already set "
                         "(settings.latency or another recorded source): set it once")
                continue
            latency = (spec.order_latency[0],) * 3
        return latency

    def recorded_files(self, value: object, path: str) -> tuple[str, ...] | None:
        names = value if isinstance(value, list) else [value]
        if not names or not all(isinstance(n, str) and n for n in names):
            self.err(path, f"must be a file name or a non-empty array of them, got {_kind(value)}")
            return None
        here = Path(self.source).parent
        return tuple(str(here / n) for n in names)

    def speed(self, value: object, path: str) -> tuple[int, int] | None:
        text = self.decimal(value, path)
        if text is None:
            return None
        whole, _, frac = text.partition(".")
        if len(frac) > MAX_SPEED_DECIMALS or int(whole + frac) == 0:
            self.err(path, f"must be greater than 0 with at most {MAX_SPEED_DECIMALS} decimals")
            return None
        return int(whole + frac), 10 ** len(frac)
