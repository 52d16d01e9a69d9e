"""Issue 12, transfer: the embedded SmolLM2-135M-Instruct asked "Is the statement supported?" (scratch; measured,
not kept).

A judge feature needs no training data: the monitored model reads the context and one sentence and answers Yes or
No; the score is log P(Yes) − log P(No) over the first answer token ("Yes"/" Yes"/"yes" against the same for No).
This scores 160 labelled sentences drawn at random (seed 0) from each named set and prints the AUROC of the score
for *faithful* (0.5 is chance). No prompt is cut: the longest prompt's tokens are printed beside the model's limit.

**Measured (2026-11-29, thirty-second session): at or below chance, so it was not taken further.** BEGIN dev 0.438,
QAGS-CNNDM 0.584 (160 sentences each; 2.5 min on 2 cores). A 135M-parameter model does not follow this
instruction; faithwatch's NLI score alone reaches 0.862 and 0.756 on all the sentences of these sets
(docs/transfer.md, the table of "What the user asked, leading every NLI premise").

    OMP_NUM_THREADS=2 FAITHWATCH_DATA=/work/shared/data python training/experiments/llm_judge.py begin-dev qags-cnndm
"""

from __future__ import annotations

import random
import sys
import time

import torch
from sklearn.metrics import roc_auc_score

from faithwatch.data.loaders import load_dataset
from faithwatch.models.loading import load_model

PROMPT = ("Context: {context}\n\nStatement: {sentence}\n\nIs the statement fully supported by the context? "
          "Answer Yes or No.")


def labelled_sentences(name: str, n: int = 160) -> list[tuple[str, str, int]]:
    """(context, sentence, 1 if unfaithful) for ``n`` labelled sentences of set ``name`` (spans, or whole responses
    with a response label), drawn with seed 0."""
    rows = []
    for e in load_dataset(name):
        if e.spans:
            rows += [(e.context, e.response[s.start:s.end], int(s.label == "unfaithful")) for s in e.spans
                     if s.label in ("faithful", "unfaithful")]
        elif e.response_label is not None:
            rows.append((e.context, e.response, e.response_label))
    random.Random(0).shuffle(rows)
    return rows[:n]


class YesNoJudge:
    """log P(Yes) − log P(No) of the model's first answer token ("Yes"/" Yes"/"yes" against the same for No) after
    one user message; called with the message, it gives (score, prompt tokens)."""

    def __init__(self, lm) -> None:
        self.model, self.tok = lm.model, lm.tokenizer
        self.yes = [self.tok.encode(w, add_special_tokens=False)[0] for w in ("Yes", " Yes", "yes")]
        self.no = [self.tok.encode(w, add_special_tokens=False)[0] for w in ("No", " No", "no")]
        self.limit = self.model.config.max_position_embeddings

    def __call__(self, message: str) -> tuple[float, int]:
        ids = self.tok.apply_chat_template([{"role": "user", "content": message}], add_generation_prompt=True,
                                           return_tensors="pt")
        ids = ids["input_ids"] if hasattr(ids, "keys") else ids
        if ids.shape[1] > self.limit:
            raise SystemExit(f"a prompt of {ids.shape[1]} tokens is over the model's {self.limit}")
        with torch.no_grad():
            lp = torch.log_softmax(self.model(ids).logits[0, -1].float(), -1)
        return (torch.logsumexp(lp[self.yes], 0) - torch.logsumexp(lp[self.no], 0)).item(), ids.shape[1]


def main(names: list[str]) -> None:
    torch.set_num_threads(2)
    judge = YesNoJudge(load_model())
    for name in names:
        rows, start = labelled_sentences(name), time.time()
        scored = [judge(PROMPT.format(context=context, sentence=sentence)) for context, sentence, _ in rows]
        scores, longest = [x for x, _ in scored], max(n for _, n in scored)
        faithful = [1 - y for *_, y in rows]
        print(f"{name}: {len(rows)} sentences ({sum(1 - f for f in faithful)} unfaithful), AUROC for faithful "
              f"{roc_auc_score(faithful, scores):.3f}; longest prompt {longest} of {judge.limit} tokens; "
              f"{time.time() - start:.0f} s", flush=True)

if __name__ == "__main__":
    if len(sys.argv) < 2:
        raise SystemExit(__doc__)
    main(sys.argv[1:])
