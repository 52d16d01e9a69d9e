"""``python -m faithwatch``: the command line."""

from faithwatch.cli import run

run()
