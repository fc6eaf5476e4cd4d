"""The HTTP server's own layer: the app, its one middleware, limits, problems, schema versions, listening."""
