"""What the server answered: the access log on stderr and ``GET /_sim/requests``, the last N requests.

Contract:
- The middleware calls :meth:`RequestLog.record` once per request with the response it sends. The
  log keeps the last ``capacity`` requests (a ring, default 1,000; ``cefisim serve --request-history``)
  for ``GET /_sim/requests?limit=N`` (newest first: time, method, path, status, milliseconds, client
  id, request id, and for a status of 400 and above the problem document the client got), the way
  WireMock's ``/__admin/requests`` shows what a stub server saw. Requests to ``/_sim/`` are not kept
  (reading the log would fill it) but are logged.
- With a stream, each request is one line there (``--log-format text``, the default, or ``json``;
  ``--quiet`` passes no stream). The line and the ring hold only the fields above: the path without
  its query (OAuth parameters travel there), never a header or a body of the request, so no secret,
  signature or token reaches them (``docs/security.md``).
- Cheap on the hot path: a record is a tuple appended to a deque; the line (time to the second, like
  a common-log-format line; the ring keeps milliseconds) is one f-string, written with the others of
  the same 50 ms in one write (a flush per request would be a system call per request). The stream
  is flushed when the app shuts down.
"""

from __future__ import annotations

import asyncio
import time
from collections import deque
from typing import IO, Any

import orjson
from aiohttp import web

from cefisim.api.edge.problems import PROBLEM_CONTENT_TYPE, bad_request
from cefisim.api.web.server.http import respond

DEFAULT_CAPACITY = 1000
MAX_CAPACITY = 100_000
FLUSH_AFTER_S = 0.05
FORMATS = ("text", "json")
SIM_PREFIX = "/_sim"

# started (perf_counter), method, path, status, seconds taken, client id, request id, problem body or None
Entry = tuple[float, str, str, int, float, "int | None", str, "bytes | None"]


class RequestLog:
    """The last ``capacity`` requests, and one line per request on ``stream`` when given."""

    def __init__(self, capacity: int = DEFAULT_CAPACITY, stream: IO[str] | None = None, fmt: str = "text") -> None:
        if fmt not in FORMATS:
            raise ValueError(f"log format: one of {', '.join(FORMATS)}")
        self.entries: deque[Entry] = deque(maxlen=capacity)
        self.capacity = capacity
        self.recorded = 0
        self.stream = stream
        self.json = fmt == "json"
        # wall time = perf_counter() + offset: one clock read per request (the middleware's) serves
        # the duration and the time of day
        self._offset = time.time() - time.perf_counter()
        self._pending: list[str] = []
        self._flush_at: asyncio.TimerHandle | None = None
        self._second = -1
        self._stamp = ""

    def record(
        self,
        method: str,
        path: str,
        status: int,
        started: float,
        ended: float,
        client_id: int | None,
        request_id: str,
        response: web.StreamResponse,
    ) -> None:
        """One finished request (``started``/``ended``: ``time.perf_counter()`` values)."""
        elapsed = ended - started
        if not path.startswith(SIM_PREFIX):
            problem = None
            if status >= 400 and isinstance(response, web.Response) and response.content_type == PROBLEM_CONTENT_TYPE:
                problem = response.body if isinstance(response.body, bytes) else None
            self.entries.append((started, method, path, status, elapsed, client_id, request_id, problem))
            self.recorded += 1
        if self.stream is None:
            return
        second = int(started + self._offset)
        if second != self._second:  # strftime once a second, not once a request
            self._second = second
            self._stamp = _second(second) + "Z"
        if self.json:
            line = (
                orjson.dumps(
                    {
                        "time": self._stamp,
                        "method": method,
                        "path": path,
                        "status": status,
                        "ms": round(elapsed * 1000, 3),
                        "client_id": None if client_id is None else str(client_id),
                        "request_id": request_id,
                    }
                ).decode()
                + "\n"
            )
        else:
            line = (
                f"{self._stamp} {method} {path} {status} {elapsed * 1000:.3f}ms "
                f"client={'-' if client_id is None else client_id} request_id={request_id}\n"
            )
        self._pending.append(line)
        if self._flush_at is None:
            self._schedule()

    def _schedule(self) -> None:
        try:
            loop = asyncio.get_running_loop()
        except RuntimeError:  # no loop (a direct call): write at once
            self.flush()
            return
        self._flush_at = loop.call_later(FLUSH_AFTER_S, self.flush)

    def flush(self) -> None:
        """Write the pending lines in one go."""
        if self._flush_at is not None:
            self._flush_at.cancel()
            self._flush_at = None
        if self._pending and self.stream is not None:
            lines, self._pending = self._pending, []
            self.stream.write("".join(lines))
            self.stream.flush()

    def latest(self, limit: int) -> list[dict[str, Any]]:
        """The last ``limit`` requests kept, newest first, as JSON objects."""
        out = []
        for i in range(min(limit, len(self.entries))):
            started, method, path, status, elapsed, client_id, request_id, problem = self.entries[-1 - i]
            at = started + self._offset
            doc: dict[str, Any] = {
                "time": f"{_second(int(at))}.{int((at - int(at)) * 1000):03d}Z",
                "method": method,
                "path": path,
                "status": status,
                "ms": round(elapsed * 1000, 3),
                "client_id": None if client_id is None else str(client_id),
                "request_id": request_id,
            }
            if problem is not None:
                body = orjson.loads(problem)
                doc["problem"] = body.get("error", body) if isinstance(body, dict) else body
            out.append(doc)
        return out


def _second(second: int) -> str:
    """ISO 8601 UTC of a Unix second, without the zone."""
    return time.strftime("%Y-%m-%dT%H:%M:%S", time.gmtime(second))


REQUEST_LOG = web.AppKey("request_log", RequestLog)


async def flush_request_log(app: web.Application) -> None:
    """``on_cleanup``: the last lines reach the stream before the process ends."""
    app[REQUEST_LOG].flush()


async def recent_requests(request: web.Request) -> web.Response:
    """``GET /_sim/requests?limit=N``: the last N requests kept (1 to the ring's size, default all)."""
    log = request.app[REQUEST_LOG]
    raw = request.query.get("limit")
    limit = log.capacity
    if raw is not None:
        if not raw.isascii() or not raw.isdigit() or not 1 <= int(raw) <= log.capacity:
            raise bad_request("limit", f"must be a whole number from 1 to {log.capacity}")
        limit = int(raw)
    return respond({"requests": log.latest(limit), "recorded": log.recorded, "capacity": log.capacity})
