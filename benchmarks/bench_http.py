"""Signed order entry over HTTP, against a bare aiohttp hello-world server in the same run.

    PYTHONPATH=. python benchmarks/bench_http.py [--quick] [--json] [--reps N] [--duration S]
                 [--connections N] [--depth N] [--clock virtual|wall] [--seed N] [--no-inproc]
                 [--loop asyncio|uvloop|both]
    PYTHONPATH=. python benchmarks/bench_http.py --profile [inproc|server] [--profiler py-spy|cprofile]

Servers (each run gets a fresh one, in its own process, on a free loopback port):
  orders  ``python -m cefisim.api.cli.main serve --host 127.0.0.1 --scenario benchmarks/bench_http_scenario.json
          --clock virtual --log-level WARNING``: the server as shipped, with its own GC setting
          (``gc.freeze()`` after loading, collector on), no journal. Virtual clock: engine time stands
          still, the scenario's market maker quotes once at the start and never acts again, so nothing
          runs in the background and every request does the same work (``--clock wall`` to compare).
  hello   ``http_load.py hello-server``: a bare ``web.Application``; ``GET /hello`` returns
          ``{"hello": "world"}`` via ``web.json_response`` (the baseline), ``POST /echo`` checks the HMAC
          signature and echoes the JSON body (the floor for any signed JSON endpoint). Same GC setting.

Load (``benchmarks/http_load.py load``, one process, an ``asyncio.Protocol`` client, collector off):
32 keep-alive HTTP/1.1 connections, one request in flight on each (closed loop, like wrk).
  orders  connection i acts for client i mod 8 of the scenario (ids 200-207, each its own HMAC key),
          places passive LIMIT GTC orders (qty 0.01, seeded side, price 9-208 steps of 1.00 outside
          the market maker's quotes) until it has depth+1 (default 26) open, then alternates DELETE of
          its oldest open order and POST of a new one: a 50/50 mix, the book bounded at ~32 x 25 of our
          orders plus the market maker's 10. Every request is signed for real (base64 HMAC-SHA256 of
          timestamp + METHOD + path + body with the current wall-clock second, one HMAC per request).
  orders16 the orders load with the connections spread over 16 venues of the same server (the default one
          and 15 made by ``POST /_sim/venues`` from the same scenario, docs/venues.md): connection i acts for
          venue i mod 16, two clients per venue; the figure to hold is orders16/orders >= 0.90.
  echo    the same signed order bodies, POST /echo.       hello   GET /hello, no body, no signature.
Per run: warm-up (2 s, --quick 1.5 s) discarded, then a window (10 s, --quick 5 s); responses
completed in the window count. Rate = window responses / window; latency = write of the request to
the parse of its complete response, nearest-rank p50/p99 over every request of the window.
Repetitions: 3 (--quick 1), hello, echo, orders, orders16 (reversed in even repetitions); figures are medians
over repetitions, and the ratio orders/hello is taken per repetition (same conditions), then its
median. Non-2xx responses, REJECTED order records and cancels that did not end CANCELED are counted
over warm-up and window; they should be 0.

The machine has 2 cores: the server and the generator share them (and anything else running). The
CPU seconds each used over the window are printed; ``rps/CPU`` = responses per second of server CPU,
the server's cost per request, which a busy machine disturbs much less than the rate. The generator's
own requests per CPU-second (hello) against the server's show which side would saturate first.

In-process figures (skip with ``--no-inproc``): ``http_load.py inproc`` pushes 30,000 (--quick 10,000)
requests of each kind through aiohttp's real ``RequestHandler`` with in-memory transports, one
connection, and reports process CPU per request (server and client together, no kernel): the cost
of the request path itself, repeatable on a shared machine.

``--profile`` measures nothing: ``inproc`` (default) runs the in-process driver for hello and orders
under py-spy (``--gil``, 250 Hz; cProfile if py-spy is not installed) and prints the hot functions and
a table of microseconds per request by part of the path; ``server`` samples the real server under
the orders load (py-spy ``--gil``, or cProfile with a CPU-time timer).
"""

from __future__ import annotations

import argparse
import collections
import json
import os
import platform
import re
import signal
import socket
import subprocess
import sys
import tempfile
import time
from statistics import median
from typing import Any

HERE = os.path.dirname(os.path.abspath(__file__))
#: an access-log line of cefisim serve's default text format (api/web/server/request_log.py)
ACCESS_LINE = re.compile(r"^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ [A-Z]+ \S+ \d{3} \d+\.\d{3}ms client=\S+ request_id=\S+$")
ROOT = os.path.dirname(HERE)
LOAD = os.path.join(HERE, "http_load.py")
SCENARIO = os.path.join(HERE, "bench_http_scenario.json")
HOST = "127.0.0.1"
VENUES = 16  # the orders16 run: the same load over this many venues of one server (docs/venues.md)

#: cProfile with a CPU-time timer around `python -m cefisim.api.cli.main serve ...`: time the process spent
#: descheduled (2 shared cores) is not charged to whatever frame it happened in.
CPROFILE_CPU = """
import cProfile, runpy, sys, time
out = sys.argv[1]
args = sys.argv[2:]
sys.argv = ["cefisim.api.cli.main"] + (args[2:] if args[:2] == ["-m", "cefisim.api.cli.main"] else args)
prof = cProfile.Profile(time.process_time)
try:
    prof.runcall(runpy.run_module, "cefisim.api.cli.main", run_name="__main__", alter_sys=True)
except SystemExit:
    pass
finally:
    prof.dump_stats(out)
"""

#: (repetitions, window s, warm-up s, in-process requests) for full and --quick runs
FULL = (3, 10.0, 2.0, 30_000)
QUICK = (1, 5.0, 1.5, 10_000)


# --- processes ----------------------------------------------------------------------------------------

#: the suffix of a run on uvloop's event loop (``hello@uvloop``, ``orders@uvloop``)
UVLOOP = "@uvloop"


def with_uvloop(choice: str) -> tuple[str, ...]:
    """The runs ``--loop`` adds on uvloop: hello and orders (``both``: only when uvloop is installed)."""
    if choice == "asyncio":
        return ()
    try:
        import uvloop  # noqa: F401 - only whether it is installed
    except ModuleNotFoundError:
        if choice == "both":
            print("  uvloop is not installed (pip install 'cefisim[fast]'): asyncio runs only")
            return ()
        raise SystemExit("bench_http: --loop uvloop needs uvloop: pip install 'cefisim[fast]'") from None
    return ("hello" + UVLOOP, "orders" + UVLOOP)


def free_port() -> int:
    with socket.socket() as s:
        s.bind((HOST, 0))
        return int(s.getsockname()[1])


def child_env() -> dict[str, str]:
    env = dict(os.environ)
    env["PYTHONPATH"] = os.pathsep.join(p for p in (ROOT, env.get("PYTHONPATH", "")) if p)
    return env


class Server:
    """A server process on a free port; started, waited for, stopped (SIGINT, then kill)."""

    def __init__(self, kind: str, clock: str, prefix: list[str] | None = None, loop: str = "asyncio") -> None:
        self.kind = kind
        self.port = free_port()
        if kind == "hello":
            cmd = [sys.executable, LOAD, "hello-server", "--port", str(self.port), "--scenario", SCENARIO]
            cmd += ["--loop", loop]
        else:
            cmd = [
                "-m",
                "cefisim.api.cli.main",
                "serve",
                "--host",
                HOST,
                "--port",
                str(self.port),
                "--scenario",
                SCENARIO,
                "--clock",
                clock,
                "--log-level",
                "WARNING",
                "--loop",
                loop,
            ]
            cmd = [sys.executable, *(prefix or []), *cmd]
        self.log = tempfile.TemporaryFile()  # noqa: SIM115 - open for the server's life
        self.proc = subprocess.Popen(cmd, cwd=ROOT, env=child_env(), stdout=subprocess.DEVNULL, stderr=self.log)
        deadline = time.monotonic() + 60
        while True:
            if self.proc.poll() is not None:
                self.fail(f"exited with {self.proc.returncode} before listening")
            try:
                socket.create_connection((HOST, self.port), timeout=0.5).close()
                break
            except OSError:
                if time.monotonic() > deadline:
                    self.fail("not listening after 60 s")
                time.sleep(0.05)

    def fail(self, why: str) -> None:
        self.stop()
        self.log.seek(0)
        raise SystemExit(f"bench_http: {self.kind} server {why}:\n{self.log.read().decode(errors='replace')[-3000:]}")

    def stop(self) -> None:
        if self.proc.poll() is None:
            self.proc.send_signal(signal.SIGINT)
            try:
                self.proc.wait(timeout=20)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait()

    def errors(self) -> str:
        """What the server wrote to stderr besides its access log (one line per request, on by
        default as shipped: measured, never an error)."""
        self.log.seek(0)
        text = self.log.read().decode(errors="replace")
        return "".join(line for line in text.splitlines(keepends=True) if not ACCESS_LINE.match(line))


def run_load(server: Server, mode: str, args: argparse.Namespace, duration: float, warmup: float) -> dict[str, Any]:
    mode = mode.partition(UVLOOP)[0]  # hello@uvloop: the hello load, on a server running uvloop
    venues = VENUES if mode == "orders16" else 1  # the orders load spread over 16 venues' clients
    mode = "orders" if mode == "orders16" else mode
    cmd = [
        sys.executable,
        LOAD,
        "load",
        "--port",
        str(server.port),
        "--mode",
        mode,
        "--venues",
        str(venues),
        "--connections",
        str(args.connections),
        "--duration",
        str(duration),
        "--warmup",
        str(warmup),
        "--depth",
        str(args.depth),
        "--scenario",
        SCENARIO,
        "--seed",
        str(args.seed),
        "--server-pid",
        str(server.proc.pid),
    ]
    try:
        done = subprocess.run(
            cmd, cwd=ROOT, env=child_env(), capture_output=True, text=True, timeout=duration + warmup + 60, check=False
        )
    except subprocess.TimeoutExpired:
        server.stop()
        raise SystemExit(f"bench_http: the {mode} load generator did not finish") from None
    if done.returncode != 0:
        server.stop()
        raise SystemExit(f"bench_http: the {mode} load generator failed:\n{done.stderr[-3000:]}")
    return json.loads(done.stdout.strip().splitlines()[-1])


# --- profiling ----------------------------------------------------------------------------------------

#: Where a py-spy sample's time goes: the leaf-most frame of the stack that matches decides.
CATEGORIES: list[tuple[str, str]] = [
    ("Simulation.submit (api/runtime/simulation.py)", "engine: Simulation.submit (place / cancel)"),
    ("signed_client (api/web/server/http.py)", "auth: read body, HMAC verify"),
    ("signed_json (api/web/server/http.py)", "auth: read body, HMAC verify"),
    ("parse_json (api/edge/validate.py)", "validation: parse JSON"),
    ("read_json (api/web/server/http.py)", "validation: parse JSON"),
    ("check_object (api/edge/validate.py)", "validation: check_object"),
    ("_ref (api/web/cefi/orders.py)", "validation: check_object"),
    ("order_record (api/edge/serialize.py)", "serialise: order_record"),
    ("respond (api/web/server/http.py)", "response: orjson + web.Response"),
    ("hello_app.<locals>.hello (http_load.py)", "response: orjson + web.Response"),
    ("_negotiate (api/web/server/middleware.py)", "middleware: version negotiation"),
    ("post_order (api/web/cefi/orders.py)", "handler: own code (command building)"),
    ("delete_order (api/web/cefi/orders.py)", "handler: own code (command building)"),
    (
        "request_middleware.<locals>.serve (api/web/server/middleware.py)",
        "middleware: request id, limits, faults, problems",
    ),
    ("control_guard (api/web/control/plane.py)", "middleware: request id, limits, faults, problems"),
    ("dispatch (api/web/control/faults.py)", "middleware: request id, limits, faults, problems"),
    (
        "_fix_request_current_app.<locals>.impl (aiohttp/web_middlewares.py)",
        "middleware: request id, limits, faults, problems",
    ),
    ("RequestHandler.finish_response (aiohttp/web_protocol.py)", "aiohttp: response headers + write"),
    ("UrlDispatcher.resolve (aiohttp/web_urldispatcher.py)", "aiohttp: routing"),
    ("Application._handle (aiohttp/web_app.py)", "aiohttp: app dispatch"),
    ("RequestHandler.data_received (aiohttp/web_protocol.py)", "aiohttp: parse request, handler task"),
    ("RequestHandler.start (aiohttp/web_protocol.py)", "aiohttp: parse request, handler task"),
    ("RequestHandler._handle_request (aiohttp/web_protocol.py)", "aiohttp: parse request, handler task"),
    ("Conn.", "load generator (client side, in-process only)"),
]


def categorise(frames: list[str]) -> str:
    for fr in reversed(frames):
        for marker, category in CATEGORIES:
            if fr.startswith(marker) if marker.endswith(".") else fr == marker:
                return category
    return "event loop, transport, other"


def profile(args: argparse.Namespace, duration: float, warmup: float) -> int:
    target, tool = args.profile, args.profiler
    if target in ("cprofile", "pyinstrument", "py-spy"):  # run_all.py may pass bench_engine's spelling
        target, tool = "inproc", ("py-spy" if target == "py-spy" else "cprofile")
    spy = os.path.join(os.path.dirname(sys.executable), "py-spy")
    if tool == "auto":
        tool = "py-spy" if os.path.exists(spy) else "cprofile"
    if tool == "py-spy" and not os.path.exists(spy):
        raise SystemExit("bench_http: py-spy is not installed next to this Python (pip install py-spy)")
    out = tempfile.mkdtemp(prefix="bench_http_profile_")
    print(f"bench_http --profile {target} with {tool}; files in {out}")
    if target == "server":
        return profile_server(args, duration, warmup, tool, spy, out)
    n = 20_000 if args.quick else 60_000
    shares: dict[str, dict[str, float]] = {}
    cpu_us: dict[str, float] = {}
    for mode in ("hello", "orders"):
        cmd = [
            sys.executable,
            LOAD,
            "inproc",
            "--mode",
            mode,
            "--requests",
            str(n),
            "--scenario",
            SCENARIO,
            "--depth",
            str(args.depth),
            "--seed",
            str(args.seed),
        ]
        if tool == "cprofile":
            stats_file = os.path.join(out, f"inproc-{mode}.prof")
            done = subprocess.run(
                [*cmd, "--cprofile", stats_file],
                cwd=ROOT,
                env=child_env(),
                capture_output=True,
                text=True,
                timeout=600,
                check=False,
            )
            if done.returncode:
                raise SystemExit(f"bench_http: inproc {mode} failed:\n{done.stderr[-3000:]}")
            result = json.loads(done.stdout.strip().splitlines()[-1])
            print(f"\n== in-process {mode}: {result['cpu_us_per_request']:.1f} us CPU per request under cProfile")
            if mode == "orders":
                import pstats

                st = pstats.Stats(stats_file)
                st.sort_stats("tottime").print_stats(30)
                st.sort_stats("cumulative").print_stats(50)
            continue
        raw = os.path.join(out, f"inproc-{mode}.collapsed")
        drv = subprocess.Popen(
            [*cmd, "--wait-for-go"],
            cwd=ROOT,
            env=child_env(),
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
        )
        assert drv.stdin is not None and drv.stdout is not None
        if drv.stdout.readline().strip() != "ready":
            drv.kill()
            raise SystemExit(f"bench_http: inproc {mode} did not start:\n{drv.communicate()[1][-3000:]}")
        rec = subprocess.Popen(
            [spy, "record", "--pid", str(drv.pid), "--rate", "250", "--gil", "--format", "raw", "--output", raw],
            stdout=subprocess.DEVNULL,
            stderr=subprocess.PIPE,
            text=True,
        )
        time.sleep(1.0)  # let py-spy attach
        drv.stdin.write("go\n")
        drv.stdin.flush()
        stdout, stderr = drv.communicate(timeout=600)
        if drv.returncode:
            raise SystemExit(f"bench_http: inproc {mode} failed:\n{stderr[-3000:]}")
        rec.communicate(timeout=60)
        result = json.loads(stdout.strip().splitlines()[-1])
        cpu_us[mode] = result["cpu_us_per_request"]
        shares[mode] = summarise_collapsed(raw, f"in-process {mode}", show=(mode == "orders"))
    if shares:
        print(
            f"\n== where the CPU of one request goes, in-process (server + client, no kernel), "
            f"us per request = share of py-spy --gil samples x CPU per request "
            f"(hello {cpu_us['hello']:.1f} us, orders {cpu_us['orders']:.1f} us; py-spy adds a little)"
        )
        cats = sorted(
            set(shares["hello"]) | set(shares["orders"]), key=lambda c: -shares["orders"].get(c, 0.0) * cpu_us["orders"]
        )
        print(f"  {'category':<48} {'hello us':>9} {'orders us':>9} {'orders %':>8}")
        for c in cats:
            h, o = shares["hello"].get(c, 0.0), shares["orders"].get(c, 0.0)
            print(f"  {c:<48} {h * cpu_us['hello']:>9.1f} {o * cpu_us['orders']:>9.1f} {100 * o:>7.1f}%")
    return 0


def profile_server(args: argparse.Namespace, duration: float, warmup: float, tool: str, spy: str, out: str) -> int:
    if tool == "cprofile":
        stats_file = os.path.join(out, "server.prof")
        server = Server("orders", args.clock, prefix=["-c", CPROFILE_CPU, stats_file])
        try:
            result = run_load(server, "orders", args, duration, warmup)
        finally:
            server.stop()
        print_result_line("orders (under cProfile)", result)
        import pstats

        st = pstats.Stats(stats_file)
        st.sort_stats("tottime").print_stats(30)
        st.sort_stats("cumulative").print_stats(50)
        return 0
    raw = os.path.join(out, "server.collapsed")
    server = Server("orders", args.clock)
    try:
        rec = subprocess.Popen(
            [
                spy,
                "record",
                "--pid",
                str(server.proc.pid),
                "--rate",
                "200",
                "--gil",
                "--format",
                "raw",
                "--output",
                raw,
                "--duration",
                str(int(warmup + duration)),
            ],
            stdout=subprocess.DEVNULL,
            stderr=subprocess.PIPE,
            text=True,
        )
        result = run_load(server, "orders", args, duration, warmup)
        try:
            _, err = rec.communicate(timeout=30)
        except subprocess.TimeoutExpired:
            rec.kill()
            _, err = rec.communicate()
    finally:
        server.stop()
    print_result_line("orders (under py-spy)", result)
    if not os.path.exists(raw):
        raise SystemExit(f"bench_http: py-spy wrote nothing: {err[-2000:]}")
    shares = summarise_collapsed(raw, "server under load")
    print("\n  share of the server's GIL-holding samples (time in send/recv/epoll is not seen):")
    for c, v in sorted(shares.items(), key=lambda kv: -kv[1]):
        print(f"  {c:<48} {100 * v:>6.1f}%")
    return 0


def summarise_collapsed(path: str, label: str, top: int = 30, show: bool = True) -> dict[str, float]:
    """Print own and inclusive shares per function of py-spy's collapsed stacks; return category shares."""
    own: collections.Counter[str] = collections.Counter()
    incl: collections.Counter[str] = collections.Counter()
    cats: collections.Counter[str] = collections.Counter()
    total = 0
    with open(path) as f:
        for line in f:
            stack, _, count_text = line.rstrip("\n").rpartition(" ")
            if not stack:
                continue
            n = int(count_text)
            frames = [shorten(fr) for fr in stack.split(";") if not fr.startswith(("process ", "thread "))]
            if not frames:
                continue
            total += n
            own[frames[-1]] += n
            for fr in set(frames):
                incl[fr] += n
            cats[categorise(frames)] += n
    total = max(total, 1)
    if show:
        print(f"\n== {label}: {total} py-spy samples holding the GIL")
        print(f"  top {top} by own time:")
        for fr, n in own.most_common(top):
            print(f"  {100 * n / total:5.1f}%  {fr}")
        print(f"  top {top + 20} by inclusive time:")
        for fr, n in incl.most_common(top + 20):
            print(f"  {100 * n / total:5.1f}%  {fr}")
    return {c: n / total for c, n in cats.items()}


def shorten(frame: str) -> str:
    """``func (pkg/file.py:12)`` -> ``func (pkg/file.py)``: lines apart, one function is one entry."""
    name, _, where = frame.partition(" (")
    where = where.rstrip(")")
    file = where.rsplit(":", 1)[0]
    if not file.startswith("/"):  # py-spy already gives package-relative paths
        return f"{name} ({file})"
    parts = file.split("/")
    for anchor in ("site-packages", "api", "engine", "benchmarks"):
        if anchor in parts:
            i = len(parts) - 1 - parts[::-1].index(anchor)
            file = "/".join(parts[i + 1 :] if anchor == "site-packages" else parts[i:])
            break
    else:
        file = parts[-1]
    return f"{name} ({file})"


# --- reporting ------------------------------------------------------------------------------------------


def machine() -> dict[str, Any]:
    sys.path.insert(0, HERE)
    from bench_engine import cpu_name  # one reading of the machine for every benchmark

    cpu = cpu_name()
    import aiohttp

    try:
        load = os.getloadavg()[0]
    except OSError:
        load = float("nan")
    return {
        "python": platform.python_version(),
        "nproc": os.cpu_count(),
        "cpu": cpu,
        "os": f"{platform.system()} {platform.release()}",
        "aiohttp": aiohttp.__version__,
        "loadavg_1min_at_start": round(load, 2),
    }


def print_result_line(label: str, r: dict[str, Any]) -> None:
    srv = r.get("server_cpu")
    per_cpu = r["rps"] / srv if srv else float("nan")
    kinds = "  ".join(f"{k} {v['count']} p50 {v['p50_ms']:.2f} p99 {v['p99_ms']:.2f}" for k, v in r["by_kind"].items())
    print(
        f"  {label:<24} {r['rps']:>8.0f} {r['p50_ms']:>7.2f} {r['p99_ms']:>7.2f} {r['max_ms']:>7.1f} "
        f"{srv if srv is not None else float('nan'):>7.2f} {r['generator_cpu']:>7.2f} {per_cpu:>8.0f}   "
        f"errors {r['non_2xx'] + r['rejected'] + r['unexpected_status']}  ({kinds})",
        flush=True,
    )
    for sample in r["error_samples"]:
        print(f"      ! {sample}")


def run_inproc(mode: str, args: argparse.Namespace, requests: int) -> dict[str, Any]:
    cmd = [
        sys.executable,
        LOAD,
        "inproc",
        "--mode",
        mode,
        "--requests",
        str(requests),
        "--warmup-requests",
        str(max(1000, requests // 10)),
        "--scenario",
        SCENARIO,
        "--depth",
        str(args.depth),
        "--seed",
        str(args.seed),
    ]
    done = subprocess.run(cmd, cwd=ROOT, env=child_env(), capture_output=True, text=True, timeout=600, check=False)
    if done.returncode:
        raise SystemExit(f"bench_http: inproc {mode} failed:\n{done.stderr[-3000:]}")
    return json.loads(done.stdout.strip().splitlines()[-1])


def main(argv: list[str] | None = None) -> int:
    from bench_engine import bench_arguments, parse_bench_arguments

    ap = bench_arguments(
        __doc__,
        "1 repetition of 5 s windows (< 1 min)",
        1,
        gc_on="accepted for run_all.py; the servers keep their own GC setting",
    )
    ap.add_argument("--duration", type=float, default=None, help="measured window per run, s (10, --quick 5)")
    ap.add_argument("--warmup", type=float, default=None, help="discarded warm-up per run, s (2, --quick 1.5)")
    ap.add_argument("--connections", type=int, default=32)
    ap.add_argument("--depth", type=int, default=25, help="open orders each connection keeps")
    ap.add_argument("--clock", choices=("virtual", "wall"), default="virtual")
    ap.add_argument("--no-inproc", action="store_true", help="skip the in-process CPU-per-request figures")
    ap.add_argument(
        "--loop",
        choices=("asyncio", "uvloop", "both"),
        default="both",
        help="the servers' event loop: asyncio (every run), uvloop (hello and orders again on uvloop, "
        "`cefisim[fast]`), both (default: uvloop too when installed)",
    )
    ap.add_argument(
        "--profile",
        nargs="?",
        const="inproc",
        choices=("inproc", "server", "py-spy", "cprofile", "pyinstrument"),
        help="profile instead of measuring: inproc (default: hello and orders through aiohttp's "
        "request handler in one process, no sockets) or server (the real server under load); "
        "py-spy/cprofile/pyinstrument = inproc with that profiler (pyinstrument = cprofile)",
    )
    ap.add_argument(
        "--profiler",
        choices=("auto", "py-spy", "cprofile"),
        default="auto",
        help="auto = py-spy if installed next to this Python, else cProfile",
    )
    args = parse_bench_arguments(ap, argv, "bench_http")
    base_reps, base_duration, base_warmup, inproc_requests = QUICK if args.quick else FULL
    reps: int = args.reps or base_reps
    duration: float = args.duration or base_duration
    warmup: float = args.warmup if args.warmup is not None else base_warmup
    if args.profile:
        return profile(args, duration, warmup)

    mach = machine()
    t_start = time.perf_counter()
    print(
        f"bench_http: Python {mach['python']}, aiohttp {mach['aiohttp']}, {mach['os']}, {mach['nproc']} CPUs "
        f"({mach['cpu']}); load average {mach['loadavg_1min_at_start']} at start"
    )
    print(f"  server and generator share the {mach['nproc']} cores with each other and with whatever else runs")
    print(
        f"  quick={args.quick} reps={reps} (median) warm-up {warmup:g} s + window {duration:g} s per run, "
        f"fresh server per run; {args.connections} keep-alive connections, 1 request in flight each"
    )
    print(
        f"  orders: cefisim serve --clock {args.clock} on bench_http_scenario.json, 8 signed clients, "
        f"POST passive limit / DELETE oldest, 50/50, {args.depth} open per connection"
    )
    print("  echo: signed POST /echo (HMAC checked, JSON echoed) and hello: GET /hello, on a bare aiohttp app")
    print("  GC: servers gc.freeze() after start-up, collector on (as `cefisim serve`); generator collector off")
    print(
        f"  {'run':<24} {'req/s':>8} {'p50 ms':>7} {'p99 ms':>7} {'max ms':>7} {'srv CPU':>7} {'gen CPU':>7} "
        f"{'rps/CPU':>8}"
    )
    kinds = ("hello", "echo", "orders", "orders16", *with_uvloop(args.loop))
    runs: dict[str, list[dict[str, Any]]] = {k: [] for k in kinds}
    for rep in range(reps):
        for kind in kinds if rep % 2 == 0 else kinds[::-1]:
            loop = "uvloop" if kind.endswith(UVLOOP) else "asyncio"
            server = Server("orders" if kind.startswith("orders") else "hello", args.clock, loop=loop)
            try:
                r = run_load(server, kind, args, duration, warmup)
            finally:
                server.stop()
            log = server.errors().strip()
            if log:
                r["error_samples"].append("server stderr: " + log[-500:])
            runs[kind].append(r)
            print_result_line(f"{kind} rep {rep + 1}", r)

    inproc: dict[str, list[float]] = {k: [] for k in kinds[:3]}  # hello, echo, orders
    if not args.no_inproc:
        n = inproc_requests
        print(
            f"  in-process, CPU per request (aiohttp's RequestHandler, in-memory transports, one connection, "
            f"server and client together, no kernel; {n} requests after {max(1000, n // 10)} warm-up):"
        )
        for rep in range(reps):
            line = []
            for kind in inproc:
                r = run_inproc(kind, args, n)
                if r["errors"]:
                    raise SystemExit(f"bench_http: inproc {kind}: {r['errors']} errors: {r['error_samples']}")
                inproc[kind].append(r["cpu_us_per_request"])
                line.append(f"{kind} {r['cpu_us_per_request']:.1f} us")
            print(f"    rep {rep + 1}: " + ", ".join(line), flush=True)

    def med(kind: str, key: str) -> float:
        return median(r[key] for r in runs[kind])

    def per_cpu(r: dict[str, Any]) -> float:
        return r["rps"] / r["server_cpu"] if r.get("server_cpu") else float("nan")

    def ratios(a: str, b: str, f: Any = lambda r: r["rps"]) -> list[float]:
        return [f(x) / f(y) for x, y in zip(runs[a], runs[b], strict=True)]

    order_runs = [r for kind in kinds if kind.startswith("orders") for r in runs[kind]]
    non_2xx = sum(r["non_2xx"] for rs in runs.values() for r in rs)
    rejected = sum(r["rejected"] for r in order_runs)
    unexpected = sum(r["unexpected_status"] for r in order_runs)
    gen_max = max(r["generator_cpu"] for rs in runs.values() for r in rs)
    fig: dict[str, float] = {}
    for kind in kinds:
        fig[f"{kind}_rps"] = med(kind, "rps")
        fig[f"{kind}_p50_ms"] = med(kind, "p50_ms")
        fig[f"{kind}_p99_ms"] = med(kind, "p99_ms")
        fig[f"{kind}_rps_per_server_cpu"] = median(per_cpu(r) for r in runs[kind])
    fig["ratio"] = median(ratios("orders", "hello"))
    fig["ratio_per_server_cpu"] = median(ratios("orders", "hello", per_cpu))
    fig["echo_ratio"] = median(ratios("echo", "hello"))
    fig["venues16_ratio"] = median(ratios("orders16", "orders"))
    if inproc["hello"]:
        for kind in inproc:
            fig[f"inproc_{kind}_cpu_us"] = median(inproc[kind])
        fig["inproc_ratio"] = median(h / o for h, o in zip(inproc["hello"], inproc["orders"], strict=True))
    print(f"\n  medians of {reps} (req/s, p50, p99):")
    for kind in kinds:
        print(
            f"    {kind:<14} {fig[f'{kind}_rps']:>7.0f} req/s  p50 {fig[f'{kind}_p50_ms']:.2f} ms  "
            f"p99 {fig[f'{kind}_p99_ms']:.2f} ms  ({fig[f'{kind}_rps_per_server_cpu']:.0f} req per server CPU-s)"
        )
    print(
        f"  orders/hello: {fig['ratio']:.2f} in req/s (per rep: "
        f"{', '.join(f'{x:.2f}' for x in ratios('orders', 'hello'))}); {fig['ratio_per_server_cpu']:.2f} in req "
        f"per server CPU-second" + (f"; {fig['inproc_ratio']:.2f} in-process CPU" if "inproc_ratio" in fig else "")
    )
    print(f"  echo/hello:   {fig['echo_ratio']:.2f} in req/s (the floor cost of a signed JSON POST on aiohttp)")
    if "orders" + UVLOOP in runs:
        fig["uvloop_ratio"] = median(ratios("orders" + UVLOOP, "hello" + UVLOOP))
        fig["uvloop_orders_over_asyncio_hello"] = median(ratios("orders" + UVLOOP, "hello"))
        fig["uvloop_orders_speedup"] = median(ratios("orders" + UVLOOP, "orders"))
        print(
            f"  uvloop: orders/hello {fig['uvloop_ratio']:.2f} (both on uvloop); orders on uvloop / hello on "
            f"asyncio {fig['uvloop_orders_over_asyncio_hello']:.2f}; orders uvloop / asyncio "
            f"{fig['uvloop_orders_speedup']:.2f} in req/s"
        )
    print(
        f"  orders over {VENUES} venues / over one: {fig['venues16_ratio']:.2f} in req/s (per rep: "
        f"{', '.join(f'{x:.2f}' for x in ratios('orders16', 'orders'))}); target >= 0.90: "
        f"{'met' if fig['venues16_ratio'] >= 0.9 else 'NOT met'}"
    )
    print(
        f"  targets (asyncio): orders/hello >= 0.45: {'met' if fig['ratio'] >= 0.45 else 'NOT met'}; "
        f"orders p99 < 5 ms: {'met' if fig['orders_p99_ms'] < 5 else 'NOT met'}"
    )
    print(f"  errors: {non_2xx} non-2xx, {rejected} REJECTED, {unexpected} orders/cancels in an unexpected state")
    # a figure measured while the server answered with errors (or logged any) is not a figure: fail the run
    server_logs = sum(
        1 for rs in runs.values() for r in rs if any(str(x).startswith("server stderr: ") for x in r["error_samples"])
    )
    failures = non_2xx + rejected + unexpected + server_logs
    verdict = "ok" if failures == 0 else "FAIL"
    print(
        f"  verdict: {verdict} ({non_2xx + rejected + unexpected} error responses, {server_logs} runs whose "
        "server logged to stderr)"
    )
    gen_cap = median(r["rps"] / r["generator_cpu"] for r in runs["hello"] if r["generator_cpu"])
    fig["generator_rps_per_cpu_hello"] = gen_cap
    first = "server" if gen_cap > fig["hello_rps_per_server_cpu"] else "GENERATOR"
    print(
        f"  generator: {gen_cap:.0f} hello req per generator CPU-second vs {fig['hello_rps_per_server_cpu']:.0f} "
        f"per server CPU-second: with a core each, the {first} saturates first"
    )
    if gen_max > 0.9:
        print(f"  warning: the generator used up to {gen_max:.2f} CPU: it may have limited a run")
    total_s = time.perf_counter() - t_start
    print(f"  total {total_s:.0f} s", flush=True)
    if args.json:
        doc = {
            **{k: round(v, 3) for k, v in fig.items()},
            "errors": non_2xx + rejected + unexpected,
            "server_logs": server_logs,
            "verdict": verdict,
            "non_2xx": non_2xx,
            "rejected": rejected,
            "unexpected_status": unexpected,
            "quick": args.quick,
            "reps": reps,
            "duration_s": duration,
            "warmup_s": warmup,
            "connections": args.connections,
            "depth": args.depth,
            "clock": args.clock,
            "gc": "servers: gc.freeze() after start-up, collector on; generator: off",
            "generator_cpu_max": round(gen_max, 3),
            "machine": mach,
            "runs": {
                k: [
                    {
                        key: r[key]
                        for key in (
                            "rps",
                            "p50_ms",
                            "p99_ms",
                            "max_ms",
                            "server_cpu",
                            "generator_cpu",
                            "responses",
                            "by_kind",
                        )
                    }
                    for r in rs
                ]
                for k, rs in runs.items()
            },
            "inproc_cpu_us": inproc,
            "total_s": round(total_s, 1),
        }
        print(json.dumps(doc, sort_keys=True))
    return 0 if verdict == "ok" else 1


if __name__ == "__main__":
    sys.exit(main())
