"""engine/units.py: exact conversion between decimal strings and grid units; nothing is rounded."""

from __future__ import annotations

from fractions import Fraction

import pytest
from hypothesis import given
from hypothesis import strategies as st

from cefisim.engine.units import (
    DECIMAL_RE,
    MAX_DECIMAL_CHARS,
    RATE_CEIL,
    RATE_ONE,
    Grid,
    ceil_div,
    format_rate,
    format_ratio,
    parse_decimal,
    parse_rate,
)

increments = st.sampled_from(["1", "0.01", "0.05", "0.0001", "0.25", "5", "0.00000001", "2.5", "10"])


def value_of(text: str) -> Fraction:
    return Fraction(text)


@given(inc=increments, units=st.integers(min_value=0, max_value=10**15))
def test_format_round_trips_through_to_units(inc: str, units: int) -> None:
    g = Grid(inc)
    text = g.format(units)
    assert g.to_units(text) == units
    assert value_of(text) == units * value_of(inc)
    # exactly the increment's number of decimals
    decimals = len(inc.partition(".")[2])
    assert len(text.partition(".")[2]) == decimals


@given(inc=increments, units=st.integers(min_value=0, max_value=10**12), extra_zeros=st.integers(0, 5))
def test_trailing_zeros_do_not_matter(inc: str, units: int, extra_zeros: int) -> None:
    g = Grid(inc)
    text = g.format(units)
    padded = text + ("" if "." in text else ".") + "0" * extra_zeros if extra_zeros else text
    assert g.to_units(padded) == units


@given(inc=increments, num=st.integers(min_value=0, max_value=10**12), scale=st.integers(0, 12))
def test_to_units_is_exact_or_none(inc: str, num: int, scale: int) -> None:
    """A value is on the grid iff value / increment is a whole number; then to_units is that number."""
    text = str(num) if scale == 0 else f"{num // 10**scale}.{num % 10**scale:0{scale}d}"
    g = Grid(inc)
    ratio = value_of(text) / value_of(inc)
    got = g.to_units(text)
    if ratio.denominator == 1:
        assert got == ratio.numerator
    else:
        assert got is None  # off the grid: rejected, never rounded


@pytest.mark.parametrize(
    ("text", "inc"), [("100.001", "0.01"), ("0.03", "0.05"), ("1.00000001", "0.0001"), ("7", "5"), ("0.1", "0.25")]
)
def test_off_grid_values_are_none(text: str, inc: str) -> None:
    assert Grid(inc).to_units(text) is None


@given(text=st.text(alphabet="0123456789.٣²-+e ", max_size=8) | st.from_regex(DECIMAL_RE, fullmatch=True))
def test_parse_decimal_accepts_what_the_pattern_matches(text: str) -> None:
    expected = len(text) <= MAX_DECIMAL_CHARS and bool(DECIMAL_RE.fullmatch(text))
    assert (parse_decimal(text) is not None) == expected


def test_parse_decimal_refuses_text_past_the_length_cap() -> None:
    assert parse_decimal("1" * MAX_DECIMAL_CHARS) == (int("1" * MAX_DECIMAL_CHARS), 0)
    assert parse_decimal("1" * (MAX_DECIMAL_CHARS + 1)) is None


@given(inc=increments, text=st.from_regex(r"[0-9]{1,6}(\.[0-9]{1,10})?", fullmatch=True))
def test_parse_says_canonical_exactly_when_format_writes_the_same(inc: str, text: str) -> None:
    g = Grid(inc)
    units, canonical = g.parse(text)
    assert units == g.to_units(text)
    if units is not None:
        assert canonical == (g.format(units) == text)


@given(inc=increments, units=st.integers(min_value=0, max_value=10**15))
def test_format_seeds_the_parse_cache_with_what_parse_would_say(inc: str, units: int) -> None:
    seeded, fresh = Grid(inc), Grid(inc)
    text = seeded.format(units)  # also files text -> units in the parse cache
    assert seeded.parse(text) == fresh.parse(text) == (units, True)


@pytest.mark.parametrize("bad", ["", "-1", "+1", "1.", ".5", "1e3", " 1", "1 ", "1,5", "0x10", "1.2.3", "١٢", "1" * 65])
def test_malformed_decimals_are_none(bad: str) -> None:
    assert parse_decimal(bad) is None
    assert Grid("0.01").to_units(bad) is None


def test_grid_rejects_bad_increments() -> None:
    for bad in ("0", "0.000", "-0.01", "abc", ""):
        with pytest.raises(ValueError, match=f"^increment must be a positive decimal string, got {bad!r}$"):
            Grid(bad)


def test_of_decimals() -> None:
    assert Grid.of_decimals(0).text == "1"
    assert Grid.of_decimals(2).text == "0.01"
    assert Grid.of_decimals(8).to_units("1") == 10**8
    assert Grid.of_decimals(8).format(1) == "0.00000001"


def test_format_examples() -> None:
    assert Grid("0.01").format(12340) == "123.40"
    assert Grid("0.05").format(3) == "0.15"
    assert Grid("5").format(3) == "15"
    assert Grid("0.01").format(0) == "0.00"


@given(st.integers(min_value=0, max_value=10 * RATE_ONE))
def test_rate_round_trip(r: int) -> None:
    assert parse_rate(format_rate(r)) == r


def test_parse_rate() -> None:
    assert parse_rate("0.0025") == 2_500_000
    assert parse_rate("0.0000000010") == 1  # trailing zeros beyond the scale are fine
    assert parse_rate("0.0000000001") is None  # finer than 1e-9: refused, not rounded
    assert parse_rate("x") is None


@given(st.integers(-(10**12), 10**12), st.integers(1, 10**6))
def test_ceil_div(num: int, den: int) -> None:
    assert ceil_div(num, den) == -((-Fraction(num, den)).__floor__())


@given(st.integers(-(10**30), 10**30))
def test_a_fee_rounds_up_with_rate_ceil(units: int) -> None:
    assert (units + RATE_CEIL) // RATE_ONE == ceil_div(units, RATE_ONE)


@given(st.integers(0, 10**12), st.integers(1, 10**6), st.integers(0, 8))
def test_format_ratio_is_half_even(num: int, den: int, scale: int) -> None:
    text = format_ratio(num, den, scale)
    exact = Fraction(num, den) * 10**scale
    expected = round(exact)  # Fraction rounds half to even
    assert Fraction(text) * 10**scale == expected
