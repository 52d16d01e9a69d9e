"""Issue 12, decoding: question coverage with and without its rule for parts that ask for a name (scratch).

Question coverage (``faithwatch.decoding.coverage``) let any new content run fill any word part of a question, so
"The Barber of Seville is a comic opera first performed in 1816. It was composed by Gioachino Rossini." filled both
parts of "Who composed the opera The Barber of Seville, and in which country was he born?" ("comic opera" counted
as the country), and "The Golden Gate Bridge was opened to traffic in 1951." both parts of "When was the Golden
Gate Bridge opened, and in which city is it?" ("traffic"). Since the twentieth session a part that asks for a name
("who", "whom", "whose", "which/what ... country/city/language/river/...": ``Slot.proper``) is filled only by a
run that holds a capitalised word.

This script reads every stored answer of ``docs/results/decoding*/answers.jsonl`` (every strategy) to a question
with slots and reports, by whether the answer names every context-answer group, how many slots the previous rule
and the shipped rule leave open. No model runs.

    python training/experiments/coverage_names.py [--show]
"""

from __future__ import annotations

import dataclasses
import json
import sys
from collections import Counter
from pathlib import Path

from faithwatch.decoding import coverage as cov
from faithwatch.decoding.counterfactual import mentions_any

ROOT = Path(__file__).resolve().parents[2]


def open_previous(question: str, answer: str) -> int:
    """Open slots under the previous rule: no part asks for a name."""
    shipped = cov.question_slots
    cov.question_slots = lambda q: tuple(dataclasses.replace(s, proper=False) for s in shipped(q))
    try:
        return cov.open_slots(question, answer)
    finally:
        cov.question_slots = shipped


def main(show: bool) -> None:
    counts: Counter = Counter()
    for path in sorted((ROOT / "docs" / "results").glob("decoding*/answers.jsonl")):
        for line in path.read_text(encoding="utf-8").splitlines():
            r = json.loads(line)
            if r["refused"] or not r.get("context_answers") or not cov.question_slots(r["question"]):
                continue
            groups = r["context_answers"] if isinstance(r["context_answers"][0], list) else [r["context_answers"]]
            complete = all(mentions_any(r["answer"], g) for g in groups)
            before, after = open_previous(r["question"], r["answer"]), cov.open_slots(r["question"], r["answer"])
            who = "fod-fallback" if r["strategy"] == "fod-fallback" else "other strategies"
            counts[(who, "complete" if complete else "missing a fact", f"open {before} -> {after}")] += 1
            if show and before != after:
                print(f"{path.parent.name} {r['strategy']} {r['id']}: {r['answer'][:100]!r} {before} -> {after}")
    for key in sorted(counts):
        print(" | ".join(key), counts[key])


if __name__ == "__main__":
    main("--show" in sys.argv)
