"""Issue 12: do the parts of ``align_score``, or intrinsic swaps, help the aggregator transfer?

A scratch measurement (docs/transfer.md, "Aggregator variants"), on the text-only feature cache that
``faithwatch eval --text-only`` builds (the same six sets and the augmentation set):

* **parts**: ``align_score`` is the equal mean of nli-minilm, lexical and embedding. The lexical and embedding
  parts are recomputed (no NLI pass) and the NLI part is recovered as ``3 * align_score - lexical - embedding``,
  so a monotone aggregator can weigh the three itself;
* **intrinsic swaps** (``edit_swap_ctx``): a near copy of a context sentence whose number or name is replaced by
  another one *found elsewhere in the context* (the shipped ``edits`` family counts only values found nowhere in
  it). Prints how often it fires on each set and how many of those sentences are unfaithful.

Prints LOO AUROC (each set predicted by the recipe trained on the others) and the worst gain over ``align_score``.

    python training/experiments/aggregator_variants.py     # ~10 min once the text cache exists (~1 h to build)
"""

from __future__ import annotations

import json
from dataclasses import replace
from pathlib import Path

import numpy as np
import pandas as pd
from sklearn.metrics import roc_auc_score

import faithwatch.eval.training as training
from faithwatch.alignment import get_scorer
from faithwatch.alignment.edits import EditScorer
from faithwatch.eval.pipeline import extraction_monitor, load_labelled
from faithwatch.eval.transfer import held_out_aurocs, held_out_names

ROOT = Path(__file__).resolve().parents[2]
SETS = ("faithbench", "qags-cnndm", "begin-dev", "training/data/ragtruth-qa.jsonl",
        "training/data/ragtruth-summary.jsonl", "training/data/q2-wow.jsonl")
AUGMENT = ("training/data/synthetic-edits.jsonl",)


def ctx_swaps(scorer: EditScorer, sentence: str, context: str) -> float:
    """Replaced spans of a near copy whose number (or name) differs from the source's but occurs in the context."""
    count = 0.0
    for op, mine, theirs in scorer.local_edits(sentence, context)[1]:
        content = [t for t in mine if t.content]
        if op != "replace" or not content or not all(scorer.in_context(t) for t in content):
            continue  # nothing replaced, or a value found nowhere in the context: the shipped features count it
        for kind in ("number", "entity"):
            m = {t.key for t in mine if getattr(t, kind)}
            s = {t.key for t in theirs if getattr(t, kind)}
            if m and s and not m & s:
                count += 1
                break
    return count


def tables_with_variants() -> dict[str, pd.DataFrame]:
    """The cached text-only tables, plus the columns nli_part, lex_part, emb_part and edit_swap_ctx."""
    monitor = extraction_monitor(None, "nli-minilm+lexical+embedding")
    data = load_labelled(list(SETS), monitor, text_only=True, augment=list(AUGMENT))
    lexical, embedding, edits = get_scorer("lexical"), get_scorer("embedding"), EditScorer()
    tables = {}
    for name, d in data.items():
        t = d.sentences.reset_index(drop=True)
        contexts = {e.id: e.context for e in d.examples}
        lex, emb = np.zeros(len(t)), np.zeros(len(t))
        for ex_id, idx in t.groupby("example_id").indices.items():
            texts = t["text"].iloc[idx].tolist()
            lex[idx] = lexical.score_many(texts, contexts[ex_id])
            emb[idx] = embedding.score_many(texts, contexts[ex_id])
        t = t.assign(lex_part=lex, emb_part=emb, nli_part=3 * t["align_score"] - lex - emb)
        t["edit_swap_ctx"] = [ctx_swaps(edits, s, contexts[e]) for s, e in zip(t.text, t.example_id, strict=True)]
        fired = t.edit_swap_ctx > 0
        print(f"{name}: edit_swap_ctx fires on {int(fired.sum())} sentences, {int(t.label[fired].sum())} unfaithful")
        tables[name] = t
    return tables


def main() -> None:
    training.FAMILIES.update(parts=("nli_part", "emb_part", "lex_part"), nli=("nli_part",),
                             edits_ctx=(*training.FAMILIES["edits"], "edit_swap_ctx"))
    training.DIRECTIONS.update(nli_part=1, emb_part=1, lex_part=1, edit_swap_ctx=-1)
    tables = tables_with_variants()
    recipes = {
        "lr alignment+lexical+edits (shipped at the time)": training.Recipe(families=("alignment", "lexical", "edits")),
        "lr alignment+lexical+edits_ctx": training.Recipe(families=("alignment", "lexical", "edits_ctx")),
        "lr parts+lexical+edits": training.Recipe(families=("parts", "lexical", "edits")),
        "lr nli+alignment+lexical+edits": training.Recipe(families=("nli", "alignment", "lexical", "edits")),
        "xgb parts+lexical+edits": training.Recipe(kind="xgb", families=("parts", "lexical", "edits")),
    }
    print_loo(tables, recipes)


def print_loo(tables: dict[str, pd.DataFrame], recipes: dict[str, training.Recipe]) -> None:
    """LOO AUROC of each recipe on every held-out set, its mean and its worst gain over ``align_score`` alone."""
    held = held_out_names(tables)
    ref = {n: roc_auc_score(tables[n].label, -tables[n].align_score) for n in held}
    print(f"{'recipe':<44}", " ".join(f"{n.split('/')[-1][:10]:>10}" for n in held), "      mean  worst gain")
    mean_ref = np.mean(list(ref.values()))
    print(f"{'align_score alone':<44}", " ".join(f"{ref[n]:10.3f}" for n in held), f"{mean_ref:10.3f}")
    for label, recipe in recipes.items():
        auroc = held_out_aurocs(tables, recipe, "text-only")
        worst = min(auroc[n] - ref[n] for n in held)
        print(f"{label:<44}", " ".join(f"{auroc[n]:10.3f}" for n in held),
              f"{np.mean(list(auroc.values())):10.4f} {worst:+10.4f}", flush=True)

def shipped_recipe() -> training.Recipe:
    """The shipped detector's recipe (training/recipe.json)."""
    return training.Recipe.from_dict(json.loads((ROOT / "training" / "recipe.json").read_text())["recipe"])


def with_family(recipe: training.Recipe, family: str, directions: dict[str, int]) -> training.Recipe:
    """``recipe`` plus a text family ``family`` of the columns ``directions`` names (+1 higher = faithful, -1 the
    other way), registered in this process only (once, however often it is called)."""
    training.FAMILIES[family] = tuple(directions)
    if family not in training.TEXT_FAMILIES:
        training.TEXT_FAMILIES = (*training.TEXT_FAMILIES, family)
    training.DIRECTIONS.update(directions)
    return replace(recipe, families=(*recipe.families, family))


def with_extra_family(recipe: training.Recipe, family: str, column: str, direction: int) -> training.Recipe:
    """:func:`with_family` of one column."""
    return with_family(recipe, family, {column: direction})


if __name__ == "__main__":
    main()
