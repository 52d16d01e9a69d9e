"""The shipped detector on labelled sets it never trained on: AUROC, threshold cost, unlabelled shift (scratch).

For each set: the detector's sentence AUROC and `align_score`'s, how many sentences the shipped threshold flags, the
balanced accuracy at it and at the set's own best threshold (the gap is the calibration cost), and the cost after
`calibrate --unlabelled` on the same sentences (labels unused for the shift). With --parts, also the AUROC of each
part of `align_score` (NLI, lexical, embedding), rescored here (about a minute per 300 responses).

    python training/experiments/never_seen.py training/data/begin-dev-cmu.tsv training/data/begin-dev-tc.tsv \
        build/extra-data/cliff-xsum.jsonl build/extra-data/cliff-cnndm.jsonl training/data/ragtruth-data2txt.jsonl \
        build/extra-data/faceval.jsonl

Each set also gets its response-level AUROC (a response scored by its worst sentence).
"""

from __future__ import annotations

import copy
import sys

import numpy as np
from sklearn.metrics import roc_auc_score

from faithwatch.detectors.calibration import best_balanced_accuracy, weighted_balanced_accuracy
from faithwatch.detectors.shipped import default_detector
from faithwatch.eval.harness import response_level
from faithwatch.eval.pipeline import extraction_monitor, load_labelled
from faithwatch.eval.recalibration import adapt_unlabelled
from faithwatch.eval.training import syncheck_scores


def part_aurocs(monitor, table, examples) -> dict[str, float]:
    """AUROC of each part of the monitor's combined alignment scorer on ``table``'s sentences."""
    by_id = {e.id: e for e in examples}
    out = {s.name: np.zeros(len(table)) for s in monitor.alignment.scorers}
    for ex_id, idx in table.groupby("example_id").indices.items():
        ex, texts = by_id[ex_id], table.text.iloc[idx].tolist()
        for s in monitor.alignment.scorers:
            asked = (ex.question,) if getattr(s, "reads_question", False) else ()
            out[s.name][idx] = s.score_many(texts, ex.context, *asked)
    y = table.label.to_numpy().astype(int)
    return {name: round(float(roc_auc_score(y, -v)), 3) for name, v in out.items()}


def response_aurocs(det, examples, sentences) -> str:
    """Response-level AUROC of the detector and of `align_score`, each response scored by its worst sentence
    (:func:`~faithwatch.eval.harness.response_level`; every sentence of a response with a response label)."""
    p = response_level(examples, sentences, syncheck_scores(det, sentences))
    a = response_level(examples, sentences, sentences.align_score.to_numpy(), framing=False)
    y = p.label.to_numpy().astype(int)
    return (f"{len(p)}, {y.mean():.2f} unfaithful; AUROC (worst sentence) {roc_auc_score(y, -p.score):.3f}, "
            f"align_score {roc_auc_score(y, -a.score):.3f}")


def main(sets: list[str], parts: bool) -> None:
    monitor = extraction_monitor(None, "nli-minilm+lexical+embedding")
    data = load_labelled(sets, monitor, text_only=True)
    det = default_detector(None)
    for name, d in data.items():
        t = d.sentences[d.sentences.label.notna()].reset_index(drop=True)
        y = t.label.to_numpy().astype(int) == 1
        p = syncheck_scores(det, t)
        ba = weighted_balanced_accuracy(p, y, det.threshold)
        best = best_balanced_accuracy(p, y)
        shifted = copy.deepcopy(det)
        shift = adapt_unlabelled(shifted, t, source=name)
        ba_shifted = weighted_balanced_accuracy(syncheck_scores(shifted, t), y, shifted.threshold)
        print(f"{name}: {len(t)} sentences, {y.mean():.2f} unfaithful; AUROC {roc_auc_score(y, -p):.3f}, align_score "
              f"{roc_auc_score(y, -t.align_score):.3f}; flagged {np.mean(p < det.threshold):.2f}; BA {ba:.3f} at the "
              f"threshold, {best:.3f} at the best: cost {best - ba:.3f}; after the unlabelled shift "
              f"({shift.shift:+.2f}) {best - ba_shifted:.3f}", flush=True)
        print(f"  responses: {response_aurocs(det, d.examples, d.all_sentences)}", flush=True)
        if parts:
            print(f"  parts of align_score: {part_aurocs(monitor, t, d.examples)}", flush=True)


if __name__ == "__main__":
    main([a for a in sys.argv[1:] if a != "--parts"], "--parts" in sys.argv)
