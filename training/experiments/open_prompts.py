"""Open-ended prompts for decoding checks, and how many answers repeat a sentence (the ``no_repeat`` rule).

``--write DIR`` writes two prompt files of ``faithwatch eval-decoding``'s prompt-only format (no answers) from the
packaged RAGTruth sets: ``qa.jsonl``, the first 16 distinct questions of ``ragtruth-qa.jsonl`` with their passages,
and ``summary.jsonl``, the first 10 distinct contexts of ``ragtruth-summary.jsonl`` with their instruction, and
``qa2.jsonl``, the next 16 distinct questions (a second check, written after the rule was kept). Given
report folders instead, it counts, per strategy, the answers in which a sentence says another again word for word
(``faithwatch.text.repeats``, on the answer split by ``faithwatch.text.split_sentences``, and on the sentences the
decoder scored, which the rule reads) and the refusals.

    python training/experiments/open_prompts.py --write /tmp/open
    faithwatch eval-decoding --data /tmp/open/qa.jsonl --strategies greedy,fod-fallback --max-new-tokens 256 \
        --report /tmp/open-qa
    python training/experiments/open_prompts.py /tmp/open-qa
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

from faithwatch.eval.decoding import read_answers
from faithwatch.text import repeats, split_sentences

SETS = {"qa": ("training/data/ragtruth-qa.jsonl", "question", 0, 16),
        "summary": ("training/data/ragtruth-summary.jsonl", "context", 0, 10),
        "qa2": ("training/data/ragtruth-qa.jsonl", "question", 16, 16)}


def write(out: Path) -> None:
    out.mkdir(parents=True, exist_ok=True)
    for name, (path, distinct, skip, n) in SETS.items():
        seen: set[str] = set()
        rows: list[dict] = []
        for line in Path(path).read_text(encoding="utf-8").splitlines():
            r = json.loads(line)
            if r[distinct] in seen:
                continue
            seen.add(r[distinct])
            if len(seen) <= skip:
                continue
            rows.append({"id": f"{name}-{len(rows)}", "question": r["question"], "context": r["context"]})
            if len(rows) == n:
                break
        (out / f"{name}.jsonl").write_text("".join(json.dumps(r) + "\n" for r in rows), encoding="utf-8")
        print(f"{out / name}.jsonl: {len(rows)} prompts")


def _repeated(sentences: list[str]) -> bool:
    return any(repeats(s, sentences[:i]) for i, s in enumerate(sentences))


def count(report: Path) -> None:
    tally: dict[str, list[int]] = {}
    for r in read_answers(report):
        by_pysbd = _repeated(split_sentences(r.get("answer") or ""))
        by_decoder = not r.get("refused") and _repeated([s["text"] for s in r.get("sentences") or []])
        t = tally.setdefault(r["strategy"], [0, 0, 0, 0])
        t[0], t[1], t[2], t[3] = t[0] + 1, t[1] + by_pysbd, t[2] + by_decoder, t[3] + bool(r.get("refused"))
    for strategy, (n, by_pysbd, by_decoder, refused) in tally.items():
        print(f"{report} {strategy}: {n} answers, {by_pysbd} with a repeated sentence ({by_decoder} by the "
              f"decoder's sentences), {refused} refused")


if __name__ == "__main__":
    if sys.argv[1:2] == ["--write"]:
        write(Path(sys.argv[2]))
    else:
        for folder in sys.argv[1:]:
            count(Path(folder))
