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

    python training/experiments/faith_tune_loo.py export [--skeleton] [--never-seen SET,...]
    python training/experiments/faith_tune_loo.py verify [--never-seen SET,...]   # after a skeleton export
    python training/experiments/faith_tune_loo.py evaluate --scores DIR [--never-seen SET,...]   # DIR: scores_*.json

--never-seen adds sets that are only measured: exported (never trained on) and, in evaluate, scored by the recipe
trained on all the labelled sets. --skeleton exports the rows without computing their features (no cache needed).
"""

from __future__ import annotations

import argparse
import gzip
import json
from pathlib import Path
from types import SimpleNamespace

import numpy as np
import pandas as pd

# sibling scripts, on sys.path when this one runs
from aggregator_variants import AUGMENT, SETS, print_loo, shipped_recipe, with_extra_family
from sklearn.metrics import roc_auc_score

import faithwatch.eval.training as training
from faithwatch.data.loaders import load_dataset
from faithwatch.eval.features import extract_text_features
from faithwatch.eval.labels import label_sentences
from faithwatch.eval.pipeline import extraction_monitor, load_labelled

ROOT = Path(__file__).resolve().parents[2]


def short(name: str) -> str:
    """The set's name without folder and suffix (the key of the exported rows)."""
    return Path(name).stem


def tables_and_data(never_seen: list[str] | None = None):
    """The cached text-only tables of the six sets and the augmentation set (then those of ``never_seen``: sets
    only measured, their labelled sentences), their data and the monitor's NLI scorer."""
    monitor = extraction_monitor(None, "nli-minilm+lexical+embedding")
    data = load_labelled(list(SETS), monitor, text_only=True, augment=list(AUGMENT))
    tables = {n: d.sentences.reset_index(drop=True) for n, d in data.items()}
    if never_seen:
        extra = load_labelled(never_seen, monitor, text_only=True)
        data.update(extra)
        tables.update({n: d.sentences[d.sentences.label.notna()].reset_index(drop=True) for n, d in extra.items()})
    nli = next(s for s in monitor.alignment.scorers if s.name == "nli-minilm")
    return tables, data, nli


def skeleton_tables(never_seen: list[str]):
    """The same rows as :func:`tables_and_data` without their features (no NLI pass: seconds, not an hour), for
    an export before the feature caches exist; ``verify`` checks the rows against the real tables later."""
    monitor = extraction_monitor(None, "nli-minilm+lexical+embedding")
    tables, data = {}, {}
    for name in dict.fromkeys([*SETS, *AUGMENT, *never_seen]):
        examples = load_dataset(name, None)
        rows = label_sentences(examples, extract_text_features(None, name, examples).sentences)
        if name in never_seen:
            rows = rows[rows.label.notna()]
        tables[name], data[name] = rows.reset_index(drop=True), SimpleNamespace(examples=examples)
    nli = next(s for s in monitor.alignment.scorers if s.name == "nli-minilm")
    return tables, data, nli


def export(out: Path, never_seen: list[str], skeleton: bool = False) -> None:
    """Write sentences.jsonl.gz (set, row, text, label, window key) and windows.json.gz to ``out``; the rows of
    ``never_seen`` sets are marked ``measure_only`` (faith_tune.py never trains on them)."""
    tables, data, nli = (skeleton_tables if skeleton else tables_and_data)(never_seen)
    out.mkdir(parents=True, exist_ok=True)
    augment, measured = {short(n) for n in AUGMENT}, {short(n) for n in never_seen}  # tables key a file by its stem
    windows: dict[str, list[str]] = {}
    rows = []
    for name, t in tables.items():
        contexts = {e.id: e.context for e in data[name].examples}
        for i, (text, ex_id, label) in enumerate(zip(t.text, t.example_id, t.label, strict=True)):
            chunks = nli.chunks_for(text, contexts[ex_id])
            key = f"{short(name)}|{ex_id}|{len(chunks)}|{hash(tuple(chunks)) & 0xFFFFFFFF:x}"
            windows.setdefault(key, chunks)
            rows.append({"set": short(name), "row": i, "example_id": ex_id, "text": text,
                         "hyp": nli._hypothesis(text), "unfaithful": int(label),
                         "windows": key, "augment": short(name) in augment, "measure_only": short(name) in measured})
    with gzip.open(out / "sentences.jsonl.gz", "wt", encoding="utf-8") as f:
        f.writelines(json.dumps(r) + "\n" for r in rows)
    with gzip.open(out / "windows.json.gz", "wt", encoding="utf-8") as f:
        json.dump(windows, f)
    pairs = sum(len(windows[r["windows"]]) for r in rows)
    print(f"{len(rows)} sentences, {len(windows)} window lists, {pairs} (window, sentence) pairs -> {out}")


def verify(folder: Path, never_seen: list[str]) -> None:
    """Check that an export's rows (e.g. a skeleton export) are the real tables' rows, in the same order."""
    tables, _, _ = tables_and_data(never_seen)
    with gzip.open(folder / "sentences.jsonl.gz", "rt", encoding="utf-8") as f:
        rows = [json.loads(line) for line in f]
    real = [(short(n), i, ex, tx) for n, t in tables.items()
            for i, (ex, tx) in enumerate(zip(t.example_id, t.text, strict=True))]
    got = [(r["set"], r["row"], r["example_id"], r["text"]) for r in rows]
    bad = [(a, b) for a, b in zip(real, got, strict=False) if a != b]
    if len(real) != len(got) or bad:
        raise SystemExit(f"export differs: {len(got)} rows for {len(real)}; first differences {bad[:3]}")
    print(f"export matches the tables: {len(got)} rows")


def scores(got: dict, name: str, key: str) -> np.ndarray:
    """A set's ``key`` scores ("base" or "tuned") in row order; rows never held out (augmentation) keep "base"."""
    s = got[short(name)]
    return np.asarray([b if x is None else x for b, x in zip(s["base"], s[key], strict=True)])


def evaluate(scores_dir: Path, never_seen: list[str]) -> None:
    """LOO AUROC with the NLI third of ``align_score`` replaced by each run's out-of-fold scores; then, on each
    ``never_seen`` set, the recipe trained on all the others, before and after."""
    measured = {short(n) for n in never_seen}  # load_labelled keys a file by its stem
    every, _, _ = tables_and_data(never_seen)  # one load for both parts
    tables = {n: t for n, t in every.items() if n not in measured}
    runs = sorted(p for p in scores_dir.glob("scores_*.json"))
    shipped = shipped_recipe()
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
    if never_seen:
        print_never_seen(tables, {n: every[short(n)] for n in never_seen}, runs, shipped)


def print_never_seen(tables: dict, extra: dict, runs: list[Path], recipe: training.Recipe) -> None:
    """AUROC on each never-seen set of ``recipe`` trained on every labelled set, and of ``align_score``, with the
    shipped NLI third and with each run's (its tuned minus base scores added to every set's third)."""
    print(f"\nnever seen (trained on all {len(tables)} sets):", "  ".join(short(n) for n in extra))
    for label, got in [("shipped NLI", None)] + [(p.stem, json.loads(p.read_text())) for p in runs]:
        def third(name: str, t: pd.DataFrame, got=got) -> pd.DataFrame:
            if got is None:
                return t
            return t.assign(align_score=t["align_score"] + (scores(got, name, "tuned") - scores(got, name, "base")) / 3)
        train = pd.concat([third(n, t) for n, t in tables.items()], ignore_index=True)
        det = training.fit_syncheck(train, recipe, model_id="text-only", calibrate=False)
        cells = []
        for n, t in extra.items():
            t, y = third(short(n), t), t.label.to_numpy().astype(int)
            detector, align = roc_auc_score(y, -training.raw_scores(det, t)), roc_auc_score(y, -t.align_score)
            cells.append(f"{detector:.3f} (align {align:.3f})")
        print(f"  {label:<28}", "  ".join(cells), flush=True)


def with_tuned_feature(recipe: training.Recipe) -> training.Recipe:
    """``recipe`` plus a family ``nli-tuned`` (the column ``nli_tuned``, higher = faithful), registered in-process."""
    return with_extra_family(recipe, "nli-tuned", "nli_tuned", 1)


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("step", choices=("export", "verify", "evaluate"))
    p.add_argument("--skeleton", action="store_true", help="export the rows without their features (see verify)")
    p.add_argument("--out", type=Path, default=ROOT / ".gpu" / "ft")
    p.add_argument("--scores", type=Path, help="folder of the GPU run's scores_*.json (evaluate)")
    p.add_argument("--never-seen", default="", help="comma-separated sets only measured (export and evaluate)")
    args = p.parse_args()
    never_seen = [s for s in args.never_seen.split(",") if s]
    if args.step == "export":
        export(args.out, never_seen, args.skeleton)
    elif args.step == "verify":
        verify(args.out, never_seen)
    else:
        evaluate(args.scores, never_seen)


if __name__ == "__main__":
    pd.set_option("display.width", 200)
    main()
