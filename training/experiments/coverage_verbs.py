"""Issue 12, decoding: question coverage with and without its verb and repeat rule, over stored answers (scratch).

Question coverage (``faithwatch.decoding.coverage``) used to count any new content run as filling a part of the
question, so "The Little Mermaid was written by Hans Christian Andersen." filled both parts of "Who wrote it, and
in which country was he born?" ("written" counted), and "The answer is Ethiopia. The answer is Ethiopia." both
parts of "Which country ..., and what is its capital?". Since the nineteenth session a run fills once, and a run
made only of verb forms and adverbs (``coverage.verb_like``) fills nothing.

This script reads every stored answer of ``docs/results/decoding*/answers.jsonl.gz`` (every strategy) to a question
with slots and reports, by whether the answer names every context-answer group, how many slots the previous rule
(plain ``content_runs``) and the shipped rule leave open. No model runs.

    python training/experiments/coverage_verbs.py [--show]
"""

from __future__ import annotations

import sys
from collections import Counter
from collections.abc import Callable, Iterator
from pathlib import Path

from faithwatch.alignment.lexical import content_runs
from faithwatch.decoding import coverage as cov
from faithwatch.decoding.counterfactual import mentions_any
from faithwatch.eval.decoding import read_answers

ROOT = Path(__file__).resolve().parents[2]


def open_previous(question: str, answer: str) -> int:
    """Open slots under the previous rule: every content run fills, repeats included."""
    shipped = cov.answer_runs
    cov.answer_runs = content_runs
    try:
        return cov.open_slots(question, answer)
    finally:
        cov.answer_runs = shipped


def stored_rows() -> Iterator[tuple[Path, dict]]:
    """(report folder's answers file, row) for every stored ``docs/results/decoding*/answers.jsonl(.gz)`` row, in
    order."""
    for path in sorted((ROOT / "docs" / "results").glob("decoding*/answers.jsonl*")):
        for row in read_answers(path.parent):
            yield path, row


def tally(before: Callable[..., int], after: Callable[..., int], show: bool,
          context_of: Callable[[str], str | None] | None = None) -> None:
    """Open slots under two rules, over every stored answer to a question with slots, counted by strategy (the
    default or the others) and by whether the answer names every context-answer group; ``show`` prints changes.
    With ``context_of`` (item id -> context), both rules also get the item's context (rows without one are
    counted apart)."""
    counts: Counter = Counter()
    for path, r in stored_rows():
        if r["refused"] or not r.get("context_answers") or not cov.question_slots(r["question"]):
            continue
        extra = () if context_of is None else (context_of(r["id"]),)
        if extra and extra[0] is None:
            counts[("no context found",)] += 1
            continue
        groups = r["context_answers"] if isinstance(r["context_answers"][0], list) else [r["context_answers"]]
        complete = all(mentions_any(r["answer"], g) for g in groups)
        old, new = before(r["question"], r["answer"], *extra), after(r["question"], r["answer"], *extra)
        who = "fod-fallback" if r["strategy"] == "fod-fallback" else "other strategies"
        counts[(who, "complete" if complete else "missing a fact", f"open {old} -> {new}")] += 1
        if show and old != new:
            print(f"{path.parent.name} {r['strategy']} {r['id']}: {r['answer'][:100]!r} {old} -> {new}")
    for key in sorted(counts):
        print(" | ".join(key), counts[key])


def main(show: bool) -> None:
    tally(open_previous, cov.open_slots, show)


if __name__ == "__main__":
    main("--show" in sys.argv)
