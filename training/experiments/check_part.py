"""One part of ``training/data/contrast-check.jsonl`` scored by the shipped detector, as ``faithwatch check`` scores
it (``Monitor("none")``: no question, no model): each item's lowest sentence score and whether it is flagged, then
how many swaps (``-s``), restatements (``-f``) and controls (``-c``) are flagged. Run it with the code of each edits
version in turn (a worktree's ``src`` on ``PYTHONPATH``) to compare a part before and after a rule (docs/transfer.md,
e.g. edits version 87):

    FAITHWATCH_DATA=../shared/data PYTHONPATH=src python training/experiments/check_part.py cc [--out scores.json]

The part is chosen by the prefix of its ids (``cc`` for part 88, ``cb`` for part 87).
"""

from __future__ import annotations

import argparse
import json
from pathlib import Path

CHECK = Path(__file__).resolve().parents[2] / "training" / "data" / "contrast-check.jsonl"


def main() -> None:
    """Score the items whose id starts with the given prefix and print the counts."""
    from faithwatch.monitor import Monitor

    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("prefix", help="the part's id prefix, e.g. cc")
    parser.add_argument("--out", type=Path, help="write the scores as JSON")
    args = parser.parse_args()
    items = [json.loads(line) for line in CHECK.read_text(encoding="utf-8").splitlines()]
    items = [item for item in items if item["id"].startswith(args.prefix)]
    if not items:
        raise SystemExit(f"no item of {CHECK} has an id starting with {args.prefix!r}")
    monitor = Monitor("none")
    rows = []
    for item in items:
        sentences = monitor.score(None, item["context"], item["response"]).sentences
        rows.append({"id": item["id"], "score": round(min(s.score for s in sentences), 3),
                     "flagged": any(s.flagged for s in sentences)})
        print(rows[-1]["id"], f"{rows[-1]['score']:.3f}", "flagged" if rows[-1]["flagged"] else "passed", flush=True)
    for kind, name in (("s", "swaps"), ("f", "restatements"), ("c", "controls")):
        of_kind = [row for row in rows if row["id"].endswith(f"-{kind}")]
        print(f"{name}: {sum(row['flagged'] for row in of_kind)} of {len(of_kind)} flagged")
    if args.out:
        args.out.write_text(json.dumps(rows, indent=1) + "\n", encoding="utf-8")


if __name__ == "__main__":
    main()
