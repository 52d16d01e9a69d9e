"""Text-signal features of labelled sentence tables (lexical, edits, the LSS tagger), added after extraction.

Cheap signals are recomputed on every load. A signal with a model (``cached = True``, e.g. the LSS tagger: about
25 minutes for the labelled sets on 2 CPU cores) is cached per data set under a key of the signal's ``version``,
as Parquet shards of (example, its fingerprint, sentence text) rows, one batched run and one atomic write per
:data:`SHARD_EXAMPLES` examples: a re-run computes only the examples not yet cached, so an interrupted run loses
at most one shard.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from pathlib import Path

import pandas as pd

from faithwatch.data.schema import LabelledExample
from faithwatch.errors import FaithwatchError
from faithwatch.eval.features import fingerprint, next_shard, read_shards, safe_name, spec_digest, write_shard
from faithwatch.models.folders import cache_dir
from faithwatch.signals import SignalContext, build_signals, text_signals
from faithwatch.signals.base import Signal

#: examples per cache shard
SHARD_EXAMPLES = 64
_KEY = ["example_id", "fingerprint", "text"]


def add_text_features(examples: Sequence[LabelledExample], sentences: pd.DataFrame, dataset: str | None = None, *,
                      root: Path | None = None, on_progress: Callable[[str, int, int], None] | None = None,
                      signals: Sequence[Signal] | None = None) -> pd.DataFrame:
    """``sentences`` with the text-signal features added, computed from each sentence's text and context.

    With ``dataset``, the features of ``cached`` signals are read from (and written to) their cache under
    ``root`` (default: the feature cache); ``on_progress("<dataset>: <signal>", done, total)`` counts examples.
    ``signals``: the text signals to compute (default: every registered one, as the monitor builds them).
    """
    signals = build_signals(text_signals(), SignalContext()) if signals is None else list(signals)
    columns = [f for signal in signals for f in signal.feature_names]
    if sentences.empty:  # e.g. every example failed: the columns, no rows
        return sentences.reindex(columns=[*sentences.columns, *columns])
    by_id = {e.id: e for e in examples}
    groups = sentences.groupby("example_id").indices
    feats: list[dict[str, float]] = [{} for _ in range(len(sentences))]
    for signal in signals:
        if dataset is not None and getattr(signal, "cached", False):
            rows = _cached(signal, dataset, by_id, sentences, groups, root, on_progress)
        else:
            ids = sentences["example_id"]
            rows = signal.from_pairs(sentences["text"].tolist(), [by_id[e].context for e in ids],
                                     [by_id[e].question or "" for e in ids])
        for pos, row in enumerate(rows):
            feats[pos].update(row)
    added = pd.DataFrame(feats, index=sentences.index, columns=columns, dtype=float)
    return pd.concat([sentences.drop(columns=[c for c in columns if c in sentences.columns]), added], axis=1)


def text_cache_folder(signal: Signal, dataset: str, root: Path | None = None) -> Path:
    """Where ``signal``'s features of ``dataset`` are cached: changes with the signal's version and features."""
    spec = {"signal": signal.name, "version": signal.version, "features": signal.feature_names}
    if getattr(signal, "precision", None):  # bf16 only: fp32 caches keep their older keys
        spec["precision"] = signal.precision
    return (root or cache_dir() / "features") / f"{signal.name}-{safe_name(dataset)}-{spec_digest(spec)}"


def _read(folder: Path) -> pd.DataFrame:
    table = read_shards(folder, "rows", _KEY)
    return table if len(table.columns) else pd.DataFrame(columns=_KEY)


def _cached(signal: Signal, dataset: str, by_id: dict[str, LabelledExample], sentences: pd.DataFrame,
            groups: dict, root: Path | None, on_progress: Callable[[str, int, int], None] | None,
            ) -> list[dict[str, float]]:
    folder = text_cache_folder(signal, dataset, root)
    folder.mkdir(parents=True, exist_ok=True)
    prints = {ex_id: fingerprint(by_id[ex_id]) for ex_id in groups}
    keys = list(zip(sentences["example_id"], [prints[e] for e in sentences["example_id"]], sentences["text"],
                    strict=True))
    done = set(map(tuple, _read(folder)[_KEY].itertuples(index=False)))
    todo = [ex_id for ex_id, positions in groups.items() if any(keys[p] not in done for p in positions)]
    shard = next_shard(folder, "rows")
    progress = (lambda n: on_progress(f"{dataset}: {signal.name}", n, len(groups))) if on_progress else None
    if progress:
        progress(len(groups) - len(todo))
    for start in range(0, len(todo), SHARD_EXAMPLES):  # one batched run per shard of examples
        chunk = todo[start : start + SHARD_EXAMPLES]
        pairs = [(ex_id, text) for ex_id in chunk for text in dict.fromkeys(sentences["text"].iloc[groups[ex_id]])]
        rows = signal.from_pairs([t for _, t in pairs], [by_id[e].context for e, _ in pairs],
                                 [by_id[e].question or "" for e, _ in pairs])
        write_shard(folder, "rows", [{"example_id": e, "fingerprint": prints[e], "text": t, **row}
                                     for (e, t), row in zip(pairs, rows, strict=True)], shard)
        shard += 1
        if progress:
            progress(len(groups) - len(todo) + start + len(chunk))
    found = pd.DataFrame(keys, columns=_KEY).merge(_read(folder), on=_KEY, how="left")
    if found[signal.feature_names].isna().any().any():  # never a silent NaN: a row the cache should hold is missing
        raise FaithwatchError(f"{folder}: {signal.name} features missing for some sentences; delete the folder and "
                              "re-run")
    return found[signal.feature_names].to_dict("records")
