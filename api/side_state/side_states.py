"""State kept beside the engine and journaled with it: the Auth store's tokens, codes and revocations,
the venue faults.

The engine journals commands; a server also changes state the engine does not hold (api/auth). Such
state is a side-state (:class:`SideState`; "side" alone is an order's BUY or SELL), attached to the
simulation under a namespace (``auth``, ``faults``). Its changes are :class:`SideStateRecord` lines
``[at, "ext", "{namespace}.{name}", values]`` in the same journal, written before the response like a
command's record and replayed in their place among the engine's records; its state goes into
snapshots under its namespace (``{"auth": {...}}`` beside the engine's objects). A record read before
its side-state is attached (the journal replays as the simulation is built, the Auth store is made
after) waits in :class:`SideStates` until it is. Readers that attach nothing (``cefisim replay
--from-journal``) skip them.

A scenario event may also change a side-state (``venue_faults``): the scenario runner hands the record to
the simulation in a command's place, and it is written ``[at, "scn", kind, values]``, regenerated
and checked on recovery like the scenario's commands.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any, ClassVar, Protocol

#: every side-state a journal may hold records of: ``auth`` (``api/auth/auth_log.py``) and ``faults``
#: (``api/side_state/venue_faults.py``); a record of another namespace is damage, never kept waiting for ever
NAMESPACES = frozenset({"auth", "faults"})


@dataclass(frozen=True, slots=True)
class SideStateRecord:
    """A record of a side-state (state kept beside the engine): ``kind`` is ``{namespace}.{name}``,
    ``values`` its JSON."""

    SNAPSHOT: ClassVar[tuple[str, ...]] = ("kind", "values")  # a pending scenario event in a snapshot

    kind: str
    values: Any

    @property
    def namespace(self) -> str:
        return self.kind.partition(".")[0]


class SideState(Protocol):
    """What the simulation needs of a side-state: replay its records, snapshot it, restore it."""

    def apply_record(self, at: int, kind: str, values: Any) -> None:
        """Apply one record written at engine time ``at``; ``ValueError`` when it cannot be."""
        ...

    def state(self) -> Any:
        """The state as JSON values for a snapshot; None when it is as the scenario loaded it."""
        ...

    def restore(self, state: Any) -> Callable[[], None]:
        """Check a snapshot's state (None: as loaded) and return what installs it; ``ValueError``,
        with nothing changed, when it is not sound."""
        ...


class SideStateError(ValueError):
    """A side-state's record or snapshot state does not apply; the message names the part of a snapshot, or
    ``record`` is the journal record's ``(number, byte offset)`` (the runtime names it the way it names
    any record it cannot restore past)."""

    def __init__(self, reason: str, record: tuple[int, int] | None = None) -> None:
        super().__init__(reason)
        self.reason = reason
        self.record = record


class SideStates:
    """The side-states of one simulation, and the recovered records of those not attached yet."""

    def __init__(self) -> None:
        self.attached: dict[str, SideState] = {}
        self._waiting: list[tuple[tuple[int, int], int, SideStateRecord]] = []  # ((number, byte offset), at, record)

    def attach(self, namespace: str, side_state: SideState, base: dict[str, Any] | None, path: Path | None) -> None:
        """Bring ``side_state`` to where the journal left it: ``base`` (the snapshot the journal starts from),
        then its waiting records in order; :class:`SideStateError` naming the journal and offset otherwise."""
        try:
            side_state.restore(None if base is None else base.get(namespace))()
        except ValueError as exc:
            raise SideStateError(f"journal {path}: the header (byte offset 0): the snapshot's {exc}") from None
        waiting = []
        for where, at, record in self._waiting:
            if record.namespace != namespace:
                waiting.append((where, at, record))
                continue
            try:
                side_state.apply_record(at, record.kind, record.values)
            except (ValueError, TypeError, KeyError) as exc:
                raise SideStateError(f"{record.kind} cannot be applied ({exc})", where) from None
        self._waiting = waiting
        self.attached[namespace] = side_state

    def replay(self, where: tuple[int, int], at: int, record: SideStateRecord) -> None:
        """A record met in recovery (``where``: its number and byte offset): applied now when its side-state is
        attached, else kept until it is."""
        side_state = self.attached.get(record.namespace)
        if side_state is None:
            if record.namespace not in NAMESPACES:
                raise ValueError(f"no side-state {record.namespace!r} keeps state beside the engine")
            self._waiting.append((where, at, record))
        else:
            side_state.apply_record(at, record.kind, record.values)

    def snapshot_into(self, doc: dict[str, Any]) -> dict[str, Any]:
        """Add each side-state's state under its namespace (none when as loaded) to a snapshot document."""
        for namespace, side_state in self.attached.items():
            state = side_state.state()
            if state is not None:
                doc[namespace] = state
        return doc

    def restore(self, doc: dict[str, Any] | None) -> Callable[[], None]:
        """Check every side-state's part of a snapshot (None: back to as loaded); what installs them all."""
        try:
            installs = [state.restore(None if doc is None else doc.get(ns)) for ns, state in self.attached.items()]
        except ValueError as exc:
            raise SideStateError(f"snapshot: {exc}") from None

        def install_all() -> None:
            for install in installs:
                install()

        return install_all
