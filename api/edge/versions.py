"""CeFi direct schema versions: which one a request gets, and what that changes.

- ``X-Svc-Version`` header, else the ``version`` query parameter, else the default. A header and a query
  parameter that disagree are a 400 problem (the request is ambiguous).
- Before 1 November 2026 (engine clock) the default is v2024_01_01, which is deprecated: its responses
  carry ``Deprecation`` (RFC 9745: a structured-field date, ``@<Unix seconds>``) and ``Sunset``
  (RFC 8594: an HTTP-date) headers. From that date v2026_01_23 is the default,
  only version listed, and an explicit v2024_01_01 is a 400 problem of type ``.../unsupported-version``.
- v2026_01_23 wraps lists in ``{"data": [...], "pagination": {"size", "next_cursor"}}`` and nests
  problems in ``{"error": {...}}``; v2024_01_01 returns raw arrays and bare problems.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import UTC, datetime
from email.utils import format_datetime

V2024 = "v2024_01_01"
V2026 = "v2026_01_23"
KNOWN = (V2024, V2026)
HEADER = "X-Svc-Version"
QUERY = "version"

REMOVAL_NS = int(datetime(2026, 11, 1, tzinfo=UTC).timestamp()) * 1_000_000_000
DEPRECATED_ON = datetime(2026, 1, 23, tzinfo=UTC)  # when v2026_01_23 superseded it
SUNSET_ON = datetime(2026, 8, 5, tzinfo=UTC)


def http_date(when: datetime) -> str:
    return format_datetime(when, usegmt=True)


def sf_date(when: datetime) -> str:
    """An RFC 9651 structured-field Date (``@`` and whole Unix seconds), as RFC 9745 writes
    ``Deprecation``."""
    return f"@{int(when.timestamp())}"


@dataclass(frozen=True)
class VersionChoice:
    version: str | None  # None: the request named a version that is not served
    requested: str | None
    problem: str | None = None  # why it is refused


def choose(header: str | None, query: str | None, engine_now_ns: int) -> VersionChoice:
    removed = engine_now_ns >= REMOVAL_NS
    if header is not None and query is not None and header != query:
        return VersionChoice(None, header, f"{HEADER} header {header!r} and version query {query!r} disagree")
    requested = header if header is not None else query
    if requested is None:
        return VersionChoice(V2026 if removed else V2024, None)
    if requested not in KNOWN:
        return VersionChoice(
            None, requested, f"unknown schema version {requested!r}; supported: " + ", ".join(supported(engine_now_ns))
        )
    if requested == V2024 and removed:
        return VersionChoice(None, requested, f"{V2024} was removed on 2026-11-01; use {V2026}")
    return VersionChoice(requested, requested)


def supported(engine_now_ns: int) -> list[str]:
    return [V2026] if engine_now_ns >= REMOVAL_NS else [V2024, V2026]


def default(engine_now_ns: int) -> str:
    return V2026 if engine_now_ns >= REMOVAL_NS else V2024


#: on every response of the deprecated version: ``Deprecation`` (RFC 9745) and ``Sunset`` (RFC 8594)
DEPRECATION_HEADERS = {"Deprecation": sf_date(DEPRECATED_ON), "Sunset": http_date(SUNSET_ON)}


def versions_document(engine_now_ns: int) -> dict:
    items = []
    for version in supported(engine_now_ns):
        item: dict = {"version": version, "deprecated": version == V2024}
        if version == V2024:
            item["deprecation_date"] = http_date(DEPRECATED_ON)
        items.append(item)
    return {"supported_versions": items, "default_version": default(engine_now_ns), "version_header": HEADER}


def deprecation_headers(version: str) -> dict[str, str]:
    """The headers a response of ``version`` carries (none for a current version)."""
    return DEPRECATION_HEADERS if version == V2024 else {}
