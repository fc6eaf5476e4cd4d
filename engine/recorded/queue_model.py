"""Queue-position models: how much of a recorded level is still ahead of a user's resting order.

Contract (the models of hftbacktest's ``RiskAdverseQueueModel`` and ``ProbQueueModel``, in integers):
- An order joining a recorded level starts with ``front`` = the recorded quantity visible ahead of it
  (``engine/recorded/market.py`` decides it). A recorded trade of ``q`` lots at the order's price moves it
  forward by ``q`` (``front -= q``, and ``traded += q``); that part is the same for every model.
- ``depth(front, prev, new, traded)`` gives ``front`` after the level's recorded size changes from
  ``prev`` to ``new`` lots. ``traded`` is what trades at the price took since the last change: the
  recording reports the trade and then the smaller level, so that much of the decrease is already
  counted. An increase never moves the order (new quantity joins behind it); ``front`` never exceeds
  the level's size.
- :class:`RiskAverse`: only trades move the order forward; a decrease is behind it unless the level
  is now smaller than what was ahead.
- :class:`PowerProb` (``f(x) = x**n``) and :class:`LogProb` (``f(x) = ln(1 + x)``): a decrease of
  ``chg`` lots is behind the order with probability ``p = f(back) / (f(back) + f(front))``, where
  ``back = prev - front``; the new front is the expectation ``front - (1 - p) chg + min(back - p chg,
  0)``. The power model is exact rational arithmetic; the log model rounds ``p`` to 1e-9 from
  ``math.log`` (correctly rounded on the usual C libraries), and both round the front up to whole lots
  (the order is never assumed further ahead than the expectation).
Complexity: O(1) per call.
"""

from __future__ import annotations

import math

SCALE = 10**9


class RiskAverse:
    name = "risk_averse"

    def depth(self, front: int, prev: int, new: int, traded: int) -> int:
        return front if front < new else new


class _Prob:
    """The shared expectation; subclasses give ``p`` as a fraction (num, den) of the decrease behind."""

    name = ""

    def behind(self, front: int, back: int) -> tuple[int, int]:
        raise AssertionError("abstract")  # pragma: no cover

    def depth(self, front: int, prev: int, new: int, traded: int) -> int:
        chg = prev - new - traded
        if chg <= 0 or front <= 0:
            return front if front < new else new
        back = prev - front
        num, den = self.behind(front, max(back, 0))
        if den == 0:  # nothing ahead and nothing behind: the whole decrease is behind
            num, den = 1, 1
        # front - (1 - p) chg + min(back - p chg, 0) with p = num / den, rounded up
        est = front * den - (den - num) * chg + min(back * den - num * chg, 0)
        est = -(-est // den)
        if est < 0:
            est = 0
        return est if est < new else new


class PowerProb(_Prob):
    def __init__(self, n: int) -> None:
        if not 1 <= n <= 16:
            raise ValueError("the power model's n must be a whole number from 1 to 16")
        self.n = n
        self.name = f"power{n}"

    def behind(self, front: int, back: int) -> tuple[int, int]:
        fb, ff = back**self.n, front**self.n
        return fb, fb + ff


class LogProb(_Prob):
    name = "log"

    def behind(self, front: int, back: int) -> tuple[int, int]:
        fb, ff = math.log1p(back), math.log1p(front)
        if fb + ff == 0:
            return 0, 0
        return round(fb / (fb + ff) * SCALE), SCALE


QueueModel = RiskAverse | PowerProb | LogProb


def queue_model(name: str, n: int | None = None) -> QueueModel:
    """A model by name: ``risk_averse``, ``power`` (with ``n``) or ``log``."""
    if name == "risk_averse":
        return RiskAverse()
    if name == "power":
        return PowerProb(3 if n is None else n)
    if name == "log":
        return LogProb()
    raise ValueError(f"unknown queue model {name!r} (risk_averse, power or log)")


__all__ = ["LogProb", "PowerProb", "QueueModel", "RiskAverse", "queue_model"]
