"""Issue 12: does the LSS tagger read the reference, or its own knowledge of the world?

The shipped tagger calls "Tokyo" supported (0.99) in "The capital of Japan is Tokyo." against a context that says
Osaka is the capital. This script measures that on the packaged counterfactual QA set and tries a remedy: training
examples whose reference was edited so that a world-true claim is no longer supported, and claims that take a name
or number from elsewhere in their reference (:func:`counterfactual_examples`). Measured and not kept
(docs/lss.md): fold 0 lost Pearson and the probe barely moved.

    python training/experiments/tagger_counterfactual.py probe [--tagger DIR]   # the knowledge probe (1 min)
    python training/experiments/tagger_counterfactual.py probe --scorer nli-minilm   # the same, an alignment scorer
    python training/experiments/tagger_counterfactual.py fold --fold 0           # lss-dev fold 0 + probe (12 min)

The probe: for every counterfactual item, the context sentence that states the context's answer, once as it is and
once with that answer replaced by the common-knowledge one (e.g. Osaka -> Tokyo). A tagger that reads the context
gives the replaced answer a low support probability; ``swap AUROC`` separates the two claims by their weakest
word. ``fold`` trains on folds 1-4 of the shipped 5-fold split (seed 13) with the shipped recipe plus the
counterfactual examples, and prints fold 0's Pearson correlations (the shipped recipe: 0.379 mean word support,
0.351 LSS score on this fold, docs/lss.md) and the probe.
"""

from __future__ import annotations

import argparse
import json
import random
import re
import time
from collections import Counter
from collections.abc import Sequence
from pathlib import Path

import numpy as np
from sklearn.metrics import roc_auc_score

from faithwatch.claims.lss import split_words
from faithwatch.nli.synthetic import sentences_of
from faithwatch.nli.tagger import load_tagger, word_probabilities
from faithwatch.nli.tagger_train import _DIGITS, _NAME, TaggerExample  # a number and a name, as the recipe reads them
from faithwatch.text import split_sentences

ITEMS = "src/faithwatch/data/counterfactual_qa.jsonl"


def counterfactual_examples(examples: Sequence[TaggerExample], share: float, seed: int) -> list[TaggerExample]:
    """Word-labelled examples where what the model may know and what the reference says differ (deterministic
    given ``seed``), so that the tagger reads the reference instead of its own knowledge.

    For a ``share`` of the pairs, one sentence of the reference (5-40 words) with a capitalised name or a number
    that occurs once in the reference becomes a claim, and either
    * the *reference* changes: that name is replaced by a name from another reference, or that number by another,
      while the claim keeps the original word (now unsupported: a claim the world may support but the reference
      does not), or
    * the *claim* changes: that word is replaced by another name or number found elsewhere in the same reference
      (unsupported: every word occurs in the reference, but not in that relation).
    Nothing is made from the pairs' claims or labels.
    """
    if not 0.0 <= share <= 1.0:
        raise ValueError(f"the counterfactual share must be in [0, 1], got {share}")
    if not share:
        return []
    rng = random.Random(seed + 1)
    names = sorted({w.strip(".,;:") for e in examples for w in e.reference.split() if _NAME.match(w)})
    out = []
    for e in examples:
        if rng.random() >= share:
            continue
        ref_tokens = [w.strip(".,;:()\"'") for w in e.reference.split()]
        once = {t for t, n in Counter(ref_tokens).items() if n == 1 and (_NAME.match(t) or _DIGITS.fullmatch(t))}
        sentences = [t for t in sentences_of(e.reference) if 5 <= len(t.split()) <= 40]
        candidates = [(t, i) for t in sentences for i, w in enumerate(split_words(t))
                      if i > 0 and w.strip(".,;:()\"'") in once]
        if not candidates:
            continue
        sentence, i = rng.choice(candidates)
        words = list(split_words(sentence))
        old = words[i].strip(".,;:()\"'")
        number = old.isdigit()
        labels = [1.0] * len(words)
        labels[i] = 0.0
        if rng.random() < 0.5:  # the reference changes; the claim keeps the word the world may know
            if number:
                new = str(max(0, int(old) + rng.choice((-9, -4, -2, -1, 1, 2, 3, 7))))
            else:
                pool = [n for n in names if n not in e.reference]
                new = rng.choice(pool) if pool else ""
            if not new or new == old:
                continue
            at = sentence.index(old) + e.reference.index(sentence)
            reference = e.reference[:at] + new + e.reference[at + len(old):]
            out.append(TaggerExample(f"counterfactual-{e.pair_id}", tuple(words), reference, tuple(labels)))
        else:  # the claim takes another name or number of the same reference, from outside this sentence
            same_kind = sorted({t for t in ref_tokens if t not in sentence and t != old
                                and (t.isdigit() if number else bool(_NAME.match(t)))})
            if not same_kind:
                continue
            words[i] = words[i].replace(old, rng.choice(same_kind))
            out.append(TaggerExample(f"misattributed-{e.pair_id}", tuple(words), e.reference, tuple(labels)))
    return out


def probe_pairs() -> list[tuple[list[str], list[str], str, list[int]]]:
    """(sentence words, swapped words, context, indices of the swapped words) per counterfactual item."""
    out = []
    for line in Path(ITEMS).read_text(encoding="utf-8").splitlines():
        item = json.loads(line)
        answers, common = item.get("context_answers") or [], item.get("common_answers") or []
        if not answers or not common or item["id"].startswith(("agree-", "multi-")):
            continue
        alias = answers[0] if isinstance(answers[0], str) else answers[0][0]
        truth = common[0] if isinstance(common[0], str) else common[0][0]
        sentence = next((s for s in split_sentences(item["context"]) if re.search(rf"\b{re.escape(alias)}\b", s)),
                        None)
        if sentence is None or truth.lower() in item["context"].lower():
            continue
        swapped = re.sub(rf"\b{re.escape(alias)}\b", truth, sentence, count=1)
        words, new = split_words(sentence), split_words(swapped)
        changed = [i for i, w in enumerate(new) if any(t in w for t in truth.split())]
        if changed:
            out.append((words, new, item["context"], changed))
    return out


def probe(model, tokenizer, max_length: int = 256) -> dict[str, float]:
    pairs = probe_pairs()
    ctx = [c for _, _, c, _ in pairs]
    orig = word_probabilities(model, tokenizer, [w for w, _, _, _ in pairs], ctx, max_length)
    swap = word_probabilities(model, tokenizer, [n for _, n, _, _ in pairs], ctx, max_length)
    swapped_word = [float(np.min(p[idx])) for p, (_, _, _, idx) in zip(swap, pairs, strict=True)]
    low_orig, low_swap = [float(np.min(p)) for p in orig], [float(np.min(p)) for p in swap]
    y = [0] * len(pairs) + [1] * len(pairs)
    return {"items": len(pairs), "swapped answer p(supported) mean": float(np.mean(swapped_word)),
            "swapped answer below 0.5": float(np.mean(np.array(swapped_word) < 0.5)),
            "original sentence min p mean": float(np.mean(low_orig)),
            "swap AUROC": roc_auc_score(y, [-v for v in low_orig + low_swap])}


def run_probe(tagger_dir: str | None, scorer_name: str | None) -> None:
    if scorer_name:  # the same pairs through an alignment scorer: the original and the swapped sentence
        from faithwatch.alignment import get_scorer

        scorer = get_scorer(scorer_name)
        pairs = probe_pairs()
        orig = [scorer.score(" ".join(w), c) for w, _, c, _ in pairs]
        swap = [scorer.score(" ".join(n), c) for _, n, c, _ in pairs]
        print(json.dumps({"items": len(pairs), "scorer": scorer_name, "original mean": float(np.mean(orig)),
                          "swapped mean": float(np.mean(swap)),
                          "swapped at or above 0.5": float(np.mean(np.array(swap) >= 0.5)),
                          "swap AUROC": roc_auc_score([0] * len(orig) + [1] * len(swap), [-v for v in orig + swap])},
                         indent=1))
        return
    t = load_tagger(tagger_dir) if tagger_dir else load_tagger()
    print(json.dumps(probe(t.model, t.tokenizer), indent=1))


def run_fold(fold: int, share: float) -> None:
    from tagger_spans import pearsons  # a sibling script, on sys.path when this one runs

    from faithwatch.data.loaders import data_root
    from faithwatch.eval.lss import load_lss_dev
    from faithwatch.eval.lss_tagger import examples_from_lss_dev
    from faithwatch.nli.tagger_train import TaggerConfig, fit, folds_of

    df = load_lss_dev(data_root() / "lss-dev")
    lss = examples_from_lss_dev(df)
    where = folds_of(lss, 5, 13)
    train = [e for e, f in zip(lss, where, strict=True) if f != fold]
    test = [e for e, f in zip(lss, where, strict=True) if f == fold]
    rows = df[df.pair_id.isin({e.pair_id for e in test})]
    start = time.time()
    cfg = TaggerConfig(out_dir="/tmp/fw/unused", synthetic=0.5)
    model, tok = fit(cfg, train + counterfactual_examples(train, share, cfg.seed))
    probs = word_probabilities(model, tok, [e.words for e in test], [e.reference for e in test], cfg.max_length)
    res = pearsons(rows, {e.pair_id: p for e, p in zip(test, probs, strict=True)})
    print(f"fold {fold}, counterfactual {share}: " + ", ".join(f"{k} {v:.3f}" for k, v in res.items())
          + f" ({time.time() - start:.0f} s)", flush=True)
    print(json.dumps(probe(model, tok), indent=1))


def main() -> None:
    import torch

    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("stage", choices=("probe", "fold"))
    parser.add_argument("--tagger", default=None)
    parser.add_argument("--scorer", default=None, help="probe an alignment scorer (e.g. nli-minilm) instead")
    parser.add_argument("--fold", type=int, default=0)
    parser.add_argument("--share", type=float, default=0.5)
    parser.add_argument("--threads", type=int, default=2)
    args = parser.parse_args()
    torch.set_num_threads(args.threads)
    if args.stage == "probe":
        run_probe(args.tagger, args.scorer)
    else:
        run_fold(args.fold, args.share)


if __name__ == "__main__":
    main()
