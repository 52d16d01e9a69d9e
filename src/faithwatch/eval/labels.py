"""Joining cached sentence features with labels from the loaders."""

from __future__ import annotations

from collections.abc import Sequence

import pandas as pd

from faithwatch.data.schema import LabelledExample, sentence_label


def label_sentences(
    examples: Sequence[LabelledExample], sentences: pd.DataFrame, min_unfaithful: int = 1,
    keep_unlabelled: bool = False,
) -> pd.DataFrame:
    """Add ``label`` (1 unfaithful, 0 faithful), ``dataset``, ``source_model`` and ``response_label``.

    Span-labelled examples label each sentence by overlap (see :func:`sentence_label`). Examples with only a
    response label: every sentence of a faithful response is faithful; the single sentence of an unfaithful
    one-sentence response is unfaithful; sentences of longer unfaithful responses are left out (which one is
    wrong is unknown). Rows without a label are dropped (``df.attrs["dropped"]`` says how many) unless
    ``keep_unlabelled`` (then ``label`` is None there; response-level evaluation needs every sentence).
    """
    if sentences.empty:  # e.g. every response failed: no column to group by
        out = sentences.assign(label=pd.Series(dtype=object), dataset=pd.Series(dtype=str),
                               source_model=pd.Series(dtype=str), response_label=pd.Series(dtype=object))
        out.attrs["dropped"] = 0
        return out
    by_id = {e.id: e for e in examples}
    n_sent = sentences.groupby("example_id").size()
    labels, datasets, sources, responses = [], [], [], []
    for row in sentences.itertuples(index=False):
        ex = by_id[row.example_id]
        if ex.spans or ex.default_label is not None:
            label = sentence_label(ex, row.start, row.end, min_unfaithful)
        elif ex.response_label == 0:
            label = 0
        elif ex.response_label == 1 and n_sent[row.example_id] == 1:
            label = 1
        else:
            label = None
        labels.append(label)
        datasets.append(ex.dataset)
        sources.append(ex.source_model or "unknown")
        responses.append(ex.response_label)
    out = sentences.assign(label=labels, dataset=datasets, source_model=sources, response_label=responses)
    if keep_unlabelled:
        return out
    kept = out[out.label.notna()].copy()
    kept["label"] = kept.label.astype(int)
    kept.attrs["dropped"] = len(out) - len(kept)
    return kept.reset_index(drop=True)


def label_windows(examples: Sequence[LabelledExample], windows: pd.DataFrame) -> pd.DataFrame:
    """Windows (Lookback Lens sliding-window mode): 1 if the window overlaps unfaithful content (paper 003)."""
    if windows.empty:  # text-only tables have no windows
        return windows.assign(label=pd.Series(dtype=int), dataset=pd.Series(dtype=str))
    by_id = {e.id: e for e in examples}
    labels = []
    for row in windows.itertuples(index=False):
        ex = by_id[row.example_id]
        labels.append(sentence_label(ex, row.start, row.end) if (ex.spans or ex.default_label is not None) else None)
    out = windows.assign(label=labels, dataset=[by_id[i].dataset for i in windows.example_id])
    out = out[out.label.notna()].copy()
    out["label"] = out.label.astype(int)
    return out.reset_index(drop=True)
