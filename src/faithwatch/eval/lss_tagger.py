"""Training data and cross-validation of the LSS tagger on lss-dev.

Every figure of a tagger trained on lss-dev and measured on lss-dev is in-sample; the honest figure is
:func:`cross_validate`'s: each pair is scored by a model trained on the other folds (pairs, not annotations,
are dealt to folds, so a pair's two annotations never straddle a split). Finished folds are stored in
``<cache>/fold-K-<fingerprint>.jsonl`` and reused, so an interrupted run resumes at the next fold.
"""

from __future__ import annotations

import json
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

from faithwatch.claims.lss import TAGGER_ALGORITHM, split_words
from faithwatch.claims.rouge import align_to_claim, lss_rouge_l
from faithwatch.nli.tagger import word_probabilities
from faithwatch.nli.tagger_train import TaggerConfig, TaggerExample, fit, folds_of, soft_labels
from faithwatch.store import read_lines

FoldProgress = Callable[[int, int, int, int, float], None]  # (fold, folds, step, steps, loss)


def examples_from_lss_dev(df: pd.DataFrame) -> list[TaggerExample]:
    """One example per (statement, reference) pair of :func:`faithwatch.eval.lss.load_lss_dev` rows."""
    out = []
    for pair_id, rows in df.groupby("pair_id", sort=True):
        first = rows.iloc[0]
        words = split_words(first.statement)
        kept = [align_to_claim(words, h) if h else () for h in rows.human_lss]
        out.append(TaggerExample(str(pair_id), tuple(words), first.reference, soft_labels(words, kept)))
    return out


def result_rows(examples: list[TaggerExample], probs: list[np.ndarray], threshold: float, version: str,
                seconds: float) -> list[dict[str, Any]]:
    """Rows in :func:`faithwatch.eval.lss.score_pairs`'s format (the claim support is the mean word probability)."""
    rows = []
    for e, p in zip(examples, probs, strict=True):
        kept = [i for i, q in enumerate(p) if q >= threshold]
        text = " ".join(e.words[i] for i in kept)
        rows.append({
            "pair_id": e.pair_id, "lss": text, "kept_indices": kept, "lss_length": len(kept),
            "claim_length": len(e.words), "lss_score": len(kept) / len(e.words),
            "lss_rouge_l": lss_rouge_l(" ".join(e.words), text).f1, "claim_support": float(np.mean(p)),
            "lss_support": float(min(p[kept])) if kept else None, "evaluations": 1, "truncated_search": False,
            "seconds": seconds / max(1, len(examples)), "word_support": [round(float(q), 6) for q in p],
            "algorithm": TAGGER_ALGORITHM, "scorer": version,
        })
    return rows


def cross_validate(cfg: TaggerConfig, examples: list[TaggerExample], folds: int, cache: str | Path,
                   threshold: float = 0.5, progress: FoldProgress | None = None) -> pd.DataFrame:
    """Out-of-fold LSS results of every pair (``folds`` >= 2), one fold model at a time; resumable."""
    if folds < 2:
        raise ValueError(f"cross-validation needs at least 2 folds, got {folds}")
    cache_dir = Path(cache)
    cache_dir.mkdir(parents=True, exist_ok=True)
    fingerprint = cfg.fingerprint(examples)
    assignment = folds_of(examples, folds, cfg.seed)
    rows: list[dict[str, Any]] = []
    for k in range(folds):
        file = cache_dir / f"fold-{k}-of-{folds}-{fingerprint}.jsonl"
        test = [e for e, f in zip(examples, assignment, strict=True) if f == k]
        if file.is_file():
            done = [json.loads(line) for line in read_lines(file) if line.strip()]
            if sorted(r["pair_id"] for r in done) == sorted(e.pair_id for e in test):
                rows += done
                continue
        train = [e for e, f in zip(examples, assignment, strict=True) if f != k]
        start = time.time()
        on_step = (lambda s, n, loss, k=k: progress(k, folds, s, n, loss)) if progress else None
        model, tokenizer = fit(cfg, train, on_step)
        probs = word_probabilities(model, tokenizer, [e.words for e in test], [e.reference for e in test],
                                   cfg.max_length)
        done = result_rows(test, probs, threshold, f"lss-tagger (fold {k} of {folds})", time.time() - start)
        tmp = file.with_suffix(".tmp")
        tmp.write_text("".join(json.dumps(r) + "\n" for r in done))
        tmp.replace(file)
        rows += done
    return pd.DataFrame(rows)


def oof_summary(tables: dict[str, pd.DataFrame], name: str, folds: int) -> dict[str, Any]:
    """The out-of-fold figures that the artifact records, from :func:`faithwatch.eval.lss.evaluate_lss_dev`'s tables
    of the results named ``name``."""
    corr = tables["correlation with the human 1-5 rating"]
    agree = tables["agreement with the human LSS"]
    keys = ("pearson", "pearson_low", "pearson_high", "spearman", "spearman_low", "spearman_high", "n")
    words = agree[agree.method == f"found LSS ({name})"].iloc[0]
    return {"folds": folds,
            "correlation": {r["method"]: {k: r[k] for k in keys} for r in corr[corr.scorer == name].to_dict("records")},
            "word_f1": float(words["word F1"]), "mean_lss_score": float(words["mean LSS score"])}
