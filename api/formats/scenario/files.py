"""Where the files a scenario names (``prices_file``, ``recorded[].file``) are read from.

Contract: the parser turns each file name it meets into a path through one :data:`FileResolver`. A
scenario loaded from disk resolves names against its own folder (:func:`beside`); a venue created over
HTTP resolves them through the server's policy (``api/runtime/venue_files.py``: nothing by default,
``--data-dir`` confined, and on restart the copies kept beside the journal). A resolver either returns
the path to read or raises :class:`FileRefused`, whose reason the parser reports under the field that
named the file. A resolver never quotes a file's content.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path


class FileRefused(ValueError):
    """A file name the resolver will not read: ``reason`` says why, in words fit for a problem's detail."""

    def __init__(self, reason: str) -> None:
        super().__init__(reason)
        self.reason = reason


#: a file name as the document writes it -> the path to read (or :class:`FileRefused`)
FileResolver = Callable[[str], Path]


def beside(source: str) -> FileResolver:
    """Names relative to the folder of the scenario file ``source`` (absolute names as they are)."""
    here = Path(source).parent
    return lambda name: here / name
