"""Server limits beyond the body size, checked at request time: read timeout, header size, per-key rate limits.

Every limit answers a clear 4xx; ``docs/limits.md`` lists them all with defaults, flags and statuses.

- **Declared body size** (:func:`declared_too_large`, ``--max-body-bytes``). A ``/v1/`` request whose
  ``Content-Length`` is over the body limit is answered 413 before any of its body is read, and the
  connection is closed (like the 408 below); so are JSON routes of ``/_sim/`` (``read_json``). A body
  that passes the limit as it streams in (chunked) is aiohttp's 413, also with the connection closed.
- **Read timeout** (:func:`body_within`, ``--read-timeout SECONDS``, default 30, 0 = off).
  aiohttp has no body-read deadline of its own (``keepalive_timeout`` only covers idle connections
  between requests), so a client that trickles its body would hold a handler forever. The middleware
  reads the whole body of every ``/v1/`` request with a body before the handler runs, under
  ``asyncio.wait_for``; when the body has not fully arrived ``SECONDS`` after the headers, the answer
  is a 408 problem (``request-timeout``) and the connection is closed (the rest of the body is never
  read). The body is cached by aiohttp, so the handler's own ``request.read()`` costs nothing. The
  control plane (``/_sim/``) is left out: it is trusted and ``POST /_sim/snapshot`` reads bodies past
  the body-size limit on purpose. A slow *header* (slowloris on the request line or headers) is not
  covered: aiohttp offers no header deadline; run a reverse proxy in front when that matters.
- **Header size** (:func:`handler_args`, ``--max-header-bytes N``, default 8190, aiohttp's own). Sets
  aiohttp's ``max_line_size`` (request line) and ``max_field_size`` (one header line). aiohttp's
  HTTP parser refuses a longer line before the application sees the request: a **400** with a
  ``text/plain`` body (not a problem document, no ``X-Request-Id``) and the connection closed. More than
  ``max_headers`` (128) header lines is the same 400.
  aiohttp logs such a request with the first 100 bytes of the offending line;
  ``api.web.server.limit_flags.install_log_redaction`` (called by ``cefisim serve``) keeps those bytes out of the log.
- **Rate limit** (:func:`rate_limiter`, ``--rate-limit RPS[:BURST]`` and
  ``--rate-limit KEY=RPS[:BURST]|KEY=off``, off by default). A token bucket per HMAC key on the wall
  clock (``time.monotonic``): signed CeFi requests (``/v1/cefi/`` with an ``x-svc-auth-token`` naming a
  key of the scenario) spend one token each; the bucket holds at most ``BURST`` tokens and refills at
  ``RPS`` per second. An empty bucket is a 429 problem (``rate-limited``) with ``Retry-After`` in whole
  seconds (at least 1), and the request is not applied. The token is spent before the signature is
  checked (as real venues count requests per key), so a refused or badly signed request counts too.
  Unsigned requests and unknown keys are never limited (they cost nothing and the signature check
  refuses unknown keys); memory is one bucket per scenario key. Whoever knows a key's UUID (it
  travels in every request) can spend its bucket: fine for a sandbox (docs/security.md).

Wiring: the app's one middleware (``api/web/server/middleware.py``) runs :func:`body_pending` /
:func:`body_within` (and answers the 408) and the check of :func:`rate_limiter` right after choosing
the request's id and schema version, with the settings of :func:`limit_settings`, and
``api/web/app/application.py`` passes :func:`handler_args` to ``web.Application``. The flags that set these limits (and
``--max-open-orders``,
``--quote-max-levels``), their parsing and the log redaction are in ``api/web/server/limit_flags.py``.
"""

from __future__ import annotations

import asyncio
import math
import time
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any

from aiohttp import web

from cefisim.api.edge.paths import CEFI_PREFIX
from cefisim.api.edge.problems import Problem

DEFAULT_READ_TIMEOUT_S = 30.0
# idle keep-alive connections, and connections whose request never completes (slow headers), are
# closed this long after they opened or after their last answer (aiohttp's keep-alive timer)
KEEPALIVE_TIMEOUT_S = 75.0
DEFAULT_MAX_HEADER_BYTES = 8190  # aiohttp's default for max_line_size and max_field_size
TOKEN_HEADER = "x-svc-auth-token"


# --- rate limits -----------------------------------------------------------------------------------


@dataclass(frozen=True)
class RateLimit:
    """``rate`` requests per second on average, ``burst`` at once."""

    rate: float
    burst: int

    def __str__(self) -> str:
        return f"{self.rate:g}/s (burst {self.burst})"


@dataclass(frozen=True)
class RateLimits:
    """The default limit of every key, and per-key overrides (``None``: that key is not limited)."""

    default: RateLimit | None = None
    per_key: Mapping[str, RateLimit | None] = field(default_factory=dict)

    def for_key(self, key: str) -> RateLimit | None:
        return self.per_key.get(key, self.default)

    @property
    def active(self) -> bool:
        return self.default is not None or any(v is not None for v in self.per_key.values())


class _Bucket:
    __slots__ = ("last", "tokens")

    def __init__(self, tokens: float, last: float) -> None:
        self.tokens = tokens
        self.last = last


class TokenBuckets:
    """One token bucket per key. ``take(key, limit, now)`` -> 0 when allowed, else seconds to wait."""

    def __init__(self) -> None:
        self._buckets: dict[str, _Bucket] = {}

    def take(self, key: str, limit: RateLimit, now: float) -> float:
        bucket = self._buckets.get(key)
        if bucket is None:
            bucket = self._buckets[key] = _Bucket(float(limit.burst), now)
        else:
            elapsed = max(0.0, now - bucket.last)
            bucket.tokens = min(float(limit.burst), bucket.tokens + elapsed * limit.rate)
            bucket.last = now
        if bucket.tokens >= 1.0:
            bucket.tokens -= 1.0
            return 0.0
        return (1.0 - bucket.tokens) / limit.rate

    def __len__(self) -> int:
        return len(self._buckets)


RateCheck = Callable[[web.Request], None]


def rate_limiter(
    limits: RateLimits,
    known_keys: Callable[[web.Request], Mapping[str, Any]],
    clock: Callable[[], float] = time.monotonic,
) -> RateCheck:
    """The rate-limit check: raises a 429 problem with ``Retry-After`` when the request's key has
    spent its bucket, returns otherwise. Synchronous: the app's middleware calls it without a
    coroutine of its own.

    ``known_keys(request)`` is the mapping of HMAC keys the scenario defines (only those get a bucket).
    """
    buckets = TokenBuckets()

    def check(request: web.Request) -> None:
        key = request.headers.get(TOKEN_HEADER)
        if key and request.path.startswith(CEFI_PREFIX) and key in known_keys(request):
            limit = limits.for_key(key)
            if limit is not None:
                wait = buckets.take(key, limit, clock())
                if wait > 0:
                    retry_after = max(1, math.ceil(wait))
                    raise Problem(
                        429,
                        "rate-limited",
                        f"{TOKEN_HEADER}: this key may send {limit}; retry after {retry_after} s",
                        headers={"Retry-After": str(retry_after)},
                    )

    check.buckets = buckets  # type: ignore[attr-defined]  # for tests and introspection
    return check


# --- read timeout -----------------------------------------------------------------------------------


def body_pending(request: web.Request) -> bool:
    """A ``/v1/`` request whose body has not fully arrived with its headers (rare: nearly every API
    call's body comes in the same read), so there is something to wait for."""
    return request.body_exists and not request.content.is_eof() and request.path.startswith("/v1/")


def declared_too_large(request: web.Request) -> Problem | None:
    """The 413 for a body whose ``Content-Length`` is over the app's body limit, known before any of
    it is read (aiohttp alone would read up to the limit first, and wait for bytes that may never
    come); None otherwise. Chunked bodies have no declared length: aiohttp refuses them as soon as
    they pass the limit."""
    length = request.content_length
    if length is None or length <= request.client_max_size:
        return None
    return Problem(
        413,
        "payload-too-large",
        f"body: Content-Length {length} is over the limit of {request.client_max_size} bytes; nothing was read",
    )


# --- wiring -------------------------------------------------------------------------------------------


def limit_settings(
    options: Any, known_keys: Callable[[web.Request], Mapping[str, Any]], clock: Callable[[], float] = time.monotonic
) -> tuple[float | None, RateCheck | None]:
    """What ``options`` asks for: the read timeout in seconds (None: off) and the rate-limit check
    (None: off) over the keys ``known_keys(request)`` names."""
    seconds = getattr(options, "read_timeout_s", DEFAULT_READ_TIMEOUT_S) or None
    limits = getattr(options, "rate_limits", None)
    check = rate_limiter(limits, known_keys, clock) if limits is not None and limits.active else None
    return seconds, check


async def body_within(request: web.Request, seconds: float) -> bool:
    """Read a pending body within ``seconds``: True when it arrived (aiohttp caches it for the
    handler), False when it did not (the caller answers 408 and closes the connection)."""
    try:
        async with asyncio.timeout(seconds):  # no extra task per request, unlike wait_for
            await request.read()
        return True
    except TimeoutError:
        return False


def handler_args(options: Any) -> dict[str, int]:
    """aiohttp request-handler arguments for ``web.Application(handler_args=...)``."""
    size = getattr(options, "max_header_bytes", DEFAULT_MAX_HEADER_BYTES)
    return {"max_line_size": size, "max_field_size": size}
