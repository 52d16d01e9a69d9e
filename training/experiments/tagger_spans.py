"""Issue 12, item 4: does the LSS tagger improve when it also trains on RAGTruth's span labels?

RAGTruth marks unfaithful character spans. Each labelled sentence of the RAGTruth QA and summary sets becomes a
tagger example: its words (``split_words``), label 0 for a word inside an unfaithful span and 1 otherwise, and as
reference the block of context sentences (at most ``--block-words`` words) that holds most of the sentence's
supported words (the tagger trains on one window). Every sentence with an unfaithful word is kept, with as many
faithful sentences drawn by the seed.

Stages (each one model-heavy; run one at a time):

    python training/experiments/tagger_spans.py fold --fold 0            # lss-dev fold 0, with and without (32 min)
    python training/experiments/tagger_spans.py full                     # a tagger on all of lss-dev + spans (23 min)
    python training/experiments/tagger_spans.py sets --per-set 200       # reads the one ``full`` wrote (8 min)
    python training/experiments/tagger_spans.py loo                      # as an extra feature, LOO (~30 min)
    python training/experiments/tagger_spans.py full --span-sets summary --out DIR   # RT-QA unseen (14 min)
    python training/experiments/tagger_spans.py loo --tagger DIR         # its RT-QA fold is fair (23 min)

``fold`` prints, on the held-out fold of the shipped 5-fold split (seed 13), the Pearson correlation of the mean
word support and of the LSS score with the human rating, for a tagger trained on the other folds with and without
the span examples (both here, same host and precision). ``sets`` prints the sentence AUROC of ``tag_min_content``
from the shipped tagger and from the given one on the sets the span examples do not come from. ``loo`` adds that
tagger's ``tag_min_content`` as a second feature (``tag_rt_min``) to every sentence of the six labelled sets and the
augmentation set (cached in the feature cache under that tagger's version, resumable) and prints the LOO AUROC of
the shipped recipe with and without it; the RAGTruth QA and summary folds are in-sample for the new feature (its
tagger trained on their spans).
"""

from __future__ import annotations

import argparse
import json
import random
import time
from pathlib import Path

import numpy as np
import pandas as pd
from scipy.stats import pearsonr
from sklearn.metrics import roc_auc_score

from faithwatch.claims.lss import split_words
from faithwatch.data.loaders import data_root
from faithwatch.eval.lss import load_lss_dev
from faithwatch.eval.lss_tagger import examples_from_lss_dev
from faithwatch.nli.tagger import load_tagger, word_probabilities
from faithwatch.nli.tagger_train import TaggerConfig, TaggerExample, fit, folds_of
from faithwatch.text import sentence_spans, split_sentences

SPAN_SETS = ("training/data/ragtruth-qa.jsonl", "training/data/ragtruth-summary.jsonl")
CLEAN_SETS = ("faithbench", "qags-cnndm", "begin-dev", "training/data/q2-wow.jsonl",
              "training/data/ragtruth-data2txt.jsonl")


def _content(word: str) -> str:
    return "".join(ch for ch in word.lower() if ch.isalnum())


def best_block(words: list[str], labels: list[float], context: str, block_words: int) -> str:
    """The run of context sentences (at most ``block_words`` words) holding most of the supported words."""
    sents = split_sentences(context)
    want = {_content(w) for w, y in zip(words, labels, strict=True) if y > 0.5 and len(_content(w)) > 2}
    best, best_hits = "", -1
    for i in range(len(sents)):
        block, n = [], 0
        for s in sents[i:]:
            k = len(s.split())
            if block and n + k > block_words:
                break
            block.append(s)
            n += k
        text = " ".join(block)
        if len(text.split()) > block_words:  # one very long sentence: its first words
            text = " ".join(text.split()[:block_words])
        hits = len(want & {_content(w) for w in text.split()})
        if hits > best_hits:
            best, best_hits = text, hits
    return best


def span_examples(block_words: int = 110, max_words: int = 60, seed: int = 13,
                  sets: tuple[str, ...] = SPAN_SETS) -> list[TaggerExample]:
    """Word-labelled examples from RAGTruth's unfaithful spans (all unfaithful sentences, as many faithful)."""
    bad, good = [], []
    for path in sets:
        for line in Path(path).read_text().splitlines():
            r = json.loads(line)
            spans = [(s["start"], s["end"]) for s in r.get("spans") or []
                     if s.get("label", "unfaithful") == "unfaithful"]
            text = r["response"]
            for k, (a, b) in enumerate(sentence_spans(text)):
                sent = text[a:b]
                words = split_words(sent)
                if not 3 <= len(words) <= max_words:
                    continue
                labels, cursor = [], 0
                for w in words:
                    first = w.split()[0]
                    at = sent.find(first, cursor)
                    at = cursor if at < 0 else at
                    cursor = at + len(first)
                    lo, hi = a + at, a + at + len(w)
                    labels.append(0.0 if any(lo < e and s < hi for s, e in spans) else 1.0)
                ref = best_block(words, labels, r["context"], block_words)
                if not ref:
                    continue
                ex = TaggerExample(f"rt-{r['id']}-{k}", tuple(words), ref, tuple(labels))
                (bad if min(labels) < 0.5 else good).append(ex)
    rng = random.Random(seed)
    rng.shuffle(good)
    return bad + good[: len(bad)]


def pearsons(rows: pd.DataFrame, oof: dict[str, np.ndarray]) -> dict[str, float]:
    """Per annotation: Pearson of the rating with the mean word support and with the LSS score (threshold 0.5)."""
    support = rows.pair_id.map(lambda p: float(np.mean(oof[p])))
    lss = rows.pair_id.map(lambda p: float(np.mean(oof[p] >= 0.5)))
    return {"mean word support": pearsonr(support, rows.rating)[0], "LSS score": pearsonr(lss, rows.rating)[0]}


def run_fold(fold: int, threads: int) -> None:
    import torch

    torch.set_num_threads(threads)
    df = load_lss_dev(data_root() / "lss-dev")
    lss = examples_from_lss_dev(df)
    where = folds_of(lss, 5, 13)
    train = [e for e, f in zip(lss, where, strict=True) if f != fold]
    test = [e for e, f in zip(lss, where, strict=True) if f == fold]
    spans = span_examples()
    print(f"lss-dev: {len(train)} train / {len(test)} test pairs; span examples: {len(spans)} "
          f"({sum(min(e.labels) < 0.5 for e in spans)} with an unfaithful word)", flush=True)
    rows = df[df.pair_id.isin({e.pair_id for e in test})]
    for name, data in (("with spans", train + spans), ("lss-dev only", train)):
        start = time.time()
        cfg = TaggerConfig(out_dir="/tmp/fw/unused", synthetic=0.5)
        model, tok = fit(cfg, data)
        probs = word_probabilities(model, tok, [e.words for e in test], [e.reference for e in test], cfg.max_length)
        res = pearsons(rows, {e.pair_id: p for e, p in zip(test, probs, strict=True)})
        print(f"fold {fold} {name}: " + ", ".join(f"{k} {v:.3f}" for k, v in res.items())
              + f" ({time.time() - start:.0f} s)", flush=True)


def run_full(out: str, threads: int, sets: tuple[str, ...] = SPAN_SETS) -> None:
    import torch

    from faithwatch.nli.tagger_train import save

    torch.set_num_threads(threads)
    lss = examples_from_lss_dev(load_lss_dev(data_root() / "lss-dev"))
    spans = span_examples(sets=sets)
    names = "/".join(Path(p).stem.removeprefix("ragtruth-") for p in sets)
    cfg = TaggerConfig(out_dir=out, synthetic=0.5, data={"note": f"experiment: lss-dev + RAGTruth {names} spans"})
    start = time.time()
    model, _ = fit(cfg, lss + spans)
    save(cfg, model, lss + spans, time.time() - start)
    print(f"trained in {time.time() - start:.0f} s: {out}", flush=True)


def new_tag_min(tables: dict[str, pd.DataFrame], examples: dict[str, list], tagger_dir: str) -> None:
    """Add ``tag_rt_min``, the given tagger's ``tag_min_content``, to every table (cached per data set under the
    tagger's version, like the shipped tagger's features)."""
    from faithwatch.eval.text_features import add_text_features
    from faithwatch.signals.tagger import TaggerSignal

    signal = TaggerSignal(tagger=load_tagger(tagger_dir))
    for name, t in tables.items():
        added = add_text_features(examples[name], t[["example_id", "text"]], dataset=name, signals=[signal])
        t["tag_rt_min"] = added["tag_min_content"].to_numpy()


def run_sets(tagger_dir: str, per_set: int | None) -> None:
    from tagger_feature import sample_tables  # a sibling script, on sys.path when this one runs

    tables, examples = sample_tables(per_set, CLEAN_SETS, ())
    new_tag_min(tables, examples, tagger_dir)
    for name, t in tables.items():
        print(f"{name:<22} n={len(t)} align_score {roc_auc_score(t.label, -t.align_score):.3f} "
              f"shipped tag_min_content {roc_auc_score(t.label, -t.tag_min_content):.3f} "
              f"new {roc_auc_score(t.label, -t.tag_rt_min):.3f}", flush=True)


def run_loo(tagger_dir: str) -> None:
    from aggregator_variants import print_loo  # sibling scripts, on sys.path when this one runs
    from tagger_feature import sample_tables

    import faithwatch.eval.training as training

    tables, examples = sample_tables(None)
    new_tag_min(tables, examples, tagger_dir)
    training.FAMILIES["tagger_rt"] = ("tag_rt_min",)
    training.DIRECTIONS["tag_rt_min"] = 1
    shipped = ("alignment", "lexical", "edits", "tagger")
    print_loo(tables, {
        "shipped: alignment+lexical+edits+tagger C=0.1": training.Recipe(families=shipped, C=0.1),
        "shipped + tagger_rt": training.Recipe(families=(*shipped, "tagger_rt"), C=0.1),
        "alignment+lexical+edits+tagger_rt": training.Recipe(families=(*shipped[:3], "tagger_rt"), C=0.1),
    })


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("stage", choices=("fold", "full", "sets", "loo", "count"))
    p.add_argument("--fold", type=int, default=0)
    p.add_argument("--out", default="/tmp/fw/tagger-rt")
    p.add_argument("--tagger", default="/tmp/fw/tagger-rt")
    p.add_argument("--per-set", type=int, default=None)
    p.add_argument("--threads", type=int, default=2)
    p.add_argument("--span-sets", default="qa,summary",
                   help="full: the RAGTruth span sets to train on (qa, summary); leave one out to make the LOO fold "
                   "of that set fair for the new feature")
    a = p.parse_args()
    sets = tuple(f"training/data/ragtruth-{name}.jsonl" for name in a.span_sets.split(","))
    if a.stage == "count":
        ex = span_examples()
        print(len(ex), sum(min(e.labels) < 0.5 for e in ex), np.mean([len(e.reference.split()) for e in ex]))
        for e in ex[:3]:
            print([w for w, y in zip(e.words, e.labels, strict=True) if y < 0.5], "|", " ".join(e.words)[:200])
    elif a.stage == "fold":
        run_fold(a.fold, a.threads)
    elif a.stage == "full":
        run_full(a.out, a.threads, sets)
    elif a.stage == "loo":
        run_loo(a.tagger)
    else:
        run_sets(a.tagger, a.per_set)


if __name__ == "__main__":
    main()
