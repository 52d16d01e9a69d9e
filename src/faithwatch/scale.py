"""Batch scoring across workers and machines on Ray Data (``faithwatch score --ray``; the ``[ray]`` extra).

Input:

* JSONL, read and validated by the driver: bad records are reported with their line numbers, as in
  :func:`faithwatch.batch.score_file` (Ray's JSON reader would stop the job at the first broken line);
* Parquet (a ``.parquet`` file, or a folder of them), read on the cluster by ``ray.data.read_parquet`` and
  validated there row by row with the same :func:`faithwatch.batch.check_record` (:func:`check_parquet`). There
  are no line numbers, so every record needs an ``id``.

Scoring: ``map_batches`` runs :class:`RayScorer`, an actor that loads the Monitor once and scores each batch with
:meth:`Monitor.score_many`, on ``workers`` actors (CPU, or ``gpus_per_worker`` GPUs each). A killed worker's batch
is retried by Ray. Results stream back to the driver, which writes them; every input id ends up in the output
exactly once, and a stopped job resumes where it stopped (the ids already in the output are skipped).

Output:

* one JSONL file (JSONL input only): each row is appended at once through the resumable store
  (:func:`faithwatch.batch.run_batch`); bad records go to ``<output>.errors.jsonl``;
* a folder of shards (:class:`ShardWriter`): ``part-*.parquet`` or ``part-*.jsonl``, each written whole and
  renamed into place (:func:`faithwatch.store.write_atomic`), so a killed job never leaves half a shard; bad records
  go to ``_errors/errors-*`` (one row each: id, line, path, error). Folder readers (pyarrow, pandas, Ray) read the
  parts and skip ``_errors`` and ``_meta.json``.

The actor plumbing (:func:`ray_session`, :func:`items_dataset`, :func:`map_on_actors`) is shared with the
feature-cache extraction of ``faithwatch train --ray`` (:mod:`faithwatch.eval.features`).
"""

from __future__ import annotations

import json
import shutil
import time
import uuid
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np

from faithwatch.batch import (
    BadRecord,
    BatchSummary,
    Record,
    check_record,
    finished_ids,
    meta_path,
    output_store,
    read_records,
    refuse_other_config,
    run_batch,
)
from faithwatch.errors import FaithwatchError, InputError, check_bools
from faithwatch.store import remove_temporary, write_atomic

#: the formats of an output folder's shards
SHARD_FORMATS = ("parquet", "jsonl")
#: typed Parquet columns of an output row; any other column holds a string (text as is, anything else as JSON)
_PARQUET_TYPES = {"line": "int64", "num_tokens": "int64", "context_tokens_cut": "int64", "score": "float64"}
_ERROR_COLUMNS = {"id": "string", "line": "int64", "path": "string", "error": "string"}


@dataclass
class RaySettings:
    """Where and how wide to run."""

    address: str | None = None  # None: a local cluster; "auto": the running one; or "ray://host:port"
    workers: int = 1  # actors
    gpus_per_worker: float = 0.0
    cpus_per_worker: float = 1.0
    batch_size: int = 8  # records per map_batches call (and per forward pass)
    threads: int | None = None  # torch threads per actor (default: cpus_per_worker)

    @property
    def actor_threads(self) -> int:
        """Torch threads of each actor."""
        return max(1, self.threads or int(self.cpus_per_worker))


@contextmanager
def ray_session(settings: RaySettings) -> Iterator[Any]:
    """The ``ray`` module, connected to ``settings.address`` (a local cluster by default, or the one already
    initialised); a cluster started here is shut down on exit."""
    try:
        import ray
    except ImportError as exc:
        raise InputError(f"Ray is not installed ({exc}): pip install 'faithwatch[ray]'") from None
    if settings.workers < 1 or settings.batch_size < 1:
        raise InputError("workers and batch_size must be at least 1")
    started_here = not ray.is_initialized()
    if started_here:
        ray.init(address=settings.address, ignore_reinit_error=True, log_to_driver=False, include_dashboard=False)
    try:
        yield ray
    finally:
        if started_here:
            ray.shutdown()


def items_dataset(ray: Any, rows: list[dict[str, Any]], batch_size: int) -> Any:
    """``rows`` (held by the driver) as a Ray dataset of one block per batch, so that every batch can go to
    another actor and comes back as soon as it is done."""
    return ray.data.from_items(rows, override_num_blocks=max(1, -(-len(rows) // batch_size)))


def map_on_actors(ray: Any, ds: Any, actor: type, constructor_kwargs: dict[str, Any], settings: RaySettings, *,
                  autoscale: bool = False) -> Iterator[dict[str, np.ndarray]]:
    """Run ``actor`` (built once per worker from ``constructor_kwargs``) over ``ds`` in batches of
    ``settings.batch_size``; yield the output batches as they finish.

    ``autoscale``: start with one actor and grow to ``settings.workers`` (an input read on the cluster needs a
    free CPU for Ray's file listing and reading, which a full pool of actors would starve).
    """
    s = settings
    pool = (ray.data.ActorPoolStrategy(min_size=1, max_size=s.workers) if autoscale
            else ray.data.ActorPoolStrategy(size=s.workers))
    mapped = ds.map_batches(actor, fn_constructor_kwargs=constructor_kwargs, batch_size=s.batch_size, compute=pool,
                            num_cpus=s.cpus_per_worker, num_gpus=s.gpus_per_worker or None, batch_format="default")
    yield from mapped.iter_batches(batch_size=None, batch_format="default")


class RayScorer:
    """A Ray Data actor: the Monitor, loaded once; each call scores one batch of records.

    A batch with a ``status`` column (a Parquet input, :func:`check_parquet`) scores only its ``todo`` rows; the
    others (``done``, ``bad``) pass through unscored, with their ``error``.
    """

    def __init__(self, monitor_kwargs: dict[str, Any], batch_size: int, vectors: bool, threads: int) -> None:
        import torch

        from faithwatch.monitor import Monitor

        torch.set_num_threads(max(1, threads))
        self.monitor = Monitor(**monitor_kwargs)
        self.batch_size, self.vectors = batch_size, vectors

    def __call__(self, batch: dict[str, Any]) -> dict[str, Any]:
        """The batch's keys, each scored record's result as JSON (empty for the others) and its error."""
        n = len(batch["key"])
        status = batch.get("status")
        todo = [i for i in range(n) if status is None or status[i] == "todo"]
        rows = [""] * n
        errors = [str(e) for e in batch["error"]] if "error" in batch else [""] * n
        inputs = [(batch["question"][i], batch["context"][i], batch["response"][i], batch["instruction"][i] or None)
                  for i in todo]
        results = list(self.monitor.score_many(inputs, batch_size=self.batch_size)) if inputs else []
        for i, result in zip(todo, results, strict=True):
            if isinstance(result, FaithwatchError):
                errors[i] = str(result) or type(result).__name__
            else:
                row = result.to_dict(vectors=self.vectors)
                row.pop("context")
                rows[i] = json.dumps(row, allow_nan=False)
        passed = {k: np.asarray(batch[k]) for k in ("status", "path") if k in batch}
        return {**passed, "key": np.asarray(batch["key"]), "row": np.asarray(rows, dtype=object),
                "error": np.asarray(errors, dtype=object)}


def check_parquet(batch: Any, done: frozenset[str]) -> dict[str, np.ndarray]:
    """Validate a batch of Parquet rows (a ``pyarrow.Table``) with :func:`check_record`; runs on the cluster.

    Each row gets a ``status``: ``todo``, ``done`` (its id is in ``done``: text left out) or ``bad`` (``error``
    says why: text left out). A null value counts as a missing field.
    """
    cols: dict[str, list[Any]] = {k: [] for k in ("key", "path", "question", "context", "response", "instruction",
                                                  "status", "error")}
    for data in batch.to_pylist():
        path = data.pop("path", None)
        item = check_record({k: v for k, v in data.items() if v is not None}, None, path=path)
        text = isinstance(item, Record) and item.id not in done
        d = item.data if isinstance(item, Record) else {}
        for k in ("question", "context", "response", "instruction"):
            cols[k].append((d.get(k) or "") if text else "")
        cols["key"].append(item.id or "")
        cols["path"].append(path or "")
        cols["status"].append("bad" if isinstance(item, BadRecord) else ("todo" if text else "done"))
        cols["error"].append(item.error if isinstance(item, BadRecord) else "")
    return {k: np.asarray(v, dtype=object) for k, v in cols.items()}


def is_parquet_input(path: Path) -> bool:
    """Whether ``path`` is a Parquet input: a ``.parquet`` file, or a folder (of Parquet files)."""
    return path.suffix == ".parquet" or path.is_dir()


#: rows per shard unless asked otherwise (`score --shard-rows`)
SHARD_ROWS = 1000


def shard_format(output: str, output_format: str | None) -> str | None:
    """The shard format when ``output`` names a folder of shards, else ``None`` (one JSONL file).

    A folder: ``output_format`` is given, ``output`` ends with a slash, or it is an existing folder (Parquet unless
    ``output_format`` says otherwise).
    """
    if output_format is not None:
        if output_format not in SHARD_FORMATS:
            raise InputError(f"--format must be one of {', '.join(SHARD_FORMATS)}, got {output_format!r}")
        return output_format
    return "parquet" if output.endswith(("/", "\\")) or Path(output).is_dir() else None


#: the file in a shard folder that names its input and scoring configuration
SHARD_META = "_meta.json"


class ShardWriter:
    """An output folder of shards: the rows in ``part-*`` files, bad records in ``_errors/errors-*``.

    Rows are kept in memory and written as one shard every ``shard_rows`` rows or ``shard_seconds`` seconds (and at
    :meth:`close`), each shard atomically; a killed job loses only the rows not yet in a shard, which a re-run scores
    again. The bad records are those of the latest run: the errors are cleared when a run starts. ``_meta.json``
    names the input and the scoring ``config``, so that a folder is only resumed for the same input and configuration.
    """

    def __init__(self, folder: Path, fmt: str, *, source: Path, overwrite: bool = False, shard_rows: int = SHARD_ROWS,
                 shard_seconds: float = 60.0, config: dict[str, Any] | None = None) -> None:
        if fmt not in SHARD_FORMATS:
            raise InputError(f"shard format must be one of {', '.join(SHARD_FORMATS)}, got {fmt!r}")
        if shard_rows < 1:
            raise InputError("shard_rows must be at least 1")
        self.folder, self.fmt = Path(folder), fmt
        self.errors_dir = self.folder / "_errors"
        self.shard_rows, self.shard_seconds = shard_rows, shard_seconds
        meta = self.folder / SHARD_META
        wanted = {"input": str(Path(source).resolve()), **({"config": config} if config is not None else {})}
        if self.folder.exists() and not self.folder.is_dir():
            raise InputError(f"{folder} is a file; shards need a folder (choose another --output)")
        if overwrite and meta.is_file():
            self._clear()
        if self.folder.is_dir() and any(self.folder.iterdir()):
            try:
                recorded = json.loads(meta.read_text(encoding="utf-8"))
            except (OSError, ValueError):
                raise InputError(f"{folder} is not empty and not a faithwatch shard folder (no _meta.json); choose "
                                 "another --output") from None
            if recorded.get("input") != wanted["input"]:
                raise InputError(f"{folder} holds the output of another input ({recorded.get('input')}); choose "
                                 "another --output, or --overwrite to start afresh")
            refuse_other_config(self.folder, recorded.get("config"), config)
            other = [p.name for f in SHARD_FORMATS if f != fmt for p in self.folder.glob(f"part-*.{f}")]
            if other:
                raise InputError(f"{folder} holds {other[0].rsplit('.', 1)[1]} shards; use that --format, or "
                                 "--overwrite to start afresh")
        remove_temporary(self.folder)  # what a killed job was writing
        shutil.rmtree(self.errors_dir, ignore_errors=True)  # the latest run's errors only: every record is rechecked
        self.errors_dir.mkdir(parents=True)
        meta.write_text(json.dumps(wanted) + "\n", encoding="utf-8")
        parts = sorted(self.folder.glob(f"part-*.{fmt}"))
        #: ids already in the shards
        self.done: set[str] = {i for p in parts for i in self._ids(p)}
        self._next, self._run = len(parts), uuid.uuid4().hex[:8]
        self._rows: list[dict[str, Any]] = []
        self._bad: list[BadRecord] = []
        self._since = time.monotonic()

    def _clear(self) -> None:
        for part in self.folder.glob("part-*"):
            part.unlink()
        shutil.rmtree(self.errors_dir, ignore_errors=True)
        (self.folder / SHARD_META).unlink(missing_ok=True)

    def _ids(self, part: Path) -> list[str]:
        if self.fmt == "jsonl":
            return list(finished_ids(part))
        import pyarrow.parquet as pq

        return [str(i) for i in pq.read_table(part, columns=["id"]).column("id").to_pylist()]

    def put(self, row: dict[str, Any]) -> None:
        """Add one output row (with its ``id``); writes a shard when one is due."""
        self._rows.append(row)
        self.done.add(str(row["id"]))
        if len(self._rows) >= self.shard_rows or time.monotonic() - self._since >= self.shard_seconds:
            self.flush()

    def bad(self, record: BadRecord) -> None:
        """Add one bad record (written with the next shard)."""
        self._bad.append(record)

    def flush(self) -> None:
        """Write the rows and bad records held in memory, one shard each."""
        name = f"{self._next:05d}-{self._run}.{self.fmt}"
        if self._rows:
            write_atomic(self.folder / f"part-{name}", lambda tmp: self._write(tmp, self._rows, _PARQUET_TYPES))
            self._next += 1
        if self._bad:
            errors = [{"id": b.id, "line": b.line, "path": b.path, "error": b.error} for b in self._bad]
            write_atomic(self.errors_dir / f"errors-{name}", lambda tmp: self._write(tmp, errors, _ERROR_COLUMNS))
        self._rows, self._bad, self._since = [], [], time.monotonic()

    def close(self) -> None:
        """Write what is left."""
        self.flush()

    def _write(self, path: Path, rows: list[dict[str, Any]], types: dict[str, str]) -> None:
        if self.fmt == "jsonl":
            path.write_text("".join(json.dumps(r, ensure_ascii=False, allow_nan=False) + "\n" for r in rows),
                            encoding="utf-8")
            return
        import pyarrow as pa
        import pyarrow.parquet as pq

        columns = {}
        for name in dict.fromkeys(k for r in rows for k in r):
            values = [r.get(name) for r in rows]
            if name not in types and not all(v is None or isinstance(v, str) for v in values):
                values = [None if v is None else json.dumps(v, ensure_ascii=False, allow_nan=False) for v in values]
            columns[name] = pa.array(values, type=getattr(pa, types.get(name, "string"))())
        pq.write_table(pa.table(columns), path)


def recorded_config(output: Path) -> dict[str, Any] | None:
    """The scoring configuration recorded with a batch ``output`` (a JSONL file's sidecar, or a shard folder's
    ``_meta.json``), or None when there is none."""
    meta = Path(output) / SHARD_META if Path(output).is_dir() else meta_path(Path(output))
    try:
        config = json.loads(meta.read_text(encoding="utf-8")).get("config")
    except (OSError, ValueError, AttributeError):
        return None
    return config if isinstance(config, dict) else None


def read_output_rows(output: Path) -> Iterator[dict[str, Any]]:
    """The rows of a batch output, a JSONL file or a folder of shards (:class:`ShardWriter`), as dicts; unreadable
    lines are skipped (the batch run reports them), and the files are only read, never repaired. In a Parquet shard
    a column of lists or objects (``sentences``) holds JSON text."""
    output = Path(output)
    if output.is_file():
        yield from output_store(output).load(repair=False).values()
        return
    for part in sorted(output.glob("part-*")):
        if part.suffix == ".jsonl":
            yield from output_store(part).load(repair=False).values()
        elif part.suffix == ".parquet":
            import pyarrow.parquet as pq

            yield from pq.read_table(part).to_pylist()


def score_with_ray(
    monitor_kwargs: dict[str, Any],
    input_path: Path,
    output_path: Path,
    settings: RaySettings | None = None,
    *,
    vectors: bool = False,
    overwrite: bool = False,
    on_progress: Callable[[int, int], None] | None = None,
    on_bad: Callable[[BadRecord], None] | None = None,
    scorer: type[RayScorer] = RayScorer,
    output_format: str | None = None,
    shard_rows: int = SHARD_ROWS,
    shard_seconds: float = 60.0,
) -> BatchSummary:
    """Score every record of ``input_path`` into ``output_path`` on Ray Data (resuming unless ``overwrite``).

    ``monitor_kwargs`` are the :class:`~faithwatch.monitor.Monitor` arguments each actor builds its monitor with
    (``model``, ``detector``, ``alignment``, ``signals``, ``device``, ...). ``input_path``: JSONL, or Parquet (see
    :func:`is_parquet_input`). ``output_format`` (``parquet`` or ``jsonl``): ``output_path`` is a folder of shards
    (:class:`ShardWriter`, ``shard_rows`` / ``shard_seconds`` apart); ``None``: one JSONL file (JSONL input only).
    """
    check_bools(vectors=vectors, overwrite=overwrite)
    s = settings or RaySettings()
    parquet = is_parquet_input(input_path)
    if parquet and output_format is None:
        raise InputError("a Parquet input is written as shards: give the output as a folder (e.g. out/) or a "
                         "--format (parquet or jsonl)")
    if parquet and input_path.is_dir() and not any(input_path.rglob("*.parquet")):
        raise InputError(f"no .parquet file in {input_path}")
    start = time.perf_counter()
    with ray_session(s) as ray:
        ctor = {"monitor_kwargs": monitor_kwargs, "batch_size": s.batch_size, "vectors": vectors,
                "threads": s.actor_threads}
        if output_format is None:
            summary = _score_to_file(ray, s, scorer, ctor, input_path, output_path, overwrite, on_progress, on_bad)
        else:
            writer = ShardWriter(output_path, output_format, source=input_path, overwrite=overwrite,
                                 shard_rows=shard_rows, shard_seconds=shard_seconds,
                                 config=scoring_config(ray, s, monitor_kwargs))
            summary = _score_to_shards(ray, s, scorer, ctor, input_path, writer, parquet, on_progress, on_bad)
    summary.seconds = time.perf_counter() - start
    return summary


def scoring_config(ray: Any, settings: RaySettings, monitor_kwargs: dict[str, Any]) -> dict[str, Any]:
    """The :meth:`~faithwatch.monitor.Monitor.scoring_config` of the monitor each actor builds, from one worker task
    (one more model load), so that a resumed output refuses rows of another configuration as the local path does.
    A monitor that cannot be built raises its own error here, before any actor starts."""
    task = ray.remote(num_cpus=settings.cpus_per_worker, num_gpus=settings.gpus_per_worker)(_config_of)
    try:
        return ray.get(task.remote(monitor_kwargs))
    except FaithwatchError as exc:  # Ray's error is also an instance of the task's own
        cause = getattr(exc, "cause", exc)
        raise cause from None


def _config_of(monitor_kwargs: dict[str, Any]) -> dict[str, Any]:
    from faithwatch.monitor import Monitor

    return Monitor(**monitor_kwargs).scoring_config()


def _score_to_file(ray: Any, s: RaySettings, scorer: type[RayScorer], ctor: dict[str, Any], input_path: Path,
                   output_path: Path, overwrite: bool, on_progress: Callable[[int, int], None] | None,
                   on_bad: Callable[[BadRecord], None] | None) -> BatchSummary:
    """JSONL in, one JSONL file out: the resumable store of :func:`run_batch`, fed by the actors."""

    def stream(items: list[Record]) -> Iterator[tuple[Record, dict[str, Any] | FaithwatchError]]:
        by_key = {str(n): item for n, item in enumerate(items)}
        ds = items_dataset(ray, [_text_row(k, i) for k, i in by_key.items()], s.batch_size)
        for batch in map_on_actors(ray, ds, scorer, ctor, s):
            for key, row, error in zip(batch["key"], batch["row"], batch["error"], strict=True):
                item = by_key.pop(str(key))
                yield item, (FaithwatchError(str(error)) if error else json.loads(row))
        if by_key:  # never expected: Ray returns every row once
            raise RuntimeError(f"Ray returned no result for {len(by_key)} records")

    items = list(read_records(input_path))
    config = scoring_config(ray, s, ctor["monitor_kwargs"])
    return run_batch(items, output_path, lambda item: next(iter(stream([item])))[1], overwrite=overwrite,
                     on_progress=on_progress, on_bad=on_bad, source=input_path, process_many=stream,
                     batch_size=max(2, len(items)), config=config)


def _text_row(key: str, item: Record) -> dict[str, Any]:
    d = item.data
    return {"key": key, "question": d["question"], "context": d["context"], "response": d["response"],
            "instruction": d.get("instruction") or ""}


def _score_to_shards(ray: Any, s: RaySettings, scorer: type[RayScorer], ctor: dict[str, Any], input_path: Path,
                     writer: ShardWriter, parquet: bool, on_progress: Callable[[int, int], None] | None,
                     on_bad: Callable[[BadRecord], None] | None) -> BatchSummary:
    """Any input, a folder of shards out; the driver keeps every id once (the first copy to arrive wins)."""
    run = _ShardRun(BatchSummary(errors=writer.errors_dir), writer, on_bad, on_progress)
    try:
        if parquet:
            _parquet_to_shards(ray, s, scorer, ctor, input_path, run)
        else:
            _records_to_shards(ray, s, scorer, ctor, input_path, run)
    finally:
        writer.close()  # the finished rows are kept even when the job fails
    return run.summary


@dataclass
class _ShardRun:
    """The driver's bookkeeping of a sharded run: each id claimed once, rows and bad records written, progress."""

    summary: BatchSummary
    writer: ShardWriter
    on_bad: Callable[[BadRecord], None] | None
    on_progress: Callable[[int, int], None] | None
    #: ids in the output, or on their way there, or skipped as done in this run
    claimed: set[str] = field(default_factory=set)

    def bad(self, record: BadRecord) -> None:
        self.summary.bad.append(record)
        self.writer.bad(record)
        if self.on_bad:
            self.on_bad(record)

    def tick(self) -> None:
        if self.on_progress:
            s = self.summary
            self.on_progress(s.scored + s.skipped_done + len(s.bad), s.total)

    def claim(self, rid: str, line: int | None, path: str | None) -> bool:
        """Whether ``rid`` is new; a second copy is a bad record (duplicate id)."""
        if rid in self.claimed:
            self.bad(BadRecord(line, rid, f"duplicate id '{rid}'", path))
            return False
        self.claimed.add(rid)
        return True

    def arrive(self, rid: str, line: int | None, path: str | None, row: str, error: str) -> None:
        """An actor's answer for one record: its row written, or its error reported."""
        if error:
            self.bad(BadRecord(line, rid, error, path))
        else:
            self.writer.put({"id": rid, "line": line, **json.loads(row)})
            self.summary.scored += 1
        self.tick()


def _parquet_to_shards(ray: Any, s: RaySettings, scorer: type[RayScorer], ctor: dict[str, Any], input_path: Path,
                       run: _ShardRun) -> None:
    """Parquet in: rows checked (and finished ids marked) on the cluster, scored by the actors as they stream."""
    raw = ray.data.read_parquet(str(input_path), include_paths=True, num_cpus=0)
    run.summary.total = raw.count()  # from the files' metadata
    ds = (raw.map_batches(check_parquet, fn_kwargs={"done": frozenset(run.writer.done)}, batch_format="pyarrow",
                          num_cpus=0)
          .repartition(target_num_rows_per_block=s.batch_size))  # a batch per block: streamed back at once
    for batch in map_on_actors(ray, ds, scorer, ctor, s, autoscale=_cpus_short(ray, s)):
        for rid, path, status, row, error in zip(batch["key"], batch["path"], batch["status"], batch["row"],
                                                 batch["error"], strict=True):
            rid, path = str(rid), str(path) or None
            if status == "bad":
                run.bad(BadRecord(None, rid or None, str(error), path))
            elif run.claim(rid, None, path):  # a duplicate is reported by claim
                if status != "done":
                    run.arrive(rid, None, path, str(row), str(error))  # counted there
                    continue
                run.summary.skipped_done += 1
            run.tick()


def _records_to_shards(ray: Any, s: RaySettings, scorer: type[RayScorer], ctor: dict[str, Any], input_path: Path,
                       run: _ShardRun) -> None:
    """JSONL or CSV in: the driver's checks in input order (the first copy of an id wins), then the actors."""
    items = list(read_records(input_path))
    run.summary.total = len(items)
    todo: dict[str, Record] = {}
    for item in items:
        if isinstance(item, BadRecord):
            run.bad(item)
        elif run.claim(item.id, item.line, None):
            if item.id in run.writer.done:
                run.summary.skipped_done += 1
            else:
                todo[item.id] = item
                continue
        run.tick()
    if todo:
        ds = items_dataset(ray, [_text_row(k, i) for k, i in todo.items()], s.batch_size)
        for batch in map_on_actors(ray, ds, scorer, ctor, s):
            for key, row, error in zip(batch["key"], batch["row"], batch["error"], strict=True):
                item = todo.pop(str(key))
                run.arrive(item.id, item.line, None, str(row), str(error))


def _cpus_short(ray: Any, s: RaySettings) -> bool:
    """Whether a full pool of actors would leave no CPU for reading on the cluster."""
    return ray.cluster_resources().get("CPU", 0.0) - s.workers * s.cpus_per_worker < 1.0
