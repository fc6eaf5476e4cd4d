"""The HTTP layer around a running simulation: typed keys, a venue's state (its simulation, Auth store,
paper funds, stream hub and HTTP fault plan), the one middleware, limits, the request log, listening,
the clock's ticker and the serve flags (the app that wires the interfaces in is ``api/web/app/``)."""
