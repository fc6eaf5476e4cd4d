"""A progress bar over engine time for ``cefisim replay`` and ``cefisim backtest`` (tqdm).

Contract: :class:`Progress` draws a tqdm bar from the run's start to its end in engine seconds on
``stream`` only when it is a terminal, and only once the run has lasted ``DELAY_S`` of wall time
(short runs stay silent); on anything else (a pipe, a file, CI logs) it writes nothing and costs
one counter test per call. :meth:`Progress.at` takes the engine time as the run goes: the clock is
read and the bar moved once every ``EVERY`` calls, so a hot loop can call it on every step.
:meth:`Progress.close` removes the bar. Nothing it draws goes to stdout: summaries stay clean.
"""

from __future__ import annotations

from typing import IO, Any

DELAY_S = 2.0  # wall seconds before a bar appears
EVERY = 1024  # calls between two looks at the engine time


class Progress:
    """A bar over ``[start_ns, until_ns]`` of engine time on ``stream``, if it is a terminal."""

    def __init__(
        self, start_ns: int, until_ns: int, stream: IO[str] | None, desc: str = "", delay_s: float | None = None
    ) -> None:
        self.start_ns = start_ns
        self._calls = 0
        self._shown_s = 0.0
        self.bar: Any = None
        if stream is None or not stream.isatty():
            return
        from tqdm import tqdm  # import-time cost: loaded only when a bar is drawn on a terminal

        total = max(0, until_ns - start_ns) / 1e9
        self.bar = tqdm(
            total=round(total, 3),
            unit="s",
            unit_scale=False,
            desc=desc,
            file=stream,
            delay=DELAY_S if delay_s is None else delay_s,
            leave=False,
            dynamic_ncols=True,
            bar_format="{desc}{percentage:3.0f}%|{bar}| {n:.0f}/{total:.0f} engine s [{elapsed}<{remaining}]",
        )

    def at(self, now_ns: int) -> None:
        """The run has reached engine time ``now_ns``."""
        if self.bar is None:
            return
        self._calls += 1
        if self._calls % EVERY:
            return
        done = (now_ns - self.start_ns) / 1e9
        if done > self._shown_s:
            self.bar.update(done - self._shown_s)
            self._shown_s = done

    def close(self) -> None:
        if self.bar is not None:
            self.bar.close()
            self.bar = None
