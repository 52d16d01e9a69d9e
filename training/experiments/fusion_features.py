"""Issue 12: does the number of context sentences a sentence draws from (sentence fusion) transfer? (scratch)

Abstractive summarizers make most of their errors where they fuse two or more source sentences into one (Lebanoff
et al., 2019, "Analyzing Sentence Fusion in Abstractive Summarization"; "Understanding Points of Correspondence
between Sentences for Abstractive Summarization", 2020): the pieces are each supported, the relation between them
often is not. No feature of the shipped recipe counts the sources. Model-free counts, fixed before any
run (direction: more sources, less faithful):

* ``fuse_words``: context sentences in a greedy cover of the sentence's content words (``claims.spans.content_keys``)
  found in the context, the sentence holding most first; each further one must add at least 2 words the chosen ones
  lack (a sentence that adds one word is not a source);
* ``fuse_bigrams``: the same over the sentence's word pairs (two adjacent words, not both stop words); each further
  sentence must add at least 1 pair;
* ``fuse_anchors`` (added before any output of the first run was read): the same over the sentence's names and
  numbers (the lexical scorer's entity-like words, and the number keys of its content words); each further sentence
  must add at least 1. Names from two sentences put into one relation is the "right entities, wrong relation" error
  no feature reads.

Each is 0 for a sentence with no such word in the context. LOO AUROC of the shipped recipe with each added as its own
family (sign-constrained), next to the shipped recipe, on the text-only cache that ``faithwatch eval --text-only``
builds.

**The rule, written before the first run.** A count is worth building as a signal only if, against the shipped
recipe in the same run: (1) the worst gain over ``align_score`` rises by at least 0.003; (2) the mean LOO AUROC does
not fall by more than 0.0005; (3) no set falls by more than 0.002. Building it would then need the usual further
checks (the blatant suite, the never-seen sets, the calibration folds).

**Screened first on a sample** (amended before any run: the full caches take over two hours to build at fp32 on a
CPU without native bf16): ``--per-set 150``, the first 150 responses of each labelled set and of the augmentation set
by sha1 of the id, the sample of the earlier scratch measurements; only those responses are scored, so their
features are cached and the full run reuses them. The rule above is applied to the sample; a count that passes there
is measured on every sentence before anything is built, and one that fails is not.

    python training/experiments/fusion_features.py --per-set 150   # ~40 min from empty caches on 2 CPU cores
    python training/experiments/fusion_features.py                 # every sentence: minutes once the caches exist
"""

from __future__ import annotations

import argparse
from collections.abc import Callable
from functools import cache

import numpy as np
import pandas as pd
from aggregator_variants import AUGMENT, SETS, shipped_recipe, with_extra_family
from sklearn.metrics import roc_auc_score
from tagger_feature import sha1_first

import faithwatch.eval.pipeline as pipeline
from faithwatch.alignment.lexical import _sentence_features
from faithwatch.claims.detector_check import _cover
from faithwatch.claims.spans import content_keys, sentence_spans, tokens
from faithwatch.eval.training import Recipe
from faithwatch.eval.transfer import held_out_aurocs, held_out_names

#: the least a further source must add: content words, word pairs, names and numbers
MIN_ADD = {"words": 2, "bigrams": 1, "anchors": 1}


def bigrams(text: str) -> set[tuple[str, str]]:
    """Adjacent word pairs of ``text`` by match key, leaving out pairs of two stop words."""
    toks = tokens(text)
    return {(a.key, b.key) for a, b in zip(toks, toks[1:], strict=False) if not (a.stop and b.stop)}


def n_sources(held: list[set], least: int) -> int:
    """How many sets the greedy cover of their union takes, each after the first adding at least ``least`` items
    (``claims.detector_check._cover``, the cover of the joined-passages evidence)."""
    return len(_cover(held, least))


@cache
def context_units(context: str) -> tuple[tuple[frozenset, frozenset], ...]:
    """Each context sentence's content words and word pairs."""
    return tuple((frozenset(content_keys(context[a:b])), frozenset(bigrams(context[a:b])))
                 for a, b in sentence_spans(context))


def anchors(sentence: str) -> set[str]:
    """The sentence's names (the lexical scorer's entity-like words, stemmed) and numbers (as match keys)."""
    return set(_sentence_features(sentence).entities) | {k for k in content_keys(sentence) if k[:1].isdigit()}


def fusion(sentence: str, context: str) -> tuple[int, int, int]:
    """(``fuse_words``, ``fuse_bigrams``, ``fuse_anchors``) of ``sentence`` against ``context`` (see the module
    doc)."""
    units = context_units(context)
    words, pairs, names = content_keys(sentence), bigrams(sentence), anchors(sentence)
    return (n_sources([w & words for w, _ in units], MIN_ADD["words"]),
            n_sources([p & pairs for _, p in units], MIN_ADD["bigrams"]),
            n_sources([w & names for w, _ in units], MIN_ADD["anchors"]))


def with_fusion(t: pd.DataFrame, contexts: dict[str, str]) -> pd.DataFrame:
    """The table with the three counts."""
    t = t.reset_index(drop=True)
    counts = np.array([fusion(s, contexts[e]) for s, e in zip(t["text"], t["example_id"], strict=True)])
    return t.assign(fuse_words=counts[:, 0].astype(float), fuse_bigrams=counts[:, 1].astype(float),
                    fuse_anchors=counts[:, 2].astype(float))


def sampled(load, per_set: int):
    """``load_dataset`` keeping the first ``per_set`` examples of each set by sha1 of the id."""
    def load_sample(name, *args, **kwargs):
        examples = load(name, *args, **kwargs)
        keep = set(sha1_first([e.id for e in examples], per_set))
        return [e for e in examples if e.id in keep]
    return load_sample


def load_screen(description: str) -> dict:
    """The text-only features of the six labelled sets and the augmentation set, as ``faithwatch eval
    --text-only`` caches them; with ``--per-set N`` on the command line only the sample (see the module doc)."""
    parser = argparse.ArgumentParser(description=description, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--per-set", type=int, default=None, help="responses per set (default: all)")
    per_set = parser.parse_args().per_set
    if per_set is not None:  # only the sample is scored (and cached)
        pipeline.load_dataset = sampled(pipeline.load_dataset, per_set)
    monitor = pipeline.extraction_monitor(None, "nli-minilm+lexical+embedding")
    return pipeline.load_labelled(list(SETS), monitor, text_only=True, augment=list(AUGMENT))


def main() -> None:
    data = load_screen(__doc__)
    tables = {n: with_fusion(d.sentences, {e.id: e.context for e in d.examples}) for n, d in data.items()}
    for n, t in tables.items():
        shares = t.groupby("fuse_words")["label"].agg(["size", "mean"]).head(5)
        print(n, "fuse_words: sentences and unfaithful share by count",
              ", ".join(f"{int(k)}: {int(r['size'])} / {r['mean']:.2f}" for k, r in shares.iterrows()))
    base = shipped_recipe()
    recipes = {"shipped": base, "+fuse_words": with_extra_family(base, "fusew", "fuse_words", -1),
               "+fuse_bigrams": with_extra_family(base, "fuseb", "fuse_bigrams", -1),
               "+fuse_anchors": with_extra_family(base, "fusea", "fuse_anchors", -1)}
    print_rule(tables, recipes)


def print_rule(tables: dict[str, pd.DataFrame], recipes: dict[str, Recipe],
               before: Callable[[Recipe], None] | None = None) -> None:
    """LOO AUROC of ``align_score`` and of each recipe (one LOO run per recipe; ``before(recipe)`` runs first, for a
    screen that switches something on for some recipes), then the rule's three figures for each recipe against the
    first (the shipped one)."""
    auroc = {}
    for k, r in recipes.items():
        if before is not None:
            before(r)
        auroc[k] = held_out_aurocs(tables, r, "text-only")
    print_aurocs(tables, auroc)


def print_aurocs(tables: dict[str, pd.DataFrame], auroc: dict[str, dict[str, float]]) -> None:
    """The table and the rule's figures of :func:`print_rule` for LOO AUROCs measured elsewhere (``auroc``: per
    recipe, per held-out set; the first is the reference recipe); ``align_score``'s from ``tables``."""
    held = held_out_names(tables)
    ref = {n: roc_auc_score(tables[n].label, -tables[n].align_score) for n in held}
    auroc = dict(auroc)
    width = max(16, *(len(k) + 1 for k in auroc))
    print(f"{'LOO AUROC':<{width}}", " ".join(f"{n.split('/')[-1][:10]:>10}" for n in held), "      mean  worst gain")
    for k, a in {"align_score": ref, **auroc}.items():
        gain = "" if a is ref else f"{min(a[n] - ref[n] for n in held):+10.4f}"
        print(f"{k:<{width}}", " ".join(f"{a[n]:10.4f}" for n in held), f"{np.mean(list(a.values())):10.4f}", gain)
    base = auroc.pop(next(iter(auroc)))
    worst = min(base[n] - ref[n] for n in held)
    for k, a in auroc.items():
        drops = {n.split("/")[-1]: a[n] - base[n] for n in held}
        print(f"{k}: worst gain {min(a[n] - ref[n] for n in held) - worst:+.4f} (>= +0.003), mean "
              f"{np.mean(list(a.values())) - np.mean(list(base.values())):+.4f} (>= -0.0005), lowest set "
              f"{min(drops.values()):+.4f} (>= -0.002):", " ".join(f"{n} {d:+.4f}" for n, d in drops.items()))


if __name__ == "__main__":
    main()
