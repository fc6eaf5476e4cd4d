"""The event loop ``cefisim serve`` runs on: asyncio's own, or uvloop's from the ``[fast]`` extra.

Contract: :func:`loop_factory` turns ``--loop`` (:data:`LOOPS`) into the callable that makes the
server's loop, before anything is loaded, so a choice that cannot be honoured fails first: ``asyncio``
is :func:`asyncio.new_event_loop`; ``uvloop`` is ``uvloop.new_event_loop`` and, without uvloop
installed, raises :class:`~cefisim.api.cli.common.extras.MissingExtra` whose one line names
``pip install 'cefisim[fast]'``; ``auto`` is uvloop when it is installed, else asyncio, and never
fails. :func:`loop_name` says which one a loop is (the start-up banner prints the one it serves on).

The loop changes only how sockets are polled and callbacks scheduled: the engine and its output are
the same on both (the engine never sees the loop), so journals and digests do not depend on it.
docs/benchmarks.md (bench_http) has what each loop serves.
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable

from cefisim.api.cli.common.extras import missing_extra

__all__ = ["LOOPS", "LoopFactory", "loop_factory", "loop_name"]

#: ``--loop``'s choices; ``auto`` is the default
LOOPS = ("auto", "asyncio", "uvloop")

LoopFactory = Callable[[], asyncio.AbstractEventLoop]


def loop_factory(choice: str) -> LoopFactory:
    """What makes the loop ``choice`` names (one of :data:`LOOPS`); raises ``MissingExtra`` for
    ``uvloop`` when uvloop is not installed."""
    if choice not in LOOPS:
        raise ValueError(f"loop {choice!r}: expected one of {', '.join(LOOPS)}")
    if choice == "asyncio":
        return asyncio.new_event_loop
    try:
        import uvloop  # deferred: an optional extra, imported only when asked for (or for auto)
    except ModuleNotFoundError as exc:
        if choice == "auto" and exc.name == "uvloop":
            return asyncio.new_event_loop
        raise missing_extra(exc, "fast", "--loop uvloop") from None
    factory: LoopFactory = uvloop.new_event_loop
    return factory


def loop_name(loop: asyncio.AbstractEventLoop) -> str:
    """``uvloop`` for a loop of uvloop's, else ``asyncio``."""
    return "uvloop" if type(loop).__module__.partition(".")[0] == "uvloop" else "asyncio"
