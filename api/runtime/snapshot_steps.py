"""A snapshot taken in steps: the state copied at one instant a bounded step at a time, its document
written from the copy afterwards, anywhere (the server writes it in a thread).

Contract (``Simulation.snapshot_steps`` makes one):
- The header and the side-states' states (``api/side_state/side_states.py``: JSON values made fresh) are taken when it
  begins; the venue and the runner are copied by :class:`~api.runtime.state_copy.StateCopy`, a step
  of about ``state_copy.STEP_VALUES`` values at a time (:meth:`SnapshotSteps.steps`).
- The copy is of the instant it began: the simulation finishes every copy under way at once before it
  changes its state (``Simulation._settle``: a command, a scenario turn, a reset, a restore, the end),
  whatever arrives between two steps.
- :meth:`SnapshotSteps.document`, once the copy is whole, is the document ``Simulation.snapshot``
  gave at that instant, key for key and value for value (so the same bytes once dumped). It reads the
  copy only, never the live state: it may run in another thread while the venue goes on.
- :meth:`SnapshotSteps.written` is that document as JSON bytes, exactly what ``dumps(document())``
  gives (once: it lets the copy go), written so that a thread doing it holds the GIL only briefly at
  a time: the objects dumped a slice of ``DUMP_OBJECTS`` at a time (one ``orjson.dumps`` of the whole
  is a single C call of ~35 ms for 32,000 orders) and freed the same way (the document dropped whole
  is one cascade of deallocations, ~25 ms), the cycle collector paused meanwhile (the document's
  millions of containers, young and growing, made it run full collections of up to ~50 ms while it
  was built; they are acyclic, freed by reference counting). The collector is paused for the whole
  process (it has no per-thread switch), resumed once the last document being written is done, unless
  it was off before.
- A copy that meets state the codec refuses (:class:`~api.runtime.snapshot.SnapshotError`) ends there:
  :meth:`document` raises that error, and finishing it again does nothing (a command that finishes it
  is never refused for it).
"""

from __future__ import annotations

import gc
import threading
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import Any

from cefisim.api.runtime import snapshot, state_copy
from cefisim.api.runtime.snapshot import SnapshotError
from cefisim.api.runtime.state_copy import StateCopy

#: the document's objects one dump takes (~0.5 MB of JSON, ~2 ms)
DUMP_OBJECTS = 2_000


class SnapshotSteps:
    """One snapshot being taken (the module docstring has the contract)."""

    __slots__ = ("_copy", "_error", "_header", "_side_states")

    def __init__(self, roots: dict[str, Any], header: dict[str, Any], side_states: dict[str, Any]) -> None:
        self._header = header
        self._side_states = side_states
        self._error: SnapshotError | None = None
        self._copy: StateCopy | None = StateCopy(roots)

    @property
    def done(self) -> bool:
        """Whether the copy is whole (or ended on an error)."""
        copy = self._copy  # once: written() lets it go in another thread
        return self._error is not None or copy is None or copy.done

    def steps(self) -> Iterator[None]:
        """Copy a step at a time, yielding between two, until the copy is whole (or has failed)."""
        while not self._step(state_copy.STEP_VALUES):
            yield

    def finish(self) -> None:
        """Copy whatever is left, at once."""
        self._step(1 << 62)

    def _step(self, budget: int) -> bool:
        copy = self._copy  # once: written() lets it go in another thread (a command finishing it meanwhile)
        if self._error is not None or copy is None or copy.done:
            return True  # (a whole copy may be being written in another thread: left alone)
        try:
            return copy.step(budget)
        except SnapshotError as exc:
            self._error = exc
            return True

    def document(self) -> dict[str, Any]:
        """The snapshot document of the copy (whole: :meth:`steps` or :meth:`finish` ran out first)."""
        if self._error is not None:
            raise self._error
        if self._copy is None or not self._copy.done:
            raise RuntimeError("the snapshot's copy is not whole yet, or was written already")
        return {**snapshot.to_json(self._copy.roots, self._header), **self._side_states}

    def written(self, dumps: Callable[[Any], bytes]) -> bytes:
        """:meth:`document` as JSON bytes: ``dumps(self.document())``, written in pieces (the module
        docstring says why); ``dumps`` writes a JSON value compactly, as orjson does."""
        with collector_paused():
            doc = self.document()
            self._copy = None  # the copy goes here (~5 ms for 32,000 orders): the document is all it made
            keys = list(doc)
            at = keys.index("objects")
            objects = doc.pop("objects")
            parts = [dumps({key: doc[key] for key in keys[:at]})[:-1], b',"objects":[']
            first = True
            while objects:
                if not first:
                    parts.append(b",")
                first = False
                parts.append(dumps(objects[:DUMP_OBJECTS])[1:-1])
                # each object's JSON is a tree of its own ({"$ref": n} names the others): freed a piece at
                # a time (the module docstring)
                del objects[:DUMP_OBJECTS]
            rest = keys[at + 1 :]
            parts.append(b"]" + (b"," + dumps({key: doc[key] for key in rest})[1:] if rest else b"}"))
            return b"".join(parts)


_pause_lock = threading.Lock()
_paused = 0  # documents being written
_resume = False  # whether the collector was on when the first of them paused it


@contextmanager
def collector_paused() -> Iterator[None]:
    """The cycle collector off while a large acyclic JSON tree is built or written (here, and the
    stepwise parse of ``api/runtime/json_steps.py``): its passes over the growing tree would take ~1 s
    each; nested and concurrent users share one pause, and the collector is on again after the last."""
    global _paused, _resume
    with _pause_lock:
        if not _paused:
            _resume = gc.isenabled()
            gc.disable()
        _paused += 1
    try:
        yield
    finally:
        with _pause_lock:
            _paused -= 1
            if not _paused and _resume:
                gc.enable()


__all__ = ["DUMP_OBJECTS", "SnapshotSteps", "collector_paused"]
