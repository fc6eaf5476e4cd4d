"""Run every ``benchmarks/bench_*.py`` in its own subprocess, in name order, passing the flags through.

    python benchmarks/run_all.py [--quick] [--json] [other flags the benchmarks accept]

Each benchmark's output is echoed as it comes. With ``--json`` the last line is one JSON object
``{"bench_engine": {...}, "bench_http": {...}, ...}`` gathered from each benchmark's own last line
(``null`` for one that failed or printed no JSON). The exit status is non-zero if any benchmark failed.
"""

from __future__ import annotations

import glob
import json
import os
import subprocess
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)


def main(argv: list[str] | None = None) -> int:
    flags = list(sys.argv[1:] if argv is None else argv)
    if any(f in ("-h", "--help") for f in flags):
        print(__doc__)
        return 0
    want_json = "--json" in flags
    env = dict(os.environ)
    env["PYTHONPATH"] = os.pathsep.join(p for p in (ROOT, env.get("PYTHONPATH", "")) if p)
    results: dict[str, object] = {}
    failed = []
    for path in sorted(glob.glob(os.path.join(HERE, "bench_*.py"))):
        name = os.path.splitext(os.path.basename(path))[0]
        print(f"== {name} {' '.join(flags)}", flush=True)
        t0 = time.perf_counter()
        last = ""
        with subprocess.Popen(
            [sys.executable, path, *flags], cwd=ROOT, env=env, stdout=subprocess.PIPE, text=True
        ) as proc:
            assert proc.stdout is not None
            for line in proc.stdout:
                sys.stdout.write(line)
                sys.stdout.flush()
                if line.strip():
                    last = line.strip()
        status = proc.returncode
        print(f"== {name}: exit {status} in {time.perf_counter() - t0:.0f}s", flush=True)
        if status:
            failed.append(name)
        parsed = None
        if want_json and not status:
            try:
                parsed = json.loads(last)
            except ValueError:
                parsed = None
        results[name] = parsed
    if failed:
        print(f"== failed: {', '.join(failed)}", flush=True)
    if want_json:
        print(json.dumps(results, sort_keys=True))
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
