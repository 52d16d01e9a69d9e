"""Issue 12: products of existing features (tag_min_content x edit_match, align_score x edit_match) as detector
features, checked on the three sets no choice has seen (docs/transfer.md, "Products of features").

Trains the shipped recipe, and the same with one product added (direction +1), on the six labelled sets and the
augmentation set (the text-only caches), then scores RAGTruth data-to-text and BEGIN's CMU-DoG and Topical-Chat dev
parts: sentence AUROC, response AUROC (the response's lowest sentence score), balanced accuracy at the recipe's own
threshold; and the blatant suite. The rule it checks is in commit 978623d.

    python training/experiments/product_features.py     # ~3 min once the caches of all nine sets exist
"""

from __future__ import annotations

import pandas as pd
from aggregator_variants import AUGMENT, SETS  # sibling scripts, on sys.path when this one runs
from recipe_targets import suite_table
from sklearn.metrics import roc_auc_score

import faithwatch.eval.training as tr
from faithwatch.detectors.calibration import weighted_balanced_accuracy
from faithwatch.eval.pipeline import extraction_monitor, load_labelled

NEVER_SEEN = ("training/data/ragtruth-data2txt.jsonl", "training/data/begin-dev-cmu.tsv",
              "training/data/begin-dev-tc.tsv")
PRODUCTS = {"tag_x_match": ("tag_min_content", "edit_match"), "align_x_match": ("align_score", "edit_match")}
SHIPPED = ("alignment", "lexical", "edits", "tagger")


def with_products(table: pd.DataFrame) -> pd.DataFrame:
    return table.assign(**{name: table[a] * table[b] for name, (a, b) in PRODUCTS.items()})


def main() -> None:
    monitor = extraction_monitor(None, "nli-minilm+lexical+embedding")
    train = load_labelled(list(SETS), monitor, text_only=True, augment=list(AUGMENT))
    rows = pd.concat([with_products(d.sentences) for d in train.values()], ignore_index=True)
    held = load_labelled(list(NEVER_SEEN), monitor, text_only=True)
    suite = with_products(suite_table(monitor.alignment))
    tr.DIRECTIONS.update(dict.fromkeys(PRODUCTS, 1))
    for name in ("shipped", *PRODUCTS):
        families = SHIPPED
        if name != "shipped":
            tr.FAMILIES["product"] = (name,)
            families = (*SHIPPED, "product")
        recipe = tr.Recipe(families=families, C=0.1, pooling="averaged", centering="dataset")
        det = tr.fit_syncheck(rows, recipe, model_id="text-only")
        out = []
        for set_name, d in held.items():
            t = with_products(d.sentences[d.sentences.label.notna()].reset_index(drop=True))
            p = tr.syncheck_scores(det, t)
            y = t.label.to_numpy().astype(int) == 1
            every = with_products(d.all_sentences)
            every = every.assign(p=tr.syncheck_scores(det, every))
            resp = every.groupby("example_id").agg(p=("p", "min"), label=("response_label", "first")).dropna()
            out.append(f"{set_name.split('/')[-1]}: sentence {roc_auc_score(y, -p):.4f}, response "
                       f"{roc_auc_score(resp.label.astype(int), -resp.p):.4f}, BA at its threshold "
                       f"{weighted_balanced_accuracy(p, y, det.threshold):.4f}")
        flagged = tr.syncheck_scores(det, suite) < det.threshold
        print(f"{name} (threshold {det.threshold:.4f})\n  " + "\n  ".join(out)
              + f"\n  blatant: errors flagged {flagged[suite.error].mean():.3f}, supported passed "
              f"{1 - flagged[~suite.error].mean():.3f}", flush=True)


if __name__ == "__main__":
    main()
