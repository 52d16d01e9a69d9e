"""Issue 12: do extractive fragments (coverage's other half: how long the copied runs are) transfer? (scratch)

Grusky et al. (2018, "Newsroom") describe a summary by its extractive fragments: the greedy, non-overlapping runs of
tokens it shares with the article, each as long as possible. Coverage is the share of tokens inside a fragment (the
shipped ``lex_content`` and ``lex_bigrams`` are close to it); *density* is the mean squared fragment length per
token, high for a sentence that copies long runs. Faithfulness falls as summaries get more abstractive (Ladhak et
al., 2022, "Faithful or Extractive?"), and a sentence that copies long runs has fewer places to go wrong. The
shipped ``edit_match`` aligns the sentence to one context sentence only; fragments may come from anywhere in the
context. Two model-free features, fixed before any run (direction: higher, more faithful):

* ``frag_density``: Grusky's density divided by the sentence's length, sum(|f|^2) / |S|^2, in [0, 1] (1 for a
  verbatim copy of one run);
* ``frag_longest``: the longest fragment's share of the sentence's tokens, in [0, 1].

Tokens are ``claims.spans.tokens`` match keys (stems, normalised numbers), stop words included (they hold runs
together). Each is added to the shipped recipe as its own sign-constrained family; LOO AUROC next to the shipped
recipe, on the text-only cache that ``faithwatch eval --text-only`` builds.

**The rule, written before the first run** (the rule of ``fusion_features.py``): worth building only if, against
the shipped recipe in the same run, (1) the worst gain over ``align_score`` rises by at least 0.003, (2) the mean LOO
AUROC falls by at most 0.0005, (3) no set falls by more than 0.002. Screened on the 150-response sample first; one
that fails there is not measured further.

    python training/experiments/fragment_features.py --per-set 150   # ~1 min with the sample's caches
"""

from __future__ import annotations

from collections import defaultdict
from functools import cache

import numpy as np
import pandas as pd
from aggregator_variants import shipped_recipe, with_extra_family
from fusion_features import load_screen, print_rule
from sklearn.metrics import roc_auc_score

from faithwatch.claims.spans import tokens


@cache
def context_index(context: str) -> tuple[tuple[str, ...], dict[str, tuple[int, ...]]]:
    """The context's token keys, and where each key occurs."""
    keys = tuple(t.key for t in tokens(context))
    where: dict[str, list[int]] = defaultdict(list)
    for j, k in enumerate(keys):
        where[k].append(j)
    return keys, {k: tuple(v) for k, v in where.items()}


def fragments(sentence: list[str], context: str) -> list[int]:
    """Lengths of the sentence's extractive fragments (Grusky et al. 2018): from each position, the longest run the
    context holds, then on after it."""
    keys, where = context_index(context)
    out, i = [], 0
    while i < len(sentence):
        best = 0
        for j in where.get(sentence[i], ()):
            n = 0
            while i + n < len(sentence) and j + n < len(keys) and sentence[i + n] == keys[j + n]:
                n += 1
            best = max(best, n)
        if best:
            out.append(best)
        i += max(best, 1)
    return out


def fragment_features(sentence: str, context: str) -> tuple[float, float]:
    """(``frag_density``, ``frag_longest``) of ``sentence`` against ``context``; (0, 0) for a sentence with no
    tokens."""
    keys = [t.key for t in tokens(sentence)]
    if not keys:
        return 0.0, 0.0
    frags = fragments(keys, context)
    return sum(f * f for f in frags) / len(keys) ** 2, max(frags, default=0) / len(keys)


def with_fragments(t: pd.DataFrame, contexts: dict[str, str]) -> pd.DataFrame:
    """The table with the two features."""
    t = t.reset_index(drop=True)
    values = np.array([fragment_features(s, contexts[e]) for s, e in zip(t["text"], t["example_id"], strict=True)])
    return t.assign(frag_density=values[:, 0], frag_longest=values[:, 1])


def main() -> None:
    data = load_screen(__doc__)
    tables = {n: with_fragments(d.sentences, {e.id: e.context for e in d.examples}) for n, d in data.items()}
    for n, t in tables.items():
        ok = t[~t.train_only]
        if ok.label.nunique() < 2:  # the augmentation set is training only
            continue
        alone = {c: roc_auc_score(ok.label, -ok[c]) for c in ("frag_density", "frag_longest")}
        print(f"{n}: alone (AUROC for unfaithful of minus the feature) density {alone['frag_density']:.3f}, "
              f"longest {alone['frag_longest']:.3f}; density's corr with align_score "
              f"{np.corrcoef(ok.frag_density, ok.align_score)[0, 1]:+.2f}")
    base = shipped_recipe()
    print_rule(tables, {"shipped": base, "+frag_density": with_extra_family(base, "fragd", "frag_density", 1),
                        "+frag_longest": with_extra_family(base, "fragl", "frag_longest", 1)})


if __name__ == "__main__":
    main()
