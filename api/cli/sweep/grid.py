"""The sweep's axes and its runs: seeds x strategy parameters x latencies, from flags or a sweep file.

Contract:
- ``parse_seeds("1-64")`` (also ``"1,5,9-12"``) -> the seeds in the order given, no duplicates;
  ``parse_param("qty=0.01,0.05")`` -> ``("qty", ["0.01", "0.05"])``; ``parse_latency("0,5,20")``
  -> the latencies in milliseconds as canonical decimal strings. Each raises :class:`GridError`
  naming the flag and the reason.
- ``load_sweep_file(path)`` reads a JSON (``.json``) or TOML (any other suffix) sweep file and
  returns its keys checked (:data:`FILE_KEYS`); a problem is a :class:`GridError` with the file, the
  key path and the reason, never a traceback. Relative ``scenario`` and strategy file paths are
  resolved against the file's directory; a shipped scenario's or strategy's name stays a name.
- ``runs(axes)`` is the Cartesian product in a fixed order: parameter sets (the first ``--param``
  varies slowest), then latencies, then seeds. Run ``i`` is the ``i``-th of that order, whatever
  executes it, so the rows of a sweep are the same list on every executor.
- Values are strings, as ``cefisim backtest --param`` passes them; a file may write integers, never
  floats (a float's text is not what the user wrote: ``0.1`` -> ``0.1000000000000000055...``).
"""

from __future__ import annotations

import itertools
import json
import tomllib
from dataclasses import dataclass, field
from decimal import Decimal
from pathlib import Path
from typing import Any

from cefisim.api.cli.backtest.backtest_command import BacktestError, millis_ns
from cefisim.api.formats.scenario.shipped import shipped

__all__ = [
    "FILE_KEYS",
    "MAX_RUNS",
    "Axes",
    "GridError",
    "RunSpec",
    "load_sweep_file",
    "parse_latency",
    "parse_param",
    "parse_seeds",
    "runs",
]

MAX_SEED = 2**63 - 1  # a scenario's seed is at most this (api/formats/scenario/loader.py)
MAX_RUNS = 1_000_000  # a grid past this is a typo ("1-100000000"), not a sweep
FILE_KEYS = ("scenario", "strategy", "seeds", "params", "latency_ms", "until", "client", "quote")


class GridError(ValueError):
    """A bad axis or sweep file: the message names the flag or file+key and the reason."""


@dataclass(frozen=True)
class RunSpec:
    """One run of the sweep: its index in the fixed order and what varies."""

    index: int
    seed: int
    params: tuple[tuple[str, str], ...]  # in the order the parameters were given
    latency_ms: str | None  # None: the scenario's own latency setting applies to the strategy


@dataclass
class Axes:
    """What the sweep varies (``params`` keeps the order the keys were given)."""

    seeds: list[int]
    params: dict[str, list[str]] = field(default_factory=dict)
    latency_ms: list[str | None] = field(default_factory=lambda: [None])


def parse_seeds(text: str, where: str = "--seeds") -> list[int]:
    """``"1-64"``, ``"7"``, ``"1,5,9-12"`` -> seeds in order; GridError on a bad item or a repeat."""
    out: list[int] = []
    for item in text.split(","):
        lo, dash, hi = item.strip().partition("-")
        try:
            first = int(lo)
            last = int(hi) if dash else first
        except ValueError:
            raise GridError(f"{where}: {item.strip()!r} is not a seed or a range A-B") from None
        if first < 0 or last > MAX_SEED:
            raise GridError(f"{where}: {item.strip()!r}: seeds are 0 to {MAX_SEED}")
        if last < first:
            raise GridError(f"{where}: {item.strip()!r}: the range ends before it starts")
        if len(out) + last - first + 1 > MAX_RUNS:
            raise GridError(f"{where}: more than {MAX_RUNS:,} seeds")
        out.extend(range(first, last + 1))
    _no_repeats(out, where)
    return out


def parse_param(text: str) -> tuple[str, list[str]]:
    """``"KEY=V1,V2"`` -> (KEY, [V1, V2]); a value cannot hold a comma (use a sweep file for that)."""
    key, sep, values = text.partition("=")
    if not sep or not key.isidentifier():
        raise GridError(f"--param {text!r}: give KEY=VALUE[,VALUE...]")
    items = values.split(",")
    _no_repeats(items, f"--param {key}")
    return key, items


def canonical_ms(value: object, where: str) -> str:
    """A latency in milliseconds as canonical decimal text (``5``, ``0.5``), checked as ``cefisim
    backtest --latency-ms`` checks it (zero or more, whole nanoseconds)."""
    if isinstance(value, bool) or not isinstance(value, (int, str)):
        raise GridError(f"{where}: {value!r}: give milliseconds as an integer or a decimal string")
    try:
        ns = millis_ns(str(value).strip())
    except BacktestError as exc:
        raise GridError(f"{where}: {str(exc).partition(': ')[2]}") from None
    return format((Decimal(ns) / 1_000_000).normalize(), "f")


def parse_latency(text: str, where: str = "--latency-ms") -> list[str | None]:
    """``"0,5,20"`` -> ``["0", "5", "20"]``."""
    out: list[str | None] = [canonical_ms(item, where) for item in text.split(",")]
    _no_repeats(out, where)
    return out


def _no_repeats(items: list[Any], where: str) -> None:
    seen: set[Any] = set()
    for item in items:
        if item in seen:
            raise GridError(f"{where}: {item!r} is given twice")
        seen.add(item)


def runs(axes: Axes) -> list[RunSpec]:
    """Every run of the grid in the fixed order (parameter sets, then latencies, then seeds)."""
    keys = list(axes.params)
    combos = list(itertools.product(*(axes.params[k] for k in keys)))
    total = len(combos) * len(axes.latency_ms) * len(axes.seeds)
    if total > MAX_RUNS:
        raise GridError(f"the grid has {total:,} runs: at most {MAX_RUNS:,}")
    out: list[RunSpec] = []
    for combo in combos:
        params = tuple(zip(keys, combo, strict=True))
        for latency in axes.latency_ms:
            for seed in axes.seeds:
                out.append(RunSpec(len(out), seed, params, latency))
    return out


# --- sweep files -------------------------------------------------------------------------------------


def load_sweep_file(path: str | Path) -> dict[str, Any]:
    """The checked keys of a sweep file: ``scenario`` and ``strategy`` (paths resolved against the
    file's directory), ``seeds`` (list of ints), ``params`` (key -> list of strings), ``latency_ms``
    (list of canonical strings), ``until``, ``client``, ``quote`` (strings). Missing keys are absent."""
    p = Path(path)
    try:
        raw = p.read_bytes()
    except OSError as exc:
        raise GridError(f"{path}: cannot read the file: {exc.strerror or exc}") from None
    try:
        doc: Any = json.loads(raw) if p.suffix == ".json" else tomllib.loads(raw.decode("utf-8"))
    except json.JSONDecodeError as exc:
        raise GridError(f"{path}: invalid JSON at line {exc.lineno}, column {exc.colno}: {exc.msg}") from None
    except (tomllib.TOMLDecodeError, UnicodeDecodeError) as exc:
        raise GridError(f"{path}: invalid TOML: {exc}") from None
    if not isinstance(doc, dict):
        raise GridError(f"{path}: $: must be an object (a table)")
    out: dict[str, Any] = {}
    for key, value in doc.items():
        where = f"{path}: $.{key}"
        if key not in FILE_KEYS:
            raise GridError(f"{where}: unknown key (known: {', '.join(FILE_KEYS)})")
        if key == "seeds":
            out[key] = _file_seeds(value, where)
        elif key == "params":
            out[key] = _file_params(value, where)
        elif key == "latency_ms":
            items = value if isinstance(value, list) else [value]
            out[key] = [canonical_ms(v, f"{where}[{i}]") for i, v in enumerate(items)]
            _no_repeats(out[key], where)
        elif not isinstance(value, str):
            raise GridError(f"{where}: must be a string")
        elif key == "scenario":
            here = p.parent / value  # a file next to this one, else a shipped scenario's name (demo)
            out[key] = value if not here.exists() and shipped(value) is not None else str(here)
        elif key == "strategy":
            out[key] = _resolve_strategy(value, p.parent)
        else:
            out[key] = value
    return out


def _file_seeds(value: object, where: str) -> list[int]:
    if isinstance(value, str):
        return parse_seeds(value, where)
    if not isinstance(value, list) or not value:
        raise GridError(f'{where}: give a range string ("1-64") or a non-empty list of integers')
    for i, v in enumerate(value):
        if isinstance(v, bool) or not isinstance(v, int) or not 0 <= v <= MAX_SEED:
            raise GridError(f"{where}[{i}]: must be an integer from 0 to {MAX_SEED}")
    _no_repeats(value, where)
    return list(value)


def _file_params(value: object, where: str) -> dict[str, list[str]]:
    if not isinstance(value, dict):
        raise GridError(f"{where}: must be an object of KEY = value or [values]")
    out: dict[str, list[str]] = {}
    for key, values in value.items():
        kp = f"{where}.{key}"
        if not key.isidentifier():
            raise GridError(f"{kp}: not a keyword argument name")
        items = values if isinstance(values, list) else [values]
        if not items:
            raise GridError(f"{kp}: an empty list of values")
        texts = []
        for i, v in enumerate(items):
            if isinstance(v, bool) or not isinstance(v, (int, str)):
                raise GridError(f'{kp}[{i}]: write the value as a string or an integer ("0.01", not 0.01)')
            texts.append(str(v))
        _no_repeats(texts, kp)
        out[key] = texts
    return out


def _resolve_strategy(spec: str, base: Path) -> str:
    """A ``path/file.py:Class`` spec relative to the sweep file; a ``module:Class`` spec or a shipped
    strategy's name unchanged."""
    where, sep, name = spec.rpartition(":")
    if sep and (where.endswith(".py") or "/" in where) and not Path(where).is_absolute():
        return f"{base / where}:{name}"
    return spec
