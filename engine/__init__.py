"""cefisim's venue core: pure, synchronous and deterministic.

No asyncio, no I/O, no wall clock, no JSON. ``Venue.submit(command, at=ns)`` is the one entry point;
see ``engine/venue.py`` for the contract and ``docs/matching.md`` for the rules.

The venue core, bottom up (each module imports only those before it; ``tests/test_architecture.py``):
``vocabulary`` (the words), ``units``, ``clock``, ``rejects``, ``state`` (what a snapshot saves),
``commands``; ``reference`` (assets, instruments, clients), ``records`` (an account: its balances,
orders, fills and transfers), ``ledger`` (holds and the money of a fill), ``book``; ``core`` (the
venue's state and the interface the operations call); ``pricing``, ``matching``, ``lifecycle``
(activate, rest, end, cancel, acknowledgements), ``opening`` (the opening uncross), ``entry``, ``modify``,
``transfers``, ``retention``, ``timers`` (what the passing of time does); ``venue``.
"""
