"""HTML report of one response (paper 000, Figure 8 style).

The page shows the answer with every sentence coloured by its faithfulness score (red 0 → yellow 0.5 →
green 1), its signals in a tooltip and in a details panel opened by a click, the context with the evidence
sentences of the selected answer sentence highlighted and, for a :class:`~faithwatch.decoding.types.DecodingResult`,
the trace of candidates, backtracks, pruned beams and the refusal.

Evidence is lexical and deliberately simple (documented here, shown in the page): the context is split into
sentences with pysbd (character spans), every sentence is reduced to its set of *content words* (lowercased
alphanumeric words, stop words of :mod:`faithwatch.alignment.lexical` removed), and each answer sentence is
matched to the context sentences with the highest Jaccard overlap ``|A ∩ C| / |A ∪ C|``: the best one, plus
up to ``EVIDENCE_TOP_K - 1`` more whose overlap is at least half of the best, all at least
``EVIDENCE_MIN_JACCARD``. It points at where a sentence's words come from; it is not an entailment check.
"""

from __future__ import annotations

import json
import math
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from faithwatch.decoding.types import DecodingResult
from faithwatch.report._env import environment
from faithwatch.results import MonitorResult, SentenceReport
from faithwatch.text import STOP_WORDS, sentence_spans
from faithwatch.text.visible import is_blank

__all__ = [
    "EVIDENCE_MIN_JACCARD",
    "EVIDENCE_TOP_K",
    "content_words",
    "evidence_for",
    "response_html",
    "score_colour",
    "split_context",
    "write_response_html",
]

#: context sentences with a smaller content-word Jaccard overlap are never shown as evidence
EVIDENCE_MIN_JACCARD = 0.05
#: at most this many evidence sentences per answer sentence
EVIDENCE_TOP_K = 2

_WORD = re.compile(r"[^\W_]+(?:['’][^\W_]+)*")

#: colours of the trace rows, per event kind
KIND_COLOURS: dict[str, str] = {
    "accept": "#d4f4d4", "keep": "#d4f4d4", "select": "#9ee69e", "backtrack": "#f8c9c9", "prune": "#f8c9c9",
    "drop": "#fbeec0", "refuse": "#f08a8a", "candidate": "#eeeeee", "stop": "#e3d4f4",
}


@dataclass(frozen=True)
class ContextSentence:
    """A sentence of the context: its character span (end exclusive) and text."""

    index: int
    start: int
    end: int
    text: str


def content_words(text: str) -> frozenset[str]:
    """Lowercased words of ``text`` (letters/digits, inner apostrophes kept) without stop words."""
    words = (w.lower().replace("’", "'") for w in _WORD.findall(text))
    return frozenset(w for w in words if w not in STOP_WORDS)


def split_context(context: str, language: str = "en") -> list[ContextSentence]:
    """The context's sentences with character spans (:func:`faithwatch.text.sentence_spans`)."""
    if is_blank(context):
        return []
    return [ContextSentence(i, start, end, context[start:end])
            for i, (start, end) in enumerate(sentence_spans(context, language))]


def evidence_for(
    sentence: str,
    context_sentences: Sequence[ContextSentence],
    top_k: int = EVIDENCE_TOP_K,
    min_jaccard: float = EVIDENCE_MIN_JACCARD,
) -> list[tuple[int, float]]:
    """``(context sentence index, Jaccard)`` of the best-supporting context sentences, best first (module doc)."""
    words = content_words(sentence)
    if not words:
        return []
    scored = []
    for cs in context_sentences:
        other = content_words(cs.text)
        union = words | other
        if union:
            scored.append((cs.index, len(words & other) / len(union)))
    scored.sort(key=lambda kv: (-kv[1], kv[0]))
    if not scored or scored[0][1] < min_jaccard:
        return []
    best = scored[0][1]
    return [(i, j) for i, j in scored[:top_k] if j >= min_jaccard and j >= best / 2]


def score_colour(score: float | None) -> str:
    """Background colour of a score on a red (0) → yellow (0.5) → green (1) scale; grey when unknown."""
    if score is None or not math.isfinite(score):
        return "#dddddd"
    s = min(1.0, max(0.0, float(score)))
    return f"hsl({round(120 * s)}, 75%, 78%)"


def _fmt(x: Any, digits: int = 3) -> str:
    if x is None:
        return "absent"
    if isinstance(x, bool):
        return "true" if x else "false"
    if isinstance(x, int):
        return str(x)
    if isinstance(x, float):
        return f"{x:.{digits}f}" if math.isfinite(x) else str(x)
    if isinstance(x, (dict, list, tuple)):
        return json.dumps(x, default=str)
    return str(x)


def _segments(text: str, spans: Sequence[tuple[int, int]]) -> list[tuple[str, int | None]]:
    """``text`` cut into (piece, span index or None for the text between spans); spans must be ordered."""
    out: list[tuple[str, int | None]] = []
    pos = 0
    for i, (start, end) in enumerate(spans):
        if start > pos:
            out.append((text[pos:start], None))
        out.append((text[start:end], i))
        pos = end
    if pos < len(text):
        out.append((text[pos:], None))
    return out


def _answer_segments(answer: str, sentences: Sequence[SentenceReport]) -> list[tuple[str, int | None]]:
    """The answer cut at its sentences' spans; if the spans do not match the text, the sentences alone."""
    pos, ok = 0, True
    for s in sentences:
        if not (pos <= s.start <= s.end <= len(answer)) or answer[s.start : s.end] != s.text:
            ok = False
            break
        pos = s.end
    if ok:
        return _segments(answer, [(s.start, s.end) for s in sentences])
    out: list[tuple[str, int | None]] = []
    for i, s in enumerate(sentences):
        if i:
            out.append((" ", None))
        out.append((s.text, i))
    return out


def _sentence_view(s: SentenceReport, i: int, ctx: Sequence[ContextSentence]) -> dict[str, Any]:
    features = [(k, _fmt(v)) for k, v in sorted(s.features.items())]
    shown = ", ".join(f"{k}={v}" for k, v in features if v != "absent")
    evidence = evidence_for(s.text, ctx)
    tooltip = f"score {_fmt(s.score)}{' · FLAGGED' if s.flagged else ''} · {s.detector}"
    if s.set_aside:
        tooltip += f" · {s.aside_reason}"
    if shown:
        tooltip += f"\n{shown}"
    return {
        "i": i,
        "text": s.text,
        "score": _fmt(s.score),
        "colour": score_colour(s.score),
        "flagged": s.flagged,
        "detector": s.detector,
        "features": features,
        "tooltip": tooltip,
        "evidence": [{"index": j, "jaccard": f"{jac:.2f}", "text": ctx[j].text} for j, jac in evidence],
        "evidence_ids": " ".join(f"ctx-{j}" for j, _ in evidence),
    }


def response_html(
    result: MonitorResult | DecodingResult,
    *,
    question: str,
    context: str,
    title: str | None = None,
    meta: Mapping[str, Any] | None = None,
) -> str:
    """A self-contained HTML page of one response (no network at view time).

    Args:
        result: from :meth:`faithwatch.monitor.Monitor.generate` / ``score`` or from
            :func:`faithwatch.decoding.generate` (then the trace is shown too).
        question: the user's question (shown escaped).
        context: the retrieved context the answer must be faithful to (shown escaped, sentences highlighted
            as evidence, see the module doc).
        title: page title (default: "faithwatch report").
        meta: extra key/value run information shown with the result's own (e.g. the model id of a decoding run).

    Returns:
        The HTML document as a string.
    """
    if isinstance(result, DecodingResult):
        answer, sentences = result.answer, result.sentences
        info: dict[str, Any] = {
            "strategy": result.strategy, "detector": result.detector, "refused": result.refused,
            "mean sentence score": result.mean_score, "answer tokens": result.num_tokens,
            "generated tokens": result.generated_tokens, "stop": result.stop_reason,
        }
        if result.context_tokens_cut:
            info["context tokens cut"] = result.context_tokens_cut
        info.update({f"param {k}": v for k, v in sorted(result.params.items())})
        trace = [
            {"kind": e.kind, "step": e.step, "beam": "" if e.beam is None else e.beam,
             "score": "" if e.score is None else _fmt(e.score), "text": e.text, "reason": e.reason,
             "colour": KIND_COLOURS.get(e.kind, "#ffffff")}
            for e in result.trace
        ]
        refused, overall = result.refused, result.mean_score
        overall_label = "mean sentence score"
    elif isinstance(result, MonitorResult):
        answer, sentences = result.response, result.sentences
        info = {
            "model": result.model_id, "detector": result.detector, "alignment": result.alignment,
            "mode": result.mode, "response score (worst sentence)": result.score, "tokens": result.num_tokens,
            "stop": result.stop_reason,
        }
        if result.context_tokens_cut:
            info["context tokens cut"] = result.context_tokens_cut
        trace, refused, overall = None, False, result.score
        overall_label = "response score (worst sentence)"
    else:
        raise TypeError(f"expected a MonitorResult or DecodingResult, got {type(result).__name__}")
    info = {**(dict(meta) if meta else {}), **info}

    ctx = split_context(context)
    views = [_sentence_view(s, i, ctx) for i, s in enumerate(sentences)]
    template = environment().get_template("response.html.j2")
    return template.render(
        title=title or "faithwatch report",
        question=question,
        answer_segments=_answer_segments(answer, sentences),
        sentences=views,
        context_segments=_segments(context, [(c.start, c.end) for c in ctx]),
        info=[(k, _fmt(v)) for k, v in info.items()],
        overall=_fmt(overall) if overall is not None else "n/a",
        overall_label=overall_label,
        overall_colour=score_colour(overall),
        refused=refused,
        notes=result.notes,
        trace=trace,
        evidence_doc=(f"content-word Jaccard overlap with the context sentences (pysbd split), top "
                      f"{EVIDENCE_TOP_K}, at least {EVIDENCE_MIN_JACCARD} and half of the best"),
    )


def write_response_html(
    path: str | Path,
    result: MonitorResult | DecodingResult,
    *,
    question: str,
    context: str,
    title: str | None = None,
    meta: Mapping[str, Any] | None = None,
) -> Path:
    """Write :func:`response_html` to ``path`` (UTF-8; parent folders created) and return the path."""
    out = Path(path)
    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_text(response_html(result, question=question, context=context, title=title, meta=meta),
                   encoding="utf-8")
    return out
