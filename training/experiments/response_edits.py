"""Issue 12, a diagnostic: does the shipped detector catch one small edit in an *abstractive* faithful response?

The augmentation set (``faithwatch synth-edits``) and the blatant suite edit near copies of a context sentence.
Benchmarks of small factual edits (SummEdits-style) edit model-written summaries instead, which restate the
source in other words, so the ``edits`` family (near copies only) rarely fires there. This builds such pairs from
the faithful responses of the five sets that no faithwatch model was trained on (CLIFF XSum and CNN/DM, RAGTruth
data-to-text, BEGIN CMU-DoG and Topical-Chat dev): one sentence of each changed by one move (a number, a name of
the same context swapped in, or a negation toggled), next to the response unchanged. It writes both to
``build/extra-data/response-edits.jsonl`` (generic JSONL, the changed sentence an unfaithful span) and prints,
for the changed sentences against the same sentences unchanged: the share flagged / passed at the shipped
threshold and the AUROC of the detector, ``align_score`` and ``tag_min_content``, per move. No model or rule
is chosen on it.

    python training/experiments/response_edits.py [--per-set 120]     # from the repo root
"""

from __future__ import annotations

import argparse
import hashlib
import json
import random
import re
from pathlib import Path

import numpy as np
import pandas as pd
from sklearn.metrics import roc_auc_score

import faithwatch.eval.training as training
from faithwatch.data.loaders import load_dataset
from faithwatch.detectors.aggregator import SynCheckDetector
from faithwatch.eval.pipeline import extraction_monitor, load_labelled
from faithwatch.nli.synthetic import NUMBER, make_hypothesis, sentences_of

ROOT = Path(__file__).resolve().parents[2]
SOURCES = ["build/extra-data/cliff-xsum.jsonl", "build/extra-data/cliff-cnndm.jsonl",
           "training/data/ragtruth-data2txt.jsonl", "training/data/begin-dev-cmu.tsv", "training/data/begin-dev-tc.tsv"]
OUT = ROOT / "build" / "extra-data" / "response-edits.jsonl"


def move_of(old: str, new: str) -> str:
    """Which move changed ``old`` into ``new``."""
    if NUMBER.findall(old) != NUMBER.findall(new):
        return "number"
    return "negation" if re.sub(r"\bnot\b|n't", "", old).split() == re.sub(r"\bnot\b|n't", "", new).split() \
        or " not " in f" {old} " or " not " in f" {new} " else "name"


def build(per_set: int, seed: int = 0) -> list[dict]:
    rng = random.Random(seed)
    rows = []
    for source in SOURCES:
        examples = sorted((e for e in load_dataset(source, None) if e.response_label == 0),
                          key=lambda e: hashlib.sha1(e.id.encode()).hexdigest())
        made = 0
        for e in examples:
            if made >= per_set:
                break
            sents = [s for s in sentences_of(e.response) if s in e.response]
            rng.shuffle(sents)
            for s in sents:
                new = make_hypothesis("contradiction", s, rng, ("number", "entity", "negation"),
                                      sentences_of(e.context), [])
                if not new or new == s or new in e.context:
                    continue
                start = e.response.index(s)
                edited = e.response[:start] + new + e.response[start + len(s):]
                base = {"context": e.context, "question": e.question, "instruction": e.instruction}
                rows.append({**base, "id": f"{e.id}-orig", "response": e.response, "spans": [], "label": 0,
                             "source": Path(source).stem, "move": move_of(s, new), "edited": new, "original": s})
                rows.append({**base, "id": f"{e.id}-edit", "response": edited, "label": 1,
                             "spans": [{"start": start, "end": start + len(new), "label": "unfaithful"}],
                             "source": Path(source).stem, "move": move_of(s, new), "edited": new, "original": s})
                made += 1
                break
    return rows


def diagnostic_pairs(table: pd.DataFrame) -> pd.DataFrame:
    """The rows of ``table`` (the sentences of :data:`OUT`) that count: each edited response's changed sentence
    and the same sentence of its unchanged twin, with the columns ``edited``, ``move`` and ``source``."""
    meta = {(r := json.loads(line))["id"]: r for line in OUT.read_text(encoding="utf-8").splitlines()}
    keep = []
    for ex_id, t in table.groupby("example_id"):
        r = meta[ex_id]
        text = r["edited"] if ex_id.endswith("-edit") else r["original"]
        hit = t[t.text.str.contains(re.escape(text[:40]), regex=True)]
        if len(hit):
            keep.append(hit.iloc[[0]].assign(move=r["move"], source=r["source"], edited=ex_id.endswith("-edit")))
    return pd.concat(keep, ignore_index=True)


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--per-set", type=int, default=120)
    args = p.parse_args()
    rows = build(args.per_set)
    OUT.parent.mkdir(parents=True, exist_ok=True)
    OUT.write_text("".join(json.dumps(r) + "\n" for r in rows), encoding="utf-8")
    print(f"{len(rows) // 2} edited responses -> {OUT}")
    monitor = extraction_monitor(None, "nli-minilm+lexical+embedding")
    table = load_labelled([str(OUT)], monitor, text_only=True)[OUT.stem].sentences
    det = SynCheckDetector.load(ROOT / "src" / "faithwatch" / "detectors" / "default")
    table = table.assign(p=training.syncheck_scores(det, table))
    pairs = diagnostic_pairs(table)
    print(f"{pairs.edited.sum()} edited sentences, {(~pairs.edited).sum()} unchanged; threshold {det.threshold:.3f}")
    for label, part in [("all", pairs), *pairs.groupby("move"), *pairs.groupby("source")]:
        y = part.edited.to_numpy().astype(int)
        if y.min() == y.max():
            continue
        cells = [f"flagged {np.mean(part.p[part.edited] < det.threshold):.3f}",
                 f"passed {np.mean(part.p[~part.edited] >= det.threshold):.3f}"]
        cells += [f"{c} {roc_auc_score(y, -part[c]):.3f}" for c in ("p", "align_score", "tag_min_content")]
        print(f"  {label:<20} n={int(y.sum()):4d}  " + "  ".join(cells))


if __name__ == "__main__":
    main()
