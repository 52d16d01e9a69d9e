"""Sentence-level checks on (context, sentence) pairs: does a detector flag the errors and pass the rest?

A pairs file holds one JSON object a line::

    {"id", "question", "context", "sentence", "label": "error" | "supported", "kind"?: "date" | ...}

The packaged blatant-error suite (``tests/data/blatant.jsonl``) is such a file: each error sentence restates a
context sentence with one date, number, name, place or negation changed; supported sentences are paraphrases and
verbatim copies of the same contexts. :func:`score_pairs` teacher-forces every sentence through a monitor and
:func:`pair_summary` gives the flag rate per kind, the share of errors flagged and of supported sentences passed.
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable, Sequence
from dataclasses import dataclass, replace
from pathlib import Path

import pandas as pd

from faithwatch.errors import InputError
from faithwatch.store import read_lines
from faithwatch.text import is_stop

LABELS = ("error", "supported")


@dataclass(frozen=True)
class Pair:
    """One (context, sentence) check."""

    id: str
    question: str
    context: str
    sentence: str
    label: str
    kind: str = ""


def load_pairs(path: str | Path) -> list[Pair]:
    """Read a pairs file; InputError names the line of the first bad record."""
    path = Path(path)
    if not path.is_file():
        raise InputError(f"pairs file not found: {path}")
    out: list[Pair] = []
    for n, line in enumerate(read_lines(path, "pairs file"), start=1):
        if not line.strip():
            continue
        try:
            row = json.loads(line)
            pair = Pair(id=str(row["id"]), question=row["question"], context=row["context"],
                        sentence=row["sentence"], label=row["label"], kind=str(row.get("kind", "")))
        except (json.JSONDecodeError, KeyError, TypeError) as exc:
            raise InputError(f"{path}:{n}: not a pair record ({exc})") from None
        if pair.label not in LABELS:
            raise InputError(f"{path}:{n}: label must be one of {LABELS}, got {pair.label!r}")
        if not all(isinstance(v, str) and v.strip() for v in (pair.question, pair.context, pair.sentence)):
            raise InputError(f"{path}:{n}: question, context and sentence must be non-empty strings")
        out.append(pair)
    if not out:
        raise InputError(f"{path} holds no pairs")
    return out


def score_pairs(monitor, pairs: Sequence[Pair], on_progress: Callable[[int, int], None] | None = None
                ) -> pd.DataFrame:
    """Teacher-force each sentence through ``monitor``: its score (the lowest sentence score if the splitter cuts
    it in several) and whether the detector flags it."""
    rows = []
    for i, pair in enumerate(pairs, start=1):
        result = monitor.score(pair.question, pair.context, pair.sentence)
        rows.append({"id": pair.id, "kind": pair.kind, "label": pair.label, "score": result.score,
                     "flagged": any(s.flagged for s in result.sentences)})
        if on_progress:
            on_progress(i, len(pairs))
    return pd.DataFrame(rows)


def pair_summary(scored: pd.DataFrame) -> dict[str, float | None]:
    """Share of errors flagged, of supported sentences passed (None without such pairs), the AUROC of the score
    for telling errors from supported sentences, and the flag rate per kind."""
    from sklearn.metrics import roc_auc_score

    errors = scored[scored.label == "error"]
    supported = scored[scored.label == "supported"]
    both = len(errors) and len(supported)
    out: dict[str, float | None] = {
        "errors_flagged": float(errors.flagged.mean()) if len(errors) else None,
        "supported_passed": float((~supported.flagged).mean()) if len(supported) else None,
        "auroc": float(roc_auc_score(scored.label == "error", -scored.score)) if both else None}
    for kind, group in scored.groupby("kind"):
        out[f"flagged[{kind}]"] = float(group.flagged.mean())
    return out


def _before_stop(mark: str) -> Callable[[str], str]:
    def add(sentence: str) -> str:
        m = re.search(r"[.!?]?\s*$", sentence)
        return sentence[: m.start()] + mark + sentence[m.start():]
    return add


def _first_words(wrap: Callable[[str], str]) -> Callable[[str], str]:
    def add(sentence: str) -> str:
        words = sentence.split(" ")
        return " ".join([wrap(" ".join(words[:2])), *words[2:]])
    return add


#: a sentence written with markup that says what the plain one says (docs/transfer.md, "Answers written with
#: markup"): a list marker, a citation, emphasis, a source in parentheses, a Markdown link, a footnote digit
MARKUP_VARIANTS: dict[str, Callable[[str], str]] = {
    "list": lambda s: "1. " + s,
    "cite": _before_stop(" [1]"),
    "bold": _first_words(lambda w: f"**{w}**"),
    "paren": _before_stop(" (Passage 1)"),
    "sup": lambda s: s + "\u00b9",
    "link": _first_words(lambda w: f"[{w}](https://example.org/page_1)"),
    "opener": lambda s: "In summary, " + (s[:1].lower() + s[1:] if is_stop(s.split()[0]) else s),  # rule 4
    "presenter": lambda s: "Here is the answer: " + s,  # rule 7
}


def marked(pairs: Sequence[Pair], variant: str) -> list[Pair]:
    """``pairs`` with each sentence written with the markup of :data:`MARKUP_VARIANTS` ``[variant]``."""
    change = MARKUP_VARIANTS[variant]
    return [replace(p, sentence=change(p.sentence)) for p in pairs]
