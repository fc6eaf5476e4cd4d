"""How a sweep's scenario and strategy files reach the workers, and how a worker loads them once.

Contract:
- ``Sources.collect(scenario, strategy, scenario_path, strategy_spec, inline)`` describes the files
  of a sweep on the machine that starts it. With ``inline`` (Dask executors) the scenario file, every
  file it references and a ``path/file.py:Class`` strategy file travel *with each task* when they are
  small (:data:`SEND_LIMIT` bytes in all) and every referenced file lies in or under the scenario's
  folder; otherwise (local executors, or large / outside files) the task carries the paths and the
  worker reads them from its own filesystem, so a cluster needs them on a path every worker shares.
- A scenario references files through keys named ``file`` or ending in ``_file`` (``prices_file`` of
  a market maker), relative to the scenario file (``docs/scenarios.md``).
- ``load(sources)`` on a worker returns the scenario and the strategy class; a worker process loads
  a given set of files once (cached by content digest, or by path, size and modification time) and
  reuses it for every run. A
  file missing on the worker raises :class:`WorkerFileError`, which names the file, the host and what
  to do: the run fails, the others go on. Inline files are written once per host under the temporary
  folder (``cefisim-sweep/<digest>/``, atomically, so concurrent worker processes agree), and the
  scenario keeps the name it had on the starting machine (its report says ``scenario`` as given).
"""

from __future__ import annotations

import hashlib
import os
import socket
import tempfile
from dataclasses import dataclass, replace
from pathlib import Path, PurePosixPath
from typing import Any

from cefisim.api.cli.backtest.backtest_command import BacktestError, load_strategy_class
from cefisim.api.formats.scenario import Scenario, ScenarioError, load_scenario

__all__ = ["SEND_LIMIT", "Sources", "WorkerFileError", "load", "referenced_files"]

SEND_LIMIT = 8 * 1024 * 1024  # bytes of files sent with each task; past it the workers read paths
CACHE_SIZE = 4  # loaded (scenario, strategy) pairs a worker keeps


class WorkerFileError(RuntimeError):
    """A file of the sweep is not on the worker (or cannot be read or loaded there)."""


@dataclass(frozen=True)
class Sources:
    """The scenario and strategy as the worker must find them.

    ``scenario_path``/``strategy`` are as given on the starting machine. ``files`` (name -> bytes,
    names relative to the scenario's folder, ``/``-separated; the strategy file under
    ``strategy/``) is set when the files travel with the task; ``digest`` identifies them."""

    scenario_path: str
    scenario_name: str  # the scenario file's name inside ``files``
    strategy: str
    strategy_file: str | None  # the strategy file's name inside ``files``
    files: tuple[tuple[str, bytes], ...] | None
    digest: str

    @classmethod
    def collect(
        cls, scenario: Scenario, scenario_path: str, strategy: str, inline: bool, limit: int = SEND_LIMIT
    ) -> Sources:
        """Describe the sweep's files; with ``inline``, read them to send when they qualify."""
        by_path = cls(
            scenario_path,
            Path(scenario_path).name,
            strategy,
            None,
            None,
            _digest(
                [
                    ("path", scenario_path.encode()),
                    ("strategy", strategy.encode()),
                    ("stamps", _stamps(scenario, scenario_path, strategy).encode()),
                ]
            ),
        )
        if not inline:
            return by_path
        base = Path(scenario_path).parent
        names = [Path(scenario_path).name, *referenced_files(scenario.doc)]
        if any(not _inside(n) for n in names):
            return by_path  # a file outside the scenario's folder: read from the shared path
        where, _, cls_name = strategy.rpartition(":")
        strategy_file = None
        if _is_path(where):
            strategy_file = "strategy/" + Path(where).name
        try:
            files = [(n, (base / n).read_bytes()) for n in dict.fromkeys(names)]
            if strategy_file is not None:
                files.append((strategy_file, Path(where).read_bytes()))
        except OSError:
            return by_path  # the loader has reported it, or the worker will: same message either way
        if sum(len(b) for _, b in files) > limit:
            return by_path
        digest = _digest([(n.encode(), b) for n, b in files] + [("class", cls_name.encode())])
        return cls(scenario_path, names[0], strategy, strategy_file, tuple(files), digest)


def _stamps(scenario: Scenario, scenario_path: str, strategy: str) -> str:
    """Size and modification time of every file of the sweep here: a worker that keeps its loaded
    files between sweeps (a Dask cluster) reloads them when one has changed."""
    base = Path(scenario_path).parent
    paths = [Path(scenario_path)] + [base / n for n in referenced_files(scenario.doc)]
    where = strategy.rpartition(":")[0]
    if _is_path(where):
        paths.append(Path(where))
    out = []
    for p in paths:
        try:
            st = p.stat()
            out.append(f"{p}:{st.st_size}:{st.st_mtime_ns}")
        except OSError:
            out.append(f"{p}:-")
    return "|".join(out)


def referenced_files(doc: Any) -> list[str]:
    """Every string under a key ``file`` or ``*_file`` in a scenario document, in document order."""
    out: list[str] = []
    if isinstance(doc, dict):
        for key, value in doc.items():
            if isinstance(value, str) and (key == "file" or key.endswith("_file")):
                out.append(value)
            else:
                out.extend(referenced_files(value))
    elif isinstance(doc, list):
        for item in doc:
            out.extend(referenced_files(item))
    return out


def _is_path(where: str) -> bool:
    """What ``load_strategy_class`` takes for a file (``path/to/file.py``), not a module name."""
    return where.endswith(".py") or "/" in where or os.sep in where


def _inside(name: str) -> bool:
    p = PurePosixPath(name.replace(os.sep, "/"))
    return not p.is_absolute() and ".." not in p.parts


def _digest(parts: list[tuple[Any, bytes]]) -> str:
    h = hashlib.sha256()
    for name, data in parts:
        name_b = name if isinstance(name, bytes) else str(name).encode()
        h.update(len(name_b).to_bytes(8, "big") + name_b + len(data).to_bytes(8, "big") + data)
    return h.hexdigest()[:32]


# --- on the worker -------------------------------------------------------------------------------

_loaded: dict[str, tuple[Scenario, type]] = {}


def load(src: Sources) -> tuple[Scenario, type]:
    """The scenario and strategy class of ``src`` in this process (loaded at most once)."""
    hit = _loaded.get(src.digest)
    if hit is not None:
        return hit
    if src.files is not None:
        root = _materialise(src)
        scenario_file = root / src.scenario_name
        strategy = src.strategy
        if src.strategy_file is not None:
            strategy = f"{root / src.strategy_file}:{src.strategy.rpartition(':')[2]}"
    else:
        scenario_file = Path(src.scenario_path)
        strategy = src.strategy
        if not scenario_file.is_file():
            raise WorkerFileError(
                f"the scenario {src.scenario_path} is not on worker {socket.gethostname()} (working directory "
                f"{os.getcwd()}): put it on a path every worker shares, or keep it and its files under "
                f"{SEND_LIMIT // (1024 * 1024)} MiB in the scenario's folder so they travel with the task"
            )
    try:
        scenario = load_scenario(scenario_file)
        cls = load_strategy_class(strategy)
    except (ScenarioError, BacktestError) as exc:
        raise WorkerFileError(f"on worker {socket.gethostname()}: {exc}") from None
    scenario = replace(scenario, source=src.scenario_path)
    if len(_loaded) >= CACHE_SIZE:
        _loaded.pop(next(iter(_loaded)))
    _loaded[src.digest] = (scenario, cls)
    return scenario, cls


def _materialise(src: Sources) -> Path:
    """Write the inline files under ``<tmp>/cefisim-sweep/<digest>/`` (once per host) and return it."""
    assert src.files is not None
    root = Path(tempfile.gettempdir()) / "cefisim-sweep" / src.digest
    for name, data in src.files:
        target = root / name
        if target.is_file() and target.stat().st_size == len(data):
            continue  # the digest names the content: a complete file of this size is this file
        target.parent.mkdir(parents=True, exist_ok=True)
        fd, tmp = tempfile.mkstemp(dir=target.parent, prefix=".part-")
        with os.fdopen(fd, "wb") as out:
            out.write(data)
        os.replace(tmp, target)  # atomic: another worker process never reads half a file
    return root
