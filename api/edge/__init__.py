"""The edge's shared utilities, below every interface (auth, cefi, control): RFC 7807 problems,
schema versions and path prefixes, strict body and query validation, the intakes that turn a user's
fields into engine commands (HTTP, the backtest strategy's context and scenario files alike), decimal
and time formatting of records, and the CeFi request signature that the server checks and the clients
make."""
