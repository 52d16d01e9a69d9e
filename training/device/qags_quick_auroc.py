"""Quick QAGS sentence-level AUROC of ``1 - align_score`` for NLI artifacts, on the given summary sentences.

A model-selection aid for GPU sweeps (no language model, no feature cache); the reported figures come from
``faithwatch eval-alignment``. Usage: qags_quick_auroc.py BASE_DIR DATA_ROOT ARTIFACT...
"""
import os
import sys
import time
from pathlib import Path

import numpy as np
from sklearn.metrics import roc_auc_score

import faithwatch.nli.artifact as art
from faithwatch.alignment.minilm import MiniLMNLIScorer
from faithwatch.data.loaders import load_qags

base = Path(sys.argv[1])
art.default_base_dir = lambda: base  # the base copy on this machine
examples = load_qags(Path(sys.argv[2]))
for d in sys.argv[3:]:
    t = time.time()
    scorer = MiniLMNLIScorer(d, device=os.environ.get("DEVICE", "cuda"), batch_size=256)
    y, s = [], []
    for ex in examples:
        spans = [sp for sp in ex.spans if sp.label != "excluded"]
        scores = scorer.score_many([ex.response[sp.start:sp.end] for sp in spans], ex.context)
        y += [sp.label == "unfaithful" for sp in spans]
        s += [1 - v for v in scores]
    print(f"QAGS {d}: AUROC {roc_auc_score(np.array(y), np.array(s)):.4f} n={len(y)} ({time.time() - t:.0f}s)")
