"""Feature extraction for labelled data sets by teacher forcing, cached as Parquet shards and resumable.

Per example the cache holds one row per sentence (scalar signals, the sentence's lookback-ratio vector,
last-token hidden states at the LID layers) and one row per 8-token window (Lookback Lens, sliding-window
mode). Labels are not cached: they are joined from the loaders, so a label policy change needs no re-run.
Shards are written atomically every few examples; a re-run skips finished examples and retries failed ones.
A cache that differs only by the alignment scorer is reused: only ``align_score`` is recomputed.
Text-only recipes (alignment, lexical, edits, tagger) need no model pass: :func:`extract_text_features` builds their
tables from the text alone, in minutes instead of hours.

With :class:`RayExtraction` the teacher forcing runs on Ray actors (:class:`RowsActor`: each builds the Monitor
once from the same arguments and computes its examples' rows with the same :func:`_rows`); the driver writes the
rows into the same shards, so the cache is the same as a local run's (``faithwatch train --ray``).
"""

from __future__ import annotations

import hashlib
import json
import logging
import os
import pickle
from collections.abc import Callable, Iterable, Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd
import pyarrow as pa
import pyarrow.parquet as pq

from faithwatch.alignment import plain_specs
from faithwatch.alignment.base import AlignmentScorer, score_pairs_asked
from faithwatch.data.schema import LabelledExample
from faithwatch.errors import FaithwatchError
from faithwatch.models.folders import cache_dir
from faithwatch.models.prompts import groups_in_order
from faithwatch.monitor import Monitor
from faithwatch.scale import RaySettings, items_dataset, map_on_actors, ray_session
from faithwatch.sentences import SentenceTracker
from faithwatch.store import write_atomic
from faithwatch.text import MARKUP_RULE, strip_markup

log = logging.getLogger(__name__)

#: bump when the meaning of cached columns changes
CACHE_SCHEMA = 2
#: the same for text-only caches (:func:`extract_text_features`)
TEXT_CACHE_SCHEMA = 1
WINDOW = 8
SHARD_EXAMPLES = 16
#: signals extracted for training and evaluation (LID is computed afterwards from the hidden states,
#: against a bank built from the training split)
EXTRACTION_SIGNALS = ("likelihood", "entropy", "contrastive", "influence", "lookback", "alignment", "hidden")
#: per-token records kept per sentence (any per-sentence statistic can then be computed without re-extraction)
TOKEN_RECORDS = ("logprob", "twin_logprob", "entropy", "kl")


@dataclass
class FeatureTables:
    """Cached features of one data set: per-sentence and per-window rows, plus failed example ids."""

    sentences: pd.DataFrame
    windows: pd.DataFrame
    failed: dict[str, str]


@dataclass
class RayExtraction:
    """Teacher-force on Ray actors: each builds ``Monitor(**monitor_kwargs)``, the same monitor as the driver's
    (:func:`faithwatch.eval.pipeline.extraction_kwargs`)."""

    monitor_kwargs: dict[str, Any]
    settings: RaySettings


#: an example's rows (sentences, windows), or why it failed
Outcome = tuple[list[dict], list[dict]] | str

_SAME = object()


def _current(monitor: Monitor) -> str | None:
    return monitor.alignment.name if monitor.alignment else None


def cache_spec(monitor: Monitor, alignment: str | None | object = _SAME) -> dict:
    """Everything that shapes the features (hashed into the cache folder's name, and kept in its spec.json)."""
    if alignment is _SAME:
        alignment = _current(monitor)
    spec = {
        "schema": CACHE_SCHEMA, "model": monitor.lm.model_id, "revision": monitor.lm.revision,
        "alignment": alignment,
        "features": monitor.feature_names, "window": WINDOW,
    }
    version = getattr(monitor.alignment, "version", None) if alignment == _current(monitor) else None
    if version:  # only scorers that declare a version: older cache keys stay valid
        spec["alignment_version"] = version
    if alignment is not None:  # align_score reads sentences without markup (text.strip_markup)
        spec["markup"] = MARKUP_RULE
    if alignment == _current(monitor) and getattr(monitor.alignment, "precision", None):  # bf16 only, as above
        spec["alignment_precision"] = monitor.alignment.precision
    return spec


def spec_digest(spec: dict) -> str:
    """A short, stable hash of a JSON-ready spec (cache folder names)."""
    return hashlib.sha256(json.dumps(spec, sort_keys=True).encode()).hexdigest()[:12]


def safe_name(dataset: str) -> str:
    """``dataset`` as a file-name part. A file is named by its path relative to the working directory (its
    absolute path outside it), so that ``./x.jsonl``, ``x.jsonl`` and ``/abs/x.jsonl`` share one cache."""
    path = Path(dataset)
    if path.is_file():
        resolved, here = path.resolve(), Path.cwd().resolve()
        dataset = str(resolved.relative_to(here) if resolved.is_relative_to(here) else resolved)
    return "".join(c if c.isalnum() or c in "-_." else "_" for c in dataset)


def cache_key(monitor: Monitor, dataset: str, alignment: str | None | object = _SAME) -> str:
    """Folder name that changes whenever anything that shapes the features changes.

    ``alignment`` overrides the monitor's scorer name (to find a sibling cache).
    """
    return f"{safe_name(dataset)}-{spec_digest(cache_spec(monitor, alignment))}"


def _rows(example: LabelledExample, monitor: Monitor) -> tuple[list[dict], list[dict]]:
    result = monitor.score(example.question, example.context, example.response, instruction=example.instruction)
    sentences = []
    for s in result.sentences:
        row = {"example_id": example.id, "sentence_index": s.index, "text": s.text, "start": s.start, "end": s.end,
               "token_start": s.token_start, "token_end": s.token_end}
        row.update({k: (np.nan if v is None else v) for k, v in s.features.items()})
        for name, vec in s.vectors.items():
            row[name] = np.asarray(vec, dtype=np.float32).ravel()
        if result.records is not None:
            for name in TOKEN_RECORDS:
                values = getattr(result.records, name)[s.token_start : s.token_end]
                if values:
                    row[f"tok_{name}"] = np.asarray(values, dtype=np.float32)
        sentences.append(row)
    windows = []
    lookback = result.records.lookback if result.records is not None else []
    ends = result.token_ends
    for w, lo in enumerate(range(0, len(lookback), WINDOW)):
        hi = min(lo + WINDOW, len(lookback))
        windows.append({
            "example_id": example.id, "window_index": w, "start": ends[lo - 1] if lo else 0, "end": ends[hi - 1],
            "lookback_ratio": np.mean(lookback[lo:hi], axis=0).astype(np.float32).ravel(),
        })
    return sentences, windows


def write_shard(folder: Path, kind: str, rows: list[dict], index: int) -> None:
    """Write ``rows`` atomically as shard ``index`` of ``kind`` in ``folder`` (nothing when there are none)."""
    if not rows:
        return
    table = pa.Table.from_pandas(pd.DataFrame(rows), preserve_index=False)
    name = f"{kind}-{index:05d}-{os.getpid()}"  # the pid keeps concurrent workers' shards apart
    write_atomic(folder / f"{name}.parquet", lambda tmp: pq.write_table(table, tmp))


_KEYS = {"examples": ["example_id"], "sentences": ["example_id", "sentence_index"],
         "windows": ["example_id", "window_index"]}


def fingerprint(example: LabelledExample) -> str:
    """What an example's features depend on (its texts), hashed: a cached example whose text changed is redone."""
    texts = [example.question, example.context, example.response, example.instruction]
    return hashlib.sha256(json.dumps(texts).encode()).hexdigest()[:16]


def next_shard(folder: Path, kind: str = "examples") -> int:
    """The next shard number: one past the highest of ``kind`` in ``folder`` (never reuses a name)."""
    numbers = [int(f.name.split("-")[1]) for f in folder.glob(f"{kind}-*.parquet")]
    return max(numbers, default=-1) + 1


def _drop_examples(folder: Path, ids: set[str]) -> None:
    """Remove ``ids``' rows from every shard (examples first, so they stop counting as done); atomic per file."""
    for kind in ("examples", "sentences", "windows"):
        for f in sorted(folder.glob(f"{kind}-*.parquet")):
            table = pq.read_table(f)
            keep = ~table.column("example_id").to_pandas().isin(ids).to_numpy()
            if not keep.all():
                kept = table.filter(pa.array(keep))
                write_atomic(f, lambda tmp, kept=kept: pq.write_table(kept, tmp))


def read_shards(folder: Path, kind: str, keys: Sequence[str]) -> pd.DataFrame:
    """Every shard of ``kind`` in ``folder``, one row per ``keys`` (empty, without columns, when there is none)."""
    files = sorted(folder.glob(f"{kind}-*.parquet"))
    if not files:
        return pd.DataFrame()
    table = pd.concat([pq.read_table(f).to_pandas() for f in files], ignore_index=True)
    # an example finished by two concurrent workers appears twice: keep one copy
    return table.drop_duplicates(subset=list(keys), keep="first").reset_index(drop=True)


def _read(folder: Path, kind: str) -> pd.DataFrame:
    return read_shards(folder, kind, _KEYS[kind])


class RowsActor:
    """A Ray Data actor: the extraction monitor, built once; each call computes the rows (:func:`_rows`) of a batch
    of pickled examples, pickled (or why an example failed)."""

    def __init__(self, monitor_kwargs: dict[str, Any], threads: int) -> None:
        import torch

        torch.set_num_threads(max(1, threads))
        self.monitor = Monitor(**monitor_kwargs)

    def __call__(self, batch: dict[str, Any]) -> dict[str, Any]:
        """The batch's keys, each example's rows pickled (empty where it failed) and its error (empty where not)."""
        rows, errors = [], []
        for blob in batch["example"]:
            outcome = _attempt(lambda e: _rows(e, self.monitor), pickle.loads(blob))
            rows.append(b"" if isinstance(outcome, str) else pickle.dumps(outcome))
            errors.append(outcome if isinstance(outcome, str) else "")
        return {"key": np.asarray(batch["key"]), "rows": np.asarray(rows, dtype=object),
                "error": np.asarray(errors, dtype=object)}


def _attempt(make_rows: Callable[[LabelledExample], tuple[list[dict], list[dict]]],
             example: LabelledExample) -> Outcome:
    try:
        return make_rows(example)
    except (FaithwatchError, ValueError) as exc:
        return str(exc)


def _ray_outcomes(todo: Sequence[LabelledExample], ray_run: RayExtraction
                  ) -> Iterator[tuple[LabelledExample, Outcome]]:
    """Each example's outcome, from :class:`RowsActor` actors, in the order they finish."""
    if not todo:
        return
    s = ray_run.settings
    with ray_session(s) as ray:
        by_key = {str(n): e for n, e in enumerate(todo)}
        ds = items_dataset(ray, [{"key": k, "example": pickle.dumps(e)} for k, e in by_key.items()], s.batch_size)
        ctor = {"monitor_kwargs": ray_run.monitor_kwargs, "threads": s.actor_threads}
        for batch in map_on_actors(ray, ds, RowsActor, ctor, s):
            for key, rows, error in zip(batch["key"], batch["rows"], batch["error"], strict=True):
                yield by_key.pop(str(key)), (str(error) if error else pickle.loads(rows))
        if by_key:  # never expected: Ray returns every row once
            raise RuntimeError(f"Ray returned no rows for {len(by_key)} examples")


def extract_features(
    monitor: Monitor,
    dataset: str,
    examples: Sequence[LabelledExample],
    *,
    root: Path | None = None,
    on_progress: Callable[[int, int], None] | None = None,
    ray: RayExtraction | None = None,
) -> FeatureTables:
    """Teacher-force every example through ``monitor`` (cached, resumable) and return the tables.

    ``ray``: the examples not yet cached are teacher-forced on Ray actors instead (same rows, same cache).
    """
    base = root or cache_dir() / "features"
    folder = base / cache_key(monitor, dataset)
    folder.mkdir(parents=True, exist_ok=True)
    (folder / "spec.json").write_text(json.dumps(cache_spec(monitor), sort_keys=True))
    done = set(_read(folder, "examples").get("example_id", pd.Series(dtype=str)))
    if not done and monitor.alignment is not None:
        derive_alignment(monitor, dataset, examples, base, folder, on_progress)
    run_many = (lambda todo: _ray_outcomes(todo, ray)) if ray is not None else None
    return _extract(folder, dataset, examples, lambda e: _rows(e, monitor), on_progress, run_many)


def text_cache_key(scorer: AlignmentScorer | None, dataset: str) -> str:
    """Folder name of a text-only cache: changes with the scorer, its version and :data:`TEXT_CACHE_SCHEMA`."""
    spec = {"schema": TEXT_CACHE_SCHEMA, "alignment": scorer.name if scorer else None,
            "alignment_version": getattr(scorer, "version", None)}
    if scorer is not None:  # align_score reads sentences without markup (text.strip_markup)
        spec["markup"] = MARKUP_RULE
    return f"text-{safe_name(dataset)}-{spec_digest(spec)}"


def _align_example(scorer: AlignmentScorer, texts: Sequence[str], example: LabelledExample) -> list[float]:
    """``align_score`` of sentences of ``example``'s response: against its context, read with its question."""
    return score_pairs_asked(scorer, [(strip_markup(t), example.context) for t in texts],
                             [example.question or ""] * len(texts))


def _text_rows(example: LabelledExample, scorer: AlignmentScorer | None) -> tuple[list[dict], list[dict]]:
    sentences = SentenceTracker.split_text(example.response)
    scores = _align_example(scorer, [s.text for s in sentences], example) if scorer and sentences else []
    rows = [{"example_id": example.id, "sentence_index": s.index, "text": s.text, "start": s.start, "end": s.end,
             "align_score": float(scores[i]) if scores else np.nan} for i, s in enumerate(sentences)]
    return rows, []


def extract_text_features(
    scorer: AlignmentScorer | None,
    dataset: str,
    examples: Sequence[LabelledExample],
    *,
    root: Path | None = None,
    on_progress: Callable[[int, int], None] | None = None,
) -> FeatureTables:
    """Sentence rows from the text alone, no language model (cached, resumable): for text-only recipes.

    Each response is split as a finished generation is (:meth:`SentenceTracker.split_text`); ``align_score``
    comes from ``scorer``. The text-signal features are added by :func:`add_text_features`, as for
    teacher-forced tables. There are no window rows (the Lookback Lens needs the model).
    """
    folder = (root or cache_dir() / "features") / text_cache_key(scorer, dataset)
    folder.mkdir(parents=True, exist_ok=True)
    return _extract(folder, dataset, examples, lambda e: _text_rows(e, scorer), on_progress)


def _by_prompt(examples: list[LabelledExample]) -> list[LabelledExample]:
    """The examples with those of one prompt (context, question, instruction) next to each other, in order of first
    appearance: teacher forcing then prefills a shared prompt once (``DecodingEngine.start_forced``)."""
    groups, _ = groups_in_order((e.context, e.question, e.instruction) for e in examples)
    return [e for _, e in sorted(zip(groups, examples, strict=True), key=lambda pair: pair[0])]


def _extract(folder: Path, dataset: str, examples: Sequence[LabelledExample],
             make_rows: Callable[[LabelledExample], tuple[list[dict], list[dict]]],
             on_progress: Callable[[int, int], None] | None,
             run_many: Callable[[list[LabelledExample]], Iterable[tuple[LabelledExample, Outcome]]] | None = None,
             ) -> FeatureTables:
    """Rows of every example not yet in ``folder``, written in atomic shards; then the tables of ``examples``.

    ``run_many`` computes the outcomes of many examples at once (in any order) instead of ``make_rows`` one by one.
    """
    prints = {e.id: fingerprint(e) for e in examples}
    cached = _read(folder, "examples")
    if "fingerprint" in cached.columns:  # rows cached before fingerprints existed have none and are kept
        changed = {i for i, fp in zip(cached.example_id, cached.fingerprint, strict=True)
                   if isinstance(fp, str) and i in prints and fp != prints[i]}
        if changed:
            log.warning("%s: %d examples changed since their features were cached (e.g. %s); recomputing them",
                        dataset, len(changed), sorted(changed)[0])
            _drop_examples(folder, changed)
            cached = _read(folder, "examples")
    done = set(cached.get("example_id", pd.Series(dtype=str)))
    failed_path = folder / "failed.jsonl"
    todo = _by_prompt([e for e in examples if e.id not in done])
    shard = next_shard(folder)
    buf_s, buf_w, buf_e = [], [], []
    failed: dict[str, str] = {}
    if on_progress:
        on_progress(len(examples) - len(todo), len(examples))

    def flush() -> None:
        nonlocal shard, buf_s, buf_w, buf_e
        if buf_e:  # the examples shard goes last: an example counts as done only when all its rows are on disk
            write_shard(folder, "sentences", buf_s, shard)
            write_shard(folder, "windows", buf_w, shard)
            write_shard(folder, "examples", buf_e, shard)
            shard += 1
        buf_s, buf_w, buf_e = [], [], []

    outcomes = run_many(todo) if run_many is not None else ((e, _attempt(make_rows, e)) for e in todo)
    for n, (example, outcome) in enumerate(outcomes, start=1):
        if not isinstance(outcome, str) and not outcome[0]:
            outcome = "the response produced no sentence"
        if isinstance(outcome, str):
            failed[example.id] = outcome
            log.warning("%s %s: %s", dataset, example.id, outcome)
        else:
            sentences, windows = outcome
            buf_s += sentences
            buf_w += windows
            buf_e.append({"example_id": example.id, "n_sentences": len(sentences), "fingerprint": prints[example.id]})
        if len(buf_e) >= SHARD_EXAMPLES:
            flush()
        if on_progress:
            on_progress(len(examples) - len(todo) + n, len(examples))
    flush()
    failed_path.write_text("".join(json.dumps({"id": k, "error": v}) + "\n" for k, v in failed.items()))
    rank = {e.id: i for i, e in enumerate(examples)}
    tables = []
    for table in (_read(folder, "sentences"), _read(folder, "windows")):
        if len(table):  # in the examples' order, whatever order they were extracted in
            table = table[table.example_id.isin(rank)]
            table = table.iloc[np.argsort(table.example_id.map(rank).to_numpy(), kind="stable")]
            table = table.reset_index(drop=True)
        tables.append(table)
    return FeatureTables(sentences=tables[0], windows=tables[1], failed=failed)


def _sibling(monitor: Monitor, dataset: str, root: Path, folder: Path) -> Path | None:
    """A cache folder of the same data set and features made with another alignment scorer (any version)."""
    alignment_keys = ("alignment", "alignment_version")
    mine = {k: v for k, v in cache_spec(monitor).items() if k not in alignment_keys}
    candidates = []
    for spec_file in sorted(root.glob(f"{safe_name(dataset)}-*/spec.json")):
        spec = json.loads(spec_file.read_text())
        if {k: v for k, v in spec.items() if k not in alignment_keys} == mine:
            candidates.append(spec_file.parent)
    # caches written before spec.json: the known scorers' keys without a version
    candidates += [root / cache_key(monitor, dataset, alignment=other) for other in (*plain_specs(), None)
                   if other != _current(monitor)]
    for sibling in candidates:
        if sibling != folder and sibling.is_dir() and len(_read(sibling, "examples")):
            return sibling
    return None


def derive_alignment(monitor: Monitor, dataset: str, examples: Sequence[LabelledExample], root: Path, folder: Path,
                     on_progress: Callable[[int, int], None] | None = None) -> set[str]:
    """Fill an empty cache ``folder`` from a sibling cache made with another alignment scorer.

    Every column but ``align_score`` is the same, so only the alignment is recomputed (seconds to
    minutes instead of a full teacher-forced extraction). Returns the example ids written.
    """
    mine = monitor.alignment.name if monitor.alignment else None
    sibling = _sibling(monitor, dataset, root, folder)
    if sibling is None:
        return set()
    donor = _read(sibling, "examples")
    log.info("%s: reusing the features cached in %s; recomputing align_score with %r", dataset, sibling.name, mine)
    sentences, windows = _read(sibling, "sentences"), _read(sibling, "windows")
    by_id = {e.id: e for e in examples}
    ids = [i for i in donor.example_id if i in by_id]
    done: set[str] = set()
    for shard, n in enumerate(range(0, len(ids), SHARD_EXAMPLES)):
        batch = ids[n : n + SHARD_EXAMPLES]
        rows = sentences[sentences.example_id.isin(batch)].copy()
        for ex_id, idx in rows.groupby("example_id").groups.items():
            texts = rows.loc[idx, "text"].tolist()
            rows.loc[idx, "align_score"] = _align_example(monitor.alignment, texts, by_id[ex_id])
        write_shard(folder, "sentences", rows.to_dict("records"), shard)
        write_shard(folder, "windows", windows[windows.example_id.isin(batch)].to_dict("records"), shard)
        write_shard(folder, "examples", donor[donor.example_id.isin(batch)].to_dict("records"), shard)
        done.update(batch)
        if on_progress:
            on_progress(len(done), len(examples))
    return done
