"""Issue 12, decoding: τ chosen by leave one *set* out over fresh sets run at several τ (no model runs).

Each argument is ``SET=FOLDER[,FOLDER...]``: the eval-decoding reports of one fresh set, one per τ point, the
first holding greedy too (the baseline). For each held-out set the τ point with the most counterfactual successes
on the other sets is chosen (``faithwatch.eval.decoding_cv``'s objective; a tie keeps the earlier point, the
default), and the held-out set is scored with it. Prints the choice per set and the pooled out-of-fold success
against greedy's, with the paired bootstrap gain (``eval.decoding_summary.summarize``). A second.

    python training/experiments/cv_tau_sets.py \
        19=docs/results/decoding-fresh19,docs/results/decoding-fresh19-tau06  20=...
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

from faithwatch.eval.decoding import read_answers
from faithwatch.eval.decoding_summary import summarize

STRATEGY = "fod-fallback"


def rows_of(folder: str, strategy: str) -> list[dict]:
    """The ``strategy`` rows of one report (``eval.decoding.read_answers``)."""
    return [r for r in read_answers(folder) if r["strategy"] == strategy]


def label(folder: str) -> str:
    """The τ point of a report, read from its results.json."""
    params = json.loads(Path(folder, "results.json").read_text(encoding="utf-8"))["meta"]["params"]
    return f"{params['tau1']:g}:{params['tau2']:g}"


def main(specs: list[str]) -> None:
    sets = {}
    for spec in specs:
        name, _, folders = spec.partition("=")
        sets[name] = folders.split(",")
    points = {name: [rows_of(f, STRATEGY) for f in folders] for name, folders in sets.items()}
    if len({len(p) for p in points.values()}) != 1:
        raise SystemExit("every set needs the same number of τ points")
    n_points = len(next(iter(points.values())))

    def successes(name: str, k: int) -> int:
        return sum(r["success"] for r in points[name][k] if not r.get("agrees"))

    pooled = []
    for name, folders in sets.items():
        others = [m for m in sets if m != name]
        best = max(range(n_points), key=lambda k: (sum(successes(m, k) for m in others), -k))
        agreeing = sum(r["success"] for r in points[name][best] if r.get("agrees"))
        print(f"{name}: chose {label(folders[best])} (other sets' counterfactual successes "
              f"{[sum(successes(m, k) for m in others) for k in range(n_points)]}); held out "
              f"{successes(name, best)} counterfactual, {agreeing} agreeing")
        pooled += [dict(r, strategy=f"{STRATEGY} (τ cross-validated)") for r in points[name][best]]
        pooled += rows_of(folders[0], "greedy")
        for k in range(n_points):
            pooled += [dict(r, strategy=f"{STRATEGY} {label(folders[k])}") for r in points[name][k]]
    strategies = list(dict.fromkeys(r["strategy"] for r in pooled))
    strategies.insert(0, strategies.pop(strategies.index("greedy")))
    table = summarize(pooled, strategies)
    cols = ["strategy", "success_rate", "success_gain", "success_gain_low", "success_gain_high", "agree_success_rate"]
    print(table[cols].to_string(index=False, float_format=lambda x: f"{x:.3f}"))


if __name__ == "__main__":
    if len(sys.argv) < 2:
        raise SystemExit(__doc__)
    main(sys.argv[1:])
