"""``python -m cefisim`` does what the ``cefisim`` command does."""

from cefisim.api.cli.main import main

if __name__ == "__main__":
    raise SystemExit(main())
