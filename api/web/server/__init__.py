"""The HTTP layer around a running simulation: typed keys, the one middleware, limits, the request log,
listening, the clock's ticker and the serve flags (the app that wires the interfaces in is ``api/web/app/``)."""
