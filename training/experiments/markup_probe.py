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

from pathlib import Path

from faithwatch.eval.pairs import MARKUP_VARIANTS, load_pairs, marked, pair_summary, score_pairs
from faithwatch.monitor import Monitor

SUITE = Path(__file__).resolve().parents[2] / "tests" / "data" / "blatant.jsonl"


def main() -> None:
    monitor = Monitor(signals=["alignment", "lexical", "edits", "tagger"])
    pairs = load_pairs(SUITE)
    print(f"detector {monitor.detector.name}, threshold {monitor.threshold:.3f}, {len(pairs)} pairs")
    for name in ("plain", *MARKUP_VARIANTS):
        s = pair_summary(score_pairs(monitor, pairs if name == "plain" else marked(pairs, name)))
        print(f"{name:>6}: supported passed {s['supported_passed']:.3f}, errors flagged {s['errors_flagged']:.3f}, "
              f"AUROC {s.get('auroc', float('nan')):.3f}")


if __name__ == "__main__":
    main()
