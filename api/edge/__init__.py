"""The edge's shared utilities, below every interface (auth, cefi, control): RFC 7807 problems,
schema versions and path prefixes, strict body and query validation, decimal and time formatting of
records, and the CeFi request signature that the server checks and the clients make."""
