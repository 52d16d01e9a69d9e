"""Issue 12, decoding: a "which year" slot filled only by a number that can be a year (scratch).

Question coverage (``faithwatch.decoding.coverage``) lets any new number fill a time slot. So "The first American to
travel into space was Scott Carpenter, one of the seven astronauts chosen for Project Mercury." fills both slots of
"Who was the first American to travel into space, and in which year?" ("seven" takes the year), and FOD ends the
answer without the year (fresh24). The variant: a time slot whose clause names a year ("which year", "what year")
is filled only by a year-like number: written in digits, a whole number from 100 to 2100 or next to an era.
Other time slots ("when did", "how old") and every other rule are as shipped.

It reads every stored answer of ``docs/results/decoding*/answers.jsonl.gz`` and counts, by whether the answer names
every context-answer group, how many slots the shipped rule and the variant leave open
(``coverage_verbs.tally``). No model runs. Designed after reading fresh23-24's failures: every stored answer is
in-sample for it.

**Measured (2026-11-29, thirty-third session): right, and too rare to matter; not built.** Over every stored
answer it opens a year slot in no complete answer and in 7 that miss a fact, of which one distinct fod-fallback
answer (the one above, stored twice) and four of other strategies' ("... eight days after launch.").

    PYTHONPATH=training/experiments python training/experiments/coverage_years.py [--show]
"""

from __future__ import annotations

import re
import sys

from coverage_context import contexts
from coverage_subject import open_shipped
from coverage_verbs import tally

from faithwatch.decoding import coverage as cov
from faithwatch.text import normalise_number, number_forms

_YEAR_SLOT = re.compile(r"\b(?:which|what)\s+(?:[\w-]+\s+)?year\b", re.IGNORECASE)


_ERA = re.compile(r"\b(?:AD|BC|BCE|CE)\s+(\d{1,4})\b|\b(\d{1,4})\s*(?:AD|BC|BCE|CE)\b")


def year_like(answer: str, given: frozenset[str]) -> int:
    """How many new numbers of ``answer`` can be years: written in digits and whole, from 100 to 2100 or next to
    an era ("AD 79", "46 BC")."""
    eras = {normalise_number(x) for m in _ERA.finditer(answer) for x in m.groups() if x}
    out = 0
    for forms in number_forms(answer):
        if not forms.isdisjoint(given):
            continue
        if not forms.isdisjoint(eras) or any(f.isdigit() and 100 <= int(f) <= 2100 for f in forms):
            out += 1
    return out


def open_years(question: str, answer: str, context: str) -> int:
    """Open slots with year slots filled only by year-like numbers (else as :func:`coverage.open_slots`)."""
    shipped = cov.open_slots(question, answer, context)
    slots = cov.question_slots(question)
    year_slots = sum(1 for s in slots if s.time and _YEAR_SLOT.search(s.clause))
    if not year_slots:
        return shipped
    # the year slots the answer can fill are at most its year-like numbers; shipped coverage may have filled them
    # with any number, so open at least the year slots that no year-like number can take
    return max(shipped, year_slots - year_like(answer, cov._given(question)[0]))


if __name__ == "__main__":
    tally(open_shipped, open_years, "--show" in sys.argv, contexts().get)
