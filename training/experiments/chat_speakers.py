"""Chat contexts with "I" and "you" read as the speakers' names: measured on FacEval's first half, not built (scratch).

"Amanda: I'll bring you some tomorrow" becomes "Amanda: Amanda will bring Jerry some tomorrow" (first person: the
speaker; second person, in a chat of two: the other one). The split was fixed before any run: the first 75 dialogues
of `faceval.jsonl` (file order) to try it, the last 75 left for a confirmation that a kept rule would get. This writes
`build/extra-data/faceval-dev.jsonl` and `faceval-dev-speakers.jsonl`; then

    python training/experiments/never_seen.py build/extra-data/faceval-dev.jsonl \
        build/extra-data/faceval-dev-speakers.jsonl
"""

from __future__ import annotations

import json
import re
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
DATA = ROOT / "build" / "extra-data"
_LINE = re.compile(r"^\s*([A-Za-z][\w.'-]*(?: [A-Za-z][\w.'-]*){0,2})\s*:\s+(\S.*)$")
FIRST = {"i": "{n}", "me": "{n}", "my": "{n}'s", "mine": "{n}'s", "myself": "{n}", "i'm": "{n} is", "im": "{n} is",
         "i'll": "{n} will", "i've": "{n} has", "i'd": "{n} would", "i am": "{n} is"}
SECOND = {"you": "{n}", "your": "{n}'s", "yours": "{n}'s", "yourself": "{n}", "you're": "{n} is", "youre": "{n} is",
          "you'll": "{n} will", "you've": "{n} has", "you'd": "{n} would", "u": "{n}", "ur": "{n}'s",
          "you are": "{n} is"}


def _pattern(table: dict[str, str]) -> re.Pattern[str]:
    keys = sorted(table, key=len, reverse=True)
    alts = "|".join(re.escape(k).replace("'", "['’]").replace(r"\ ", r"\s+") for k in keys)
    return re.compile(r"(?<![\w'])(" + alts + r")(?![\w'’])", re.I)


_FIRST, _SECOND = _pattern(FIRST), _pattern(SECOND)


def _key(word: str) -> str:
    return re.sub(r"\s+", " ", word.lower().replace("’", "'"))


def resolve(context: str) -> str:
    """``context`` with first (and, between two speakers, second) person pronouns replaced by speaker names."""
    lines = context.split("\n")
    parsed = [_LINE.match(line) for line in lines]
    hits = [m for m in parsed if m]
    speakers = list(dict.fromkeys(m.group(1) for m in hits))
    if len([x for x in lines if x.strip()]) < 2 or len(hits) < 0.8 * len([x for x in lines if x.strip()]) \
            or len(speakers) < 2:
        return context
    out = []
    for line, m in zip(lines, parsed, strict=True):
        if not m:
            out.append(line)
            continue
        name, text = m.group(1), m.group(2)
        text = _FIRST.sub(lambda x, n=name: FIRST[_key(x.group(0))].format(n=n), text)
        if len(speakers) == 2:
            other = speakers[1] if name == speakers[0] else speakers[0]
            text = _SECOND.sub(lambda x, n=other: SECOND[_key(x.group(0))].format(n=n), text)
        out.append(f"{name}: {text}")
    return "\n".join(out)


def main() -> None:
    rows = [json.loads(line) for line in (DATA / "faceval.jsonl").open(encoding="utf-8")]
    docs = list(dict.fromkeys(r["id"].split("-")[1] for r in rows))
    dev = [r for r in rows if r["id"].split("-")[1] in set(docs[:75])]
    for name, fix in (("faceval-dev", lambda c: c), ("faceval-dev-speakers", resolve)):
        with (DATA / f"{name}.jsonl").open("w", encoding="utf-8") as f:
            f.writelines(json.dumps({**r, "context": fix(r["context"])}, ensure_ascii=False) + "\n" for r in dev)
    print(f"{len(dev)} summaries of {len(docs[:75])} dialogues → {DATA}/faceval-dev{{,-speakers}}.jsonl")


if __name__ == "__main__":
    main()
