"""Issue 12: does an ensemble of the NLI adapters trained on the GPU transfer better than the shipped one alone?

The twenty-second session trained three more adapters with the shipped recipe (g14: seed 14; ws13 / ws14:
``--doc-window-swaps`` at seeds 13 / 14) and scored every sentence of the six LOO sets, the augmentation set and
five never-seen sets with each, and with the shipped adapter, on one GPU (``build/gpu-ab/scores_*.json``; not
committed: rebuilt by ``training/device/run.sh``). None alone beat the shipped adapter. Averaging models is the
usual cure for seed noise, so this averages their NLI scores (each the max over windows of p(entailment)) and
replaces the NLI third of ``align_score`` by the average, through ``faith_tune_loo.evaluate``:

* ``ens2``: the shipped adapter and g14 (two seeds of the shipped recipe);
* ``ens4``: all four (the candidate).

Rule, committed before the first run: ``ens4`` is worth pursuing (a weight-averaged soup that costs one NLI pass,
measured next) only if, against the shipped NLI with the shipped recipe,

1. the detector's LOO mean AUROC over the six sets rises by at least 0.005;
2. no held-out set falls by more than 0.01;
3. the worst gain over ``align_score`` (each computed with its own NLI third) is not lower;
4. the mean AUROC over the five never-seen sets (recipe trained on all six) is not lower.

    python training/experiments/nli_ensemble.py [--scores build/gpu-ab] [--out /tmp/nli-ensemble]
"""

from __future__ import annotations

import argparse
import json
from pathlib import Path

import numpy as np
from faith_tune_loo import evaluate

ROOT = Path(__file__).resolve().parents[2]
NEVER_SEEN = ["training/data/begin-dev-cmu.tsv", "training/data/begin-dev-tc.tsv", "build/extra-data/cliff-xsum.jsonl",
              "build/extra-data/cliff-cnndm.jsonl", "training/data/ragtruth-data2txt.jsonl"]
MEMBERS = {"ens2": ("g14",), "ens4": ("g14", "ws13", "ws14")}


def ensemble(runs: dict[str, dict], members: tuple[str, ...]) -> dict:
    """Per set: ``base`` the shipped adapter's scores, ``tuned`` their mean with ``members``' scores."""
    first = runs[members[0]]
    out = {}
    for name, s in first.items():
        base = np.asarray(s["base"], dtype=float)
        for m in members:
            if not np.allclose(runs[m][name]["base"], base):
                raise SystemExit(f"{m}: the shipped adapter's scores of {name} differ between runs")
        mean = np.mean([base] + [np.asarray(runs[m][name]["tuned"], dtype=float) for m in members], axis=0)
        out[name] = {"base": base.tolist(), "tuned": mean.tolist(), "insample": s["insample"]}
    return out


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--scores", type=Path, default=ROOT / "build" / "gpu-ab")
    p.add_argument("--out", type=Path, default=Path("/tmp/nli-ensemble"))
    args = p.parse_args()
    runs = {m: json.loads((args.scores / f"scores_{m}.json").read_text()) for m in ("g14", "ws13", "ws14")}
    args.out.mkdir(parents=True, exist_ok=True)
    for label, members in MEMBERS.items():
        (args.out / f"scores_{label}.json").write_text(json.dumps(ensemble(runs, members)))
    evaluate(args.out, NEVER_SEEN)


if __name__ == "__main__":
    main()
