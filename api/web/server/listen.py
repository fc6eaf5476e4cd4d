"""Run the app on a TCP port until SIGINT or SIGTERM: the real port, the ready file, clear failures.

Contract: :func:`run` binds ``host:port`` (``port`` 0 picks a free one) and calls ``on_listening(url)``
with the address actually bound, once the socket accepts connections; with ``ready_file`` it then
writes ``{"url": ..., "pid": ...}`` there (to a temporary name, then renamed, so a reader never sees
half a file) and removes it on the way out. A port that cannot be bound (in use, not allowed, no such
address) is one line on stderr and exit status 2, never a traceback. SIGINT and SIGTERM stop the
server cleanly (the app's cleanup runs: the journal is closed) and the status is 0.

While it serves, the interpreter's thread switch interval is :data:`SWITCH_INTERVAL_S` (1 ms, not
Python's 5 ms), given back on the way out. Work the server runs in a thread (a venue being created
from a big document, ``api/web/control/isolated_venues.py``) holds the GIL between switches, and the
event loop waits for it at every wake-up: each socket read and write of every other venue's requests.
A shorter interval bounds that wait (a thread with nothing to compete with never switches, so it costs
nothing then); docs/benchmarks.md (bench_tenants) has the figures.
"""

from __future__ import annotations

import asyncio
import contextlib
import os
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

import orjson
from aiohttp import web

#: the interpreter's thread switch interval while the server serves (see the module docstring)
SWITCH_INTERVAL_S = 0.001


def _url(host: str, port: int) -> str:
    return f"http://[{host}]:{port}" if ":" in host else f"http://{host}:{port}"


def write_ready_file(path: Path, url: str) -> None:
    """``{"url": url, "pid": N}`` at ``path``, atomically."""
    tmp = path.with_name(f".{path.name}.{os.getpid()}.tmp")
    tmp.write_bytes(orjson.dumps({"url": url, "pid": os.getpid()}))
    os.replace(tmp, path)


def run(
    app: web.Application,
    host: str,
    port: int,
    on_listening: Callable[[str], None],
    ready_file: Path | None = None,
    new_loop: Callable[[], asyncio.AbstractEventLoop] = asyncio.new_event_loop,
    **handler: Any,
) -> int:
    """Serve ``app`` until a signal; the exit status (2 when the address cannot be bound).
    ``new_loop`` makes the event loop it serves on (``api/cli/event_loop.py``); ``handler``:
    aiohttp request-handler settings (``keepalive_timeout``, ...)."""
    loop = new_loop()
    asyncio.set_event_loop(loop)
    runner = web.AppRunner(app, handle_signals=True, access_log=None, **handler)
    wrote = False
    switch_interval = sys.getswitchinterval()
    sys.setswitchinterval(SWITCH_INTERVAL_S)
    try:
        loop.run_until_complete(runner.setup())
        site = web.TCPSite(runner, host, port)
        try:
            loop.run_until_complete(site.start())
        except OSError as exc:
            print(f"cefisim: cannot listen on {host}:{port}: {exc.strerror or exc}", file=sys.stderr)
            return 2
        bound = runner.addresses[0][1]  # the port the kernel gave (the one asked for, unless 0)
        url = _url(host, bound)
        on_listening(url)
        if ready_file is not None:
            try:
                write_ready_file(ready_file, url)
            except OSError as exc:
                print(f"cefisim: cannot write the ready file {ready_file}: {exc.strerror or exc}", file=sys.stderr)
                return 2
            wrote = True
        with contextlib.suppress(web.GracefulExit, KeyboardInterrupt):
            loop.run_forever()
        return 0
    finally:
        if wrote and ready_file is not None:
            ready_file.unlink(missing_ok=True)
        loop.run_until_complete(runner.cleanup())
        loop.run_until_complete(loop.shutdown_asyncgens())
        asyncio.set_event_loop(None)
        loop.close()
        sys.setswitchinterval(switch_interval)
