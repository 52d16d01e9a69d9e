"""The ``edits`` features of every sentence of the twelve sets, the check items and the blatant items, as JSONL: the
count that decides whether a new edits version changes any sentence (docs/transfer.md, edits versions 82 and 83).

Dump with each version's code, then compare row by row (check and blatant items by position: their ids repeat):

    FAITHWATCH_DATA=../shared/data PYTHONPATH=<old checkout>/src python training/experiments/edits_dump.py old.jsonl
    FAITHWATCH_DATA=../shared/data PYTHONPATH=<new checkout>/src python training/experiments/edits_dump.py new.jsonl
    python training/experiments/edits_dump.py --compare old.jsonl new.jsonl

``--signal lexical OUT`` dumps the lexical evidence features instead (a lexical version's count, e.g. version 28).
Run from the repository root; the CLIFF sets need ``training/experiments/cliff_sets.py`` first.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

#: the six labelled sets, the augmentation set and the five never-seen sets
SETS = ("faithbench", "qags-cnndm", "begin-dev", "training/data/ragtruth-qa.jsonl",
        "training/data/ragtruth-summary.jsonl", "training/data/q2-wow.jsonl", "training/data/synthetic-edits.jsonl",
        "training/data/begin-dev-cmu.tsv", "training/data/begin-dev-tc.tsv", "build/extra-data/cliff-xsum.jsonl",
        "build/extra-data/cliff-cnndm.jsonl", "training/data/ragtruth-data2txt.jsonl")


def dump(out: Path, signal_name: str = "edits") -> None:
    """Write one row (key, text, features of ``signal_name``: edits or lexical) per sentence of :data:`SETS` (every
    example, Questionable and Generic ones too), then per check item and blatant item."""
    from faithwatch.data.loaders import load_dataset
    from faithwatch.sentences import SentenceTracker
    from faithwatch.signals.edits import EditSignal
    from faithwatch.signals.lexical import LexicalSignal

    signal = {"edits": EditSignal, "lexical": LexicalSignal}[signal_name]()
    with out.open("w") as handle:
        def write(keys: list, texts: list[str], contexts: list[str], questions: list[str]) -> None:
            for key, text, row in zip(keys, texts, signal.from_pairs(texts, contexts, questions), strict=True):
                handle.write(json.dumps({"k": key, "t": text, "f": row}) + "\n")

        for name in SETS:
            rows = [([name, e.id, s.index], s.text, e.context, e.question or "")
                    for e in load_dataset(name, questionable="faithful", generic="faithful")
                    for s in SentenceTracker.split_text(e.response)]
            write(*map(list, zip(*rows, strict=True)))
            print(name, len(rows), "sentences", flush=True)
        for kind, path, field in (("check", "training/data/contrast-check.jsonl", "response"),
                                  ("blatant", "tests/data/blatant.jsonl", "sentence")):
            items = [json.loads(line) for line in Path(path).read_text(encoding="utf-8").splitlines()]
            write([[kind, d["id"]] for d in items], [d[field] for d in items], [d["context"] for d in items],
                  [d.get("question") or "" for d in items])
            print(kind, len(items), "items", flush=True)


def compare(old: Path, new: Path) -> None:
    """Print the rows whose features differ, by kind, in order; rows only ``new`` has (items added since) are
    counted apart."""
    def load(path: Path) -> dict[str, list[dict]]:
        kinds: dict[str, list[dict]] = {}
        for line in path.read_text().splitlines():
            row = json.loads(line)
            kinds.setdefault("sets" if row["k"][0] not in ("check", "blatant") else row["k"][0], []).append(row)
        return kinds

    a, b = load(old), load(new)
    for kind in ("sets", "check", "blatant"):
        rows_a, rows_b = a.get(kind, []), b.get(kind, [])
        changed = [(x, y) for x, y in zip(rows_a, rows_b, strict=False) if x["k"] != y["k"] or x["f"] != y["f"]]
        print(f"{kind}: {len(rows_a)} rows compared, {len(changed)} changed, {len(rows_b) - len(rows_a)} only in new")
        for x, y in changed:
            print("  ", y["k"], y["t"][:100], {f: (x["f"].get(f), v) for f, v in y["f"].items() if x["f"].get(f) != v})


if __name__ == "__main__":
    if sys.argv[1:2] == ["--compare"]:
        compare(Path(sys.argv[2]), Path(sys.argv[3]))
    elif sys.argv[1:2] == ["--signal"]:
        dump(Path(sys.argv[3]), sys.argv[2])
    else:
        dump(Path(sys.argv[1]))
