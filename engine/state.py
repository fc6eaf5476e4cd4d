"""How an engine class says what a snapshot saves of it (``api/runtime/snapshot.py`` reads this).

A class whose objects are state names the attributes a snapshot saves in a ``SNAPSHOT`` class
attribute, in the order they are written (a slotted class whose slots are all state:
``SNAPSHOT = __slots__``), and may define ``restored()`` to rebuild what it leaves out (memo caches,
wiring) once a snapshot's objects are back. A dataclass whose fields are its state says so with
:func:`saves_fields`. A class with neither cannot be in a snapshot; :func:`saved_state` reads both.
"""

from __future__ import annotations

import dataclasses
from typing import TypeVar

#: dataclass -> its fields, for the dataclasses whose fields are their state. A registry rather than a
#: class attribute: in the compiled build a dataclass may be a C type, whose attributes are fixed
_FIELD_STATE: dict[type, tuple[str, ...]] = {}


T = TypeVar("T", bound=type)


def saves_fields(cls: T) -> T:
    """Declare that a snapshot saves the dataclass's fields, in order: a class decorator (outside
    ``@dataclass``), or a call after the class where it is a C type, which takes no decorator."""
    _FIELD_STATE[cls] = tuple(f.name for f in dataclasses.fields(cls))
    return cls


def saved_state(cls: type) -> tuple[str, ...] | None:
    """The attributes a snapshot saves of an instance of ``cls``, in order; None: ``cls`` declares no
    state and cannot be in a snapshot."""
    declared: tuple[str, ...] | None = getattr(cls, "SNAPSHOT", None)
    return declared if declared is not None else _FIELD_STATE.get(cls)
