"""Cost of each decoding strategy as wall time divided by greedy's, on the same prompts, in one run.

    python bench/decoding.py                                     # CPU, embedded SmolLM2-135M-Instruct
    python bench/decoding.py --device cuda --random-model llama-1b   # GPU, random ~1.2B Llama (see overhead.py)

Prompts come from the counterfactual QA set. Every strategy uses the monitor's detector for sentence scores
and its defaults (``faithwatch.params``; FOD: tau1 0.5, tau2 0.6, K=2, S=6). The number of generated tokens
differs per strategy, so tokens generated per second is printed too. ``monitor`` (in the default list) is not a
strategy but the reference for per-token speed: ``Monitor.generate`` (greedy, every sentence scored) on the same
prompts. Targets (issue 16): FOD (K=2, S=6) <= 2.5x greedy's wall time; greedy's tokens/s >= the monitor's.
"""

from __future__ import annotations

import argparse
import statistics
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from faithwatch.params import default  # noqa: E402 - the one set of decoding defaults


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--device", default="cpu")
    parser.add_argument("--prompts", type=int, default=5)
    parser.add_argument("--skip", type=int, default=0, help="start at this item (56: the multi-fact questions)")
    parser.add_argument("--max-new-tokens", type=int, default=64)
    parser.add_argument("--strategies", default="monitor,greedy,abstain,cad,rerank,fod-bt,fod")
    parser.add_argument("--random-model", default=None, help="e.g. llama-1b (weights random; see overhead.py)")
    parser.add_argument("--tokenizer", default=None, help="tokenizer dir for --random-model (default: embedded)")
    parser.add_argument("--detector", default=None, help="default: shipped detector (embedded model) or heuristic")
    parser.add_argument("--signals", default=None, help="comma-separated signal families (default: all)")
    parser.add_argument("--threads", type=int, default=0, help="torch threads (0: torch's default)")
    parser.add_argument("--static-cache", action="store_true", help="decode into a preallocated KV cache")
    parser.add_argument("--cuda-graph", action="store_true", help="replay decode steps as CUDA graphs")
    parser.add_argument("--tau1", type=float, default=default("tau1"),
                        help="FOD: > 1 forces the beam search on every prompt")
    parser.add_argument("--tau2", type=float, default=default("tau2"), help="FOD: 0 prunes nothing (the most work)")
    parser.add_argument("--no-coverage", action="store_true", help="FOD without question coverage (paper 000)")
    args = parser.parse_args()

    import torch

    from faithwatch.decoding import generate
    from faithwatch.decoding.counterfactual import load_counterfactual
    from faithwatch.monitor import Monitor

    if args.threads:
        torch.set_num_threads(args.threads)
    if args.random_model:
        from overhead import _load  # the same random-model builder as the overhead benchmark

        class _Args:
            random_model, device, mode, tokenizer = args.random_model, args.device, "monitor", args.tokenizer

        lm = _load(_Args)
        monitor = Monitor(lm, detector=args.detector or "heuristic", alignment="lexical",
                          static_cache=args.static_cache, cuda_graph=args.cuda_graph,
                          signals=args.signals.split(",") if args.signals else None)
    else:
        monitor = Monitor(None, device=args.device, detector=args.detector, static_cache=args.static_cache,
                          cuda_graph=args.cuda_graph)
    items = load_counterfactual()[args.skip: args.skip + args.prompts]
    strategies = args.strategies.split(",")
    sync = torch.cuda.synchronize if args.device.startswith("cuda") else (lambda: None)
    generate(monitor, items[0].question, items[0].context, "greedy", max_new_tokens=8)  # warm-up
    seconds: dict[str, list[float]] = {s: [] for s in strategies}
    tokens: dict[str, int] = dict.fromkeys(strategies, 0)
    for item in items:
        for strategy in strategies:
            sync()
            start = time.perf_counter()
            if strategy == "monitor":
                n = monitor.generate(item.question, item.context, max_new_tokens=args.max_new_tokens).num_tokens
            else:
                n = generate(monitor, item.question, item.context, strategy, max_new_tokens=args.max_new_tokens,
                             tau1=args.tau1, tau2=args.tau2, coverage=not args.no_coverage).generated_tokens
            sync()
            seconds[strategy].append(time.perf_counter() - start)
            tokens[strategy] += n
    base = sum(seconds["greedy"]) if "greedy" in seconds else None
    rate = {s: tokens[s] / sum(seconds[s]) for s in strategies}
    print(f"model: {args.random_model or monitor.lm.model_id} · device: {args.device} · "
          f"{len(items)} prompts from item {args.skip} · "
          f"max {args.max_new_tokens} new tokens · detector {monitor.detector.name} · "
          f"tau1 {args.tau1} tau2 {args.tau2} · coverage {'off' if args.no_coverage else 'on'}")
    w = max(len("strategy"), *(len(s) for s in strategies))  # "fod-fallback" is wider than 10
    print(f"{'strategy':<{w}} {'total s':>8} {'median s':>9} {'x greedy':>9} {'gen tok':>8} {'tok/s':>7}")
    for s in strategies:
        total = sum(seconds[s])
        ratio = f"{total / base:.2f}" if base else "-"
        print(f"{s:<{w}} {total:8.2f} {statistics.median(seconds[s]):9.2f} {ratio:>9} {tokens[s]:8d} "
              f"{rate[s]:7.1f}")
    if "monitor" in rate and "greedy" in rate:
        print(f"greedy tok/s / monitor tok/s = {rate['greedy'] / rate['monitor']:.2f} (target >= 1)")


if __name__ == "__main__":
    main()
