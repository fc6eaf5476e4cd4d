"""Copy the engine's compiled extension modules out of a wheel into the checkout (``make test``).

    python tools/take_extensions.py WHEEL

``make test`` compiles the engine once, into the wheel it builds for the installation tests; this puts
that wheel's ``cefisim/engine/**/*.so`` beside the ``.py`` files they were compiled from
(``engine/``, ``engine/recorded/``, ``engine/simulation/``), as ``make compiled`` would build them in
place, so the compiled pass needs no second compilation. ``make pure`` removes them. Prints how many it
copied; exits 1 when the wheel holds none (a pure wheel: the compiled pass would prove nothing).
"""

from __future__ import annotations

import sys
import zipfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
PREFIX = "cefisim/engine/"


def take(wheel: Path) -> list[Path]:
    """Write the wheel's engine extensions under ``engine/``; the files written."""
    written = []
    with zipfile.ZipFile(wheel) as whl:
        for name in whl.namelist():
            if name.startswith(PREFIX) and name.endswith((".so", ".pyd")):
                target = ROOT / "engine" / name[len(PREFIX) :]
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
        print(f"{argv[0]}: no compiled engine module in this wheel", file=sys.stderr)
        return 1
    print(f"cefisim: {len(written)} compiled engine modules from {Path(argv[0]).name} in place")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
