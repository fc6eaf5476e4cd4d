"""``cefisim data``: convert other market-data formats to the cefisim format and record a scenario's
market as one (``data_command``, ``record``); the format itself is ``api/formats/recorded/``."""
