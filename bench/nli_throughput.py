"""Throughput of the shipped NLI model (nli-minilm) at a fixed input length, against fp32 in the same run.

    python bench/nli_throughput.py                 # 256 tokens per pair, 2 threads, 256 pairs
    python bench/nli_throughput.py --tokens 512 --pairs 128

Pairs are built from the NLI dev premises (or a fixed filler text without the data folder) and cut to
exactly ``--tokens`` tokens per (premise, hypothesis) input. Prints pairs/s for each precision and the
ratio to the fp32 baseline; the target is >= 50 pairs/s at 256 tokens on a 2-core CPU.
"""

from __future__ import annotations

import argparse
import json
import time
from pathlib import Path

import torch


def build_pairs(tokenizer, n: int, tokens: int) -> tuple[list[str], list[str]]:
    """``n`` (premise, hypothesis) pairs whose encoding is exactly ``tokens`` tokens long."""
    texts: list[str] = []
    dev = Path("../shared/data/nli/dev_anli_dev_r1_r3.jsonl")
    if dev.is_file():
        texts = [json.loads(line)["premise"] for line in dev.open()][: 4 * n]
    if not texts:
        texts = ["The committee met on Tuesday to discuss the budget for the coming year and its priorities."] * n
    premises, hypotheses = [], []
    hyp = "The committee approved the budget for next year."
    n_hyp = len(tokenizer(hyp, add_special_tokens=False)["input_ids"])
    budget = tokens - n_hyp - tokenizer.num_special_tokens_to_add(pair=True)
    for i in range(n):
        ids: list[int] = []
        j = i
        while len(ids) < budget:
            ids += tokenizer(texts[j % len(texts)], add_special_tokens=False)["input_ids"]
            j += 1
        premises.append(tokenizer.decode(ids[:budget]))
        hypotheses.append(hyp)
    return premises, hypotheses


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--tokens", type=int, default=256)
    ap.add_argument("--pairs", type=int, default=256)
    ap.add_argument("--batch-size", type=int, default=32)
    ap.add_argument("--threads", type=int, default=2)
    ap.add_argument("--repeats", type=int, default=3)
    args = ap.parse_args()
    torch.set_num_threads(args.threads)

    from faithwatch.nli.artifact import load_cross_encoder
    from faithwatch.nli.model import bf16_supported, resolve_precision

    fp32 = load_cross_encoder(precision="fp32")
    premises, hypotheses = build_pairs(fp32.tokenizer, args.pairs, args.tokens)
    lens = {len(fp32.tokenizer(p, h)["input_ids"]) for p, h in zip(premises, hypotheses, strict=True)}
    print(f"{args.pairs} pairs, {min(lens)}-{max(lens)} tokens each, batch {args.batch_size}, "
          f"{args.threads} threads, bf16 native: {bf16_supported()}")
    rates = {}
    for precision in ("fp32", "bf16"):
        enc = fp32 if precision == "fp32" else load_cross_encoder(precision="bf16")
        enc.predict_proba(premises[: args.batch_size], hypotheses[: args.batch_size])  # warm-up
        times = []
        for _ in range(args.repeats):
            t0 = time.perf_counter()
            enc.predict_proba(premises, hypotheses, batch_size=args.batch_size)
            times.append(time.perf_counter() - t0)
        rates[precision] = args.pairs / sorted(times)[len(times) // 2]
        print(f"{precision:5s} {rates[precision]:7.1f} pairs/s  ({rates[precision] / rates['fp32']:.2f}x fp32)")
    auto, default = resolve_precision("auto", "cpu"), resolve_precision(None, "cpu")
    print(f"precision 'auto' here: {auto} -> {rates[auto]:.1f} pairs/s (target >= 50 at 256 tokens); "
          f"default (fp32 unless $FAITHWATCH_NLI_PRECISION says otherwise): {default} -> {rates[default]:.1f}")


if __name__ == "__main__":
    main()
