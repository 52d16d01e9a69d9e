"""The ``edits`` features of every NLI pair in ``../shared/data/nli`` (premise as context, hypothesis as the
sentence): a check of an edits version on text its rules were not written against, with the pairs' NLI labels to
read a new flip by (docs/transfer.md, edits versions 91 to 93). A pair whose scoring raises is written with its
error, so a dump also finds inputs that crash the scorer.

    FAITHWATCH_DATA=../shared/data PYTHONPATH=<old checkout>/src python training/experiments/nli_edits.py old.jsonl
    FAITHWATCH_DATA=../shared/data PYTHONPATH=<new checkout>/src python training/experiments/nli_edits.py new.jsonl
    python training/experiments/nli_edits.py --compare old.jsonl new.jsonl

About 8 minutes a dump on 2 cores (100,904 pairs).
"""

from __future__ import annotations

import json
import sys
from collections import Counter
from pathlib import Path

#: the training pairs and the dev sets with a premise and a hypothesis
FILES = ("train.jsonl", "dev_mnli_mismatched_3way.jsonl", "dev_snli_test.jsonl", "dev_sick_test.jsonl",
         "dev_anli_dev_r1_r3.jsonl", "dev_climate_fever_heldout.jsonl", "dev_healthver_test.jsonl",
         "dev_fever_nli_test_binary.jsonl")
CHUNK = 500


def pairs(name: str) -> list[dict]:
    """The pairs of one file of :data:`FILES` that have a premise and a hypothesis, in file order."""
    from faithwatch.data.loaders import data_root

    lines = (data_root() / "nli" / name).read_text(encoding="utf-8").splitlines()
    return [r for r in map(json.loads, lines) if r.get("premise") and r.get("hypothesis")]


def dump(out: Path) -> None:
    """Write one row (file, index in :func:`pairs`, label, features or the error raised) per pair of :data:`FILES`."""
    from faithwatch.signals.edits import EditSignal

    signal = EditSignal()

    def score(chunk: list[dict]) -> list[dict | str]:
        try:
            return list(signal.from_pairs([r["hypothesis"] for r in chunk], [r["premise"] for r in chunk],
                                          [""] * len(chunk)))
        except Exception:  # noqa: BLE001 - one pair at a time, to find the one that raises
            if len(chunk) == 1:
                kind, error = sys.exc_info()[:2]
                return [f"{kind.__name__}: {error}"]
            return [row for r in chunk for row in score([r])]

    with out.open("w") as handle:
        for name in FILES:
            rows, errors = pairs(name), 0
            for start in range(0, len(rows), CHUNK):
                chunk = rows[start:start + CHUNK]
                for i, (r, f) in enumerate(zip(chunk, score(chunk), strict=True)):
                    errors += isinstance(f, str)
                    handle.write(json.dumps([name, start + i, r.get("label"), f]) + "\n")
            print(name, len(rows), "pairs,", errors, "raised", flush=True)


def compare(old: Path, new: Path) -> None:
    """Count the pairs whose ``edit_neg_flip`` rose, by NLI label, and print those not labelled contradiction (their
    texts read again from :func:`pairs`); then the pairs that raised in either dump."""
    def load(path: Path) -> list[list]:
        return [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines()]

    rose: Counter = Counter()
    shown: list[list] = []
    for a, b in zip(load(old), load(new), strict=True):
        if isinstance(a[3], dict) and isinstance(b[3], dict) and b[3]["edit_neg_flip"] > a[3]["edit_neg_flip"]:
            rose[a[2]] += 1
            if a[2] != "contradiction":
                shown.append(a)
        elif isinstance(a[3], str) or isinstance(b[3], str):
            shown.append(a if isinstance(a[3], str) else b)
    texts = {name: pairs(name) for name in {row[0] for row in shown}}
    for name, index, label, feats in shown:
        r = texts[name][index]
        what = feats if isinstance(feats, str) else label
        print(f"  {what} ({name} {index}): {r['hypothesis'][:120]!r} | premise {r['premise'][:200]!r}")
    print("edit_neg_flip rose, by label:", dict(rose))


if __name__ == "__main__":
    if sys.argv[1:2] == ["--compare"]:
        compare(Path(sys.argv[2]), Path(sys.argv[3]))
    else:
        dump(Path(sys.argv[1]))
