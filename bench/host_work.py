"""The host's share of batched teacher-forced scoring (``Monitor.score_many``): milliseconds per record spent in
sentence tracking, in the text signals and the detector, and in the engine's device steps, on real records.

On a GPU the device steps of a batch take a few milliseconds per record, and this host work runs after them, so
it bounds records/s (docs/scale.md). A tiny random model keeps the device steps short here; the host work does
not depend on the model's size.

    python bench/host_work.py                                   # 64 RAGTruth QA records, batch 32
    python bench/host_work.py --data my.jsonl --records 128     # question / context / response per line
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from collections import Counter
from pathlib import Path
from types import SimpleNamespace

sys.path.insert(0, str(Path(__file__).resolve().parent))
from throughput import _monitor, max_difference  # noqa: E402  (the same signals as the throughput bench)

ROOT = Path(__file__).resolve().parent.parent
PARTS = {  # (class path, method): label
    ("faithwatch.models.engine.EngineSession", "_forward"): "device steps",
    ("faithwatch.models.engine.EngineSession", "__init__"): "prefill",
    ("faithwatch.sentences.SentenceTracker", "add"): "sentence tracking",
    ("faithwatch.monitor.Monitor", "_reports_many"): "text signals + detector",
    ("faithwatch.monitor.Monitor", "_forced_results"): "host work after the forward passes (both above)",
}


def _timed(spent: Counter) -> None:
    import importlib

    for (path, name), label in PARTS.items():
        module, cls = path.rsplit(".", 1)
        owner = getattr(importlib.import_module(module), cls)
        original = getattr(owner, name)

        def wrapper(*args, _original=original, _label=label, **kwargs):
            start = time.perf_counter()
            try:
                return _original(*args, **kwargs)
            finally:
                spent[_label] += time.perf_counter() - start

        setattr(owner, name, wrapper)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--data", default=str(ROOT / "training" / "data" / "ragtruth-qa.jsonl"))
    parser.add_argument("--records", type=int, default=64)
    parser.add_argument("--batch-size", type=int, default=32)
    parser.add_argument("--host-workers", type=int, default=0, help="also time score_many(host_workers=N): the "
                        "sentences tracked in N processes during the forward passes, against in-process tracking")
    args = parser.parse_args()
    with open(args.data, encoding="utf-8") as f:
        rows = [json.loads(line) for _, line in zip(range(args.records + 8), f, strict=False)]
    recs = [(r.get("question") or "", r["context"], r["response"]) for r in rows]
    monitor = _monitor(SimpleNamespace(random_model="llama-tiny", device="cpu", tokenizer=None, batch_sizes=[0]))
    monitor.score_many(recs[:8], batch_size=8, host_workers=args.host_workers)  # warm-up (and the workers' start)
    recs = recs[8:]
    spent: Counter = Counter()
    _timed(spent)
    start = time.perf_counter()
    base = monitor.score_many(recs, batch_size=args.batch_size)
    total = time.perf_counter() - start
    n = len(recs)
    print(f"{n} records of {Path(args.data).name}, batch {args.batch_size}: {total / n * 1e3:.1f} ms per record")
    for label, seconds in spent.items():
        print(f"  {label:<50} {seconds / n * 1e3:8.2f} ms per record")
    if args.host_workers:
        spent.clear()
        start = time.perf_counter()
        pooled = monitor.score_many(recs, batch_size=args.batch_size, host_workers=args.host_workers)
        took = time.perf_counter() - start
        same = all([s.text for s in a.sentences] == [s.text for s in b.sentences]
                   for a, b in zip(pooled, base, strict=True)) and max_difference(pooled, base) == 0.0
        print(f"sentences tracked in {args.host_workers} worker processes: {took / n * 1e3:.1f} ms per record, "
              f"{total / took:.2f}x the records/s of in-process tracking; the same sentences and scores: {same}")
        for label, seconds in spent.items():
            print(f"  {label:<50} {seconds / n * 1e3:8.2f} ms per record")


if __name__ == "__main__":
    main()
