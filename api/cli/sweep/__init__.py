"""``cefisim sweep``: one strategy over a grid of scenario seeds, strategy parameters and latencies.

    cefisim sweep SCENARIO --strategy module:Class [--seeds 1-64] [--param KEY=V1,V2 ...]
        [--latency-ms 0,5,20] [--until ISO|+seconds] [--file SWEEP.toml] [--workers N | --dask ADDRESS|local]
        [--out DIR] [--plot FILE]

Each run is an ordinary ``cefisim backtest`` run (``api.cli.backtest.run_backtest``, same report) with
the scenario's agents reseeded from the run's seed. ``docs/sweeps.md`` is the user's guide. Here:

- ``grid.py``: the axes (flags or a JSON/TOML sweep file) and the runs in their fixed order;
- ``sources.py``: how the scenario and strategy files reach the workers, loaded once per worker;
- ``run.py``: one run on a worker, folded into a row;
- ``executors.py``: this process, a local process pool, or Dask (``dask.distributed``);
- ``stats.py``: mean, std, bootstrap 95% CI and share of losing runs per parameter set;
- ``output.py``, ``sweep_plot.py``: the files, the ranked table and the ``--plot`` figure;
- ``sweep_command.py``: planning, executing, and the command ``sweep_main``.
"""

from cefisim.api.cli.sweep.sweep_command import Plan, execute, make_executor, plan_sweep, sweep_main, sweep_parser

__all__ = ["Plan", "execute", "make_executor", "plan_sweep", "sweep_main", "sweep_parser"]
