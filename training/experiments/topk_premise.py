"""Issue 12: one more NLI premise per sentence, made of the context sentences it shares most words with.

``nli-minilm`` reads a sentence against consecutive chunks of its context (whole sentences packed up to the
model's length) and keeps the best chunk. A sentence that fuses facts from far-apart parts of the source (an
abstractive summary's sentence, most of all) is entailed by no single chunk. This adds one premise per
sentence: the context sentences ranked by the content words (``lexical.content_stems``) they share with it,
taken in that order while they fit the same token budget, then put back in document order. The NLI third of
``align_score`` becomes the max over the chunks *and* that premise; sentences whose context is one chunk keep
their score. The shipped adapter's chunk scores come from the GPU run's saved export (``build/gpu-ab``, the
``base`` lists); the new premise is scored here, on the CPU.

Rule, committed before the first run: the premise joins the NLI scorer (a new scorer version) only if, with the
shipped recipe and the NLI third replaced, LOO over the six sets: mean AUROC rises by at least 0.003, no set
falls by more than 0.01, the worst gain over ``align_score`` (each with its own NLI third) is not lower, and the
mean over the five never-seen sets (trained on all six) is not lower.

    python training/experiments/topk_premise.py [--out /tmp/topk-premise]   # from the repo root,
                                                                              # PYTHONPATH=training/experiments
"""

from __future__ import annotations

import argparse
import json
from pathlib import Path

import numpy as np
from faith_tune_loo import evaluate, short, tables_and_data
from nli_ensemble import NEVER_SEEN
from rich.progress import track

from faithwatch.alignment.lexical import content_stems
from faithwatch.decoding import coverage as cov
from faithwatch.text import split_sentences

ROOT = Path(__file__).resolve().parents[2]


def ranked(text: str, context: str) -> list[int]:
    """Indices of ``context``'s sentences (``split_sentences``), most content stems shared with ``text`` first
    (ties in document order); the stems per sentence come from question coverage's cache."""
    words, stems = content_stems(text), cov._context_sentences(context)
    return sorted(range(len(stems)), key=lambda i: (-len(words & stems[i]), i))


def premise(nli, text: str, context: str) -> str | None:
    """The top-overlap premise of ``text`` (None when the context fits one chunk: nothing new to read)."""
    budget = nli.budget_for(text)
    if len(nli._chunks(context, budget)) <= 1:
        return None
    sents = split_sentences(context)
    chosen, used = [], 0
    for i in ranked(text, context):
        n = nli.n_tokens(sents[i])
        if used + n + 1 > budget:
            continue
        chosen.append(i)
        used += n + 1
    return " ".join(sents[i] for i in sorted(chosen)) if chosen else None


def entailment(nli, premises: list[str], hyps: list[str], step: int = 512) -> list[float]:
    """P(entailment) of each (premise, hypothesis) pair, scored in batches of similar length."""
    order = sorted(range(len(premises)), key=lambda k: len(premises[k]) + len(hyps[k]))
    probs: list[float] = [0.0] * len(premises)
    for s in track(range(0, len(order), step), description="NLI"):
        idx = order[s : s + step]
        out = nli._pair_probabilities([premises[k] for k in idx], [hyps[k] for k in idx])
        for k, pr in zip(idx, out, strict=True):
            probs[k] = pr[nli.entailment_index]
    return probs


def run(make, name: str, doc: str) -> None:
    """Score the premises ``make(nli, text, example)`` gives each sentence of every cached table; the NLI third of
    ``align_score`` becomes the max of the shipped score (the GPU run's saved export) and theirs; then the LOO
    evaluation (``faith_tune_loo.evaluate``). ``name`` names the output; ``doc`` is the script's help."""
    p = argparse.ArgumentParser(description=doc, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--scores", type=Path, default=ROOT / "build" / "gpu-ab" / "scores_g14.json")
    p.add_argument("--out", type=Path, default=Path(f"/tmp/{name}-premise"))
    args = p.parse_args()
    base = {k: v["base"] for k, v in json.loads(args.scores.read_text()).items()}
    tables, data, nli = tables_and_data(NEVER_SEEN)
    premises, hyps, where = [], [], []
    for set_name, t in tables.items():
        examples = {e.id: e for e in data[set_name].examples}
        if len(base[short(set_name)]) != len(t):
            raise SystemExit(f"{set_name}: {len(base[short(set_name)])} saved scores for {len(t)} sentences")
        for i, (text, ex_id) in enumerate(zip(t.text, t.example_id, strict=True)):
            for prem in make(nli, text, examples[ex_id]):
                premises.append(prem)
                hyps.append(nli._hypothesis(text))
                where.append((short(set_name), i))
    print(f"{len(premises)} new (premise, sentence) pairs of {sum(len(t) for t in tables.values())} sentences")
    probs = entailment(nli, premises, hyps)
    new = {k: list(v) for k, v in base.items()}
    for (set_name, i), pr in zip(where, probs, strict=True):
        new[set_name][i] = max(new[set_name][i], pr)
    rise = [n - b for k in base for b, n in zip(base[k], new[k], strict=True)]
    print(f"the new premises raised the NLI score of {sum(r > 1e-6 for r in rise)} sentences; mean rise "
          f"{np.mean(rise):.4f}")
    args.out.mkdir(parents=True, exist_ok=True)
    (args.out / f"scores_{name}.json").write_text(json.dumps(
        {k: {"base": base[k], "tuned": new[k], "insample": [None] * len(base[k])} for k in base}))
    evaluate(args.out, NEVER_SEEN)


def main() -> None:
    run(lambda nli, text, e: [p] if (p := premise(nli, text, e.context)) is not None else [], "topk", __doc__)


if __name__ == "__main__":
    main()
