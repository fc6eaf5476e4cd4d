"""The serve side of the limits: the flags of ``cefisim serve``, what they parse into, and the log redaction.

``api/cli/main.py`` adds :func:`add_limit_arguments` to ``serve``, builds ``ServerOptions(**limit_options(args))``
and the venue configuration with :func:`venue_config_for`, and calls :func:`install_log_redaction`.
``--rate-limit`` values parse into :class:`api.web.server.limits.RateLimits` (:func:`parse_rate_limits`);
``--max-open-orders`` and ``--quote-max-levels`` set limits that live in the engine
(``VenueConfig.max_open_orders``) and in the quote handlers (``ServerOptions.quote_max_levels``). The
checks that enforce the limits at request time are in ``api/web/server/limits.py``; ``docs/limits.md`` lists them
all with defaults, flags and statuses.
"""

from __future__ import annotations

import argparse
import logging
import math
import re
from dataclasses import replace
from pathlib import Path
from typing import TYPE_CHECKING, Any

from aiohttp.http_exceptions import HttpProcessingError
from aiohttp.web import RequestPayloadError

from cefisim.api.runtime.venues import DEFAULT_MAX_VENUES
from cefisim.api.web.server.limits import DEFAULT_MAX_HEADER_BYTES, DEFAULT_READ_TIMEOUT_S, RateLimit, RateLimits

if TYPE_CHECKING:
    from cefisim.api.formats.scenario import Scenario
    from cefisim.engine.venue import VenueConfig

DEFAULT_QUOTE_MAX_LEVELS = 1000


# --- rate-limit specs ----------------------------------------------------------------------------------

_RATE_RE = re.compile(r"^([0-9]+(?:\.[0-9]+)?)(?::([0-9]+))?$")


def parse_rate(text: str) -> RateLimit:
    """``"RPS[:BURST]"``: RPS a positive decimal, BURST a positive whole number (default ceil(RPS))."""
    m = _RATE_RE.fullmatch(text.strip())
    if m is None:
        raise ValueError(f"{text!r}: expected RPS[:BURST], e.g. 20 or 0.5:2 or 100:200")
    rate = float(m.group(1))
    if not 0 < rate <= 1_000_000:
        raise ValueError(f"{text!r}: RPS must be greater than 0 and at most 1000000")
    burst = int(m.group(2)) if m.group(2) is not None else max(1, math.ceil(rate))
    if not 1 <= burst <= 1_000_000:
        raise ValueError(f"{text!r}: BURST must be a whole number from 1 to 1000000")
    return RateLimit(rate, burst)


def parse_rate_limits(specs: list[str] | None) -> RateLimits | None:
    """Repeated ``--rate-limit`` values: ``RPS[:BURST]`` (every key) or ``KEY=RPS[:BURST]`` / ``KEY=off``."""
    if not specs:
        return None
    default: RateLimit | None = None
    per_key: dict[str, RateLimit | None] = {}
    for spec in specs:
        key, sep, value = spec.partition("=")
        if not sep:
            if default is not None:
                raise ValueError(f"{spec!r}: the default rate limit is given twice")
            default = parse_rate(spec)
            continue
        key = key.strip()
        if not key:
            raise ValueError(f"{spec!r}: expected KEY=RPS[:BURST] or KEY=off")
        if key in per_key:
            raise ValueError(f"{spec!r}: the key's rate limit is given twice")
        per_key[key] = None if value.strip().lower() == "off" else parse_rate(value)
    limits = RateLimits(default, per_key)
    return limits if limits.active else None


# --- logs ---------------------------------------------------------------------------------------------


class ParserErrorRedactor(logging.Filter):
    """Keep the bytes of a refused request line or header out of the log, and the refusal at INFO.

    aiohttp logs a request its parser refuses (a header line over ``--max-header-bytes``, a bad
    character, a Content-Length that is not digits) with the exception, whose message quotes the
    first 100 bytes of the offending line: an oversized ``Authorization`` or ``x-svc-auth-signature``
    header would put the start of its secret in the log. The record keeps its message and the kind of
    error; the quoted bytes and the traceback go. It is logged at INFO, not ERROR: the client sent
    bytes that are not HTTP and got its 400, and nothing is wrong with the server (nginx logs a
    "client sent invalid header" at info too).
    """

    def filter(self, record: logging.LogRecord) -> bool:
        exc = record.exc_info[1] if record.exc_info else None
        if isinstance(exc, HttpProcessingError):
            record.msg = f"{record.msg} [{type(exc).__name__}, status {exc.code}; the offending bytes are not logged]"
        elif isinstance(exc, RequestPayloadError):
            # a body its Content-Encoding does not describe, left unread by a handler that answered
            # without it: aiohttp finds out while it drains the body after the answer, and closes
            cause = exc.__cause__
            record.msg = (
                f"a request body that cannot be decoded was left unread; connection closed [{type(cause).__name__}]"
            )
            record.args = ()
        else:
            return True
        record.exc_info = None
        record.exc_text = None
        record.levelno, record.levelname = logging.INFO, "INFO"
        # the logger let the record through as an ERROR: as INFO it goes only where INFO would
        return logging.getLogger(record.name).isEnabledFor(logging.INFO)


_REDACTOR = ParserErrorRedactor()


def install_log_redaction() -> None:
    """Attach :class:`ParserErrorRedactor` to aiohttp's server logger (idempotent)."""
    logger = logging.getLogger("aiohttp.server")
    if _REDACTOR not in logger.filters:
        logger.addFilter(_REDACTOR)


# --- flags ----------------------------------------------------------------------------------------------


def positive_int(text: str) -> int:
    if not text.isascii() or not text.isdigit() or not 1 <= int(text) <= 10**9:
        raise argparse.ArgumentTypeError(f"{text!r}: expected a whole number from 1 to 1000000000")
    return int(text)


def _open_orders(text: str) -> int | None:
    if text.strip().lower() in ("none", "off"):
        return None
    return positive_int(text)


def _seconds(text: str) -> float:
    try:
        value = float(text)
    except ValueError:
        value = -1.0
    if not 0 <= value <= 86_400 or not math.isfinite(value):
        raise argparse.ArgumentTypeError(f"{text!r}: expected seconds from 0 (off) to 86400")
    return value


def _header_bytes(text: str) -> int:
    value = positive_int(text)
    if not 256 <= value <= 1_048_576:
        raise argparse.ArgumentTypeError(f"{text!r}: expected a whole number from 256 to 1048576")
    return value


def _rate_spec(text: str) -> str:
    try:
        parse_rate_limits([text])
    except ValueError as exc:
        raise argparse.ArgumentTypeError(str(exc)) from None
    return text


_UNSET = object()


def add_limit_arguments(parser: argparse.ArgumentParser) -> None:
    """The limit flags of ``cefisim serve`` (``docs/limits.md``)."""
    g = parser.add_argument_group("limits (docs/limits.md)")
    g.add_argument(
        "--max-open-orders",
        type=_open_orders,
        default=_UNSET,
        metavar="N|none",
        help="open orders per client and instrument; more are REJECTED with TOO_MANY_OPEN_ORDERS "
        "(default: the scenario's settings.max_open_orders, else 10000)",
    )
    g.add_argument(
        "--max-venue-open-orders",
        type=_open_orders,
        default=None,
        metavar="N|none",
        help="open orders of each venue, every client and instrument together; more are REJECTED "
        "with TOO_MANY_OPEN_ORDERS (default none)",
    )
    g.add_argument(
        "--max-ended-orders",
        type=positive_int,
        default=_UNSET,
        metavar="N",
        help="ended orders each venue keeps for status lookups; the oldest go first (default 500000)",
    )
    g.add_argument(
        "--max-ended-orders-per-client",
        type=positive_int,
        default=_UNSET,
        metavar="N",
        help="ended orders each client keeps for status lookups; the oldest go first (default 100000)",
    )
    g.add_argument(
        "--max-venues",
        type=positive_int,
        default=DEFAULT_MAX_VENUES,
        metavar="N",
        help="venues the server runs, the default one included; one more POST /_sim/venues is a "
        f"429 (default {DEFAULT_MAX_VENUES}; docs/venues.md)",
    )
    g.add_argument(
        "--data-dir",
        type=_data_dir,
        default=None,
        metavar="DIR",
        help="the folder whose regular files a document posted to POST /_sim/venues may name "
        "(prices_file, recorded[].file); without it such a document names no file (docs/venues.md)",
    )
    g.add_argument(
        "--quote-max-levels",
        type=positive_int,
        default=DEFAULT_QUOTE_MAX_LEVELS,
        metavar="N",
        help="price levels a quote may walk; more is a 400 quote-depth-limit (default 1000)",
    )
    g.add_argument(
        "--max-header-bytes",
        type=_header_bytes,
        default=DEFAULT_MAX_HEADER_BYTES,
        metavar="N",
        help="longest request line and header line; longer is a 400 from the HTTP parser (default 8190)",
    )
    g.add_argument(
        "--read-timeout",
        type=_seconds,
        default=DEFAULT_READ_TIMEOUT_S,
        metavar="SECONDS",
        help="time allowed for a request body to arrive; later is a 408 (default 30, 0 = off)",
    )
    g.add_argument(
        "--rate-limit",
        type=_rate_spec,
        action="append",
        default=None,
        metavar="[KEY=]RPS[:BURST]",
        help="token bucket per HMAC key, 429 with Retry-After when empty; repeat for per-key limits "
        "(KEY=off exempts a key); off by default",
    )


def limit_options(args: argparse.Namespace) -> dict[str, Any]:
    """Keyword arguments for ``ServerOptions`` from the parsed flags."""
    return {
        "quote_max_levels": args.quote_max_levels,
        "max_header_bytes": args.max_header_bytes,
        "read_timeout_s": args.read_timeout or None,
        "rate_limits": parse_rate_limits(args.rate_limit),
        "max_venues": args.max_venues,
        "data_dir": args.data_dir,
        "venue_config": lambda scenario: venue_config_for(scenario, args),  # of venues made by POST /_sim/venues
    }


def venue_config_for(scenario: Scenario, args: argparse.Namespace) -> VenueConfig:
    """The scenario's venue configuration, with ``--max-open-orders`` and the other per-venue limits
    (``--max-venue-open-orders``, ``--max-ended-orders[-per-client]``) applied when given."""
    config = scenario.venue_config()
    if args.max_open_orders is not _UNSET:
        config = replace(config, max_open_orders=args.max_open_orders)
    config = replace(config, max_venue_open_orders=args.max_venue_open_orders)
    if args.max_ended_orders is not _UNSET:
        config = replace(config, max_ended_orders=args.max_ended_orders)
    if args.max_ended_orders_per_client is not _UNSET:
        config = replace(config, max_ended_orders_per_client=args.max_ended_orders_per_client)
    return config


def _data_dir(text: str) -> Path:
    path = Path(text)
    if not path.is_dir():
        raise argparse.ArgumentTypeError(f"{text}: not a folder")
    return path.resolve()
