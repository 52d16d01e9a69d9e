"""Issue 12: two monotone reshapings of the tagger's evidence, measured LOO (scratch).

The shipped recipe adds its features' robust-scaled values, so a sentence is flagged when their *sum* is low.
``tag_min_content`` (the weakest content word's support probability) piles up near 0 and 1, and its useful
difference lies between 0.001 and 0.1, which a linear term on the probability barely sees. Two variants:

* ``logit``: ``tag_min_content`` replaced by its log-odds (clipped to [1e-4, 1 - 1e-4]);
* ``min``: one more feature, ``min(align_score, tag_min_content)`` (+1: higher = faithful), an AND of the two
  kinds of support that a sum cannot express.

Rule, committed before the first run: a variant replaces the shipped recipe only if, LOO over the six sets,
its mean AUROC rises by at least 0.003, no set falls by more than 0.01, its worst gain over ``align_score`` is
not lower, and its mean AUROC over the five never-seen sets (trained on all six) is not lower; then the blatant
suite must still meet its targets.

    python training/experiments/combo_features.py      # from the repo root, PYTHONPATH=training/experiments
"""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path

import numpy as np
import pandas as pd
from aggregator_variants import print_loo, shipped_recipe, with_extra_family
from faith_tune_loo import short, tables_and_data
from nli_ensemble import NEVER_SEEN
from sklearn.metrics import roc_auc_score

import faithwatch.eval.training as training

ROOT = Path(__file__).resolve().parents[2]


def logit(t: pd.DataFrame) -> pd.DataFrame:
    p = t.tag_min_content.clip(1e-4, 1 - 1e-4)
    return t.assign(tag_min_content=np.log(p / (1 - p)))


def with_min(t: pd.DataFrame) -> pd.DataFrame:
    return t.assign(align_tag_min=np.minimum(t.align_score, t.tag_min_content))


def shaped_tables(shape) -> tuple[dict, dict]:
    """Every cached table through ``shape(table, {example id: context})``: all of them, and the six sets with the
    augmentation set alone (the never-seen sets left out)."""
    every, data, _ = tables_and_data(NEVER_SEEN)
    every = {n: shape(t, {e.id: e.context for e in data[n].examples}) for n, t in every.items()}
    measured = {short(n) for n in NEVER_SEEN}
    return every, {n: t for n, t in every.items() if n not in measured}


def shaped_diagnostic(shape) -> pd.DataFrame:
    """The diagnostic pairs of ``response_edits.py`` (its cached features) through ``shape``."""
    from response_edits import OUT, diagnostic_pairs

    from faithwatch.data.loaders import load_dataset
    from faithwatch.eval.pipeline import extraction_monitor, load_labelled

    examples = load_dataset(str(OUT), None)
    monitor = extraction_monitor(None, "nli-minilm+lexical+embedding")
    t = load_labelled([str(OUT)], monitor, text_only=True)[OUT.stem].sentences
    return diagnostic_pairs(shape(t.reset_index(drop=True), {e.id: e.context for e in examples}))


def never_seen(tables: dict, extra: dict, recipe: training.Recipe, shape):
    """AUROC on each ``extra`` set of ``recipe`` trained on every one of ``tables`` (all through ``shape``), and
    the detector."""
    train = pd.concat([shape(t) for t in tables.values()], ignore_index=True)
    det = training.fit_syncheck(train, recipe, model_id="text-only", calibrate=False)
    return [roc_auc_score(t.label.astype(int), -training.raw_scores(det, shape(t))) for t in extra.values()], det


def report_never_seen(tables: dict, extra: dict, recipes: dict[str, training.Recipe]) -> dict:
    """Print each recipe's AUROC on every ``extra`` set and their mean (trained on all ``tables``); the detectors."""
    dets = {}
    for label, recipe in recipes.items():
        aurocs, dets[label] = never_seen(tables, extra, recipe, lambda t: t)
        print(f"never seen, {label:<12}", " ".join(f"{a:.3f}" for a in aurocs), f"mean {np.mean(aurocs):.4f}")
    return dets


def main() -> None:
    measured = {short(n) for n in NEVER_SEEN}
    every, _, _ = tables_and_data(NEVER_SEEN)
    tables = {n: t for n, t in every.items() if n not in measured}
    extra = {n: every[short(n)] for n in NEVER_SEEN}
    shipped = shipped_recipe()
    plus_min = with_extra_family(replace(shipped), "align-tag-min", "align_tag_min", 1)
    variants = {"shipped": (shipped, lambda t: t), "logit": (shipped, logit), "min": (plus_min, with_min)}
    for label, (recipe, shape) in variants.items():
        print(f"\n{label}")
        print_loo({n: shape(t) for n, t in tables.items()}, {label: recipe})
        aurocs, _ = never_seen(tables, extra, recipe, shape)
        print("  never seen:", " ".join(f"{a:.3f}" for a in aurocs), f"mean {np.mean(aurocs):.4f}", flush=True)


if __name__ == "__main__":
    main()
