"""Issue 12: does a probe on the NLI cross-encoder's own representation transfer better than its entailment head?

A scratch measurement (docs/transfer.md, "A probe on the NLI model's representation"). ``align_score`` reads only
the entailment probability of the sentence's best context window. The cross-encoder's pooled vector of that
(window, sentence) pair (384 values, what its 3-way head reads) may hold more. Here a logistic probe on that
vector is trained on the labelled sets and used as one more aggregator input, cross-fitted by data set exactly as
the hidden-state probe (``faithwatch.eval.training``; the vector is stored as a fake probe layer).

Data: the first ``--per-set`` responses of each labelled set and of the augmentation set, ordered by sha1 of the id
(written to ``--out`` as JSONL, so that the text-only features come from the real pipeline and its cache). Prints
LOO AUROC of the probe alone, the shipped recipe and the shipped recipe with the probe (``print_loo``).

    FAITHWATCH_NLI_PRECISION=auto python training/experiments/nli_embedding_probe.py --out /tmp/nliprobe   # ~30 min
"""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pandas as pd
import torch
from aggregator_variants import (  # sibling scripts, on sys.path when this one runs
    AUGMENT,
    SETS,
    print_loo,
    shipped_recipe,
)
from tagger_feature import sample_args, sha1_first

import faithwatch.eval.training as training
from faithwatch.data.loaders import load_dataset, to_jsonl_row
from faithwatch.eval.pipeline import extraction_monitor, load_labelled

LAYER = 999  # the fake probe layer that holds the NLI vector
ROOT = Path(__file__).resolve().parents[2]


def sample_files(per_set: int, out: Path) -> tuple[list[str], list[str]]:
    """Write the first ``per_set`` responses (by sha1 of the id) of every set; the paths of real and augment sets."""
    paths = {}
    for name in (*SETS, *AUGMENT):
        source = str(ROOT / name) if name.endswith(".jsonl") else name
        examples = load_dataset(source, None, questionable="exclude")
        rank = {i: k for k, i in enumerate(sha1_first([e.id for e in examples], per_set))}
        examples = sorted((e for e in examples if e.id in rank), key=lambda e: rank[e.id])
        path = out / f"{Path(name).stem}.jsonl"
        if not path.exists():
            path.write_text("".join(json.dumps(to_jsonl_row(e)) + "\n" for e in examples), encoding="utf-8")
        paths[name] = str(path)
    return [paths[n] for n in SETS], [paths[n] for n in AUGMENT]


def best_window_vectors(scorer, texts: list[str], contexts: list[str], batch_size: int = 32) -> np.ndarray:
    """[n, 384]: the pooled vector of each sentence's highest-entailment context window."""
    enc, model = scorer.encoder, scorer.encoder.model
    pairs, owner = [], []
    for i, (text, context) in enumerate(zip(texts, contexts, strict=True)):
        hyp = scorer._hypothesis(text)
        for chunk in scorer.chunks_for(text, context):
            pairs.append((chunk, hyp))
            owner.append(i)
    best = np.full(len(texts), -1.0)
    vectors = np.zeros((len(texts), model.config.hidden_size))
    order = np.argsort([len(p) + len(h) for p, h in pairs])
    with torch.inference_mode():
        for k in range(0, len(order), batch_size):
            idx = order[k : k + batch_size]
            batch = enc.tokenizer([pairs[j][0] for j in idx], [pairs[j][1] for j in idx], padding=True,
                                  truncation="longest_first", max_length=enc.max_length, return_tensors="pt")
            with torch.autocast("cpu", dtype=torch.bfloat16, enabled=enc.precision == "bf16"):
                pooled = model.bert(**batch).pooler_output
                entail = torch.softmax(model.classifier(pooled).float(), -1)[:, 0]
            for j, p, v in zip(idx, entail.tolist(), pooled.float().numpy(), strict=True):
                i = owner[j]
                if p > best[i]:
                    best[i], vectors[i] = p, v
    return vectors


def with_vectors(tables: dict[str, pd.DataFrame], data, scorer, out: Path) -> dict[str, pd.DataFrame]:
    """Each table with the NLI vector in ``hidden_mean_layer_<LAYER>`` (computed once, kept in ``out``)."""
    result = {}
    for name, t in tables.items():
        path = out / f"{name}.vectors.npy"
        contexts = {e.id: e.context for e in data[name].examples}
        if path.exists():
            vec = np.load(path)
        else:
            vec = best_window_vectors(scorer, t["text"].tolist(), [contexts[i] for i in t["example_id"]])
            np.save(path, vec)
        result[name] = t.assign(**{f"hidden_mean_layer_{LAYER}": list(vec)})
    return result


def main() -> None:
    args = sample_args(__doc__, 150, "folder for the samples and vectors (reused)")
    torch.set_num_threads(2)
    sets, augment = sample_files(args.per_set, args.out)
    monitor = extraction_monitor(None, "nli-minilm+lexical+embedding")
    data = load_labelled(sets, monitor, text_only=True, augment=augment)
    tables = {n: d.sentences.reset_index(drop=True) for n, d in data.items()}
    nli = next(s for s in monitor.alignment.scorers if s.name == "nli-minilm")
    tables = with_vectors(tables, data, nli, args.out)
    shipped = shipped_recipe()
    recipes = {"shipped (training/recipe.json)": shipped}
    for C in (1e-3, 1e-2):
        recipes[f"probe alone, C={C:g}"] = training.Recipe(families=("probe",), probe_layers=(LAYER,), probe_C=C)
        recipes[f"shipped + probe, C={C:g}"] = training.Recipe(
            **{**shipped.__dict__, "families": (*shipped.families, "probe"), "probe_layers": (LAYER,),
               "probe_C": C})
    print_loo(tables, recipes)


if __name__ == "__main__":
    main()
