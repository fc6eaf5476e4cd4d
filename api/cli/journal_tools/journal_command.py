"""``cefisim journal show|diff|fork|state``: the command (``docs/journal.md``, Journal tools).

- ``show J [--from N] [--to M] [--client C] [--json]``: one line per record (``render.line``), or
  one JSON object a line;
- ``diff A B [--scenario S] [--scenario-b S]``: exit 0 when both lead to the same commands and the
  same state, 1 naming where they part, 2 when either cannot be read;
- ``fork J --at N --out K``: the header and first N records, which ``cefisim serve --journal K`` or
  ``cefisim replay --from-journal K`` continues from;
- ``state J [--at N] [--snapshot OUT] [--facts] [--scenario S]``: the venue's state digest at record N
  (default: the last), with ``--snapshot`` a snapshot document, with ``--facts`` every fact digested.

Damage and unreadable files are one line on stderr naming the file and the record, and exit status 2.
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Callable
from pathlib import Path

import orjson

from cefisim.api.cli.common.cli_env import examples
from cefisim.api.cli.journal_tools.diff import compare
from cefisim.api.cli.journal_tools.reader import Journal, JournalDamage
from cefisim.api.cli.journal_tools.record_state import (
    digest,
    facts,
    journal_scenario,
    rebuild,
    snapshot_bytes,
    write_fork,
)
from cefisim.api.cli.journal_tools.render import as_json, client_of, line
from cefisim.api.formats.scenario import format_time


def _count(text: str) -> int:
    if not text.isascii() or not text.isdigit() or len(text) > 18:
        raise argparse.ArgumentTypeError(f"{text!r}: expected a record number (0 or more)")
    return int(text)


JOURNAL_HELP = "the journal: a file written by serve --journal, replay --journal or backtest --journal"


def _parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="cefisim journal",
        description="Read, compare and fork command journals (docs/journal.md).",
        **examples(
            "cefisim journal show run.jsonl --from 1 --to 20",
            "cefisim journal diff run.jsonl rerun.jsonl",
            "cefisim journal fork run.jsonl --at 100 --out first100.jsonl",
            "cefisim journal state run.jsonl --at 100",
        ),
    )
    sub = parser.add_subparsers(dest="action", required=True)
    show = sub.add_parser(
        "show",
        help="one line per record",
        description="One line per record of a journal: number, engine time, kind, client, what it did.",
        **examples(
            "cefisim journal show run.jsonl --from 1 --to 20", "cefisim journal show run.jsonl --client 100 --json"
        ),
    )
    show.add_argument("journal", help=JOURNAL_HELP)
    show.add_argument("--from", dest="first", type=_count, default=1, metavar="N", help="first record shown")
    show.add_argument("--to", dest="last", type=_count, default=None, metavar="M", help="last record shown")
    show.add_argument("--client", default=None, metavar="C", help="only the records of this client id")
    show.add_argument("--json", action="store_true", help="one JSON object a line")
    diff = sub.add_parser(
        "diff",
        help="where two journals part (exit 0 same, 1 different, 2 unreadable)",
        description="Compare two journals record by record: where they part, and the venue states there.",
        **examples("cefisim journal diff run.jsonl rerun.jsonl"),
    )
    diff.add_argument(
        "a", metavar="A", help="the first journal (a file written by serve, replay or backtest --journal)"
    )
    diff.add_argument("b", metavar="B", help="the journal compared with A")
    diff.add_argument("--scenario", default=None, metavar="FILE|NAME", help="scenario of A (default: its header's)")
    diff.add_argument("--scenario-b", default=None, metavar="FILE|NAME", help="scenario of B (default: its header's)")
    fork = sub.add_parser(
        "fork",
        help="a journal of the first N records, to continue from",
        description="Write a journal of the first N records: a server started with it goes on from there.",
        **examples(
            "cefisim journal fork run.jsonl --at 100 --out first100.jsonl",
            "cefisim serve --journal first100.jsonl --clock virtual",
        ),
    )
    fork.add_argument("journal", help=JOURNAL_HELP)
    fork.add_argument("--at", type=_count, required=True, metavar="N", help="records kept")
    fork.add_argument("--out", type=Path, required=True, metavar="K", help="the new journal (must not exist)")
    state = sub.add_parser(
        "state",
        help="the venue's state digest at a record",
        description="Replay a journal up to a record and print the venue's state digest there.",
        **examples("cefisim journal state run.jsonl --at 100", "cefisim journal state run.jsonl --snapshot s.json"),
    )
    state.add_argument("journal", help=JOURNAL_HELP)
    state.add_argument("--at", type=_count, default=None, metavar="N", help="after this record (default: the last)")
    state.add_argument("--snapshot", type=Path, default=None, metavar="OUT", help="write a snapshot of that state")
    state.add_argument("--facts", action="store_true", help="print every fact the digest covers")
    state.add_argument(
        "--scenario", default=None, metavar="FILE|NAME", help="the journal's scenario (default: its header's)"
    )
    return parser


def _show(args: argparse.Namespace) -> int:
    emit: Callable[..., str] = (lambda r: orjson.dumps(as_json(r)).decode()) if args.json else line
    with Journal(args.journal) as journal:
        for record in journal.records():
            if args.last is not None and record.number > args.last:
                break
            if record.number < args.first or (args.client is not None and client_of(record) != args.client):
                continue
            print(emit(record))
    return 0


def _diff(args: argparse.Namespace) -> int:
    with Journal(args.a) as a, Journal(args.b) as b:
        parting = compare(a, b, args.scenario, args.scenario_b)
    if parting is None:
        print("the journals lead to the same commands and the same state")
        return 0
    print("\n".join(parting.lines("A", "B")))
    return 1


def _fork(args: argparse.Namespace) -> int:
    if args.out.exists():
        raise JournalDamage(f"{args.out}: exists; a fork is written to a new file")
    with Journal(args.journal) as journal:
        write_fork(journal, args.at, args.out)
    print(f"{args.out}: the header and the first {args.at} records of {args.journal}")
    return 0


def _last_number(path: str) -> int:
    with Journal(path) as journal:
        number = 0
        for record in journal.records():
            number = record.number
        return number


def _state(args: argparse.Namespace) -> int:
    at = args.at if args.at is not None else _last_number(args.journal)
    with Journal(args.journal) as journal:
        sim = rebuild(journal, at, journal_scenario(journal, args.scenario))
    pairs = facts(sim.venue, sim.faults)
    print(f"record    {at}")
    print(f"time      {format_time(sim.venue.clock.now)}")
    print(f"digest    {digest(pairs)}")
    if args.facts:
        for _, label, value in pairs:
            print(f"{label}: {value}")
    if args.snapshot is not None:
        try:
            args.snapshot.write_bytes(snapshot_bytes(sim))
        except OSError as exc:
            raise JournalDamage(f"{args.snapshot}: {exc.strerror or exc}") from None
        print(f"snapshot  {args.snapshot}")
    return 0


_ACTIONS: dict[str, Callable[[argparse.Namespace], int]] = {
    "show": _show,
    "diff": _diff,
    "fork": _fork,
    "state": _state,
}


def journal_main(argv: list[str]) -> int:
    try:
        args = _parser().parse_args(argv)
    except SystemExit as exc:  # argparse has printed the usage problem
        return exc.code if isinstance(exc.code, int) else 2
    try:
        return _ACTIONS[args.action](args)
    except JournalDamage as exc:
        sys.stdout.flush()
        print(f"cefisim journal {args.action}: {exc}", file=sys.stderr)
        return 2
    except BrokenPipeError:  # `cefisim journal show J | head`
        sys.stderr.close()
        return 0
