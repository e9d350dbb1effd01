"""``python -m posviz --help``: see :mod:`posviz.cli`."""

from posviz.cli import main

if __name__ == "__main__":
    raise SystemExit(main())
