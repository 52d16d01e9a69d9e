"""Issue 12, transfer: should the LSS tagger, too, read what the question asks as given? (scratch)

Lexical scorer version 6 counts the words of what the question asks as support (``faithwatch.text.
question_support``). The tagger (``faithwatch.signals.tagger``: per-word support probabilities of the sentence
against the context; ``tag_min_content`` is its weakest content word) still reads the context alone, so in "The
main ingredient of tofu is soybeans." the words "main ingredient" stay unsupported for it. This script re-tags
every sentence whose example's question asks something, with what it asks appended to the context (as the lexical
scorer reads it), and prints LOO AUROC of the shipped recipe with the tagger's features so computed (the same folds
and caches as ``faithwatch eval --text-only --transfer`` otherwise). The re-tagged features are cached in
``/tmp/tagger-question.parquet`` (the first run tags about 6,000 sentences: about 10 min on 2 CPU cores).

**The rule, fixed before the first run:** worth building (a question input for the tagger, a tagger version bump)
only if the mean LOO AUROC does not fall, no set falls by more than 0.005, and the worst-case gains over
``align_score`` and over the best single signal (the issue's criterion; each computed with the variant's own
single signals) do not fall.

    python training/experiments/tagger_question.py
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pandas as pd

# sibling scripts, on sys.path when this one runs
from aggregator_variants import print_loo, shipped_recipe
from faith_tune_loo import short, tables_and_data
from sklearn.metrics import roc_auc_score

from faithwatch.eval.transfer import held_out_names
from faithwatch.signals.tagger import TAGGER_FEATURES, TaggerSignal
from faithwatch.text import question_support

ROOT = Path(__file__).resolve().parents[2]
CACHE = Path("/tmp/tagger-question.parquet")
SINGLES = ("align_score", "novel_content", "tag_min_content", "lex_content", "lex_bigrams")


def retag(tables: dict[str, pd.DataFrame], data: dict) -> pd.DataFrame:
    """Tagger features of every (set, row) whose question asks something, with it appended to the context."""
    if CACHE.exists():
        return pd.read_parquet(CACHE)
    signal = TaggerSignal()
    rows = []
    for name, t in tables.items():
        examples = {e.id: e for e in data[name].examples}
        todo = [(i, text, f"{examples[ex].context}\n{given}") for i, (text, ex) in enumerate(zip(t.text, t.example_id,
                strict=True)) if (given := question_support(examples[ex].question or ""))]
        print(f"{short(name)}: re-tagging {len(todo)} of {len(t)} sentences", flush=True)
        for start in range(0, len(todo), 256):
            chunk = todo[start : start + 256]
            feats = signal.from_pairs([c[1] for c in chunk], [c[2] for c in chunk])
            rows += [{"set": name, "row": i, **f} for (i, _, _), f in zip(chunk, feats, strict=True)]
    out = pd.DataFrame(rows)
    out.to_parquet(CACHE)
    return out


def best_single(t: pd.DataFrame) -> tuple[str, float]:
    """The best single signal on a set (higher = faithful for every one of SINGLES except novel_content)."""
    aurocs = {c: roc_auc_score(t.label, (t[c] if c == "novel_content" else -t[c])) for c in SINGLES}
    name = max(aurocs, key=aurocs.get)
    return name, aurocs[name]


def main() -> None:
    tables, data, _ = tables_and_data()
    new = retag(tables, data)
    variant = {}
    for name, t in tables.items():
        t = t.copy()
        mine = new[new.set == name]
        if len(mine):
            t.loc[mine.row.to_numpy(), list(TAGGER_FEATURES)] = mine[list(TAGGER_FEATURES)].to_numpy()
        variant[name] = t
    shipped = shipped_recipe()
    print_loo(tables, {"shipped recipe": shipped})
    print_loo(variant, {"shipped recipe, tagger reads the question": shipped})
    for label, tabs in (("shipped", tables), ("variant", variant)):
        print(label, "best single:", {short(n): (b[0], round(b[1], 3)) for n, t in tabs.items()
                                      if n in held_out_names(tabs) for b in [best_single(t)]})
    print("mean |change| of tag_min_content where re-tagged:",
          {short(n): round(float(np.mean(np.abs(variant[n].tag_min_content - tables[n].tag_min_content)
                                         [new[new.set == n].row.to_numpy()])), 4) for n in tables
           if (new.set == n).any()})


if __name__ == "__main__":
    main()
