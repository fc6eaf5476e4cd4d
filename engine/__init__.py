"""cefisim's venue core: pure, synchronous and deterministic.

No asyncio, no I/O, no wall clock, no JSON. ``Venue.submit(command, at=ns)`` is the one entry point;
see ``engine/venue.py`` for the contract and ``docs/matching.md`` for the rules.
"""
