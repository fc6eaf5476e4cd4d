"""The CeFi direct interface: the route table, handlers, reject problems, OpenAPI parts (validation,
serialisation and signing are the edge's, ``api/edge/``)."""
