"""What every command shares: the consoles, exit codes, the error printer, progress bars and common options."""

from __future__ import annotations

import contextlib
import errno
import importlib
import math
import os
import re
import shlex
import sys
import time
from collections import Counter
from collections.abc import Callable, Iterable, Iterator, Sequence
from pathlib import Path
from typing import Any

import typer
from rich.console import Console
from rich.markup import escape
from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn, TimeRemainingColumn

from faithwatch import registry
from faithwatch.errors import FaithwatchError, InputError, ModelNotAvailableError
from faithwatch.signals import check_known, default_signals, model_free_signals, parse_signals
from faithwatch.store import read_utf8
from faithwatch.text.visible import is_blank

_WIDTH = None if sys.stdout.isatty() else 160  # piped output: wide tables instead of wrapped cells
out = Console(highlight=False, width=_WIDTH)
err = Console(stderr=True, highlight=False, width=None if sys.stderr.isatty() else 160)

EXIT_PARTIAL, EXIT_INPUT, EXIT_MODEL, EXIT_INTERNAL = 1, 2, 3, 4
#: optional packages by the extra that installs them (pyproject.toml's optional-dependencies)
EXTRAS = {"pandas": "train", "pyarrow": "train", "matplotlib": "train", "xgboost": "train", "fastapi": "server",
          "uvicorn": "server", "starlette": "server", "ray": "ray"}


def missing_extra(exc: ModuleNotFoundError) -> str | None:
    """The extra that provides the module ``exc`` could not import, or ``None`` when it is not an optional part."""
    return EXTRAS.get((exc.name or "").split(".")[0])


def current_context() -> typer.Context | None:
    """The command being run, or ``None`` outside one: from the click that typer's ``Context`` is built on (typer
    carries its own from 0.23 on)."""
    base = next(c for c in typer.Context.__mro__ if c.__name__ == "Context" and c.__module__.endswith(".core"))
    return importlib.import_module(base.__module__.rsplit(".", 1)[0] + ".globals").get_current_context(silent=True)


def fail(exc: Exception) -> typer.Exit:
    """Print ``exc`` as an error and return the exit to raise: 3 for a model or service that cannot be had, 1 for
    work that failed on valid input (a checker or extractor that gave no usable answer, a scorer's bad value), else
    2 (bad input or usage)."""
    if isinstance(exc, ModelNotAvailableError):
        code = EXIT_MODEL
    elif isinstance(exc, FaithwatchError) and not isinstance(exc, InputError):
        code = EXIT_PARTIAL
    else:
        code = EXIT_INPUT
    ctx = current_context()
    if isinstance(exc, InputError) and ctx is not None:  # a library's setting, as the flag the user typed
        exc = in_flags(ctx, exc, every=False)
    err.print(f"[bold red]error:[/] {escape(str(exc))}", soft_wrap=True)  # text, never markup; one line
    return typer.Exit(code)


class LineProgress:
    """Progress for a log file (stderr is not a terminal): a plain line per task every ``every_s`` seconds and when
    it completes, instead of a live bar that reaches the log only at the end. Same calls as rich's ``Progress``."""

    def __init__(self, console: Console, every_s: float = 30.0) -> None:
        self.console, self.every_s = console, every_s
        self.tasks: dict[int, dict[str, Any]] = {}

    def __enter__(self) -> LineProgress:
        return self

    def __exit__(self, *exc: object) -> None:
        for task_id, task in self.tasks.items():
            # on an error, where a task stopped; not "scoring: 0/?" before an input refused at once
            if not task["done"] and (exc[0] is None or task["completed"]):
                self._line(task_id)

    def add_task(self, description: str, total: float | None = None, **fields: Any) -> int:
        """Start a task (as ``rich.progress.Progress.add_task``); returns its id."""
        task_id = len(self.tasks)
        self.tasks[task_id] = {"description": description, "total": total, "completed": 0.0, "fields": fields,
                               "start": time.monotonic(), "printed": time.monotonic(), "done": False}
        return task_id

    def update(self, task_id: int, *, completed: float | None = None, total: float | None = None,
               description: str | None = None, advance: float | None = None, **fields: Any) -> None:
        """Update a task (as ``rich.progress.Progress.update``), printing a line now and then."""
        task = self.tasks[task_id]
        if total is not None:
            task["total"] = total
        if description is not None:
            task["description"] = description
        if completed is not None:
            task["completed"] = completed
        if advance:
            task["completed"] += advance
        task["fields"].update(fields)
        finished = task["total"] is not None and task["completed"] >= task["total"]
        if finished or time.monotonic() - task["printed"] >= self.every_s:
            self._line(task_id)
            task["done"] = finished

    def advance(self, task_id: int, advance: float = 1) -> None:
        """Advance a task by ``advance`` steps."""
        self.update(task_id, advance=advance)

    def _line(self, task_id: int) -> None:
        task = self.tasks[task_id]
        task["printed"] = time.monotonic()
        total = "?" if task["total"] is None else f"{task['total']:g}"
        info = f" {task['fields']['info']}" if task["fields"].get("info") else ""
        self.console.print(f"{escape(task['description'])}: {task['completed']:g}/{total}{escape(info)} "
                           f"({time.monotonic() - task['start']:.0f} s)", soft_wrap=True)


def progress(console: Console | None = None, *, info: bool = False) -> Progress | LineProgress:
    """The one progress display: a rich bar (description, bar, n/total, elapsed, remaining; ``info``: a
    ``{task.fields[info]}`` column too) on a terminal, plain lines (:class:`LineProgress`) in a log."""
    console = console or err
    if not console.is_terminal:
        return LineProgress(console)
    extra = (TextColumn("{task.fields[info]}"),) if info else ()
    return Progress(TextColumn("{task.description}"), BarColumn(), MofNCompleteColumn(), *extra, TimeElapsedColumn(),
                    TimeRemainingColumn(), console=console)


#: skipped records a batch prints one by one; the rest are counted by the summary and listed in its errors file
SHOWN_BAD_RECORDS = 20


def bad_record_printer(bar: Progress | LineProgress, shown: int = SHOWN_BAD_RECORDS) -> Callable[[Any], None]:
    """A batch's ``on_bad``: print the first ``shown`` skipped records (line, id, why) above the progress bar, then
    one line saying that the rest are not printed (a file of bad lines printed every one of them)."""
    seen = 0

    def on_bad(record: Any) -> None:
        nonlocal seen
        seen += 1
        if seen > shown:
            if seen == shown + 1:
                bar.console.print(f"[yellow]more records skipped:[/] only the first {shown} are printed; the summary "
                                  "counts them all, and its errors file lists each one")
            return
        path = getattr(record, "path", None)  # inputs without line numbers (Parquet) name the file instead
        where = f"line {record.line}" if record.line is not None else (f"record in {path}" if path else "record")
        where += f" (id {record.id})" if record.id else ""
        bar.console.print(f"[yellow]skipped {escape(where)}:[/] {escape(record.error)}")

    return on_bad


@contextlib.contextmanager
def resumable(output: Path) -> Iterator[None]:
    """Ctrl-C in a resumable batch: say that the finished records are kept and how to go on (exit 130)."""
    try:
        yield
    except KeyboardInterrupt:
        err.print(f"\n[yellow]interrupted:[/] the records finished so far are kept in {output}; run the same "
                  "command again to resume (--overwrite starts afresh)")
        raise typer.Exit(130) from None


def domain_hint(detector: Any, threshold: float, output: Path, scores_of: Callable[[dict], list[Any]],
                source: Path, detector_spec: str | None) -> None:
    """Print a note when the sentences of the batch ``output`` (a JSONL file or a folder of shards) sit far from
    ``detector``'s training sets (:class:`~faithwatch.detectors.calibration.DomainOffset`), with the ``calibrate``
    command for the batch's input ``source``; ``scores_of`` gives one row's P(faithful) values."""
    import numpy as np

    from faithwatch.detectors.calibration import domain_offset
    from faithwatch.scale import read_output_rows

    scores: list[float] = []
    for row in read_output_rows(output):
        with contextlib.suppress(ValueError, TypeError, KeyError, AttributeError):
            scores += [float(v) for v in scores_of(row) if v is not None]
    offset = domain_offset(detector, np.asarray(scores, dtype=np.float64), threshold=threshold)
    if offset is not None and (hint := offset.hint()):
        err.print(f"[yellow]note:[/] {escape(hint)}")
        command = ["faithwatch", "calibrate", "--detector", detector_spec or "default", "--data", str(source),
                   "--unlabelled", "--out", "calibrated-detector/"]
        err.print(f"  {escape(shlex.join(command))}", soft_wrap=True)


def print_notes(notes: Sequence[str]) -> None:
    """Print an answer's cautions (``MonitorResult.notes``, ``DecodingResult.notes``) to stderr, one per line."""
    for note in notes:
        err.print(f"[yellow]note:[/] {escape(note)}")


def transcript_note(contexts: Iterable[Any]) -> None:
    """Print a note when contexts read as chat or meeting transcripts (:func:`faithwatch.text.is_transcript`): on
    summaries of chats the detector was measured at chance (docs/transfer.md, "Chat summaries"). ``contexts`` are
    strings or lists of passages (a batch's records); others are skipped."""
    from faithwatch.text import TRANSCRIPT_NOTE, is_transcript

    texts = _texts(contexts)
    if found := sum(map(is_transcript, texts)):
        which = "the context reads" if len(texts) == 1 else f"{found} of {len(texts)} contexts read"
        err.print(f"[yellow]note:[/] {which} {escape(TRANSCRIPT_NOTE)}")


def batch_language_note(contexts: Iterable[Any]) -> bool:
    """Print a note when a batch's ``contexts`` (strings or lists of passages; others are skipped) read as another
    language than English (:func:`faithwatch.text.other_language`), since faithwatch's models read English only,
    with the count per language; whether one was printed."""
    from faithwatch.text import language_note, other_language

    read = _texts(contexts)
    found = Counter(language for text in read if (language := other_language(text)))
    if len(read) == 1 and found:
        err.print(f"[yellow]note:[/] {escape(language_note('the context', next(iter(found))))}")
    elif found:
        languages = ", ".join(f"{language} ({n})" for language, n in found.most_common())
        which = f"{sum(found.values())} of {len(read)} contexts"
        err.print(f"[yellow]note:[/] {escape(language_note(which, languages, plural=True))}")
    return bool(found)


def _texts(items: Iterable[Any]) -> list[str | list[str]]:
    """The strings and lists of strings of ``items``; others (a bad record's field) are skipped."""
    return [x for x in items if isinstance(x, str) or (isinstance(x, list) and all(isinstance(c, str) for c in x))]


def input_contexts(source: Path, check: bool = False) -> Iterator[Any]:
    """The ``context`` of each valid record of the batch input ``source`` (JSON Lines, CSV or TSV; ``check``: as
    ``faithwatch check`` reads it, passages allowed)."""
    from faithwatch.batch import Record, read_records
    from faithwatch.records import CheckRecord, ScoreRecord

    for item in read_records(source, CheckRecord if check else ScoreRecord):
        if isinstance(item, Record):
            yield item.data.get("context")


def report_empty(total: int, source: Path) -> None:
    """Warn that a batch input held no record (the run did nothing)."""
    if total == 0:
        err.print(f"[yellow]warning:[/] {source} holds no records")


def check_names(*, detector: str | None = None, alignment: str | None = None, strategy: str | None = None,
                lens: Path | None = None) -> None:
    """Refuse an unknown detector, alignment scorer, strategy or Lookback Lens folder before a model is loaded
    (seconds to minutes earlier)."""
    if lens is not None:
        from faithwatch.detectors.artifact import META_FILE

        if not (Path(lens) / META_FILE).is_file():
            what = f"--lens {lens} holds no lens ({META_FILE})" if Path(lens).is_dir() else f"--lens {lens} not found"
            raise InputError(f"{what}: give a Lookback Lens folder, e.g. <detector>/lookback-lens")
    if detector is not None:  # imported only here: the detectors import transformers (seconds)
        from faithwatch.detectors import HEURISTIC_NAMES, detector_path

        if detector not in HEURISTIC_NAMES:
            detector_path(detector)
    if alignment not in (None, "auto", "none"):
        check_scorer(alignment)
    if strategy is not None:
        from faithwatch import registry

        registry.strategies.get(strategy)


def check_model_path(model: str | None) -> None:
    """A ``--model`` path that is not there, or a folder with no ``config.json``, said before torch and transformers
    are imported (10 s; with ``--device`` too, which the loader checks with torch)."""
    from faithwatch.models.folders import EMBEDDED_NAMES, check_model_folder, is_no_model

    if model in EMBEDDED_NAMES or is_no_model(model):
        return
    check_model_folder(model)


def check_scorer(spec: str, flag: str = "--alignment") -> None:
    """An alignment scorer ``spec`` (of option ``flag``) before any model loads: its names known, and a model folder
    it names there (``nli:/no/dir`` was found once the language model, or an earlier scorer, had run)."""
    from faithwatch.alignment import parse_spec
    from faithwatch.models.folders import is_missing_path

    for _, arg in parse_spec(spec):
        if arg and is_missing_path(arg):
            raise ModelNotAvailableError(f"{flag} {spec}: folder not found: {arg}")


def check_generation(model: str | None, question: str) -> None:
    """Refuse what cannot generate an answer, before a model is loaded: ``--model none`` and an empty question."""
    from faithwatch.models.folders import is_no_model

    if is_no_model(model):
        raise InputError("--model none runs no language model, so it cannot write an answer; it scores given text: "
                         "faithwatch score --model none, or faithwatch check")
    if is_blank(question):
        raise InputError("The question is empty: give the question the answer is for (--question).")


def read_text(path: Path, what: str) -> str:
    """Read a UTF-8 file ('-': stdin; a pipe such as bash's ``<(…)`` too), with a clear error when it is missing."""
    if str(path) == "-":
        return sys.stdin.read()
    if str(path) == ".":  # also what an empty argument ("") becomes
        raise InputError(f"{what}: give a file's path ('-' reads standard input), not an empty string or a folder")
    if path.is_dir():
        raise InputError(f"{what} {path} is a folder: give a file")
    if not path.exists():  # not is_file(): a named pipe or /dev/fd/N is read as a file
        given = str(path)
        if len(given.split()) >= 3:  # words, not a path: the text itself was given
            shown = given if len(given) <= 60 else given[:59] + "…"
            raise InputError(f"{what} file not found: {shown!r} reads as text, not a path. Give a file, or the text "
                             f"on standard input with '-' (echo '…' | faithwatch … --{what} -).")
        raise InputError(f"{what} file not found: {path}")
    if path.is_socket():
        raise InputError(f"{what} {path} is a socket: give a file")
    try:
        return read_utf8(path, f"{what} file")
    except OSError as exc:  # no permission, a device that cannot be read, ...
        raise InputError(f"{what} file {path} cannot be read: {exc.strerror or exc}") from None


def instruction_kwargs(instruction: str | None) -> dict[str, str]:
    """The Monitor's keyword for ``--instruction``: none when it is not given (the Monitor's default), an
    :class:`InputError` when it is blank (an empty instruction is no prompt)."""
    if instruction is None:
        return {}
    if is_blank(instruction):
        raise InputError("--instruction is empty: give the instruction's text, or leave the option out for the "
                         "default")
    return {"instruction": instruction}


#: uvicorn's log levels (``uvicorn.config.LOG_LEVELS``)
LOG_LEVELS = ("critical", "error", "warning", "info", "debug", "trace")


def _log_level(value: str) -> str:
    if value.lower() not in LOG_LEVELS:  # uvicorn raised a KeyError, once the model had loaded
        raise typer.BadParameter(f"choose one of {', '.join(LOG_LEVELS)}, not {value!r}")
    return value.lower()


LogLevelOpt = typer.Option("info", "--log-level", callback=_log_level,
                           help=f"uvicorn log level: {', '.join(LOG_LEVELS)}.")


def seed_option(value: int = 0, picks: str = "bootstraps, folds, training") -> Any:
    """``--seed`` (default ``value``): 0 to 2**32 - 1, the range numpy and scikit-learn take; ``picks`` says what
    it draws, in the help."""
    return typer.Option(value, "--seed", min=0, max=2**32 - 1, help=f"Random seed ({picks}).")


def _checked_device(value: str | None) -> str | None:
    """A ``--device`` checked at once (``models.loading.check_device``): an unknown or unavailable device is a
    usage error before any model loads."""
    if value is None or value == "cpu":
        return value
    from faithwatch.models.loading import check_device  # torch: only when a device is named

    try:
        return check_device(value)
    except InputError as exc:
        raise fail(exc) from None  # one line, exit 2, as every other bad input


def device_option(default: str | None = None, help: str = "cpu, cuda, ... (default: cuda if available).") -> Any:
    """The ``--device`` option (checked at once: :func:`_checked_device`)."""
    return typer.Option(default, "--device", help=help, callback=_checked_device)


ModelOpt = typer.Option(None, "--model", "-m", help="HF causal LM dir or hub id (default: embedded SmolLM2-135M).")
DeviceOpt = device_option()
TruncOpt = typer.Option(False, "--truncate-context", help="Cut the context's tail to fit the model (with a warning).")
InstructionOpt = typer.Option(None, "--instruction", help="The task instruction before the context and question "
                              "(default: 'Answer the question using only the information in the context.'); set it "
                              "to the system prompt your served model answers with.")
DetectorOpt = typer.Option(None, "--detector", help="heuristic, default (the shipped detector), or a detector "
                           "folder (if left out: the shipped detector with the embedded model or --model none, the "
                           "heuristic with another model).")


def group() -> typer.Typer:
    """A command group: its commands are merged into the main app, and it also runs (and tests) on its own."""
    return typer.Typer(add_completion=False, pretty_exceptions_enable=False, rich_markup_mode=None)


DtypeOpt = typer.Option(None, "--dtype", help="Weights of --model: fp32 (the default) | auto (bf16/fp16 on a GPU, "
                        "fp32 on a CPU) | bf16 | fp16.")
DeviceMapOpt = typer.Option(None, "--device-map", help="Spread --model over devices (e.g. 'auto'; needs accelerate) "
                            "instead of moving it to --device.")
StaticCacheOpt = typer.Option(False, "--static-cache", help="Decode into a preallocated KV cache (fixed shapes, the "
                              "same scores; for GPUs, slower on CPU: bench/README.md).")
AllowedHostsOpt = typer.Option(None, "--allowed-hosts", help="Comma-separated Host names the server answers "
                               "(403 otherwise; guards against DNS rebinding; '*' for any). Default: localhost, "
                               "127.0.0.1, [::1] when --host is a loopback address, any host otherwise.")


def check_listen(host: str, port: int) -> None:
    """Refuse a ``--host`` that does not resolve, or a ``--port`` another server holds, before the model loads
    (uvicorn found both once it had loaded). The probe binds as uvicorn does and lets go at once."""
    import socket

    try:
        family, kind, proto, _, address = socket.getaddrinfo(host, port, type=socket.SOCK_STREAM,
                                                             flags=socket.AI_PASSIVE)[0]
    except socket.gaierror as exc:
        raise InputError(f"--host {host} is no address to listen on ({exc.strerror})") from None
    with socket.socket(family, kind, proto) as probe:
        probe.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        try:
            probe.bind(address)
        except OSError as exc:
            hint = "; another server holds it: give another --port" if exc.errno == errno.EADDRINUSE else ""
            raise InputError(f"cannot listen on {host}:{port} ({exc.strerror}){hint}") from None


def allowed_hosts_for(value: str | None, host: str) -> list[str] | None:
    """``--allowed-hosts`` as given, else the default for the address listened on (``None``: any host)."""
    from faithwatch.server.limits import default_allowed_hosts, parse_allowed_hosts

    try:
        return parse_allowed_hosts(value) if value is not None else default_allowed_hosts(host)
    except ValueError as exc:
        raise fail(InputError(str(exc))) from None


SignalsOpt = typer.Option(None, "--signals", help="Comma-separated signal families to compute (default: "
                          f"{','.join(default_signals())}; with --model none, the model-free ones; also: "
                          f"{', '.join(registry.signals.names(default=False))}). 'text' names those read from the "
                          f"text alone ({','.join(model_free_signals())}): scoring then skips the language model.")


def signal_list(signals: str | None) -> list[str] | None:
    """The chosen families (``text``: :func:`~faithwatch.signals.model_free_signals`), or ``None`` for the
    monitor's default; a given list that names none (``--signals ''``), or an unknown family, is an
    :class:`InputError` (before a model loads)."""
    if signals is None:
        return None
    chosen = parse_signals(signals)
    check_known(chosen)
    return chosen


OverwriteArtifactOpt = typer.Option(False, "--overwrite", help="Replace the detector already in --out (the old one "
                                    "goes only once the new one is written).")


def check_artifact_out(out_dir: Path, overwrite: bool) -> None:
    """An ``--out`` folder for a new detector, checked before any work: new or empty; with ``--overwrite``, one
    that holds a detector (``detector.json``), replaced whole once the new one is written
    (:func:`~faithwatch.store.write_folder_atomic`). Anything else is an :class:`InputError`."""
    from faithwatch.detectors.artifact import META_FILE

    here = Path.cwd()
    if out_dir.resolve() in (here, *here.parents):  # the folder is replaced whole: not the one we stand in
        raise InputError(f"--out {out_dir} is the current folder or holds it: give a folder of its own, e.g. "
                         f"{Path(out_dir) / 'detector'}")
    if not out_dir.is_dir() or not any(out_dir.iterdir()):
        return
    if not (out_dir / META_FILE).is_file():
        raise InputError(f"--out {out_dir} holds files but no detector ({META_FILE}): give a new or empty folder "
                         "(faithwatch replaces only a detector folder)")
    if not overwrite:
        raise InputError(f"--out {out_dir} holds a detector: give a new folder, or add --overwrite to replace it")


CudaGraphOpt = typer.Option(False, "--cuda-graph", help="Replay each decode step as a CUDA graph (GPU; implies "
                            "--static-cache; the same scores, several times faster: bench/README.md).")


def cuda_graph_note(monitor: Any, cuda_graph: bool) -> None:
    """Say that ``--cuda-graph`` captures no graph where the model is not on a GPU (it ran the static path)."""
    device = getattr(getattr(monitor, "lm", None), "device", None)
    if cuda_graph and device is not None and getattr(device, "type", device) != "cuda":
        err.print(f"[yellow]note:[/] --cuda-graph: the model is on {device}, where there are no CUDA graphs; each "
                  "step runs with the static cache alone (the same scores)")


def default_threads() -> int:
    """Threads for torch by default: the physical cores among the CPUs this process may run on
    (``os.sched_getaffinity``; hyper-threads of one core count once), at least 1."""
    try:
        cpus = sorted(os.sched_getaffinity(0))
    except AttributeError:  # not on Linux
        return max(1, (os.cpu_count() or 2) // 2)
    cores = set()
    for cpu in cpus:
        siblings = Path(f"/sys/devices/system/cpu/cpu{cpu}/topology/thread_siblings_list")
        try:
            cores.add(siblings.read_text().strip())
        except OSError:
            cores.add(str(cpu))
    return max(1, len(cores))


def _apply_threads(value: int | None) -> int | None:
    if value is None and os.environ.get("OMP_NUM_THREADS") is not None:
        return value
    threads = value or default_threads()
    if "torch" in sys.modules:
        sys.modules["torch"].set_num_threads(threads)
    else:  # torch reads it when first imported: importing it here cost a usage error 2.5 s
        os.environ["OMP_NUM_THREADS"] = str(threads)
    return value


ThreadsOpt = typer.Option(None, "--threads", min=1, callback=_apply_threads, help="torch CPU threads (default: the "
                          "cores this process may use; OMP_NUM_THREADS is honoured when set).")


def file_to_write(value: str | Path) -> Path:
    """An output file option's parser (``parser=file_to_write``): a folder, or a name ending in ``/`` (which
    :class:`~pathlib.Path` drops, so ``--out build/`` was written as a file ``build``), is refused, and so is a
    path under a file (:func:`writable`)."""
    if str(value).endswith(("/", os.sep)) or Path(value).is_dir():
        raise typer.BadParameter(f"{value} is a folder; give a file name")
    return writable(Path(value))


def writable(value: Any) -> Any:
    """An output option's callback: a path under a file (``--out notes.txt/detector``) is refused at once; it was
    an internal error once the work was done. Missing folders are made when the output is written."""
    if value is not None:
        for parent in Path(value).absolute().parents:
            if parent.exists():
                if not parent.is_dir():
                    raise typer.BadParameter(f"{parent} is a file, so {value} cannot be written")
                break
    return value


def options_given(ctx: typer.Context) -> list[str]:
    """The parameters of ``ctx``'s command that were set (on the command line or by the environment), not left
    at their default."""
    sources = {name: ctx.get_parameter_source(name) for name in ctx.params}
    # the enum of typer's own click (typer._click from 0.23 on) or of click: compared by its own type
    return [name for name, source in sources.items() if source is not None and source is not type(source).DEFAULT]


def option_flags(ctx: typer.Context) -> dict[str, str]:
    """Each parameter of ``ctx``'s command as its long flag (``--trim/--no-trim`` for an on/off pair)."""
    return {p.name: "/".join([*[o for o in p.opts if o.startswith("--")][:1], *getattr(p, "secondary_opts", [])])
            for p in ctx.command.params if p.name}


def in_flags(ctx: typer.Context, exc: InputError, every: bool = True) -> InputError:
    """``exc`` with the parameter names of ``ctx``'s command that it names (a config's fields: ``doc_synthetic``)
    written as the flags the user gave (``--doc-synthetic``); ``every=False``: only names with an underscore, which
    no English word of a message has, and those the error says it names where the user gave them as flags (a
    recipe file's ``pooling`` stays a field) (:func:`fail` applies it to every error)."""
    given = set(options_given(ctx)) if exc.names else set()
    flags = {name: flag for name, flag in option_flags(ctx).items()
             if flag and (every or "_" in name or (name in exc.names and name in given))}
    text = re.sub(r"(?<![\w-])[a-z][a-z0-9_]*(?![\w-])", lambda m: flags.get(m.group(), m.group()), str(exc))
    return exc if text == str(exc) else InputError(text)


def given_flags(ctx: typer.Context, names: Iterable[str]) -> list[str]:
    """The flags of those of ``names`` (parameters of ``ctx``'s command) that were given, in the order given."""
    flags, names = option_flags(ctx), set(names)
    return [flags[name] for name in options_given(ctx) if name in names]


def refuse_unread(ctx: typer.Context, unread: Iterable[str], owner: str, reads: Iterable[str], other: str) -> None:
    """Options of ``unread`` given on the command line are refused, naming the ones that ``owner`` (``--scorer
    lss-tagger``, say) reads: the run would ignore them. ``other`` says how to get a reader (``choose a search
    scorer``)."""
    stray = given_flags(ctx, unread)
    if stray:
        it = "it" if len(stray) == 1 else "them"
        flags = option_flags(ctx)
        read = ", ".join(flags[name] for name in reads if name in flags) or "none of them"
        raise InputError(f"{owner} does not read {', '.join(stray)} (it reads {read}): leave {it} out, or {other} "
                         f"that reads {it}")


#: the options that act only with ``--ray``
RAY_ONLY = ("address", "workers", "gpus_per_worker", "shard_rows", "output_format")


def check_ray_options(ctx: typer.Context) -> None:
    """Options of :data:`RAY_ONLY` given without ``--ray`` are refused: they were ignored."""
    named = given_flags(ctx, RAY_ONLY)
    if named and not ctx.params.get("ray"):
        verb, it = ("acts", "it") if len(named) == 1 else ("act", "them")
        raise InputError(f"{', '.join(named)} {verb} only with --ray: add --ray (docs/scale.md), or leave {it} out")


def float_option(default: Any, *flags: str, min: float | None = None, max: float | None = None, help: str = "",
                 **kw: Any) -> Any:
    """A ``typer.Option`` for a float that must be finite (and within ``[min, max]``): ``nan`` or ``inf`` is
    named as not a finite number. typer's own ``min``/``max`` called ``nan`` "less than or equal to 1" (typer 0.23
    on) or took it (before), and a float with no bounds took it."""
    span = (f"{min:g}<=x<={max:g}" if min is not None and max is not None else f"x>={min:g}" if min is not None
            else f"x<={max:g}" if max is not None else "")

    def check(value: float | None) -> float | None:
        if value is not None and not math.isfinite(value):
            raise typer.BadParameter(f"{value} is not a finite number")
        if value is not None and ((min is not None and value < min) or (max is not None and value > max)):
            raise typer.BadParameter(f"{value:g} is not in the range {span}")
        return value

    return typer.Option(default, *flags, callback=check, help=f"{help}  [{span}]" if span else help, **kw)


RayOpt = typer.Option(False, "--ray", help="Run on Ray Data actors (the [ray] extra; docs/scale.md).")
AddressOpt = typer.Option(None, "--address", help="With --ray: the cluster ('auto' for a running one; default: start a "
                          "local one).")
WorkersOpt = typer.Option(1, "--workers", min=1, help="With --ray: actors, each with its own monitor.")
GpusPerWorkerOpt = float_option(0.0, "--gpus-per-worker", min=0.0, help="With --ray: GPUs per actor.")
