"""Records per second of teacher-forced scoring: one record at a time (``Monitor.score``) against
``Monitor.score_many`` with several batch sizes, on the same records in the same run, next to the bare ceiling (a
plain batched forward pass over the same main and twin tokens, nothing recorded).

    python bench/throughput.py                                   # CPU, embedded SmolLM2-135M-Instruct
    python bench/throughput.py --device cuda --random-model llama-1b --records 256 --batch-sizes 8,32,128

Signals: every signal but LID (no bank) and the hidden-state probe; alignment is ``lexical`` (the model's cost is
what is measured). The per-record scores of every batched run are compared with one-at-a-time scoring.

Measured here (2 CPU cores, embedded model, 32 records of 2-12 context sentences, 2026-11-24, ``--batch-sizes
4,8``): one at a time 1.07 records/s; batch 4: 1.16 (1.08x), batch 8: 1.07 (0.99x); the bare batched ceiling is
1.66 / 1.43 records/s: on a CPU the forward pass is compute-bound and padding costs what batching saves. Batching is
for GPUs; on a CPU ``--batch-size 4`` gains little. The bare pass one record at a time is timed too, so the gain
bare batching itself gives is printed (2026-11-25, another 2-core host: 0.97x at batch 4, 0.88x at batch 8).
"""

from __future__ import annotations

import argparse
import time

import numpy as np

from overhead import RANDOM_MODELS, _load  # the same model loading and random shapes (run from the repo root)

SENTENCES = [
    "The Eiffel Tower is a wrought-iron lattice tower on the Champ de Mars in Paris.",
    "It was built from 1887 to 1889 by the company of Gustave Eiffel.",
    "It is 330 metres tall and was the tallest man-made structure for 41 years.",
    "Millions of people visit it every year, and it is lit at night.",
    "Its design was criticised by some of France's leading artists at first.",
]


def records(n: int, seed: int = 0, per_prompt: int = 1) -> list[tuple[str, str, str]]:
    """``n`` records of varied context and response lengths, ``per_prompt`` answers to each prompt (in a row)."""
    rng = np.random.default_rng(seed)
    out = []
    for i in range(n):
        if i % per_prompt == 0:
            ctx = " ".join(rng.choice(SENTENCES, size=int(rng.integers(2, 12))))
        resp = " ".join(rng.choice(SENTENCES, size=int(rng.integers(1, 5))))
        out.append(("What is known about the tower?", ctx, resp))
    return out


def max_difference(results, reference) -> float:
    """The largest difference of a sentence score between two runs over the same records."""
    return max(abs(a.score - b.score) for m, s in zip(results, reference, strict=True)
               for a, b in zip(m.sentences, s.sentences, strict=True))


def _monitor(args):
    import sys
    from types import SimpleNamespace

    from faithwatch.monitor import Monitor

    lm = _load(SimpleNamespace(random_model=args.random_model, device=args.device, mode="monitor",
                               tokenizer=args.tokenizer))
    signals = ["likelihood", "entropy", "contrastive", "influence", "lookback", "alignment", "lexical", "edits"]
    print(f"model {lm.model_id} on {args.device}, {len(args.batch_sizes)} batch sizes", file=sys.stderr)
    return Monitor(lm, signals=signals, alignment="lexical", detector="heuristic", device=args.device)


def _ceiling(monitor, recs, batch_size: int) -> float:
    """Seconds for plain batched forward passes over the main and twin sequences (left-padded), nothing recorded."""
    import torch

    lm = monitor.lm
    seqs = []  # (tokens, response length)
    for q, c, r in recs:
        prompts = monitor._prompts(q, c, 0)
        ids = lm.tokenizer(r, add_special_tokens=False)["input_ids"]
        seqs += [(prompts.rag_ids + ids, len(ids)), (prompts.twin_ids + ids, len(ids))]
    seqs.sort(key=lambda s: len(s[0]))
    start = time.perf_counter()
    with torch.inference_mode():
        for at in range(0, len(seqs), 2 * batch_size):
            chunk = seqs[at : at + 2 * batch_size]
            width = max(len(s) for s, _ in chunk)
            ids = torch.tensor([[0] * (width - len(s)) + s for s, _ in chunk], device=lm.device)
            mask = torch.tensor([[0] * (width - len(s)) + [1] * len(s) for s, _ in chunk], device=lm.device)
            # logits only where scoring needs them (the response positions)
            lm.model(input_ids=ids, attention_mask=mask, logits_to_keep=max(n for _, n in chunk) + 1)
    if lm.device.type == "cuda":
        torch.cuda.synchronize()
    return time.perf_counter() - start


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--device", default="cpu")
    parser.add_argument("--random-model", choices=sorted(RANDOM_MODELS), default=None)
    parser.add_argument("--tokenizer", default=None)
    parser.add_argument("--records", type=int, default=32)
    parser.add_argument("--batch-sizes", type=lambda s: [int(x) for x in s.split(",")], default=[8, 32])
    parser.add_argument("--host-workers", type=int, default=0, help="also time each batch size with the sentences "
                        "tracked in this many worker processes (score_many(host_workers=N))")
    parser.add_argument("--answers-per-prompt", type=int, default=1, help="records that share each prompt, in a "
                        "row (several answers to one question, as in FaithBench or RAGTruth)")
    args = parser.parse_args()
    import torch

    monitor = _monitor(args)
    recs = records(args.records, per_prompt=args.answers_per_prompt)
    monitor.score(*recs[0])  # warm-up
    if args.answers_per_prompt > 1:  # the plain way: every record's prompt prefilled
        monitor.engine.reuse_prompts = False
        start = time.perf_counter()
        plain = [monitor.score(*r) for r in recs]
        every = time.perf_counter() - start
        monitor.engine.reuse_prompts = True
    start = time.perf_counter()
    single = [monitor.score(*r) for r in recs]
    base = time.perf_counter() - start
    tokens = sum(len(monitor._prompts(q, c, 0).rag_ids) + len(s.records) for (q, c, _), s in zip(recs, single,
                                                                                                  strict=True))
    print(f"{len(recs)} records, {tokens} main tokens (+ the twin rows); torch threads {torch.get_num_threads()}")
    if args.answers_per_prompt > 1:
        worst = max_difference(plain, single)
        print(f"one at a time, every prompt prefilled {len(recs) / every:8.2f} records/s   (the plain way)")
        print(f"one at a time        {len(recs) / base:8.2f} records/s   {every / base:5.2f}x the plain way: "
              f"{args.answers_per_prompt} answers per prompt, the prompt prefilled once; max |score difference| "
              f"{worst:.1e} (the baseline below)")
    else:
        print(f"one at a time        {len(recs) / base:8.2f} records/s   (baseline)")
    # the bare pass prefills every record's prompt: with shared prompts it is no ceiling, and beating it is the
    # prefill sharing's gain, not a measurement error
    shared = ", above 100%: each prompt prefilled once" if args.answers_per_prompt > 1 else ""
    bare_one = _ceiling(monitor, recs, 1)  # what batching can gain at most: the bare pass, one record at a time
    print(f"bare, one at a time  {len(recs) / bare_one:8.2f} records/s   (nothing recorded; the reference for the "
          "bare ceilings below)")
    for size in args.batch_sizes:
        start = time.perf_counter()
        many = monitor.score_many(recs, batch_size=size)
        took = time.perf_counter() - start
        worst = max_difference(many, single)
        ceiling = _ceiling(monitor, recs, size)
        print(f"batch {size:<4}           {len(recs) / took:8.2f} records/s   {base / took:5.2f}x one at a time; "
              f"bare {'pass' if shared else 'ceiling'} {len(recs) / ceiling:8.2f} records/s ({ceiling / took:5.1%} "
              f"of it reached{shared}; bare batching alone gains {bare_one / ceiling:4.2f}x); max |score "
              f"difference| {worst:.1e}")
        if args.host_workers:
            monitor.score_many(recs[:size], batch_size=size, host_workers=args.host_workers)  # the workers' start
            start = time.perf_counter()
            pooled = monitor.score_many(recs, batch_size=size, host_workers=args.host_workers)
            took_w = time.perf_counter() - start
            worst = max_difference(pooled, single)
            print(f"  + {args.host_workers} host workers {len(recs) / took_w:8.2f} records/s   "
                  f"{base / took_w:5.2f}x one at a time; {ceiling / took_w:5.1%} of the bare pass; "
                  f"max |score difference| {worst:.1e}")


if __name__ == "__main__":
    main()
