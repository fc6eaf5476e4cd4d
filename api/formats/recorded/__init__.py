"""Recorded market data files: the cefisim format (``format.py``), importers of Tardis CSV and Binance
stream messages (``importers.py``, ``convert.py``) and a scenario's recorded source (``source.py``).
The ``cefisim data`` command and the scenario recorder that write such files are ``api/cli/data/``;
``docs/recorded.md`` describes the format and the replay."""

from cefisim.api.formats.recorded.format import RecordingError, Writer, read_events

__all__ = ["RecordingError", "Writer", "read_events"]
