"""Issue 12: the NLI model's *contradiction* on a focused premise, as a feature (scratch).

Earlier, the contradiction probability of the best chunk (or its max over chunks) was at or below chance on
FaithBench and RAGTruth and cost 0.02-0.04 of LOO AUROC (docs/transfer.md, "Earlier: recipes with the
decoding-time signals"). A chunk of ~200 tokens mostly holds text the sentence does not restate. Here the premise
is ``topk_premise.premise``: the context sentences sharing most content words with the sentence, in document order
(the one chunk when the context fits one). Its 3-way probabilities give ``focus_con`` (-1: higher = less
faithful) and ``focus_ent`` (+1). Reported: each alone per set, the diagnostic pairs of ``response_edits.py`` per
move (in-sample for this design: the idea came from them), and LOO with the shipped recipe.

Rule, committed before the first run: ``focus_con`` joins the shipped recipe (a new feature of the NLI scorer)
only if, LOO over the six sets, the mean AUROC rises by at least 0.003, no set falls by more than 0.01, the worst
gain over ``align_score`` is not lower, and the mean over the five never-seen sets is not lower.

    python training/experiments/focus_contradiction.py     # from the repo root, PYTHONPATH=training/experiments
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
from aggregator_variants import print_loo, shipped_recipe, with_extra_family
from combo_features import report_never_seen
from faith_tune_loo import short, tables_and_data
from nli_ensemble import NEVER_SEEN
from response_edits import OUT as EDITS
from response_edits import diagnostic_pairs
from rich.progress import track
from sklearn.metrics import roc_auc_score
from topk_premise import premise

import faithwatch.eval.training as training
from faithwatch.data.loaders import load_dataset
from faithwatch.eval.pipeline import extraction_monitor, load_labelled

ROOT = Path(__file__).resolve().parents[2]


def focus(nli, tables: dict, contexts: dict) -> dict:
    """Each table with ``focus_ent`` and ``focus_con`` added."""
    pairs, where = [], []
    for name, t in tables.items():
        for i, (text, ex_id) in enumerate(zip(t.text, t.example_id, strict=True)):
            ctx = contexts[name][ex_id]
            prem = premise(nli, text, ctx) or nli._chunks(ctx, nli.budget_for(text))[0]
            pairs.append((prem, nli._hypothesis(text)))
            where.append((name, i))
    order = sorted(range(len(pairs)), key=lambda k: len(pairs[k][0]) + len(pairs[k][1]))
    probs = [None] * len(pairs)
    for s in track(range(0, len(order), 512), description="NLI"):
        idx = order[s : s + 512]
        for k, pr in zip(idx, nli._pair_probabilities([pairs[k][0] for k in idx], [pairs[k][1] for k in idx]),
                         strict=True):
            probs[k] = pr
    labels = [lab.lower() for lab in nli.labels]
    ent, con = labels.index(nli.entailment_label), next(i for i, lab in enumerate(labels) if lab.startswith("contra"))
    out = {n: (np.zeros(len(t)), np.zeros(len(t))) for n, t in tables.items()}
    for (name, i), pr in zip(where, probs, strict=True):
        out[name][0][i], out[name][1][i] = pr[ent], pr[con]
    return {n: t.assign(focus_ent=out[n][0], focus_con=out[n][1]) for n, t in tables.items()}


def main() -> None:
    every, data, nli = tables_and_data(NEVER_SEEN)
    monitor = extraction_monitor(None, "nli-minilm+lexical+embedding")
    examples = load_dataset(str(EDITS), None)
    every[EDITS.stem] = load_labelled([str(EDITS)], monitor, text_only=True)[EDITS.stem].sentences
    contexts = {n: {e.id: e.context for e in data[n].examples} for n in data}
    contexts[EDITS.stem] = {e.id: e.context for e in examples}
    every = focus(nli, every, contexts)
    for n, t in every.items():
        if n == EDITS.stem:
            continue
        y = t.label.astype(int)
        print(f"{short(n):<18} focus_con {roc_auc_score(y, t.focus_con):.3f}  focus_ent "
              f"{roc_auc_score(y, -t.focus_ent):.3f}  align_score {roc_auc_score(y, -t.align_score):.3f}")
    measured = {short(n) for n in NEVER_SEEN} | {EDITS.stem}
    tables = {n: t for n, t in every.items() if n not in measured}
    shipped = shipped_recipe()
    plus = with_extra_family(shipped, "focus-con", "focus_con", -1)
    print_loo(tables, {"shipped": shipped, "shipped + focus_con": plus})
    extra = {n: every[short(n)] for n in NEVER_SEEN}
    dets = report_never_seen(tables, extra, {"shipped": shipped, "+ focus_con": plus})
    pairs = diagnostic_pairs(every[EDITS.stem])
    for move, g in [("all", pairs), *pairs.groupby("move")]:
        y = g.edited.astype(int)
        cells = [f"focus_con {roc_auc_score(y, g.focus_con):.3f}", f"focus_ent {roc_auc_score(y, -g.focus_ent):.3f}"]
        cells += [f"{k} {roc_auc_score(y, -training.raw_scores(det, g)):.3f}" for k, det in dets.items()]
        print(f"diagnostic pairs, {move:<9} n={int(y.sum()):4d} ", "  ".join(cells))


if __name__ == "__main__":
    main()
