"""A large JSON document parsed in steps, so that an event loop serves other work between them.

``orjson.loads`` parses a 30 MB snapshot in one C call of ~0.3 s that holds the GIL: a thread does not
help, and every other venue of a server would wait. :func:`parse_steps` parses the same bytes as a
generator that yields after about ``step`` characters of the document, the caller letting its loop
run between two steps (``POST /_sim/snapshot``, ``api/web/control/plane.py``).

Contract: ``parse_steps(body)`` accepts exactly what ``orjson.loads(body)`` accepts and gives the same
value, or raises the ``orjson.JSONDecodeError`` it raises (same message): NaN and Infinity, integers
beyond 64 bits, invalid UTF-8, lone surrogates, trailing data and nesting past orjson's depth limit are
refused as orjson refuses them; a duplicate key keeps its first place and its last value, as orjson does.

How: the document's outer containers (the top value and the containers directly in it, to depth
``STEP_DEPTH``) are walked here; what is deeper is never parsed here. Each item (or member) of a walked
container is found by the standard library's scanner (``json`` ``raw_decode``: only its extent is used),
and the items are parsed by orjson in runs of about ``step`` characters, each run wrapped in as many
array brackets as it is deep, so that orjson sees the nesting it would see in the whole document (its
depth limit counts the same). Every value therefore comes from orjson; the walk checks only the
punctuation between items (JSON whitespace, ``,``, ``:``, brackets) and that nothing follows the
document. Anything the walk does not expect (a scanner error, a number it reads shorter than orjson
would, stray punctuation) falls back to one ``orjson.loads`` of the whole body, whose value or error is
then the answer: the walk can only ever be slower than orjson, never different.

Cost: the scanner builds each item once more (then discarded), so the whole parse takes ~2-4x
orjson's CPU, spread over steps of ``step`` characters; a body up to ``step`` is one ``orjson.loads``.
One item larger than ``step`` (a deep object) is parsed in one step. The cycle collector is paused
while the value is built (``snapshot_steps.collector_paused``).
"""

from __future__ import annotations

import gc
import json
import re
from collections.abc import Generator
from typing import Any

import orjson

from cefisim.api.runtime.snapshot_steps import collector_paused

#: characters of the document per step: ~1-3 ms of the scanner and orjson together
STEP = 1 << 17
#: containers up to this depth are walked (0: the top value; a snapshot's table of objects is at 1)
STEP_DEPTH = 2

_SPACE = re.compile(r"[ \t\n\r]*")  # JSON's whitespace, and only it
_scan = json.JSONDecoder().raw_decode  # the extent of one value at an index (no whitespace skipped)

Steps = Generator[None, None, Any]


class _Unexpected(ValueError):
    """The walk met what it does not handle: the whole body goes to orjson."""


def parse_steps(body: bytes, step: int = STEP) -> Steps:
    """``orjson.loads(body)`` in steps of about ``step`` characters (the module docstring): a generator
    yielding between steps and returning the value; raises ``orjson.JSONDecodeError`` as orjson would."""
    if len(body) <= step:
        return orjson.loads(body)
    try:
        text = body.decode()  # strict UTF-8: lone surrogates and invalid bytes are refused here
        # a JSON value holds no cycle: the collector's passes over the growing value would take ~1 s each
        with collector_paused():
            value = yield from _Walk(text, step).document()
            # out of the collector's reach before it resumes: its first pass would walk every object of
            # the value (0.3-0.45 s for 24 MB) to find no cycle; they are freed by reference counting, as
            # the server's own state frozen after start (api/cli/main.py) and after a create is
            gc.freeze()
    except (ValueError, RecursionError):  # (the scanner's errors are ValueErrors, _Unexpected too)
        return whole(body)
    return value


def whole(body: bytes) -> Any:
    """The fallback: one ``orjson.loads`` of the whole body, its error or its value where the walk could not go."""
    return orjson.loads(body)


class _Walk:
    def __init__(self, text: str, step: int) -> None:
        self.text = text
        self.step = step
        self.mark = 0  # where the last step ended

    def space(self, i: int) -> int:
        match = _SPACE.match(self.text, i)
        assert match is not None  # (the pattern matches the empty string)
        return match.end()

    def document(self) -> Steps:
        text = self.text
        i = self.space(0)
        value, i = yield from self.value(i, 0)
        if self.space(i) != len(text):
            raise _Unexpected("data after the document")
        return value

    def value(self, i: int, depth: int) -> Generator[None, None, tuple[Any, int]]:
        """The value at ``i`` (``depth`` containers around it) and the index after it."""
        c = self.text[i : i + 1]
        if depth < STEP_DEPTH and c == "[":
            return (yield from self.array(i, depth))
        if depth < STEP_DEPTH and c == "{":
            return (yield from self.object(i, depth))
        end = _scan(self.text, i)[1]
        if not depth:  # (a scalar document: it is short, but for spaces around it)
            return orjson.loads(self.text[i:end]), end
        return _loads(self.text[i:end], depth - 1, "[", "]")[0], end

    def array(self, i: int, depth: int) -> Generator[None, None, tuple[list[Any], int]]:
        """The array at ``i``: runs of its items parsed by orjson, the deeper walk for walked items."""
        text = self.text
        out: list[Any] = []
        i = self.space(i + 1)
        if text[i : i + 1] == "]":
            return out, i + 1
        walked = depth + 1 < STEP_DEPTH
        start = i  # the run not parsed yet
        while True:
            if walked:
                item, i = yield from self.value(i, depth + 1)
                out.append(item)
            else:
                i = _scan(text, i)[1]
            j = self.space(i)
            c = text[j : j + 1]
            if c not in (",", "]"):
                raise _Unexpected("an array's items are separated by commas")
            if not walked and (c == "]" or i - start >= self.step):
                out.extend(_loads(text[start:i], depth, "[", "]"))
                start = self.space(j + 1)
            if c == "]":
                return out, j + 1
            i = self.space(j + 1)
            if walked:
                start = i
            if i - self.mark >= self.step:
                self.mark = i
                yield

    def object(self, i: int, depth: int) -> Generator[None, None, tuple[dict[Any, Any], int]]:
        """The object at ``i``: runs of its members parsed by orjson, the deeper walk for walked values
        (a later duplicate key replaces the value in its first place, as orjson does)."""
        text = self.text
        out: dict[Any, Any] = {}
        i = self.space(i + 1)
        if text[i : i + 1] == "}":
            return out, i + 1
        start = run_end = i  # the run not parsed yet, from start to run_end
        while True:
            if text[i : i + 1] != '"':
                raise _Unexpected("a member's name is a string")
            key_end = _scan(text, i)[1]
            colon = self.space(key_end)
            if text[colon : colon + 1] != ":":
                raise _Unexpected("a member's name is followed by a colon")
            at = self.space(colon + 1)
            c = text[at : at + 1]
            if depth + 1 < STEP_DEPTH and c in ("[", "{"):
                if start < run_end:  # the members before it, first (their order in the object)
                    out.update(_loads(text[start:run_end], depth, "{", "}"))
                key = orjson.loads(text[i:key_end])
                value, end = yield from self.value(at, depth + 1)
                out[key] = value
                parsed = True
            else:
                end = _scan(text, at)[1]
                parsed = False
            j = self.space(end)
            c = text[j : j + 1]
            if c not in (",", "}"):
                raise _Unexpected("an object's members are separated by commas")
            if parsed:
                start = run_end = self.space(j + 1)
            elif c == "}" or end - start >= self.step:
                out.update(_loads(text[start:end], depth, "{", "}"))
                start = run_end = self.space(j + 1)
            else:
                run_end = end
            if c == "}":
                return out, j + 1
            i = self.space(j + 1)
            if i - self.mark >= self.step:
                self.mark = i
                yield


def _loads(run: str, depth: int, opening: str, closing: str) -> Any:
    """orjson's value of ``run`` (items, or members) in a container of its own at ``depth``: the
    container, inside ``depth`` arrays so that orjson counts the nesting the document has there."""
    value = orjson.loads(f"{'[' * depth}{opening}{run}{closing}{']' * depth}")
    for _ in range(depth):
        value = value[0]
    return value


__all__ = ["STEP", "STEP_DEPTH", "Steps", "parse_steps"]
