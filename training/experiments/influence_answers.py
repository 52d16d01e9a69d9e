"""Issue 12, decoding: does the signed context influence tell a wrong answer from a right one? (scratch)

fod-fallback's stage 1 keeps a greedy sentence whose detector score is at least τ1, and most of its out-of-sample
failures are such sentences: a remembered name ("The answer is: The Beatles." for an album the context gives to the
Byrds) scoring 0.6–0.8. The twin pass (the prompt without the context), which AdaCAD already runs, gives each
chosen token's pointwise context influence log p(y_t | x, c) − log p(y_t | x) (``signals.influence``): negative
where the context argues against the token. This teacher-forces every distinct greedy and fod-fallback answer
stored for the fresh sets and the packaged set (``docs/results/decoding*/answers.jsonl.gz``), and prints, for the
counterfactual and the agreeing items apart, the AUROC of the answer's lowest ``min_pci`` (over its sentences) and
of its lowest ``mean_pci`` for success, and how many right and wrong answers fall below a few cut-offs. No model is
trained; every stored answer is in-sample.

**Measured (2026-11-29, thirty-third session): too weak to build on, not kept.** 1,402 distinct answers (11 min on 2
cores). Counterfactual items (885, 571 right): AUROC for right 0.556 (``min_pci``) and 0.602 (``mean_pci``); below
−2 nats fall 12 wrong answers and 2 right ones; agreeing items (517): 0.508 and 0.487. Over fod-fallback's own
answers, ``mean_pci`` < 0.25 holds 18 wrong and 17 right counterfactual answers and 33 right agreeing ones.

    OMP_NUM_THREADS=2 PYTHONPATH=training/experiments python training/experiments/influence_answers.py
"""

from __future__ import annotations

import json
import time
from pathlib import Path

import numpy as np
from coverage_context import contexts
from coverage_verbs import stored_rows
from sklearn.metrics import roc_auc_score

from faithwatch.monitor import Monitor

ROOT = Path(__file__).resolve().parents[2]
STRATEGIES = ("greedy", "fod-fallback")


def answers() -> list[dict]:
    """Distinct (id, answer) rows of greedy and fod-fallback, refusals left out."""
    ctx, out, seen = contexts(), [], set()
    for _, r in stored_rows():
        if r["strategy"] not in STRATEGIES or r["refused"] or "success" not in r or not r["answer"].strip():
            continue
        key = (r["id"], r["answer"])
        if key in seen or ctx.get(r["id"]) is None:
            continue
        seen.add(key)
        out.append({"id": r["id"], "question": r["question"], "context": ctx[r["id"]], "answer": r["answer"],
                    "success": bool(r["success"]), "agrees": bool(r.get("agrees")), "strategy": r["strategy"]})
    return out


def main() -> None:
    rows, start = answers(), time.time()
    monitor = Monitor(signals=["influence", "likelihood"], detector="heuristic", alignment="none")
    for r in rows:
        sentences = monitor.score(r["question"], r["context"], r["answer"]).sentences
        r["min_pci"] = min(s.features["min_pci"] for s in sentences) if sentences else 0.0
        r["mean_pci"] = min(s.features["mean_pci"] for s in sentences) if sentences else 0.0
    print(f"{len(rows)} distinct answers, {time.time() - start:.0f} s")
    for kind, agrees in (("counterfactual", False), ("agreeing", True)):
        part = [r for r in rows if r["agrees"] == agrees]
        y = np.array([r["success"] for r in part])
        print(f"{kind}: {len(part)} answers, {int(y.sum())} right")
        for f in ("min_pci", "mean_pci"):
            x = np.array([r[f] for r in part])
            print(f"  {f}: AUROC for right {roc_auc_score(y, x):.3f}")
        x = np.array([r["min_pci"] for r in part])
        for cut in (-1.0, -2.0, -3.0, -4.0):
            below = x < cut
            print(f"  min_pci < {cut:g}: {int((below & y).sum())} right, {int((below & ~y).sum())} wrong")
    out = ROOT / "build" / "influence_answers.jsonl"
    out.parent.mkdir(exist_ok=True)
    out.write_text("".join(json.dumps(r) + "\n" for r in rows), encoding="utf-8")
    print(f"rows: {out}")


if __name__ == "__main__":
    main()
