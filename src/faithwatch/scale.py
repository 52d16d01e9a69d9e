"""Batch scoring across workers and machines on Ray Data (``faithwatch score --ray``; the ``[ray]`` extra).

The driver reads and validates the input (bad records are reported with their line numbers, as in
:func:`faithwatch.batch.score_file`), skips the ids already in the output, and hands the rest to Ray Data:
``map_batches`` runs :class:`RayScorer`, an actor that loads the Monitor once and scores each batch with
:meth:`Monitor.score_many`, on ``workers`` actors (CPU, or ``gpus_per_worker`` GPUs each). Results stream back to
the driver, which appends each row to the output at once through the same resumable store: a killed worker's
batch is retried by Ray, a stopped job resumes where it stopped, and every input id ends up in the output exactly
once.
"""

from __future__ import annotations

import json
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

from faithwatch.batch import BadRecord, BatchSummary, Record, read_records, run_batch
from faithwatch.errors import FaithwatchError, InputError


@dataclass
class RaySettings:
    """Where and how wide to run."""

    address: str | None = None  # None: a local cluster; "auto": the running one; or "ray://host:port"
    workers: int = 1  # actors
    gpus_per_worker: float = 0.0
    cpus_per_worker: float = 1.0
    batch_size: int = 8  # records per map_batches call (and per forward pass)
    threads: int | None = None  # torch threads per actor (default: cpus_per_worker)


class RayScorer:
    """A Ray Data actor: the Monitor, loaded once; each call scores one batch of records."""

    def __init__(self, monitor_kwargs: dict[str, Any], batch_size: int, vectors: bool, threads: int) -> None:
        import torch

        from faithwatch.monitor import Monitor

        torch.set_num_threads(max(1, threads))
        self.monitor = Monitor(**monitor_kwargs)
        self.batch_size, self.vectors = batch_size, vectors

    def __call__(self, batch: dict[str, Any]) -> dict[str, Any]:
        inputs = [(q, c, r, i or None) for q, c, r, i in zip(batch["question"], batch["context"], batch["response"],
                                                              batch["instruction"], strict=True)]
        rows, errors = [], []
        for result in self.monitor.score_many(inputs, batch_size=self.batch_size):
            if isinstance(result, FaithwatchError):
                rows.append("")
                errors.append(str(result) or type(result).__name__)
            else:
                row = result.to_dict(vectors=self.vectors)
                row.pop("context")
                rows.append(json.dumps(row, allow_nan=False))
                errors.append("")
        return {"key": np.asarray(batch["key"]), "row": np.asarray(rows, dtype=object),
                "error": np.asarray(errors, dtype=object)}


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
) -> BatchSummary:
    """Score every record of ``input_path`` into ``output_path`` on Ray Data (resuming unless ``overwrite``).

    ``monitor_kwargs`` are the :class:`~faithwatch.monitor.Monitor` arguments each actor builds its monitor with
    (``model``, ``detector``, ``alignment``, ``signals``, ``device``, ...).
    """
    try:
        import ray
    except ImportError as exc:
        raise InputError(f"Ray is not installed ({exc}): pip install 'faithwatch[ray]'") from None
    s = settings or RaySettings()
    if s.workers < 1 or s.batch_size < 1:
        raise InputError("workers and batch_size must be at least 1")
    started_here = not ray.is_initialized()
    if started_here:
        ray.init(address=s.address, ignore_reinit_error=True, log_to_driver=False, include_dashboard=False)
    threads = s.threads or max(1, int(s.cpus_per_worker))

    def stream(items: list[Record]) -> Iterator[tuple[Record, dict[str, Any] | FaithwatchError]]:
        by_key = {str(n): item for n, item in enumerate(items)}
        ds = ray.data.from_items([{"key": k, "question": i.data["question"], "context": i.data["context"],
                                   "response": i.data["response"], "instruction": i.data.get("instruction") or ""}
                                  for k, i in by_key.items()],
                                 override_num_blocks=max(1, -(-len(items) // s.batch_size)))
        scored = ds.map_batches(
            scorer, fn_constructor_kwargs={"monitor_kwargs": monitor_kwargs, "batch_size": s.batch_size,
                                              "vectors": vectors, "threads": threads},
            batch_size=s.batch_size, compute=ray.data.ActorPoolStrategy(size=s.workers), num_cpus=s.cpus_per_worker,
            num_gpus=s.gpus_per_worker or None, batch_format="default",
        )
        for batch in scored.iter_batches(batch_size=None, batch_format="default"):
            for key, row, error in zip(batch["key"], batch["row"], batch["error"], strict=True):
                item = by_key.pop(str(key))
                yield item, (FaithwatchError(str(error)) if error else json.loads(row))
        if by_key:  # never expected: Ray returns every row once
            raise RuntimeError(f"Ray returned no result for {len(by_key)} records")

    start = time.perf_counter()
    try:
        items = list(read_records(input_path))
        summary = run_batch(items, output_path, lambda item: next(iter(stream([item])))[1], overwrite=overwrite,
                            on_progress=on_progress, on_bad=on_bad, source=input_path, process_many=stream,
                            batch_size=max(2, len(items)))
    finally:
        if started_here:
            ray.shutdown()
    summary.seconds = time.perf_counter() - start
    return summary
