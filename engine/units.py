"""Exact conversion between decimal strings and integers on a grid.

Contract:
- A decimal string is ``[0-9]+(\\.[0-9]+)?`` (no sign, no exponent, no spaces). Negative values never
  appear on the wire of this venue; callers that need a sign handle it themselves.
- A :class:`Grid` is an increment such as ``0.01`` or ``0.05``. ``to_units`` returns the exact number of
  increments, or ``None`` when the value is off the grid: nothing is ever rounded.
- ``format`` writes ``units * increment`` with exactly the increment's number of decimals, so a price on a
  ``0.01`` grid always reads ``"123.40"``. The output parses back to the same units.

Everything is integer arithmetic; no float and no ``decimal`` context is involved.
"""

from __future__ import annotations

import re
from typing import ClassVar

DECIMAL_RE = re.compile(r"^[0-9]+(\.[0-9]+)?$")

#: Fee rates and price bands are fractions held as integers in units of 10**-RATE_SCALE.
RATE_SCALE = 9
RATE_ONE: int = 10**RATE_SCALE  # annotated: mypy types a power with a variable exponent as Any
#: ``ceil(a / RATE_ONE) == (a + RATE_CEIL) // RATE_ONE`` for every integer ``a``: a fee rounded up in
#: two integer operations (``-(-a // RATE_ONE)`` takes three, and each makes a new int on a fill)
RATE_CEIL = RATE_ONE - 1
#: The longest decimal string parse_decimal reads.
MAX_DECIMAL_CHARS = 64


def parse_decimal(text: str) -> tuple[int, int] | None:
    """``"12.340"`` -> ``(12340, 3)``: coefficient and number of decimals; None if not a decimal string.

    Accepts exactly what ``DECIMAL_RE`` matches, up to ``MAX_DECIMAL_CHARS`` characters (longer text is
    never a venue amount and is refused before any work), checked with string methods (``isascii``
    rules out the other scripts' digits ``isdigit`` accepts): this runs on every price the engine has
    not seen yet.
    """
    if not isinstance(text, str) or len(text) > MAX_DECIMAL_CHARS:
        return None
    whole, dot, frac = text.partition(".")
    if not (whole.isdigit() and whole.isascii()) or (dot and not (frac.isdigit() and frac.isascii())):
        return None
    return int(whole + frac), len(frac)


class Grid:
    """An increment; converts decimal strings to whole numbers of increments and back."""

    __slots__ = ("_cache", "_pow", "_texts", "coef", "scale", "text", "zero")
    SNAPSHOT: ClassVar[tuple[str, ...]] = ("text", "coef", "scale", "_pow", "zero")  # the caches are not state

    def __init__(self, increment: str) -> None:
        parsed = parse_decimal(increment)
        if parsed is None or parsed[0] == 0:
            raise ValueError(f"increment must be a positive decimal string, got {increment!r}")
        self.text = increment
        self.coef, self.scale = parsed
        self._pow = 10**self.scale
        self.reset_caches()
        self.zero = self.format(0)  # written on every record that has nothing pending or open

    def reset_caches(self) -> None:
        """Empty the memo caches (they are not state: a snapshot leaves them out)."""
        self._cache: dict[str, tuple[int | None, bool]] = {}
        self._texts: dict[int, str] = {}

    def restored(self) -> None:
        """Rebuild what a snapshot leaves out (``api/runtime/snapshot.py``): the memo caches."""
        self.reset_caches()

    @classmethod
    def of_decimals(cls, decimals: int) -> Grid:
        """The grid of an asset with ``decimals`` decimal places (its smallest unit)."""
        return cls("1" if decimals == 0 else "0." + "0" * (decimals - 1) + "1")

    def parse(self, text: str) -> tuple[int | None, bool]:
        """(units or None, whether ``text`` is the canonical spelling ``format(units)``), cached.

        Order entry meets the same few price and quantity strings over and over; the cache (cleared
        when it grows past 4096 entries) makes their conversion a dict lookup.
        """
        hit = self._cache.get(text)
        if hit is not None:
            return hit
        units = self.to_units(text)
        hit = (units, units is not None and self._is_canonical(text))
        if len(self._cache) >= 4096:
            self._cache.clear()
        self._cache[text] = hit
        return hit

    def _is_canonical(self, text: str) -> bool:
        """Whether a decimal string on this grid is spelt as ``format`` writes it: exactly the
        increment's number of decimals and no leading zero."""
        whole, _, frac = text.partition(".")
        return len(frac) == self.scale and (len(whole) == 1 or whole[0] != "0")

    def to_units(self, text: str) -> int | None:
        """Exact number of increments in ``text``; None when malformed or off the grid."""
        parsed = parse_decimal(text)
        if parsed is None:
            return None
        coef, scale = parsed
        # value = coef / 10**scale ; units = value / (self.coef / 10**self.scale)
        num = coef * self._pow
        den = self.coef * 10**scale
        units, rest = divmod(num, den)
        return None if rest else units

    def format(self, units: int) -> str:
        """``units`` increments as a decimal string with the increment's number of decimals (cached)."""
        text = self._texts.get(units)
        if text is None:
            text = self._format(units)
            if len(self._texts) >= 4096:
                self._texts.clear()
            self._texts[units] = text
            if units >= 0:
                # the text parses back to these units: agents format the prices the engine then parses
                if len(self._cache) >= 4096:
                    self._cache.clear()
                self._cache[text] = (units, True)
        return text

    def _format(self, units: int) -> str:
        value = units * self.coef
        if self.scale == 0:
            return str(value)
        sign = "-" if value < 0 else ""
        whole, frac = divmod(abs(value), self._pow)
        return f"{sign}{whole}.{frac:0{self.scale}d}"

    def __repr__(self) -> str:
        return f"Grid({self.text!r})"


def parse_rate(text: str) -> int | None:
    """A fraction such as ``"0.0025"`` in units of 10**-RATE_SCALE; None if malformed or too precise."""
    parsed = parse_decimal(text)
    if parsed is None:
        return None
    coef, scale = parsed
    # a power of ten with a variable exponent is Any to mypy (it could be a float): name it an int
    if scale > RATE_SCALE:
        factor: int = 10 ** (scale - RATE_SCALE)
        if coef % factor:
            return None
        return coef // factor
    factor = 10 ** (RATE_SCALE - scale)
    return coef * factor


def format_rate(rate: int) -> str:
    """Inverse of :func:`parse_rate`, trailing zeros removed (``2500000`` -> ``"0.0025"``)."""
    whole, frac = divmod(rate, RATE_ONE)
    if not frac:
        return str(whole)
    return f"{whole}.{frac:0{RATE_SCALE}d}".rstrip("0")


def ceil_div(num: int, den: int) -> int:
    """Ceiling of num/den for den > 0, exact for any integers."""
    return -((-num) // den)


def format_ratio(num: int, den: int, scale: int) -> str:
    """num/den rounded half-even to ``scale`` decimals (used for averages such as VWAP)."""
    if den <= 0:
        raise ValueError("denominator must be positive")
    scaled_num = num * 10**scale
    q, r = divmod(scaled_num, den)
    twice = 2 * r
    if twice > den or (twice == den and q % 2):
        q += 1
    if scale == 0:
        return str(q)
    whole, frac = divmod(q, 10**scale)
    return f"{whole}.{frac:0{scale}d}"
