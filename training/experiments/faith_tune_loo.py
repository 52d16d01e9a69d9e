"""Issue 12: does an NLI model fine-tuned on the labelled sets (AlignScore's idea) transfer better, LOO?

A scratch measurement in two halves around one GPU run (docs/transfer.md, "The NLI model tuned on the labelled
sets"):

* ``export``: every sentence of the six labelled sets and of the augmentation set (the text-only cache's rows,
  in its order), with its label and the context windows that ``nli-minilm`` reads for it, written gzipped to
  ``.gpu/ft/`` for ``training/device/faith_tune.py``;
* on the GPU, ``faith_tune.py`` continues the shipped adapter's training once per held-out set (on the other
  five sets plus NLI pairs) and scores the held-out set's sentences: out-of-fold NLI scores;
* ``evaluate``: replaces the NLI third of ``align_score`` by the out-of-fold score and prints LOO AUROC of
  ``align_score`` alone and of the shipped recipe, before and after; then keeps ``align_score`` as it is and adds
  the out-of-fold score as one more feature. (Each training set's tuned score comes from an adapter that saw the
  held-out set's labels: a second-order leak into the aggregator's weights, not into the held-out scores.)

    python training/experiments/faith_tune_loo.py export
    python training/experiments/faith_tune_loo.py evaluate --scores DIR   # DIR: the GPU run's scores_*.json
"""

from __future__ import annotations

import argparse
import gzip
import json
from pathlib import Path

import numpy as np
import pandas as pd

# sibling scripts, on sys.path when this one runs
from aggregator_variants import AUGMENT, SETS, print_loo, with_extra_family

import faithwatch.eval.training as training
from faithwatch.eval.pipeline import extraction_monitor, load_labelled

ROOT = Path(__file__).resolve().parents[2]


def short(name: str) -> str:
    """The set's name without folder and suffix (the key of the exported rows)."""
    return Path(name).stem


def tables_and_data():
    """The cached text-only tables of the six sets and the augmentation set, and the monitor's NLI scorer."""
    monitor = extraction_monitor(None, "nli-minilm+lexical+embedding")
    data = load_labelled(list(SETS), monitor, text_only=True, augment=list(AUGMENT))
    nli = next(s for s in monitor.alignment.scorers if s.name == "nli-minilm")
    return {n: d.sentences.reset_index(drop=True) for n, d in data.items()}, data, nli


def export(out: Path) -> None:
    """Write sentences.jsonl.gz (set, row, text, label, window key) and windows.json.gz to ``out``."""
    tables, data, nli = tables_and_data()
    out.mkdir(parents=True, exist_ok=True)
    windows: dict[str, list[str]] = {}
    rows = []
    for name, t in tables.items():
        contexts = {e.id: e.context for e in data[name].examples}
        for i, (text, ex_id, label) in enumerate(zip(t.text, t.example_id, t.label, strict=True)):
            chunks = nli.chunks_for(text, contexts[ex_id])
            key = f"{short(name)}|{ex_id}|{len(chunks)}|{hash(tuple(chunks)) & 0xFFFFFFFF:x}"
            windows.setdefault(key, chunks)
            rows.append({"set": short(name), "row": i, "hyp": nli._hypothesis(text), "unfaithful": int(label),
                         "windows": key, "augment": name in AUGMENT})
    with gzip.open(out / "sentences.jsonl.gz", "wt", encoding="utf-8") as f:
        f.writelines(json.dumps(r) + "\n" for r in rows)
    with gzip.open(out / "windows.json.gz", "wt", encoding="utf-8") as f:
        json.dump(windows, f)
    pairs = sum(len(windows[r["windows"]]) for r in rows)
    print(f"{len(rows)} sentences, {len(windows)} window lists, {pairs} (window, sentence) pairs -> {out}")


def scores(got: dict, name: str, key: str) -> np.ndarray:
    """A set's ``key`` scores ("base" or "tuned") in row order; rows never held out (augmentation) keep "base"."""
    s = got[short(name)]
    return np.asarray([b if x is None else x for b, x in zip(s["base"], s[key], strict=True)])


def evaluate(scores_dir: Path) -> None:
    """LOO AUROC with the NLI third of ``align_score`` replaced by each run's out-of-fold scores."""
    tables, _, _ = tables_and_data()
    runs = sorted(p for p in scores_dir.glob("scores_*.json"))
    shipped = training.Recipe.from_dict(json.loads((ROOT / "training" / "recipe.json").read_text())["recipe"])
    print_loo(tables, {"shipped recipe, shipped NLI": shipped})
    for path in runs:
        got = json.loads(path.read_text())  # {set: {"base": [...], "tuned": [...]}} in the tables' row order
        new = {}
        for name, t in tables.items():
            base, tuned = scores(got, name, "base"), scores(got, name, "tuned")
            if len(base) != len(t):
                raise SystemExit(f"{path}: {short(name)} has {len(base)} scores for {len(t)} sentences")
            new[name] = t.assign(align_score=t["align_score"] + (tuned - base) / 3)
        print(f"\n{path.stem}: align_score with the tuned NLI third (out of fold on the held-out sets)")
        print_loo(new, {"shipped recipe, tuned NLI": shipped})
        extra = {n: t.assign(nli_tuned=scores(got, n, "tuned")) for n, t in tables.items()}
        print(f"\n{path.stem}: the tuned NLI score as a feature beside align_score (sign-constrained, +1)")
        print_loo(extra, {"shipped recipe + tuned NLI feature": with_tuned_feature(shipped)})
        for label, key in (("shipped", "base"), ("tuned", "tuned")):
            print(f"  NLI alone, {label}:")
            only = {n: t.assign(align_score=scores(got, n, key)) for n, t in tables.items()}
            print_loo(only, {})


def with_tuned_feature(recipe: training.Recipe) -> training.Recipe:
    """``recipe`` plus a family ``nli-tuned`` (the column ``nli_tuned``, higher = faithful), registered in-process."""
    return with_extra_family(recipe, "nli-tuned", "nli_tuned", 1)


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("step", choices=("export", "evaluate"))
    p.add_argument("--out", type=Path, default=ROOT / ".gpu" / "ft")
    p.add_argument("--scores", type=Path, help="folder of the GPU run's scores_*.json (evaluate)")
    args = p.parse_args()
    if args.step == "export":
        export(args.out)
    else:
        evaluate(args.scores)


if __name__ == "__main__":
    pd.set_option("display.width", 200)
    main()
