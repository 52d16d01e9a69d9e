"""Issue 12, transfer: should the words of what the user *asked* count as supported? (scratch)

"The main ingredient of tofu is soybeans." against "Tofu is made from soybeans." scores 0.47 and is flagged: "main"
and "ingredient" come from the question, not the context, so the lexical evidence counts two novel content words
(fresh9's tofu item, where FOD then refused a faithful answer). A variant measured in an earlier session counted the
whole question's words as given and lost 0.017 on BEGIN, whose "question" is the user's dialogue turn. This one
reads only what the question *asks* (``faithwatch.text.asked``: its sentences that end in "?", or a
one-sentence query), appends that to the context for the lexical scorer alone, and recomputes the lexical features
and the lexical third of ``align_score`` (an equal-weight mean of NLI, lexical and embedding scores). NLI, the
embedding, the edits and the tagger are unchanged. LOO AUROC of the shipped recipe, same folds and caches as
``faithwatch eval --text-only --transfer``.

**The rule, fixed before the first run:** the variant is worth building into the scorers (a question input for text
signals, a lexical version bump) only if the mean LOO AUROC does not fall, no set falls by more than 0.005, and the
worst-case gain over ``align_score`` (each with its own ``align_score``) does not fall.

    python training/experiments/question_words_supported.py [--whole] [--skip-summary]

--whole reads the whole question; --skip-summary leaves out instructions to summarise
(a question that starts with "Write", "Summarize" or "Summarise", as the summary sets' fixed ones do).
"""

from __future__ import annotations

import sys
from pathlib import Path

import numpy as np
from aggregator_variants import print_loo, shipped_recipe  # sibling scripts, on sys.path when this one runs
from faith_tune_loo import tables_and_data

from faithwatch.alignment.lexical import EVIDENCE_FEATURES, LexicalScorer
from faithwatch.text import asked

ROOT = Path(__file__).resolve().parents[2]


def main(whole: bool, skip_summary: bool) -> None:
    tables, data, _ = tables_and_data()
    lexical = LexicalScorer()
    variant = {}
    for name, t in tables.items():
        examples = {e.id: e for e in data[name].examples}
        t = t.copy()
        changed = 0
        for ex_id, idx in t.groupby("example_id").indices.items():
            ex = examples[ex_id]
            question = (ex.question or "") if whole else asked(ex.question or "")
            if not question or (skip_summary and ex.question.lstrip().lower().startswith(("write", "summari"))):
                continue
            texts = t["text"].iloc[idx].tolist()
            before = np.asarray(lexical.score_many(texts, ex.context))
            after = np.asarray(lexical.score_many(texts, f"{ex.context}\n{question}"))
            t.loc[t.index[idx], "align_score"] = t["align_score"].iloc[idx].to_numpy() + (after - before) / 3
            for row, text in zip(idx, texts, strict=True):
                ev = lexical.evidence(text, f"{ex.context}\n{question}")
                for f in EVIDENCE_FEATURES:
                    t.loc[t.index[row], f] = ev[f]
            changed += int((after != before).sum())
        print(f"{Path(name).stem:<20} sentences {len(t):>6}  lexical score changed on {changed}")
        variant[name] = t
    shipped = shipped_recipe()
    print_loo(tables, {"shipped recipe": shipped})
    print_loo(variant, {f"shipped recipe, {'whole question' if whole else 'asked words'} supported": shipped})


if __name__ == "__main__":
    main("--whole" in sys.argv, "--skip-summary" in sys.argv)
