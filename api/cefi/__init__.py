"""The CeFi direct interface: routes, handlers, signing, validation, serialisation, rejects, OpenAPI."""
