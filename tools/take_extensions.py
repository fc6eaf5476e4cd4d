"""Copy the compiled extension modules out of a wheel into the checkout (``make test``).

    python tools/take_extensions.py WHEEL

``make test`` compiles the engine (and the journal's writer) once, into the wheel it builds for the
installation tests; this puts that wheel's ``cefisim/engine/**/*.so`` and ``cefisim/api/**/*.so`` beside
the ``.py`` files they were compiled from (``engine/``, ``engine/recorded/``, ``engine/simulation/``,
``api/runtime/``), as ``make compiled`` would build them in place, so the compiled pass needs no second
compilation. ``make pure`` removes them. Prints how many it copied; exits 1 when the wheel holds none (a
pure wheel: the compiled pass would prove nothing).
"""

from __future__ import annotations

import sys
import zipfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
#: where each installed package's extensions go in the checkout (pyproject.toml's package-dir)
FOLDERS = {"cefisim/engine/": "engine", "cefisim/api/": "api"}


def take(wheel: Path) -> list[Path]:
    """Write the wheel's extensions under ``engine/`` and ``api/``; the files written."""
    written = []
    with zipfile.ZipFile(wheel) as whl:
        for name in whl.namelist():
            if not name.endswith((".so", ".pyd")):
                continue
            for prefix, folder in FOLDERS.items():
                if name.startswith(prefix):
                    target = ROOT / folder / name[len(prefix) :]
                    target.parent.mkdir(parents=True, exist_ok=True)
                    target.write_bytes(whl.read(name))
                    written.append(target)
    return written


def main(argv: list[str]) -> int:
    if len(argv) != 1:
        print("usage: python tools/take_extensions.py WHEEL", file=sys.stderr)
        return 2
    written = take(Path(argv[0]))
    if not written:
        print(f"{argv[0]}: no compiled module in this wheel", file=sys.stderr)
        return 1
    print(f"cefisim: {len(written)} compiled modules from {Path(argv[0]).name} in place")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
