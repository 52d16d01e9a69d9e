"""Issue 12, decoding: a word slot offered only by the context sentences that hold its *rarest* words (scratch).

Question coverage (``faithwatch.decoding.coverage``) lets a word slot take a run from any context sentence that
holds a content word of the slot's clause. The question's subject is usually in every sentence of the context, so
every sentence offers, and a description fills the slot: "In Greek mythology, the Minotaur was a monster with the
head of a bull ..." fills "Which hero killed the Minotaur?" (fresh19), "... one of the oldest and most visited art
museums in Europe" fills "In which city is the Uffizi Gallery?" (fresh17). The variant here: a slot is offered
only by the sentences that hold the clause's words found in the fewest context sentences (and the sentences right
after them that refer back, as now), so "killed" picks the sentence that says who killed it. A slot none of whose
words the context holds takes any run, as now.

It reads every stored answer of ``docs/results/decoding*/answers.jsonl.gz`` and counts, by whether the answer names
every context-answer group, how many slots the shipped rule and the variant leave open
(``coverage_verbs.tally``). No model runs. Designed after reading the failures of fresh17 and fresh19: every
stored answer is in-sample for it.

    PYTHONPATH=training/experiments python training/experiments/coverage_rarest.py [--show] [--share S]

Measured on the stored answers of 2026-11-29, after the runs of fresh21–22 (answers that go from every slot
filled to one open; fod-fallback's answers, then the other strategies'). The rule in docs/decoding_eval.md quotes
the same variant before those runs were stored: 21 caught and 1 harmed of 1,680 complete answers.

| variant | complete answers newly open (harm) | answers missing a fact newly open (caught) |
| --- | --- | --- |
| the rarest clause words only (no ``--share``) | 5 / 3 | 38 / 52 |
| words in at most half the sentences (``--share 0.5``) | **1 / 1** | **21 / 45** |
| words in at most a third (``--share 0.34``) | 5 / 3 | 38 / 52 |
| words not in every sentence (``--share 0.99``) | 0 / 0 | 0 / 19 |

The rarest words misfire where the one rarest word is incidental ("inflamed" in "Hepatitis is a medical condition
in which an internal organ becomes inflamed." picks that sentence, not the one that names the organ). With
``--share 0.5`` the catches are mostly a swapped distractor ("Jeff Bezos is the founder of SpaceX.", "The band
that released Abbey Road is Pink Floyd."), the detector's blind spot; the one harm is fresh10's "... is melanin."
("colour" is said once, in a sentence about autumn). That variant was the candidate
(``docs/results/decoding-distinctive/candidate.patch``); measured on fresh21 and fresh22 it changed no answer, so
its rule failed and it is not built (docs/decoding_eval.md).
"""

from __future__ import annotations

import sys
from functools import lru_cache, partial

from coverage_context import contexts
from coverage_refer_back import offers_picking, open_under
from coverage_verbs import tally


@lru_cache(maxsize=1024)
def offers_variant(question: str, context: str, variant: str, share: float) -> tuple[frozenset[str] | None, ...]:
    """``coverage._offers`` with only some of the clause's words choosing sentences: ``"every"`` all of them (the
    rule before this candidate), ``"rarest"`` those in the fewest context sentences, ``"common"`` those in at most
    ``share`` of them (all when none is)."""

    def pick(_question, _slot, present, sentences):
        df = {w: sum(w in c for c in sentences) for w in present}
        if variant == "rarest":
            return {w for w in present if df[w] == min(df.values())}
        if variant == "common":
            return {w for w in present if df[w] <= len(sentences) * share} or present
        return present

    return offers_picking(question, context, pick)


def open_variant(variant: str, share: float, question: str, answer: str, context: str) -> int:
    """Open slots with :func:`offers_variant` in place of the shipped offers."""
    return open_under(partial(offers_variant, variant=variant, share=share), question, answer, context)


def main(show: bool, share: float | None) -> None:
    variant = ("rarest", 1.0) if share is None else ("common", share)
    tally(partial(open_variant, "every", 1.0), partial(open_variant, *variant), show, contexts().get)


if __name__ == "__main__":
    args = sys.argv[1:]
    main("--show" in args, float(args[args.index("--share") + 1]) if "--share" in args else None)
