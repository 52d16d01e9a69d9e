"""Issue 12: do near copies that drop a hedge of their source ("may reduce" -> "reduces") tend to be unfaithful?
(scratch, a look before any rule; docs/transfer.md, "A dropped hedge")

For each labelled set: the sentences whose local edits (`EditScorer.local_edits`) leave out a hedge word of the
source and put none in, with their labels (1: unfaithful).

    FAITHWATCH_DATA=../shared/data python training/experiments/hedge_drops.py \
        faithbench,qags-cnndm,begin-dev,training/data/ragtruth-qa.jsonl,training/data/ragtruth-summary.jsonl,training/data/q2-wow.jsonl
"""
import sys

import pandas as pd

from faithwatch.alignment.edits import EditScorer
from faithwatch.data.loaders import load_dataset
from faithwatch.eval.labels import label_sentences
from faithwatch.sentences import SentenceTracker
from faithwatch.text import stem

HEDGES = {stem(w) for w in ("may", "might", "could", "possibly", "probably", "likely", "perhaps", "reportedly",
                            "allegedly", "suggest", "suggests", "suggested", "appear", "appears", "seem", "seems",
                            "believed", "thought", "expected", "planned", "proposed", "considering", "would")}
SETS = sys.argv[1].split(",")
sc = EditScorer()
for name in SETS:
    exs = load_dataset(name, None, questionable="exclude")
    rows = []
    n = 0
    for e in exs:
        for s in SentenceTracker.split_text(e.response):
            n += 1
            match, edits = sc.local_edits(s.text, e.context)
            hit = [(op, [t.key for t in m], [t.key for t in th]) for op, m, th in edits
                   if any(t.key in HEDGES for t in th) and not any(t.key in HEDGES for t in m)]
            if hit:
                rows.append({"example_id": e.id, "sentence_index": s.index, "text": s.text, "start": s.start,
                             "end": s.end, "hit": str(hit)})
    if rows:
        df = label_sentences([e for e in exs if e.id in {r["example_id"] for r in rows}], pd.DataFrame(rows))
        print(name, "sentences", n, "hits", len(df), "labels", df["label"].value_counts(dropna=False).to_dict())
        for r in df.head(8).to_dict("records"):
            print("   ", r["label"], r["text"][:140], r["hit"][:120])
    else:
        print(name, "sentences", n, "hits 0")
