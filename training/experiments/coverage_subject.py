"""Issue 12, decoding: a word slot offered only by context sentences that hold the clause's *names* (scratch).

Question coverage (``faithwatch.decoding.coverage``) lets a word slot take a run from any context sentence that
holds a content word of the slot's clause. A distractor sentence at the end of a context shares the slot's common
words but not its subject: "In the north of the country, the Po is Italy's longest river, flowing east into the
Adriatic." holds "river" of "Which river flows through Rome?", so "The river that flows through Rome is the Po."
fills the slot and FOD keeps it. The variant: when the clause holds capitalised words (its names, "Rome"; not the
question's first word) that the context holds, only the sentences holding one of them pick (and the sentences
right after them that refer back, as now); otherwise every clause word picks, as now.

It reads every stored answer of ``docs/results/decoding*/answers.jsonl.gz`` and counts, by whether the answer names
every context-answer group, how many slots the shipped rule and the variant leave open
(``coverage_verbs.tally``). No model runs. Designed after reading fresh17-22's failures: every stored answer is
in-sample for it.

    PYTHONPATH=training/experiments python training/experiments/coverage_subject.py [--show]
"""

from __future__ import annotations

import re
import sys
from functools import lru_cache

from coverage_context import contexts
from coverage_refer_back import offers_picking, open_under
from coverage_verbs import tally

from faithwatch.alignment.lexical import content_stems
from faithwatch.decoding import coverage as cov
from faithwatch.text import stem

_CAPITAL = re.compile(r"\b[A-Z][\w'-]*")


def clause_names(question: str, clause: str) -> frozenset[str]:
    """The content stems of ``clause``'s capitalised words, less the question's first word."""
    first = question.strip().split()[0] if question.strip() else ""
    own = content_stems(clause)
    return frozenset(stem(m.group()) for m in _CAPITAL.finditer(clause)
                     if not (m.start() == 0 and clause.strip().startswith(first)) and stem(m.group()) in own)


def pick_names(question: str, slot: cov.Slot, present: set[str], _sentences) -> set[str]:
    """The clause's names that the context holds, else every clause word it holds."""
    return (clause_names(question, slot.clause) & present) or present


@lru_cache(maxsize=1024)
def offers_subject(question: str, context: str) -> tuple[frozenset[str] | None, ...]:
    """``coverage._offers`` with the clause's names, where the context holds any, choosing the sentences."""
    return offers_picking(question, context, pick_names)


def open_subject(question: str, answer: str, context: str) -> int:
    """Open slots with :func:`offers_subject` in place of the shipped offers."""
    return open_under(offers_subject, question, answer, context)


def open_shipped(question: str, answer: str, context: str) -> int:
    """Open slots with the shipped offers."""
    return cov.open_slots(question, answer, context)


if __name__ == "__main__":
    tally(open_shipped, open_subject, "--show" in sys.argv, contexts().get)
