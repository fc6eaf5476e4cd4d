"""The HTTP fault plan of a venue: which of the next requests meet an injected fault, and how.

``POST /_sim/faults`` (``api/web/control/faults.py``) sets one plan per venue, held by the venue's
state (``VenueState.http_faults``); the app's middleware asks it about every request before the
handler runs. HTTP faults change answers only (a status, a dropped connection, a delay); the venue's
own faults (read lag, late fills, clock skew) are ``api/side_state/venue_faults.py``.

A plan hits the next ``count`` requests under ``path_prefix``, or a share of them (``share_ppm``
parts per million) drawn from ``rng``, which the control plane seeds from the scenario's seed: the
same requests in the same order meet the same faults.
"""

from __future__ import annotations

import random
from dataclasses import dataclass, field


@dataclass
class HttpFaultPlan:
    count: int | None = None
    share_ppm: int | None = None  # parts per million
    status: int | None = None
    delay_ms: int = 0
    drop: bool = False
    after: bool = False
    path_prefix: str = "/v1/"
    hits: int = 0
    seen: int = 0
    rng: random.Random = field(default_factory=random.Random)

    def decide(self, path: str) -> bool:
        """Whether the request for ``path`` meets the fault (counted in ``seen`` and ``hits``)."""
        if not path.startswith(self.path_prefix):
            return False
        self.seen += 1
        if self.count is not None:
            if self.hits >= self.count:
                return False
        elif self.share_ppm is not None and self.rng.randrange(1_000_000) >= self.share_ppm:
            return False
        self.hits += 1
        return True

    def describe(self) -> dict:
        return {
            "count": self.count,
            "share": None if self.share_ppm is None else f"{self.share_ppm / 1e6:g}",
            "status": self.status,
            "delay_ms": self.delay_ms,
            "drop": self.drop,
            "after": self.after,
            "path_prefix": self.path_prefix,
            "hits": self.hits,
            "seen": self.seen,
        }
