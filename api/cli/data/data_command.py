"""``cefisim data convert IN [IN ...] --from tardis|binance --out FILE`` and
``cefisim data record SCENARIO --out FILE [--instrument SYMBOL] [--until ISO|+seconds]``.

Exit status: 0 done; 2 a usage, scenario or data problem (one line naming the file, the line and the
reason, never a traceback); 1 the output could not be written.
"""

from __future__ import annotations

import argparse
import sys

from cefisim.api.cli.common.cli_env import examples
from cefisim.api.cli.data.record import record
from cefisim.api.formats.recorded.convert import convert
from cefisim.api.formats.recorded.format import RecordingError
from cefisim.api.formats.recorded.importers import IMPORTERS
from cefisim.api.formats.scenario import ScenarioError, load_scenario, parse_time
from cefisim.api.formats.scenario.shipped import resolve


def _parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="cefisim data",
        description="Recorded market data (docs/recorded.md): convert it from an exchange's format, or record a "
        "scenario's market.",
        **examples(
            "cefisim data convert book.csv.gz trades.csv.gz --from tardis --out market.jsonl.gz",
            "cefisim data record demo --until +60 --out demo.jsonl.gz",
        ),
    )
    sub = parser.add_subparsers(dest="action", required=True)
    conv = sub.add_parser(
        "convert",
        help="convert Tardis CSV or Binance stream messages to the cefisim format",
        description="Convert recorded depth and trades to the cefisim recording format (docs/recorded.md).",
        **examples(
            "cefisim data convert book_snapshot_25.csv.gz trades.csv.gz --from tardis --out market.jsonl.gz",
            "cefisim data convert depth.jsonl trades.jsonl --from binance --symbol BTCUSDT --out market.jsonl.gz",
        ),
    )
    conv.add_argument("inputs", nargs="+", metavar="IN", help="input files (gzip is read transparently)")
    conv.add_argument(
        "--from",
        dest="fmt",
        choices=sorted(IMPORTERS),
        required=True,
        help="the input's format: tardis (Tardis.dev CSV: book snapshots, incremental book, trades) or binance "
        "(Binance stream messages, one JSON a line: depth updates and trades)",
    )
    conv.add_argument("--out", required=True, help="output file (.gz: gzip)")
    conv.add_argument("--price-increment", default=None, help="price grid (default: the finest the data uses)")
    conv.add_argument("--qty-increment", default=None, help="size grid (default: the finest the data uses)")
    conv.add_argument("--symbol", default=None, help="instrument symbol written in the header")
    rec = sub.add_parser(
        "record",
        help="export a scenario's market as recorded depth and trades",
        description="Run a scenario and write its market (depth and trades) as a recording (docs/recorded.md).",
        **examples("cefisim data record demo --until +60 --out demo.jsonl.gz"),
    )
    rec.add_argument("scenario", help="scenario file (JSON), or the name of a shipped one")
    rec.add_argument("--out", required=True, help="output file (.gz: gzip)")
    rec.add_argument("--instrument", default=None, help="symbol or id (default: the scenario's first instrument)")
    rec.add_argument(
        "--until", default=None, metavar="ISO|+seconds", help="stop at this engine time (default: the scenario's end)"
    )
    return parser


def data_main(argv: list[str]) -> int:
    try:
        args = _parser().parse_args(argv)
    except SystemExit as exc:
        return exc.code if isinstance(exc.code, int) else 2
    try:
        if args.action == "convert":
            n = convert(args.inputs, args.fmt, args.out, args.price_increment, args.qty_increment, args.symbol)
        else:
            n = _record(args)
            if n < 0:
                return 2
    except RecordingError as exc:
        print(f"cefisim data: {exc}", file=sys.stderr)
        return 2
    except ScenarioError as exc:
        print(exc, file=sys.stderr)
        return 2
    except ValueError as exc:  # a bad --price-increment / --qty-increment
        print(f"cefisim data: {exc}", file=sys.stderr)
        return 2
    except OSError as exc:
        print(f"cefisim data: {args.out}: {exc.strerror or exc}", file=sys.stderr)
        return 1
    print(f"cefisim data: wrote {n} events to {args.out}")
    return 0


def _record(args: argparse.Namespace) -> int:
    scenario = load_scenario(resolve(args.scenario))
    if args.instrument is None:
        inst_id = next(iter(scenario.instruments))
    else:
        found = scenario.instrument_id(args.instrument)
        if found is None:
            print(f"cefisim data: --instrument: no instrument {args.instrument!r} in {args.scenario}", file=sys.stderr)
            return -1
        inst_id = found
    until = scenario.end_ns
    if args.until is not None:
        until = parse_time(args.until, scenario.start_ns)
    return record(scenario, inst_id, until, args.out)


__all__ = ["data_main"]
