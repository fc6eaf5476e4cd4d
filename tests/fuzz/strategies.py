"""Hypothesis strategies for hostile requests: JSON values, near-valid bodies, queries, headers, paths.

Valid templates are mutated (a field dropped, replaced by any JSON value, an unknown field added, one
level down as well) so that generated requests get past the JSON parser and reach the validators and
the engine, not only the first check.
"""

from __future__ import annotations

import json
from typing import Any
from urllib.parse import quote, urlencode

import orjson
from hypothesis import strategies as st

# Text that any HTTP/1.1 header value can carry through http.client (latin-1, no CR/LF/NUL).
HEADER_TEXT = st.text(st.characters(min_codepoint=0x20, max_codepoint=0xFF, exclude_characters="\x7f"), max_size=40)
TOKEN = st.text(
    st.sampled_from("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789!#$%&'*+-.^_`|~"),
    min_size=1,
    max_size=20,
)

NASTY_TEXT = st.sampled_from(
    [
        "",
        " ",
        "0",
        "-1",
        "01",
        "1.5",
        "1e9",
        "NaN",
        "Infinity",
        "9" * 19,
        "9" * 20,
        "9" * 60,
        "1" * 300,
        "0.000000001",
        "99999999999999999999.99",
        "\u0000",
        "\ud7ff",
        "é",
        "中文",
        "😀",
        "../..",
        "%00",
        "%2F",
        "null",
        "true",
        "[]",
        "{}",
        "<script>",
        "' OR 1=1 --",
        "\\",
        "\t",
        "a" * 19,
        "s1",
        "1",
        "2",
        "100",
        "101",
        "BUY",
        "SELL",
        "LIMIT",
        "MARKET",
        "GTC",
        "IOC",
        "ALO",
        "AON",
        "BASE",
        "QUOTE",
        "USD",
        "BTC",
    ]
)

SCALARS = st.one_of(
    st.none(),
    st.booleans(),
    st.integers(min_value=-(2**70), max_value=2**70),
    st.floats(allow_nan=False, allow_infinity=False),
    NASTY_TEXT,
    st.text(max_size=30),
)

JSON_VALUES = st.recursive(
    SCALARS,
    lambda children: st.one_of(
        st.lists(children, max_size=4),
        st.dictionaries(st.one_of(NASTY_TEXT, st.text(max_size=10)), children, max_size=4),
    ),
    max_leaves=10,
)


def _dumps(value: Any) -> bytes:
    """JSON with what orjson cannot write either (integers past 64 bits, lone surrogates)."""
    return json.dumps(value, ensure_ascii=False, allow_nan=False).encode("utf-8", "surrogatepass")


@st.composite
def mutated(draw: st.DrawFn, template: Any, depth: int = 0) -> Any:
    """``template`` with a few random edits (or as is)."""
    if not isinstance(template, dict) or depth > 2:
        return draw(st.one_of(st.just(template), JSON_VALUES))
    out = dict(template)
    for _ in range(draw(st.integers(min_value=0, max_value=3))):
        action = draw(st.sampled_from(["drop", "replace", "add", "nest", "null"]))
        keys = list(out)
        if action == "add" or not keys:
            out[draw(st.one_of(NASTY_TEXT, st.text(max_size=8)))] = draw(JSON_VALUES)
            continue
        key = draw(st.sampled_from(keys))
        if action == "drop":
            del out[key]
        elif action == "replace":
            out[key] = draw(JSON_VALUES)
        elif action == "null":
            out[key] = None
        else:
            out[key] = draw(mutated(out[key], depth + 1))
    return out


def json_body(template: Any | None) -> st.SearchStrategy[bytes]:
    """Bytes of a request body: empty, junk, any JSON, or (mostly) a mutated template."""
    options = [
        st.just(b""),
        st.binary(max_size=64),
        JSON_VALUES.map(_dumps),
        st.sampled_from([b"{", b"[1,", b'{"a":1}{', b"\xff\xfe", b'{"info": NaN}', b"1" * 200, b" " * 10]),
    ]
    if template is not None:
        valid = st.just(orjson.dumps(template))
        near = mutated(template).map(_dumps)
        return st.one_of(valid, near, near, near, *options)
    return st.one_of(*options)


QUERY_NAMES = [
    "id",
    "name",
    "symbol",
    "instrument_id",
    "size",
    "skip",
    "timestamp",
    "client_id",
    "mnemonic",
    "asset_id",
    "asset_name",
    "transfer_id",
    "order_id",
    "version",
    "depth",
    "limit",
    "scope",
]
QUERY_VALUES = st.one_of(
    NASTY_TEXT,
    st.text(max_size=25),
    st.from_regex(r"\A[1-9][0-9]{0,20}\Z"),
    st.integers(min_value=-5, max_value=10**20).map(str),
    st.sampled_from(
        [
            "v2026_01_23",
            "v2024_01_01",
            "1793523600000000000",
            "9999999999999999999",
            "10",
            "100",
            "101",
            "alice",
            "BTC-USD",
            "-USD",
        ]
    ),
)


def query_string(names: list[str] | None = None) -> st.SearchStrategy[str]:
    names = names or QUERY_NAMES
    pair = st.tuples(st.one_of(st.sampled_from(names), st.text(max_size=8)), QUERY_VALUES)
    return st.lists(pair, max_size=4).map(lambda pairs: urlencode(pairs, quote_via=quote))


def path_segment(good: list[str]) -> st.SearchStrategy[str]:
    """One path segment, percent-encoded so the request line stays valid."""
    raw = st.one_of(st.sampled_from(good), NASTY_TEXT, st.text(max_size=30), st.from_regex(r"\A[0-9]{1,25}\Z"))
    return raw.map(lambda s: quote(s, safe="") or "%20")


EXTRA_HEADER_NAMES = [
    "X-Svc-Version",
    "X-Request-Id",
    "Content-Type",
    "Accept",
    "SVC-On-Behalf-Of",
    "Authorization",
    "x-svc-auth-token",
    "x-svc-auth-signature",
    "x-svc-auth-timestamp",
    "x-svc-auth-userid",
    "Transfer-Encoding-X",
    "Origin",
]


# headers that frame the message: sending them twice or wrong is an HTTP-parser error, not an app input
FRAMING = {"content-length", "transfer-encoding", "host", "connection", "expect", "upgrade", "te", "trailer"}


def extra_headers() -> st.SearchStrategy[dict[str, str]]:
    value = st.one_of(
        HEADER_TEXT,
        st.sampled_from(
            ["v2026_01_23", "v2024_01_01", "application/json", "text/plain", "Bearer x", "Bearer", "100", "u-bob"]
        ),
    )
    name = st.one_of(st.sampled_from(EXTRA_HEADER_NAMES), TOKEN).filter(lambda n: n.lower() not in FRAMING)
    return st.dictionaries(name, value, max_size=3)
