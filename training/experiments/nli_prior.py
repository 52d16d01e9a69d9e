"""Issue 12: does the NLI model's hypothesis-only prior transfer, as a debiasing term? (scratch)

NLI models learn to entail some hypotheses from their wording alone, whatever the premise (Poliak et al., 2018,
"Hypothesis Only Baselines in Natural Language Inference"; Gururangan et al., 2018). Debiasing by a product of experts
subtracts the hypothesis-only model's log-odds from the full model's (He et al., 2019, "Unlearn Dataset Bias in
Natural Language Inference by Fitting the Residual"; Clark et al., 2019). ``align_score``'s NLI part may be raised
the same way: a generic or self-evident sentence is entailed by any window. One feature, fixed before any run:

* ``nli_prior``: the log-odds of entailment that ``nli-minilm`` gives the sentence with an empty premise, clipped to
  [-10, 10]. Direction: higher, less faithful (given ``align_score``, a sentence the model entails without evidence
  has less evidence than its score says; the product of experts' sign).

LOO AUROC of the shipped recipe with it added as its own family (sign-constrained), next to the shipped recipe, on
the text-only cache that ``faithwatch eval --text-only`` builds; the feature itself is computed here (one NLI pair per
sentence).

**The rule, written before the first run** (the rule of ``fusion_features.py``). It is worth building as a signal
only if, against the shipped recipe in the same run: (1) the worst gain over ``align_score`` rises by at least 0.003;
(2) the mean LOO AUROC does not fall by more than 0.0005; (3) no set falls by more than 0.002. Screened first on the
sample (``--per-set 150``, the first 150 responses of each labelled set and of the augmentation set by sha1 of the
id); one that passes there is measured on every sentence before anything is built, and one that fails is not.

    python training/experiments/nli_prior.py --per-set 150   # ~1 min with the sample's caches, plus the NLI pass
"""

from __future__ import annotations

import numpy as np
import pandas as pd
from aggregator_variants import shipped_recipe, with_extra_family
from fusion_features import load_screen, print_rule
from scipy.special import logit
from sklearn.metrics import roc_auc_score

from faithwatch.nli.artifact import load_cross_encoder

CLIP = 10.0


def prior_logodds(sentences: list[str]) -> np.ndarray:
    """Log-odds of entailment of each sentence with an empty premise (``nli-minilm``), clipped to +-``CLIP``."""
    model = load_cross_encoder()
    probs = model.predict_proba([""] * len(sentences), sentences, batch_size=64)
    entail = model.labels.index("entailment")
    return np.clip(logit(np.clip(probs[:, entail], 1e-12, 1 - 1e-12)), -CLIP, CLIP)


def main() -> None:
    data = load_screen(__doc__)
    tables = {n: d.sentences.reset_index(drop=True) for n, d in data.items()}
    texts = pd.concat([t["text"] for t in tables.values()]).unique().tolist()
    prior = dict(zip(texts, prior_logodds(texts), strict=True))
    tables = {n: t.assign(nli_prior=t["text"].map(prior).astype(float)) for n, t in tables.items()}
    for n, t in tables.items():
        ok = t[~t.train_only] if "train_only" in t else t
        if ok.label.nunique() < 2:  # the augmentation set is training only
            continue
        print(f"{n}: nli_prior alone AUROC {roc_auc_score(ok.label, ok.nli_prior):.3f}, "
              f"corr with align_score {np.corrcoef(ok.nli_prior, ok.align_score)[0, 1]:+.2f}")
    base = shipped_recipe()
    print_rule(tables, {"shipped": base, "+nli_prior": with_extra_family(base, "prior", "nli_prior", -1)})


if __name__ == "__main__":
    main()
