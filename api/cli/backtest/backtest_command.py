"""``cefisim backtest SCENARIO --strategy module:Class``: load the strategy, run it, report.

``backtest_main(argv)`` is the command; ``run_backtest(scenario, strategy, ...)`` the same run for
code and tests. The wall time is measured here and nowhere else.

Exit status: 0 done; 2 a scenario, usage or ``--strategy`` problem (a message, never a traceback);
1 the strategy raised (its traceback is printed: it is the user's code) or the report or the
journal (``--journal OUT``) could not be written; 130 interrupted (Ctrl-C): one line, and the
report, table and plot of what ran, with ``"complete": false``.
"""

from __future__ import annotations

import argparse
import contextlib
import importlib
import importlib.util
import inspect
import os
import signal
import sys
import threading
import time
import traceback
from collections.abc import Callable, Iterator, Mapping
from decimal import Decimal, InvalidOperation
from pathlib import Path
from types import FrameType
from typing import IO, Any

import orjson

from cefisim.api.cli.backtest.backtest_plot import BookTape, PlotUnavailable, check_target, save_backtest_plot
from cefisim.api.cli.backtest.context import CALLBACKS, Context, Driver, seconds_ns
from cefisim.api.cli.backtest.report import Backtest, build_report, table
from cefisim.api.cli.common.cli_env import examples
from cefisim.api.cli.common.progress import Progress
from cefisim.api.formats.scenario import Scenario, format_time, parse_time
from cefisim.api.formats.scenario.command import parse_and_load
from cefisim.api.runtime.journal_file import JournalWriteError
from cefisim.api.runtime.simulation import Simulation
from cefisim.api.side_state.side_states import SideStateRecord
from cefisim.engine.recorded.market import latency_draw
from cefisim.engine.simulation.backtest import Harness, StrategyLoop
from cefisim.engine.simulation.figures import figures
from cefisim.engine.simulation.scenario import Step
from cefisim.strategies import SHIPPED

__all__ = [
    "Backtest",
    "BacktestError",
    "StrategyFailed",
    "backtest_main",
    "check_callbacks",
    "construct_strategy",
    "load_strategy_class",
    "run_backtest",
]

SAMPLES = 100  # inventory samples over the run unless --sample-every says otherwise


class BacktestError(ValueError):
    """A usage problem (bad option, unknown client, strategy that cannot be loaded): exit 2."""


class StrategyFailed(RuntimeError):
    """The strategy raised inside a callback (or kept reacting to itself): exit 1."""

    def __init__(self, callback: str, at_ns: int, exc: BaseException) -> None:
        super().__init__(f"{callback} at {format_time(at_ns)}: {type(exc).__name__}: {exc}")
        self.callback = callback
        self.at_ns = at_ns
        self.exc = exc


# --- loading the strategy ------------------------------------------------------------------------


def shipped_strategy(spec: str) -> str:
    """``spec`` with a shipped strategy's name (``simple_mm``, see ``cefisim.strategies``) written
    out as its ``module:Class``; any other spec unchanged."""
    return spec if ":" in spec else SHIPPED.get(spec, spec)


def load_strategy_class(spec: str) -> type:
    """``package.module:Class``, ``path/to/file.py:Class`` or the name of a shipped strategy -> the
    class; BacktestError otherwise."""
    where, sep, name = shipped_strategy(spec).rpartition(":")
    if not sep or not where or not name.isidentifier():
        raise BacktestError(
            f"--strategy {spec!r}: give module:Class, path/to/file.py:Class or a shipped strategy"
            f" ({', '.join(sorted(SHIPPED))})"
        )
    try:
        if where.endswith(".py") or "/" in where or os.sep in where:
            path = Path(where)
            if not path.is_file():
                raise BacktestError(f"--strategy: {where}: no such file")
            mod_name = "cefisim_strategy_" + "".join(c if c.isalnum() else "_" for c in str(path.resolve()))
            loader_spec = importlib.util.spec_from_file_location(mod_name, path)
            if loader_spec is None or loader_spec.loader is None:
                raise BacktestError(f"--strategy: {where}: not a Python file")
            module = importlib.util.module_from_spec(loader_spec)
            sys.modules[mod_name] = module
            loader_spec.loader.exec_module(module)
        else:
            if os.getcwd() not in sys.path and "" not in sys.path:
                sys.path.insert(0, os.getcwd())  # as `python -m` would: modules of the working directory
            module = importlib.import_module(where)
    except BacktestError:
        raise
    except SyntaxError as exc:
        raise BacktestError(f"--strategy: {exc.filename}:{exc.lineno}: syntax error: {exc.msg}") from None
    except ImportError as exc:
        raise BacktestError(f"--strategy: cannot import {where}: {exc}") from None
    except Exception as exc:  # the module's own code failed while importing
        raise BacktestError(f"--strategy: importing {where} raised {type(exc).__name__}: {exc}") from None
    cls = getattr(module, name, None)
    if cls is None:
        raise BacktestError(f"--strategy: {where} has no {name}")
    if not isinstance(cls, type):
        raise BacktestError(f"--strategy: {where}:{name} is not a class")
    if not any(callable(getattr(cls, cb, None)) for cb in CALLBACKS):
        raise BacktestError(f"--strategy: {where}:{name} defines none of {', '.join(CALLBACKS)}")
    check_callbacks(cls, f"{where}:{name}")
    return cls


def check_callbacks(cls: type, label: str) -> None:
    """A :class:`BacktestError` naming the first callback of ``cls`` that cannot take the arguments the
    harness passes it (``on_fill(self, ctx, fill)``): found at load, not in the middle of a run."""
    for cb, params in CALLBACKS.items():
        fn = getattr(cls, cb, None)
        if not callable(fn):
            continue
        try:
            signature = inspect.signature(fn)
        except (TypeError, ValueError):  # a builtin or C callable without a signature: nothing to check
            continue
        # called on an instance: a plain function takes the instance first, a static or class method does not
        bound = isinstance(inspect.getattr_static(cls, cb, None), (staticmethod, classmethod))
        try:
            signature.bind(*(() if bound else (None,)), *params)
        except TypeError:
            bare = signature.replace(  # the names alone: what the line is about
                parameters=[p.replace(annotation=inspect.Parameter.empty) for p in signature.parameters.values()],
                return_annotation=inspect.Signature.empty,
            )
            raise BacktestError(
                f"--strategy: {label}.{cb}{bare} cannot be called as {cb}({', '.join(params)})"
                " (docs/backtest.md, the strategy API)"
            ) from None


def construct_strategy(cls: type, spec: str, params: Mapping[str, str]) -> Any:
    """``cls(**params)``; a :class:`BacktestError` of one line when the constructor refuses them
    (``--strategy: simple_mm(qty='abc') raised ValueError: ...``)."""
    try:
        return cls(**params)
    except Exception as exc:
        given = ", ".join(f"{k}={v!r}" for k, v in params.items())
        # decimal's own message is a list of signal classes ("[<class 'decimal.ConversionSyntax'>]")
        reason = "a value is not a decimal number" if isinstance(exc, InvalidOperation) else exc
        raise BacktestError(f"--strategy: {spec}({given}) raised {type(exc).__name__}: {reason}") from None


# --- running ---------------------------------------------------------------------------------------


class Interrupted(KeyboardInterrupt):
    """Ctrl-C reached the run between two of its steps (the venue as the last step left it)."""


class _Reporting:
    """The scenario's runner as the harness sees it (``next_time``, ``steps``, each step through the
    simulation, which journals it), telling a progress
    bar the engine time of every step and stopping the run at the first step after a Ctrl-C.

    The first SIGINT only sets ``interrupted``: the harness asks ``next_time`` before each step, so
    the run stops between two steps, never inside the venue's matching, and the report of what ran
    is exact. A second SIGINT raises at once (a strategy stuck in its own callback)."""

    def __init__(self, sim: Simulation, bar: Progress, tape: BookTape | None) -> None:
        self.sim = sim
        self.runner = sim.runner
        self.side_state_events = sim.scenario.has_side_state_events()
        self.bar = bar
        self.tape = tape
        self.interrupted = False

    def next_time(self) -> int | None:
        if self.interrupted:
            raise Interrupted
        if self.tape is not None:  # the state the last step left: the top of book the plot draws
            self.tape.record(self.runner.venue)
        return self.runner.next_time()

    def steps(self, t: int) -> Iterator[Step]:
        self.bar.at(t)
        steps = self.runner.steps(t, self.sim.scenario_submit)  # journaled as the scenario's
        if self.side_state_events:  # a venue_faults event is journaled (a restart regenerates it) but no command
            return (step for step in steps if type(step[1]) is not SideStateRecord)
        return steps

    def on_sigint(self, signum: int, frame: FrameType | None) -> None:
        if self.interrupted:
            raise KeyboardInterrupt
        self.interrupted = True


@contextlib.contextmanager
def _sigint_to(handler: Callable[[int, FrameType | None], None]) -> Iterator[None]:
    """``handler`` takes SIGINT while the block runs (in the main thread: elsewhere Python cannot)."""
    if threading.current_thread() is not threading.main_thread():
        yield
        return
    previous = signal.signal(signal.SIGINT, handler)
    try:
        yield
    finally:
        signal.signal(signal.SIGINT, previous)


def default_client(scenario: Scenario) -> int:
    """The first client (file order) that no agent trades as."""
    agents = {a.client_id for a in scenario.agents}
    for cid in scenario.clients:
        if cid not in agents:
            return cid
    raise BacktestError("every client of the scenario is an agent's: pick one with --client")


def run_backtest(
    scenario: Scenario,
    strategy: object,
    *,
    client: str | None = None,
    until_ns: int | None = None,
    latency_ns: int | None = None,
    sample_every_ns: int | None = None,
    quote: str | None = None,
    meta: dict[str, Any] | None = None,
    progress: IO[str] | None = None,
    interruptible: bool = False,
    tape: BookTape | None = None,
    journal: str | Path | None = None,
) -> Backtest:
    """Run ``strategy`` (an instance) against ``scenario``; BacktestError for bad options,
    StrategyFailed when the strategy raises. ``progress``: a terminal to draw a progress bar on.
    ``interruptible`` (the command): Ctrl-C ends the run and the report, of what ran, has
    ``"complete": false``; otherwise (a sweep's runs) KeyboardInterrupt goes to the caller. ``tape``
    records the best bid and ask after every step (for the plot). ``journal``: the file the run's
    journal is written to (an ``OSError`` when it cannot be opened, :class:`JournalWriteError` when it
    cannot be written).

    The run is the runtime's simulation on a virtual clock (``api/runtime/simulation.py``): it builds
    the venue and applies every command, the scenario's (``scn``) and the harness's (``ext``: the
    strategy's orders, the ``SetLatency`` around each with ``latency_ns`` or a recorded latency, the
    clock moves that fire venue timers), journaling each first. The scenario's start instant is left
    to the harness, which runs it after the strategy's ``on_start``."""
    if client is None:
        client_id = default_client(scenario)
    else:
        found = scenario.client_id(client)
        if found is None:
            raise BacktestError(f"--client: the scenario has no client {client!r}")
        client_id = found
    until = scenario.end_ns if until_ns is None else until_ns
    if until < scenario.start_ns:
        raise BacktestError(f"--until: {format_time(until)} is before the scenario's start")
    if quote is not None:
        valuation = scenario.asset_id(quote)
        if valuation is None:
            raise BacktestError(f"--quote: the scenario has no asset {quote!r}")
    else:
        first = next(iter(scenario.instruments.values()), None)
        if first is None:
            raise BacktestError("the scenario has no instruments")
        valuation = first.quote.id
    watch = None
    wanted = getattr(strategy, "instruments", None)
    if wanted is not None and not callable(wanted):
        if isinstance(wanted, str):
            wanted = [wanted]
        watch = []
        for ref in wanted:
            inst_id = scenario.instrument_id(str(ref))
            if inst_id is None:
                raise BacktestError(f"the strategy watches {ref!r}: the scenario has no such instrument")
            watch.append(inst_id)
    if sample_every_ns is None:
        sample_every_ns = max(1_000_000, -(-(until - scenario.start_ns) // SAMPLES))
    elif sample_every_ns <= 0:
        raise BacktestError("--sample-every must be more than 0")
    sim = Simulation(scenario, clock="virtual", journal_out=journal, start=False)
    venue = sim.venue
    draw = None
    spread = scenario.order_latency_range()
    if latency_ns is None and spread is not None:

        def draw() -> int:
            return latency_draw(scenario.seed, venue, *spread)

    bar = Progress(scenario.start_ns, until, progress, "backtest ")
    runner = _Reporting(sim, bar, tape)
    harness = Harness(
        venue,
        # Harness's parameter is typed ScenarioRunner (engine/) yet calls only next_time and steps
        runner,  # type: ignore[arg-type]  # duck-typed runner
        client_id,
        None,
        latency_ns=latency_ns,
        watch=watch,
        sample_every_ns=sample_every_ns,
        feed_latency_ns=max((r.feed_latency_ns for r in scenario.recorded), default=0),
        latency_draw=draw,
        submit=sim.apply,
    )
    ctx = Context(harness, scenario)
    driver = Driver(strategy, ctx, harness)
    harness.driver = driver
    started = time.perf_counter()
    complete = True
    try:
        with _sigint_to(runner.on_sigint) if interruptible else contextlib.nullcontext():
            harness.run(until)
    except KeyboardInterrupt:
        if not interruptible:
            raise
        complete = False  # the report is of what ran, up to the last step taken
    except StrategyLoop as exc:
        raise StrategyFailed("its callbacks", harness.now, exc) from exc
    except Exception as exc:
        if not driver.current:
            raise  # not raised by the strategy: a bug of the emulator, which must crash loudly
        raise StrategyFailed(driver.current, harness.now, exc) from exc
    finally:
        bar.close()
        sim.close()
    wall = time.perf_counter() - started
    figs = figures(harness, valuation)
    report = build_report(scenario, harness, figs, meta or {}, latency_ns, wall)
    report["complete"] = complete
    return Backtest(harness, figs, report)


# --- the command -----------------------------------------------------------------------------------


def _params(items: list[str]) -> dict[str, str]:
    out: dict[str, str] = {}
    for item in items:
        key, sep, value = item.partition("=")
        if not sep or not key.isidentifier():
            raise BacktestError(f"--param {item!r}: give KEY=VALUE")
        out[key] = value
    return out


def millis_ns(text: str) -> int:
    """A ``--latency-ms`` value (a decimal number of milliseconds, whole nanoseconds) in ns; else a
    :class:`BacktestError` naming the flag."""
    try:
        d = Decimal(text)
    except InvalidOperation:
        raise BacktestError(f"--latency-ms: {text!r} is not a number of milliseconds") from None
    if not d.is_finite() or d < 0 or (d * 1_000_000) != (d * 1_000_000).to_integral_value():
        raise BacktestError(f"--latency-ms: {text!r} must be zero or more whole nanoseconds")
    return int(d * 1_000_000)


def backtest_main(argv: list[str]) -> int:
    try:
        return _backtest(argv)
    except KeyboardInterrupt:  # before the run started (loading) or after it (writing): nothing to report
        print("\ncefisim backtest: interrupted", file=sys.stderr)
        return 130


def _backtest(argv: list[str]) -> int:
    parser = argparse.ArgumentParser(
        prog="cefisim backtest",
        description="Run a strategy in-process against a scenario at full speed and report how it did.",
        **examples(
            "cefisim backtest demo --strategy simple_mm --until +300 --param qty=0.05 --plot run.png",
            "cefisim backtest population --strategy my_strategy.py:Maker --report report.json",
        ),
    )
    parser.add_argument("scenario", help="scenario file (JSON), or the name of a shipped one")
    parser.add_argument(
        "--strategy",
        required=True,
        metavar="module:Class",
        help="the strategy class: package.module:Class, path/to/file.py:Class or a shipped one by name (simple_mm)",
    )
    parser.add_argument(
        "--param",
        action="append",
        default=[],
        metavar="KEY=VALUE",
        help="keyword argument for the strategy's constructor (a string; repeatable)",
    )
    parser.add_argument(
        "--until", metavar="ISO|+seconds", help="stop at this engine time instead of the scenario's end"
    )
    parser.add_argument(
        "--latency-ms",
        metavar="N",
        help="acknowledge the strategy's commands N ms of engine time later (others: the scenario's setting)",
    )
    parser.add_argument(
        "--client", metavar="ID|MNEMONIC", help="trade as this client (default: the first no agent uses)"
    )
    parser.add_argument(
        "--quote", metavar="ASSET", help="asset PnL is valued in (default: the first instrument's quote)"
    )
    parser.add_argument(
        "--sample-every", metavar="SECONDS", help=f"inventory sample interval (default: {SAMPLES} samples)"
    )
    parser.add_argument("--report", metavar="FILE.json", help="write the report as JSON")
    parser.add_argument(
        "--plot",
        metavar="FILE.png|.html",
        help="draw price and fills, inventory, PnL and fees over time (needs cefisim[plot]; .png, .svg, .pdf or .html)",
    )
    parser.add_argument(
        "--journal",
        metavar="OUT",
        help="write the run's journal (every command, the strategy's and the scenario's): a server goes on from it",
    )
    parser.add_argument("--quiet", action="store_true", help="print no table")
    loaded = parse_and_load(parser, argv, "scenario")
    if isinstance(loaded, int):
        return loaded
    args, scenario = loaded
    try:
        until_ns = None
        if args.until is not None:
            try:
                until_ns = parse_time(args.until, scenario.start_ns)
            except ValueError as exc:
                raise BacktestError(f"--until: {exc}") from None
        latency_ns = None if args.latency_ms is None else millis_ns(args.latency_ms)
        sample_ns = None
        if args.sample_every is not None:
            try:
                sample_ns = seconds_ns(args.sample_every, "--sample-every")
            except ValueError as exc:
                raise BacktestError(str(exc)) from None
        params = _params(args.param)
        if args.plot is not None:
            try:
                check_target(args.plot)  # before the run, not after it
            except PlotUnavailable as exc:
                raise BacktestError(f"--plot: {exc}") from None
        strategy = construct_strategy(load_strategy_class(args.strategy), args.strategy, params)
        meta = {"strategy": args.strategy, "params": params}
        tape = None if args.plot is None else BookTape()
        bt = run_backtest(
            scenario,
            strategy,
            client=args.client,
            until_ns=until_ns,
            latency_ns=latency_ns,
            sample_every_ns=sample_ns,
            quote=args.quote,
            meta=meta,
            progress=None if args.quiet else sys.stderr,
            interruptible=True,
            tape=tape,
            journal=args.journal,
        )
    except BacktestError as exc:
        print(f"cefisim backtest: {exc}", file=sys.stderr)
        return 2
    except StrategyFailed as exc:
        print(f"cefisim backtest: the strategy failed in {exc}", file=sys.stderr)
        traceback.print_exception(exc.exc, file=sys.stderr)
        return 1
    except (OSError, JournalWriteError) as exc:
        if args.journal is None:
            raise
        reason = exc.strerror if isinstance(exc, OSError) and exc.strerror else exc  # opened, else written
        print(f"cefisim backtest: {args.journal}: {reason}", file=sys.stderr)
        return 1
    if args.report is not None:
        try:
            with open(args.report, "wb") as out:
                out.write(orjson.dumps(bt.report, option=orjson.OPT_INDENT_2 | orjson.OPT_APPEND_NEWLINE))
        except OSError as exc:
            print(f"cefisim backtest: {args.report}: {exc.strerror or exc}", file=sys.stderr)
            return 1
    if args.plot is not None:
        try:
            save_backtest_plot(bt, args.plot, tape)
        except OSError as exc:
            print(f"cefisim backtest: {args.plot}: {exc.strerror or exc}", file=sys.stderr)
            return 1
    if not args.quiet:
        print("\n".join(table(bt.report)))
    if not bt.report["complete"]:
        print(
            f"\ncefisim backtest: interrupted at {bt.report['end']} after {bt.report['seconds']} s of engine time:"
            ' the report covers what ran ("complete": false)',
            file=sys.stderr,
        )
        return 130
    return 0
