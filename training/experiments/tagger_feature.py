"""Issue 12, item 4: does the LSS tagger's word-level support make the detector transfer better?

A scratch measurement (docs/transfer.md): the first ``--per-set`` responses of each labelled set and of the
augmentation set (ordered by sha1 of the id) keep their cached text-only features; each sentence is read by the
shipped LSS tagger against its whole context (overlapping windows, each word taking its best window), giving
``tag_mean`` (mean word probability), ``tag_lss`` (share of words at or above 0.5: the LSS score) and
``tag_min_content`` (the weakest content word). Prints sentence AUROC per set and LOO AUROC (each set predicted by
the recipe trained on the others) of the shipped recipe with and without the tagger family, on the same sample.

    python training/experiments/tagger_feature.py --out /tmp/tagger-feature   # ~6 min on 2 CPU cores (cache built)
"""

from __future__ import annotations

import argparse
import hashlib
from pathlib import Path

import numpy as np
import pandas as pd
from aggregator_variants import AUGMENT, SETS, print_loo  # a sibling script, on sys.path when this one runs
from sklearn.metrics import roc_auc_score

import faithwatch.eval.training as training
from faithwatch.claims.lss import content_words, split_words
from faithwatch.eval.pipeline import extraction_monitor, load_labelled
from faithwatch.eval.transfer import held_out_names
from faithwatch.nli.tagger import load_tagger

FEATURES = ("tag_mean", "tag_lss", "tag_min_content")


def tagged(table: pd.DataFrame, contexts: dict[str, str], tagger) -> pd.DataFrame:
    words = [split_words(t) or ["."] for t in table["text"]]
    probs = tagger.word_probabilities(words, [contexts[e] for e in table["example_id"]])
    content = [np.array(content_words(w)) for w in words]
    return table.assign(
        tag_mean=[float(p.mean()) for p in probs],
        tag_lss=[float((p >= 0.5).mean()) for p in probs],
        tag_min_content=[float(p[c].min()) if c.any() else float(p.min()) for p, c in zip(probs, content,
                                                                                           strict=True)])


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--per-set", type=int, default=150)
    parser.add_argument("--out", type=Path, required=True, help="folder for the tagged sentences (reused)")
    args = parser.parse_args()
    args.out.mkdir(parents=True, exist_ok=True)
    monitor = extraction_monitor(None, "nli-minilm+lexical+embedding")
    data = load_labelled(list(SETS), monitor, text_only=True, augment=list(AUGMENT))
    tagger = None
    tables = {}
    for name, d in data.items():
        path = args.out / f"{Path(name).stem}.parquet"
        if not path.exists():
            keep = sorted({e.id for e in d.examples}, key=lambda i: hashlib.sha1(i.encode()).hexdigest())
            keep = set(keep[: args.per_set])
            t = d.sentences[d.sentences.example_id.isin(keep)].reset_index(drop=True)
            tagger = tagger or load_tagger()
            tagged(t, {e.id: e.context for e in d.examples}, tagger).to_parquet(path)
            print(f"{name}: {len(t)} sentences tagged", flush=True)
        tables[name] = pd.read_parquet(path)
    held = held_out_names(tables)
    print("sentence AUROC (unfaithful):", "align_score", *FEATURES)
    for n in held:
        t = tables[n]
        print(f"  {Path(n).stem:<18}", " ".join(f"{roc_auc_score(t.label, -t[c]):.3f}"
                                                for c in ("align_score", *FEATURES)))
    training.FAMILIES.update(tagger=FEATURES, tag_mean=("tag_mean",))
    training.DIRECTIONS.update({f: 1 for f in FEATURES})
    print("same sample:")
    print_loo(tables, {
        "lr alignment+lexical+edits (shipped)": training.Recipe(families=("alignment", "lexical", "edits")),
        "lr alignment+lexical+edits+tag_mean": training.Recipe(families=("alignment", "lexical", "edits", "tag_mean")),
        "lr alignment+lexical+edits+tagger": training.Recipe(families=("alignment", "lexical", "edits", "tagger")),
        "lr alignment+tagger": training.Recipe(families=("alignment", "tagger")),
    })

if __name__ == "__main__":
    main()
