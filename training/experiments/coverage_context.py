"""Issue 12, decoding: a word part of a question is filled only by what the context offers for it (scratch).

Question coverage (``faithwatch.decoding.coverage``) lets any new content run fill any word part of a question, so
"Venezuela is a country on the northern coast of South America. The capital of Venezuela is Valencia." fills both
parts of "What is the capital of Venezuela, and which is the country's longest river?" ("northern coast" counts as
the river), and "Ethiopia is a landlocked country in the Horn of Africa." fills "What is the capital of Ethiopia?".
Five of fod-fallback's nine failures on fresh12 are of this kind (docs/decoding_eval.md).

The variant reads the context: a word part is filled only by an answer run that shares a stem with a context
sentence about that part (a sentence holding one of the part's own content words: "river" for the second part
above, or the sentence right after one, which often goes on with "It was written by ..."), leaving out the
question's words; each run fills at most one part. A part whose words no context sentence holds ("in which
country", where the context never says "country") takes any run, as before. Numbers fill numeric parts as before,
and a spare number any word part.

The rule is now `faithwatch.decoding.coverage.filled(question, answer, context)` (with an empty context it is the
previous rule, on all 9,392 stored answers); this script compares the two. Measured first with its own copy of the
rule (commit `e962ab8`), which also had a head-noun-only version (a slot asks only about the last noun
after "what"/"which": "river" in "the country's longest river"): 62 complete answers newly read as open and 137
answers missing a fact, against 0 and 230 for the rule kept.

This script reads every stored answer of ``docs/results/decoding*/answers.jsonl.gz`` (every strategy) to a question
with slots, finds its context in the item files, and reports, by whether the answer names every context-answer
group, how many slots the shipped rule and the variant leave open. No model runs. Designed after reading fresh12's
failures: fresh12 and every stored answer are in-sample for it.

    python training/experiments/coverage_context.py [--show]
"""

from __future__ import annotations

import sys
from pathlib import Path

from coverage_verbs import tally  # a sibling script, on sys.path when this one runs

from faithwatch.decoding import coverage as cov
from faithwatch.decoding.counterfactual import load_items

ROOT = Path(__file__).resolve().parents[2]
ITEMS = [ROOT / "src" / "faithwatch" / "data" / "counterfactual_qa.jsonl",
         *sorted((ROOT / "training" / "data").glob("counterfactual-qa-fresh*.jsonl"))]


def contexts() -> dict[str, str]:
    """Every item's context by id (ids differ between the files)."""
    return {item.id: item.context for path in ITEMS for item in load_items(path)}


def main(show: bool) -> None:
    tally(lambda question, answer, _context: cov.open_slots(question, answer), cov.open_slots, show, contexts().get)


if __name__ == "__main__":
    main("--show" in sys.argv)
