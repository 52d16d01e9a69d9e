"""Checkers: a 3-way verdict (Entailment / Neutral / Contradiction) for every claim against one or
more reference passages, with confidence and evidence spans (paper 002 §3.2, §4.2).

* :class:`NLIChecker` - a 3-class Hugging Face NLI model (through :class:`~faithwatch.alignment.NLIScorer`);
  each passage is cut into chunks that fit the model next to the claim.
* :class:`~faithwatch.claims.llm_judge.LLMJudgeChecker` - an LLM (either backend of :mod:`faithwatch.claims.llm`)
  judges each (claim, passage) pair and answers schema-validated JSON with a quote of its evidence.
* :class:`AlignmentChecker` - any alignment scorer of faithwatch (support score in [0, 1]) with two
  thresholds.
* :class:`~faithwatch.claims.detector_check.DetectorChecker` - the sentence detector (text-only), thresholded as
  the monitor does.

Combining verdicts
------------------
Inside one passage, chunk verdicts (argmax of the NLI probabilities) are merged as in RefChecker:
Entailment if any chunk entails the claim, else Contradiction if any chunk contradicts it, else Neutral
(under ``any-contradiction`` the order of the first two is swapped). Across passages the ``combine``
rule decides:

=====================  ===========================================================================
``conflict`` (default) one passage supports and another contradicts -> ``Conflict``, with both
                       evidences; otherwise Entailment if any passage supports, Contradiction if any
                       contradicts, else Neutral.
``max-entail``         Entailment if any passage supports (paper 002's Noisy-Context rule), else
                       Contradiction if any contradicts, else Neutral.
``any-contradiction``  Contradiction if any passage (or chunk) contradicts, else Entailment if any
                       supports, else Neutral (the most conservative).
=====================  ===========================================================================
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Protocol, runtime_checkable

from faithwatch import registry
from faithwatch.alignment import CHECK_SCORER
from faithwatch.alignment.base import AlignmentScorer, checked_scores
from faithwatch.claims.llm import LLMBackend
from faithwatch.claims.spans import chunk_spans, sentence_spans
from faithwatch.claims.types import CONFLICT, CONTRADICTION, ENTAILMENT, NEUTRAL, Claim, ClaimVerdict, Evidence
from faithwatch.errors import FaithwatchError, InputError
from faithwatch.text import strip_markup
from faithwatch.text.visible import is_blank, require_text

#: the rules for combining verdicts across reference passages (see the module doc)
COMBINE_RULES: tuple[str, ...] = ("conflict", "max-entail", "any-contradiction")
DEFAULT_COMBINE = "conflict"
#: the checker `faithwatch check` uses: the sentence detector, so that `check` and `monitor` agree
DEFAULT_CHECKER = "detector"
#: alignment score at or above which a claim is Entailment
DEFAULT_ENTAIL_THRESHOLD = 0.7
#: alignment score below which a claim is Contradiction (in between: Neutral)
DEFAULT_CONTRADICT_THRESHOLD = 0.2


class CheckError(FaithwatchError):
    """A checker could not give a verdict (e.g. the LLM judge never answered valid JSON)."""


def validate_references(references: str | Sequence[str]) -> list[str]:
    """The reference passages as a list; a bare string is one passage.

    Raises :class:`InputError` for no passage, a non-string or a blank passage.
    """
    refs = [references] if isinstance(references, str) else list(references)
    if not refs:
        raise InputError("no reference passage: a claim needs a reference to be checked against")
    for i, ref in enumerate(refs):
        if not isinstance(ref, str):
            raise InputError(f"reference passage {i} must be a string, got {type(ref).__name__}")
        if is_blank(ref):
            raise InputError(f"reference passage {i} is empty")
        require_text(ref, f"reference passage {i}")
    return refs


def check_rule(combine: str) -> str:
    """``combine`` if it is one of :data:`COMBINE_RULES`, else a clear error."""
    if combine not in COMBINE_RULES:
        raise InputError(f"unknown combination rule {combine!r}; choose one of {', '.join(COMBINE_RULES)}")
    return combine


@runtime_checkable
class Checker(Protocol):
    """Gives every claim a verdict against the reference passages."""

    #: shown in outputs
    name: str

    def check(
        self, claims: Sequence[Claim], references: str | Sequence[str], question: str | None = None
    ) -> list[ClaimVerdict]:
        """One verdict per claim, in order."""
        ...


# ---- combination ---------------------------------------------------------------------------------


@dataclass(frozen=True)
class PassageVerdict:
    """The verdict of one passage (or of one chunk of it) on a claim.

    ``relevance`` ranks the passages of a Neutral verdict: the most relevant one's evidence is shown.
    """

    label: str
    confidence: float | None
    evidence: Evidence | None
    relevance: float = 0.0


def _best(items: Sequence[PassageVerdict]) -> PassageVerdict:
    return max(items, key=lambda v: (v.confidence if v.confidence is not None else -1.0, v.relevance))


def merge_verdicts(verdicts: Sequence[PassageVerdict], rule: str) -> tuple[str, float | None, tuple[Evidence, ...]]:
    """Combine per-passage (or per-chunk) verdicts into ``(label, confidence, evidence)`` by ``rule``.

    Confidence: the best confidence among the units carrying the label; for Conflict the smaller of the
    best supporting and the best contradicting confidence (both must hold); for Neutral the smallest
    neutral confidence (every unit must be neutral). ``None`` when a needed confidence is unknown.
    """
    if not verdicts:
        raise ValueError("no verdict to merge")
    check_rule(rule)
    ent = [v for v in verdicts if v.label == ENTAILMENT]
    con = [v for v in verdicts if v.label == CONTRADICTION]

    def evidence(*vs: PassageVerdict) -> tuple[Evidence, ...]:
        return tuple(v.evidence for v in vs if v.evidence is not None)

    if rule == "conflict" and ent and con:
        e, c = _best(ent), _best(con)
        conf = None if e.confidence is None or c.confidence is None else min(e.confidence, c.confidence)
        return CONFLICT, conf, evidence(e, c)
    order = (con, ent) if rule == "any-contradiction" else (ent, con)
    for group in order:
        if group:
            top = _best(group)
            return top.label, top.confidence, evidence(top)
    confs = [v.confidence for v in verdicts]
    conf = None if any(c is None for c in confs) else min(c for c in confs if c is not None)
    return NEUTRAL, conf, evidence(max(verdicts, key=lambda v: v.relevance))


# ---- NLI -------------------------------------------------------------------------------------------


@runtime_checkable
class NLIModel(Protocol):
    """What :class:`NLIChecker` uses of :class:`~faithwatch.alignment.NLIScorer` (a test fake needs only this)."""

    name: str
    labels: list[str]

    def n_tokens(self, text: str) -> int:
        """Tokens of ``text`` under the model's tokenizer."""

    def budget_for(self, sentence: str) -> int:
        """Premise tokens left next to ``sentence`` in the model window."""

    def probabilities_many(self, sentences: Sequence[str], context: str) -> list[dict[str, float]]:
        """Label probabilities of each sentence against the best chunk of ``context``."""


def _label_names(labels: Sequence[str], name: str) -> dict[str, str]:
    """Map our 3 labels to the model's lowercase label names (by prefix)."""
    found: dict[str, str] = {}
    for ours, prefix in ((ENTAILMENT, "entail"), (NEUTRAL, "neutral"), (CONTRADICTION, "contradict")):
        match = [lab for lab in labels if lab.strip().lower().startswith(prefix)]
        if match:
            found[ours] = match[0]
    if len(found) < 3:
        raise InputError(
            f"{name} is not a 3-class NLI model (labels: {', '.join(labels)}); the NLI checker needs "
            "entailment, neutral and contradiction. A 2-class model can be used as "
            "--checker alignment --alignment nli:<model>."
        )
    return found


class NLIChecker:
    """3-way NLI verdicts (paper 002 §4.2, RoBERTa-NLI style) with chunked references.

    Each passage is split into sentence-aligned chunks of at most ``budget`` tokens, where the budget
    is what the model window leaves next to the longest claim (or ``max_chunk_tokens`` if smaller;
    RefChecker uses about 200). Every claim is scored against every chunk; a chunk's verdict is the
    argmax label, its confidence that label's probability. Chunks, then passages, are combined by
    ``combine`` (module doc). Evidence: the chunk(s) behind the verdict, with the probability of
    their label as score. ``scores`` holds the largest entailment and contradiction probabilities seen.
    """

    def __init__(self, scorer: NLIModel, combine: str = DEFAULT_COMBINE, max_chunk_tokens: int | None = None) -> None:
        self.scorer = scorer
        self.combine = check_rule(combine)
        if max_chunk_tokens is not None and max_chunk_tokens < 8:
            raise InputError(f"max_chunk_tokens must be >= 8, got {max_chunk_tokens}")
        self.max_chunk_tokens = max_chunk_tokens
        self.label_names = _label_names(list(scorer.labels), scorer.name)
        self.name = scorer.name

    def config(self) -> dict[str, Any]:
        """What the verdicts depend on besides the name (a resumed batch output refuses another)."""
        return {"combine": self.combine, "max_chunk_tokens": self.max_chunk_tokens,
                "version": getattr(self.scorer, "version", None)}

    def check(
        self, claims: Sequence[Claim], references: str | Sequence[str], question: str | None = None
    ) -> list[ClaimVerdict]:
        """A 3-way verdict per claim: each passage's NLI labels of the claim, merged across passages."""
        refs = validate_references(references)
        claims = list(claims)
        if not claims:
            return []
        texts = [strip_markup(c.text) for c in claims]  # text.strip_markup: "1. X [2]." is checked as "X."
        budget = min(self.scorer.budget_for(t) for t in texts)
        if self.max_chunk_tokens is not None:
            budget = min(budget, self.max_chunk_tokens)
        if budget < 1:
            raise InputError(f"a claim is too long for {self.name}: no room is left for the reference")
        # units[i][p] = per-chunk verdicts of claim i on passage p
        units: list[list[list[PassageVerdict]]] = [[[] for _ in refs] for _ in claims]
        peaks = [[0.0, 0.0] for _ in claims]  # max P(entailment), max P(contradiction)
        for p, passage in enumerate(refs):
            for start, end in chunk_spans(passage, budget, self.scorer.n_tokens):
                chunk = passage[start:end]
                try:
                    chunk_probs = self.scorer.probabilities_many(texts, chunk)
                except ValueError as exc:  # e.g. non-finite probabilities: no verdict rather than a wrong one
                    raise CheckError(f"{self.name} could not score passage {p}: {exc}") from None
                for i, probs in enumerate(chunk_probs):
                    units[i][p].append(self._unit(probs, p, start, end, chunk))
                    peaks[i][0] = max(peaks[i][0], self._p(probs, ENTAILMENT))
                    peaks[i][1] = max(peaks[i][1], self._p(probs, CONTRADICTION))
        inner = "any-contradiction" if self.combine == "any-contradiction" else "max-entail"
        out: list[ClaimVerdict] = []
        for claim, per_passage, (p_ent, p_con) in zip(claims, units, peaks, strict=True):
            passages = []
            for chunk_verdicts in per_passage:
                label, conf, ev = merge_verdicts(chunk_verdicts, inner)
                relevance = max(u.relevance for u in chunk_verdicts)
                passages.append(PassageVerdict(label, conf, ev[0] if ev else None, relevance))
            label, conf, evidence = merge_verdicts(passages, self.combine)
            out.append(ClaimVerdict(claim, label, conf, evidence,
                                    {"max_entailment": p_ent, "max_contradiction": p_con}))
        return out

    def _p(self, probs: Mapping[str, float], label: str) -> float:
        value = probs.get(self.label_names[label])
        if value is None:
            raise CheckError(f"{self.name} returned no probability for {self.label_names[label]!r}")
        return float(value)

    def _unit(self, probs: Mapping[str, float], p: int, start: int, end: int, text: str) -> PassageVerdict:
        scored = {lab: self._p(probs, lab) for lab in (ENTAILMENT, NEUTRAL, CONTRADICTION)}
        label = max(scored, key=lambda lab: scored[lab])
        ev = Evidence(p, start, end, text, label, scored[label])
        return PassageVerdict(label, scored[label], ev, relevance=max(scored[ENTAILMENT], scored[CONTRADICTION]))


# ---- alignment scorers -----------------------------------------------------------------------------


class AlignmentChecker:
    """Alignment scores (support in [0, 1]) thresholded into 3 classes.

    With ``s`` the best score of the claim over the passages (the scorer's own chunking applies):
    ``s >= entail_threshold`` (default 0.7) -> Entailment; ``s < contradict_threshold`` (default 0.2)
    -> Contradiction; otherwise Neutral.

    Alignment scorers measure *support* only: they cannot tell "contradicted" from "not mentioned".
    Contradiction here means "strongly unsupported" (e.g. a number or name the reference does not have),
    so read Neutral vs Contradiction with care; the hallucination rate (Neutral + Contradiction) is the
    meaningful output. For the same reason passages are combined by the maximum (a low score in one
    passage is absence of support, not a contradiction) and this checker never returns Conflict.

    Confidence is the margin from the decision boundary, in [0, 1]: ``(s - e) / (1 - e)`` for
    Entailment, ``(c - s) / c`` for Contradiction, and for Neutral 1 at the middle of the band falling
    to 0 at either threshold. The raw score is in ``scores["align_score"]``. Evidence: the sentence of
    the best passage that the scorer rates highest, with that score.
    """

    def __init__(
        self,
        scorer: AlignmentScorer,
        entail_threshold: float = DEFAULT_ENTAIL_THRESHOLD,
        contradict_threshold: float = DEFAULT_CONTRADICT_THRESHOLD,
    ) -> None:
        if not 0.0 <= contradict_threshold < entail_threshold <= 1.0:
            raise InputError(
                "thresholds must satisfy 0 <= contradict_threshold < entail_threshold <= 1, got "
                f"{contradict_threshold} and {entail_threshold}"
            )
        self.scorer = scorer
        self.entail_threshold = float(entail_threshold)
        self.contradict_threshold = float(contradict_threshold)
        self.name = f"alignment:{scorer.name}"

    def config(self) -> dict[str, Any]:
        """What the verdicts depend on besides the name (a resumed batch output refuses another)."""
        return {"entail_threshold": self.entail_threshold, "contradict_threshold": self.contradict_threshold,
                "version": getattr(self.scorer, "version", None)}

    def label_of(self, score: float) -> tuple[str, float]:
        """``(label, margin confidence)`` of an alignment score."""
        e, c = self.entail_threshold, self.contradict_threshold
        if score >= e:
            return ENTAILMENT, 1.0 if e >= 1.0 else (score - e) / (1.0 - e)
        if score < c:
            return CONTRADICTION, (c - score) / c
        half = (e - c) / 2.0
        return NEUTRAL, max(0.0, 1.0 - abs(score - (c + half)) / half)

    def check(
        self, claims: Sequence[Claim], references: str | Sequence[str], question: str | None = None
    ) -> list[ClaimVerdict]:
        """A verdict per claim from the alignment score against each passage and the two thresholds, merged across
        passages."""
        refs = validate_references(references)
        claims = list(claims)
        if not claims:
            return []
        texts = [strip_markup(c.text) for c in claims]  # text.strip_markup: "1. X [2]." is checked as "X."
        try:
            per_passage = [checked_scores(self.scorer.name, self.scorer.score_many(texts, ref), len(texts), "claims")
                           for ref in refs]
        except ValueError as exc:
            raise InputError(f"{self.scorer.name} cannot score these claims: {exc}") from None
        best = [max(range(len(refs)), key=lambda p, i=i: per_passage[p][i]) for i in range(len(claims))]
        evidence = self._evidence(texts, refs, best)
        out = []
        for i, claim in enumerate(claims):
            score = float(per_passage[best[i]][i])
            label, conf = self.label_of(score)
            p, start, end, ev_score = evidence[i]
            ev = Evidence(p, start, end, refs[p][start:end], label, ev_score)
            out.append(ClaimVerdict(claim, label, min(1.0, max(0.0, conf)), (ev,), {"align_score": score}))
        return out

    def _evidence(self, texts: list[str], refs: list[str], best: list[int]) -> list[tuple[int, int, int, float]]:
        """Per claim: the sentence of its best passage with the highest score."""
        out: list[tuple[int, int, int, float] | None] = [None] * len(texts)
        for p in sorted(set(best)):
            owners = [i for i, b in enumerate(best) if b == p]
            for start, end in sentence_spans(refs[p]):
                mine = [texts[i] for i in owners]
                scores = checked_scores(self.scorer.name, self.scorer.score_many(mine, refs[p][start:end]),
                                        len(mine), "claims")
                for i, s in zip(owners, scores, strict=True):
                    cur = out[i]
                    if cur is None or s > cur[3]:
                        out[i] = (p, start, end, float(s))
        return [x if x is not None else (b, 0, len(refs[b]), 0.0) for x, b in zip(out, best, strict=True)]


# ---- factory -------------------------------------------------------------------------------------------

@dataclass
class CheckerSpec:
    """What :func:`get_checker` needs; unused fields are ignored."""

    kind: str = DEFAULT_CHECKER
    nli_model: str | None = None
    alignment: str = CHECK_SCORER
    combine: str = DEFAULT_COMBINE
    entail_threshold: float = DEFAULT_ENTAIL_THRESHOLD
    contradict_threshold: float = DEFAULT_CONTRADICT_THRESHOLD
    max_chunk_tokens: int | None = None
    max_retries: int = 2
    device: str = "cpu"
    detector: str | None = None  # --checker detector: a detector name or folder (None: the shipped one)


def nli_scorer_spec(nli_model: str | None) -> str:
    """The alignment scorer spec of ``--nli-model``: an NLI scorer's name (``nli-minilm[:<folder>]``) as given, a
    model folder or hub id as ``nli:<model>``."""
    from faithwatch.alignment import is_nli_spec

    model = (nli_model or "nli-minilm").strip()
    try:
        named = is_nli_spec(model)
    except ValueError:  # a model folder or hub id
        named = False
    return model if named else f"nli:{model}"


def _nli(spec: CheckerSpec, backend: object) -> Checker:
    from faithwatch.alignment import get_scorer

    model = (spec.nli_model or "nli-minilm").strip()
    try:
        scorer = get_scorer(nli_scorer_spec(model), device=spec.device)
    except (OSError, ValueError) as exc:
        from faithwatch.errors import ModelNotAvailableError

        raise ModelNotAvailableError(f"could not load the NLI model {model!r}: {exc}") from None
    return NLIChecker(scorer, spec.combine, spec.max_chunk_tokens)


def _llm(spec: CheckerSpec, backend: LLMBackend | Callable[[], LLMBackend] | None) -> Checker:
    from faithwatch.claims.llm_judge import LLMJudgeChecker

    if backend is None:
        raise InputError("--checker llm needs an LLM backend")
    made = backend if isinstance(backend, LLMBackend) else backend()
    return LLMJudgeChecker(made, spec.combine, max_retries=spec.max_retries)


def _alignment(spec: CheckerSpec, backend: object) -> Checker:
    from faithwatch.alignment import get_scorer

    try:
        scorer = get_scorer(spec.alignment, device=spec.device)
    except ValueError as exc:
        raise InputError(str(exc)) from None
    if scorer is None:
        raise InputError("--checker alignment needs an alignment scorer, not 'none'")
    return AlignmentChecker(scorer, spec.entail_threshold, spec.contradict_threshold)


registry.checkers.add("nli", _nli, "a three-way NLI model per claim and passage (default: nli-minilm)")
registry.checkers.add("llm", _llm, "an LLM judge (RefChecker's prompt) over an OpenAI-compatible API")
registry.checkers.add("alignment", _alignment, "an alignment scorer's support score, thresholded")


def _detector(spec: CheckerSpec, backend: object) -> Checker:
    from faithwatch.claims.detector_check import build

    return build(spec, backend)


registry.checkers.add("detector", _detector, "the sentence detector's verdict, as faithwatch monitor gives it")


def get_checker(spec: CheckerSpec, backend: LLMBackend | Callable[[], LLMBackend] | None = None) -> Checker:
    """Build the checker named by ``spec.kind`` (see :data:`faithwatch.registry.checkers`); ``llm`` needs a
    ``backend`` (or a function making one)."""
    check_rule(spec.combine)
    return registry.checkers.get(spec.kind).obj(spec, backend)
