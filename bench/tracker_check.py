"""The sentence tracker against the simpler ways it replaced: the same sentences? and how much faster?

The tracker (``faithwatch.sentences``) asks the splitter when a possible sentence end arrives and while one to
``RESPLIT_WORDS`` complete words follow it, and decodes only the newest tokens. This feeds every response of the
named data sets token by token (embedded tokenizer) through the tracker as shipped, through the rule it replaced
(ask at every token while the open tail holds a possible end) and with every token decoded again, and prints the
responses whose sentences, emitting tokens or text after some token differ.

    python bench/tracker_check.py           # the labelled sets of docs/transfer.md (~4,000 responses, ~3 min)
    python bench/tracker_check.py --data my.jsonl --limit 200
"""

from __future__ import annotations

import argparse
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
SETS = ["faithbench", "qags-cnndm", "begin-dev"] + [
    str(ROOT / "training" / "data" / f) for f in ("ragtruth-qa.jsonl", "ragtruth-summary.jsonl",
                                                   "ragtruth-data2txt.jsonl", "q2-wow.jsonl", "synthetic-edits.jsonl")]


def run(tokenizer, ids: list[list[int]], full_decode: bool = False) -> tuple[list, float]:
    """(index of the token that emitted it, start, end, token_start, token_end) per sentence, then the text after
    every token, per response; and seconds. ``full_decode``: decode every token again instead of incrementally."""
    from faithwatch.sentences import SentenceTracker

    start, out = time.perf_counter(), []
    for seq in ids:
        tracker, got, texts = SentenceTracker(tokenizer, incremental=not full_decode), [], []
        for i, token in enumerate(seq):
            got += [(i, s.start, s.end, s.token_start, s.token_end) for s in tracker.add([token])]
            texts.append(tracker.text)
        got += [(len(seq), s.start, s.end, s.token_start, s.token_end) for s in tracker.finish()]
        out.append((got, texts))
    return out, time.perf_counter() - start


def report(what: str, responses: list[str], shipped: list, other: list, t_shipped: float, t_other: float) -> None:
    """How many responses the ``other`` way splits (or decodes) differently, and the time of each way."""
    n = len(responses)
    differ = [i for i, (a, b) in enumerate(zip(shipped, other, strict=True)) if a != b]
    print(f"{what}: {len(differ)} of {n} responses differ (sentences, emitting tokens or text at some token); "
          f"tracker {t_other / n * 1e3:.2f} ms per response that way, {t_shipped / n * 1e3:.2f} ms as shipped "
          f"({t_shipped / t_other:.2f}x the time)")
    for i in differ[:5]:
        print(f"--- {responses[i][:200]!r}\n  shipped: {shipped[i][0]}\n  other: {other[i][0]}")


def main() -> None:
    from transformers import AutoTokenizer

    from faithwatch import sentences
    from faithwatch.data.loaders import load_dataset
    from faithwatch.models.loading import _materialise_embedded

    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--data", default=",".join(SETS), help="comma-separated names or .jsonl paths")
    parser.add_argument("--limit", type=int, default=0, help="first N responses of each set (0: all)")
    args = parser.parse_args()
    tokenizer = AutoTokenizer.from_pretrained(_materialise_embedded())
    responses = []
    for name in args.data.split(","):
        examples = load_dataset(name)
        responses += [e.response for e in (examples[: args.limit] if args.limit else examples)]
    ids = [tokenizer(r, add_special_tokens=False)["input_ids"] for r in responses]
    print(f"{len(ids)} responses, {sum(map(len, ids))} tokens", flush=True)
    shipped, t_shipped = run(tokenizer, ids)
    rule = sentences.SentenceTracker._worth_splitting
    sentences.SentenceTracker._worth_splitting = (  # the replaced rule: any possible end in the open tail
        lambda self, text, _new_from: bool(sentences._BOUNDARY_CHARS.search(text, self._final_end)))
    try:
        every, t_every = run(tokenizer, ids)
    finally:
        sentences.SentenceTracker._worth_splitting = rule
    report("asking pysbd at every token", responses, shipped, every, t_shipped, t_every)
    full, t_full = run(tokenizer, ids, full_decode=True)
    report("decoding every token again", responses, shipped, full, t_shipped, t_full)

if __name__ == "__main__":
    main()
