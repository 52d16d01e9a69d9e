"""What the joined-passages rule of `check --checker detector` does on RAGTruth QA (docs/claims.md): each response
sentence is one claim, checked against the context's passages ("passage 1: …", "passage 2: …") as a list; a
sentence is flagged when its verdict is not Entailment. Balanced accuracy against the span labels, before the rule
(passages alone) and with it, and how many of the verdicts the rule changes leave a passage out of their evidence
because it adds no word of the sentence. IN-SAMPLE: the shipped detector was trained on RAGTruth QA.

    FAITHWATCH_DATA=../shared/data OMP_NUM_THREADS=2 python training/experiments/joined_passages_ragtruth.py [N]
"""

from __future__ import annotations

import random
import re
import sys

from sklearn.metrics import balanced_accuracy_score

from faithwatch.claims.checking import CheckerSpec, get_checker
from faithwatch.claims.extraction import SegmentExtractor
from faithwatch.claims.spans import content_keys, tokens
from faithwatch.claims.types import ENTAILMENT
from faithwatch.data.loaders import load_dataset
from faithwatch.data.schema import sentence_label


def main(n: int = 150) -> None:
    """Check ``n`` seeded-random responses with more than one passage; print both balanced accuracies."""
    examples = [e for e in load_dataset("training/data/ragtruth-qa.jsonl")
                if len(re.findall(r"passage \d+:", e.context)) > 1]
    examples = random.Random(0).sample(examples, min(n, len(examples)))
    checker = get_checker(CheckerSpec(kind="detector"))
    extractor = SegmentExtractor("sentence")
    joined_entailed: set[int] = set()  # the claims of the current response the joined rule made Entailment
    original = checker._joined

    def recording(claims, which, refs, question):
        scores = original(claims, which, refs, question)
        joined_entailed.update(i for i, s in zip(which, scores, strict=True) if s >= checker.monitor.threshold)
        return scores

    checker._joined = recording
    labels, before, after = [], [], []
    left_out = 0  # changed verdicts whose evidence leaves out a passage that holds a word of the sentence
    for k, e in enumerate(examples):
        joined_entailed.clear()
        passages = [p.strip() for p in re.split(r"(?=passage \d+:)", e.context) if p.strip()]
        claims = extractor.extract(e.response)
        verdicts = checker.check(claims, passages, e.question)
        for i, (c, v) in enumerate(zip(claims, verdicts, strict=True)):
            label = sentence_label(e, *c.response_span, 1)
            if label is None:
                continue
            labels.append(int(label))
            after.append(int(v.label != ENTAILMENT))
            before.append(1 if i in joined_entailed else after[-1])
            if before[-1] != after[-1]:
                wanted = content_keys(c.text)
                holding = sum(bool({t.key for t in tokens(p)} & wanted) for p in passages)
                left_out += len(v.evidence) < holding
        print(f"\r{k + 1}/{len(examples)} responses", end="", file=sys.stderr, flush=True)
    print(file=sys.stderr)
    changed = sum(b != a for b, a in zip(before, after, strict=True))
    print(f"{len(labels)} sentences ({sum(labels)} unfaithful) of {len(examples)} responses; "
          f"{changed} verdicts changed")
    print(f"balanced accuracy: passages alone {balanced_accuracy_score(labels, before):.3f}, "
          f"with the joined rule {balanced_accuracy_score(labels, after):.3f} (in-sample)")
    print(f"flagged: {sum(before)} -> {sum(after)}; of the changed, unfaithful: "
          f"{sum(lab for lab, b, a in zip(labels, before, after, strict=True) if b != a)}")
    print(f"changed verdicts whose evidence leaves out a passage holding a word of the sentence: {left_out}")


if __name__ == "__main__":
    main(int(sys.argv[1]) if len(sys.argv) > 1 else 150)
