"""Build ``src/faithwatch/data/lowercase_words.txt.gz``: the words English writes in lower case.

Edits version 89 reads a capitalised word as a name unless it is one of these words or shares a stem with one
(docs/transfer.md, "A name for a name leading a near copy"). A word is in the list when it occurs at least
``--min-count`` times after the first word of a sentence, and in lower case at least ``--min-share`` of those times,
in the premises and hypotheses of the NLI training data (every source: only the words' case is read) and the contexts
of the six labelled training sets (no label or response read). Deterministic: the same data gives the same file
(sorted, gzip without a time).

    FAITHWATCH_DATA=../shared/data python training/lowercase_words.py     # run from the repository root
"""

from __future__ import annotations

import argparse
import gzip
import json
import re
from collections import Counter
from pathlib import Path

from faithwatch.data.loaders import data_root

#: the six labelled training sets, whose contexts are read (their responses and labels are not)
TRAINING_SETS = ("faithbench", "qags-cnndm", "begin-dev", "training/data/ragtruth-qa.jsonl",
                 "training/data/ragtruth-summary.jsonl", "training/data/q2-wow.jsonl")
OUT = Path(__file__).resolve().parent.parent / "src" / "faithwatch" / "data" / "lowercase_words.txt.gz"
_SENTENCE_END = re.compile(r"[.!?]['\")\]]*\s+")
_WORD = re.compile(r"[A-Za-z]+(?:['’][A-Za-z]+)?")


def count(texts: list[str]) -> tuple[Counter, Counter]:
    """Per lower-cased word, how often it occurs after a sentence's first word in lower case, and in all."""
    lower, total = Counter(), Counter()
    for text in texts:
        for sentence in _SENTENCE_END.split(text):
            for word in [m.group() for m in _WORD.finditer(sentence)][1:]:
                if word.isupper() and len(word) > 1:
                    continue  # all capitals says nothing of the word's case
                key = word.lower().replace("’", "'")
                total[key] += 1
                lower[key] += word.islower()
    return lower, total


def main() -> None:
    """Write the list (one word per line, sorted) and print its size."""
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--min-count", type=int, default=3)
    ap.add_argument("--min-share", type=float, default=0.9)
    ap.add_argument("--out", type=Path, default=OUT)
    args = ap.parse_args()
    from faithwatch.data.loaders import load_dataset

    texts = []
    with open(data_root() / "nli" / "train.jsonl", encoding="utf-8") as f:
        for line in f:
            row = json.loads(line)
            texts += [row["premise"], row["hypothesis"]]
    for name in TRAINING_SETS:
        texts += sorted({example.context for example in load_dataset(name)})
    lower, total = count(texts)
    words = sorted(w for w, n in total.items() if n >= args.min_count and lower[w] >= args.min_share * n)
    with open(args.out, "wb") as raw, gzip.GzipFile(fileobj=raw, mode="wb", mtime=0) as f:
        f.write(("\n".join(words) + "\n").encode("utf-8"))
    print(f"{len(texts)} texts, {len(total)} words after a sentence's first, {len(words)} lower-case words",
          f"-> {args.out}")


if __name__ == "__main__":
    main()
