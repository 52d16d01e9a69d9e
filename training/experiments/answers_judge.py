"""Issue 12, decoding: the embedded SmolLM2-135M-Instruct asked whether an answer answers its question (scratch).

Question coverage counts a description as filling a "who" / "which" slot ("The French Fifth Republic is the system
of government that France has used since 1958 ..." for "Who was the first President of the French Fifth
Republic?"), fod-fallback's most frequent out-of-sample loss. Could the monitored model tell? For every distinct
(question, answer) stored in ``docs/results/decoding*/answers.jsonl.gz`` that coverage reads as complete (no slot open,
with the item's context), the model reads the question and the answer (not the context) and is asked whether the
answer gives what the question asks; the score is log P(Yes) − log P(No) over the first answer token. Printed:
the AUROC of the score for "names every context-answer group" (the answers missing a fact include wrong names,
which do answer: no judge of *form* can catch those), and how many answers missing a fact fall below thresholds
that pass 99% / 95% of the complete ones. No model is trained; every stored answer is in-sample.

**Measured (2026-11-29, thirty-third session): chance, not kept.** 1,851 distinct answers (297 missing a fact),
AUROC 0.510; passing 95% of the complete answers, it would catch 14 of the 297 (6.5 min on 2 cores). The lowest
scores are short right answers ("Sydney is the largest city in Australia.").

    OMP_NUM_THREADS=2 PYTHONPATH=training/experiments python training/experiments/answers_judge.py [--show]
"""

from __future__ import annotations

import sys
import time
from pathlib import Path

import numpy as np
import torch
from coverage_context import contexts
from coverage_verbs import stored_rows
from llm_judge import YesNoJudge
from sklearn.metrics import roc_auc_score

from faithwatch.decoding import coverage as cov
from faithwatch.decoding.counterfactual import mentions_any
from faithwatch.models.loading import load_model

ROOT = Path(__file__).resolve().parents[2]
PROMPT = ("Question: {question}\n\nAnswer: {answer}\n\nDoes the answer say what the question asks for (right or "
          "wrong)? Answer Yes or No.")


def pairs() -> list[tuple[str, str, int]]:
    """Distinct (question, answer, 1 if it names every context-answer group) that coverage reads as complete."""
    ctx, out, seen = contexts(), [], set()
    for _, r in stored_rows():
        if r["refused"] or not r.get("context_answers") or not cov.question_slots(r["question"]):
            continue
        key = (r["question"], r["answer"])
        if key in seen or ctx.get(r["id"]) is None or cov.open_slots(*key, ctx[r["id"]]):
            continue
        seen.add(key)
        groups = r["context_answers"] if isinstance(r["context_answers"][0], list) else [r["context_answers"]]
        out.append((*key, int(all(mentions_any(r["answer"], g) for g in groups))))
    return out


def main(show: bool) -> None:
    torch.set_num_threads(2)
    judge = YesNoJudge(load_model())
    rows, start = pairs(), time.time()
    scores = [judge(PROMPT.format(question=question, answer=answer))[0] for question, answer, _ in rows]
    y = np.array([c for *_, c in rows])
    s = np.array(scores)
    print(f"{len(rows)} distinct complete-by-coverage answers ({int((1 - y).sum())} missing a fact); AUROC for "
          f"complete {roc_auc_score(y, s):.3f}; {time.time() - start:.0f} s")
    for keep in (0.99, 0.95, 0.9):
        thr = np.quantile(s[y == 1], 1 - keep)
        caught = (s[y == 0] < thr).sum()
        print(f"  threshold passing {keep:.0%} of complete answers ({thr:+.2f}): {caught} of {int((1 - y).sum())} "
              f"missing a fact fall below")
    if show:
        order = np.argsort(s)
        for i in order[:40]:
            print(f"{s[i]:+.2f} {'complete' if y[i] else 'MISSING'} | {rows[i][0]} | {rows[i][1][:120]!r}")


if __name__ == "__main__":
    main("--show" in sys.argv)
