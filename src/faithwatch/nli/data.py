"""NLI pairs: reading ``premise/hypothesis/label/source`` JSONL files and the licence allow-list.

Labels are ``entailment`` / ``neutral`` / ``contradiction`` (3-way) or ``not_entailment`` (binary-only
sets; trained with the loss -log(p_neutral + p_contradiction)).
"""

from __future__ import annotations

import json
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path

from faithwatch.errors import InputError
from faithwatch.store import read_lines

#: class order of the cross-encoder's output
LABELS: tuple[str, ...] = ("entailment", "neutral", "contradiction")
#: label id of binary-only "not entailment" rows (not a class of the model)
NOT_ENTAILMENT = -1
LABEL_IDS: dict[str, int] = {**{name: i for i, name in enumerate(LABELS)}, "not_entailment": NOT_ENTAILMENT}

#: sources of ``../shared/data/nli/train.jsonl`` whose stated licence allows shipping a trained model
#: (see that folder's SOURCES.md); the rest ("not stated", non-commercial) are left out by default
LICENSED_SOURCES: dict[str, str] = {
    "snli": "MIT (e-SNLI repo); SNLI CC BY-SA 4.0",
    "mnli": "MIT (repo)",
    "cad_snli": "Apache-2.0",
    "conjnli": "MIT",
    "docnli_binary_fever_nli": "BSD-3 (repo); FEVER CC BY-SA 3.0",
    "med": "CC BY-SA 4.0",
    "taxinli": "C-UDA 1.0",
    "fever_symmetric": "CC BY-SA 3.0",
}


@dataclass(frozen=True)
class NLIPair:
    """One premise-hypothesis pair with its label id (0/1/2 or ``NOT_ENTAILMENT``) and source name."""

    premise: str
    hypothesis: str
    label: int
    source: str = ""

    @property
    def label_name(self) -> str:
        """The label's name (``not_entailment`` for a binary-only pair)."""
        return "not_entailment" if self.label == NOT_ENTAILMENT else LABELS[self.label]

    @property
    def entailed(self) -> bool:
        """Whether the pair is labelled entailment."""
        return self.label == 0


def parse_pair(line: str, where: str = "") -> NLIPair:
    """Parse one JSONL line into an :class:`NLIPair`; ``ValueError`` names the problem."""
    try:
        row = json.loads(line)
    except json.JSONDecodeError as exc:
        raise ValueError(f"{where}not valid JSON ({exc.msg})") from exc
    if not isinstance(row, dict):
        raise ValueError(f"{where}expected an object with premise, hypothesis, label")
    for key in ("premise", "hypothesis", "label"):
        if not isinstance(row.get(key), str) or not row[key].strip():
            raise ValueError(f"{where}missing or empty {key!r}")
    label = row["label"].strip().lower()
    if label not in LABEL_IDS:
        raise ValueError(f"{where}unknown label {row['label']!r}; expected one of {', '.join(LABEL_IDS)}")
    return NLIPair(row["premise"].strip(), row["hypothesis"].strip(), LABEL_IDS[label], str(row.get("source", "")))


def read_pairs(path: str | Path, sources: Iterable[str] | None = None, strict: bool = True) -> list[NLIPair]:
    """Read an NLI JSONL file, keeping only ``sources`` when given.

    With ``strict`` a malformed line raises :class:`InputError` naming the file and line; without it
    malformed lines are skipped (their count is logged by the caller via :func:`count_bad`).
    """
    path = Path(path)
    if not path.is_file():
        raise InputError(f"NLI file not found: {path}")
    keep = set(sources) if sources is not None else None
    pairs: list[NLIPair] = []
    held: set[str] = set()
    for n, line in enumerate(read_lines(path, "NLI file"), 1):
        if not line.strip():
            continue
        try:
            pair = parse_pair(line, f"{path}:{n}: ")
        except ValueError as exc:
            if strict:
                raise InputError(str(exc)) from exc
            continue
        held.add(pair.source)
        if keep is None or pair.source in keep:
            pairs.append(pair)
    if not pairs:
        raise InputError(f"{path}: no usable pairs" + (f" from sources {sorted(keep)}" if keep else "")
                         + (f"; it holds {', '.join(sorted(held))}" if keep and held - {""} else ""))
    return pairs


def is_binary_set(pairs: Iterable[NLIPair]) -> bool:
    """True when the pairs use the binary label ``not_entailment`` (score them entailment vs not)."""
    return any(p.label == NOT_ENTAILMENT for p in pairs)
