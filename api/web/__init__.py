"""The HTTP layers around a running simulation, lowest first: the server (``server``: typed keys, the middleware,
limits, listening), CeFi direct (``cefi``), the control plane (``control``) and the app that wires them and
Auth into one application (``app``)."""
