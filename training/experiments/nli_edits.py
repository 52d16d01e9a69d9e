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


def dump(out: Path) -> None:
    """Write one row (file, index, label, features or error, hypothesis, premise) per pair of :data:`FILES`."""
    from faithwatch.data.loaders import data_root
    from faithwatch.signals.edits import EditSignal

    signal, root = EditSignal(), data_root() / "nli"

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
            rows = [r for r in map(json.loads, (root / name).read_text(encoding="utf-8").splitlines())
                    if r.get("premise") and r.get("hypothesis")]
            errors = 0
            for start in range(0, len(rows), CHUNK):
                chunk = rows[start:start + CHUNK]
                for i, (r, f) in enumerate(zip(chunk, score(chunk), strict=True)):
                    errors += isinstance(f, str)
                    handle.write(json.dumps([name, start + i, r.get("label"), f, r["hypothesis"], r["premise"]])
                                 + "\n")
            print(name, len(rows), "pairs,", errors, "raised", flush=True)


def compare(old: Path, new: Path) -> None:
    """Count the pairs whose ``edit_neg_flip`` rose, by NLI label, and print those not labelled contradiction."""
    def load(path: Path) -> list[list]:
        return [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines()]

    rose: Counter = Counter()
    for a, b in zip(load(old), load(new), strict=True):
        if isinstance(a[3], dict) and isinstance(b[3], dict) and b[3]["edit_neg_flip"] > a[3]["edit_neg_flip"]:
            rose[a[2]] += 1
            if a[2] != "contradiction":
                print(f"  {a[2]} ({a[0]} {a[1]}): {b[4][:120]!r} | premise {b[5][:200]!r}")
    print("edit_neg_flip rose, by label:", dict(rose))


if __name__ == "__main__":
    if sys.argv[1:2] == ["--compare"]:
        compare(Path(sys.argv[2]), Path(sys.argv[3]))
    else:
        dump(Path(sys.argv[1]))
