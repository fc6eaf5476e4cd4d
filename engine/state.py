"""How an engine class says what a snapshot saves of it (``api/runtime/snapshot.py`` reads this).

A class whose objects are state names the attributes a snapshot saves in a ``SNAPSHOT`` class
attribute, in the order they are written (a slotted class whose slots are all state:
``SNAPSHOT = __slots__``), and may define ``restored()`` to rebuild what it leaves out (memo caches,
wiring) once a snapshot's objects are back. A dataclass whose fields are its state says so with
:func:`saves_fields`. A class with neither cannot be in a snapshot.
"""

from __future__ import annotations

import dataclasses
from typing import TypeVar

T = TypeVar("T", bound=type)


def saves_fields(cls: T) -> T:
    """Class decorator (outside ``@dataclass``): a snapshot saves the dataclass's fields, in order."""
    # setattr: the attribute is new to the class, which the type checker cannot know
    setattr(cls, "SNAPSHOT", tuple(f.name for f in dataclasses.fields(cls)))  # noqa: B010
    return cls
