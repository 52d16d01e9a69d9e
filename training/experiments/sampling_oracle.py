"""Issue 12, decoding: how often does sampling produce a right answer at all? (scratch; an oracle ceiling)

fod-fallback chooses among sampled sentences by the detector's score and question coverage. If the right answer is
rarely among what the model samples, no better chooser can reach the +15-point target; if it often is, the chooser
is the bottleneck. This reads ``rerank`` runs made with ``--traces`` (six full answers sampled per item at the
default temperature, every one kept in the trace) and prints, pooled over the sets, for counterfactual and agreeing
items: greedy's and fod-fallback's success (from the stored default runs), rerank's, the share of items where
at least one of the six samples succeeds (the oracle), and two choosers over the same samples, judged by
``counterfactual.success``: ``coverage`` takes the sample with the fewest open question slots
(``coverage.open_slots`` with the context), then the best mean sentence score (rerank's own score); ``coverage+greedy``
does the same with greedy's stored answer as a seventh candidate. No model runs here.

    faithwatch eval-decoding --data training/data/counterfactual-qa-fresh19.jsonl --strategies rerank --traces \
        --max-new-tokens 64 --report docs/results/decoding-rerank-traces/fresh19   # 6.5 min per set; 19-22
    python training/experiments/sampling_oracle.py docs/results/decoding-rerank-traces 19 20 21 22

Measured (2026-11-29, thirty-third session; fresh19-22 were read before, so every figure is in-sample), successes
of 96 counterfactual / 64 agreeing items: greedy 49 / 47, fod-fallback 59 / 50, rerank 51 / 41, **oracle@6 84 /
63**, coverage 65 / 48, coverage+greedy 64 / 49. The rule for the coverage+greedy chooser (``rerank-coverage``)
is in docs/decoding_eval.md.
"""

from __future__ import annotations

import sys
from pathlib import Path

from cv_tau_sets import rows_of

from faithwatch.decoding import coverage as cov
from faithwatch.decoding.counterfactual import load_items, success

ROOT = Path(__file__).resolve().parents[2]


def main(folder: str, sets: list[str]) -> None:
    totals: dict[tuple[str, str], list[int]] = {}
    for n in sets:
        items = {i.id: i for i in load_items(ROOT / "training" / "data" / f"counterfactual-qa-fresh{n}.jsonl")}
        stored = ROOT / "docs" / "results" / f"decoding-fresh{n}"
        where = {"greedy": stored, "fod-fallback": stored, "rerank": Path(folder, f"fresh{n}")}
        runs = {name: {r["id"]: r for r in rows_of(at, name)} for name, at in where.items()}
        for item_id, r in runs["rerank"].items():
            item = items[item_id]
            kind = "agreeing" if item.agrees else "counterfactual"
            samples = [(e["text"], e["score"] or 0.0) for e in r["trace"] if e["kind"] == "candidate"]
            got = {name: int(run[item_id]["success"]) for name, run in runs.items()}
            got["oracle@6"] = int(any(success(t, item) for t, _ in samples))
            greedy = runs["greedy"][item_id]
            for name, pool in (("coverage", samples),
                               ("coverage+greedy", [*samples, (greedy["answer"], greedy["guide_score"] or 0.0)])):
                best = min(pool, key=lambda c: (cov.open_slots(item.question, c[0], item.context), -c[1]))
                got[name] = int(success(best[0], item))
            for name, v in got.items():
                totals.setdefault((kind, name), []).append(v)
    for (kind, name), v in sorted(totals.items()):
        print(f"{kind:15} {name:13} {sum(v):4} of {len(v)}  {sum(v) / len(v):.3f}")


if __name__ == "__main__":
    if len(sys.argv) < 3:
        raise SystemExit(__doc__)
    main(sys.argv[1], sys.argv[2:])
