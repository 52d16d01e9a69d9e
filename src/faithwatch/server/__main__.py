"""``python -m faithwatch.server [options]``: the same as ``faithwatch serve`` (an entry point, like the CLI's;
nothing in the package imports it)."""

from __future__ import annotations

import sys


def main() -> None:
    """Run `serve` as a stand-alone command."""
    from faithwatch.cli.server import app

    app(args=sys.argv[1:], prog_name="python -m faithwatch.server")


if __name__ == "__main__":
    main()
