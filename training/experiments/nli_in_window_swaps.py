"""Issue 12, item 4: how does nli-minilm read a value swapped with another value *of the same premise*? (diagnostic)

fresh9 and fresh11 showed two answers that the detector passed and NLI entailed: "King Henry VIII had two wives."
(the context: "He had six wives. Two of them ... were beheaded.") and "The capital of Pakistan is Lahore." (the
context names Lahore, but not as the capital; entailment 0.945). The NLI recipe's on-topic contradictions
(``faithwatch.nli.synthetic.document_pairs``) change a number at random or swap in an entity from elsewhere in the
document, never a value that the premise window itself holds.

This script builds such pairs from the premises of two NLI dev sets that no recipe trains on (ANLI dev, FEVER-NLI
test: multi-sentence Wikipedia passages; no faithfulness set), so that an adapter trained with
``train-nli --doc-window-swaps`` (whose swaps come from the training premises) is judged out of sample. A pair is a
window of a passage, one of its sentences, and that sentence with a number (or a capitalised name) replaced by
another number (name) of the same window. It prints the adapter's entailment probability for the original sentence
and for each kind of swap, the share of swaps it passes (entailment >= 0.5), and the AUROC separating originals
from swaps, next to the recipe's own moves. No training; about 30 s on 2 CPU cores.

    python training/experiments/nli_in_window_swaps.py [N] [--model ADAPTER_DIR]

--model scores with another trained adapter (e.g. one trained with ``train-nli --doc-window-swaps``).
"""

from __future__ import annotations

import json
import random
import sys

import numpy as np
from sklearn.metrics import roc_auc_score

from faithwatch.alignment import get_scorer
from faithwatch.data.loaders import data_root
from faithwatch.nli.synthetic import (
    ENTITY,
    NUMBER,
    _swap_number,
    _window,
    detokenize,
    sentences_of,
    swap_within,
)

#: NLI dev sets with multi-sentence premises, none of them in the training file
DEV_SETS = ("dev_anli_dev_r1_r3", "dev_fever_nli_test_binary")


def build(n: int, seed: int = 0) -> dict[str, list[tuple[str, str]]]:
    """``n`` (premise, hypothesis) pairs per move, from passages of the :data:`DEV_SETS` premises."""
    rng = random.Random(seed)
    texts = [json.loads(line)["premise"] for name in DEV_SETS
             for line in (data_root() / "nli" / f"{name}.jsonl").open(encoding="utf-8")]
    docs = [s for s in (sentences_of(detokenize(t)) for t in dict.fromkeys(texts)) if len(s) >= 3]
    moves = {
        "original": lambda s, inside, doc: s,
        "number swapped within the window": lambda s, inside, doc: swap_within(
            s, " ".join(x for x in inside if x != s), NUMBER, rng),
        "name swapped within the window": lambda s, inside, doc: swap_within(
            s, " ".join(x for x in inside if x != s), ENTITY, rng),
        "number changed (recipe move)": lambda s, inside, doc: _swap_number(s, rng),
        "name from the document (recipe move)": lambda s, inside, doc: swap_within(
            s, [x for x in doc if x != s], ENTITY, rng),
    }
    out: dict[str, list[tuple[str, str]]] = {k: [] for k in moves}
    for _ in range(200 * n):
        if all(len(v) >= n for v in out.values()):
            break
        doc = rng.choice(docs)
        i, j = _window(doc, rng, 48)
        inside = doc[i:j]
        if len(inside) < 2:
            continue
        sent = rng.choice(inside)
        for name, move in moves.items():
            if len(out[name]) < n and (hyp := move(sent, inside, doc)) and (name == "original" or hyp != sent):
                out[name].append((" ".join(inside), hyp))
    return out


def main(n: int, model: str | None) -> None:
    pairs = build(n)
    nli = get_scorer(f"nli-minilm:{model}" if model else "nli-minilm")
    scores = {k: np.asarray([nli.score(h, p) for p, h in v]) for k, v in pairs.items()}
    orig = scores["original"]
    print(f"{'hypothesis':<40} {'n':>4} {'mean p(entail)':>15} {'passes (>= 0.5)':>16} {'AUROC vs original':>18}")
    for name, s in scores.items():
        auroc = "" if name == "original" else f"{roc_auc_score([1] * len(orig) + [0] * len(s), [*orig, *s]):18.3f}"
        print(f"{name:<40} {len(s):>4} {s.mean():15.3f} {np.mean(s >= 0.5):16.3f} {auroc}")


if __name__ == "__main__":
    args = sys.argv[1:]
    model = args[args.index("--model") + 1] if "--model" in args else None
    numbers = [a for a in args if a.isdigit()]
    main(int(numbers[0]) if numbers else 300, model)
