"""Score the exported labelled-set sentences with a newly trained NLI adapter (GPU half of an adapter A/B).

``training/experiments/faith_tune_loo.py export`` writes every sentence of the labelled sets with the context
windows that ``nli-minilm`` reads for it; ``faith_tune.py prepare`` scores them with the shipped adapter
(``stage0.json``). This script scores them with ``ADAPTER`` (a ``train-nli`` output folder trained on the same
base copy) and writes ``OUT`` in ``faith_tune.py collect``'s format: per set, the shipped scores as ``base`` and
the adapter's as ``tuned`` on every row, so that ``faith_tune_loo.py evaluate --scores DIR`` replaces the NLI
third of ``align_score`` by the new adapter's score (both scored on the same base and device).

    python3 training/device/score_export.py ADAPTER OUT [--data .gpu/ft] [--work /tmp/ft] [--base /tmp/base]

Runs on a CPU too (``--device cpu --limit 5`` for a smoke test, after ``faith_tune.py prepare`` with the same limit).
"""

from __future__ import annotations

import argparse
import json
import time
from pathlib import Path

from faith_tune import load_model, max_over_windows, read_export


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("adapter", type=Path)
    p.add_argument("out", type=Path)
    p.add_argument("--data", type=Path, default=Path(".gpu/ft"))
    p.add_argument("--work", type=Path, default=Path("/tmp/ft"))
    p.add_argument("--base", default="/tmp/base")
    p.add_argument("--device", default="cuda")
    p.add_argument("--limit", type=int, default=None)
    p.add_argument("--wait", type=float, default=300, help="seconds to wait for prepare's stage0.json")
    args = p.parse_args()
    rows, windows = read_export(args.data, args.limit)
    t = time.time()
    tokenizer, model = load_model(args.base, str(args.adapter), args.device)
    tuned, _ = max_over_windows(model, tokenizer, rows, windows, args.device)
    stage0 = args.work / "stage0.json"
    while not stage0.exists() and time.time() - t < args.wait:
        time.sleep(2)
    base = json.loads(stage0.read_text())["base"]
    if len(base) != len(rows):
        raise SystemExit(f"{stage0}: {len(base)} shipped scores for {len(rows)} rows (same --limit?)")
    out: dict[str, dict[str, list]] = {}
    for i, r in enumerate(rows):
        s = out.setdefault(r["set"], {"base": [], "tuned": [], "insample": []})
        s["base"].append(base[i])
        s["tuned"].append(float(tuned[i]))
        s["insample"].append(None)
    args.out.write_text(json.dumps(out))
    print(f"score_export {args.adapter}: {len(rows)} sentences in {time.time() - t:.0f} s -> {args.out}", flush=True)


if __name__ == "__main__":
    main()
