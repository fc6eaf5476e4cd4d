"""A recorded market replayed into a venue's book around the users' own orders: the market itself
(``market``: ``RecordedMarket``, the contract), its state (``depth``: the recorded levels, their depth
orders and the users' places), the recorded events as the engine sees them (``feed``), the fills between
recorded trades or depth and users' orders (``fills``), the bookkeeping of the users' places in the
recorded queues (``queue``) and the models that move them (``queue_model``).
``docs/recorded.md`` says it in prose. The venue core imports nothing from here: a recorded market is
attached to a venue as a source of book changes (``engine/core.py``)."""
