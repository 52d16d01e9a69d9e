"""Throughput of the shipped NLI model (nli-minilm) at a fixed input length, against fp32 in the same run.

    python bench/nli_throughput.py                 # 256 tokens per pair, 2 threads, 256 pairs
    python bench/nli_throughput.py --tokens 512 --pairs 128

Pairs are built from the NLI dev premises (or a fixed filler text without the data folder) and cut to
exactly ``--tokens`` tokens per (premise, hypothesis) input. Prints pairs/s for each precision and the
ratio to the fp32 baseline; the target is >= 50 pairs/s at 256 tokens on a 2-core CPU.

Against the hardware's limit, in the same run: the encoder's floating-point operations per pair, counted from its
config (:func:`encoder_flops`), and the rate this CPU reaches on a plain fp32 matrix product of the model's own
largest shape (``torch.mm``, the same threads), give the fp32 pairs/s a perfect implementation would reach here;
the print shows the share of it that faithwatch reaches, and what the target would ask of the CPU.
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


def encoder_flops(config, tokens: int) -> float:
    """Multiply-adds x 2 of one BERT-style encoder pass over ``tokens`` tokens: per layer the four attention
    projections (8 L d^2), the feed-forward pair (4 L d f) and the two attention products (4 L^2 d); the pooler and
    the 3-way head are left out (under 0.1%)."""
    L, d, f = tokens, config.hidden_size, config.intermediate_size
    return config.num_hidden_layers * (8 * L * d * d + 4 * L * d * f + 4 * L * L * d)


def matmul_rate(rows: int, inner: int, cols: int, repeats: int = 5) -> float:
    """fp32 FLOP/s of ``torch.mm`` of [rows, inner] x [inner, cols] on this CPU (median of ``repeats``)."""
    a, b = torch.randn(rows, inner), torch.randn(inner, cols)
    torch.mm(a, b)  # warm-up
    times = []
    for _ in range(repeats):
        t0 = time.perf_counter()
        torch.mm(a, b)
        times.append(time.perf_counter() - t0)
    return 2 * rows * inner * cols / sorted(times)[len(times) // 2]


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
    config = fp32.model.config
    flops = encoder_flops(config, args.tokens)
    rate = matmul_rate(args.batch_size * args.tokens, config.hidden_size, config.intermediate_size)
    limit = rate / flops
    print(f"limit: {flops / 1e9:.2f} GFLOP per pair; torch.mm of the model's largest shape "
          f"[{args.batch_size * args.tokens}x{config.hidden_size}]x[{config.hidden_size}x{config.intermediate_size}] "
          f"runs at {rate / 1e9:.1f} GFLOP/s here, so at most {limit:.1f} pairs/s in fp32; fp32 reaches "
          f"{rates['fp32'] / limit:.0%} of it, and 50 pairs/s would need {50 * flops / 1e9:.0f} GFLOP/s "
          f"({50 / limit:.1f}x this CPU's matmul rate)")
    auto, default = resolve_precision("auto", "cpu"), resolve_precision(None, "cpu")
    print(f"precision 'auto' here: {auto} -> {rates[auto]:.1f} pairs/s (target >= 50 at 256 tokens); "
          f"default (fp32 unless $FAITHWATCH_NLI_PRECISION says otherwise): {default} -> {rates[default]:.1f}")


if __name__ == "__main__":
    main()
