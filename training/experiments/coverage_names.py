"""Issue 12, decoding: a rule for parts of a question that ask for a name, over stored answers (scratch; measured,
not kept).

Question coverage (``faithwatch.decoding.coverage``) lets any new content run fill any word part of a question, so
"The Barber of Seville is a comic opera first performed in 1816. It was composed by Gioachino Rossini." fills both
parts of "Who composed the opera The Barber of Seville, and in which country was he born?" ("comic opera" counts
as the country), and "The Golden Gate Bridge was opened to traffic in 1951." both parts of "When was the Golden
Gate Bridge opened, and in which city is it?" ("traffic"). The variant here: a part that asks for a name ("who",
"whom", "whose", "which/what ... country/city/language/river/...") is filled only by a run that holds a capitalised
word. It was built into the coverage in the twentieth session (commit ``dc9a4b6``) and removed again by the rule
committed with it: on fresh11, run once, fod-fallback had 31 successes under it against 32 under the shipped
coverage (training/data/README.md).

This script reads every stored answer of ``docs/results/decoding*/answers.jsonl.gz`` (every strategy) to a question
with slots and reports, by whether the answer names every context-answer group, how many slots the shipped rule and
the variant leave open. No model runs.

    python training/experiments/coverage_names.py [--show]
"""

from __future__ import annotations

import re
import sys

from coverage_verbs import tally  # sibling script, on sys.path when this one runs

from faithwatch.alignment.lexical import word_tokens
from faithwatch.decoding import coverage as cov
from faithwatch.text import stem

_NAMED = (r"country|city|town|capital|language|river|continent|ocean|sea|state|island|nation|nationality|province|"
          r"region|desert|mountains?|lake|constellation|planet|ship|spacecraft|composer|painter|author|writer|"
          r"scientist|person|king|queen|emperor|empire|dynasty|team|club|company|university")
_PROPER = re.compile(rf"\bwho(?:m|se)?\b|{cov._WHAT_NOUN}(?:{_NAMED})\b", re.IGNORECASE)


def open_with_names(question: str, answer: str) -> int:
    """Open slots under the variant: a part that asks for a name needs a run with a capitalised word."""
    slots = cov.question_slots(question)
    numbers_given, words_given = cov._given(question)
    numbers, dates = cov._new_numbers(answer, numbers_given)
    runs = [run - words_given for run in cov.answer_runs(answer) if run - words_given - cov._NUMBER_STEMS]
    capitalised = {stem(w) for w in word_tokens(answer) if w[:1].isupper()}
    times = sum(s.time for s in slots)
    quantities = sum(s.numeric and not s.time for s in slots)
    names = sum(1 for s in slots if not s.numeric and _PROPER.search(s.clause))
    by_quantity = min(quantities, numbers - dates)
    by_time = min(times, numbers - by_quantity)
    spare = numbers - dates - by_quantity - max(0, by_time - dates)
    by_name = min(names, sum(1 for run in runs if run & capitalised))
    filled = by_quantity + by_time + by_name + min(len(slots) - quantities - times - names, len(runs) - by_name + spare)
    return len(slots) - filled


def main(show: bool) -> None:
    tally(cov.open_slots, open_with_names, show)


if __name__ == "__main__":
    main("--show" in sys.argv)
