"""Aggregating claim verdicts per response (paper 002 §4.3) and per model / data set.

Per response:

* ``strict`` - zero tolerance: Contradiction if any claim is contradicted, else Neutral if any is
  neutral, else Conflict if any is in conflict, else Entailment (max-pooling over the severity
  Entailment < Conflict < Neutral < Contradiction; paper 002 §5.1).
* ``soft`` - the share of each label among the claims (Entailment, Neutral, Contradiction, Conflict).
* ``majority`` - the most common label; a tie goes to the more severe label.
* hallucination rate - the share of Neutral + Contradiction claims (paper 002, Appendix A.4).
  Conflict (one passage supports the claim, another contradicts it) is not counted: the claim is
  supported by a passage, the references disagree. Its share is in the soft ratios.

A response with no claim is *abstained*: ``strict``/``majority`` give ``"Abstain"``, ``soft`` and the
hallucination rate give ``None`` (never 0, which would look like a perfect response).

Per group (e.g. model or data set), :func:`summarize` macro-averages the label shares over the
responses that have claims (paper 002, Eq. 1) and reports the abstain rate and the failures.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import asdict, dataclass, field
from typing import Any

from faithwatch.claims.types import (
    ABSTAIN,
    CLAIM_LABELS,
    CONFLICT,
    CONTRADICTION,
    ENTAILMENT,
    NEUTRAL,
    ClaimVerdict,
)
from faithwatch.errors import InputError

AGGREGATIONS: tuple[str, ...] = ("strict", "soft", "majority")
#: severity order used by ``strict`` and to break ``majority`` ties
SEVERITY: dict[str, int] = {ENTAILMENT: 0, CONFLICT: 1, NEUTRAL: 2, CONTRADICTION: 3}
#: the labels counted as hallucinations
HALLUCINATION_LABELS: frozenset[str] = frozenset({NEUTRAL, CONTRADICTION})


def _labels(items: Iterable[ClaimVerdict | str]) -> list[str]:
    out = [v.label if isinstance(v, ClaimVerdict) else v for v in items]
    for lab in out:
        if lab not in SEVERITY:
            raise ValueError(f"unknown claim label {lab!r}; expected one of {', '.join(CLAIM_LABELS)}")
    return out


def strict(verdicts: Iterable[ClaimVerdict | str]) -> str:
    """The most severe label (``"Abstain"`` without claims)."""
    labels = _labels(verdicts)
    return max(labels, key=SEVERITY.__getitem__) if labels else ABSTAIN


def soft(verdicts: Iterable[ClaimVerdict | str]) -> dict[str, float] | None:
    """The share of each label (all four keys), or ``None`` without claims."""
    labels = _labels(verdicts)
    if not labels:
        return None
    counts = Counter(labels)
    return {lab: counts[lab] / len(labels) for lab in CLAIM_LABELS}


def majority(verdicts: Iterable[ClaimVerdict | str]) -> str:
    """The most common label, ties to the more severe (``"Abstain"`` without claims)."""
    labels = _labels(verdicts)
    if not labels:
        return ABSTAIN
    counts = Counter(labels)
    return max(counts, key=lambda lab: (counts[lab], SEVERITY[lab]))


def hallucination_rate(verdicts: Iterable[ClaimVerdict | str]) -> float | None:
    """Share of Neutral + Contradiction claims, or ``None`` without claims."""
    labels = _labels(verdicts)
    if not labels:
        return None
    return sum(lab in HALLUCINATION_LABELS for lab in labels) / len(labels)


def aggregate(verdicts: Iterable[ClaimVerdict | str], method: str = "strict") -> str | dict[str, float] | None:
    """The response-level aggregate by ``method`` (strict | soft | majority)."""
    if method == "strict":
        return strict(verdicts)
    if method == "soft":
        return soft(verdicts)
    if method == "majority":
        return majority(verdicts)
    raise InputError(f"unknown aggregation {method!r}; choose one of {', '.join(AGGREGATIONS)}")


# ---- batch summaries ---------------------------------------------------------------------------------


@dataclass
class GroupSummary:
    """Checking results of one group of responses (a model, a data set, or everything).

    ``label_rates`` and ``hallucination_rate`` are macro averages over the responses with at least one
    claim (``None`` when there is none); ``abstain_rate`` is over the checked responses; ``failed``
    counts responses whose extraction or checking failed (they are in no rate).
    """

    group: str
    responses: int = 0
    checked: int = 0
    failed: int = 0
    abstained: int = 0
    claims: int = 0
    label_rates: dict[str, float] | None = None
    hallucination_rate: float | None = None
    abstain_rate: float | None = None
    strict_labels: dict[str, int] = field(default_factory=dict)

    def to_dict(self) -> dict[str, Any]:
        """JSON form: every field."""
        return asdict(self)


def _claim_labels(row: Mapping[str, Any]) -> list[str]:
    return [c["label"] for c in row.get("claims") or []]


def summarize(rows: Iterable[Mapping[str, Any]], by: str | None = None) -> dict[str, GroupSummary]:
    """Summaries of output rows grouped by the field ``by`` (``None``: one group, ``"all"``).

    A row is a checked response as written by :func:`faithwatch.claims.pipeline.check_file`
    (``claims`` with their ``label``), or a failure: any row with a truthy ``"error"``.
    Rows without the field are grouped under ``"(none)"``.
    """
    per_group: dict[str, list[Mapping[str, Any]]] = {}
    for row in rows:
        key = "all" if by is None else str(row.get(by)) if row.get(by) is not None else "(none)"
        per_group.setdefault(key, []).append(row)
    return {key: _summary(key, group) for key, group in sorted(per_group.items())}


def _summary(name: str, rows: Sequence[Mapping[str, Any]]) -> GroupSummary:
    s = GroupSummary(group=name, responses=len(rows))
    shares: list[dict[str, float]] = []
    for row in rows:
        if row.get("error"):
            s.failed += 1
            continue
        s.checked += 1
        labels = _claim_labels(row)
        s.claims += len(labels)
        verdict = strict(labels)
        s.strict_labels[verdict] = s.strict_labels.get(verdict, 0) + 1
        ratios = soft(labels)
        if ratios is None:
            s.abstained += 1
        else:
            shares.append(ratios)
    if shares:
        s.label_rates = {lab: sum(r[lab] for r in shares) / len(shares) for lab in CLAIM_LABELS}
        s.hallucination_rate = s.label_rates[NEUTRAL] + s.label_rates[CONTRADICTION]
    if s.checked:
        s.abstain_rate = s.abstained / s.checked
    return s
