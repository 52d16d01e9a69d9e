"""Synthetic near-copy responses with span labels, for training detectors on blatant edits.

Real labelled sets hold few sentences that copy the context and change one fact, so a detector trained on them
learns little about such edits. This builds responses from the *contexts* of labelled training sets: a few
consecutive context sentences, copied or shortened (faithful), one of them, in about half of the responses,
changed by one move of :func:`faithwatch.nli.synthetic.make_hypothesis` (a number, an entity of the same
context, or a negation: unfaithful) or extended by a clause from another context (unfaithful). The changed
sentence is marked as an unfaithful span. Deterministic given the seed.

Use it as a training-only set (``--augment``): it is never held out, and calibration does not use it.
"""

from __future__ import annotations

import random
from collections.abc import Sequence

from faithwatch.data.schema import LabelledExample, LabelledSpan
from faithwatch.nli.synthetic import make_hypothesis, sentences_of
from faithwatch.tasks import SUMMARY_INSTRUCTION

#: the moves of an unfaithful sentence, with their weights
MOVES = ("number", "entity", "negation")


def edit_examples(sources: Sequence[LabelledExample], n: int, *, seed: int = 0, dataset: str = "synthetic-edits",
                  max_sentences: int = 3) -> list[LabelledExample]:
    """``n`` responses built from the contexts of ``sources`` (see the module doc); about half are unfaithful."""
    rng = random.Random(seed)
    docs = [(e, s) for e in dict((e.context, e) for e in sources).values() if len(s := sentences_of(e.context)) >= 3]
    if len(docs) < 2:
        raise ValueError("need at least two source contexts of three or more sentences")
    out: list[LabelledExample] = []
    attempts = 0
    while len(out) < n:
        attempts += 1
        if attempts > 50 * n:
            raise ValueError("could not build enough edited responses from these contexts")
        example = _draw(docs, rng, len(out) % 2 == 1, max_sentences)
        if example is not None:
            out.append(LabelledExample(dataset=dataset, id=f"{dataset}-{len(out)}", **example))
    return out


def _draw(docs, rng: random.Random, unfaithful: bool, max_sentences: int) -> dict | None:
    source, sents = rng.choice(docs)
    k = rng.randint(1, min(max_sentences, len(sents)))
    i = rng.randrange(len(sents) - k + 1)
    chosen = [make_hypothesis("entailment", s, rng, MOVES, [], []) or s for s in sents[i : i + k]]
    spans: list[LabelledSpan] = []
    if unfaithful:
        j = rng.randrange(k)
        others = [s for s in sents if s != sents[i + j]]
        outside = sentences_of(rng.choice([d for d in docs if d[0] is not source])[0].context)
        kind = "neutral" if rng.random() < 0.2 else "contradiction"
        changed = make_hypothesis(kind, sents[i + j], rng, MOVES, others, outside if kind == "neutral" else [])
        if not changed or changed == sents[i + j] or changed in source.context:
            return None
        chosen[j] = changed
        start = sum(len(s) + 1 for s in chosen[:j])
        spans = [LabelledSpan(start, start + len(changed), "unfaithful")]
    return {"context": source.context, "question": source.question, "response": " ".join(chosen),
            "instruction": source.instruction or SUMMARY_INSTRUCTION, "spans": spans,
            "response_label": int(unfaithful), "source_model": "synthetic"}
