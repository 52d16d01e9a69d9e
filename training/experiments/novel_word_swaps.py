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
from collections import Counter
from pathlib import Path

from faith_tune_loo import tables_and_data

from faithwatch.alignment.edits import EditScorer

SHOWN = 15


def main(never_seen: list[str]) -> None:
    tables, data, _ = tables_and_data(never_seen)
    scorer = EditScorer()
    for name, table in tables.items():
        contexts = {e.id: e.context for e in data[name].examples}
        counts: Counter = Counter()
        for text, example_id, label in zip(table.text, table.example_id, table.label, strict=True):
            _, edits = scorer.local_edits(text, contexts[example_id])
            swaps = [(mine[0], theirs[0]) for op, mine, theirs in edits
                     if op in ("replace", "anchored") and len(mine) == len(theirs) == 1
                     and mine[0].content and theirs[0].content and not mine[0].number and not theirs[0].number
                     and not mine[0].entity and not scorer.in_context(mine[0])]
            if swaps:
                counts[int(label)] += 1
                if sum(counts.values()) <= SHOWN:
                    print(f"   [{label}] {swaps[0][1].text!r} -> {swaps[0][0].text!r}: {text[:110]!r}")
        print(f"{Path(name).stem:<20} fires on {sum(counts.values()):>4} of {len(table):>5}: faithful {counts[0]}, "
              f"unfaithful {counts[1]} (unfaithful in the set: {table.label.mean():.3f})", flush=True)


if __name__ == "__main__":
    main(sys.argv[1:])
