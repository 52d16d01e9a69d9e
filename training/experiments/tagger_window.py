"""Issue 12, item 4: the LSS tagger with every word read in the *same* context window (one-window support).

The shipped ``tagger`` signal lets each word take its best window, so over a long article nearly every word of a
near-copied summary finds support somewhere (docs/transfer.md: QAGS-CNNDM). Here the words' probabilities are
kept per window and a sentence takes the window whose content words are best supported on average:

* ``tagw_min_content``: the weakest content word in that window;
* ``tagw_mean_content``: the mean support of the content words in that window.

A measurement on the sample of ``tagger_feature.py`` (the first ``--per-set`` responses of each set by sha1 of the
id): sentence AUROC per set, and LOO AUROC / worst gain over ``align_score`` of the shipped recipe with and without
the one-window features. Not kept (docs/transfer.md).

    python training/experiments/tagger_window.py --out /tmp/tagger-window     # ~8 min on 2 CPU cores
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pandas as pd
import torch
from aggregator_variants import print_loo  # sibling scripts, on sys.path when this one runs
from tagger_feature import print_single, sample_args, sample_tables

import faithwatch.eval.training as training
from faithwatch.claims.lss import content_words, split_words
from faithwatch.nli.tagger import collate, encode, word_logits
from faithwatch.signals.tagger import shared_tagger

FEATURES = ("tagw_min_content", "tagw_mean_content")


def window_features(tagger, texts: list[str], context: str) -> list[dict[str, float]]:
    """One-window features of the sentences of one context."""
    out = []
    for text in texts:
        words = split_words(text) or ["."]
        content = np.array(content_words(words), dtype=bool)
        if not content.any():
            content[:] = True
        items = encode(tagger.tokenizer, words, context, tagger.meta.max_length)
        batch = collate(items, tagger.tokenizer.pad_token_id)
        with torch.inference_mode(), torch.autocast("cpu", dtype=torch.bfloat16, enabled=tagger.precision == "bf16"):
            rows = [torch.sigmoid(r.float()).numpy() for r in word_logits(tagger.model, batch, items)]
        best = max(rows, key=lambda p: p[content].mean())
        out.append({"tagw_min_content": float(best[content].min()), "tagw_mean_content": float(best[content].mean())})
    return out


def main() -> None:
    args = sample_args(__doc__, 150, "folder for the one-window features (reused)")
    tables, examples = sample_tables(args.per_set)
    contexts = {name: {e.id: e.context for e in ex} for name, ex in examples.items()}
    tagger = shared_tagger()
    for name, t in tables.items():
        path = args.out / f"{Path(name).stem}.parquet"
        if not path.exists():
            feats: list[dict] = [{} for _ in range(len(t))]
            for ex_id, idx in t.groupby("example_id").indices.items():
                rows = window_features(tagger, t.text.iloc[idx].tolist(), contexts[name][ex_id])
                for i, row in zip(idx, rows, strict=True):
                    feats[i] = row
            pd.DataFrame(feats)[list(FEATURES)].to_parquet(path)
        tables[name] = pd.concat([t, pd.read_parquet(path)], axis=1)
    print_single(tables, ("align_score", "tag_min_content", *FEATURES))
    training.FAMILIES.update(tagw=("tagw_min_content",), tagw2=FEATURES)
    training.DIRECTIONS.update({f: 1 for f in FEATURES})
    text = ("alignment", "lexical", "edits")
    print("same sample:")
    print_loo(tables, {
        "lr alignment+lexical+edits+tagger C=0.1 (shipped)": training.Recipe(families=(*text, "tagger"), C=0.1),
        "lr alignment+lexical+edits+tagw C=0.1": training.Recipe(families=(*text, "tagw"), C=0.1),
        "lr alignment+lexical+edits+tagger+tagw2 C=0.1": training.Recipe(families=(*text, "tagger", "tagw2"), C=0.1),
        "lr alignment+edits+tagw": training.Recipe(families=("alignment", "edits", "tagw")),
        "lr alignment+edits+tagger": training.Recipe(families=("alignment", "edits", "tagger")),
    })


if __name__ == "__main__":
    main()
