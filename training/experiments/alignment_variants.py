"""Issue 12, item 4: do sub-sentence claims or merged neighbour windows make ``align_score`` transfer better?

A scratch measurement (docs/transfer.md, "Cheap alignment variants"): the first ``--per-set`` responses of each
labelled set (ordered by sha1 of the id) are split into sentences as the feature cache splits them; each sentence,
each of its clauses (``claims.spans.subsentence_spans``) and each sentence against 128-token windows is scored with
the shipped alignment parts. Prints sentence AUROC per set and LOO logistic regression for the combinations.

    python training/experiments/alignment_variants.py --out /tmp/variants    # ~45 min on 2 CPU cores
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pandas as pd
from sklearn.linear_model import LogisticRegression
from sklearn.metrics import roc_auc_score
from sklearn.preprocessing import RobustScaler
from tagger_feature import sample_args, sha1_first

from faithwatch.alignment import get_scorer
from faithwatch.alignment.minilm import MiniLMNLIScorer
from faithwatch.claims.spans import subsentence_spans
from faithwatch.data.loaders import load_dataset
from faithwatch.eval.labels import label_sentences
from faithwatch.eval.training import sample_weights
from faithwatch.sentences import SentenceTracker

SETS = ("faithbench", "qags-cnndm", "begin-dev", "training/data/ragtruth-qa.jsonl",
        "training/data/ragtruth-summary.jsonl", "training/data/q2-wow.jsonl")
PARTS = ("nli-minilm", "lexical", "embedding")


def score_set(name: str, per_set: int, scorer, wide: MiniLMNLIScorer) -> pd.DataFrame:
    everything = load_dataset(name, None, questionable="exclude")
    order = {i: k for k, i in enumerate(sha1_first([e.id for e in everything], per_set))}
    examples = sorted((e for e in everything if e.id in order), key=lambda e: order[e.id])
    rows, pairs, owner = [], [], []
    for e in examples:
        for s in SentenceTracker.split_text(e.response):
            clauses = [s.text[a:b] for a, b in subsentence_spans(s.text)]
            rows.append({"example_id": e.id, "sentence_index": s.index, "text": s.text, "start": s.start,
                         "end": s.end, "n_clauses": len(clauses), "context": e.context})
            pairs.append((s.text, e.context))
            owner.append((len(rows) - 1, "sent"))
            for c in clauses if len(clauses) > 1 else []:
                pairs.append((c, e.context))
                owner.append((len(rows) - 1, "clause"))
    for part in scorer.scorers:
        scores = part.score_pairs(pairs)
        for (i, kind), v in zip(owner, scores, strict=True):
            key = f"{part.name}_{kind}"
            rows[i][key] = v if kind == "sent" else min(rows[i].get(key, 1.0), v)
    df = pd.DataFrame(rows)
    for part in PARTS:
        clause = df[f"{part}_clause"] if f"{part}_clause" in df else pd.Series(np.nan, index=df.index)
        df[f"{part}_clause"] = clause.fillna(df[f"{part}_sent"])
    df = label_sentences(examples, df)
    df["nli128"] = wide.score_pairs(list(zip(df["text"], df["context"], strict=True)))
    return df.drop(columns="context")


def main() -> None:
    args = sample_args(__doc__, 200, "folder for the scored sentences (reused)")
    scorer, wide = get_scorer("nli-minilm+lexical+embedding"), MiniLMNLIScorer(chunk_tokens=128)
    tables = {}
    for name in SETS:
        short = Path(name).stem
        path = args.out / f"{short}.parquet"
        if not path.exists():
            score_set(name, args.per_set, scorer, wide).to_parquet(path)
        d = pd.read_parquet(path)
        sent = d[[f"{p}_sent" for p in PARTS]].mean(axis=1)
        tables[short] = d.assign(
            dataset=short, align=sent, align_clause=d[[f"{p}_clause" for p in PARTS]].mean(axis=1),
            align_wide_max=(np.maximum(d["nli-minilm_sent"], d["nli128"]) + d["lexical_sent"]
                            + d["embedding_sent"]) / 3,
            align_wide_mean=((d["nli-minilm_sent"] + d["nli128"]) / 2 + d["lexical_sent"] + d["embedding_sent"]) / 3)
    cols = ["align", "align_clause", "align_wide_max", "align_wide_mean"]
    print("sentence AUROC (unfaithful):", " ".join(cols))
    for short, d in tables.items():
        print(f"  {short:<18}", " ".join(f"{roc_auc_score(d.label.astype(int), -d[c]):.3f}" for c in cols))
    pooled = pd.concat(tables.values())
    for feats in (["align"], ["align", "align_clause"], ["align", "align_wide_max"]):
        res = []
        for short in tables:
            tr, te = pooled[pooled.dataset != short], pooled[pooled.dataset == short]
            weight = sample_weights(tr, "dataset")  # every set the same weight, split between its classes
            scale = RobustScaler().fit(tr[feats])
            model = LogisticRegression().fit(scale.transform(tr[feats]), tr.label.astype(int), sample_weight=weight)
            res.append(roc_auc_score(te.label.astype(int), model.predict_proba(scale.transform(te[feats]))[:, 1]))
        print(f"LOO LR {'+'.join(feats):<22}", " ".join(f"{r:.3f}" for r in res), f"mean {np.mean(res):.3f}")


if __name__ == "__main__":
    main()
