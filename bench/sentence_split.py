"""Sentence splitting: faithwatch's segmenter (``faithwatch.text.sentences``) against pysbd's own, on the same
texts in the same run: time per text, and whether every sentence span is the same.

pysbd places each sentence in the text by compiling ``re.escape(sentence) + r"\\s*"`` and scanning from the start;
faithwatch's subclass finds the same matches with ``str.find``.

    python bench/sentence_split.py                    # every context and response of the labelled sets
    python bench/sentence_split.py --limit 100        # the first 100 records of each set
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from tracker_check import SETS  # noqa: E402  (the labelled sets both benches read)


def _spans(segmenter, texts: list[str]) -> tuple[list, float]:
    start = time.perf_counter()
    out = [[(s.sent, s.start, s.end) for s in segmenter.segment(t)] for t in texts]
    return out, time.perf_counter() - start


def main() -> None:
    import pysbd

    from faithwatch.data.loaders import load_dataset
    from faithwatch.text.sentences import segmenter

    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--data", default=",".join(SETS), help="comma-separated names or .jsonl paths")
    parser.add_argument("--limit", type=int, default=0, help="first N records of each set (0: all)")
    parser.add_argument("--rounds", type=int, default=2, help="timed rounds of each, alternating")
    args = parser.parse_args()
    texts: list[str] = []
    for name in args.data.split(","):
        examples = load_dataset(name)
        for e in examples[: args.limit] if args.limit else examples:
            texts += [e.context if isinstance(e.context, str) else "\n\n".join(e.context), e.response]
    texts = [t for t in dict.fromkeys(texts) if t.strip()]
    print(f"{len(texts)} distinct texts, {sum(map(len, texts)) // len(texts)} characters on average", flush=True)
    theirs = pysbd.Segmenter(language="en", clean=False, char_span=True)
    ours = segmenter("en", char_span=True)
    times: dict[str, list[float]] = {"pysbd": [], "faithwatch": []}
    for _ in range(args.rounds):
        want, t_want = _spans(theirs, texts)
        got, t_got = _spans(ours, texts)
        times["pysbd"].append(t_want)
        times["faithwatch"].append(t_got)
    differ = sum(a != b for a, b in zip(want, got, strict=True))
    per = {k: min(v) / len(texts) * 1e3 for k, v in times.items()}
    print(f"pysbd's own {per['pysbd']:.2f} ms per text, faithwatch's {per['faithwatch']:.2f} "
          f"({per['pysbd'] / per['faithwatch']:.2f}x as fast; best of {args.rounds}); "
          f"{differ} of {len(texts)} texts split differently")


if __name__ == "__main__":
    main()
