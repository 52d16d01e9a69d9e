"""Issue 12, decoding: a definitional sentence ("X is a ...", "X was one of ...") fills no word slot (scratch; a
tally over stored answers, not kept).

fod-fallback's most frequent out-of-sample loss (fresh17, 19, 21, 22) is a description that question coverage
counts as the answer: "In Greek mythology, the Minotaur was a monster with the head of a bull ..." for "Which
hero killed the Minotaur?". The variant here drops, for word slots only, every answer sentence whose copula (within
its first nine words) is followed by "a", "an" or "one of". It reads every stored answer of
``docs/results/decoding*/answers.jsonl.gz`` (``coverage_verbs.tally``; no model runs; in-sample: designed after
reading those answers).

**Measured (2026-11-29, thirty-second session): not kept, far more harm than help.** It opens a slot in 156 of
fod-fallback's complete stored answers against 29 that miss a fact (589 against 52 for the other strategies): a
right answer is as often a definition that holds the name ("The Starry Night is a painting by the French
Post-Impressionist artist Paul Gauguin.", "The Statue of Liberty was a gift to the United States from the people of
Italy.", both the context's answers).

    PYTHONPATH=training/experiments python training/experiments/coverage_definitions.py [--show]
"""

from __future__ import annotations

import re
import sys

from coverage_context import contexts
from coverage_verbs import tally

from faithwatch.decoding import coverage as cov
from faithwatch.text import split_sentences

DEFINITION = re.compile(r"^\W*(?:\S+\s+){0,8}?(?:is|was|are|were)\s+(?:(?:a|an)\b|one\s+of\b)", re.IGNORECASE)


def open_without_definitions(question: str, answer: str, context: str) -> int:
    """Open slots when the answer's definitional sentences fill no word slot (numeric slots read all of it)."""
    sentences = split_sentences(answer) if answer.strip() else []
    kept = [s for s in sentences if not DEFINITION.search(s)]
    whole = cov.open_slots(question, answer, context)
    if len(kept) == len(sentences) or all(s.numeric for s in cov.question_slots(question)):
        return whole
    return max(whole, cov.open_slots(question, " ".join(kept), context))


if __name__ == "__main__":
    tally(cov.open_slots, open_without_definitions, "--show" in sys.argv, contexts().get)
