"""The ``faithwatch`` command line: one module per command group, merged into one app.

Exit codes: 0 success; 1 the work failed on valid input (some records of a batch, the rest written; or the one
response of a command: a checker, extractor or scorer gave no usable answer); 2 bad input or usage; 3 the model
or service cannot be had; 4 an internal error.
"""

from __future__ import annotations

import logging
import os
import sys

import typer
from rich.markup import escape

from faithwatch._version import __version__
from faithwatch.errors import InputError
from faithwatch.registry import load_plugins

try:  # plug-ins register before the command modules build their choices from the registries
    load_plugins()
    _PLUGIN_ERROR: InputError | None = None
except InputError as _exc:
    _PLUGIN_ERROR = _exc

from faithwatch.cli import (  # noqa: E402
    calibration,
    claims,
    decoding,
    decoding_eval,
    detectors,
    evaluation,
    lss,
    monitor,
    nli,
    proxy,
    server,
)
from faithwatch.cli._common import EXIT_INPUT, EXIT_INTERNAL, err, missing_extra, out  # noqa: E402

# plain click help: no "<bool>" metavars on flags, and brackets in help texts ("[str]") shown as written
app = typer.Typer(help="faithwatch: keep RAG answers faithful to their context.", no_args_is_help=True,
                  pretty_exceptions_enable=False, rich_markup_mode=None)
for _group in (monitor, detectors, evaluation, calibration, claims, decoding, decoding_eval, lss, nli, server, proxy):
    app.add_typer(_group.app)


def _version(value: bool) -> None:
    if value:
        out.print(f"faithwatch {__version__}")
        raise typer.Exit()


@app.callback()
def main(
    verbose: bool = typer.Option(False, "--verbose", "-v", help="Show library logs."),
    version: bool = typer.Option(False, "--version", callback=_version, is_eager=True, help="Print the version."),
) -> None:
    """faithwatch: keep RAG answers faithful to their context."""
    if _PLUGIN_ERROR is not None:
        err.print(f"[bold red]error:[/] {escape(str(_PLUGIN_ERROR))}")
        raise typer.Exit(EXIT_INPUT)
    logging.basicConfig(level=logging.INFO if verbose else logging.WARNING, format="%(levelname)s: %(message)s")
    if not verbose:  # read by transformers when a command first imports it (importing it here costs seconds)
        os.environ.setdefault("TRANSFORMERS_VERBOSITY", "error")
        os.environ.setdefault("HF_HUB_DISABLE_PROGRESS_BARS", "1")
        if "transformers" in sys.modules:  # already imported (e.g. the CLI run from Python): tell it directly
            from transformers.utils import logging as hf_logging

            hf_logging.set_verbosity_error()
            hf_logging.disable_progress_bar()


def run() -> None:
    """Entry point with a last-resort handler: a missing optional part gets exit code 2 with the extra to install,
    internal errors exit code 4."""
    try:
        app()
    except ModuleNotFoundError as exc:
        extra = missing_extra(exc)
        if extra is None:
            err.print(f"[bold red]internal error:[/] {type(exc).__name__}: {escape(str(exc))}")
            raise SystemExit(EXIT_INTERNAL) from exc
        err.print(f"[bold red]error:[/] this command needs {exc.name!r}, which comes with the '{extra}' extra: "
                  + escape(f"pip install 'faithwatch[{extra}]'"))
        raise SystemExit(EXIT_INPUT) from None
    except Exception as exc:  # noqa: BLE001
        err.print(f"[bold red]internal error:[/] {type(exc).__name__}: {escape(str(exc))}{escape(_outside(exc))}")
        raise SystemExit(EXIT_INTERNAL) from exc


def _outside(exc: BaseException) -> str:
    """`` (in FILE:LINE, not faithwatch's code: a plug-in?)`` when the innermost frame of ``exc`` that is not in an
    installed library or the standard library lies outside the faithwatch package, else ``""`` (frames of compiled
    extensions, named by a relative path, are a library's)."""
    import sysconfig
    import traceback
    from pathlib import Path

    ours = Path(__file__).resolve().parents[1]
    libs = [Path(v).resolve() for k, v in sysconfig.get_paths().items() if k in ("stdlib", "platstdlib", "purelib",
                                                                                 "platlib")]
    for frame in reversed(traceback.extract_tb(exc.__traceback__)):
        if not Path(frame.filename).is_absolute():  # a compiled extension's frame ("numpy/random/....pyx")
            continue
        where = Path(frame.filename).resolve()
        if where.is_relative_to(ours):
            return ""
        if not any(where.is_relative_to(lib) for lib in libs) and not frame.filename.startswith("<frozen"):
            return f" (in {where}:{frame.lineno}, not faithwatch's code: a plug-in?)"
    return ""
