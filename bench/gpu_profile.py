"""Where a monitored decode step spends its time on a GPU (random Llama-1B, every white-box signal, lexical alignment).

    PYTHONPATH=src:bench python bench/gpu_profile.py likelihood,entropy,lid,contrastive,influence,lookback,\
alignment,lexical,edits [--cuda-graph]

Prints torch.profiler tables for 64 monitored tokens and kernel launches per token; with ``--cuda-graph`` also the
replay of one captured step alone, ``session.feed`` per token (all needs, no lookback, none) and
``Monitor.generate`` per token, which separates GPU time from host work.
"""

from __future__ import annotations

import sys
import time
from types import SimpleNamespace

import torch
from torch.profiler import ProfilerActivity, profile

from faithwatch.models.engine import DecodingEngine, Needs
from faithwatch.models.prompts import build_prompts
from faithwatch.monitor import Monitor
from overhead import QUESTION, ROOT, _load


def _per_token(session, script) -> float:
    for tok in script[:20]:
        session.feed([tok])
    torch.cuda.synchronize()
    start = time.perf_counter()
    for tok in script[20:220]:
        session.feed([tok])
    torch.cuda.synchronize()
    return (time.perf_counter() - start) / 200 * 1000


def main() -> None:
    graph = "--cuda-graph" in sys.argv
    lm = _load(SimpleNamespace(random_model="llama-1b", device="cuda", mode="monitor", tokenizer=".gpu/tok"))
    mon = Monitor(lm, signals=sys.argv[1].split(","), alignment="lexical", detector="heuristic", max_new_tokens=64,
                  cuda_graph=graph)
    ctx = (ROOT / "examples" / "eiffel.txt").read_text()
    script = lm.tokenizer.encode(" ".join([ctx] * 8), add_special_tokens=False)

    def run(n=64):
        tokens = iter(script)
        return mon.generate(QUESTION, ctx, choose=lambda _lp: next(tokens), max_new_tokens=n)

    run()
    torch.cuda.synchronize()
    with profile(activities=[ProfilerActivity.CPU, ProfilerActivity.CUDA]) as prof:
        run()
        torch.cuda.synchronize()
    table = prof.key_averages()
    print(table.table(sort_by="self_cpu_time_total", row_limit=25, max_name_column_width=60))
    launches = sum(e.count for e in table if e.key in ("cudaLaunchKernel", "cuLaunchKernel", "cudaLaunchKernelExC"))
    print(f"kernel launches per token: {launches / 64:.1f}")
    if not graph:
        return
    steps = list(mon.engine.graphs._steps.values())
    torch.cuda.synchronize()
    start = time.perf_counter()
    for _ in range(200):
        steps[-1].graph.replay()
    torch.cuda.synchronize()
    print(f"graph replay only: {(time.perf_counter() - start) / 200 * 1000:.3f} ms/step")
    prompts = build_prompts(lm.tokenizer, QUESTION, ctx)
    print(f"engine feed, all needs: {_per_token(mon.engine.start(prompts), script):.3f} ms/token")
    for label, needs in (("no lookback", Needs(twin=True)), ("nothing", Needs())):
        engine = DecodingEngine(lm, needs, cuda_graph=True)
        print(f"engine feed, needs {label}: {_per_token(engine.start(prompts), script):.3f} ms/token")
    start = time.perf_counter()
    result = run(256)
    torch.cuda.synchronize()
    print(f"Monitor.generate: {(time.perf_counter() - start) / result.num_tokens * 1000:.3f} ms/token")


if __name__ == "__main__":
    main()
