"""Issue 12, decoding: does the AdaCAD answer widen rerank-coverage's pool enough? (scratch, offline)

rerank-coverage pools the greedy answer with six samples from the model's own distribution. Where the model
remembers the common answer, its samples mostly say it too, and the pool holds no right answer: on fresh25–28 and
fresh33–36, choosing a right pooled answer whenever there is one would reach only 154 of 192 counterfactual items
(docs/decoding_eval.md, "What could choose better"), +15.6 points over greedy, so no chooser alone can meet the +15
target out of sample. AdaCAD (Wang et al., NAACL 2025) decodes greedily from the context-contrasted distribution,
which leans away from the remembered answer. Two variants, simulated from stored ``--traces`` runs of
rerank-coverage and one ``adacad`` run of the same items (the detector's sentence scores are the same whichever
run wrote a sentence; AdaCAD's answer is greedy, so adding it after the samples leaves them as they were):

* ``A``: rerank-coverage as it is, with the AdaCAD answer added to the pool when the pool is drawn;
* ``B``: the gate reads the AdaCAD answer instead of the greedy one (kept when it fills every slot and each
  sentence scores at least τ1); otherwise the pool is the greedy answer, the AdaCAD answer and the samples. Where
  the stored run drew no samples (its greedy answer passed the gate) and B's gate fails, B's pool here is the
  greedy and the AdaCAD answers only (a lower bound on what B would find).

The choice in the pool is rerank-coverage's: fewest open slots, then the best mean sentence score.

**The rule, written before the adacad runs were read** (this commit): a variant is worth building, and worth new
fresh sets to measure it out of sample, only if on these 192 counterfactual / 128 agreeing items it gains at
least 8 counterfactual successes over rerank-coverage as run (the 4.6-point gap is 9 items of 192; 8 allows for the
lower bound in B) and loses at most 2 agreeing successes. Every figure here is in-sample (these runs were read
before).

    for n in 25 26 27 28 33 34 35 36; do faithwatch eval-decoding --strategies adacad --max-new-tokens 64 \\
        --data training/data/counterfactual-qa-fresh$n.jsonl --report /tmp/adacad-fresh$n; done   # 2 min a set
    PYTHONPATH=training/experiments python training/experiments/rerank_adacad.py /tmp/adacad-fresh   # seconds
"""

from __future__ import annotations

import sys

import numpy as np
from rerank_choosers import pools

from faithwatch.decoding.counterfactual import success
from faithwatch.decoding.coverage import Coverage
from faithwatch.eval.decoding import read_answers
from faithwatch.params import DecodingParams
from faithwatch.text import split_sentences

SETS = {**{n: f"docs/results/decoding-fresh{n}-rerank-coverage-traces" for n in (25, 26, 27, 28)},
        **{n: f"docs/results/decoding-fresh{n}" for n in (33, 34, 35, 36)}}


def choose(pool: list[tuple[str, float]], coverage: Coverage) -> str:
    """rerank-coverage's choice (``decoding.strategies.most_complete``, on stored texts and scores rather than
    beams): the fewest open slots, then the best mean sentence score (the first of equals)."""
    return min(pool, key=lambda a: (coverage.open(split_sentences(a[0])), -a[1]))[0]


def main(prefix: str) -> None:
    tau1 = DecodingParams().tau1
    tally: dict[str, dict[bool, int]] = {k: {True: 0, False: 0} for k in ("greedy", "run", "adacad", "A", "B")}
    ceiling = {k: {True: 0, False: 0} for k in ("run", "A")}
    totals = {True: 0, False: 0}
    for n, report in SETS.items():
        data = f"training/data/counterfactual-qa-fresh{n}.jsonl"
        greedy = {r["id"]: r for r in read_answers(f"docs/results/decoding-fresh{n}") if r["strategy"] == "greedy"}
        ada = {r["id"]: r for r in read_answers(f"{prefix}{n}") if r["strategy"] == "adacad"}
        for item, rc, cands in pools([(data, report)]):
            g, a = greedy[item.id], ada[item.id]
            cf = not item.agrees
            totals[cf] += 1
            coverage = Coverage(item.question, item.context)
            drew = len(cands) > 1  # only the greedy answer: it passed the gate
            ada_pair = (a["answer"], float(np.mean([s["score"] for s in a["sentences"]])) if a["sentences"] else 0.0)
            a_pool = [*cands, ada_pair] if drew else [(rc["answer"], 0.0)]
            gate_b = (a["sentences"] and all(s["score"] >= tau1 for s in a["sentences"])
                      and not coverage.open([s["text"] for s in a["sentences"]]))
            b_choice = a["answer"] if gate_b else choose([cands[0], ada_pair, *cands[1:]], coverage)
            for key, text in (("greedy", g["answer"]), ("run", rc["answer"]), ("adacad", a["answer"]),
                              ("A", choose(a_pool, coverage)), ("B", b_choice)):
                tally[key][cf] += success(text, item)
            for key, pool in (("run", cands if drew else [(rc["answer"], 0.0)]), ("A", a_pool)):
                ceiling[key][cf] += any(success(t, item) for t, _ in pool)
    print(f"items: {totals[True]} counterfactual / {totals[False]} agreeing")
    for key, t in tally.items():
        print(f"{key:<8} {t[True]:4d} ({t[True] / totals[True]:.3f})  {t[False]:4d} ({t[False] / totals[False]:.3f})")
    for key, t in ceiling.items():
        print(f"ceiling {key}: {t[True]} / {t[False]} (a right answer chosen whenever the pool holds one)")
    for key in ("A", "B"):
        d_cf, d_ag = tally[key][True] - tally["run"][True], tally[key][False] - tally["run"][False]
        print(f"rule, {key}: counterfactual {d_cf:+d} (>= +8), agreeing {d_ag:+d} (>= -2):",
              "passes" if d_cf >= 8 and d_ag >= -2 else "fails")


if __name__ == "__main__":
    main(sys.argv[1] if len(sys.argv) > 1 else "/tmp/adacad-fresh")
