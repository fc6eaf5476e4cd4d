"""What every command shares: options from the environment (``cli_env``), the progress bar (``progress``) and the
message for a missing optional dependency (``extras``)."""
