"""Issue 12, decoding: would question coverage catch more unanswered parts if verbs did not fill them? (scratch)

Question coverage (``faithwatch.decoding.coverage``) counts any new content word as filling a part of the question,
so "The Little Mermaid was written by Hans Christian Andersen." fills both parts of "Who wrote it, and in which
country was he born?" ("written" counts). This variant drops runs made only of lower-case verb-like words (a short
list, or -ed / -en / -ing) and reports, over every stored fod-fallback answer to a multi-fact question, how many
answers that miss a fact it newly reads as open, and how many complete answers it wrongly does. No model runs.

    python training/experiments/coverage_verbs.py
"""

from __future__ import annotations

import json
import re
from pathlib import Path

from faithwatch.alignment.lexical import _words, content_runs
from faithwatch.decoding import coverage as cov
from faithwatch.decoding.counterfactual import mentions_any
from faithwatch.text import stem

ROOT = Path(__file__).resolve().parents[2]
REPORTS = ("decoding-fallback", "decoding-fallback-fresh2to6", "decoding-fresh7", "decoding-fresh8")
VERBS = {"is", "was", "are", "were", "lies", "lie", "located", "situated", "found", "born", "built", "made", "called",
         "known", "written", "wrote", "painted", "composed", "invented", "discovered", "designed", "founded", "flows",
         "runs", "stands"}


def verbish(word: str) -> bool:
    """Whether ``word`` reads as a verb form (lower case, listed or ending in -ed / -en / -ing)."""
    low = word.lower()
    return word == low and (low in VERBS or re.search(r"(ed|en|ing)$", low) is not None)


def runs_without_verbs(text: str) -> list[frozenset[str]]:
    """``text``'s content runs (``content_runs``), without those whose every word is verb-like."""
    verbs = {stem(word) for word, _ in _words(text) if verbish(word)}
    return [run for run in content_runs(text) if not run <= verbs]


def open_without_verbs(question: str, answer: str) -> int:
    """Open slots of ``question`` that ``answer`` leaves under the variant."""
    original = cov.content_runs
    cov.content_runs = runs_without_verbs
    try:
        return cov.open_slots(question, answer)
    finally:
        cov.content_runs = original


def main() -> None:
    counts = {"missing, newly open": 0, "missing, still filled": 0, "complete, newly open": 0,
              "complete, still filled": 0}
    for name in REPORTS:
        for line in (ROOT / "docs" / "results" / name / "answers.jsonl").read_text(encoding="utf-8").splitlines():
            r = json.loads(line)
            if r["strategy"] != "fod-fallback" or r["refused"] or len(r["context_answers"]) < 2:
                continue
            missing = any(not mentions_any(r["answer"], group) for group in r["context_answers"])
            before = cov.open_slots(r["question"], r["answer"])
            after = open_without_verbs(r["question"], r["answer"])
            kind = "missing" if missing else "complete"
            if after > 0 and before == 0:
                counts[f"{kind}, newly open"] += 1
                print(f"  newly open ({kind}): {r['id']}: {r['answer'][:90]!r}")
            elif after == 0:
                counts[f"{kind}, still filled"] += 1
    print(counts)


if __name__ == "__main__":
    main()
