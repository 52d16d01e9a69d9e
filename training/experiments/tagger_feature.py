"""Issue 12, item 4: does the LSS tagger's word-level support make the detector transfer better?

A measurement (docs/transfer.md) on the text-only tables, which carry the ``tagger`` signal's features
(``tag_mean``: mean word probability, ``tag_lss``: share of words at or above 0.5, the LSS score,
``tag_min_content``: the weakest content word; each word read against the whole context in overlapping windows,
taking its best window). With ``--per-set N``, only the first N responses of each labelled set and of the
augmentation set (ordered by sha1 of the id) are used. Prints sentence AUROC per set and LOO AUROC (each set
predicted by the recipe trained on the others) of the previous default recipe with and without the tagger features.

    python training/experiments/tagger_feature.py --per-set 150     # a minute once the caches exist
    python training/experiments/tagger_feature.py                   # every sentence
"""

from __future__ import annotations

import argparse
import hashlib
from pathlib import Path

import pandas as pd
from aggregator_variants import AUGMENT, SETS, print_loo  # a sibling script, on sys.path when this one runs
from sklearn.metrics import roc_auc_score

import faithwatch.eval.training as training
from faithwatch.eval.pipeline import extraction_monitor, load_labelled
from faithwatch.eval.transfer import held_out_names
from faithwatch.signals.tagger import TAGGER_FEATURES


def sample_args(doc: str | None, per_set: int, out_help: str) -> argparse.Namespace:
    """The experiments' common arguments (``--per-set``, ``--out``), with the ``--out`` folder created."""
    parser = argparse.ArgumentParser(description=doc, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--per-set", type=int, default=per_set)
    parser.add_argument("--out", type=Path, required=True, help=out_help)
    args = parser.parse_args()
    args.out.mkdir(parents=True, exist_ok=True)
    return args


def sha1_first(ids, n: int | None) -> list[str]:
    """The first ``n`` of ``ids`` ordered by sha1 (all with ``None``): the fixed sample of these experiments."""
    return sorted(set(ids), key=lambda i: hashlib.sha1(i.encode()).hexdigest())[:n]


def sample_tables(per_set: int | None, sets: tuple[str, ...] = SETS, augment: tuple[str, ...] = AUGMENT,
                  ) -> tuple[dict[str, pd.DataFrame], dict[str, list]]:
    """The labelled text-only tables (the first ``per_set`` responses of each set by sha1 of the id, or all), and
    each set's examples."""
    monitor = extraction_monitor(None, "nli-minilm+lexical+embedding")
    data = load_labelled(list(sets), monitor, text_only=True, augment=list(augment))
    tables, examples = {}, {}
    for name, d in data.items():
        keep = sha1_first([e.id for e in d.examples], per_set)
        tables[name] = d.sentences[d.sentences.example_id.isin(set(keep))].reset_index(drop=True)
        examples[name] = d.examples
    return tables, examples


def print_single(tables: dict[str, pd.DataFrame], features: tuple[str, ...]) -> None:
    """Sentence AUROC (for "unfaithful", higher feature = more faithful) of each feature on each held-out set."""
    print("sentence AUROC (unfaithful):", *features)
    for n in held_out_names(tables):
        t = tables[n]
        print(f"  {n:<18}", " ".join(f"{roc_auc_score(t.label, -t[c]):.3f}" for c in features))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--per-set", type=int, default=None, help="responses per set (default: all)")
    tables, _ = sample_tables(parser.parse_args().per_set)
    print_single(tables, ("align_score", *TAGGER_FEATURES))
    training.FAMILIES.update(tagger_all=TAGGER_FEATURES, tag_mean=("tag_mean",))
    training.DIRECTIONS.update({f: 1 for f in TAGGER_FEATURES})
    text = ("alignment", "lexical", "edits")
    print_loo(tables, {
        "lr alignment+lexical+edits (previous default)": training.Recipe(families=text),
        "lr alignment+lexical+edits+tag_mean": training.Recipe(families=(*text, "tag_mean")),
        "lr alignment+lexical+edits+tagger_all": training.Recipe(families=(*text, "tagger_all")),
        "lr alignment+lexical+edits+tagger C=0.1 (shipped)": training.Recipe(families=(*text, "tagger"), C=0.1),
        "lr alignment+tagger": training.Recipe(families=("alignment", "tagger")),
    })


if __name__ == "__main__":
    main()
