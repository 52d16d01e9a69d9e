"""The shipped detector on answers written with markup: list markers, citation markers, bold (scratch probe).

RAG answers often come as numbered lists, cite their passages ("[1]") or bold a phrase. Each pair of the blatant
suite (tests/data/blatant.jsonl: 96 supported sentences, 96 with one error; never trained on) is scored plain and
in marked copies: "1. " before it, " [1]" before its final stop, its first two words in "**" (markup rule 1); " (Passage
1)" before its final stop, a superscript "¹" after it, its first two words as a Markdown link (rules 2 and 3). A marked
copy says what the plain one says, so it should be flagged as often.

    python training/experiments/markup_probe.py          # about 2 min on 2 CPU cores

Prints, for each variant, the share of supported sentences passed and of errors flagged.
"""

from __future__ import annotations

import dataclasses
import re
from pathlib import Path

from faithwatch.eval.pairs import load_pairs, pair_summary, score_pairs
from faithwatch.monitor import Monitor

SUITE = Path(__file__).resolve().parents[2] / "tests" / "data" / "blatant.jsonl"


def _cite(s: str) -> str:
    m = re.search(r"[.!?]?\s*$", s)
    return s[: m.start()] + " [1]" + s[m.start():]


def _paren(s: str) -> str:
    m = re.search(r"[.!?]?\s*$", s)
    return s[: m.start()] + " (Passage 1)" + s[m.start():]


def _link(s: str) -> str:
    words = s.split(" ")
    return " ".join(["[" + " ".join(words[:2]) + "](https://example.org/page_1)", *words[2:]])


def _bold(s: str) -> str:
    words = s.split(" ")
    return " ".join(["**" + " ".join(words[:2]) + "**", *words[2:]]) if len(words) > 2 else f"**{s}**"


VARIANTS = {"plain": lambda s: s, "list": lambda s: "1. " + s, "cite": _cite, "bold": _bold, "paren": _paren,
            "sup": lambda s: s + "\u00b9", "link": _link}


def main() -> None:
    monitor = Monitor(signals=["alignment", "lexical", "edits", "tagger"])
    pairs = load_pairs(SUITE)
    print(f"detector {monitor.detector.name}, threshold {monitor.threshold:.3f}, {len(pairs)} pairs")
    for name, change in VARIANTS.items():
        marked = [dataclasses.replace(p, sentence=change(p.sentence)) for p in pairs]
        s = pair_summary(score_pairs(monitor, marked))
        print(f"{name:>6}: supported passed {s['supported_passed']:.3f}, errors flagged {s['errors_flagged']:.3f}, "
              f"AUROC {s.get('auroc', float('nan')):.3f}")


if __name__ == "__main__":
    main()
