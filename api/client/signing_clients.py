"""Request signing for HTTP clients other than cefisim's own: an ``httpx.Auth`` and a ``requests`` auth.

Contract: :class:`CefiHttpxAuth` (needs httpx) and :class:`CefiRequestsAuth` (needs requests) add
the four ``x-svc-auth-*`` headers to every request they see, signed with :func:`.signing.sign` over
the wall-clock second, the method, the path as sent (percent-encoding kept, query string left out)
and the body bytes exactly as sent, in the server's layout (``concat`` unless told). So a client
generated from ``/v1/cefi/openapi.json`` signs in one line (``docs/client.md``). Each class is built
(and its library imported) when first asked for, so the library it needs is only required by whoever
uses it, and the server never imports this module.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Generator
from typing import Any

from cefisim.api.edge.signing import H_SIGNATURE, H_TIMESTAMP, H_TOKEN, H_USERID, LAYOUTS, sign


class _Signer:
    """The four headers for one request."""

    def __init__(
        self,
        key: str,
        secret: str,
        client_id: str | int,
        layout: str = "concat",
        clock: Callable[[], float] = time.time,
    ) -> None:
        if layout not in LAYOUTS[:2]:
            raise ValueError(f"layout: one of {LAYOUTS[0]}, {LAYOUTS[1]} (a client signs with one)")
        self.key, self.secret, self.client_id = key, secret, str(client_id)
        self.layout = layout
        self.clock = clock

    def headers(self, method: str, raw_path: bytes | str, body: bytes) -> dict[str, str]:
        path = raw_path.decode("ascii") if isinstance(raw_path, bytes) else raw_path
        path = path.split("?", 1)[0]
        ts = str(int(self.clock()))
        return {
            H_TOKEN: self.key,
            H_SIGNATURE: sign(self.secret, ts, method, path, body, self.layout),
            H_TIMESTAMP: ts,
            H_USERID: self.client_id,
        }


def _httpx_auth() -> type:
    import httpx  # an optional dependency: imported when the class is first asked for

    class CefiHttpxAuth(httpx.Auth, _Signer):
        """``httpx.Client(auth=CefiHttpxAuth(key, secret, client_id))``: signs every request (sync and async)."""

        requires_request_body = True

        def auth_flow(self, request: httpx.Request) -> Generator[httpx.Request, httpx.Response, None]:
            request.headers.update(self.headers(request.method, request.url.raw_path, request.content))
            yield request

    return CefiHttpxAuth


def _requests_auth() -> type:
    import requests  # an optional dependency: imported when the class is first asked for

    class CefiRequestsAuth(requests.auth.AuthBase, _Signer):
        """``requests.get(url, auth=CefiRequestsAuth(key, secret, client_id))``: signs the prepared request."""

        def __call__(self, request: requests.PreparedRequest) -> requests.PreparedRequest:
            body: Any = request.body or b""
            if isinstance(body, str):
                body = body.encode("utf-8")
            request.headers.update(self.headers(request.method or "GET", request.path_url, body))
            return request

    return CefiRequestsAuth


#: what this module builds on first access, and the library each one needs
CLASSES: dict[str, tuple[Callable[[], type], str]] = {
    "CefiHttpxAuth": (_httpx_auth, "httpx"),
    "CefiRequestsAuth": (_requests_auth, "requests"),
}


def __getattr__(name: str) -> Any:
    """The client auth classes, built (and their library imported) on first access."""
    if name not in CLASSES:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    build, library = CLASSES[name]
    try:
        cls = build()
    except ImportError:
        raise ImportError(f"{name} needs {library}: pip install {library}") from None
    cls.__module__, cls.__qualname__ = __name__, name
    globals()[name] = cls
    return cls
