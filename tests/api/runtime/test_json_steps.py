"""api/runtime/json_steps.py: the stepwise parse accepts exactly what orjson accepts and gives its value."""

from __future__ import annotations

import math
from typing import Any
from unittest import mock

import orjson
import pytest
from hypothesis import example, given
from hypothesis import strategies as st

from cefisim.api.runtime import json_steps
from cefisim.api.runtime.json_steps import STEP_DEPTH, parse_steps


def run(body: bytes, step: int) -> tuple[Any, int]:
    """The stepwise parse's value (or orjson's error, raised) and the number of steps it took."""
    steps = parse_steps(body, step)
    turns = 0
    while True:
        try:
            next(steps)
        except StopIteration as done:
            return done.value, turns
        turns += 1


def outcome(parse: Any) -> tuple[str, Any]:
    try:
        value = parse()
    except orjson.JSONDecodeError as exc:
        return "error", str(exc)
    return "value", value


def same(a: Any, b: Any) -> bool:
    """Equal values of the same types, dict keys in the same order (a stack: documents nest 1,000 deep)."""
    pending = [(a, b)]
    while pending:
        x, y = pending.pop()
        if type(x) is not type(y):
            return False
        if isinstance(x, dict):
            if list(x) != list(y):
                return False
            pending.extend((x[k], y[k]) for k in x)
        elif isinstance(x, list):
            if len(x) != len(y):
                return False
            pending.extend(zip(x, y, strict=True))
        elif isinstance(x, float):
            if x != y or math.copysign(1, x) != math.copysign(1, y):
                return False
        elif x != y:
            return False
    return True


def check(body: bytes, step: int = 1, walked: bool = True) -> None:
    """The stepwise parse gives orjson's value or error; a valid document is ``walked``, never handed
    whole to orjson (the fallback is for what orjson refuses, and for nesting deeper than the standard
    library's scanner goes)."""
    expected = outcome(lambda: orjson.loads(body))
    if walked and expected[0] == "value" and len(body) > step:
        with mock.patch.object(json_steps, "whole", side_effect=AssertionError("fell back")):
            got = outcome(lambda: run(body, step)[0])
    else:
        got = outcome(lambda: run(body, step)[0])
    assert got[0] == expected[0], (body[:200], got, expected)
    if got[0] == "error":
        assert got[1] == expected[1]
    else:
        assert same(got[1], expected[1]), (body[:200], got, expected)


scalars = (
    st.none()
    | st.booleans()
    | st.integers(min_value=-(2**70), max_value=2**70)
    | st.floats(allow_nan=False, allow_infinity=False)
    | st.text(max_size=8)
)
values = st.recursive(
    scalars,
    lambda inner: st.lists(inner, max_size=5) | st.dictionaries(st.text(max_size=4), inner, max_size=5),
    max_leaves=40,
)
spaces = st.sampled_from(["", " ", "\n", "\t ", "\r\n  "])


@st.composite
def documents(draw: st.DrawFn) -> bytes:
    """A JSON text of a random value, with random whitespace, duplicate keys and spellings of numbers
    and strings orjson reads (escapes, exponents)."""

    def write(value: Any) -> str:
        pad = draw(spaces)
        if isinstance(value, dict):
            members = [f"{pad}{orjson.dumps(k).decode()}{draw(spaces)}:{write(v)}" for k, v in value.items()]
            if members and draw(st.booleans()):  # a duplicate key, with a value of its own
                members.insert(draw(st.integers(0, len(members))), members[0])
            return "{" + ",".join(members) + pad + "}"
        if isinstance(value, list):
            return "[" + ",".join(f"{pad}{write(v)}" for v in value) + pad + "]"
        if isinstance(value, str) and draw(st.booleans()):
            return '"' + "".join(f"\\u{ord(c):04x}" if ord(c) < 0x10000 else c for c in value) + '"'
        if isinstance(value, float) and draw(st.booleans()):
            return repr(value).replace("e+", "E")
        if isinstance(value, int) and not isinstance(value, bool):
            return str(value)
        return orjson.dumps(value).decode() if not isinstance(value, float) else repr(value)

    return (draw(spaces) + write(draw(values)) + draw(spaces)).encode()


@given(documents(), st.integers(min_value=1, max_value=64))
@example(b'{"a": 1, "b": [1, 2], "a": 3}', 1)
@example(b'{"a": [1], "b": 2, "a": {"c": 1}}', 1)
@example(b"[1, 2, 3]  ", 1)
@example(b'  "text"  ', 1)
def test_stepwise_equals_orjson_on_documents(body: bytes, step: int) -> None:
    check(body, step)


# bytes that make a document invalid, or valid in a way a lenient parser would read differently
TOKENS = [
    b"NaN", b"Infinity", b"-Infinity", b"1e999", b"18446744073709551616", b"-9223372036854775809",
    b"9" * 30, b"01", b"1.", b".5", b"-", b"+1", b"\xff", b"\xed\xa0\x80", b'"\\ud800"', b'"\\udc00x"',
    b"\xc0\xaf", b"\x00", b",", b":", b"]", b"}", b"[", b"{", b'"', b"\\", b"\t", b"\x0b", b"\xef\xbb\xbf",
    b"true", b"nul", b'"\x01"', b"/*c*/", b"\xf4\x90\x80\x80",
]  # fmt: skip


@given(documents(), st.data())
def test_stepwise_equals_orjson_on_mutations(body: bytes, data: st.DataObject) -> None:
    """Byte-level damage: an insert, a deletion or a replacement (random bytes or a token)."""
    at = data.draw(st.integers(0, len(body)))
    piece = data.draw(st.sampled_from(TOKENS) | st.binary(min_size=1, max_size=3))
    how = data.draw(st.sampled_from(["insert", "delete", "replace"]))
    if how == "insert":
        mutated = body[:at] + piece + body[at:]
    elif how == "delete":
        mutated = body[:at] + body[at + len(piece) :]
    else:
        mutated = body[:at] + piece + body[at + len(piece) :]
    check(mutated, data.draw(st.integers(1, 16)))


@pytest.mark.parametrize("depth", [1023, 1024, 1025, 1030])
@pytest.mark.parametrize("inner", ["[", '{"k":'])
def test_depth_limit_as_orjson(depth: int, inner: str) -> None:
    """Nesting around orjson's limit, the walked containers and the parsed items counted together."""
    close = "]" if inner == "[" else "}"
    for outer in ('{"a": [', "[[", '{"a": {"b": '):  # walked containers of both kinds around it
        opened = outer.count("[") + outer.count("{")
        middle = inner * (depth - opened) + "1" + close * (depth - opened)
        closing = "".join("]" if c == "[" else "}" for c in reversed([c for c in outer if c in "[{"]))
        check(f"{outer}{middle}, 2{closing}".encode(), 1, walked=False)


def test_large_document_in_many_steps() -> None:
    """A snapshot-shaped document (a table of small objects) takes a step per ``step`` characters of it,
    and gives orjson's value."""
    doc = {
        "format": "x",
        "root": {"venue": {"$ref": 0}},
        "objects": [{"id": n, "xs": [n, str(n)]} for n in range(5000)],
    }
    body = orjson.dumps(doc)
    value, turns = run(body, 4096)
    assert value == doc
    assert turns >= len(body) // 4096 - 1
    assert STEP_DEPTH >= 2  # the table (depth 1) is walked: its items are the runs


def test_small_body_one_step() -> None:
    assert run(b'{"a": 1}', 1 << 17) == ({"a": 1}, 0)
