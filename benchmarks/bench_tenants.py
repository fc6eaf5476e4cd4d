"""Tenants on one server: signed reads of some venues while another venue does heavy work.

    PYTHONPATH=. python benchmarks/bench_tenants.py [--quick] [--json] [--rate R] [--readers N] [--seed N]
                 [--venues N] [--journal] [--only OP[,OP...]] [--profile OP]

One real server: ``cefisim serve --port 0 --ready-file F --clock virtual --data-dir DIR`` on
``benchmarks/bench_http_scenario.json``, in its own process, run through this file's ``probe-serve``
(below) so that it reports how late its event loop ran. No journal unless ``--journal``.

Readers (``readers``, a process of their own, so that the heavy answers the controller reads never
delay them): ``--readers`` venues (default 4) made by ``POST /_sim/venues`` from the same scenario,
and a steady open-loop rate (``--rate``, default 100 requests/s over all of them) of signed ``GET
/v1/cefi/balances`` and ``GET /v1/cefi/orders/all`` alternately, each for the next reader venue's
client in turn, on keep-alive connections (a new one whenever every open one is busy). Each request
is scheduled at its own instant; its latency runs from that instant to its complete response, so a
request that waited behind a stalled server counts the wait (no coordinated omission). Every answer
must be 200.

Heavy operations, one at a time, each on a venue no reader uses; the idle window first:
  idle            nothing but the readers (quick 3 s, full 10 s)
  create          ``POST /_sim/venues`` of a recorded market (``scenarios/recorded_busy.json`` on a
                  5.4 MB recording made here by ``cefisim data record scenarios/busy_market.json
                  --until +360``, 44,958 events), with a small create posted 0.2 s after it: how long
                  that other team's create waits is ``small_create_ms``
  advance_rec     ``POST .../clock/advance`` 360 s on that recorded venue (every recorded event)
  busy            a venue of ``scenarios/busy_market.json`` (no end: a market maker requoting ten levels
                  a side every 0.2 s, two noise takers) advanced 300 s: ~31,800 retained orders
  lag_on          ``POST .../faults/venue {"read_lag_ms": 1000}`` on that venue, then one signed read
                  of it (the copy is taken on first use), then ``DELETE .../faults/venue``
  snapshot_get    ``GET .../snapshot`` of that venue (the document ``restore`` posts back)
  restore         ``POST .../snapshot`` of it
  advance_30d     ``POST .../clock/advance`` 30 days (three advances of 10 days: the largest one
                  takes 31) on a venue of the bench scenario whose market maker requotes every
                  600 s (quick) or 60 s (full)
  delete_20       ``DELETE /_sim/venues/{id}`` with 20 venues on the server (small venues added)
  delete_200      the same with 200 venues (full: 3 deletes each)

Figures per operation: the operation's own time; the readers' p50, p99 and max latency over the
requests scheduled while it ran; the longest loop stall (how late a task that sleeps 1 ms woke),
with the CPU time the loop's thread and the whole process used during that stall (a figure the
machine's load disturbs much less than the wall time); and the longest cyclic-GC collection, with
its generation. Targets (issue #39): no stall over 50 ms, readers' p99 at most 20 ms.

``probe-serve STALLS -- ARGS`` runs ``cefisim serve ARGS`` in this process with an event-loop policy
that starts the probe task on the server's loop and a ``gc.callbacks`` hook; each stall of 2 ms or more
and each collection of 1 ms or more is one line of ``STALLS``, stamped with ``time.monotonic_ns()``
(one clock for every process of the machine), which the controller windows by operation.

``--profile OP`` measures nothing: it records the server with py-spy (every thread, 500 Hz) while OP
runs and prints the hottest stacks of its loop thread and of any other thread.
"""

from __future__ import annotations

import argparse
import asyncio
import collections
import gc
import json
import os
import signal
import subprocess
import sys
import tempfile
import threading
import time
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import Any

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)
sys.path.insert(0, HERE)

from bench_http import child_env, machine, shorten  # noqa: E402 - the benchmarks' own helpers
from http_load import Signer, create_venue, percentile  # noqa: E402

SCENARIO = os.path.join(HERE, "bench_http_scenario.json")
BUSY = os.path.join(ROOT, "scenarios", "busy_market.json")
RECORDED = os.path.join(ROOT, "scenarios", "recorded_busy.json")
HOST = "127.0.0.1"
READ_PATHS = (b"/v1/cefi/balances", b"/v1/cefi/orders/all")
STALL_NS = 2_000_000  # a probe wake-up later than this is written down
GC_NS = 1_000_000  # so is a collection longer than this
PROBE_SLEEP_S = 0.001
OPS = (
    "idle",
    "create",
    "advance_rec",
    "busy",
    "lag_on",
    "snapshot_get",
    "restore",
    "advance_30d",
    "delete_20",
    "delete_200",
)
#: the busy venue's own client (the create mints its key and secret in place of these)
TENANT = {
    "id": "100",
    "mnemonic": "tenant",
    "key": "00000000-0000-4000-8000-000000000100",
    "secret": "tenant-secret",
    "balances": {"BTC": "10", "USD": "1000000"},
}
STALL_TARGET_MS = 50.0
P99_TARGET_MS = 20.0


# --- the probed server -----------------------------------------------------------------------------------


def probe_serve(stalls: str, argv: list[str]) -> int:
    """``cefisim serve`` with a loop-lag probe and a GC hook writing to ``stalls`` (see the docstring)."""
    out = open(stalls, "a", buffering=1)  # noqa: SIM115 - open for the server's life, a line at a time
    main_thread = threading.get_ident()
    started: dict[int, int] = {}

    def on_gc(phase: str, info: dict[str, int]) -> None:
        now = time.monotonic_ns()
        if phase == "start":
            started[threading.get_ident()] = now
            return
        took = now - started.pop(threading.get_ident(), now)
        if took >= GC_NS:
            where = "loop" if threading.get_ident() == main_thread else "other"
            out.write(f"gc {now} {took} {info['generation']} {where}\n")

    async def probe() -> None:
        while True:
            t0, c0, p0 = time.monotonic_ns(), time.thread_time_ns(), time.process_time_ns()
            await asyncio.sleep(PROBE_SLEEP_S)
            t1 = time.monotonic_ns()
            late = t1 - t0 - int(PROBE_SLEEP_S * 1e9)
            if late >= STALL_NS:
                out.write(f"stall {t1} {late} {time.thread_time_ns() - c0} {time.process_time_ns() - p0}\n")

    class Probed(asyncio.DefaultEventLoopPolicy):
        def new_event_loop(self) -> asyncio.AbstractEventLoop:
            loop = super().new_event_loop()
            tasks = []  # a reference to the task for the loop's life
            loop.call_soon(lambda: tasks.append(loop.create_task(probe())))
            return loop

    gc.callbacks.append(on_gc)
    asyncio.set_event_loop_policy(Probed())
    from cefisim.api.cli.main import main as cefisim_main

    return cefisim_main(["serve", *argv])


class Server:
    """The probed server in its own process, on a free port (its ready file says which)."""

    def __init__(self, workdir: Path, args: argparse.Namespace) -> None:
        self.stalls = workdir / "stalls.txt"
        ready = workdir / "ready.json"
        cmd = [
            sys.executable,
            __file__,
            "probe-serve",
            str(self.stalls),
            "--",
            "--port",
            "0",
            "--host",
            HOST,
            "--ready-file",
            str(ready),
            "--scenario",
            SCENARIO,
            "--clock",
            "virtual",
            "--data-dir",
            str(workdir / "data"),
            "--max-venues",
            str(args.venues + 16),
            "--quiet",
            "--log-level",
            "WARNING",
        ]
        if args.journal:
            cmd += ["--journal", str(workdir / "journal.jsonl")]
        self.log = tempfile.TemporaryFile()  # noqa: SIM115 - open for the server's life
        self.proc = subprocess.Popen(cmd, cwd=ROOT, env=child_env(), stdout=subprocess.DEVNULL, stderr=self.log)
        deadline = time.monotonic() + 60
        while not ready.exists():
            if self.proc.poll() is not None or time.monotonic() > deadline:
                self.fail("did not start")
            time.sleep(0.05)
        self.port = int(json.loads(ready.read_text())["url"].rsplit(":", 1)[1])

    def fail(self, why: str) -> None:
        self.stop()
        self.log.seek(0)
        raise SystemExit(f"bench_tenants: the server {why}:\n{self.log.read().decode(errors='replace')[-3000:]}")

    def stop(self) -> None:
        if self.proc.poll() is None:
            self.proc.send_signal(signal.SIGINT)
            try:
                self.proc.wait(timeout=30)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait()

    def errors(self) -> str:
        self.log.seek(0)
        return self.log.read().decode(errors="replace").strip()

    def probe_lines(self) -> tuple[list[tuple[int, int, int, int]], list[tuple[int, int, int, str]]]:
        """(stalls: end ns, late ns, loop-thread CPU ns, process CPU ns; collections: end ns, ns, gen, thread)."""
        stalls, collections_ = [], []
        for line in self.stalls.read_text().splitlines():
            kind, *f = line.split()
            if kind == "stall":
                stalls.append((int(f[0]), int(f[1]), int(f[2]), int(f[3])))
            elif kind == "gc":
                collections_.append((int(f[0]), int(f[1]), int(f[2]), f[3]))
        return stalls, collections_


# --- HTTP, as little of it as a benchmark needs ------------------------------------------------------------


async def read_response(reader: asyncio.StreamReader) -> tuple[int, bytes]:
    head = await reader.readuntil(b"\r\n\r\n")
    status = int(head[9:12])
    length = 0
    for line in head.split(b"\r\n"):
        if line.lower().startswith(b"content-length:"):
            length = int(line.split(b":", 1)[1])
    return status, await reader.readexactly(length)


async def call(port: int, method: str, path: str, body: Any = None, headers: bytes = b"") -> tuple[int, Any]:
    """One request on a connection of its own: (status, JSON answer or None)."""
    payload = b"" if body is None else json.dumps(body).encode()
    reader, writer = await asyncio.open_connection(HOST, port, limit=1 << 20)
    writer.write(
        f"{method} {path} HTTP/1.1\r\nHost: {HOST}:{port}\r\nContent-Type: application/json\r\n"
        f"Content-Length: {len(payload)}\r\nConnection: close\r\n".encode()
        + headers
        + b"\r\n"
        + payload
    )
    status, raw = await read_response(reader)
    writer.close()
    return status, json.loads(raw) if raw else None


async def ok(port: int, method: str, path: str, body: Any = None, headers: bytes = b"") -> Any:
    status, doc = await call(port, method, path, body, headers)
    if status >= 300:
        raise SystemExit(f"bench_tenants: {method} {path} -> {status}: {str(doc)[:300]}")
    return doc


def signed(port: int, venue: dict[str, Any]) -> Signer:
    client = venue["clients"][0]
    return Signer(client["client_id"], client["key"], client["secret"], f"{HOST}:{port}")


# --- the readers ------------------------------------------------------------------------------------------


async def run_readers(port: int, keys: list[list[str]], rate: float, out: str) -> None:
    """Open-loop signed reads until stdin closes; one line per request to ``out``."""
    loop = asyncio.get_running_loop()
    signers = [Signer(c, k, s, f"{HOST}:{port}") for c, k, s in keys]
    idle: list[list[tuple[asyncio.StreamReader, asyncio.StreamWriter]]] = [[] for _ in signers]
    done: list[tuple[int, int, int, int]] = []
    stop = loop.create_future()
    loop.add_reader(sys.stdin.fileno(), lambda: stop.done() or stop.set_result(None))

    async def one(n: int, due: int) -> None:
        i = n % len(signers)
        path = READ_PATHS[(n // len(signers)) % len(READ_PATHS)]
        signer = signers[i]
        signer.stamp()
        conn = idle[i].pop() if idle[i] else await asyncio.open_connection(HOST, port)
        reader, writer = conn
        writer.write(b"GET " + path + b" HTTP/1.1\r\n" + signer.headers(b"GET" + path, b"") + b"\r\n")
        try:
            status, _ = await read_response(reader)
        except (OSError, asyncio.IncompleteReadError):
            status = 0
        else:
            idle[i].append(conn)
        done.append((due, time.monotonic_ns(), status, i))

    gap = int(1e9 / rate)
    due = time.monotonic_ns()
    n = 0
    pending: set[asyncio.Task[None]] = set()
    while not stop.done():
        delay = (due - time.monotonic_ns()) / 1e9
        if delay > 0:
            await asyncio.sleep(delay)
        task = asyncio.create_task(one(n, due))
        pending.add(task)
        task.add_done_callback(pending.discard)
        n += 1
        due += gap
    await asyncio.gather(*pending, return_exceptions=True)
    with open(out, "w") as f:
        f.writelines(" ".join(map(str, record)) + "\n" for record in done)


class Readers:
    def __init__(self, port: int, keys: list[list[str]], rate: float, workdir: Path) -> None:
        self.out = workdir / "reads.txt"
        spec = workdir / "reader_keys.json"
        spec.write_text(json.dumps(keys))
        cmd = [sys.executable, __file__, "readers", str(port), str(spec), str(rate), str(self.out)]
        self.proc = subprocess.Popen(cmd, cwd=ROOT, env=child_env(), stdin=subprocess.PIPE)

    def stop(self) -> list[tuple[int, int, int, int]]:
        assert self.proc.stdin is not None
        self.proc.stdin.close()
        self.proc.wait(timeout=60)
        return [tuple(map(int, line.split())) for line in self.out.read_text().splitlines()]  # type: ignore[misc]


# --- the operations ---------------------------------------------------------------------------------------


def scenario_doc(path: str, **changes: Any) -> dict[str, Any]:
    with open(path) as f:
        doc = json.load(f)
    doc.pop("$schema", None)
    doc.update(changes)
    return doc


class Run:
    """The controller's state: the server, what it made, and each operation's window."""

    def __init__(self, args: argparse.Namespace, server: Server, workdir: Path) -> None:
        self.args = args
        self.server = server
        self.port = server.port
        self.workdir = workdir
        self.windows: list[tuple[str, int, int, dict[str, Any]]] = []
        self.small = {"scenario": scenario_doc(SCENARIO)}
        self.extra: list[str] = []  # small venues made to fill the server
        self.count = 1 + args.readers  # venues on the server, the default one included

    async def timed(self, name: str, work: Callable[[], Awaitable[dict[str, Any] | None]]) -> None:
        if self.args.only and name not in self.args.only and name != "idle":
            return
        spy = start_spy(self.server, self.workdir, name) if self.args.profile == name else None
        note(f"  {name} ...")
        t0 = time.monotonic_ns()
        info = await work() or {}
        t1 = time.monotonic_ns()
        if spy is not None:
            stop_spy(spy)
        info["op_ms"] = (t1 - t0) / 1e6
        self.windows.append((name, t0, t1, info))
        await asyncio.sleep(0.3)  # the readers queued behind it drain before the next one

    async def create(self, body: dict[str, Any]) -> dict[str, Any]:
        doc = await ok(self.port, "POST", "/_sim/venues", body)
        self.count += 1
        return doc

    async def fill_to(self, count: int) -> None:
        """Small venues until the server runs ``count`` venues (not timed)."""
        while self.count < count:
            self.extra.append((await self.create(self.small))["id"])

    async def idle(self) -> None:
        await asyncio.sleep(3.0 if self.args.quick else 10.0)

    async def op_create(self) -> dict[str, Any]:
        body = {"scenario": scenario_doc(RECORDED)}
        body["scenario"]["recorded"][0]["file"] = "rec.jsonl"
        big = asyncio.create_task(self.create(body))
        await asyncio.sleep(0.2)
        t0 = time.monotonic_ns()
        await self.create(self.small)
        small_ms = (time.monotonic_ns() - t0) / 1e6
        self.recorded = await big
        return {"small_create_ms": small_ms}

    async def op_advance_rec(self) -> None:
        await ok(self.port, "POST", f"{self.recorded['control']}/clock/advance", {"seconds": 360})

    async def op_busy(self) -> dict[str, Any]:
        doc = scenario_doc(BUSY)
        doc["clients"].append(dict(TENANT))  # a client of its own, for the lagged read
        self.busy = await self.create({"scenario": doc})
        await ok(self.port, "POST", f"{self.busy['control']}/clock/advance", {"seconds": 300})
        health = await ok(self.port, "GET", f"{self.busy['control']}/health")
        return {"retained_orders": health["retained_orders"]}

    async def op_lag_on(self) -> dict[str, Any]:
        control = self.busy["control"]
        await ok(self.port, "POST", f"{control}/faults/venue", {"read_lag_ms": 1000})
        signer = signed(self.port, self.busy)
        signer.stamp()
        path = "/v1/cefi/orders/all"
        t0 = time.monotonic_ns()
        await ok(self.port, "GET", path, headers=signer.headers(b"GET" + path.encode(), b"").split(b"\r\n", 1)[1])
        first_read_ms = (time.monotonic_ns() - t0) / 1e6
        await ok(self.port, "DELETE", f"{control}/faults/venue")
        return {"first_lagged_read_ms": first_read_ms}

    async def op_snapshot_get(self) -> dict[str, Any]:
        self.snapshot = await ok(self.port, "GET", f"{self.busy['control']}/snapshot")
        return {"snapshot_objects": len(self.snapshot["objects"])}

    async def op_restore(self) -> None:
        await ok(self.port, "POST", f"{self.busy['control']}/snapshot", self.snapshot)

    async def op_advance_30d(self) -> dict[str, Any]:
        doc = scenario_doc(SCENARIO)
        doc["agents"][0]["interval"] = "600" if self.args.quick else "60"
        venue = await self.create({"scenario": doc})
        events = 0
        for days in (10, 10, 10):
            answer = await ok(self.port, "POST", f"{venue['control']}/clock/advance", {"seconds": days * 86400})
            events += answer["events"]
        return {"events": events}

    async def op_delete(self, count: int) -> dict[str, Any]:
        times = []
        for _ in range(1 if self.args.quick else 3):
            t0 = time.monotonic_ns()
            await ok(self.port, "DELETE", f"/_sim/venues/{self.extra.pop()}")
            times.append((time.monotonic_ns() - t0) / 1e6)
            self.count -= 1
            await asyncio.sleep(0.2)
        return {"venues": count, "delete_ms": [round(t, 1) for t in times]}


async def controller(args: argparse.Namespace, server: Server, workdir: Path) -> tuple[Run, list[Any]]:
    run = Run(args, server, workdir)
    port = server.port
    reader_venues = [await create_venue(f"{HOST}:{port}", SCENARIO) for _ in range(args.readers)]
    keys = [list(v[0]) for v in reader_venues]
    readers = Readers(port, keys, args.rate, workdir)
    try:
        await asyncio.sleep(1.0)  # connections open, the readers settle
        await run.timed("idle", run.idle)
        await run.timed("create", run.op_create)
        if not args.only or "advance_rec" in args.only:
            await run.timed("advance_rec", run.op_advance_rec)
        await run.timed("busy", run.op_busy)
        await run.timed("lag_on", run.op_lag_on)
        await run.timed("snapshot_get", run.op_snapshot_get)
        await run.timed("restore", run.op_restore)
        await run.timed("advance_30d", run.op_advance_30d)
        for count, name in ((20, "delete_20"), (args.venues, "delete_200")):
            if args.only and name not in args.only:
                continue
            deletes = 1 if args.quick else 3
            note(f"  filling the server to {count + deletes} venues ...")
            await run.fill_to(count + deletes)
            await asyncio.sleep(0.3)
            await run.timed(name, lambda count=count: run.op_delete(count))
    finally:
        reads = readers.stop()
    return run, reads


# --- figures ----------------------------------------------------------------------------------------------


def figures(run: Run, reads: list[Any]) -> dict[str, dict[str, Any]]:
    stalls, collections_ = run.server.probe_lines()
    out: dict[str, dict[str, Any]] = {}
    for name, t0, t1, info in run.windows:
        lat = sorted(done - due for due, done, _, _ in reads if t0 <= due <= t1)
        bad = sum(1 for due, _, status, _ in reads if t0 <= due <= t1 and status != 200)
        # a stall ends at its line's stamp and began ``late`` earlier: it counts if it overlaps the window
        mine = [s for s in stalls if s[0] >= t0 and s[0] - s[1] <= t1]
        worst = max(mine, key=lambda s: s[1], default=(0, 0, 0, 0))
        gcs = [c for c in collections_ if t0 <= c[0] <= t1 + 300_000_000]
        worst_gc = max(gcs, key=lambda c: c[1], default=(0, 0, -1, ""))
        out[name] = {
            **info,
            "reads": len(lat),
            "non_200": bad,
            "p50_ms": percentile(lat, 50),
            "p99_ms": percentile(lat, 99),
            "max_ms": lat[-1] / 1e6 if lat else float("nan"),
            "stall_ms": worst[1] / 1e6,
            "stall_loop_cpu_ms": worst[2] / 1e6,
            "stall_process_cpu_ms": worst[3] / 1e6,
            "stalls_over_50ms": sum(1 for s in mine if s[1] > 50_000_000),
            "gc_max_ms": worst_gc[1] / 1e6,
            "gc_max_generation": worst_gc[2],
            "gc_max_thread": worst_gc[3],
            "gc_full_collections": sum(1 for c in gcs if c[2] == 2),
        }
    return out


def print_table(figs: dict[str, dict[str, Any]]) -> None:
    print(
        f"  {'operation':<13} {'op ms':>8} {'reads':>5} {'p50 ms':>7} {'p99 ms':>7} {'max ms':>7} "
        f"{'stall ms':>8} {'loop CPU':>8} {'proc CPU':>8} {'GC max':>7}  notes"
    )
    for name, f in figs.items():
        extra = {k: v for k, v in f.items() if k not in ROW_KEYS}
        gc_note = f"gen{f['gc_max_generation']}/{f['gc_max_thread']}" if f["gc_max_generation"] >= 0 else ""
        print(
            f"  {name:<13} {f['op_ms']:>8.0f} {f['reads']:>5} {f['p50_ms']:>7.2f} {f['p99_ms']:>7.2f} "
            f"{f['max_ms']:>7.1f} {f['stall_ms']:>8.1f} {f['stall_loop_cpu_ms']:>8.1f} "
            f"{f['stall_process_cpu_ms']:>8.1f} {f['gc_max_ms']:>7.1f}  {gc_note} "
            + " ".join(f"{k}={v}" for k, v in extra.items()),
            flush=True,
        )


ROW_KEYS = (
    "op_ms",
    "reads",
    "non_200",
    "p50_ms",
    "p99_ms",
    "max_ms",
    "stall_ms",
    "stall_loop_cpu_ms",
    "stall_process_cpu_ms",
    "stalls_over_50ms",
    "gc_max_ms",
    "gc_max_generation",
    "gc_max_thread",
    "gc_full_collections",
)


# --- profiling ---------------------------------------------------------------------------------------------


def start_spy(server: Server, workdir: Path, name: str) -> tuple[subprocess.Popen[str], Path]:
    spy = os.path.join(os.path.dirname(sys.executable), "py-spy")
    if not os.path.exists(spy):
        raise SystemExit("bench_tenants: py-spy is not installed next to this Python (pip install py-spy)")
    raw = workdir / f"{name}.collapsed"
    rec = subprocess.Popen(
        [spy, "record", "--pid", str(server.proc.pid), "--rate", "500", "--threads", "--format", "raw", "-o", str(raw)],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
        text=True,
    )
    time.sleep(1.0)  # let py-spy attach
    return rec, raw


def stop_spy(spy: tuple[subprocess.Popen[str], Path]) -> None:
    rec, raw = spy
    rec.send_signal(signal.SIGINT)
    rec.communicate(timeout=60)
    threads: dict[str, collections.Counter[str]] = collections.defaultdict(collections.Counter)
    inclusive: dict[str, collections.Counter[str]] = collections.defaultdict(collections.Counter)
    totals: collections.Counter[str] = collections.Counter()
    for line in raw.read_text().splitlines():
        stack, _, count = line.rpartition(" ")
        frames = stack.split(";")
        thread = frames[0] if frames and frames[0].startswith("thread ") else "thread ?"
        body = [shorten(f) for f in frames if not f.startswith(("process ", "thread "))]
        if not body:
            continue
        n = int(count)
        totals[thread] += n
        threads[thread][body[-1]] += n
        for frame in set(body):
            inclusive[thread][frame] += n
    for thread, total in totals.most_common():
        print(f"\n  py-spy {thread}: {total} samples at 500 Hz; own time, then inclusive")
        for frame, n in threads[thread].most_common(12):
            print(f"    {100 * n / total:5.1f}%  {frame}")
        for frame, n in inclusive[thread].most_common(25):
            print(f"    {100 * n / total:5.1f}%  {frame}")


# --- main --------------------------------------------------------------------------------------------------


def note(text: str) -> None:
    """Progress, on a terminal only (the table and the JSON stay clean)."""
    if sys.stderr.isatty():
        print(text, file=sys.stderr, flush=True)


def make_recording(data: Path) -> None:
    data.mkdir()
    out = data / "rec.jsonl"
    subprocess.run(
        [sys.executable, "-m", "cefisim.api.cli.main", "data", "record", BUSY, "--until", "+360", "--out", str(out)],
        cwd=ROOT,
        env=child_env(),
        check=True,
        stdout=subprocess.DEVNULL,
    )


def main(argv: list[str] | None = None) -> int:
    argv = list(sys.argv[1:] if argv is None else argv)
    if argv[:1] == ["probe-serve"]:
        return probe_serve(argv[1], argv[3:])
    if argv[:1] == ["readers"]:
        port, spec, rate, out = argv[1:5]
        asyncio.run(run_readers(int(port), json.loads(Path(spec).read_text()), float(rate), out))
        return 0
    from bench_engine import bench_arguments, parse_bench_arguments

    ap = bench_arguments(
        __doc__, "1 delete per size, shorter idle window (< 1 min)", 1, gc_on="accepted for run_all.py"
    )
    ap.add_argument("--rate", type=float, default=100.0, help="signed reads per second, all reader venues together")
    ap.add_argument("--readers", type=int, default=4, help="venues the readers read")
    ap.add_argument("--venues", type=int, default=200, help="venues on the server for delete_200")
    ap.add_argument("--journal", action="store_true", help="run the server with --journal")
    ap.add_argument("--only", default="", help="comma-separated operations to run (idle always runs)")
    ap.add_argument("--profile", choices=OPS, default=None, help="py-spy the server during this operation")
    args = parse_bench_arguments(ap, argv, "bench_tenants")
    args.only = tuple(filter(None, args.only.split(",")))
    if args.profile and not args.only:
        args.only = (args.profile,)
    mach = machine()
    t_start = time.perf_counter()
    print(
        f"bench_tenants: Python {mach['python']}, aiohttp {mach['aiohttp']}, {mach['os']}, {mach['nproc']} CPUs "
        f"({mach['cpu']}); load average {mach['loadavg_1min_at_start']} at start"
    )
    print(
        f"  one cefisim serve (virtual clock{', journal' if args.journal else ''}), {args.readers} reader venues, "
        f"{args.rate:g} signed reads/s (balances, orders/all), open loop; one heavy operation at a time"
    )
    with tempfile.TemporaryDirectory(prefix="bench_tenants_") as tmp:
        workdir = Path(tmp)
        note("  recording 360 s of scenarios/busy_market.json ...")
        make_recording(workdir / "data")
        server = Server(workdir, args)
        try:
            run, reads = asyncio.run(controller(args, server, workdir))
        finally:
            server.stop()
        errors = server.errors()
        figs = figures(run, reads)
    print_table(figs)
    non_200 = sum(f["non_200"] for f in figs.values())
    worst_stall = max((f["stall_ms"] for f in figs.values()), default=0.0)
    worst_p99 = max((f["p99_ms"] for f in figs.values() if f["reads"]), default=0.0)
    verdict = "ok" if non_200 == 0 and not errors else "FAIL"
    print(
        f"  targets: longest stall {worst_stall:.0f} ms (<= {STALL_TARGET_MS:.0f}: "
        f"{'met' if worst_stall <= STALL_TARGET_MS else 'NOT met'}); worst readers' p99 {worst_p99:.1f} ms "
        f"(<= {P99_TARGET_MS:.0f}: {'met' if worst_p99 <= P99_TARGET_MS else 'NOT met'})"
    )
    if errors:
        print(f"  server stderr: {errors[-1000:]}")
    print(f"  verdict: {verdict} ({non_200} reads not 200); total {time.perf_counter() - t_start:.0f} s", flush=True)
    if args.json:
        doc = {
            "operations": figs,
            "worst_stall_ms": round(worst_stall, 1),
            "worst_p99_ms": round(worst_p99, 2),
            "verdict": verdict,
            "quick": args.quick,
            "rate": args.rate,
            "readers": args.readers,
            "journal": args.journal,
            "machine": mach,
            "total_s": round(time.perf_counter() - t_start, 1),
        }
        print(json.dumps(doc, sort_keys=True))
    return 0 if verdict == "ok" else 1


if __name__ == "__main__":
    sys.exit(main())
