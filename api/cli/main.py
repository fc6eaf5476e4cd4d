"""The ``cefisim`` command: ``serve``, ``replay``, ``backtest``, ``sweep``, ``data``, ``journal``, ``scenarios``;
``--version``.

``cefisim serve [--host 127.0.0.1] [--port 8080] [--scenario FILE|NAME] [--journal FILE] [--clock wall|virtual]``
serves the emulator; with no scenario it loads the shipped ``demo`` (package data of
``cefisim.scenarios``, ``api/formats/scenario/shipped.py``); ``cefisim scenarios`` lists the shipped names.
Every ``serve`` option also reads ``CEFISIM_<OPTION>`` (``api/cli/common/cli_env.py``; a flag wins). ``--port 0``
binds a free port and prints the real one; ``--ready-file`` and a port in use: ``api/web/server/listen.py``.
``--loop``: the event loop it serves on, uvloop from the ``[fast]`` extra when installed
(``api/cli/event_loop.py``).
One access-log line per request on stderr (``--log-format``, ``--quiet``): ``api/web/server/request_log.py``.
Scenario and journal problems are reported as one clear message and exit code 2, never a traceback.
"""

from __future__ import annotations

import argparse
import asyncio
import gc
import json
import logging
import os
import shlex
import sys
from pathlib import Path

from cefisim import __version__
from cefisim.api.cli.common.cli_env import document, env_defaults, examples
from cefisim.api.cli.common.extras import MissingExtra
from cefisim.api.cli.event_loop import LOOPS, loop_factory, loop_name
from cefisim.api.edge.signing import LAYOUTS
from cefisim.api.formats.scenario import Scenario, ScenarioError, load_scenario
from cefisim.api.formats.scenario.model import STATUS_RETENTION_RULE, status_retention_ns
from cefisim.api.formats.scenario.shipped import DEFAULT, describe, resolve, shipped, shipped_names
from cefisim.api.runtime.simulation import JournalError, JournalWriteError, Simulation
from cefisim.api.web.app.application import create_app
from cefisim.api.web.app.pages import DOCS_PREFIX, docs_folder, page_titles
from cefisim.api.web.server.keys import ServerOptions
from cefisim.api.web.server.limit_flags import (
    add_limit_arguments,
    install_log_redaction,
    limit_options,
    positive_int,
    venue_config_for,
)
from cefisim.api.web.server.limits import KEEPALIVE_TIMEOUT_S
from cefisim.api.web.server.listen import run
from cefisim.api.web.server.request_log import DEFAULT_CAPACITY, FORMATS, MAX_CAPACITY
from cefisim.engine import build as engine_build

LOG_LEVELS = ("DEBUG", "INFO", "WARNING", "ERROR", "CRITICAL")


def _port(text: str) -> int:
    if not text.isascii() or not text.isdigit() or int(text) > 65535:
        raise argparse.ArgumentTypeError(f"{text!r}: expected a port number from 0 (any free port) to 65535")
    return int(text)


def _history(text: str) -> int:
    if not text.isascii() or not text.isdigit() or not 1 <= int(text) <= MAX_CAPACITY:
        raise argparse.ArgumentTypeError(f"{text!r}: expected a whole number from 1 to {MAX_CAPACITY}")
    return int(text)


def _serve_parser(sub: argparse._SubParsersAction) -> argparse.ArgumentParser:
    p = sub.add_parser(
        "serve",
        help="serve the emulator over HTTP",
        description="Serve the venue's CeFi, Auth and paper-trading interfaces and the control plane (/_sim/).",
        **examples(
            "cefisim serve                                   # the demo scenario on http://127.0.0.1:8080",
            "cefisim serve --scenario population --clock virtual --speed 10",
            "cefisim serve --port 0 --ready-file ready.json  # CI: a free port, written to ready.json",
            "cefisim serve --journal run.jsonl               # restart with the same flag to continue",
        ),
    )
    p.add_argument("--host", default="127.0.0.1", help="address to listen on (default 127.0.0.1)")
    p.add_argument("--port", type=_port, default=8080, help="port to listen on; 0 picks a free one (default 8080)")
    p.add_argument(
        "--ready-file",
        type=Path,
        default=None,
        metavar="PATH",
        help='once accepting connections, write {"url": ..., "pid": ...} here (removed on exit)',
    )
    p.add_argument(
        "--scenario",
        default=None,
        metavar="FILE|NAME",
        help=f"scenario file, or the name of a shipped one (`cefisim scenarios`; default: {DEFAULT})",
    )
    p.add_argument(
        "--journal",
        default=None,
        metavar="FILE",
        help="command journal: replayed on start, appended to (its folder must exist)",
    )
    p.add_argument(
        "--clock",
        choices=("wall", "virtual"),
        default="wall",
        help="wall: engine time is real time and the scenario's agents trade as it passes; virtual: time "
        "stands still until POST /_sim/clock/advance (or --speed) moves it (default wall)",
    )
    p.add_argument(
        "--speed",
        type=_speed,
        default=None,
        metavar="X",
        help="with --clock virtual: engine time also runs by itself, at X times real time (e.g. 10)",
    )
    p.add_argument(
        "--signature-layout",
        choices=LAYOUTS,
        default=None,
        help="default: the scenario's settings.signature_layout, else concat",
    )
    p.add_argument(
        "--sign-reference-data",
        action="store_true",
        default=None,
        help="assets and instruments need signing (default: the scenario's settings)",
    )
    p.add_argument(
        "--environment",
        choices=("sandbox", "production"),
        default="sandbox",
        help="production: as the real venue's production, without paper trading and the control plane "
        "(default sandbox)",
    )
    p.add_argument(
        "--control-token",
        default=None,
        metavar="T",
        help="require this bearer token on /_sim/ (the live page then opens with ?token=T, see GET /)",
    )
    p.add_argument(
        "--max-body-bytes",
        type=positive_int,
        default=64 * 1024,
        metavar="N",
        help="largest request body; larger is a 413 (default 65536)",
    )
    p.add_argument(
        "--status-retention",
        type=_status_retention,
        default=None,
        metavar="SECONDS",
        help="how long an ended order's status can be looked up (1 to 2592000; default: the "
        "scenario's settings.status_retention, else 86400); journaled when it changes",
    )
    p.add_argument(
        "--log-level",
        type=str.upper,
        choices=LOG_LEVELS,
        default="INFO",
        help="the server's own log on stderr: DEBUG, INFO, WARNING, ERROR (default INFO)",
    )
    p.add_argument(
        "--loop",
        choices=LOOPS,
        default="auto",
        help="the event loop: uvloop (pip install 'cefisim[fast]') serves more requests per CPU-second; "
        "auto = uvloop when installed, else asyncio (default auto)",
    )
    p.add_argument("--log-format", choices=FORMATS, default="text", help="access log lines on stderr (default text)")
    p.add_argument("--quiet", action="store_true", default=False, help="no access log")
    p.add_argument(
        "--request-history",
        type=_history,
        default=DEFAULT_CAPACITY,
        metavar="N",
        help=f"requests GET /_sim/requests keeps (default {DEFAULT_CAPACITY})",
    )
    add_limit_arguments(p)
    return p


def _status_retention(text: str) -> int:
    ns = status_retention_ns(text)
    if ns is None:
        raise argparse.ArgumentTypeError(STATUS_RETENTION_RULE)
    return ns


def _speed(text: str) -> float:
    try:
        value = float(text)
    except ValueError:
        value = 0.0
    if not 0 < value <= 1e6:
        raise argparse.ArgumentTypeError(f"{text!r}: expected times real time, a number above 0 and at most 1000000")
    return value


def check_serve(args: argparse.Namespace) -> str | None:
    """What is wrong between ``serve``'s options, in one line that says what to do (a flag's own
    value is checked by its type); None when nothing is."""
    if args.speed is not None and args.clock != "virtual":
        return (
            "--speed (CEFISIM_SPEED) needs --clock virtual: on the wall clock engine time is real time; "
            "add --clock virtual, or leave --speed out"
        )
    if args.journal is not None:
        folder = Path(args.journal).parent
        if not folder.is_dir():
            return f"--journal {args.journal}: no folder {folder}: create it, or name a file in a folder that exists"
    return None


def live_page_lines(sim: Simulation, url: str, options: ServerOptions) -> list[str]:
    """What the start-up banner says of the live page: its address for the scenario's first
    instrument, or why there is none to open."""
    if options.environment == "production":
        return ["No live page: --environment production serves no control plane (/_sim/)."]
    if not sim.scenario.instruments:
        return ["No live page: the scenario lists no instrument."]
    page = f"{url}/_sim/ui/?instrument={next(iter(sim.scenario.instruments))}"
    if options.control_token is not None:
        return [
            "The live page needs the control token (--control-token); a browser passes it in the page's address:",
            f"  {page}#token=<your token>   ({url}/ lists the server's pages)",
        ]
    return [f"Watch the book, trades and orders live: {page}"]


def example_request(sim: Simulation, url: str, layout: str) -> str:
    """A shell snippet that signs and sends GET /v1/cefi/balances as the scenario's first client."""
    if not sim.scenario.hmac_keys:
        return "(the scenario defines no HMAC keys)"
    key, (client_id, secret) = next(iter(sim.scenario.hmac_keys.items()))
    path = "/v1/cefi/balances"
    payload = '"${TS}GET' + path + '"' if layout != "newline" else '"GET\\n' + path + '\\n${TS}\\n"'
    return (
        f"TS=$(date +%s); SIG=$(printf {payload} | openssl dgst -sha256 -hmac {shlex.quote(secret)} -binary | base64); "
        f'curl -s {url}{path} -H "x-svc-auth-token: {key}" -H "x-svc-auth-signature: $SIG" '
        f'-H "x-svc-auth-timestamp: $TS" -H "x-svc-auth-userid: {client_id}"'
    )


def server_options(args: argparse.Namespace, scenario: Scenario) -> ServerOptions:
    """The server's options: a flag on the command line wins over the scenario's ``settings``."""
    return ServerOptions(
        signature_layout=args.signature_layout or scenario.settings.get("signature_layout", "concat"),
        sign_reference_data=bool(
            args.sign_reference_data
            if args.sign_reference_data is not None
            else scenario.settings.get("sign_reference_data", False)
        ),
        environment=args.environment,
        control_token=args.control_token,
        max_body_bytes=args.max_body_bytes,
        speed=args.speed if args.clock == "virtual" else None,
        access_log=None if args.quiet else args.log_format,
        request_history=args.request_history,
        **limit_options(args),
    )


def serve_main(args: argparse.Namespace) -> int:
    try:
        new_loop = loop_factory(args.loop)
    except MissingExtra as exc:  # --loop uvloop without uvloop: one line, before anything is loaded
        print(f"cefisim serve: {exc}", file=sys.stderr)
        return 2
    logging.basicConfig(level=args.log_level.upper(), format="%(asctime)s %(levelname)s %(name)s: %(message)s")
    install_log_redaction()
    scenario_path = resolve(args.scenario)
    try:
        scenario = load_scenario(scenario_path)
        options = server_options(args, scenario)
        sim = Simulation(
            scenario, clock=args.clock, journal_path=args.journal, venue_config=venue_config_for(scenario, args)
        )
        if args.status_retention is not None:
            sim.set_status_retention(args.status_retention)
        try:
            app = create_app(sim, options)
        except ValueError as exc:  # the auth store names the JSON path of a bad api_keys/oauth_clients entry
            print(f"cefisim: {scenario_path}: $.{exc}", file=sys.stderr)
            return 2
    except (ScenarioError, JournalError, JournalWriteError) as exc:
        print(f"cefisim: {exc}", file=sys.stderr)
        return 2
    except OSError as exc:
        print(f"cefisim: {exc.filename or ''}: {exc.strerror}", file=sys.stderr)
        return 2
    # the loaded scenario lives for the whole run: keep it out of the collector's way
    gc.collect()
    gc.freeze()

    def listening(url: str) -> None:
        loop = loop_name(asyncio.get_event_loop())  # the one run() serves on (set, not running, here)
        print(f"cefisim: serving {scenario_path} ({args.clock} clock, {loop}) on {url}", flush=True)
        if sim.recovered_commands:
            print(f"cefisim: recovered {sim.recovered_commands} commands from {args.journal}", flush=True)
        print("Try a signed request (valid for 15 s after you press enter):", flush=True)
        print("  " + example_request(sim, url, options.signature_layout), flush=True)
        for line in live_page_lines(sim, url, options):
            print(line, flush=True)

    return run(
        app, args.host, args.port, listening, args.ready_file, new_loop=new_loop, keepalive_timeout=KEEPALIVE_TIMEOUT_S
    )


def has_hmac_client(name: str) -> bool:
    """Whether a shipped scenario has a client with an HMAC key (what ``cefisim_client`` and the start-up
    banner's signed request sign with)."""
    path = shipped(name)
    doc = json.loads(path.read_text(encoding="utf-8")) if path else {}
    return any(isinstance(c, dict) and c.get("key") for c in doc.get("clients", []))


def scenarios_main() -> int:
    """``cefisim scenarios``: the shipped scenarios, one per line, with what each shows; ``[keys]`` marks
    those with a client that signs (an HMAC key): the others are markets to watch or trade in-process."""
    names = shipped_names()
    width = max(map(len, names), default=0)
    for name in names:
        keys = "[keys]" if has_hmac_client(name) else "      "
        print(f"{name:<{width}}  {keys}  {describe(name)}".rstrip())
    print("\n[keys]: a client signs with an HMAC key (the pytest plugin's cefisim_client needs one)")
    return 0


def docs_main(path_only: bool) -> int:
    """``cefisim docs``: where the installed documentation's pages are, each with its title (``--path``:
    the folder alone)."""
    folder = docs_folder()
    if folder is None:
        print("cefisim docs: this installation carries no documentation pages", file=sys.stderr)
        return 1
    if path_only:
        print(folder)
        return 0
    print(f"documentation pages: {folder}")
    titles = page_titles(folder)
    width = max(map(len, titles), default=0)
    for name, title in titles.items():
        print(f"  {name:<{width}}  {title}")
    print(f"A running server serves them at {DOCS_PREFIX} (http://127.0.0.1:8080{DOCS_PREFIX} for `cefisim serve`).")
    return 0


def main(argv: list[str] | None = None) -> int:
    argv = list(sys.argv[1:] if argv is None else argv)
    parser = argparse.ArgumentParser(
        prog="cefisim",
        description="Deterministic CeFi venue emulator. `cefisim COMMAND --help` explains each command.",
        **examples(
            "cefisim serve                     # serve the demo scenario on http://127.0.0.1:8080",
            "cefisim scenarios                 # the shipped scenarios",
            "cefisim backtest demo --strategy simple_mm --until +60",
            "cefisim docs                      # where the installed documentation is",
        ),
    )
    parser.add_argument("--version", action="version", version=f"cefisim {__version__} ({engine_build()})")
    sub = parser.add_subparsers(dest="command", required=True)
    serve = _serve_parser(sub)
    document(serve)
    if argv[:1] == ["serve"]:  # a bad CEFISIM_ value concerns serve only
        env_defaults(serve, os.environ)
    sub.add_parser(
        "scenarios",
        help="list the shipped scenarios (`--scenario NAME` serves one)",
        description="The shipped scenarios, one a line, with what each shows.",
        **examples("cefisim scenarios", "cefisim serve --scenario flash_crash"),
    )
    docs = sub.add_parser(
        "docs",
        help="where the installed documentation is (each page, with its title)",
        description="Print the folder of the installed documentation's pages (Markdown) and list them.",
        **examples("cefisim docs", 'less "$(cefisim docs --path)/limits.md"'),
    )
    docs.add_argument("--path", action="store_true", help="print the folder alone (for scripts)")
    sub.add_parser("replay", help="run a scenario without HTTP (see `cefisim replay --help`)", add_help=False)
    if argv and argv[0] == "replay":
        from cefisim.api.cli.replay import replay_main  # each subcommand loads only what it runs

        return replay_main(argv[1:])
    sub.add_parser(
        "backtest", help="run a strategy against a scenario in-process (see `cefisim backtest --help`)", add_help=False
    )
    if argv and argv[0] == "backtest":
        from cefisim.api.cli.backtest import backtest_main  # each subcommand loads only what it runs

        return backtest_main(argv[1:])
    sub.add_parser(
        "sweep", help="run a strategy over seeds, parameters and latencies (see `cefisim sweep --help`)", add_help=False
    )
    if argv and argv[0] == "sweep":
        from cefisim.api.cli.sweep import sweep_main  # each subcommand loads only what it runs (dask, matplotlib)

        return sweep_main(argv[1:])
    sub.add_parser("data", help="convert or record market data (see `cefisim data --help`)", add_help=False)
    if argv and argv[0] == "data":
        from cefisim.api.cli.data.data_command import data_main  # each subcommand loads only what it runs

        return data_main(argv[1:])
    sub.add_parser(
        "journal", help="show, compare, fork a command journal (see `cefisim journal --help`)", add_help=False
    )
    if argv and argv[0] == "journal":
        from cefisim.api.cli.journal_tools.journal_command import (
            journal_main,  # each subcommand loads only what it runs
        )

        return journal_main(argv[1:])
    args = parser.parse_args(argv)
    if args.command == "serve":
        problem = check_serve(args)
        if problem is not None:
            print(f"cefisim serve: {problem}", file=sys.stderr)
            return 2
        return serve_main(args)
    if args.command == "scenarios":
        return scenarios_main()
    if args.command == "docs":
        return docs_main(args.path)
    parser.error(f"unknown command {args.command}")
    return 2


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
