"""Issue 12, decoding: the sentence after one about a slot counts only when it refers back (built since fresh15).

Question coverage (``faithwatch.decoding.coverage``) let a word slot of the question be filled by a run from a
context sentence about the slot *or the sentence right after it*, which often goes on with "It was written by ...".
On fresh14 that allowance let fod-fallback keep distractors ("Germany finished third" for the 2010 winner). Since
the fresh15 rule passed (training/data/README.md) the shipped rule takes the next sentence only when its first
word refers back (``coverage.REFER_BACK``: it, its, he, his, she, her, they, their, this, these, those, there).

This reads every stored answer of ``docs/results/decoding*/answers.jsonl.gz`` and counts, by whether the answer names
every context-answer group, how many slots the previous rule (any next sentence) and the shipped rule leave open
(``coverage_verbs.tally``). No model runs. Designed after reading fresh14's failures: fresh14 and the answers
stored before fresh15 are in-sample for it.

    python training/experiments/coverage_refer_back.py [--show]     # PYTHONPATH=training/experiments
"""

from __future__ import annotations

import sys
from functools import lru_cache

from coverage_context import contexts
from coverage_verbs import tally

from faithwatch.alignment.lexical import content_stems
from faithwatch.decoding import coverage as cov


@lru_cache(maxsize=256)
def offers_previous(question: str, context: str) -> tuple[frozenset[str] | None, ...]:
    """``coverage._offers`` as it was before fresh15: the sentence after one about a slot always offers."""
    sentences = cov._context_sentences(context)
    words_given = cov._given(question)[1]
    out = []
    for slot in (s for s in cov.question_slots(question) if not s.numeric):
        own = content_stems(slot.clause)
        hits = {k for i, c in enumerate(sentences) if c & own for k in (i, i + 1) if k < len(sentences)}
        out.append(frozenset().union(*(sentences[k] for k in hits)) - words_given if hits else None)
    return tuple(out)


def offers_picking(question: str, context: str, pick) -> tuple[frozenset[str] | None, ...]:
    """``coverage._offers`` with ``pick(question, slot, present, sentences)`` choosing which of a slot's clause words
    that the context holds (``present``) pick the sentences about the slot (the shipped rule: all of them)."""
    sentences = cov._context_sentences(context)
    goes_on = cov._refers_back(context)
    words_given = cov._given(question)[1]
    out = []
    for slot in (s for s in cov.question_slots(question) if not s.numeric):
        present = {w for w in content_stems(slot.clause) if any(w in c for c in sentences)}
        if not present:
            out.append(None)
            continue
        chosen = pick(question, slot, present, sentences)
        hits = {k for i, c in enumerate(sentences) if c & chosen
                for k in (i, i + 1) if k < len(sentences) and (k == i or goes_on[k])}
        out.append(frozenset().union(*(sentences[k] for k in hits)) - words_given)
    return tuple(out)


def open_under(offers, question: str, answer: str, context: str) -> int:
    """``coverage.open_slots`` with ``offers`` in place of the shipped ``coverage._offers`` (restored after)."""
    shipped = cov._offers
    cov._offers = offers
    try:
        return cov.open_slots(question, answer, context)
    finally:
        cov._offers = shipped


def open_previous(question: str, answer: str, context: str) -> int:
    return open_under(offers_previous, question, answer, context)


if __name__ == "__main__":
    tally(open_previous, cov.open_slots, "--show" in sys.argv, contexts().get)
