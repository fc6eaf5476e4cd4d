"""``cefisim replay FILE [--journal OUT] [--until ISO|+seconds] [--quiet] [--from-journal J]``: no HTTP.

Runs the scenario's events and agents on a fresh venue as fast as the CPU allows, up to the
scenario's ``end`` (or ``--until``), and prints a summary on stdout: commands, events, trades, volume
per instrument, the top of every book and the sha256 digest of every event in order
(``engine.journal.event_digest``). The summary holds only engine data, so two runs of one file print
the same summary; the wall time goes to stderr. The run is the server's runtime on a virtual clock
(``api/runtime/simulation.py``) with nothing but the scenario submitting: with ``--journal OUT`` it
writes the journal ``cefisim serve --journal`` writes (``api/runtime/journal_file.py``), which a server
goes on from and ``--from-journal OUT`` reads back; two runs give byte-identical files. ``--quiet``
prints the digest line only. A progress bar (``api/cli/common/progress.py``) is drawn on stderr only when stderr
is a terminal and the run takes more than a couple of seconds.

``--from-journal J`` replays what ``cefisim serve --journal J`` (or ``cefisim replay --journal J``)
recorded for the same scenario, the way the server rebuilds itself on restart (the scenario
regenerates its own commands, the external ones are re-applied at their recorded times), and prints
the same summary; ``commands`` then counts the external commands.

Exit status: 0 done, 2 a scenario or usage problem, or a ``--from-journal`` journal that is missing,
empty or damaged (one line naming the file, the record and its byte offset; never a traceback), 1 the
journal file could not be written.
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path
from typing import IO, Any

from cefisim.api.cli.common.cli_env import examples
from cefisim.api.cli.common.progress import Progress
from cefisim.api.formats.scenario import Scenario, format_time, parse_time
from cefisim.api.formats.scenario.command import parse_and_load
from cefisim.api.runtime.journal_file import JournalError, JournalWriteError
from cefisim.api.runtime.simulation import Simulation
from cefisim.engine import queries
from cefisim.engine.events import Event, TradeEvent
from cefisim.engine.journal import event_digest
from cefisim.engine.venue import Result, Venue
from cefisim.engine.vocabulary import Side

BUY = Side.BUY
SELL = Side.SELL

TOP_LEVELS = 3


class ReplayStats:
    """What the summary reports, gathered from the results as they come.

    Per command it only counts and holds the events: every :data:`BATCH` events they are folded into
    the digest and the trade sums at once (one join and one hash update per batch, the same bytes as
    one per command), so memory stays flat; reading ``digest`` or ``trades`` folds what is held."""

    #: events held before they are folded: enough to amortise the fold, small enough to stay in cache
    BATCH = 4096

    def __init__(self) -> None:
        self.commands = 0
        self._held: list[Event] = []
        self._folded = 0  # events folded so far
        self._trades: dict[int, list[int]] = {}  # instrument id -> [trades, lots, quote units]
        self._digest = event_digest([])

    def result(self, result: Result) -> None:
        """One applied command's result (the simulation's ``on_result``: it runs for every command)."""
        self.commands += 1
        held = self._held
        held += result.events
        if len(held) >= self.BATCH:
            self._fold()

    @property
    def events(self) -> int:
        return self._folded + len(self._held)

    @property
    def digest(self) -> Any:
        """The sha256 of every event so far (``engine.journal.event_digest``)."""
        self._fold()
        return self._digest

    @property
    def trades(self) -> dict[int, list[int]]:
        """Instrument id -> [trades, lots, quote units] so far."""
        self._fold()
        return self._trades

    def _fold(self) -> None:
        held = self._held
        event_digest(held, self._digest)
        self._folded += len(held)
        trades = self._trades
        for event in [e for e in held if type(e) is TradeEvent]:
            slot = trades.get(event.instrument_id)
            if slot is None:
                slot = trades[event.instrument_id] = [0, 0, 0]
            slot[0] += 1
            slot[1] += event.lots
            slot[2] += event.quote_units
        held.clear()


def run(
    scenario: Scenario, until_ns: int, journal: str | Path | None = None, progress: IO[str] | None = None
) -> tuple[Venue, ReplayStats]:
    """Replay ``scenario`` to ``until_ns``, writing its journal to the file ``journal`` if given (an
    ``OSError`` when it cannot be opened, :class:`JournalWriteError` when it cannot be written);
    returns the venue and the statistics."""
    stats = ReplayStats()
    sim = Simulation(scenario, clock="virtual", journal_out=journal, on_result=stats.result)
    bar = Progress(scenario.start_ns, until_ns, progress, "replay ")
    try:
        if bar.bar is not None:
            clock = sim.venue.clock
            count = stats.result

            def with_bar(result: Result) -> None:
                count(result)
                bar.at(clock.now)

            sim.set_listener(with_bar)
        sim.run_scenario(until_ns)
    finally:
        bar.close()
        sim.close()
    return sim.venue, stats


def summary(scenario: Scenario, venue: Venue, stats: ReplayStats, until_ns: int) -> list[str]:
    """The summary's lines: engine data only, the same on every run."""
    secs, frac = divmod(until_ns - scenario.start_ns, 10**9)
    span = f"{secs}.{frac:09d}".rstrip("0").rstrip(".")
    trades = sum(t[0] for t in stats.trades.values())
    lines = [
        f"scenario  {scenario.source}",
        f"seed      {scenario.seed}",
        f"time      {format_time(scenario.start_ns)} -> {format_time(until_ns)} ({span} s)",
        f"commands  {stats.commands}",
        f"events    {stats.events}",
        f"trades    {trades}",
    ]
    instruments = list(queries.instruments(venue))
    width = max((len(i.symbol) for i in instruments), default=0)
    for inst in instruments:
        n, lots, quote = stats.trades.get(inst.id, (0, 0, 0))
        lines.append(
            f"volume    {inst.symbol:<{width}}  {inst.qty_grid.format(lots)} {inst.base.name}  "
            f"{inst.quote.grid.format(quote)} {inst.quote.name}  in {n} trades"
        )
    for inst in instruments:
        book = queries.book(venue, inst.id)
        sides = []
        for side, label in ((BUY, "bids"), (SELL, "asks")):
            levels = book.depth(side, TOP_LEVELS)
            shown = ", ".join(f"{inst.qty_grid.format(q)} @ {inst.price_grid.format(p)}" for p, q, _ in levels)
            sides.append(f"{label} {shown or '-'}")
        lines.append(f"book      {inst.symbol:<{width}}  {inst.status}  " + " | ".join(sides))
    lines.append(f"digest    sha256:{stats.digest.hexdigest()}")
    return lines


def replay_main(argv: list[str]) -> int:
    parser = argparse.ArgumentParser(
        prog="cefisim replay",
        description="Run a scenario without HTTP, as fast as possible, and print a summary.",
        **examples(
            "cefisim replay demo --until +60                 # the shipped demo, one minute of engine time",
            "cefisim replay demo --until +60 --journal run.jsonl",
            "cefisim replay demo --from-journal run.jsonl    # what `cefisim serve --journal` recorded",
        ),
    )
    parser.add_argument("file", help="scenario file (JSON), or the name of a shipped one")
    parser.add_argument("--journal", metavar="OUT", help="write every applied command as JSON lines")
    parser.add_argument(
        "--until", metavar="ISO|+seconds", help="stop at this engine time instead of the scenario's end"
    )
    parser.add_argument("--quiet", action="store_true", help="print only the event digest")
    parser.add_argument(
        "--from-journal",
        metavar="JOURNAL",
        help="replay what a server recorded with `cefisim serve --journal JOURNAL` instead",
    )
    loaded = parse_and_load(parser, argv, "file")
    if isinstance(loaded, int):
        return loaded
    args, scenario = loaded
    until_ns = scenario.end_ns
    if args.until is not None:
        try:
            until_ns = parse_time(args.until, scenario.start_ns)
        except ValueError as exc:
            print(f"cefisim replay: --until: {exc}", file=sys.stderr)
            return 2
        if until_ns < scenario.start_ns:
            print(f"cefisim replay: --until: {args.until} is before start", file=sys.stderr)
            return 2
    if args.from_journal is not None:
        return _replay_server_journal(scenario, args.from_journal, args.quiet)
    progress = sys.stderr if not args.quiet and sys.stderr.isatty() else None
    started = time.monotonic()
    try:
        venue, stats = run(scenario, until_ns, args.journal, progress)
    except OSError as exc:
        print(f"cefisim replay: {args.journal}: {exc.strerror or exc}", file=sys.stderr)
        return 1
    except JournalWriteError as exc:
        print(f"cefisim replay: {args.journal}: {exc}", file=sys.stderr)
        return 1
    wall = time.monotonic() - started
    if args.quiet:
        print(f"sha256:{stats.digest.hexdigest()}")
        return 0
    print("\n".join(summary(scenario, venue, stats, until_ns)))
    rate = stats.commands / wall if wall > 0 else 0.0
    print(f"wall      {wall:.3f} s ({rate:,.0f} commands/s)", file=sys.stderr)
    return 0


def _replay_server_journal(scenario: Scenario, path: str, quiet: bool) -> int:
    """Rebuild a server's state offline from its journal, exactly as the server does on restart."""
    stats = ReplayStats()
    try:
        sim = Simulation(
            scenario,
            clock="virtual",
            journal_path=path,
            read_only=True,
            on_result=stats.result,
        )
    except JournalError as exc:
        print(f"cefisim replay: {exc}", file=sys.stderr)
        return 2
    except OSError as exc:
        print(f"cefisim replay: {path}: {exc.strerror or exc}", file=sys.stderr)
        return 2
    stats.commands = sim.recovered_commands
    if quiet:
        print(f"sha256:{stats.digest.hexdigest()}")
        return 0
    shifted = scenario.shifted(sim.start_ns - scenario.start_ns) if sim.start_ns != scenario.start_ns else scenario
    print("\n".join(summary(shifted, sim.venue, stats, sim.venue.clock.now)))
    return 0


def main() -> None:  # pragma: no cover - `python -m api.cli.replay`
    sys.exit(replay_main(sys.argv[1:]))


if __name__ == "__main__":  # pragma: no cover
    main()
