"""Issue 12, item 4: the in-window swaps of ``train-nli --doc-window-swaps`` labelled *neutral* (scratch).

A short CPU A/B (docs/nli.md, "Values swapped within the premise") found that in-window swaps labelled as
contradictions make the adapter doubt every sentence rather than the swapped ones. This runs the same short recipe
with those swaps labelled neutral: ``train-nli``'s on-topic pairs are built with ``window_swaps=True`` and every
contradiction that is a window sentence with a value of another window sentence put in is relabelled neutral. Then
it prints MNLI-mismatched accuracy and the swap diagnostic (``nli_in_window_swaps.py``) for the adapter.

    python training/experiments/nli_window_neutral.py OUT_DIR     # about 10 min on 2 CPU cores
"""

from __future__ import annotations

import dataclasses
import subprocess
import sys
from pathlib import Path

import faithwatch.nli.train as train
from faithwatch.data.loaders import data_root
from faithwatch.nli.data import LABEL_IDS
from faithwatch.nli.synthetic import document_pairs, is_window_swap


def neutral_window_pairs(texts, n, seed=0, **kw):  # noqa: ANN001, ANN201 - document_pairs' signature
    """document_pairs with window swaps, those swaps labelled neutral."""
    pairs = document_pairs(texts, n, seed=seed, **kw)
    return [dataclasses.replace(p, label=LABEL_IDS["neutral"]) if p.label == LABEL_IDS["contradiction"]
            and is_window_swap(p.premise, p.hypothesis) else p for p in pairs]


def main(out: Path) -> None:
    import torch

    torch.set_num_threads(2)  # as train-nli --threads 2
    train.document_pairs = neutral_window_pairs  # the recipe builds its on-topic pairs through this name
    cfg = train.TrainConfig(train_file=str(data_root() / "nli" / "train.jsonl"), out_dir=str(out),
                            sources=sorted(train.LICENSED_SOURCES), synthetic=0, doc_synthetic=15000,
                            doc_window_swaps=True, epochs=1, batch_size=64, lr=7e-4, max_length=128, seed=13,
                            limit=16000)
    train.train_nli(cfg)
    fw = Path(sys.executable).parent / "faithwatch"
    subprocess.run([str(fw), "eval-nli", "--model", str(out), "--sets", "mnli_mismatched_3way", "--baselines", ""],
                   check=True)
    subprocess.run([sys.executable, str(Path(__file__).with_name("nli_in_window_swaps.py")), "300", "--model",
                    str(out)], check=True)


if __name__ == "__main__":
    main(Path(sys.argv[1]))
