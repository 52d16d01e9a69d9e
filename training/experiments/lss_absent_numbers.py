"""Rule A of docs/lss.md ("A number the reference lacks") measured on out-of-fold tagger rows.

Reads the rows of one cross-validation run (:func:`faithwatch.eval.lss_tagger.cross_validate`, as ``jsonl``), caps
the words holding a number the reference lacks (:func:`faithwatch.claims.lss.cap_absent_numbers`) in the same
probabilities, and writes ``base-13.jsonl`` and ``absentnum-13.jsonl`` to OUT for ``python
training/device/tagger_sweep.py summarize OUT`` (Pearson with the human rating, paired bootstrap over pairs). Prints
both versions' agreement with the human LSS (word F1) and how many words the rule caps.

    python training/experiments/lss_absent_numbers.py OOF.jsonl OUT
"""

from __future__ import annotations

import argparse
import json
from pathlib import Path

import numpy as np
import pandas as pd

from faithwatch.claims.lss import cap_absent_numbers
from faithwatch.data.loaders import data_root
from faithwatch.eval.lss import evaluate_lss_dev, load_lss_dev
from faithwatch.eval.lss_tagger import examples_from_lss_dev, result_rows


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__)
    ap.add_argument("oof")
    ap.add_argument("out")
    args = ap.parse_args()
    df = load_lss_dev(data_root(None))
    examples = {e.pair_id: e for e in examples_from_lss_dev(df)}
    rows = [json.loads(line) for line in Path(args.oof).read_text().splitlines() if line.strip()]
    ex = [examples[str(r["pair_id"])] for r in rows]
    probs = [np.array(r["word_support"], dtype=float) for r in rows]
    capped = [cap_absent_numbers(p, e.words, e.reference) for p, e in zip(probs, ex, strict=True)]
    n_capped = sum(int((c < p).sum()) for p, c in zip(probs, capped, strict=True))
    n_words = sum(int((c != p).size) for p, c in zip(probs, capped, strict=True))
    out = Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    tables = {}
    for name, ps in (("base-13", probs), ("absentnum-13", capped)):
        new = result_rows(ex, ps, 0.5, name, 0.0)
        (out / f"{name}.jsonl").write_text("".join(json.dumps(r) + "\n" for r in new))
        tables[name] = pd.DataFrame(new)
    agreement = evaluate_lss_dev(df, tables, n_boot=0)["agreement with the human LSS"]
    print(f"words capped: {n_capped} of {n_words}")
    print(agreement.to_string())


if __name__ == "__main__":
    main()
