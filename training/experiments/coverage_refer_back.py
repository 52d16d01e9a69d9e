"""Issue 12, decoding: the sentence after one about a slot counts only when it refers back (scratch, in-sample).

Question coverage (``faithwatch.decoding.coverage``) lets a word slot of the question be filled by a run from a
context sentence about the slot *or the sentence right after it*, which often goes on with "It was written by ...".
On fresh14 that allowance let fod-fallback keep distractors: for "Which planet is the farthest from the Sun?" the
sentence after "The farthest of them from the Sun is Uranus, ..." is "Pluto, which orbits even farther out, was
reclassified ...", so "The farthest planet from the Sun is Pluto" fills the slot and FOD never searches
(docs/decoding_eval.md, "A fourteenth fresh set"). The variant takes the next sentence only when its first word
refers back (it, its, he, his, she, her, they, their, this, these, those, there).

This reads every stored answer of ``docs/results/decoding*/answers.jsonl`` and counts, by whether the answer names
every context-answer group, how many slots the shipped rule and the variant leave open (``coverage_verbs.tally``).
No model runs. Designed after reading fresh14's failures: fresh14 and every stored answer are in-sample for it; a
decision needs a fresh set run once under a rule committed first.

    python training/experiments/coverage_refer_back.py [--show]     # PYTHONPATH=training/experiments
"""

from __future__ import annotations

import sys
from functools import lru_cache

from coverage_context import contexts
from coverage_verbs import tally

from faithwatch.alignment.lexical import content_stems
from faithwatch.decoding import coverage as cov
from faithwatch.text import split_sentences

REFER_BACK = frozenset(["it", "its", "he", "his", "she", "her", "they", "their", "this", "these", "those", "there"])


@lru_cache(maxsize=256)
def offers_refer_back(question: str, context: str) -> tuple[frozenset[str] | None, ...]:
    """``coverage._offers`` with the next sentence taken only when it opens by referring back."""
    raw = split_sentences(context) if context.strip() else []
    sentences = [content_stems(s) for s in raw]
    follows = [bool(s.split()) and s.split()[0].strip("\"'(").lower() in REFER_BACK for s in raw]
    words_given = cov._given(question)[1]
    out = []
    for slot in (s for s in cov.question_slots(question) if not s.numeric):
        own = content_stems(slot.clause)
        hits = {k for i, c in enumerate(sentences) if c & own
                for k in (i, i + 1) if k < len(sentences) and (k == i or follows[k])}
        out.append(frozenset().union(*(sentences[k] for k in hits)) - words_given if hits else None)
    return tuple(out)


def open_refer_back(question: str, answer: str, context: str) -> int:
    shipped = cov._offers
    cov._offers = offers_refer_back
    try:
        return cov.open_slots(question, answer, context)
    finally:
        cov._offers = shipped


if __name__ == "__main__":
    tally(cov.open_slots, open_refer_back, "--show" in sys.argv, contexts().get)
