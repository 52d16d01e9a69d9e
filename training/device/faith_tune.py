"""Continue the shipped nli-minilm adapter's training on the labelled faithfulness sets, once per held-out set.

The GPU half of ``training/experiments/faith_tune_loo.py`` (which exports ``.gpu/ft`` and evaluates the scores):

* ``prepare``: scores every (window, sentence) pair with the shipped adapter: each sentence's score (max
  entailment over its windows) and its best window;
* ``fold --held SET --config NAME``: the shipped adapter trained further on the best windows of the other sets'
  sentences (faithful: entailment; unfaithful: not entailment; every set and both classes weighted equally) mixed
  with licensed NLI pairs, then the held-out set's sentences scored over all their windows (``--held all``: every
  set trained on, the adapter saved);
* ``collect``: one ``scores_<config>.json`` per config: for each set, the shipped and the tuned scores in row order.

Runs on a CPU too (``--steps 3 --limit 40`` for a smoke test).
"""

from __future__ import annotations

import argparse
import gzip
import json
import random
import time
from pathlib import Path

import numpy as np
import torch

from faithwatch.nli.data import LICENSED_SOURCES, NOT_ENTAILMENT, read_pairs
from faithwatch.nli.model import CrossEncoder, load_base
from faithwatch.nli.train import _collate, nli_loss, optimizer_step, set_lr

CONFIGS = {  # name: (share of NLI pairs in the batches, learning rate, steps)
    "A": (0.5, 2e-4, 2000),
    "B": (0.2, 2e-4, 2000),
    "C": (0.5, 1e-4, 600),
}


def load_model(base: str, adapter: str, device: str):
    """Tokenizer and the shipped adapter on the base encoder, trainable (LoRA and head)."""
    from peft import PeftModel

    tokenizer, model = load_base(base)
    model = PeftModel.from_pretrained(model, adapter, is_trainable=True)
    return tokenizer, model.to(device)


def entailment(model, tokenizer, premises: list[str], hyps: list[str], device: str, batch: int = 512) -> np.ndarray:
    """p(entailment) of each pair through the runtime's :class:`CrossEncoder` (bf16 on a GPU, fp32 on a CPU)."""
    precision = "bf16" if device.startswith("cuda") else "fp32"
    encoder = CrossEncoder(model, tokenizer, max_length=256, device=device, precision=precision)
    return encoder.predict_proba(premises, hyps, batch_size=batch)[:, 0]


def read_export(folder: Path, limit: int | None) -> tuple[list[dict], dict[str, list[str]]]:
    """The exported sentence rows and window lists (``limit``: the first rows of every set only)."""
    with gzip.open(folder / "sentences.jsonl.gz", "rt", encoding="utf-8") as f:
        rows = [json.loads(line) for line in f]
    with gzip.open(folder / "windows.json.gz", "rt", encoding="utf-8") as f:
        windows = json.load(f)
    if limit:  # smoke test: the first rows of every set
        kept, seen = [], {}
        for r in rows:
            seen[r["set"]] = seen.get(r["set"], 0) + 1
            if seen[r["set"]] <= limit:
                kept.append(r)
        rows = kept
    return rows, windows


def max_over_windows(model, tokenizer, rows: list[dict], windows, device: str) -> tuple[np.ndarray, np.ndarray]:
    """Each row's highest p(entailment) over its windows, and that window's index."""
    prem, hyp, owner, pos = [], [], [], []
    for i, r in enumerate(rows):
        for k, w in enumerate(windows[r["windows"]]):
            prem.append(w)
            hyp.append(r["hyp"])
            owner.append(i)
            pos.append(k)
    p = entailment(model, tokenizer, prem, hyp, device)
    best, arg = np.full(len(rows), -1.0), np.zeros(len(rows), dtype=int)
    for pi, o, k in zip(p, owner, pos, strict=True):
        if pi > best[o]:
            best[o], arg[o] = pi, k
    return best, arg


def prepare(args) -> None:
    rows, windows = read_export(args.data, args.limit)
    tokenizer, model = load_model(args.base, args.adapter, args.device)
    t = time.time()
    best, arg = max_over_windows(model, tokenizer, rows, windows, args.device)
    args.work.mkdir(parents=True, exist_ok=True)
    (args.work / "stage0.json").write_text(json.dumps({"base": best.tolist(), "best": arg.tolist()}))
    print(f"prepare: {len(rows)} sentences scored in {time.time() - t:.0f} s", flush=True)


def fold(args) -> None:
    nli_share, lr, steps = CONFIGS[args.config]
    steps = args.steps or steps
    rows, windows = read_export(args.data, args.limit)
    stage0 = json.loads((args.work / "stage0.json").read_text())
    torch.manual_seed(13)
    rng = np.random.default_rng(13)
    tokenizer, model = load_model(args.base, args.adapter, args.device)
    train = [i for i, r in enumerate(rows) if r["set"] != args.held and not r.get("measure_only")]
    sets = sorted({rows[i]["set"] for i in train})
    count = {(s, c): 0 for s in sets for c in (0, 1)}
    for i in train:
        count[rows[i]["set"], rows[i]["unfaithful"]] += 1
    weight = np.array([1 / (len(sets) * 2 * count[rows[i]["set"], rows[i]["unfaithful"]]) for i in train])
    prem = [windows[rows[i]["windows"]][stage0["best"][i]] for i in train]
    hyps = [rows[i]["hyp"] for i in train]
    labels = [NOT_ENTAILMENT if rows[i]["unfaithful"] else 0 for i in train]
    nli = [p for p in read_pairs(args.nli) if p.source in LICENSED_SOURCES]
    random.Random(13).shuffle(nli)
    nli = nli[: args.nli_pairs]
    prem += [p.premise for p in nli]
    hyps += [p.hypothesis for p in nli]
    labels += [p.label for p in nli]
    weight = np.concatenate([weight / weight.sum() * (1 - nli_share), np.full(len(nli), nli_share / len(nli))])
    enc = tokenizer(prem, hyps, truncation="longest_first", max_length=256)
    encoded = [{"input_ids": enc["input_ids"][i], "token_type_ids": enc["token_type_ids"][i]}
               for i in range(len(prem))]
    labels_t = torch.tensor(labels)
    params = [p for p in model.parameters() if p.requires_grad]
    opt = torch.optim.AdamW(params, lr=lr, weight_decay=0.01)
    model.train()
    t = time.time()
    draws = rng.choice(len(prem), size=(steps, args.batch), p=weight)
    running = None
    for step in range(steps):
        batch_rows = sorted(draws[step].tolist(), key=lambda j: len(encoded[j]["input_ids"]))
        set_lr(opt, lr, step, steps, max(1, int(0.06 * steps)))
        batch = {k: v.to(args.device) for k, v in _collate(encoded, batch_rows, tokenizer.pad_token_id).items()}
        with torch.autocast("cuda" if args.device.startswith("cuda") else "cpu", dtype=torch.bfloat16,
                            enabled=args.device.startswith("cuda")):
            logits = model(**batch).logits
        loss = nli_loss(logits, labels_t[batch_rows].to(args.device))
        optimizer_step(loss, params, opt, step)
        running = loss.item() if running is None else 0.98 * running + 0.02 * loss.item()
        if (step + 1) % 500 == 0:
            print(f"{args.config}/{args.held}: step {step + 1}/{steps} loss {running:.3f} ({time.time() - t:.0f} s)",
                  flush=True)
    held = [i for i, r in enumerate(rows) if args.held in ("all", r["set"])]
    tuned, _ = max_over_windows(model, tokenizer, [rows[i] for i in held], windows, args.device)
    (args.work / f"{args.config}_{args.held}.json").write_text(json.dumps({"rows": held, "tuned": tuned.tolist()}))
    if args.held == "all":
        model.save_pretrained(str(args.work / f"adapter_{args.config}"))
    print(f"{args.config}/{args.held}: done in {time.time() - t:.0f} s", flush=True)


def collect(args) -> None:
    rows, _ = read_export(args.data, args.limit)
    base = json.loads((args.work / "stage0.json").read_text())["base"]
    for config in sorted({p.stem.split("_")[0] for p in args.work.glob("*_*.json")}):
        tuned = np.full(len(rows), np.nan)
        insample = np.full(len(rows), np.nan)
        for path in args.work.glob(f"{config}_*.json"):
            got = json.loads(path.read_text())
            target = insample if path.stem.endswith("_all") else tuned
            target[got["rows"]] = got["tuned"]
        out = {}
        for s in dict.fromkeys(r["set"] for r in rows):
            idx = [i for i, r in enumerate(rows) if r["set"] == s]
            out[s] = {"base": [base[i] for i in idx], "tuned": [None if np.isnan(tuned[i]) else tuned[i] for i in idx],
                      "insample": [None if np.isnan(insample[i]) else insample[i] for i in idx]}
        (args.out / f"scores_{config}.json").write_text(json.dumps(out))
        print(f"scores_{config}.json: {int(np.isfinite(tuned).sum())} out-of-fold scores")


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__)
    p.add_argument("step", choices=("prepare", "fold", "collect"))
    p.add_argument("--data", type=Path, default=Path(".gpu/ft"))
    p.add_argument("--work", type=Path, default=Path("/tmp/ft"))
    p.add_argument("--out", type=Path, default=Path("."))
    p.add_argument("--base", default="/tmp/base")
    p.add_argument("--adapter", default="src/faithwatch/nli/minilm")
    p.add_argument("--nli", default="/tmp/data/nli/train.jsonl")
    p.add_argument("--nli-pairs", type=int, default=60000)
    p.add_argument("--device", default="cuda")
    p.add_argument("--held", default="all")
    p.add_argument("--config", default="A", choices=sorted(CONFIGS))
    p.add_argument("--steps", type=int, default=None)
    p.add_argument("--batch", type=int, default=64)
    p.add_argument("--limit", type=int, default=None)
    args = p.parse_args()
    {"prepare": prepare, "fold": fold, "collect": collect}[args.step](args)


if __name__ == "__main__":
    main()
