"""cefisim's venue core: pure, synchronous and deterministic.

No asyncio, no I/O, no wall clock, no JSON. ``Venue.submit(command, at=ns)`` is the one entry point
(``submit_at`` when a journal has asked ``applies_at`` for the time already); see ``engine/venue.py``
for the contract and ``docs/matching.md`` for the rules.

The venue core, bottom up (each module imports only those before it; ``tests/test_architecture.py``):
``nocython`` (what the modules use of Cython's ``cython``, for a Python without it), ``vocabulary``
(the words), ``units``, ``clock``, ``rejects``, ``state`` (what a snapshot saves), ``commands``,
``events`` (what a command did), ``journal`` (commands to and from their journal records);
``reference`` (assets, instruments, clients), ``records`` (an account: its balances, orders, fills and
transfers), ``ledger`` (holds and the money of a fill), ``levels`` (one side's price levels), ``book``;
``core`` (the venue's state and the interface the operations call); ``pricing``, ``matching``,
``lifecycle`` (activate, rest, end, cancel, acknowledgements), ``opening`` (the opening uncross),
``entry``, ``modify``, ``transfers``, ``retention``, ``timers`` (what the passing of time does);
``venue``; ``queries`` and ``quotes`` (the read boundary the API reads the venue through). Above the
core: ``recorded/`` (a recorded market replayed into a book) and ``simulation/`` (the scenario runner,
its agents, the backtest harness and its figures).
"""


def build() -> str:
    """Which build of the engine runs: ``"compiled"`` (its modules are the Cython extensions built from
    this source, ``setup.py``) or ``"pure"`` (the ``.py`` files). ``matching`` stands for them all: the
    compiled build compiles every module but this package marker, or none."""
    from cefisim.engine import matching  # on first use: importing the package stays free of the venue core

    return "pure" if matching.__file__ is None or matching.__file__.endswith(".py") else "compiled"
