"""Issue 12: do response-relative features transfer? (docs/transfer.md, "Aggregator variants"; not kept)

A sentence's ``align_score``, ``tag_min_content`` and ``lex_content`` minus the median (``*_rel``) or the maximum
(``*_relmax``) of its response's sentences (0 for a one-sentence response), and the response's lowest
``align_score``: a domain that moves every score alike leaves them unchanged. LOO AUROC next to the shipped recipe,
on the text-only cache that ``faithwatch eval --text-only`` builds.

    python training/experiments/relative_features.py     # ~5 min once the text and tagger caches exist
"""

from __future__ import annotations

import numpy as np
import pandas as pd
from aggregator_variants import AUGMENT, SETS, print_loo  # a sibling script, on sys.path when this one runs

import faithwatch.eval.training as training
from faithwatch.eval.pipeline import extraction_monitor, load_labelled

RELATIVE = ("align_score", "tag_min_content", "lex_content")


def with_relative(t: pd.DataFrame) -> pd.DataFrame:
    """The table with the relative columns (see the module doc)."""
    t = t.reset_index(drop=True)
    groups = t.groupby("example_id")
    several = groups["align_score"].transform("size") > 1
    for c in RELATIVE:
        t[c + "_rel"] = np.where(several, t[c] - groups[c].transform("median"), 0.0)
        t[c + "_relmax"] = np.where(several, t[c] - groups[c].transform("max"), 0.0)
    t["resp_min_align"] = groups["align_score"].transform("min")
    return t


def main() -> None:
    training.FAMILIES.update(
        rel=("align_score_rel",), relmax=("align_score_relmax",), tagrel=("tag_min_content_rel",),
        allrel=tuple(c + "_rel" for c in RELATIVE), respmin=("resp_min_align",))
    training.DIRECTIONS.update({c + s: 1 for c in RELATIVE for s in ("_rel", "_relmax")}, resp_min_align=1)
    monitor = extraction_monitor(None, "nli-minilm+lexical+embedding")
    data = load_labelled(list(SETS), monitor, text_only=True, augment=list(AUGMENT))
    tables = {n: with_relative(d.sentences) for n, d in data.items()}
    base = ("alignment", "lexical", "edits", "tagger")
    recipes = {name: training.Recipe(families=(*base, *extra), C=0.1) for name, extra in {
        "shipped": (), "+rel": ("rel",), "+relmax": ("relmax",), "+tagrel": ("tagrel",), "+allrel": ("allrel",),
        "+respmin": ("respmin",)}.items()}
    recipes["xgb +allrel"] = training.Recipe(kind="xgb", families=(*base, "allrel"))
    print_loo(tables, recipes)


if __name__ == "__main__":
    main()
