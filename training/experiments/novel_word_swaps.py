"""Issue 12, a diagnostic (2026-11-30, forty-fifth session): near copies that replace one lower-case content word by
one found nowhere in the context ("copper pipes" for "lead pipes"), counted per labelled set with their labels,
before any rule was written. The rule was not built: most such swaps are synonyms (docs/transfer.md, "A lower-case
word swapped for a new one").

    FAITHWATCH_DATA=../shared/data PYTHONPATH=training/experiments python training/experiments/novel_word_swaps.py \
        training/data/ragtruth-data2txt.jsonl training/data/begin-dev-cmu.tsv training/data/begin-dev-tc.tsv \
        build/extra-data/cliff-xsum.jsonl build/extra-data/cliff-cnndm.jsonl
"""

from __future__ import annotations

import sys

from near_copy_additions import count_by_set

from faithwatch.alignment.edits import EditScorer

SHOWN = 15


def novel_swap(scorer: EditScorer, text: str, context: str) -> str | None:
    """The first lower-case content word of a near copy replaced by one found nowhere in the context, as "'old' ->
    'new'"; ``None`` for none."""
    _, edits = scorer.local_edits(text, context)
    swaps = [(mine[0], theirs[0]) for op, mine, theirs in edits
             if op in ("replace", "anchored") and len(mine) == len(theirs) == 1
             and mine[0].content and theirs[0].content and not mine[0].number and not theirs[0].number
             and not mine[0].entity and not scorer.in_context(mine[0])]
    return f"{swaps[0][1].text!r} -> {swaps[0][0].text!r}" if swaps else None


if __name__ == "__main__":
    count_by_set(sys.argv[1:], novel_swap, SHOWN)
