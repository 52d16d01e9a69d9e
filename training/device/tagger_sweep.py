"""LSS tagger settings, chosen by lss-dev's 5-fold out-of-fold correlation (rule in docs/lss.md, "Tagger settings").

``run`` (on the GPU machine): one configuration at one seed, the shipped recipe's cross-validation
(:func:`faithwatch.eval.lss_tagger.cross_validate`) with the settings changed as :data:`CONFIGS` says; writes the
out-of-fold rows to ``<out>/<config>-<seed>.jsonl``. The base encoder there is pack.sh's int8 copy, so the NLI
adapter's base check is skipped (every configuration reads the same copy; compare within one run).
``summarize`` (here): Pearson of the LSS score and of the mean word support with the human 1-5 rating per
annotation, and each configuration's paired bootstrap difference to ``base`` at the same seed (pairs resampled).
"""

from __future__ import annotations

import argparse
import json
from dataclasses import replace
from pathlib import Path

import numpy as np

BASE = {"epochs": 4, "batch_size": 16, "lr": 5e-4, "lora_r": 16, "lora_alpha": 32, "synthetic": 0.5}
CONFIGS = {
    "base": {},
    "e8": {"epochs": 8},
    "lr1e3": {"lr": 1e-3},
    "lr2e4": {"lr": 2e-4},
    "r64": {"lora_r": 64, "lora_alpha": 128},
    "syn1": {"synthetic": 1.0},
}
SEEDS = (13, 14)
MEASURES = {"lss": "lss_score", "support": "claim_support"}


def run(args: argparse.Namespace) -> None:
    import torch

    import faithwatch.nli.tagger_train as tt
    from faithwatch.eval.lss import load_lss_dev
    from faithwatch.eval.lss_tagger import cross_validate, examples_from_lss_dev

    build = tt.build_model
    tt.build_model = lambda base, nli: build(base, nli, verify_base=False)  # the base is a copy (see above)
    torch.set_num_threads(1)
    df = load_lss_dev(args.data)
    examples = examples_from_lss_dev(df.iloc[: args.limit] if args.limit else df)
    cfg = replace(tt.TaggerConfig(out_dir=str(args.out), seed=args.seed, base_dir=args.base, device=args.device),
                  **{**BASE, **CONFIGS[args.config]})
    if args.epochs:
        cfg = replace(cfg, epochs=args.epochs)
    name = f"{args.config}-{args.seed}"
    oof = cross_validate(cfg, examples, 5, Path(args.out) / "cv" / name)
    oof.to_json(Path(args.out) / f"{name}.jsonl", orient="records", lines=True)
    print(name, "done", len(oof), "pairs", flush=True)


def _table(df, rows) -> dict[str, tuple[np.ndarray, np.ndarray, np.ndarray]]:
    """Per measure: (score per annotation, rating per annotation, pair id per annotation)."""
    by_pair = {str(r["pair_id"]): r for r in rows}
    keep = [i for i, p in enumerate(df.pair_id.astype(str)) if p in by_pair]
    pairs = df.pair_id.astype(str).to_numpy()[keep]
    rating = df.rating.to_numpy(dtype=float)[keep]
    return {m: (np.array([by_pair[p][col] for p in pairs], dtype=float), rating, pairs)
            for m, col in MEASURES.items()}


def _pearson(x: np.ndarray, y: np.ndarray) -> float:
    return float(np.corrcoef(x, y)[0, 1])


def summarize(args: argparse.Namespace) -> None:
    from faithwatch.eval.lss import load_lss_dev
    from faithwatch.stats import percentile_ci, resample_indices

    df = load_lss_dev(args.data)
    results = {}
    for f in sorted(Path(args.dir).glob("*.jsonl")):
        results[f.stem] = [json.loads(line) for line in f.read_text().splitlines() if line.strip()]
    print("config-seed | measure | Pearson | minus base, same seed [95% CI]")
    for name, rows in results.items():
        config, seed = name.rsplit("-", 1)
        base = results.get(f"base-{seed}")
        here = _table(df, rows)
        ref = _table(df, base) if base else None
        for m, (x, y, pairs) in here.items():
            line = f"{name} | {m} | {_pearson(x, y):.4f}"
            if ref is not None and config != "base":
                xb = ref[m][0]
                diffs = [_pearson(x[i], y[i]) - _pearson(xb[i], y[i])
                         for i in resample_indices(len(x), args.n_boot, 0, groups=pairs)]  # pairs resampled
                lo, hi = percentile_ci(diffs)
                line += f" | {_pearson(x, y) - _pearson(xb, y):+.4f} [{lo:+.4f}, {hi:+.4f}]"
            print(line)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__)
    sub = ap.add_subparsers(dest="cmd", required=True)
    r = sub.add_parser("run")
    r.add_argument("--config", choices=sorted(CONFIGS), required=True)
    r.add_argument("--seed", type=int, required=True)
    r.add_argument("--data", required=True, help="folder holding lss-dev/")
    r.add_argument("--base", default=None)
    r.add_argument("--out", required=True)
    r.add_argument("--device", default="cuda")
    r.add_argument("--limit", type=int, default=None, help="first N annotations only (a dry run)")
    r.add_argument("--epochs", type=int, default=None, help="override (a dry run)")
    s = sub.add_parser("summarize")
    s.add_argument("dir")
    s.add_argument("--data", default=None)
    s.add_argument("--n-boot", type=int, default=1000)
    args = ap.parse_args()
    if args.cmd == "summarize" and args.data is None:
        from faithwatch.data.loaders import data_root

        args.data = data_root(None)
    {"run": run, "summarize": summarize}[args.cmd](args)


if __name__ == "__main__":
    main()
