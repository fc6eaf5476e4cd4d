"""``cefisim journal``: reading a command journal back — show it, compare two, fork one, rebuild the
venue's state at any record (``docs/journal.md``, Journal tools).

- :mod:`.reader` streams a journal's header and numbered records (memory stays flat);
- :mod:`.render` turns a record into one line of text or one JSON object;
- :mod:`.record_state` rebuilds the venue at a record through the runtime's own recovery and describes it
  as sorted facts (orders, balances, book levels) with a digest;
- :mod:`.diff` finds where two journals part;
- :mod:`.journal_command` is the command.
"""
