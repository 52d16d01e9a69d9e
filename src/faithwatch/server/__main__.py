"""``python -m faithwatch.server [options]``: the same as ``faithwatch serve``."""

from __future__ import annotations

import sys

import typer
from rich.console import Console

from faithwatch.cli_server import register


def main() -> None:
    """Run `serve` as a stand-alone command."""
    app = typer.Typer(add_completion=False, pretty_exceptions_enable=False)
    err = Console(stderr=True, highlight=False)

    def fail(exc: Exception) -> typer.Exit:
        err.print(f"[bold red]error:[/] {exc}")
        return typer.Exit(2)

    register(app, Console(highlight=False), err, fail)

    @app.callback()
    def _root() -> None:
        """faithwatch HTTP server."""

    app(args=["serve", *sys.argv[1:]], prog_name="python -m faithwatch.server")


if __name__ == "__main__":
    main()
