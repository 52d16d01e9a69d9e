"""Issue 12, item 4 (number consistency): spelled-out numbers in a sentence read as numbers (scratch).

The lexical scorer reads a *context's* spelled-out numbers ("four") as numbers, so they support a digit in the
sentence, but a *sentence's* only as content words: "so there are four strings in total" against a context that
gives no count has ``novel_numbers`` 0 and escapes the unsupported-number factor, where "4 strings" gets
``novel_numbers`` 1 (found in the thirty-first session, in the ordinal rule's one changed answer; the detector
passed it at 0.61). The variant adds the sentence's spelled-out numbers from two up ("one" and "zero" left out:
"one of the", "no one") to its numbers, so an unsupported one counts as ``novel_numbers`` and lowers the lexical
score as a digit does. ``align_score``'s lexical third is carried over as ``carry_lexical_cache.py`` does.

Rule, committed before the run: build it as lexical scorer version 7 only if, with the shipped recipe,
(1) the mean LOO AUROC over the six sets does not fall, (2) no set falls by more than 0.005, (3) the worst gain
over ``align_score`` does not fall, (4) the mean AUROC on the four never-seen sets with caches (CMU-DoG,
Topical-Chat, CLIFF XSum, CLIFF CNN/DM; data-to-text has no cache on this host) does not fall, and (5) the
blatant suite still flags >= 90% and passes >= 85%.

    python training/experiments/number_words.py      # ~10 min with the caches
"""

from __future__ import annotations

import numpy as np
import pandas as pd
from aggregator_variants import print_loo, shipped_recipe
from faith_tune_loo import tables_and_data
from recipe_targets import suite_table
from sklearn.metrics import roc_auc_score

import faithwatch.alignment.lexical as lex
import faithwatch.eval.training as training
from faithwatch.alignment import get_scorer
from faithwatch.text import NUMBER_WORDS

NEVER_SEEN = ["training/data/begin-dev-cmu.tsv", "training/data/begin-dev-tc.tsv", "build/extra-data/cliff-xsum.jsonl",
              "build/extra-data/cliff-cnndm.jsonl"]
ORIGINAL = lex._sentence_features
SKIP = {"zero", "one"}


def with_number_words(sentence: str, claim_start: int = 0):
    f = ORIGINAL(sentence, claim_start)
    have = {v for forms in f.numbers for v in forms}
    extra = []
    for word, start in lex._words(sentence):
        value = NUMBER_WORDS.get(word.lower())
        if start >= claim_start and value and word.lower() not in SKIP and value not in have:
            extra.append(frozenset({value}))
            have.add(value)
    return lex._Features(f.numbers + tuple(extra), f.content, f.entities, f.bigrams)


def lexical_scores(data, name: str, table: pd.DataFrame) -> np.ndarray:
    ex = {e.id: e for e in data[name].examples}
    scorer = lex.LexicalScorer()
    out = np.zeros(len(table))
    for eid, idx in table.groupby("example_id").indices.items():
        e = ex[eid]
        out[idx] = scorer.score_many(table.text.iloc[idx].tolist(), e.context, e.question or "")
    return out


def run(w_lex: float, before: dict | None):
    every, data, _ = tables_and_data(NEVER_SEEN)
    lexical = {n: lexical_scores(data, n, t) for n, t in every.items()}
    if before is not None:  # carry align_score's lexical third over to the variant
        every = {n: t.assign(align_score=np.clip(t.align_score + w_lex * (lexical[n] - before[n]), 0, 1))
                 for n, t in every.items()}
    never = {n.split("/")[-1].rsplit(".", 1)[0] for n in NEVER_SEEN}
    tables = {n: t for n, t in every.items() if n not in never}
    changed = {n: int((lexical[n] != before[n]).sum()) for n in every} if before is not None else None
    return every, tables, lexical, changed


def report(label, every, tables):
    print(f"\n== {label}")
    recipe = shipped_recipe()
    print_loo(tables, {label: recipe})
    train = pd.concat(tables.values(), ignore_index=True)
    det = training.fit_syncheck(train, recipe, model_id="text-only")
    never = [n.split("/")[-1].rsplit(".", 1)[0] for n in NEVER_SEEN]
    aurocs = [roc_auc_score(every[n].label.astype(int), -training.raw_scores(det, every[n])) for n in never]
    print("never seen:", " ".join(f"{n} {a:.3f}" for n, a in zip(never, aurocs, strict=True)),
          f"mean {np.mean(aurocs):.4f}")
    suite = suite_table(get_scorer("nli-minilm+lexical+embedding"))
    flagged = training.syncheck_scores(det, suite) < det.threshold
    print(f"blatant: flagged {flagged[suite.error].mean():.3f}, passed {(~flagged[~suite.error]).mean():.3f}"
          f" (threshold {det.threshold:.3f})", flush=True)


def main() -> None:
    scorer = get_scorer("nli-minilm+lexical+embedding")
    (w_lex,) = [w for s, w in zip(scorer.scorers, scorer.weights, strict=True) if s.name == "lexical"]
    every, tables, before, _ = run(w_lex, None)
    report("shipped", every, tables)
    lex._sentence_features = with_number_words
    every, tables, _, changed = run(w_lex, before)
    print("sentences whose lexical score changed:", changed)
    report("number words", every, tables)


if __name__ == "__main__":
    main()
