"""Where each interface is served: the path prefixes the routes, the versions and the limits share."""

from __future__ import annotations

#: CeFi direct: its routes, its OpenAPI document, its schema versions and rate limits
CEFI = "/v1/cefi"
CEFI_PREFIX = CEFI + "/"
