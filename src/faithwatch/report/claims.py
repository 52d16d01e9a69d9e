"""HTML report of one claim-checked response: claims coloured by verdict, their evidence in the references.

The response is shown with each claim's span coloured by its label (a span covered by several claims takes
the most severe: Contradiction > Neutral > Entailment); the table lists every claim, its triplet, label,
confidence and evidence; the references show the evidence spans. Clicking a claim (in the text or the table)
highlights its evidence. One self-contained file (inline CSS/JS), built with jinja2.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from faithwatch._version import __version__
from faithwatch.claims.types import ResponseCheck
from faithwatch.report._env import environment

#: label -> (severity, colour)
LABEL_STYLE: dict[str, tuple[int, str]] = {
    "Entailment": (0, "hsl(120, 60%, 82%)"),
    "Neutral": (1, "hsl(45, 90%, 80%)"),
    "Contradiction": (2, "hsl(0, 75%, 80%)"),
}


def _segments(text: str, spans: Sequence[tuple[int, int, int]]) -> list[tuple[str, list[int]]]:
    """Cut ``text`` at every span boundary; each piece lists the ids of the spans covering it."""
    cuts = sorted({0, len(text), *(s for s, _, _ in spans), *(e for _, e, _ in spans)})
    out = []
    for a, b in zip(cuts, cuts[1:], strict=False):
        if a >= b:
            continue
        ids = [i for s, e, i in spans if s <= a and b <= e]
        out.append((text[a:b], ids))
    return out


def _worst(labels: Sequence[str]) -> str | None:
    return max(labels, key=lambda x: LABEL_STYLE.get(x, (-1, ""))[0]) if labels else None


def claims_html(check: ResponseCheck, references: str | Sequence[str], *, question: str | None = None,
                title: str | None = None, meta: Mapping[str, Any] | None = None) -> str:
    """Render the report of one :class:`ResponseCheck` against its reference passage(s)."""
    refs = [references] if isinstance(references, str) else list(references)
    claims = []
    for i, v in enumerate(check.verdicts):
        colour = LABEL_STYLE.get(v.label, (0, "#ddd"))[1]
        claims.append({
            "i": i, "text": v.claim.text, "label": v.label, "colour": colour,
            "triplet": " · ".join(v.claim.triplet) if v.claim.triplet else "",
            "confidence": "–" if v.confidence is None else f"{v.confidence:.2f}",
            "evidence": [{"passage": e.passage_index + 1, "text": e.text, "label": e.label,
                          "score": "–" if e.score is None else f"{e.score:.2f}",
                          "changes": [c.describe() for c in e.changes]} for e in v.evidence],
        })
    spans = [(v.claim.response_span[0], v.claim.response_span[1], i) for i, v in enumerate(check.verdicts)
             if v.claim.response_span]
    response = [{"text": piece, "claims": " ".join(map(str, ids)),
                 "colour": LABEL_STYLE.get(_worst([check.verdicts[i].label for i in ids]) or "", (0, ""))[1]}
                for piece, ids in _segments(check.response, spans)]
    passages = []
    for p, ref in enumerate(refs):
        ev = [(e.start, e.end, i) for i, v in enumerate(check.verdicts) for e in v.evidence if e.passage_index == p]
        passages.append([{"text": piece, "claims": " ".join(map(str, ids))} for piece, ids in _segments(ref, ev)])
    aggregate = check.aggregate if isinstance(check.aggregate, str) or check.aggregate is None else \
        ", ".join(f"{k} {v:.2f}" for k, v in check.aggregate.items())
    info = [("extractor", check.extractor), ("checker", check.checker), ("aggregation", check.aggregation),
            ("faithwatch", __version__), *((str(k), str(v)) for k, v in (meta or {}).items())]
    return environment().get_template("claims.html.j2").render(
        title=title or "faithwatch: claim check", question=question, claims=claims, response=response,
        passages=passages, aggregate=aggregate if aggregate is not None else "–",
        rate="–" if check.hallucination_rate is None else f"{check.hallucination_rate:.2f}",
        error=check.extraction_error, info=info, styles=LABEL_STYLE,
    )


def write_claims_html(path: str | Path, check: ResponseCheck, references: str | Sequence[str], **kwargs: Any) -> Path:
    """Write :func:`claims_html` to ``path`` (parent folders created) and return the path."""
    out = Path(path)
    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_text(claims_html(check, references, **kwargs), encoding="utf-8")
    return out
