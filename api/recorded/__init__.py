"""Recorded market data: the cefisim format (``format.py``), importers of Tardis CSV and Binance
stream messages (``importers.py``, ``convert.py``), scenario recordings (``record.py``) and the
``cefisim data`` command (``cli.py``). ``docs/recorded.md`` describes the format and the replay."""

from cefisim.api.recorded.format import RecordingError, Writer, read_events

__all__ = ["RecordingError", "Writer", "read_events"]
