"""Issue 12: framing lines ("Here is a summary of the article:"), framing rule 1 (docs/transfer.md, "Framing
lines"). Scratch measurement of the two registered ways to score them:

* A: a text family ``framing`` (1 for a framing line, direction +1) added to the shipped recipe;
* B: the shipped recipe, and a framing line's score replaced by the share of framing lines that are faithful in the
  training sets (each set weighted equally);
* C: the shipped recipe, and a framing line's score raised to the detector's threshold when below it (framing lines
  as `text.is_framing` reads them now: rules 1 and 2; the figures of rule 1 alone are in docs/transfer.md).

Prints, for each of the six labelled sets: its framing lines, how many are unfaithful; LOO AUROC of the shipped
recipe, A, B and C (also with the framing lines left out), ``align_score`` and the best single signal; for C the
calibration cost (best balanced accuracy minus that at the fold's threshold) and the response AUROC (a response
scored by its lowest sentence); the blatant suite; and sentence AUROC on the never-seen sets (each scored by the
recipe trained on all six).

    python training/experiments/framing_lines.py     # ~5 min once the caches of all eleven sets exist
"""

from __future__ import annotations

import numpy as np
import pandas as pd
from aggregator_variants import AUGMENT, SETS, shipped_recipe, with_extra_family
from recipe_targets import suite_table
from sklearn.metrics import roc_auc_score

import faithwatch.eval.training as tr
from faithwatch.detectors.calibration import best_balanced_accuracy, weighted_balanced_accuracy
from faithwatch.eval.pipeline import extraction_monitor, load_labelled
from faithwatch.eval.transfer import held_out_names, single_signal_scores
from faithwatch.text import is_framing

NEVER_SEEN = ("training/data/ragtruth-data2txt.jsonl", "training/data/begin-dev-cmu.tsv",
              "training/data/begin-dev-tc.tsv", "build/extra-data/cliff-xsum.jsonl",
              "build/extra-data/cliff-cnndm.jsonl")


def with_framing(table: pd.DataFrame) -> pd.DataFrame:
    return table.assign(framing=[float(is_framing(t)) for t in table.text])


def framing_share(train: pd.DataFrame) -> float:
    """P(faithful | framing line) in ``train``, every real data set with framing lines weighted equally."""
    rows = train[(train.framing == 1) & ~train.train_only.astype(bool) & train.label.notna()]
    return float(np.mean([1 - g.label.mean() for _, g in rows.groupby("dataset")]))


def unfloored(det, table: pd.DataFrame) -> np.ndarray:
    """P(faithful) of the rows without the framing floor (``tr.syncheck_scores`` applies it since way C)."""
    return det.predict_proba_faithful(tr.with_derived(table, det)[det.meta.feature_names].to_numpy(dtype=float))


def auc(y, p) -> float:
    return float(roc_auc_score(y, -np.asarray(p)))


def floor(p: np.ndarray, framing: np.ndarray, threshold: float) -> np.ndarray:
    """Way C: framing lines raised to ``threshold``."""
    return np.where(framing == 1, np.maximum(p, threshold), p)


def response_auc(every: pd.DataFrame, p: np.ndarray) -> float:
    resp = every.assign(p=p).groupby("example_id").agg(p=("p", "min"), label=("response_label", "first")).dropna()
    return auc(resp.label.astype(int).to_numpy(), resp.p.to_numpy())


def main() -> None:
    monitor = extraction_monitor(None, "nli-minilm+lexical+embedding")
    data = load_labelled(list(SETS), monitor, text_only=True, augment=list(AUGMENT))
    tables = {n: with_framing(d.sentences[d.sentences.label.notna()].reset_index(drop=True)) for n, d in data.items()}
    every = {n: with_framing(d.all_sentences.reset_index(drop=True)) for n, d in data.items()}
    shipped = shipped_recipe()
    a = with_extra_family(shipped, "framing", "framing", 1)
    held = held_out_names(tables)
    print(f"{'held out':<18}{'framing':>8}{'unf':>5}{'shipped':>9}{'A':>8}{'B':>8}{'C':>8}{'align':>8}"
          f"{'best single':>22}{'  | framing left out: shipped, A, B, align'}")
    for name in held:
        train = pd.concat([t for n, t in tables.items() if n != name], ignore_index=True)
        test = tables[name]
        y = test.label.to_numpy().astype(int)
        base = tr.fit_syncheck(train, shipped, model_id="text-only")
        p0 = unfloored(base, test)
        pa = unfloored(tr.fit_syncheck(train, a, model_id="text-only"), test)
        share = framing_share(train)
        frame = test.framing.to_numpy() == 1
        pb = np.where(frame, share, p0)
        pc = floor(p0, test.framing.to_numpy(), base.threshold)
        singles = {f: auc(y, v) for f, v in single_signal_scores(train, test, "text-only").items()}
        best = max(singles, key=singles.get)
        keep = ~frame
        left = [auc(y[keep], p[keep]) for p in (p0, pa, pb, test.align_score.to_numpy())] if frame.any() else []
        print(f"{name.split('/')[-1][:17]:<18}{int(frame.sum()):>8}{int(y[frame].sum()):>5}{auc(y, p0):9.4f}"
              f"{auc(y, pa):8.4f}{auc(y, pb):8.4f}{auc(y, pc):8.4f}{singles['align_score']:8.4f}{best:>15} "
              f"{singles[best]:.4f}" + ("  | " + " ".join(f"{v:.4f}" for v in left) if left else "")
              + f"   (B share {share:.3f})", flush=True)
        cost = [best_balanced_accuracy(p, y == 1) - weighted_balanced_accuracy(p, y == 1, base.threshold)
                for p in (p0, pc)]
        e = every[name]
        e0 = unfloored(base, e)
        print(f"    C: calibration cost {cost[0]:.4f} -> {cost[1]:.4f}; response AUROC "
              f"{response_auc(e, e0):.4f} -> {response_auc(e, floor(e0, e.framing.to_numpy(), base.threshold)):.4f}"
              f"; framing lines flagged {np.mean(p0[frame] < base.threshold) if frame.any() else 0:.2f} -> 0")
    rows = pd.concat(tables.values(), ignore_index=True)
    full0 = tr.fit_syncheck(rows, shipped, model_id="text-only")
    fulla = tr.fit_syncheck(rows, a, model_id="text-only")
    print("A weights:", dict(zip(fulla.meta.feature_names, np.round(fulla.weights["lr.coef"], 3), strict=False)))
    share = framing_share(rows)
    suite = suite_table(monitor.alignment).assign(framing=0.0)
    for label, det in (("shipped", full0), ("A", fulla)):
        flagged = unfloored(det, suite) < det.threshold
        print(f"blatant {label}: errors flagged {flagged[suite.error].mean():.3f}, supported passed "
              f"{1 - flagged[~suite.error].mean():.3f} (threshold {det.threshold:.4f})")
    seen = load_labelled(list(NEVER_SEEN), monitor, text_only=True)
    for name, d in seen.items():
        t = with_framing(d.sentences[d.sentences.label.notna()].reset_index(drop=True))
        y = t.label.to_numpy().astype(int)
        p0 = unfloored(full0, t)
        pb = np.where(t.framing == 1, share, p0)
        pc = floor(p0, t.framing.to_numpy(), full0.threshold)
        print(f"never seen {name.split('/')[-1]}: framing {int(t.framing.sum())}, shipped {auc(y, p0):.4f}, "
              f"A {auc(y, unfloored(fulla, t)):.4f}, B {auc(y, pb):.4f}, C {auc(y, pc):.4f}", flush=True)


if __name__ == "__main__":
    main()
