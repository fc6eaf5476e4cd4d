"""RFC 7807 problem details: the one way every error leaves the emulator.

Handlers raise :class:`Problem`; the problem middleware (``api/web/server/middleware.py``) renders it, nested in
``error`` under schema v2026_01_23 and bare under v2024_01_01 for CeFi routes, bare elsewhere. The
``type`` is an absolute URI ending in a stable slug (``.../problems/unsupported-version``), ``detail``
names the offending field and never contains a secret, token or signature.
"""

from __future__ import annotations

PROBLEM_BASE = "https://cefisim.dev/problems/"
PROBLEM_CONTENT_TYPE = "application/problem+json"

_TITLES = {
    400: "Bad Request",
    401: "Unauthorized",
    403: "Forbidden",
    404: "Not Found",
    405: "Method Not Allowed",
    409: "Conflict",
    413: "Payload Too Large",
    415: "Unsupported Media Type",
    422: "Unprocessable Content",
    429: "Too Many Requests",
    500: "Internal Server Error",
    503: "Service Unavailable",
}


class Problem(Exception):
    """An HTTP problem: raise it anywhere in a handler; the middleware renders it."""

    def __init__(
        self,
        status: int,
        slug: str,
        detail: str,
        title: str | None = None,
        headers: dict[str, str] | None = None,
    ) -> None:
        super().__init__(detail)
        self.status = status
        self.slug = slug
        self.detail = detail
        self.title = title or _TITLES.get(status, "Error")
        self.headers = headers or {}

    def body(self) -> dict:
        return {
            "type": PROBLEM_BASE + self.slug,
            "title": self.title,
            "status": self.status,
            "detail": self.detail,
        }


def bad_request(field: str, reason: str, slug: str = "invalid-request") -> Problem:
    """400 naming the field: ``info.qty: must be a decimal string``."""
    return Problem(400, slug, f"{field}: {reason}" if field else reason)


def not_found(what: str, slug: str = "not-found") -> Problem:
    return Problem(404, slug, what)
