"""Who did what in a chat: a sentence against the same sentence with its speakers swapped (scratch; measured on
FacEval's first half, not built; docs/transfer.md, "Chat summaries").

For each summary sentence that names a speaker of its chat, the variants are the sentence with two named speakers
exchanged, or one named speaker replaced by another speaker of the chat. `align_score` reads the sentence and each
variant against the chat, as written and with "I" and "you" read as names (:func:`chat_speakers.resolve`). A wrong
subject or object should score below its swap; the margin (best variant minus sentence) is the candidate signal.
Also measured: the same margin on synthetic swaps of the faithful human references (the reference with its two first
named speakers exchanged), where the original should win.

    python training/experiments/chat_sets.py         # build/extra-data/faceval.jsonl
    python training/experiments/chat_swaps.py FACEVAL_CSV   # FacEval's human_result/FacEval_human_result.csv

The first 75 dialogues (file order) only: the last 75 stay for a confirmation of a rule that would be kept.
"""

from __future__ import annotations

import csv
import itertools
import json
import re
from collections import defaultdict
from pathlib import Path

import numpy as np
from chat_speakers import _LINE, resolve
from sklearn.metrics import roc_auc_score

from faithwatch.monitor import Monitor
from faithwatch.text import is_transcript, split_sentences

ROOT = Path(__file__).resolve().parents[2]
DATA = ROOT / "build" / "extra-data" / "faceval.jsonl"


def _named(sentence: str, speakers: list[str]) -> list[str]:
    return [n for n in speakers if re.search(rf"\b{re.escape(n)}\b", sentence)]


def swap_variants(sentence: str, speakers: list[str]) -> list[str]:
    """``sentence`` with two of its named speakers exchanged, or one replaced by a speaker it does not name."""
    names = _named(sentence, speakers)
    out = []
    for a, b in itertools.combinations(names, 2):
        v = re.sub(rf"\b({re.escape(a)}|{re.escape(b)})\b", lambda m, a=a, b=b: b if m.group(0) == a else a,
                   sentence)
        out.append(v)
    out += [re.sub(rf"\b{re.escape(a)}\b", b, sentence) for a in names for b in speakers if b not in names]
    return [v for v in dict.fromkeys(out) if v != sentence]


def main(faceval_csv: str) -> None:
    with open(faceval_csv, encoding="utf-8") as f:
        truth = {(r["DocID"], r["Summary"].strip()): r["SubObjE"] == "yes" for r in csv.DictReader(f)}
    rows = [json.loads(line) for line in DATA.open(encoding="utf-8")]
    docs = list(dict.fromkeys(r["id"].split("-")[1] for r in rows))
    dev = [r for r in rows if r["id"].split("-")[1] in set(docs[:75]) and is_transcript(r["context"])]
    scorer = Monitor("none").alignment
    margins: dict[str, list] = defaultdict(list)  # context form -> (label, wrong subject/object, summary, margin)
    synthetic: dict[str, list] = defaultdict(list)
    for r in dev:
        speakers = list(dict.fromkeys(m.group(1) for line in r["context"].split("\n") if (m := _LINE.match(line))))
        sub = truth.get((r["id"].split("-")[1], r["response"].strip()), False)
        for sentence in split_sentences(r["response"]):
            variants = swap_variants(sentence, speakers)
            if not variants:
                continue
            for form, context in (("as written", r["context"]), ("resolved", resolve(r["context"]))):
                s = scorer.score_many([sentence, *variants], context)
                margins[form].append((r["label"], sub, r["id"], max(s[1:]) - s[0]))
                if r["id"].endswith("human_ref") and r["label"] == 0 and len(_named(sentence, speakers)) >= 2:
                    synthetic[form].append(s[0] > s[1])  # variants[0]: its first two named speakers exchanged
    for form, rows_ in margins.items():
        y = np.array([x[0] for x in rows_])
        m = np.array([x[3] for x in rows_])
        sub = np.array([x[1] for x in rows_])
        keep = sub | (y == 0)
        per = defaultdict(float)
        for x in rows_:
            per[x[2]] = max(per.get(x[2], -1.0), x[3])
        labels = {x[2]: x[0] for x in rows_}
        print(f"{form}: {len(rows_)} sentences naming a speaker; margin AUROC against the summary label "
              f"{roc_auc_score(y, m):.3f}; wrong subject/object against faithful "
              f"{roc_auc_score(sub[keep], m[keep]):.3f}"
              f"; response level ({len(per)}) {roc_auc_score([labels[k] for k in per], list(per.values())):.3f}")
        for t in (0.05, 0.1):
            hit = m > t
            print(f"  margin > {t}: {hit.sum()} sentences, {(hit & (y == 1)).sum()} of unfaithful summaries, "
                  f"{(hit & sub).sum()} with a wrong subject/object")
        won = synthetic[form]
        print(f"  swapped references: the reference scores above its swap {sum(won)} of {len(won)}")


if __name__ == "__main__":
    import sys

    main(sys.argv[1])
