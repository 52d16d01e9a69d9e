"""`faithwatch check`'s checkers side by side (the choice of its default, 2026-11-28; docs/claims.md).

On labelled sets, each response is one claim (the whole response against its context): balanced accuracy of
"Entailment" as faithful. On the blatant suite, each sentence is one claim: the share of errors not Entailment and
of supported sentences Entailment. No training, no tuning.

    python training/experiments/checkers_compare.py training/data/begin-dev-cmu.tsv,training/data/begin-dev-tc.tsv
    python training/experiments/checkers_compare.py blatant
    python training/experiments/checkers_compare.py training/data/begin-dev-tc.tsv detector   # some checkers only
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

import numpy as np

from faithwatch.claims.checking import CheckerSpec, get_checker
from faithwatch.claims.types import Claim
from faithwatch.data.loaders import load_dataset

KINDS = ("nli", "alignment", "detector")


def blatant(kinds: tuple[str, ...] = KINDS) -> None:
    rows = [json.loads(line) for line in Path("tests/data/blatant.jsonl").read_text().splitlines() if line.strip()]
    for kind in kinds:
        checker = get_checker(CheckerSpec(kind=kind))
        flags = {"error": [], "supported": []}
        for r in rows:
            v = checker.check([Claim(r["sentence"], "sentence", (0, len(r["sentence"])))], [r["context"]],
                              r["question"])[0]
            flags[r["label"]].append(v.label != "Entailment")
        print(f"blatant {kind}: errors flagged {np.mean(flags['error']):.3f}, "
              f"supported passed {1 - np.mean(flags['supported']):.3f}", flush=True)


def labelled(names: list[str], kinds: tuple[str, ...] = KINDS) -> None:
    for name in names:
        examples = [e for e in load_dataset(name) if e.response_label is not None]
        y = np.array([e.response_label for e in examples])
        parts = [f"{name} n={len(examples)} unfaithful={y.mean():.2f}"]
        for kind in kinds:
            checker = get_checker(CheckerSpec(kind=kind))
            flag = np.array([checker.check([Claim(e.response, "response", (0, len(e.response)))], [e.context],
                                           e.question)[0].label != "Entailment" for e in examples])
            tpr, tnr = flag[y == 1].mean(), 1 - flag[y == 0].mean()
            parts.append(f"{kind}: BA {(tpr + tnr) / 2:.3f} (unfaithful flagged {tpr:.2f}, faithful passed {tnr:.2f})")
        print(" | ".join(parts), flush=True)


if __name__ == "__main__":
    if len(sys.argv) not in (2, 3):
        raise SystemExit(__doc__)
    chosen = tuple(sys.argv[2].split(",")) if len(sys.argv) == 3 else KINDS
    blatant(chosen) if sys.argv[1] == "blatant" else labelled(sys.argv[1].split(","), chosen)
