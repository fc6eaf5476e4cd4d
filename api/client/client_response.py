"""What a CeFi answer becomes in the client: :class:`RawResponse` as it came, :class:`ProblemError` for
a 4xx/5xx (the RFC 7807 fields, unwrapped from the ``error`` nesting of v2026_01_23).

Users import both from ``api.client``; ``api.cli.backtest`` raises :class:`ProblemError` for refusals too.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from multidict import CIMultiDictProxy


class ProblemError(Exception):
    """An error answer: its HTTP status and RFC 7807 fields (unwrapped from ``error``) and the body."""

    def __init__(
        self,
        status: int,
        type: str | None,
        title: str | None,
        detail: str | None,
        body: Any,
        headers: Mapping[str, str] | None = None,
    ) -> None:
        super().__init__(f"{status} {title or ''}: {detail or ''}".strip())
        self.status = status
        self.type = type
        self.title = title
        self.detail = detail
        self.body = body
        self.headers = headers or {}

    @property
    def slug(self) -> str | None:
        """The last segment of ``type`` (``invalid-request``, ``unsupported-version`` ...)."""
        return self.type.rsplit("/", 1)[-1] if self.type else None

    @classmethod
    def from_response(cls, status: int, body: Any, headers: Mapping[str, str] | None = None) -> ProblemError:
        problem = body
        if isinstance(body, dict) and isinstance(body.get("error"), dict):
            problem = body["error"]
        if not isinstance(problem, dict):
            return cls(status, None, None, None if body is None else str(body), body, headers)
        return cls(status, problem.get("type"), problem.get("title"), problem.get("detail"), body, headers)


@dataclass(frozen=True)
class RawResponse:
    """What came back, untouched: status, headers, body bytes and the body parsed (``None`` if not JSON)."""

    status: int
    headers: CIMultiDictProxy[str]
    body: bytes
    json: Any

    @property
    def body_bytes(self) -> bytes:
        return self.body

    @property
    def text(self) -> str:
        return self.body.decode("utf-8", errors="replace")

    @property
    def content_type(self) -> str:
        return self.headers.get("Content-Type", "").split(";", 1)[0].strip()

    def problem(self) -> ProblemError:
        return ProblemError.from_response(self.status, self.json, self.headers)
