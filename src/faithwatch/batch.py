"""Scoring a JSONL file of (context, question, response) records: resumable, bad records reported.

Input lines: ``{"id"?: str|int, "context": str, "question": str, "response": str, "instruction"?: str}``.
Each finished record is appended to the output and flushed to disk at once, so a crash loses at most
the record in progress; re-running skips the records already in the output (a torn last line is
dropped). A bad record is reported with its line number and the rest are processed.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from faithwatch.errors import FaithwatchError, ModelNotAvailableError
from faithwatch.monitor import Monitor
from faithwatch.records import CheckRecord, ScoreRecord, parse
from faithwatch.store import CorruptLine, JsonlStore


@dataclass
class BadRecord:
    """A record that could not be scored."""

    line: int
    id: str | None
    error: str


@dataclass
class BatchSummary:
    """What a batch run did."""

    total: int = 0
    scored: int = 0
    skipped_done: int = 0
    bad: list[BadRecord] = field(default_factory=list)
    #: unreadable lines found in an existing output (kept in the file, not counted as done)
    corrupt_output: list[CorruptLine] = field(default_factory=list)


@dataclass
class Record:
    line: int
    id: str
    data: dict[str, Any]


def read_records(path: Path, model: type[ScoreRecord] | type[CheckRecord] = ScoreRecord
                 ) -> Iterator[Record | BadRecord]:
    """Parse input lines into ``model`` (:mod:`faithwatch.records`); a line that is not UTF-8, not JSON, not an
    object or not a valid record comes back as a :class:`BadRecord` (the rest go on)."""
    with path.open("rb") as handle:
        for line_no, raw in enumerate(handle, start=1):
            try:
                line = raw.decode("utf-8")
            except UnicodeDecodeError as exc:
                yield BadRecord(line_no, None, f"not UTF-8 text (byte {exc.start + 1})")
                continue
            if not line.strip():
                continue
            try:
                data = json.loads(line)
            except json.JSONDecodeError as exc:
                yield BadRecord(line_no, None, f"invalid JSON: {exc.msg} at column {exc.colno}")
                continue
            if not isinstance(data, dict):
                yield BadRecord(line_no, None, f"expected a JSON object, got {type(data).__name__}")
                continue
            raw_id = data.get("id")
            rid = str(raw_id) if isinstance(raw_id, (str, int)) and not isinstance(raw_id, bool) else None
            record, problems = parse(model, data)
            if problems:
                yield BadRecord(line_no, rid, "; ".join(problems))
                continue
            yield Record(line_no, rid if rid is not None else f"line-{line_no}", data)


def output_store(output: Path) -> JsonlStore:
    """The output file as a store of rows by id."""
    return JsonlStore(output, key=lambda row: str(row["id"]))


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
) -> BatchSummary:
    """Run ``process`` over records into ``output_path``: resumable, bad records reported and skipped.

    ``process`` returns the output row of a record or raises a :class:`FaithwatchError` (reported as a bad
    record, the rest go on); a :class:`ModelNotAvailableError` aborts the run (finished records are kept).
    ``prepare`` sees the output path before work starts (e.g. to refuse resuming an incompatible run).
    """
    summary = BatchSummary(total=len(items))
    if overwrite and output_path.exists():
        output_path.unlink()
    store = output_store(output_path)
    done = {str(k) for k in store.load()}
    summary.corrupt_output = list(store.corrupt)
    if prepare:
        prepare(output_path)
    seen: set[str] = set()
    errors_path = output_path.with_name(output_path.name + ".errors.jsonl")
    errors_path.unlink(missing_ok=True)

    def bad(record: BadRecord) -> None:
        summary.bad.append(record)
        JsonlStore(errors_path, key=lambda row: row["line"]).append(
            {"line": record.line, "id": record.id, "error": record.error})
        if on_bad:
            on_bad(record)

    with store.appending() as put:
        for n, item in enumerate(items, start=1):
            if isinstance(item, BadRecord):
                bad(item)
            elif item.id in seen:
                bad(BadRecord(item.line, item.id, f"duplicate id '{item.id}'"))
            elif item.id in done:
                seen.add(item.id)
                summary.skipped_done += 1
            else:
                seen.add(item.id)
                try:
                    row = process(item)
                except ModelNotAvailableError:
                    raise
                except FaithwatchError as exc:
                    bad(BadRecord(item.line, item.id, str(exc)))
                else:
                    put({"id": item.id, "line": item.line, **row})
                    summary.scored += 1
            if on_progress:
                on_progress(n, len(items))
    return summary


def score_file(
    monitor: Monitor,
    input_path: Path,
    output_path: Path,
    *,
    vectors: bool = True,
    overwrite: bool = False,
    on_progress: Callable[[int, int], None] | None = None,
    on_bad: Callable[[BadRecord], None] | None = None,
) -> BatchSummary:
    """Score every record of ``input_path`` into ``output_path`` (resuming unless ``overwrite``)."""

    def process(item: Record) -> dict[str, Any]:
        d = item.data
        row = monitor.score(d["question"], d["context"], d["response"], instruction=d.get("instruction"))
        out = row.to_dict(vectors=vectors)
        out.pop("context")  # the input holds it; keep the output compact
        return out

    return run_batch(list(read_records(input_path)), output_path, process, overwrite=overwrite,
                     on_progress=on_progress, on_bad=on_bad)
