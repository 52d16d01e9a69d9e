"""How many of rerank-coverage's pooled answers back the one it selects (an offline look at a refusal rule).

Reads ``eval-decoding --traces`` reports of rerank-coverage. For each item: the pool (greedy answer, then the full
samples when the gate let them run), the selected answer, and the selected answer's *fillers*: its content runs
that a word slot of the question may take (those the context offers for the slot, as question coverage reads
them) and its numbers that the question does not hold. ``support`` counts the other pooled answers that share a
filler stem or number with it. Prints one JSON row per item.

    python training/experiments/rerank_support.py DATA.jsonl REPORT_DIR [...]  (pairs)
"""

from __future__ import annotations

import json
import sys

from faithwatch.decoding.counterfactual import load_items
from faithwatch.decoding.coverage import fillers
from faithwatch.eval.decoding import read_answers


def rows(data: str, report: str):
    items = {i.id: i for i in load_items(data)}
    for r in read_answers(report):
        if r["strategy"] != "rerank-coverage":
            continue
        it = items[r["id"]]
        pool = [e["text"] for e in r["trace"] if e["kind"] == "candidate"]
        sel = next(e["beam"] for e in r["trace"] if e["kind"] == "select")
        keys = [fillers(it.question, t, it.context) for t in pool]
        support = sum(1 for j, k in enumerate(keys) if j != sel and k & keys[sel])
        yield {"id": r["id"], "kind": it.kind, "success": r["success"], "declined": r.get("declined"),
               "common": r.get("common_hit"), "sampled": len(pool) > 1, "support": support,
               "n_pool": len(pool), "greedy_agrees": sel == 0 or bool(keys[0] & keys[sel]),
               "fillers": sorted(keys[sel]), "answer": r["answer"][:120]}


if __name__ == "__main__":
    args = sys.argv[1:]
    for data, report in zip(args[::2], args[1::2], strict=True):
        for row in rows(data, report):
            print(json.dumps({"report": report, **row}))
