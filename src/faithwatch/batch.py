"""Scoring a JSONL file of (context, question, response) records: resumable, bad records reported.

Input lines: ``{"id"?: str|int, "context": str, "question": str, "response": str, "instruction"?: str}``; a
``.csv`` or ``.tsv`` file with a header row naming these columns is read too (:func:`read_records`).
Each finished record is appended to the output and flushed to disk at once, so a crash loses at most
the record in progress; re-running skips the records already in the output (a torn last line is
dropped). A bad record is reported with its line number and the rest are processed.
:func:`check_record` is the one validation of an input record: Ray's Parquet input (:mod:`faithwatch.scale`)
checks its rows with it too.
"""

from __future__ import annotations

import csv
import hashlib
import io
import json
import logging
import os
import time
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from faithwatch.errors import FaithwatchError, InputError, ModelNotAvailableError
from faithwatch.records import CheckRecord, ScoreRecord, parse
from faithwatch.store import CorruptLine, JsonlStore, read_utf8
from faithwatch.text.visible import escaped, is_blank

if TYPE_CHECKING:
    from faithwatch.monitor import Monitor

log = logging.getLogger(__name__)


@dataclass
class BadRecord:
    """A record that could not be scored."""

    line: int | None  # None: an input without line numbers (Parquet)
    id: str | None
    error: str
    path: str | None = None  # the file it came from, when the input is several files


@dataclass
class BatchSummary:
    """What a batch run did."""

    total: int = 0
    scored: int = 0
    skipped_done: int = 0
    bad: list[BadRecord] = field(default_factory=list)
    seconds: float = 0.0
    #: unreadable lines found in an existing output (kept in the file, not counted as done)
    corrupt_output: list[CorruptLine] = field(default_factory=list)
    #: where the bad records are listed (a file, or a folder of shards)
    errors: Path | None = None


@dataclass
class Record:
    """One input record of a batch job: its line in the file (None for an input without line numbers), id and fields."""

    line: int | None
    id: str
    data: dict[str, Any]


def check_record(data: Any, line: int | None, model: type[ScoreRecord] | type[CheckRecord] = ScoreRecord,
                 path: str | None = None) -> Record | BadRecord:
    """Validate one decoded input record as ``model`` (:mod:`faithwatch.records`).

    A record without an ``id`` is named ``line-<line>``; without a ``line`` (Parquet rows have none) it is bad.
    """
    if not isinstance(data, dict):
        return BadRecord(line, None, f"expected a JSON object, got {type(data).__name__}", path)
    raw_id = data.get("id")
    rid = str(raw_id) if isinstance(raw_id, (str, int)) and not isinstance(raw_id, bool) else None
    record, problems = parse(model, data)
    if problems:  # the id is echoed in the errors file: escaped if it is no text
        return BadRecord(line, None if rid is None else escaped(rid), "; ".join(problems), path)
    if rid is None:
        if line is None:
            return BadRecord(None, None, "'id' is missing (an input without line numbers needs one per record)", path)
        rid = f"line-{line}"
    if isinstance(record, ScoreRecord):  # the summary defaults of a record without a question
        data = {**data, **record.fields()}
    return Record(line, rid, data)


#: batch inputs read as delimited text with a header row, by file suffix; any other is JSON Lines
CSV_DELIMITERS = {".csv": ",", ".tsv": "\t"}
#: CSV columns whose empty cell means "not given" (an empty context or response stays a bad record)
_OPTIONAL_COLUMNS = ("id", "question", "instruction", "model", "dataset")


def _read_csv(path: Path, delimiter: str, model: type[ScoreRecord] | type[CheckRecord]
              ) -> Iterator[Record | BadRecord]:
    """The rows of a CSV / TSV input with a header row, each validated as ``model``; a row's line is the file line
    it starts on (the header is line 1); blank lines are skipped, and a row with fewer fields than the header
    leaves the last columns out."""
    text = read_utf8(path, "input file")
    csv.field_size_limit(max(csv.field_size_limit(), 1 << 30))  # a long document in one cell (default: 128 KiB)
    reader = csv.reader(io.StringIO(text, newline=""), delimiter=delimiter)
    try:
        header = next(reader, [])
    except csv.Error as exc:
        raise InputError(f"{path}: its header row cannot be read as {path.suffix[1:].upper()}: {exc}") from None
    twice = [c for i, c in enumerate(header) if c in header[:i]]
    if twice:
        raise InputError(f"{path}: the header row names the column {twice[0]!r} twice; which one to read is unclear")
    needed = [c for c in ("context", "response") if c not in header]
    if header and needed:
        raise InputError(f"{path}: a {path.suffix[1:].upper()} input needs a header row naming the columns context "
                         f"and response (question, id and instruction are optional); no column {needed[0]!r} in "
                         f"{header[:8]}")
    start = reader.line_num + 1
    while True:
        try:
            fields = next(reader)
        except StopIteration:
            return
        except csv.Error as exc:  # e.g. a NUL byte: this row is bad, the reader goes on with the next line
            yield BadRecord(start, None, f"not valid {path.suffix[1:].upper()}: {exc}")
            start = reader.line_num + 1
            continue
        line, start = start, reader.line_num + 1
        if not fields:  # a blank line (counted, so that later rows keep their file lines)
            continue
        if len(fields) > len(header):
            yield BadRecord(line, None, f"{len(fields)} fields, the header names {len(header)}")
            continue
        data = {k: v for k, v in zip(header, fields, strict=False) if not (k in _OPTIONAL_COLUMNS and is_blank(v))}
        yield check_record(data, line, model)


def read_records(path: Path, model: type[ScoreRecord] | type[CheckRecord] = ScoreRecord
                 ) -> Iterator[Record | BadRecord]:
    """Parse input lines into ``model`` (:mod:`faithwatch.records`); a line that is not UTF-8, not JSON, not an
    object or not a valid record comes back as a :class:`BadRecord` (the rest go on). A ``.csv`` or ``.tsv`` file
    is read by its header row instead (:data:`CSV_DELIMITERS`); an empty id, question or instruction cell counts
    as not given."""
    if (delimiter := CSV_DELIMITERS.get(path.suffix.lower())) is not None:
        yield from _read_csv(path, delimiter, model)
        return
    with path.open("rb") as handle:
        for line_no, raw in enumerate(handle, start=1):
            try:
                line = raw.decode("utf-8-sig" if line_no == 1 else "utf-8")  # a byte-order mark is no text
            except UnicodeDecodeError as exc:
                yield BadRecord(line_no, None, f"not UTF-8 text (byte {exc.start + 1})")
                continue
            if not line.strip():
                continue
            line = line.rstrip("\r\n")
            try:
                data = json.loads(line)
            except json.JSONDecodeError as exc:
                cut = " (the line ends early: cut off?)" if exc.pos >= len(line.rstrip()) else ""
                yield BadRecord(line_no, None, f"invalid JSON: {exc.msg.removesuffix(' at')} at column "
                                               f"{exc.pos + 1}{cut}")
                continue
            yield check_record(data, line_no, model)


def check_not_input(source: Path, output: Path) -> None:
    """Refuse an output that is the input file itself (writing there would destroy the input); a command calls it
    before its model loads too."""
    if output.exists() and source.exists() and os.path.samefile(source, output):
        raise InputError(f"--output {output} is the input file itself: choose another output (writing there "
                         "would destroy the input)")


def output_store(output: Path) -> JsonlStore:
    """The output file as a store of rows by id."""
    return JsonlStore(output, key=lambda row: str(row["id"]))


def meta_path(output: Path) -> Path:
    """The sidecar that names the input an output was made from."""
    return output.with_name(output.name + ".meta.json")


def _sha256(path: Path) -> str:
    digest = hashlib.sha256()
    with path.open("rb") as handle:
        for block in iter(lambda: handle.read(1 << 20), b""):
            digest.update(block)
    return digest.hexdigest()


def _row_ids(output: Path) -> set[str] | None:
    """The ids of ``output``'s rows, or ``None`` when a complete line is not a JSON object with an ``id`` (not a
    faithwatch output). A torn last line is left to the store's repair."""
    lines = output.read_bytes().split(b"\n")
    ids: set[str] = set()
    for n, raw in enumerate(lines):
        if not raw.strip():
            continue
        try:
            row = json.loads(raw.decode("utf-8"))
        except (UnicodeDecodeError, json.JSONDecodeError):
            if n == len(lines) - 1:
                continue
            return None
        if not isinstance(row, dict) or "id" not in row:
            return None
        ids.add(str(row["id"]))
    return ids


def refuse_other_config(output: Path, was: dict[str, Any] | None, config: dict[str, Any] | None) -> None:
    """Refuse to resume ``output``, made under the scoring configuration ``was``, under another ``config``."""
    if config is not None and was is not None and was != config:
        changed = ", ".join(f"{k} {was.get(k)!r} → {config.get(k)!r}" for k in config if was.get(k) != config.get(k))
        raise InputError(f"{output} was scored under another configuration ({changed}); resuming would mix the "
                         "two: choose another --output, or --overwrite to start afresh")


def record_digest(data: dict[str, Any]) -> str:
    """A short fingerprint of one input record's content (to notice a record edited after it was processed)."""
    return hashlib.sha256(json.dumps(data, sort_keys=True, ensure_ascii=False, default=str).encode()).hexdigest()[:16]


def guard_output(output: Path, source: Path, input_ids: set[str], config: dict[str, Any] | None = None,
                 digests: dict[str, str] | None = None) -> None:
    """Refuse to append to an ``output`` that is not a faithwatch output of ``source`` (made under ``config``),
    then name ``source``, its sha256, ``config`` and each record's ``digests`` (id → :func:`record_digest`) in the
    sidecar :func:`meta_path`.

    An output is resumed when its sidecar names the same input hash, or (an edited input: bad lines fixed, records
    added) when every id it holds is an id of the input. Anything else (another file, another input) is refused,
    and so is an output whose sidecar records another ``config`` (rows of two detectors would mix in one file).
    A record whose content changed after its row was written is named in a warning (its row is the old one).
    """
    digest, sidecar = _sha256(source), meta_path(output)
    digests = dict(digests or {})
    if output.exists() and output.stat().st_size > 0:
        try:
            doc = json.loads(sidecar.read_text(encoding="utf-8"))
        except (OSError, ValueError):
            doc = None
        doc = doc if isinstance(doc, dict) else {}
        refuse_other_config(output, doc.get("config"), config)
        recorded, records = doc.get("input_sha256"), doc.get("records")
        ids = _row_ids(output) if recorded != digest or isinstance(records, dict) else None  # read once
        if recorded != digest:
            if ids is None:
                raise InputError(f"{output} exists and is not a faithwatch output; choose another --output, or "
                                 "--overwrite to replace it")
            foreign = sorted(ids - input_ids)
            if foreign:
                raise InputError(f"{output} holds records of another input (ids {', '.join(foreign[:3])} are not in "
                                 f"{source}); choose another --output, or --overwrite to start afresh")
        if isinstance(records, dict):
            _warn_stale(output, source, ids or set(), records, digests)
    body = {"input": str(source), "input_sha256": digest, **({"config": config} if config is not None else {}),
            **({"records": digests} if digests else {})}
    sidecar.write_text(json.dumps(body) + "\n", encoding="utf-8")


def _warn_stale(output: Path, source: Path, done: set[str], was: dict[str, Any], now: dict[str, str]) -> None:
    """Warn about the finished records of ``output`` whose input changed since; ``now`` keeps their old digests (so
    that a later resume warns again)."""
    stale = sorted(i for i in done if i in now and was.get(i) not in (None, now[i]))
    for i in stale:
        now[i] = was[i]
    if stale:
        more = f" and {len(stale) - 3} more" if len(stale) > 3 else ""
        log.warning("%d record%s of %s changed after %s processed them (ids %s%s): their rows are the old ones, "
                    "not processed again; --overwrite starts afresh", len(stale), "s" if len(stale) > 1 else "",
                    source, output, ", ".join(stale[:3]), more)


def finished_ids(output: Path) -> set[str]:
    """Ids already in ``output``, repaired as :mod:`faithwatch.store` says (a torn last line is cut off, a complete
    unterminated one kept)."""
    return {str(k) for k in output_store(output).load()}


def run_batch(
    items: list[Record | BadRecord],
    output_path: Path,
    process: Callable[[Record], dict[str, Any]],
    *,
    overwrite: bool = False,
    prepare: Callable[[Path], None] | None = None,
    on_progress: Callable[[int, int], None] | None = None,
    on_bad: Callable[[BadRecord], None] | None = None,
    source: Path | None = None,
    process_many: Callable[[list[Record]], Iterable[tuple[Record, dict[str, Any] | FaithwatchError]]] | None = None,
    batch_size: int = 1,
    config: dict[str, Any] | None = None,
) -> BatchSummary:
    """Run ``process`` over records into ``output_path``: resumable, bad records reported and skipped.

    With ``source`` (the input file), an existing output is only resumed when it was made from that input
    (:func:`guard_output`); ``overwrite`` starts afresh. With ``process_many``, up to ``batch_size`` records go to
    one call, which yields ``(record, row or FaithwatchError)`` for each of them in any order; every row is written
    as it arrives.

    ``process`` returns the output row of a record or raises a :class:`FaithwatchError` (reported as a bad
    record, the rest go on); a :class:`ModelNotAvailableError` aborts the run (finished records are kept).
    ``prepare`` sees the output path before work starts (e.g. to refuse resuming an incompatible run).
    """
    if source is not None:
        check_not_input(source, output_path)
    output_path.parent.mkdir(parents=True, exist_ok=True)
    summary = BatchSummary(total=len(items), errors=output_path.with_name(output_path.name + ".errors.jsonl"))
    if overwrite and output_path.exists():
        output_path.unlink()
    if source is not None:
        records = [item for item in items if isinstance(item, Record)]
        guard_output(output_path, source, {item.id for item in items if item.id is not None}, config,
                     {item.id: record_digest(item.data) for item in records})
    store = output_store(output_path)
    done = {str(k) for k in store.load()}
    summary.corrupt_output = list(store.corrupt)
    if prepare:
        prepare(output_path)
    summary.errors.unlink(missing_ok=True)
    with store.appending() as put:
        writer = _Writer(summary, put, process, process_many, on_bad, on_progress)
        pending: list[Record] = []
        for item in writer.to_process(items, done):
            pending.append(item)
            if len(pending) >= batch_size:
                writer.flush(pending)
        writer.flush(pending)
    return summary


@dataclass
class _Writer:
    """One batch run's output: rows appended through ``put``, bad records to the summary's errors file, progress
    counted once per input item."""

    summary: BatchSummary
    put: Callable[[dict[str, Any]], None]
    process: Callable[[Record], dict[str, Any]]
    process_many: Callable[[list[Record]], Iterable[tuple[Record, dict[str, Any] | FaithwatchError]]] | None
    on_bad: Callable[[BadRecord], None] | None
    on_progress: Callable[[int, int], None] | None
    finished: int = 0

    def to_process(self, items: list[Record | BadRecord], done: set[str]) -> Iterator[Record]:
        """The records still to process, in order; bad, duplicate and finished ones are reported as they come."""
        seen: set[str] = set()
        for item in items:
            if isinstance(item, BadRecord):
                self.bad(item)
            elif item.id in seen:
                self.bad(BadRecord(item.line, item.id, f"duplicate id '{item.id}'"))
            elif item.id in done:
                seen.add(item.id)
                self.summary.skipped_done += 1
            else:
                seen.add(item.id)
                yield item
                continue
            self.tick()

    def flush(self, pending: list[Record]) -> None:
        """Process ``pending`` (in one ``process_many`` call when there are several) and write each row as it
        comes; a :class:`ModelNotAvailableError` aborts, finished rows kept."""
        if self.process_many and len(pending) > 1:
            results = self.process_many(list(pending))
        else:
            results = ((item, self.one(item)) for item in pending)
        for item, row in results:
            if isinstance(row, ModelNotAvailableError):
                raise row
            if isinstance(row, FaithwatchError):
                self.bad(BadRecord(item.line, item.id, str(row)))
            else:
                self.put({"id": item.id, "line": item.line, **row})
                self.summary.scored += 1
            self.tick()
        pending.clear()

    def one(self, item: Record) -> dict[str, Any] | FaithwatchError:
        try:
            return self.process(item)
        except ModelNotAvailableError:
            raise
        except FaithwatchError as exc:
            return exc

    def bad(self, record: BadRecord) -> None:
        self.summary.bad.append(record)
        JsonlStore(self.summary.errors, key=lambda row: row["line"]).append(
            {"line": record.line, "id": record.id, "error": record.error})
        if self.on_bad:
            self.on_bad(record)

    def tick(self) -> None:
        self.finished += 1
        if self.on_progress:
            self.on_progress(self.finished, self.summary.total)


def score_file(
    monitor: Monitor,
    input_path: Path,
    output_path: Path,
    *,
    vectors: bool = True,
    overwrite: bool = False,
    on_progress: Callable[[int, int], None] | None = None,
    on_bad: Callable[[BadRecord], None] | None = None,
    batch_size: int = 1,
    host_workers: int = 0,
    records: Iterable[Record | BadRecord] | None = None,
) -> BatchSummary:
    """Score every record of ``input_path`` into ``output_path`` (resuming unless ``overwrite``); ``batch_size``
    records per forward pass (:meth:`Monitor.score_many`), their sentences tracked in ``host_workers`` processes.
    ``records``: the input as :func:`read_records` gave it, where the caller read it already (before the model
    loaded, so that a file that cannot be read is found first)."""

    def row_of(result: Any) -> dict[str, Any]:
        out = result.to_dict(vectors=vectors)
        out.pop("context")  # the input holds it; keep the output compact
        return out

    def process(item: Record) -> dict[str, Any]:
        d = item.data
        return row_of(monitor.score(d["question"], d["context"], d["response"], instruction=d.get("instruction")))

    def process_many(items: list[Record]) -> list[tuple[Record, dict[str, Any] | FaithwatchError]]:
        inputs = [(i.data["question"], i.data["context"], i.data["response"], i.data.get("instruction"))
                  for i in items]
        results = monitor.score_many(inputs, batch_size=batch_size, host_workers=host_workers)
        return [(i, r if isinstance(r, FaithwatchError) else row_of(r)) for i, r in zip(items, results, strict=True)]

    start = time.perf_counter()
    items = list(read_records(input_path) if records is None else records)
    summary = run_batch(items, output_path, process, overwrite=overwrite,
                        on_progress=on_progress, on_bad=on_bad, source=input_path,
                        process_many=process_many if batch_size > 1 or host_workers else None,
                        batch_size=batch_size, config=monitor.scoring_config())
    summary.seconds = time.perf_counter() - start
    return summary
