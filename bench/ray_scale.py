"""Ray Data scaling of ``faithwatch score``: records/s with 1 and 2 Ray CPU workers, and Ray's overhead with one
worker against plain local scoring (``score_file``, same batch size), all on the same records in the same run.

    python bench/ray_scale.py                       # embedded model, 48 records, batch size 4
    python bench/ray_scale.py --records 96 --batch-size 8

Each worker is one actor with one torch thread; the local baseline also runs with one thread. Actor start-up
(loading the model) is included in the Ray figures, as a user would see it.
"""

from __future__ import annotations

import argparse
import json
import tempfile
import time
from pathlib import Path

SENTENCES = [
    "The Eiffel Tower is a wrought-iron lattice tower on the Champ de Mars in Paris.",
    "It was built from 1887 to 1889 by the company of Gustave Eiffel.",
    "It is 330 metres tall and was the tallest man-made structure for 41 years.",
    "Millions of people visit it every year, and it is lit at night.",
]


def _write(path: Path, n: int) -> None:
    rows = [{"id": f"r{i}", "question": "What is known about the tower?",
             "context": " ".join(SENTENCES[: 1 + i % 4] * 2), "response": SENTENCES[i % 4]} for i in range(n)]
    path.write_text("\n".join(json.dumps(r) for r in rows) + "\n")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--records", type=int, default=48)
    parser.add_argument("--batch-size", type=int, default=4)
    args = parser.parse_args()
    import ray
    import torch

    from faithwatch.batch import score_file
    from faithwatch.monitor import Monitor
    from faithwatch.scale import RaySettings, score_with_ray

    kwargs = {"alignment": "lexical", "detector": "heuristic",
              "signals": ["likelihood", "entropy", "contrastive", "influence", "lookback", "alignment", "lexical"]}
    with tempfile.TemporaryDirectory() as tmp:
        src = Path(tmp) / "in.jsonl"
        _write(src, args.records)
        torch.set_num_threads(1)
        monitor = Monitor(**kwargs)
        start = time.perf_counter()
        score_file(monitor, src, Path(tmp) / "local.jsonl", vectors=False, batch_size=args.batch_size)
        local = args.records / (time.perf_counter() - start)
        rates = {}
        ray.init(num_cpus=2, include_dashboard=False, log_to_driver=False,
                 runtime_env={"env_vars": {"OMP_NUM_THREADS": "1"}})
        try:
            for workers in (1, 2):
                start = time.perf_counter()
                score_with_ray(kwargs, src, Path(tmp) / f"ray{workers}.jsonl",
                               RaySettings(workers=workers, batch_size=args.batch_size, threads=1))
                rates[workers] = args.records / (time.perf_counter() - start)
        finally:
            ray.shutdown()
    print(f"{args.records} records, batch size {args.batch_size}, one torch thread per worker")
    print(f"local score_file   {local:7.2f} records/s   (baseline)")
    for workers, rate in rates.items():
        print(f"ray, {workers} worker(s)  {rate:7.2f} records/s   {rate / rates[1]:5.2f}x of 1 worker; "
              f"local/ray = {local / rate:5.2f}x")


if __name__ == "__main__":
    main()
